"""Exact per-element sampler of the truncated-and-normalised discrete Laplace on a convex
domain (an interval or half-line): one draw per element, vectorised over many centres.

The target law and the shared tables are in :mod:`dpnoise.exact.range_lattice`.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError, PrecisionError
from ..params import LN2
from ..randomness import RandomSource
from .alias import TOTAL
from .range_lattice import (
    _TWO64,
    DyadicTable,
    GridDomain,
    _geometric,
    block_weights,
)
from .words import mulhi64


@lru_cache(maxsize=16)
def _block_table_guide(M: int) -> DyadicTable:
    """Inverse-CDF guide over the block weights: entry r for C_r <= v < C_{r+1}."""
    bw = block_weights(M)
    return DyadicTable(np.array(bw.cum_int[1:M], dtype=np.uint64))


class ConvexSampler:
    """Exact per-element sampler for an interval / half-line / the line (no per-centre table).

    Each true value has its own centre; per draw (three words):

    1. category (side, low r < t | high r >= t) from one word against three 64-bit thresholds
       rint(2^64·F) of the cumulative category masses (low = G(m+1)·C_t, high = G(m)·(2^64−C_t),
       G(m) = 2(1 − 2^(−m)), n = m·M + t cells on that side);
    2. r from one word w: v = lo + floor(w·R/2^64) with [lo, lo+R) = [0, C_t) or [C_t, 2^64),
       then the block table's inverse CDF (guide table) -- exactly
       P(r) = (ceil((C_{r+1}−lo)2^64/R) − ceil((C_r−lo)2^64/R)) / 2^64;
    3. i = Q mod m_r from a geometric word, as in :class:`CentreSampler`.

    Same target law and the same distortion bound as the per-centre tables (the category stage
    is the table stage with four entries; the r stage adds <= 1/W_min relative error).
    """

    def __init__(self, gd: GridDomain, M: int) -> None:
        if len(gd.cells) != 1:
            raise ParameterError("ConvexSampler needs a single-piece domain")
        self.gd, self.M = gd, M
        bw = block_weights(M)
        self._cum_u = np.array(bw.cum_int[:M], dtype=np.uint64)        # C_t, t < M
        self._cum_f = bw.cum[:M].copy()                                 # C_t / 2^64
        self._comp_f = np.array([(TOTAL - x) / _TWO64 for x in bw.cum_int[:M]])
        self._guide = _block_table_guide(M)

    def _side(self, n: NDArray[np.float64]):  # type: ignore[no-untyped-def]
        """(m as float, t, low mass, high mass) for n cells on one side (n may be inf)."""
        M = self.M
        inf = np.isinf(n)
        nn = np.where(inf, 0.0, n)
        m = np.floor(nn / M)  # exact: n < 2^51, M < 2^21; corrected below if rounding slips
        t = (nn - m * M).astype(np.int64)
        bad = (t < 0) | (t >= M)
        if np.any(bad):  # pragma: no cover - float division guard
            q, rem = np.divmod(nn[bad].astype(np.int64), M)
            m[bad], t[bad] = q, rem
        t[inf] = 0
        m[inf] = np.inf
        low = (2.0 - np.exp2(-m)) * self._cum_f[t]  # G(m + 1) = 2 − 2^(−m), exact
        high = (2.0 - np.exp2(1.0 - m)) * self._comp_f[t]  # G(m) = 2 − 2^(1−m)
        return m, t, low, high

    def _params(self, c: NDArray[np.int64]):  # type: ignore[no-untyped-def]
        """Per-element (m, t) per side and the three category thresholds (uint64) with their
        validity (F < 1; an invalid threshold is never reached)."""
        jlo, jhi = self.gd.cells[0]
        cf = c.astype(np.float64)
        mL, tL, lowL, highL = self._side(cf - jlo)
        mR, tR, lowR, highR = self._side(jhi - cf + 1)
        tot = lowL + highL + lowR + highR
        cum1 = lowL
        cum2 = cum1 + highL
        cum3 = cum2 + lowR
        B, valid = [], []
        for cu in (cum1, cum2, cum3):
            F = cu / tot
            ok = F < 1.0
            x = np.rint(F * 2.0**64)
            x[~ok] = 0.0
            B.append(np.minimum(x, 2.0**64 - 2.0**11).astype(np.uint64))
            valid.append(ok)
        return (mL, tL, mR, tR), B, valid

    def sample_values(self, rng: RandomSource, c: NDArray[np.int64], grid: float
                      ) -> NDArray[np.float64]:
        n = c.size
        (mL, tL, mR, tR), B, valid = self._params(c)
        w = rng.words(3 * n)
        wc, wr, wq = w[:n], w[n:2 * n], w[2 * n:]
        cat = ((wc >= B[0]) & valid[0]).astype(np.int8)
        cat += (wc >= B[1]) & valid[1]
        cat += (wc >= B[2]) & valid[2]
        right = cat >= 2
        high = (cat & 1).astype(bool)
        t = np.where(right, tR, tL)
        m = np.where(right, mR, mL)
        ct = self._cum_u[t]
        lo = np.where(high, ct, np.uint64(0))
        R = np.where(high, np.uint64(0) - ct, ct)  # 2^64 − C_t (wraps to 0 for t = 0)
        v = lo + mulhi64(wr, R)
        full = high & (t == 0)
        v[full] = wr[full]
        r = self._guide.lookup(v)
        q = _geometric(rng, wq)
        mod = m + 1 - high  # m_r: m + 1 for r < t, m for r >= t (inf stays inf)
        fin = np.isfinite(mod)
        i = q.copy()
        qf = q[fin]
        mf = mod[fin].astype(np.int64)
        wrap = qf >= mf
        if np.any(wrap):
            qf[wrap] = np.remainder(qf[wrap], mf[wrap])
            i[fin] = qf
        k = i * self.M + r
        j = np.where(right, c + k, c - 1 - k)
        half = 2 * j + 1
        if half.size and np.max(np.abs(half)) >= (1 << 53):
            raise PrecisionError("release fell outside the exactly representable range")
        return half * (grid / 2)

    def logpmf(self, j: NDArray[np.int64], c: int) -> NDArray[np.float64]:
        """Exact ln P(cell j | centre c) of what :meth:`sample_values` draws."""
        j = np.asarray(j, dtype=np.int64)
        (mL, tL, mR, tR), B, valid = self._params(np.array([c], dtype=np.int64))
        bounds = [0] + [int(B[k][0]) if valid[k][0] else TOTAL for k in range(3)] + [TOTAL]
        cat_p = [max(0, bounds[k + 1] - bounds[k]) for k in range(4)]
        cum = block_weights(self.M).cum_int
        M = self.M
        out = np.full(j.shape, -np.inf)
        right = j >= c
        kk = np.where(right, j - c, c - 1 - j)
        i, r = np.divmod(kk, M)
        for side, (m, t) in ((0, (float(mL[0]), int(tL[0]))), (1, (float(mR[0]), int(tR[0])))):
            sel = (right == bool(side)) & self.gd.reachable_cells(j)
            for high in (0, 1):
                p_cat = cat_p[2 * side + high]
                if p_cat == 0:
                    continue
                lo = cum[t] if high else 0
                R = TOTAL - cum[t] if high else cum[t]
                rr = (r >= t) if high else (r < t)
                mod = m if high else m + 1
                s2 = sel & rr & (i < mod)
                if not np.any(s2):
                    continue
                counts = {}
                for x in np.unique(r[s2]).tolist():
                    a = -((-(cum[x] - lo) * TOTAL) // R)
                    b = -((-(cum[x + 1] - lo) * TOTAL) // R)
                    counts[x] = max(0, min(b, TOTAL) - max(a, 0))
                lc = np.array([math.log(counts[x]) if counts[x] else -math.inf
                               for x in r[s2].tolist()])
                trunc = 0.0 if math.isinf(mod) else math.log1p(-2.0 ** -mod)
                out[s2] = (math.log(p_cat) - 64 * LN2 + lc - 64 * LN2
                           - (i[s2] + 1) * LN2 - trunc)
        return out
