"""The L1 staircase: multivariate staircase noise whose level sets are L1 balls, for a
d-dimensional query of which only the L1 sensitivity is known (Soria-Comas and
Domingo-Ferrer, "Optimal data-independent noise for differential privacy", Information
Sciences 250:200-214, 2013, Section 6), sampled exactly on a power-of-two grid as described
in :mod:`dpnoise.mechanisms.staircase_multivariate`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..exact.words import index_probability, mulhi64
from ..grid import (
    grid_sensitivity,
    power_of_two_at_most,
)
from ..params import Interval, as_real_scalar, check_int, supported
from ..randomness import RandomSource
from .staircase import MAX_EPSILON, STAIRCASE_SENSITIVITY
from .staircase_multivariate import (
    L1_INDEX_BITS,
    MV_MIN_EPSILON,
    MultivariateBase,
    calibrate_levels,
)


class L1Staircase(MultivariateBase):
    """Optimal-family noise when only the L1 sensitivity Δ of a 2-D query is known.

    S_f = {‖δ‖_1 <= Δ}, S_0 = λ S_f; on a common grid L the cells' L1 radius R = K_1 + K_2
    moves by at most S1 = ceil(Δ/L) + 1 (per-coordinate rounding adds at most one cell).
    Levels are L1 shells of S1 cells.  Only d = 2 is implemented (exact unranking of the
    triangle {K_1 + K_2 < n}); the ideal law for any m is :class:`L1StaircaseDensity`.

    Supported: epsilon in [0.003, 20] (as :class:`MultivariateStaircase`), sensitivity in
    [1e-140, 1e+140]; true values ``|x_k| < 2^51·L``.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    sensitivity : float
        The L1 sensitivity Δ.
    dim : int, default 2
        The dimension (only 2 is implemented).
    lam : float or None, default None
        λ in [0, 1] (None: the optimum).
    grid_bits : int or None, default None
        Grid step L = 2^j <= Δ / 2^grid_bits (None: the default).

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(MV_MIN_EPSILON, MAX_EPSILON),
                           "sensitivity": STAIRCASE_SENSITIVITY})

    def __init__(self, *, epsilon: float, sensitivity: float, dim: int = 2,
                 lam: float | None = None, grid_bits: int | None = None) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        if dim != 2:
            raise ParameterError("L1Staircase releases 2-D vectors only (dim=2); "
                                 "use MultivariateStaircase with a box for other dimensions")
        self.dim = 2
        from ..laws.staircase import optimal_lambda

        self.lam = optimal_lambda(self.epsilon, 2) if lam is None else as_real_scalar("lam", lam)
        if not (math.isfinite(self.lam) and 0 <= self.lam <= 1):
            raise ParameterError(f"lam must be in [0, 1], got {lam!r}")
        if grid_bits is None:  # keep P(level beyond the 2^48-index range) below ~1e-100
            grid_bits = max(1, min(10, math.floor(23 - math.log2(700 / self.epsilon))))
        grid_bits = check_int("grid_bits", grid_bits, lower=1, upper=16)  # no bool
        g = power_of_two_at_most(self.sensitivity) / 2.0**grid_bits
        self.grids = np.array([g, g])
        self.S1 = grid_sensitivity(self.sensitivity, g) + 1
        self.Z0 = round(self.lam * self.S1)
        # 4 signs x triangle n(n+1)/2 must stay <= 2^48 (index non-uniformity <= 2^-16,
        # charged to the loss bound)
        n_max = math.isqrt(1 << (L1_INDEX_BITS - 2))
        self.i_max = (n_max - self.Z0) // self.S1
        poly = [self._poly(i) for i in range(3)]
        self.levels, self.loss_bound = calibrate_levels(self.epsilon, poly,
                                                     2.0 ** (L1_INDEX_BITS - 64))
        self._freeze()

    def _n(self, i: Any) -> Any:
        return self.Z0 + i * self.S1

    def _poly(self, i: int) -> int:
        n = self._n(i)
        return n * (n + 1) // 2

    def _uniform(self, rng: RandomSource, I: NDArray[np.int64]) -> NDArray[np.int64]:
        n = self._n(I).astype(np.int64)
        tri = n * (n + 1) // 2
        w = rng.words(I.size)
        idx = mulhi64(w, (4 * tri).astype(np.uint64)).astype(np.int64)
        t, signs = idx >> 2, idx & 3
        s = np.floor((np.sqrt(8.0 * t + 1) - 1) / 2).astype(np.int64)
        s = np.where(s * (s + 1) // 2 > t, s - 1, s)
        s = np.where((s + 1) * (s + 2) // 2 <= t, s + 1, s)
        K1 = t - s * (s + 1) // 2
        K2 = s - K1
        u1 = np.where(signs & 1, -K1 - 1, K1)
        u2 = np.where(signs & 2, -K2 - 1, K2)
        return np.stack([u1, u2], axis=1)

    def cell_level(self, u: NDArray[np.int64]) -> NDArray[np.int64]:
        K = np.where(u >= 0, u, -u - 1)
        R = K.sum(axis=1)
        return np.where(R < self.Z0, 0, 1 + (R - self.Z0) // self.S1)

    def _cell_prob_given(self, u: NDArray[np.int64], i: int) -> NDArray[np.float64]:
        K = np.where(u >= 0, u, -u - 1)
        s = K.sum(axis=1)
        t = s * (s + 1) // 2 + K[:, 0]
        signs = (u[:, 0] < 0).astype(np.int64) + 2 * (u[:, 1] < 0)
        n = self._n(i)
        tot = 4 * (n * (n + 1) // 2)
        return index_probability(4 * t + signs, np.full(u.shape[0], tot))

    def neighbour_shifts(self) -> NDArray[np.int64]:
        S = self.S1
        a = np.arange(-S, S + 1)
        g = np.stack(np.meshgrid(a, a, indexing="ij"), axis=-1).reshape(-1, 2)
        return g[np.abs(g).sum(axis=1) <= S]

    def window(self, levels: int) -> tuple[int, ...]:
        w = self.Z0 + levels * self.S1
        return (w, w)

    def ideal(self) -> Any:
        """The ideal (continuous) L1-staircase density.

        Returns
        -------
        L1StaircaseDensity
            Its ``var``, ``region_size`` and density.
        """
        from ..laws.staircase import L1StaircaseDensity

        return L1StaircaseDensity(epsilon=self.epsilon, sensitivity=self.sensitivity, dim=2,
                                  lam=self.lam)

    def region_size(self, level: float) -> float:
        """Area of the smallest region holding ``level`` (ideal law): the L1 ball t·S_f.

        Parameters
        ----------
        level : float
            A probability in (0, 1).

        Returns
        -------
        float
            The area.
        """
        return self.ideal().region_size(level)

    def var(self) -> NDArray[np.float64]:
        """Exact per-coordinate variance (by summing the exact cell law of each level).

        Returns
        -------
        numpy.ndarray of float64
            One variance per coordinate.
        """
        N = self._tail_levels() * 4
        pI = self.levels.pmf(N)
        n = self._n(np.arange(N)).astype(np.float64)
        # uniform on the triangle with signs: E[(u+1/2)^2] = E[(K1 + 1/2)^2], K1 = k with
        # multiplicity n − k:  Σ_k (k² + k + 1/4)(n − k) / (n(n+1)/2)
        s0, s1 = n, n * (n - 1) / 2
        s2, s3 = (n - 1) * n * (2 * n - 1) / 6, (n * (n - 1) / 2) ** 2
        f = n * (s2 + s1 + s0 / 4) - (s3 + s2 + s1 / 4)
        with np.errstate(invalid="ignore", divide="ignore"):
            second = np.where(n > 0, f / (n * (n + 1) / 2), 0.0)
        out = float((pI * second).sum())
        return np.array([out, out]) * self.grids**2

    def __repr__(self) -> str:
        return (f"L1Staircase(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
                f"lam={self.lam:.6g})")
