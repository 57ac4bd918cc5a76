"""Two-sided geometric (discrete Laplace) noise for integer queries: pure ε-DP, exact.

:class:`Geometric` -- two-sided geometric (discrete Laplace), p(z) ∝ e^{−|z|ε_r/Δ}, ε_r <= ε,
pure ε-DP, with one of three exact samplers:

* ``sampler="block"``: the two-word block/alias sampler of
  :mod:`dpnoise.exact.integer_block` -- decay j·ln2/M per step (a rational multiple of ln 2
  just below ε/Δ), 64-bit alias weights whose exact loss is measured at construction; fixed
  two words per draw, ~20x faster than rejection;
* ``sampler="cks"``: the rejection sampler of CKS Algorithm 2 with a rational decay s/t
  (relative gap <= 2^-24), kept as the reference implementation;
* ``sampler="first-steps"``: the same two-word sampler and kernel with the decay ε/Δ on
  every step *inside* a block and a block factor 2^-j <= e^(−Mε/Δ)
  (:func:`~dpnoise.exact.integer_block.calibrate_first_steps`): as fast as ``"block"`` and
  within 2.5 % of the ideal E|noise| where the uniform decay is too coarse; its privacy
  profile is the exact all-shift envelope of its own pmf, so the PLD accountant charges it
  tightly.

The default ``"auto"`` picks the block sampler where its realised law meets the accuracy rule
of :mod:`dpnoise.laws.accuracy` (E|noise| within 2.5 % of the two-sided geometric law at the
asked ε/Δ, or that ideal E|noise| below 1e-6·Δ), else the first-steps law where it meets the
rule, else CKS.  The uniform block decay j·ln2/M
with j <= 48 misses the rule for about two thirds of the ε/Δ in [2, 14.5] (E|Z| ≈ 2e^(−a)
punishes an absolute gap in the decay a, and j·ln2/M moves in steps there).  Where the rule
does not hold (only below the floor for ``"auto"``) the guarantee states the realised loss
instead of the asked ε.

Counts, output law and boundary handling as in :mod:`dpnoise.mechanisms.integers`.

References:
  * C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..exact.discrete_laplace import discrete_laplace
from ..exact.integer_block import (
    IntegerBlockLaplace,
    calibrate_first_steps,
    calibrate_integer_block,
)
from ..exact.rational import float_up
from ..exact.scalar import IntegerBlockKernel
from ..exact.words import WordStream
from ..laws import accuracy
from ..params import Interval, supported
from ..randomness import RngLike, resolve_rng
from .base import Guarantee
from .integers import (
    ClampedIntegerMechanism,
    IntegerLaw,
    check_domain,
    check_integer_sensitivity,
)


def rational_below(x: float, bits: int = 24) -> tuple[int, int]:
    """(s, t) with s/t <= x, t a power of two, s >= 2^bits (relative gap <= 2^-bits)."""
    xf = Fraction(x)
    k = max(0, bits - math.floor(math.log2(x)))
    t = 1 << k
    s = (xf * t).numerator // (xf * t).denominator
    return max(1, s), t


@lru_cache(maxsize=256)
def _calibrated_block(epsilon: float, sensitivity: int) -> tuple[IntegerBlockLaplace, float]:
    return calibrate_integer_block(epsilon, sensitivity)


@lru_cache(maxsize=256)
def _first_steps_block(epsilon: float, sensitivity: int
                       ) -> tuple[IntegerBlockLaplace, float] | None:
    """The block law with the ideal decay ε/Δ inside blocks (see
    :func:`~dpnoise.exact.integer_block.calibrate_first_steps`) that meets the accuracy
    rule (any such law below the rule's floor), or None."""
    ideal = accuracy.two_sided_geometric_mean_abs(epsilon / sensitivity)
    return calibrate_first_steps(
        epsilon, sensitivity,
        lambda law: (not accuracy.above_floor(ideal, sensitivity)
                     or accuracy.meets_rule(law.mean_abs, ideal, sensitivity)))


class Geometric(ClampedIntegerMechanism):
    """Two-sided geometric (discrete Laplace) noise for integer queries: pure ε-DP.

    ``sampler="block"`` (picked by the default ``"auto"`` where its law meets the accuracy
    rule, see the module docstring): ``p(z) ∝ 2^{−j|z|/M}`` up to the exactly known 64-bit
    quantisation of M + 1 alias weights
    (:class:`~dpnoise.exact.integer_block.IntegerBlockLaplace`); (j, M) is the largest
    decay whose exact loss for a shift by Δ is <= ε.

    ``sampler="cks"``: ``p(z) = (1 − r)/(1 + r) · r^{|z|}``, r = e^{−ε_r/Δ}, ε_r = s/t <= ε
    rational (relative gap <= 2^-24), sampled exactly by rejection (C. L. Canonne,
    G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
    Algorithm 2).  The exact privacy loss of a shift by Δ is ε_r <= ε.

    Supported: epsilon in [0.001, 1000], sensitivity an integer in [1, 2^20], and
    epsilon / sensitivity >= 0.001 (noise() tabulates 1500/(ε/Δ) points); true counts
    ``|n| < 2^53``.

    ``guarantee.epsilon`` is the asked ε where the sampled law meets the accuracy rule
    (:func:`dpnoise.laws.accuracy.meets_rule`), else the realised loss of a shift by Δ
    (``details["epsilon_exact"]``, never below the verifier's).

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    sensitivity : int, default 1
        Δ: the largest change of the count between neighbouring data sets.
    lower, upper : int or None, default 0 and None
        The public range of the count (None: unbounded on that side).
    boundary : {"clamp", "none"}, default "clamp"
        "clamp": ``Y = clamp(n + Z, lower, upper)`` (post-processing: same guarantee);
        "none": ``Y = n + Z``.
    sampler : {"auto", "block", "cks", "first-steps"}, default "auto"
        The exact sampler (see above); "first-steps": a block law whose first steps meet the
        accuracy rule (:func:`dpnoise.laws.accuracy.meets_rule`).

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-3, 1000.0),
                           "epsilon/sensitivity": Interval(1e-3, 1000.0)})

    def __init__(self, *, epsilon: float, sensitivity: int = 1, lower: int | None = 0,
                 upper: int | None = None, boundary: Literal["clamp", "none"] = "clamp",
                 sampler: Literal["auto", "block", "cks", "first-steps"] = "auto") -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = check_integer_sensitivity(sensitivity)
        self._supported("epsilon/sensitivity", self.epsilon / self.sensitivity)
        self.lower, self.upper, self.boundary = check_domain(lower, upper, boundary,
                                                              ("clamp", "none"))
        if sampler not in ("auto", "block", "cks", "first-steps"):
            raise ParameterError("sampler must be 'auto', 'block', 'cks' or 'first-steps', "
                                 f"got {sampler!r}")
        s, t = rational_below(self.epsilon / self.sensitivity)
        if t > 1 << 56:
            raise ParameterError("epsilon/sensitivity too small for the exact sampler (< 2^-32)")
        self.s, self.t = s, t
        self.block: IntegerBlockLaplace | None = None
        calibrated = None
        if sampler == "first-steps":
            calibrated = _first_steps_block(self.epsilon, self.sensitivity)
            if calibrated is None:
                raise ParameterError(
                    f"no first-steps block law meets the accuracy rule at epsilon/sensitivity "
                    f"= {self.epsilon / self.sensitivity!r}; use sampler='auto'")
        elif sampler != "cks":
            try:
                calibrated = _calibrated_block(self.epsilon, self.sensitivity)
            except ParameterError:  # outside the block sampler's range of decays
                if sampler == "block":
                    raise
            if sampler == "auto" and calibrated is not None and not self._block_qualifies(
                    calibrated[0]):
                # the uniform decay is too coarse here: the first-steps law (same sampler
                # and kernel) meets the rule, else the exact CKS sampler serves
                calibrated = _first_steps_block(self.epsilon, self.sensitivity)
        self.sampler = ("cks" if calibrated is None else
                        "first-steps" if calibrated[0].inner is not None else "block")
        if calibrated is not None:
            self.block, loss = calibrated
            self.epsilon_exact: Fraction | float = loss  # measured loss of a shift by Δ
        else:
            self.epsilon_exact = Fraction(s * self.sensitivity, t)  # loss of a shift by Δ
        self._freeze()

    def _block_qualifies(self, block: IntegerBlockLaplace) -> bool:
        """The block law may serve ``auto``: it meets the accuracy rule, or the ideal
        E|noise| is below the floor (the guarantee then states the realised loss)."""
        ideal = self.ideal_mean_abs
        return (not accuracy.above_floor(ideal, self.sensitivity)
                or accuracy.meets_rule(block.mean_abs, ideal, self.sensitivity))

    @property
    def ideal_mean_abs(self) -> float:
        """E|Z| of the two-sided geometric law at the asked ε/Δ: 1/sinh(ε/Δ)."""
        return accuracy.two_sided_geometric_mean_abs(self.epsilon / self.sensitivity)

    @property
    def sampled_mean_abs(self) -> float:
        """E|Z| of the law actually sampled (closed form)."""
        if self.block is not None:
            return self.block.mean_abs
        return accuracy.two_sided_geometric_mean_abs(self.s / self.t)

    @property
    def meets_accuracy_rule(self) -> bool:
        """Whether the asked ε is what the guarantee states (see the class docstring)."""
        return accuracy.meets_rule(self.sampled_mean_abs, self.ideal_mean_abs,
                                   self.sensitivity)

    @property
    def decay(self) -> float:
        """Per-step log ratio: j ln2 / M (block) or s/t (cks)."""
        if self.block is not None:
            return self.block.decay
        return self.s / self.t

    @property
    def guarantee(self) -> Guarantee:
        if self.block is not None:
            realised = float(self.epsilon_exact) + 1e-12
            note = "exact two-word block sampler, decay j ln2/M per step; measured loss <= eps"
            details: dict[str, Any] = {"epsilon_exact": realised, "j": self.block.j,
                                       "M": self.block.M}
        else:
            realised = float_up(Fraction(self.epsilon_exact))
            note = "exact two-sided geometric sampler (CKS Alg. 2); loss = rational eps_r <= eps"
            details = {"epsilon_exact": realised, "s": self.s, "t": self.t}
        if self.meets_accuracy_rule:
            return Guarantee(epsilon=self.epsilon, delta=0.0, notion="pure", note=note,
                             details=details)
        return Guarantee(epsilon=min(self.epsilon, realised), delta=0.0, notion="pure",
                         note=note + "; the realised loss is stated (E|noise| below the "
                         "accuracy rule's floor or outside its 2.5 %)", details=details)

    def _window(self) -> int:
        return math.ceil(750 / self.decay) + 2

    def _logpmf(self, z: NDArray[np.int64]) -> NDArray[np.float64]:
        if self.block is not None:
            return self.block.logpmf(z)
        a = self.decay
        return math.log(-math.expm1(-a)) - math.log1p(math.exp(-a)) - a * np.abs(z)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        K = self._window()
        z = np.arange(-K, K + 1, dtype=np.int64)
        p = np.exp(self._logpmf(z))
        return self._law_of(z, p, true_value)

    def sample_noise(self, n: int, rng: RngLike = None) -> NDArray[np.int64]:
        """The noise Z alone, n draws from the exact two-sided geometric law.

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
        if self.block is not None:
            return self._split_draws(self.block, n, rng)
        return discrete_laplace(WordStream(resolve_rng(rng)), self.s, self.t, int(n))

    @property
    def _table_sampler(self) -> Any:
        """The block sampler of bulk releases (None: the exact discrete Laplace sampler)."""
        return self.block

    @cached_property
    def _scalar_kernel(self) -> IntegerBlockKernel | None:
        return IntegerBlockKernel(self.block) if self.block is not None else None


    def privacy_profile(self) -> Any:
        from .profiles import geometric_profile

        return geometric_profile(self)

    def privacy_model(self) -> Any:
        from ..verify import AdditiveLattice

        period = self.block.M if self.block is not None else 1
        return AdditiveLattice(logpmf=self._logpmf, max_shift=self.sensitivity, period=period)

    def __repr__(self) -> str:
        return (f"Geometric(epsilon={self.epsilon!r}, sensitivity={self.sensitivity}, "
                f"lower={self.lower!r}, upper={self.upper!r}, boundary={self.boundary!r}"
                + ("" if self.sampler == "block" else f", sampler={self.sampler!r}") + ")")
