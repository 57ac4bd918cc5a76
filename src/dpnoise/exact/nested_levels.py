"""Exact sampler and exact pmf of the level index of the multivariate staircase.

P(I = i) ∝ r^i·P(i), r = 2^(-a/M), where P is the level polynomial of the region (box or
L1 ball) written in its h-coefficients: I = m + G_1 + ... + G_{d+1}, m from an alias table
over the h-coefficients and G_j exact geometric draws with ratio r
(:class:`~dpnoise.exact.ratio_geometric.RatioGeometric`).  Used by
:class:`dpnoise.mechanisms.staircase.MultivariateStaircase` and ``L1Staircase``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..randomness import RandomSource
from .alias import AliasTable, quantize_weights
from .ratio_geometric import RatioGeometric


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
