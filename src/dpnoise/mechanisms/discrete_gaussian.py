"""Discrete Gaussian noise for integer queries, exact sampler and exact δ(ε).

:class:`DiscreteGaussian` -- N_ℤ(0, σ²) (Canonne, Kamath, Steinke 2020) with one of two
exact samplers:

* ``sampler="table"`` (default when σ <= ~2^13): one alias table of the dyadic-rounded pmf
  on [−K, K] (:mod:`dpnoise.exact.dg_table`), one word per draw; δ(ε) is the exact
  hockey-stick divergence of *that table* (truncation and rounding included), at most a few
  2^-60 above the ideal law's δ (CKS Thm 7);
* ``sampler="cks"``: CKS Algorithm 3 with exact Bernoulli(exp(−x)), δ(ε) by CKS Thm 7 --
  the reference implementation, and the sampler for larger σ.

Counts, output law and boundary handling as in :mod:`dpnoise.mechanisms.integers`.

References:
  * C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..exact.dg_table import DGTable, dg_table, fits
from ..exact.discrete_gaussian import DGParams, discrete_gaussian, grid_sigma2
from ..exact.rational import as_fraction
from ..exact.scalar import OneWordKernel
from ..exact.words import WordStream
from ..laws import discrete_gaussian as dga
from ..laws.discrete_gaussian_search import calibrate_sigma2_on_grid
from ..params import Interval, check_epsilon, supported
from ..randomness import RngLike, resolve_rng
from .base import Guarantee
from .integers import (
    ClampedIntegerMechanism,
    IntegerLaw,
    check_domain,
    check_integer_sensitivity,
)


class DiscreteGaussian(ClampedIntegerMechanism):
    """Discrete Gaussian N_ℤ(0, σ²) (Canonne, Kamath, Steinke 2020) for integer queries.

    Give ``sigma2`` (the CKS *scale* σ², not the variance) and ``epsilon`` to get the exact
    δ(ε), or ``epsilon`` and ``delta`` to get the smallest σ² meeting δ.  σ² is rounded up
    to the exact sampler's grid σ² = t·m/2^j (relative step <= 2^-20); the reported δ is
    that of the rounded σ².

    Supported: epsilon in [0.01, 1000], delta in [1e-300, 1) (combinations needing
    σ² > 1e10 are refused), sigma2 in (0, 1e10], sensitivity an integer in [1, 2^20];
    true counts ``|n| < 2^53``.

    ``P(Z = z) ∝ exp(−z²/(2σ²))`` on the integers (C. L. Canonne, G. Kamath, T. Steinke, *The
    Discrete Gaussian for Differential Privacy*, NeurIPS 2020, Definition 1); δ(ε) is summed
    exactly for the sampled law (their Theorem 7).

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    delta : float or None, default None
        The target δ (give ``delta`` or ``sigma2``).
    sigma2 : float, Fraction or None, default None
        The scale σ² (rounded up to the sampler's grid).
    sensitivity : int, default 1
        Δ: the largest change of the count between neighbouring data sets.
    lower, upper : int or None, default 0 and None
        The public range of the count (None: unbounded on that side).
    boundary : {"clamp", "none"}, default "clamp"
        "clamp": ``Y = clamp(n + Z, lower, upper)`` (post-processing: same guarantee);
        "none": ``Y = n + Z``.
    sampler : {"auto", "table", "cks"}, default "auto"
        The exact sampler: a 64-bit alias table or CKS rejection sampling.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-2, 1000.0),
                           "delta": Interval(1e-300, 1.0, hi_open=True)})

    def __init__(self, *, epsilon: float, delta: float | None = None,
                 sigma2: float | Fraction | None = None, sensitivity: int = 1,
                 lower: int | None = 0, upper: int | None = None,
                 boundary: Literal["clamp", "none"] = "clamp",
                 sampler: Literal["auto", "table", "cks"] = "auto") -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = check_integer_sensitivity(sensitivity)
        self.lower, self.upper, self.boundary = check_domain(lower, upper, boundary,
                                                              ("clamp", "none"))
        if (delta is None) == (sigma2 is None):
            raise ParameterError("give exactly one of delta= (calibrate) or sigma2= (scale)")
        if delta is not None:
            target = self._supported("delta", delta)
            s2 = Fraction(calibrate_sigma2_on_grid(self.epsilon, target, self.sensitivity))
        else:
            s2 = as_fraction("sigma2", sigma2, low=Fraction(0), high=Fraction(10**10),
                             open_ends=False)
            if s2 == 0:
                raise ParameterError("sigma2 must be > 0")
        if sampler not in ("auto", "table", "cks"):
            raise ParameterError(f"sampler must be 'auto', 'table' or 'cks', got {sampler!r}")
        self.params: DGParams = grid_sigma2(s2)
        use_table = sampler == "table" or (sampler == "auto" and fits(float(self.params.sigma2)))
        self.table: DGTable | None = None
        base = self.params
        for _ in range(8):
            if not use_table:
                break
            self.table = dg_table(float(self.params.sigma2))
            self.delta = self.table.delta(self.epsilon, self.sensitivity)
            if delta is None or self.delta <= float(delta):
                break
            # the table's δ exceeds the target by its rounding (<~2^-60): one grid step up
            self.params = grid_sigma2(self.params.sigma2 * (1 + Fraction(1, 1 << 19)))
        else:  # a target δ below the table's rounding floor (~1e-15): exact CKS instead
            if sampler == "table":
                raise ParameterError(f"delta={delta!r} is below the table sampler's rounding "
                                     "floor (~1e-15); use sampler='cks' or 'auto'")
            self.table, self.params = None, base
        self.sigma2 = self.params.sigma2
        if self.table is None:
            self.delta = dga.delta(float(self.sigma2), self.epsilon, self.sensitivity)
        self.sampler = "table" if self.table is not None else "cks"
        if delta is not None and self.delta > float(delta):
            raise AssertionError("calibration missed delta")  # pragma: no cover
        self._freeze()

    @classmethod
    def matching_variance(cls, *, epsilon: float, variance: float, **kw: Any
                          ) -> DiscreteGaussian:
        """The discrete Gaussian whose variance equals ``variance``.

        Parameters
        ----------
        epsilon : float
            The ε at which δ is reported.
        variance : float
            The target variance of the noise.
        **kw
            Further constructor arguments.

        Returns
        -------
        DiscreteGaussian
            The matching mechanism.
        """
        return cls(epsilon=epsilon, sigma2=dga.sigma2_for_variance(float(variance)), **kw)

    @classmethod
    def matching_zero_mass(cls, *, epsilon: float, eta: float, **kw: Any
                           ) -> DiscreteGaussian:
        """The discrete Gaussian with P(Z = 0) = η (the same error probability 1 − η).

        Parameters
        ----------
        epsilon : float
            The ε at which δ is reported.
        eta : float
            The target ``P(Z = 0)`` in (0, 1).
        **kw
            Further constructor arguments.

        Returns
        -------
        DiscreteGaussian
            The matching mechanism.
        """
        return cls(epsilon=epsilon, sigma2=dga.sigma2_for_zero_mass(float(eta)), **kw)

    @property
    def guarantee(self) -> Guarantee:
        p0, var, _ = dga.moments(float(self.sigma2))
        return Guarantee(
            epsilon=self.epsilon, delta=self.delta, notion="approximate",
            note=("discrete Gaussian, one-word alias table of the dyadic-rounded pmf; delta of "
                  "that table (truncation and rounding included)" if self.table is not None
                  else "discrete Gaussian, exact CKS sampler; delta by the exact formula "
                  "(CKS Thm 7)"),
            details={"sigma2": float(self.sigma2), "variance": var, "p0": p0,
                     "sampler": self.sampler},
        )

    def delta_at(self, epsilon: float) -> float:
        """The exact δ of the sampled law at another ε.

        Parameters
        ----------
        epsilon : float
            ε >= 0.

        Returns
        -------
        float
            ``δ(ε) = Σ_z max(0, p(z) − e^ε p(z − Δ))``, summed with a certified margin.
        """
        if self.table is not None:
            return self.table.delta(check_epsilon(epsilon), self.sensitivity)
        return dga.delta(float(self.sigma2), check_epsilon(epsilon), self.sensitivity)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        if self.table is not None:
            return self._law_of(self.table.values, self.table.probs, true_value,
                                tails=(False, False))  # the table: all the sampled law
        K = dga.window(float(self.sigma2))
        z = np.arange(-K, K + 1, dtype=np.int64)
        p = dga.pmf(z, float(self.sigma2))
        return self._law_of(z, p, true_value)

    def sample_noise(self, n: int, rng: RngLike = None) -> NDArray[np.int64]:
        """The noise Z alone, n exact draws from N_ℤ(0, σ²).

        Parameters
        ----------
        n : int
            Number of draws.
        rng : RandomSource, numpy.random.Generator or None, default None
            The randomness (None: the thread's OS-keyed CryptoRandom).

        Returns
        -------
        numpy.ndarray of int64
            n integers.
        """
        if self.table is not None:
            return self._split_draws(self.table, n, rng)
        return discrete_gaussian(WordStream(resolve_rng(rng)), self.params, int(n))

    @property
    def _table_sampler(self) -> Any:
        """The alias table of bulk releases (None: the CKS rejection sampler)."""
        return self.table

    @cached_property
    def _scalar_kernel(self) -> OneWordKernel | None:
        t = self.table
        if t is None:
            return None
        return OneWordKernel(t.table, [i - t.K for i in range(t.table.columns)])


    def privacy_profile(self) -> Any:
        from .profiles import discrete_gaussian_profile

        return discrete_gaussian_profile(self)

    def privacy_model(self) -> Any:
        from ..verify import DiscreteFamily, FiniteLattice

        if self.table is not None:
            return FiniteLattice(logpmf=self.table.logpmf, max_shift=self.sensitivity,
                                 lo=-self.table.K, hi=self.table.K)
        K = dga.window(float(self.sigma2))
        z = np.arange(-K, K + 1, dtype=np.int64)
        lp = dga.logpmf(z, float(self.sigma2))

        def law(x: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
            return z + int(x), lp

        return DiscreteFamily(inputs=[0, self.sensitivity], sensitivity=self.sensitivity,
                              law=law)

    def __repr__(self) -> str:
        return (f"DiscreteGaussian(epsilon={self.epsilon!r}, sigma2={float(self.sigma2)!r}, "
                f"sensitivity={self.sensitivity}, lower={self.lower!r}, upper={self.upper!r}, "
                f"boundary={self.boundary!r}"
                + ("" if self.sampler == "table" else ", sampler='cks'") + ")")
