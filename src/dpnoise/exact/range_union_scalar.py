"""One release of the union sampler in pure Python: the same words, the same floats.

:class:`~dpnoise.exact.range_union.UnionSampler` computes every element's parameters and draw
with numpy on arrays (and the compiled kernel); for ONE true value that costs ~60 numpy calls
on arrays of one element (~100 µs).  :class:`UnionScalar` runs the very same procedure (the
module docstring of :mod:`dpnoise.exact.range_union`: far-piece chain, category, r, i) on
Python floats and ints:

* every float operation is the IEEE-754 double operation numpy performs on the same operands,
  in the same order (Python floats are doubles; neither side contracts a*b + c), so the
  parameters (q, the own piece's (m, t), the category thresholds, the chain's (n, x, flip))
  are bit for bit those of :meth:`UnionSampler._params`;
* no transcendental function is evaluated per value: 2^(−m) is ``ldexp``, 1 − 2^(−t/M) and
  2^(−r/M) are read from the sampler's tables for the integers t, r < M, and the chain uses
  ×, ÷, +, ``ldexp``, ``frexp``, ``floor`` and round-half-even only (exact or correctly
  rounded, hence the same double in numpy, CPython and C);
* the words are drawn in the order of the array path (P − 1 decision words, then the category,
  r and i words; the 2^-12 and 2^-64 extensions with the array path's own helper), so a
  seeded scalar release equals the array release of the one value.

``tests/test_range_union_scalar.py`` checks the parameters against :meth:`_params` and the
releases against the array path for many centres and seeds.  The same Python lines run for
every true value (selections are conditional expressions and 0/1 arithmetic, the chain loops
over all P − 1 decisions); the lookups' addresses depend on the value (docs/timing.md).
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np

from ..errors import PrecisionError
from ..randomness import RandomSource, word_ints
from .range_lattice import sample_geometric

_TWO52 = float(1 << 52)
_MASK64 = (1 << 64) - 1
_INF = math.inf

__all__ = ["UnionScalar"]


class UnionScalar:
    """The one-value path of a :class:`~dpnoise.exact.range_union.UnionSampler` (built from
    its public tables at construction)."""

    def __init__(self, sampler: Any) -> None:
        M = sampler.M
        self.P, self.M, self.inv_m = sampler.P, M, sampler._inv_m
        self.a = sampler._a.tolist()
        self.b = sampler._b.tolist()
        self.a_next = sampler._a_next.tolist()
        self.tot_p = sampler._tot_p.tolist()
        self.p2 = sampler._p2.tolist()
        self.thr_p = sampler._thr_p.tolist()
        self.m_p = sampler._m_p.tolist()
        self.t_p = [int(t) for t in sampler._t_p]
        self.cum_u = [int(v) for v in sampler._cum_u]
        self.B = [int(v) for v in sampler._guide.B]
        self.lo_r = sampler._lo_r.tolist()  # 1 − 2^(−t/M) for t < M: _side's table

    def _side(self, n: float) -> tuple[float, int, float, float]:
        """:meth:`UnionSampler._side` for one side of n cells (n may be inf)."""
        m = float(math.floor(n / self.M)) if n < _INF else _INF
        t = n - m * self.M if n < _INF else 0.0
        t = t if t > 0.0 else 0.0
        e = math.ldexp(1.0, -int(min(m, 1100.0)))
        lo_r = self.lo_r[int(t)]
        return m, int(t), lo_r * (2.0 - e), (1.0 - 2.0 * lo_r) * (1.0 - e)

    def params(self, cf: float) -> tuple[int, tuple[float, int, float, int],
                                         tuple[float, float, float],
                                         list[tuple[float, float, bool]]]:
        """:meth:`UnionSampler._params` of one centre ``cf`` (a float integer)."""
        P, M, a, b = self.P, self.M, self.a, self.b
        q = bisect.bisect_right(self.a_next, cf)
        mL, tL, lowL, highL = self._side(cf - a[q])
        mR, tR, lowR, highR = self._side(b[q] + 1.0 - cf)
        c1 = lowL + highL
        c2 = c1 + lowR
        tot = c2 + highR
        scale = _TWO52 / tot
        thr = (round(lowL * scale) / _TWO52, round(c1 * scale) / _TWO52,
               round(c2 * scale) / _TWO52)
        R = tot
        chain: list[tuple[float, float, bool]] = [(0.0, 0.0, False)] * (P - 1)
        for k in range(P - 2, -1, -1):
            f = k + (k >= q)
            off = cf - 1.0 - b[f] if f < q else a[f] - cf
            A = float(math.floor(off / M))
            r0 = off - A * M
            under = r0 < 0.0
            A = A - under
            r0 = r0 + under * M
            w = self.tot_p[f] * self.p2[int(r0)]
            rho = w / R
            Ac = int(min(A, 1022.0))
            z = math.ldexp(rho, -Ac)
            neg = z <= 1.0
            pm = (rho if neg else 1.0) / (1.0 + z)
            mm, ee = math.frexp(pm)
            n = (A if neg else 0.0) - ee
            x = float(round(mm * _TWO52))
            chain[k] = (n, x / _TWO52, not neg)
            R = R + math.ldexp(w, -Ac)
        return q, (mL, tL, mR, tR), thr, chain

    def sample_one(self, rng: RandomSource, c: int, grid: float) -> float:
        """One release (2j + 1)·grid/2 at centre ``c``: the words and values of
        :meth:`UnionSampler.sample_values` on the array ``[c]``."""
        P, M = self.P, self.M
        nd = P - 1
        cf = float(c)
        q, (mL, tL, mR, tR), (T1, T2, T3), chain = self.params(cf)
        ws = word_ints(rng, P + 2)
        wc, wr, wq = ws[nd], ws[nd + 1], ws[nd + 2]
        # 1. chain: Q' = trailing zeros of the low 12 bits (12 + a fresh geometric if zero)
        qz = [float(((w & 4095) & -(w & 4095) or 4096).bit_length() - 1) for w in ws[:nd]]
        ext = [k for k in range(nd) if qz[k] >= 12.0]
        if ext:  # probability 2^-12 per decision, whatever the centre
            more = sample_geometric(rng, rng.words(len(ext))).tolist()
            for k, g in zip(ext, more, strict=True):
                qz[k] = 12.0 + g
        slot, open_ = nd, True
        for k in range(nd):
            n, x, flip = chain[k]
            stop = ((qz[k] >= n) and ((ws[k] >> 12) / _TWO52 < x)) != flip
            slot = k if (open_ and stop) else slot
            open_ = open_ and not stop
        own = slot == nd
        f = min(slot + (slot >= q), P - 1)
        # 2. category
        uc = (wc >> 12) / _TWO52
        cat = (uc >= T1) + (uc >= T2) + (uc >= T3)
        right = cat >= 2 if own else f > q
        high = bool(cat & 1) if own else uc >= self.thr_p[f]
        m = (mR if right else mL) if own else self.m_p[f]
        t = (tR if right else tL) if own else self.t_p[f]
        base = cf - 1.0 + right if own else (self.a[f] if right else self.b[f])
        # 3. r within the category
        ct = self.cum_u[t]
        lo, R = (ct, (-ct) & _MASK64) if high else (0, ct)
        v = (lo + ((wr * R) >> 64)) & _MASK64
        v = wr if (high and t == 0) else v
        r = bisect.bisect_right(self.B, v)
        # 4. i = Q mod m_r (Q: trailing zeros; a zero word continues, probability 2^-64)
        Q = (wq & -wq).bit_length() - 1 if wq else int(
            sample_geometric(rng, np.zeros(1, dtype=np.uint64))[0])
        i = math.fmod(float(Q), m + 1.0 - high)
        kk = i * M + r
        half = 2.0 * (base + (kk if right else -kk)) + 1.0
        if not abs(half) < 2.0**53:
            raise PrecisionError("release fell outside the exactly representable range")
        return half * (grid / 2)
