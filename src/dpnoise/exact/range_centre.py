"""Exact per-centre sampler of the truncated-and-normalised discrete Laplace on a grid.

Reference implementation only (tests): releases use the per-element samplers of
:mod:`dpnoise.exact.range_convex` and :mod:`dpnoise.exact.range_union`, which build nothing
per centre (a table built on a centre's first use makes the running time depend on it).

The three stages (segment chain, dyadic (segment, r) table, truncated geometric i) and the
law they sample exactly are described in :mod:`dpnoise.exact.range_lattice`, which holds
the shared tables; :meth:`CentreSampler.logpmf` gives the exact log-probabilities.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError, PrecisionError
from ..params import LN2
from ..randomness import RandomSource, fill_words
from .alias import TOTAL
from .range_lattice import (
    _CHUNK,
    _INF_MOD,
    _LOW24,
    _TWO64,
    DyadicTable,
    GridDomain,
    block_weights,
    dyadic_boundaries,
    geometric_sum,
    sample_geometric,
)


class CentreSampler:
    """Exact sampler and exact pmf for one centre index c (see the module docstring)."""

    def __init__(self, gd: GridDomain, M: int, c: int) -> None:
        """Build the segments' masses and the exact decision thresholds of centre ``c``.

        Long on purpose: the thresholds and the pmf that :meth:`logpmf` reports are computed
        in one pass from the same integers, so that they cannot drift apart.
        """
        self.gd, self.M, self.c = gd, M, int(c)
        bw = block_weights(M)
        segs = gd.segments(self.c)
        if not segs:
            raise ParameterError("the domain holds no grid cell")  # pragma: no cover
        self.segs = segs
        cum = bw.cum
        # per segment: m (full blocks), t (remainder), low/high masses with r-entries
        self._seg_info = []
        for side, p, n in segs:
            if math.isinf(n):
                m, t = math.inf, 0
            else:
                m, t = divmod(int(n), M)
            self._seg_info.append((side, p, m, t))
        # One table for all segments when every entry keeps probability >= W_min/(2^12·2^64)
        # (segments within ~11 blocks of c; the union distortion bound allows this), else a
        # chain of exact decisions, one group per segment (far pieces: tiny probabilities).
        self._factor = [2.0 ** (-p / M) for _, p, _ in segs]
        z = sum(f * (float(geometric_sum(np.float64(m + 1))) * float(cum[t])
                     + float(geometric_sum(np.float64(m))) * (TOTAL - bw.cum_int[t]) / _TWO64)
                for f, (_s, _p, m, t) in zip(self._factor, self._seg_info, strict=True))
        chained = any(p > 0 for _, p, _ in segs) and min(self._factor) < z / 2.0**12 * 1.01
        self.groups = [[i] for i in range(len(segs))] if chained else [list(range(len(segs)))]
        # stage 1: chain over groups (log masses of P*)
        log_mass = []
        for grp in self.groups:
            vals = []
            for si in grp:
                _side, p, m, t = self._seg_info[si]
                ct = float(cum[t])
                hi_part = (TOTAL - bw.cum_int[t]) / _TWO64
                mass = (float(geometric_sum(np.float64(m + 1))) * ct
                        + float(geometric_sum(np.float64(m))) * hi_part)
                vals.append(-p / M * LN2 + math.log(mass))
            mx = max(vals)
            log_mass.append(mx + math.log(sum(math.exp(v - mx) for v in vals)))
        self.n_decisions = len(self.groups) - 1
        self._chain: list[tuple[int, int]] = []  # (n_s, beta_s)
        for s in range(self.n_decisions):
            rest = log_mass[s + 1:]
            mx = max(rest)
            lse_rest = mx + math.log(sum(math.exp(v - mx) for v in rest))
            allv = log_mass[s:]
            mx2 = max(allv)
            lse_all = mx2 + math.log(sum(math.exp(v - mx2) for v in allv))
            l2 = min(0.0, (lse_rest - lse_all) / LN2)
            n_s = math.floor(-l2)
            beta = 2.0 ** (l2 + n_s)
            b_int = min(1 << 40, max(1, round(beta * 2.0**40)))
            self._chain.append((n_s, b_int))
        # stage 2: one dyadic table per group over (segment, r)
        self._tables: list[DyadicTable] = []
        self._entry_seg: list[NDArray[np.int64]] = []
        self._entry_r: list[NDArray[np.int64]] = []
        self._entry_index: dict[int, NDArray[np.int64]] = {}
        self._entry_mod: list[NDArray[np.int64]] = []
        self._entry_base2: list[NDArray[np.int64]] = []
        self._entry_step2: list[NDArray[np.int64]] = []
        r_all = np.arange(M, dtype=np.int64)
        for grp in self.groups:
            F_parts, segs_e, rs_e, mods = [], [], [], []
            offset = 0.0
            masses = []
            single = len(grp) == 1
            for si in grp:
                _side, _p, m, t = self._seg_info[si]
                f = 1.0 if single else self._factor[si]
                ga = float(geometric_sum(np.float64(m + 1)))
                gb = float(geometric_sum(np.float64(m)))
                ct = float(cum[t])
                masses.append(f * (ga * ct + gb * (TOTAL - bw.cum_int[t]) / _TWO64))
            total = sum(masses)
            for si, mass in zip(grp, masses, strict=True):
                side, p, m, t = self._seg_info[si]
                f = 1.0 if single else self._factor[si]
                ga, gb = f * float(geometric_sum(np.float64(m + 1))), f * float(
                    geometric_sum(np.float64(m)))
                ct = float(cum[t])
                # cumulative (unnormalised) mass before entry r of this segment
                before = np.where(r_all <= t, ga * cum[:-1], ga * ct + gb * (cum[:-1] - ct))
                m_r = np.where(r_all < t, m + 1, m) if math.isfinite(m) else np.full(M, np.inf)
                keep = m_r > 0
                F_parts.append((offset + before[keep]) / total)
                segs_e.append(np.full(int(keep.sum()), si, dtype=np.int64))
                rs_e.append(r_all[keep])
                mods.append(np.where(np.isinf(m_r[keep]), _INF_MOD,
                                     np.nan_to_num(m_r[keep], posinf=0).astype(np.int64)))
                offset += mass
            F = np.concatenate(F_parts)[1:]  # drop the leading 0
            self._tables.append(DyadicTable(dyadic_boundaries(F)))
            es, er = np.concatenate(segs_e), np.concatenate(rs_e)
            self._entry_seg.append(es)
            self._entry_r.append(er)
            self._entry_mod.append(np.concatenate(mods))
            side_e = np.array([si[0] for si in self._seg_info], dtype=np.int64)[es]
            p_e = np.array([si[1] for si in self._seg_info], dtype=np.int64)[es]
            # cell of (i = 0, r): right j = c + p + r, left j = c − 1 − p − r
            base = np.where(side_e > 0, self.c + p_e + er, self.c - 1 - p_e - er)
            self._entry_base2.append(2 * base + 1)
            self._entry_step2.append(side_e * 2 * M)

    @cached_property
    def _seg_group(self) -> NDArray[np.int64]:
        out = np.empty(len(self.segs), dtype=np.int64)
        for gi, grp in enumerate(self.groups):
            out[grp] = gi
        return out

    @cached_property
    def _seg_entry(self) -> NDArray[np.int64]:
        """(segment, r) -> entry index in its group's table (−1: no cell)."""
        out = np.full((len(self.segs), self.M), -1, dtype=np.int64)
        for gi in range(len(self.groups)):
            out[self._entry_seg[gi], self._entry_r[gi]] = np.arange(self._entry_seg[gi].size)
        return out

    # ------------------------------------------------------------ exact pmf
    def log_group_probs(self) -> NDArray[np.float64]:
        """ln P(group) exactly from the chain's integers."""
        out = np.empty(len(self.groups))
        acc = 0.0
        for s in range(len(self.groups)):
            if s < self.n_decisions:
                n_s, b = self._chain[s]
                log_cont = -n_s * LN2 + math.log(b) - 40 * LN2
                if n_s == 0:
                    log_stop = (math.log((1 << 40) - b) - 40 * LN2) if b < (1 << 40) else -math.inf
                else:
                    log_stop = math.log1p(-math.exp(log_cont))
                out[s] = acc + log_stop
                acc += log_cont
            else:
                out[s] = acc
        return out

    def logpmf(self, j: NDArray[np.int64]) -> NDArray[np.float64]:
        """Exact ln P(cell j | c) of the sampled law (−inf off the domain)."""
        j = np.asarray(j, dtype=np.int64)
        out = np.full(j.shape, -np.inf)
        right = j >= self.c
        k = np.where(right, j - self.c, self.c - 1 - j)
        lg = self.log_group_probs()
        tabs = [t.log_prob() for t in self._tables]
        M = self.M
        for si, (side, p, n) in enumerate(self.segs):
            sel = (right == (side > 0)) & (k >= p) & (k < p + n)
            if not np.any(sel):
                continue
            kk = k[sel] - p
            i, r = np.divmod(kk, M)
            gi = int(self._seg_group[si])
            e = self._seg_entry[si, r]
            mod = self._entry_mod[gi][e]
            finite = mod < _INF_MOD
            with np.errstate(divide="ignore"):
                trunc = np.where(finite, np.log1p(-np.exp2(-mod.astype(np.float64))), 0.0)
            out[sel] = lg[gi] + tabs[gi][e] - (i + 1) * LN2 - trunc
        return out

    # ------------------------------------------------------------ sampling
    @property
    def words_per_draw(self) -> int:
        return 2 + self.n_decisions

    def sample_values(self, rng: RandomSource, n: int, grid: float) -> NDArray[np.float64]:
        """n releases (2j + 1)·grid/2 (float64, exact)."""
        if self.n_decisions == 0 and self._tables[0].guided:
            return self._sample_fast(rng, n, grid)
        half = self.sample_half(rng, n)
        if half.size and np.max(np.abs(half)) >= (1 << 53):
            raise PrecisionError("release fell outside the exactly representable range")
        return half * (grid / 2)

    def sample_half(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        """n draws of 2j + 1 (the output is (2j + 1)·L/2)."""
        if self.n_decisions == 0 and self._tables[0].guided:
            return self._sample_fast(rng, n)
        out = np.empty(n, dtype=np.int64)
        nd = self.n_decisions
        for start in range(0, n, _CHUNK):
            cnt = min(_CHUNK, n - start)
            words = rng.words((2 + nd) * cnt)
            if nd:
                group = self._chain_choice(rng, words[: nd * cnt].reshape(nd, cnt))
            v = words[nd * cnt:(nd + 1) * cnt]
            qw = words[(nd + 1) * cnt:]
            q = sample_geometric(rng, qw)
            if nd:
                h = np.empty(cnt, dtype=np.int64)
                for gi in range(len(self.groups)):
                    sel = group == gi
                    h[sel] = self._finish(gi, v[sel], q[sel])
            else:
                h = self._finish(0, v, q)
            out[start:start + cnt] = h
        return out

    def _sample_fast(self, rng: RandomSource, n: int, grid: float | None = None
                     ) -> NDArray[np.int64] | NDArray[np.float64]:
        """Single-table kernel (intervals, half-lines): two words per draw, cache-sized chunks,
        preallocated buffers; same law as the generic path.  With ``grid`` the result is the
        release (2j + 1)·grid/2 in float64 (exact: |2j + 1| < 2^53 is checked per chunk)."""
        tab = self._tables[0]
        g, thr = tab._g, tab._thr
        mods, base2, step2 = self._entry_mod[0], self._entry_base2[0], self._entry_step2[0]
        cls64, lut, limit = self._fast_consts
        out = np.empty(n, dtype=np.float64 if grid is not None else np.int64)
        chunk = min(n, 1 << 14) if n > 0 else 1
        words = np.empty(2 * chunk + 8, dtype=np.uint64)
        t1 = np.empty(chunk, dtype=np.uint64)
        t2 = np.empty(chunk, dtype=np.uint64)
        e = np.empty(chunk, dtype=np.int64)
        q = np.empty(chunk, dtype=np.int64)
        h = np.empty(chunk, dtype=np.int64)
        ge = np.empty(chunk, dtype=bool)
        one = np.uint64(1)
        for start in range(0, n, chunk):
            c = min(chunk, n - start)
            fill_words(rng, words, 2 * c)
            v, qw = words[:c], words[c:2 * c]
            a1, a2, E, Q, H, GE = t1[:c], t2[:c], e[:c], q[:c], h[:c], ge[:c]
            # entry: guide bucket from the top bits, one threshold compare in the bucket
            np.right_shift(v, tab._shift, out=a1)
            np.take(g, a1.view(np.int64), out=E)
            np.take(thr, a1.view(np.int64), out=a2)
            np.bitwise_and(v, tab._mask, out=a1)
            np.greater_equal(a1, a2, out=GE)
            np.add(E, GE, out=E)
            # Q = trailing zeros of qw (a zero word gives 64 and is extended below)
            np.negative(qw, out=a1)
            np.bitwise_and(qw, a1, out=a1)
            np.subtract(a1, one, out=a1)
            Q[:] = np.bitwise_count(a1)
            if Q.max() >= 64:  # probability 2^-64 per draw: exact slow path
                Q[:] = np.remainder(sample_geometric(rng, qw), mods[E])
            else:
                np.take(cls64, E, out=H)
                np.add(H, Q, out=H)
                np.take(lut, H, out=Q)
            if grid is not None and Q.max() * 2 * self.M >= limit:
                raise PrecisionError("release fell outside the exactly representable range")
            np.take(step2, E, out=H)
            np.multiply(H, Q, out=H)
            np.add(H, base2[E], out=H)
            if grid is None:
                out[start:start + c] = H
            else:
                np.multiply(H, grid / 2, out=out[start:start + c])
        return out

    @cached_property
    def _fast_consts(self) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
        """Per-sampler constants of :meth:`_sample_fast`, built once (not per call): i = Q mod
        m_r through a small lookup table (class of each entry's modulus x 64 + Q), and the
        largest |2j + 1| base."""
        mods, base2 = self._entry_mod[0], self._entry_base2[0]
        classes, cls_of = np.unique(mods, return_inverse=True)
        cls64 = (cls_of.astype(np.int64) * 64).reshape(-1)
        qs = np.arange(64, dtype=np.int64)
        lut = np.concatenate([np.remainder(qs, m) for m in classes.tolist()])
        return cls64, lut, (1 << 53) - int(np.abs(base2).max())

    def _finish(self, gi: int, v: NDArray[np.uint64], q: NDArray[np.int64]) -> NDArray[np.int64]:
        e = self._tables[gi].lookup(v)
        i = np.remainder(q, self._entry_mod[gi][e])
        return self._entry_base2[gi][e] + self._entry_step2[gi][e] * i

    def _chain_choice(self, rng: RandomSource, w: NDArray[np.uint64]) -> NDArray[np.int64]:
        nd, cnt = w.shape
        low = w & _LOW24
        top = w >> np.uint64(24)
        # Q' = trailing zeros of the low 24 bits, extended with fresh words when they are 0
        qext = np.zeros(w.shape, dtype=np.int64)
        z = low == 0
        if np.any(z):  # probability 2^-24 per decision, whatever the centre
            idx = np.flatnonzero(z.reshape(-1))
            qext.reshape(-1)[idx] = 24 + sample_geometric(rng, rng.words(idx.size))
        group = np.full(cnt, nd, dtype=np.int64)
        undecided = np.ones(cnt, dtype=bool)
        for s in range(nd):
            n_s, b = self._chain[s]
            if n_s == 0:
                geo_ok = np.ones(cnt, dtype=bool)
            elif n_s < 24:
                geo_ok = (low[s] & np.uint64((1 << n_s) - 1)) == 0
            else:
                geo_ok = z[s] & (qext[s] >= n_s)
            cont = geo_ok & (top[s] < np.uint64(b)) if b < (1 << 40) else geo_ok
            stop = undecided & ~cont
            group[stop] = s
            undecided &= cont
        return group
