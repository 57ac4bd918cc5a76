"""Truncated Laplacian mechanism for (ε, δ)-DP (Geng et al. 2018), exact on a grid.

The ideal mechanism (Def. 3/4, Thm 1) adds X with density B·e^(−|x|/λ) on [−A, A],
λ = Δ/ε, A = λ·ln(1 + (e^ε − 1)/(2δ)) (see :mod:`dpnoise.laws.truncated_laplacian` for the
overflow-safe calibration and exact moments).  Two facts drive the design:

* δ is *catastrophic*: the mass δ of [A − Δ, A] (each side) is reachable from x but not
  from x ± Δ, so with probability δ the output identifies the input.  The privacy
  profile is flat, δ(ε') = δ for every ε' >= ε: accountants must not assume
  δ(ε') decays.
* The support edge ±A is where a floating-point implementation leaks: ``x + X`` puts
  its edge at x ± A computed in floating point, so near the edge the set of reachable
  doubles depends on x in ways the analysis does not account for.

What is released (the lattice version of TLap, every step exact):

1.  Grid L = 2^j (S = ceil(Δ/L) >= 2^12 cells per sensitivity and M >= 2^12 cells per
    halving for 0.02 <= ε <= 700; coarser for small ε so the block table stays <= ~2^17
    entries; see :func:`default_grid`).  The true value goes to the index c = floor(x/L + 1/2);
    neighbours move c by at most S cells.
2.  Noise Z = ±(K + 1/2) cells with K = X mod n, X ~ BlockGeometric(M) (exact
    2^(-k/M) decay; :mod:`dpnoise.exact.folded`): the discrete truncated Laplacian
    p(K = k) ∝ 2^(-k/M) on {0..n−1}, sampled with two words and one remainder per draw.
3.  Calibration: M is the smallest block length whose exact quantised S-step loss is
    <= ε − 1e-12 (so the common-support part contributes nothing to δ(ε)); then n is
    the smallest support size whose *exact* edge mass ½·P(K >= n − S) (the S outer
    cells on one side, reachable from c but not from c ± S) is <= δ.  That edge mass is
    the hockey-stick δ(ε) of the sampled pmf for the worst shift, both directions by
    symmetry; it is reported as ``exact_delta`` and ``dpnoise.verify`` recomputes it
    from the pmf.  It lies within a factor 2^(-1/M) of the target (one cell of slack).

Guarantee: (ε, δ)-DP for the pmf that is sampled, with no finite-precision degradation.
The half-width of the released support is ``n·L`` (vs. the ideal A); ``support_inflation``
reports the relative difference, the price of exactness (~1/S + 1/M).

References:
  * Q. Geng, W. Ding, R. Guo, S. Kumar, "Privacy and Utility Tradeoff in Approximate
    Differential Privacy", arXiv:1810.00877, 2018.

Errata of the paper, each explained: docs/papers.md#errata-truncated-laplacian.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exact.folded import FoldedBlockGeometric
from ..exact.geometric import BlockGeometric
from ..grid import check_grid, grid_sensitivity
from ..laws.base import Law
from ..laws.block_calibration import calibrate_block, check_block_length, default_grid
from ..laws.half_lattice import HalfLatticeLaw, half_lattice_logpmf
from ..laws.truncated_laplacian import (
    TLapParams,
    g_ratio,
    h_ratio,
    log_expm1,
    softplus,
    tlap_params,
)
from ..params import LN2, SENSITIVITY_RANGE, Interval, check_quantiles, supported
from .base import Guarantee, HalfLatticeMechanism

DELTA_MARGIN = 1e-9  # relative: exact_delta (computed to ~1e-14) is kept <= δ(1 − 1e-9)


# ---------------------------------------------------------------- continuous law
class TLapDistribution(Law):
    """The ideal (continuous) TLap(ε, δ, Δ) noise law, in numerically safe form.

    pdf/logpdf, cdf/sf (via ``u = (A − |x|)/λ``), ppf, mean_abs = ``E|X|`` (Thm 2),
    var = E[X²] (Thm 3).  Used for the paper's numbers; releases use the lattice law.

    Parameters
    ----------
    epsilon : float
        ε.
    delta : float
        δ.
    sensitivity : float, default 1.0
        Δ.

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    """

    def __init__(self, epsilon: float, delta: float, sensitivity: float = 1.0) -> None:
        self.params: TLapParams = tlap_params(epsilon, delta, sensitivity)

    @property
    def A(self) -> float:  # noqa: N802  (paper notation)
        """The support half-width ``A = λ·ln(1 + (e^ε − 1)/(2δ))``."""
        return self.params.A

    @property
    def scale(self) -> float:
        """The scale ``λ = Δ/ε``."""
        return self.params.lam

    def logpdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """Log-density ``ln B − |x|/λ`` on [−A, A], −inf outside.

        Parameters
        ----------
        x : array_like of float
            Points.

        Returns
        -------
        numpy.ndarray of float64
            The log-density.
        """
        p = self.params
        x = np.abs(np.asarray(x, dtype=np.float64))
        return np.where(x <= p.A, p.log_B - x / p.lam, -np.inf)

    def pdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """Density ``B·e^(−|x|/λ)`` on [−A, A], 0 outside.

        Parameters
        ----------
        x : array_like of float
            Points.

        Returns
        -------
        numpy.ndarray of float64
            The density.
        """
        return np.exp(self.logpdf(x))

    def _lower(self, ax: NDArray[np.float64]) -> NDArray[np.float64]:
        """F(−|x|) = exp(u − L)·expm1(−u)/(2·expm1(−L)), u = (A − |x|)/λ."""
        p = self.params
        u = np.clip((p.A - ax) / p.lam, 0.0, p.L)
        return np.exp(u - p.L) * np.expm1(-u) / (2.0 * math.expm1(-p.L))

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """Distribution function ``P(X <= x)``.

        Parameters
        ----------
        x : array_like of float
            Points.

        Returns
        -------
        numpy.ndarray of float64
            The cdf.
        """
        x = np.asarray(x, dtype=np.float64)
        low = self._lower(np.abs(x))
        out = np.where(x <= 0, low, 1.0 - low)
        return np.where(x < -self.A, 0.0, np.where(x >= self.A, 1.0, out))

    def sf(self, x: ArrayLike) -> NDArray[np.float64]:
        """Survival function ``P(X > x)``.

        Parameters
        ----------
        x : array_like of float
            Points.

        Returns
        -------
        numpy.ndarray of float64
            The survival function.
        """
        return self.cdf(-np.asarray(x, dtype=np.float64))

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        """x = sign(2q−1)·(−λ)·log1p(−|2q−1|·(1 − e^(−L))).

        Parameters
        ----------
        q : array_like of float
            Probabilities in [0, 1].

        Returns
        -------
        numpy.ndarray of float64
            The quantiles.
        """
        q = check_quantiles(q)
        p = self.params
        t = 2.0 * q - 1.0
        m = -math.expm1(-p.L)
        mag = np.minimum(-p.lam * np.log1p(-np.abs(t) * m), p.A)
        return self._with_ends(q, np.sign(t) * mag)

    def support_ends(self) -> tuple[float, float]:
        """The support [−A, A] (``ppf(0)`` and ``ppf(1)``).

        Returns
        -------
        tuple of float
            ``(−A, A)``.
        """
        return -self.A, self.A

    def mean(self) -> float:
        """The mean, 0 (the law is symmetric).

        Returns
        -------
        float
            0.0.
        """
        return 0.0

    def mean_abs(self) -> float:
        """``E|X|`` (Geng et al. 2018, Theorem 2).

        Returns
        -------
        float
            The mean absolute noise.
        """
        return self.params.mean_abs

    def var(self) -> float:
        """``E[X²]`` (Geng et al. 2018, Theorem 3).

        Returns
        -------
        float
            The variance.
        """
        return self.params.second_moment

    def delta_profile(self, eps_prime: ArrayLike) -> NDArray[np.float64]:
        """Exact hockey-stick δ(ε') for a shift of Δ (derived):
        δ for ε' >= ε, else δ + (½ − δ)(1 − e^−(ε−ε')) + ((1+c)/(2c))(1 − e^−(ε−ε')/2)².

        Parameters
        ----------
        eps_prime : array_like of float
            ε' >= 0.

        Returns
        -------
        numpy.ndarray of float64
            δ(ε') for each ε'.
        """
        p = self.params
        e = np.asarray(eps_prime, dtype=np.float64)
        d = np.maximum(p.epsilon - e, 0.0)
        one_plus_c_over_c = 1.0 / -math.expm1(-p.L)
        extra = (0.5 - p.delta) * -np.expm1(-d) + 0.5 * one_plus_c_over_c * np.expm1(-d / 2) ** 2
        return p.delta + extra


# ---------------------------------------------------------------- calibration
# The shared lattice rule (laws.block_calibration.default_grid) with k <= 21, so that the support
# (~2^k·A/Δ cells per side) stays small enough to verify densely.
GRID_BITS = 21


def _calibrate_block(epsilon: float, steps: int) -> tuple[BlockGeometric, float]:
    """Smallest M whose exact quantised S-step loss of the folded law is <= ε − allowance."""
    return calibrate_block(
        epsilon, steps, lambda block: FoldedBlockGeometric(block, steps + 1).step_loss(steps)
    )


@lru_cache(maxsize=16)
def _calibrated(epsilon: float, delta: float, sensitivity: float, grid: float
                ) -> tuple[int, BlockGeometric, float, FoldedBlockGeometric, float]:
    """(S, block, exact loss, folded law, exact δ) for public parameters (cached: a second
    mechanism with the same parameters is built without recomputing; nothing here depends
    on a true value)."""
    steps = grid_sensitivity(sensitivity, grid)
    check_block_length(epsilon, steps, grid)
    block, loss = _calibrate_block(epsilon, steps)
    law, exact_delta = calibrate_support(block, steps, delta)
    return steps, block, loss, law, exact_delta


def _ideal_support(M: int, steps: int, delta: float) -> int:
    """n from the ideal discrete law: ½(2^(S/M) − 1)/(2^(n/M) − 1) = δ, rounded up."""
    log_c = log_expm1(steps * LN2 / M) - math.log(2.0 * delta)
    halvings = softplus(log_c) / LN2
    return max(steps + 1, math.ceil(M * halvings))


def calibrate_support(block: BlockGeometric, steps: int, delta: float
                      ) -> tuple[FoldedBlockGeometric, float]:
    """Smallest n whose exact edge mass ½·P(K >= n − S) is <= δ(1 − margin)."""
    target = math.log(delta) + math.log1p(-DELTA_MARGIN)

    def log_delta(n: int) -> float:
        return math.log(0.5) + FoldedBlockGeometric(block, n).log_edge(steps)

    n = _ideal_support(block.M, steps, delta)
    if log_delta(n) > target:
        while log_delta(n) > target:
            n += 1
    else:
        while n - 1 > steps and log_delta(n - 1) <= target:
            n -= 1
    law = FoldedBlockGeometric(block, n)
    return law, math.exp(log_delta(n))


# ---------------------------------------------------------------- lattice law
class LatticeTLapNoise(HalfLatticeLaw):
    """Exact law of the release c·L + Z·L, Z = ±(K + 1/2), K = X mod n (scipy-like)."""

    def __init__(self, law: FoldedBlockGeometric, grid: float, center: float = 0.0) -> None:
        super().__init__(law, grid, center, support_max=law.n - 1)
        self.law = law

    @property
    def half_width(self) -> float:
        """Largest |Y − center| = (n − 1/2)·L."""
        return (self.law.n - 0.5) * self.grid


# ---------------------------------------------------------------- mechanism
class TruncatedLaplace(HalfLatticeMechanism):
    """(ε, δ)-DP truncated Laplacian (Geng et al. 2018), exact on a power-of-two grid.

    Supported: epsilon in [1e-05, 1000], delta in [1e-300, 0.5), sensitivity in
    [1e-280, 1e+295] (block tables <= 2^18 entries, as :class:`Laplace`); true values
    ``|x| < 2^51·grid``.

    >>> m = TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0)
    >>> m.guarantee.delta <= 1e-3
    True

    The ideal law has density ``B·e^(−|x|/λ)`` on ``[−A, A]`` with ``λ = Δ/ε`` and
    ``A = λ·ln(1 + (e^ε − 1)/(2δ))`` (Q. Geng, W. Ding, R. Guo, S. Kumar, *Privacy and Utility
    Tradeoff in Approximate Differential Privacy*, 2018, Definition 3 and Theorem 1); the
    release samples its exact lattice version and reports that law's exact δ.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    delta : float
        The δ of (ε, δ)-DP: the exact hockey-stick divergence of the sampled laws is <= δ.
    sensitivity : float
        Δ: the largest change of the true answer between neighbouring data sets.
    grid : float or None, default None
        The output grid step L, a power of two; None: the default, at least 4096 times
        finer than the sensitivity.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-5, 1000.0),
                           "delta": Interval(1e-300, 0.5, hi_open=True),
                           "sensitivity": SENSITIVITY_RANGE})

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float,
                 grid: float | None = None) -> None:
        for name, value in (("epsilon", epsilon), ("delta", delta),
                            ("sensitivity", sensitivity)):
            self._supported(name, value)
        self.ideal = tlap_params(epsilon, delta, sensitivity)  # validates (0 < δ < 1/2)
        self.epsilon = self.ideal.epsilon
        self.delta = self.ideal.delta
        self.sensitivity = self.ideal.sensitivity
        self.grid = (default_grid(self.sensitivity, self.epsilon, max_bits=GRID_BITS)
                     if grid is None else check_grid(grid))
        (self.shift_steps, self.block, self.exact_loss, self.law,
         self.exact_delta) = _calibrated(self.epsilon, self.delta, self.sensitivity, self.grid)
        self._freeze()

    # ------------------------------------------------------------ calibration facts
    @property
    def support_half_width(self) -> float:
        """Largest ``|noise|`` released: (n − 1/2)·L (the ideal is A)."""
        return (self.law.n - 0.5) * self.grid

    @property
    def support_inflation(self) -> float:
        """Relative widening of the lattice support over the ideal A: ``A_lattice / A − 1``."""
        return self.support_half_width / self.ideal.A - 1.0

    @property
    def scale(self) -> float:
        """Continuous-equivalent Laplace scale M·L/ln2 (>= Δ/ε)."""
        return self.block.M * self.grid / LN2

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            epsilon=self.epsilon,
            delta=self.delta,
            notion="approximate",
            note=("exact lattice sampler; delta is a distinguishing-event probability "
                  "(delta(eps') = delta for all eps' >= eps)"),
            details={
                "grid": self.grid,
                "block": self.block.M,
                "support_cells": self.law.n,
                "shift_steps": self.shift_steps,
                "exact_loss": self.exact_loss,
                "exact_delta": self.exact_delta,
                "support_half_width": self.support_half_width,
                "ideal_A": self.ideal.A,
            },
        )

    # ------------------------------------------------------------ release
    def _sampler(self) -> Any:
        return self.law

    def _law(self, center: float) -> LatticeTLapNoise:
        return LatticeTLapNoise(self.law, self.grid, center)

    def continuous(self) -> TLapDistribution:
        """The ideal continuous TLap law (paper's formulas).

        Returns
        -------
        TLapDistribution
            ``TLap(ε, δ, Δ)``.
        """
        return TLapDistribution(self.epsilon, self.delta, self.sensitivity)

    def privacy_profile(self) -> Any:
        from .profiles import truncated_laplace_profile

        return truncated_laplace_profile(self)

    def privacy_model(self) -> Any:
        from ..verify import FiniteLattice

        return FiniteLattice(logpmf=half_lattice_logpmf(self.law), max_shift=self.shift_steps,
                             lo=-self.law.n, hi=self.law.n - 1)

    def __repr__(self) -> str:
        return (f"TruncatedLaplace(epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"sensitivity={self.sensitivity!r}, grid={self.grid!r})")


__all__ = [
    "LatticeTLapNoise",
    "TLapDistribution",
    "TruncatedLaplace",
    "g_ratio",
    "h_ratio",
]
