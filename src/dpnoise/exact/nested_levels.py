"""Exact sampler and exact pmf of the level index of the multivariate staircase.

P(I = i) ∝ r^i·P(i), r = 2^(-a/M), where P is the level polynomial of the region (box or
L1 ball) written in its h-coefficients: I = m + G_1 + ... + G_{d+1}, m from an alias table
over the h-coefficients and G_j exact geometric draws with ratio r
(:class:`~dpnoise.exact.ratio_geometric.RatioGeometric`).  Used by
:class:`dpnoise.mechanisms.staircase_multivariate.MultivariateStaircase` and ``L1Staircase``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..randomness import RandomSource
from .alias import AliasTable, quantize_weights
from .ratio_geometric import RatioGeometric, extend_counts

_TOP = np.uint64(1 << 63)
_ONE = np.uint64(1)


class NestedLevels:
    """Exact sampler and exact pmf of I with P(I = i) ∝ r^i P(i), r = 2^(-a/M)."""

    def __init__(self, poly_values: list[int], geo: RatioGeometric) -> None:
        d = len(poly_values) - 1
        self.dim = d
        self.geo = geo
        h = [sum((-1) ** t * math.comb(d + 1, t) * poly_values[m - t] for t in range(m + 1))
             for m in range(d + 1)]
        if any(x < 0 for x in h):
            raise ParameterError(f"level polynomial has a negative h-coefficient {h}; "
                                 "use plateau fractions in [0, 1]")
        self.h = h
        r = 2.0 ** (-geo.a / geo.M)
        w = np.array([h[m] * r**m for m in range(d + 1)], dtype=np.float64)
        self.m_table = AliasTable(quantize_weights(w))
        with mpmath.workdps(40):
            ideal = [mpmath.mpf(h[m]) * mpmath.power(2, -mpmath.mpf(geo.a) * m / geo.M)
                     for m in range(d + 1)]
            tot = mpmath.fsum(ideal)
            ew = self.m_table.exact_weights()
            self.eta_m = float(max(
                (abs(mpmath.log(mpmath.mpf(ew[m]) / 2**64 / (ideal[m] / tot)))
                 for m in range(d + 1) if h[m] > 0), default=0))
            if any(ew[m] == 0 and h[m] > 0 for m in range(d + 1)):
                raise ParameterError("level table lost a weight to quantisation")

    @property
    def eta(self) -> float:
        """Bound on |ln P̃(I=i) − ln P_ideal(I=i)| for every i."""
        return self.eta_m + (self.dim + 1) * self.geo.quantisation_error

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        """I = m + Σ_{j<=d+1} G_j: 1 + 2(d+1) words per draw."""
        out = self.m_table.sample(rng, n)
        for _ in range(self.dim + 1):
            out = out + self.geo.sample(rng, n)
        return out

    @property
    def words_per_draw(self) -> int:
        """Words one draw of I reads: one for m, two for each of the d+1 geometrics."""
        return 1 + 2 * (self.dim + 1)

    def sample_words(self, rng: RandomSource, words: NDArray[np.uint64], c: int
                     ) -> NDArray[np.int64]:
        """c draws of I from ``words`` = the next (1 + 2(d+1))·c words of ``rng`` in stream order.

        The same words give the same I as :meth:`sample` (m from words[:c], then geometric
        j from the next 2c words: Q_j from the first c, R_j from the next c), but the d+1
        geometrics are computed together on a (d+1, c) view and the alias lookups use the
        interleaved tables, so there are ~20 array passes instead of ~60 with temporaries.
        In the rare case (probability 2^-63 per word) that a count must be extended, the
        extra words come from ``rng`` after the block (:meth:`sample` takes them between
        the geometrics), which changes which words are used but not the law.
        """
        d1 = self.dim + 1
        m_w = words[:c]
        G = words[c : c * (1 + 2 * d1)].reshape(d1, 2, c)
        qw, rw = G[:, 0, :], G[:, 1, :]
        geo = self.geo
        # m and R: outcome2[2·col + (u >= thr)] (interleaved alias tables, see _kernel)
        thr2_m, out2_m, sh_m, mask_m = self._kernel(self.m_table)
        I = _alias_interleaved(m_w, thr2_m, out2_m, sh_m, mask_m)
        thr2_g, out2_g, sh_g, mask_g = self._kernel(geo.table)
        R = _alias_interleaved(rw, thr2_g, out2_g, sh_g, mask_g)
        # Q = floor(T/a), T = trailing zeros of the low 63 bits (63: extend, p = 2^-63)
        t = np.bitwise_or(qw, _TOP)
        lo = np.negative(t)
        np.bitwise_and(t, lo, out=t)
        np.subtract(t, _ONE, out=t)
        np.bitwise_count(t, out=t)
        T = t.view(np.int64)
        if T.max() >= 63:
            for j in range(d1):
                Tj = T[j].copy()
                extend_counts(rng, np.ascontiguousarray(qw[j]), Tj)
                T[j] = Tj
            Q = T // geo.a
        else:
            Q = np.take(geo.q_of_t, T)
        Qs = Q.sum(axis=0)
        np.multiply(Qs, geo.M, out=Qs)
        np.add(I, Qs, out=I)
        np.add(I, R.sum(axis=0), out=I)
        return I

    def _kernel(self, table: AliasTable) -> tuple[NDArray[np.uint64], NDArray[np.int64],
                                                  np.uint64, np.uint64]:
        """(thr2, outcome2, shift, mask): thr2[2i] = thr[i], outcome2 = (i, alias[i]) pairs."""
        key = id(table)
        cache = self.__dict__.setdefault("_kernels", {})
        if key not in cache:
            thr2 = np.repeat(table._thr, 2)
            out2 = np.empty(2 * table.columns, dtype=np.int64)
            out2[0::2] = np.arange(table.columns, dtype=np.int64)
            out2[1::2] = table._alias
            cache[key] = (thr2, out2, np.uint64(64 - table.bits - 1),
                          np.uint64(table.mass - 1))
        return cache[key]  # type: ignore[no-any-return]

    def pmf(self, N: int) -> NDArray[np.float64]:
        """Exact P(I = i) for i < N (convolution of the sampled pmfs; float64)."""
        k = np.arange(N)
        g = self.geo.pmf(k)
        out = np.zeros(N)
        ew = np.array(self.m_table.exact_weights(), dtype=np.float64) / 2.0**64
        out[: ew.size] = ew[:N]
        for _ in range(self.dim + 1):
            out = np.convolve(out, g)[:N]
        return out


def _alias_interleaved(w: NDArray[np.uint64], thr2: NDArray[np.uint64],
                       out2: NDArray[np.int64], shift: np.uint64, mask: np.uint64
                       ) -> NDArray[np.int64]:
    """Alias outcomes for words ``w``: column = top bits, threshold test on the low bits.

    Index 2·col (top bits shifted one less, lowest bit cleared) plus (u >= thr[col]) picks
    col or alias[col] from the interleaved tables -- the same outcome as
    :meth:`AliasTable.sample_words`.
    """
    col = np.right_shift(w, shift)
    np.bitwise_and(col, np.uint64(0xFFFFFFFFFFFFFFFE), out=col)
    u = np.bitwise_and(w, mask)
    ci = col.view(np.int64)
    np.greater_equal(u, thr2[ci], out=u, casting="unsafe")
    np.add(col, u, out=col)
    return np.take(out2, ci)
