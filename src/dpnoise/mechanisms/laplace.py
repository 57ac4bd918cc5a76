"""Laplace mechanism on a grid, sampled exactly: pure epsilon-DP on real doubles.

Why not ``x + numpy.laplace()``: a float sampler reaches only some doubles, and the
set it reaches depends on x, so an output often proves which of two neighbouring
inputs produced it (Gazeau et al. 2013, Example 1.1; Mironov 2012; reproduced by ``dpnoise reproduce
finite-precision``, A3: 81% of
numpy's outputs from x = 0 are impossible from x = 1).

What dpnoise releases instead (see docs/mechanisms/finite-precision.md):

1.  A grid step L = 2^j (default: the power of two <= Δ/2^k with k <= 12, so the grid
    is ~4000 times finer than the sensitivity).  The true value is mapped exactly to
    the index c = floor(x/L + 1/2); neighbours move c by at most S = ceil(Δ/L).
2.  Noise Z = ±(K + 1/2) grid cells with a fair sign and K ~ :class:`BlockGeometric`
    (p(k) ∝ 2^(-k/M), exactly Geometric(1/2) across blocks of M, 64-bit alias tables
    within a block).  The output c*L + Z*L is a point of the half-offset grid
    (Z+1/2)·L, computed in integers and converted exactly.
3.  Calibration: the ideal discrete Laplace with decay ln2/M per cell has privacy
    loss S·ln2/M for a shift of S cells.  M = ceil(S ln2 / ε) and then the exact loss
    of the *quantised* pmf, max_k ln p(k) − ln p(k+S), is computed from the alias
    table that is sampled; M grows until that loss plus a 1e-12 rounding allowance is
    <= ε.  The continuous-equivalent scale M·L/ln2 exceeds Δ/ε by at most
    L/Δ + 1/M (about 0.03% at the default grid; reported as ``scale_inflation``).

The guarantee is pure ε-DP for the pmf that is sampled (not an approximation of it),
with no ε' degradation; ``dpnoise.verify`` recomputes it from the table.

References:
  * I. Gazeau, D. Miller, C. Palamidessi, "Preserving differential privacy under
    finite-precision semantics", QAPL 2013, EPTCS 117, pp. 1-18, 2013.
  * I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy",
    ACM CCS 2012.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exact.geometric import BlockGeometric
from ..grid import (
    check_grid,
    check_representable,
    grid_sensitivity,
)
from ..laws.base import TableLaw
from ..laws.block_calibration import calibrate_block, check_block_length, default_grid
from ..laws.half_lattice import HalfLatticeLaw, half_lattice_logpmf
from ..params import (
    LN2,
    SENSITIVITY_RANGE,
    Interval,
    check_interval,
    check_true_scalar,
    check_values,
    supported,
)
from ..randomness import RngLike
from .base import Guarantee, HalfLatticeMechanism, Mechanism, as_output, one_real


@lru_cache(maxsize=32)
def _calibrated_block(epsilon: float, steps: int) -> BlockGeometric:
    """The calibrated block law for public (ε, S), cached per process (nothing here depends
    on a true value; a second mechanism with the same parameters reuses it)."""
    return calibrate_block(epsilon, steps)[0]


class LatticeLaplaceNoise(HalfLatticeLaw):
    """Exact law of the output c·L + Z·L, Z = ±(K + 1/2), of :class:`Laplace` (scipy-like)."""

    def __init__(self, block: BlockGeometric, grid: float, center: float = 0.0) -> None:
        super().__init__(block, grid, center)
        self.block = block


class ClampedLaw(TableLaw):
    """Law of clamp(Y, lower, upper) for a lattice Laplace Y: atoms at both ends.

    A :class:`~dpnoise.laws.base.TableLaw` on its support (pmf and moments from the table);
    cdf and ppf come in closed form from the inner lattice law, clamped.  The table (every
    lattice point of the range: millions on a wide range) is built on first use of the
    pmf or the moments only -- ``table()`` returns (support, probs) -- so a caller that
    needs only cdf/ppf (error bars, the report's binned chart) never pays for it.
    """

    _TABLE = frozenset({"points", "probs", "_logprobs", "_cum", "_total", "support"})

    def __init__(self, inner: LatticeLaplaceNoise, lower: float, upper: float,
                 table: Callable[[], tuple[NDArray[np.float64], NDArray[np.float64]]]
                 ) -> None:
        self.inner, self.lower, self.upper = inner, lower, upper
        self._table = table

    def __getattr__(self, name: str) -> Any:
        if name not in ClampedLaw._TABLE:
            raise AttributeError(name)
        support, probs = self._table()
        TableLaw.__init__(self, support, probs)
        self.support = self.points
        return getattr(self, name)

    def cdf(self, y: ArrayLike) -> NDArray[np.float64]:
        y = np.asarray(y, dtype=np.float64)
        inner = self.inner.cdf(y)
        return np.where(y < self.lower, 0.0, np.where(y >= self.upper, 1.0, inner))

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        return np.clip(self.inner.ppf(q), self.lower, self.upper)

    def support_ends(self) -> tuple[float, float]:
        """The clamp's ends (each has positive probability).

        Returns
        -------
        tuple of float
            ``(lower, upper)``.
        """
        return self.lower, self.upper

    def mean_abs_error(self, true_value: float) -> float:
        """E|clamp(Y) − x|: the error a user sees."""
        return self.mean_abs(about=true_value)


class Laplace(HalfLatticeMechanism):
    """ε-DP Laplace mechanism, exact on a power-of-two grid (pure DP on real hardware).

    Supported: epsilon in [1e-05, 1000], sensitivity in [1e-280, 1e+295] (the default grid's
    block table has <= 2^18 entries and builds in well under a second; an explicit ``grid``
    must give a block length <= 2^18); true values ``|x| < 2^51·grid``.

    >>> m = Laplace(epsilon=1.0, sensitivity=1.0)
    >>> m.guarantee.epsilon
    1.0

    The Laplace mechanism (C. Dwork, F. McSherry, K. Nissim, A. Smith, *Calibrating Noise to
    Sensitivity in Private Data Analysis*, TCC 2006), made exact on a lattice: the release
    is ``c·L + (±(K + 1/2))·L`` with ``c = floor(x/L + 1/2)`` and
    ``P(K = k) ∝ 2^(-k/M)`` quantised exactly to 64-bit integers; the block length M is the
    smallest whose exact loss ``max_k ln p(k) − ln p(k + S)`` (``S = ceil(Δ/L)``) is <= ε.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
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

    SUPPORTED = supported({"epsilon": Interval(1e-5, 1000.0), "sensitivity": SENSITIVITY_RANGE})

    def __init__(self, *, epsilon: float, sensitivity: float, grid: float | None = None) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        self.grid = (
            default_grid(self.sensitivity, self.epsilon) if grid is None else check_grid(grid)
        )
        self.shift_steps = grid_sensitivity(self.sensitivity, self.grid)
        check_block_length(self.epsilon, self.shift_steps, self.grid)
        self.block = _calibrated_block(self.epsilon, self.shift_steps)
        self._freeze()

    # ------------------------------------------------------------ calibration
    @property
    def scale(self) -> float:
        """Continuous-equivalent Laplace scale M·L/ln2 (>= Δ/ε)."""
        return self.block.M * self.grid / LN2

    @property
    def scale_inflation(self) -> float:
        """scale / (Δ/ε) − 1: the price of exactness, ~3e-4 at the default grid."""
        return self.scale / (self.sensitivity / self.epsilon) - 1.0

    @cached_property
    def exact_loss(self) -> float:
        """The exact worst-case loss of the sampled pmf (<= epsilon − 1e-12)."""
        return self.block.step_loss(self.shift_steps)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            epsilon=self.epsilon,
            delta=0.0,
            notion="pure",
            note="exact lattice sampler: no finite-precision degradation",
            details={
                "grid": self.grid,
                "block": self.block.M,
                "shift_steps": self.shift_steps,
                "exact_loss": self.exact_loss,
                "scale": self.scale,
            },
        )

    # ---------------------------------------------------------------- release
    def _sampler(self) -> Any:
        return self.block

    def _law(self, center: float) -> LatticeLaplaceNoise:
        return LatticeLaplaceNoise(self.block, self.grid, center)

    def privacy_model(self) -> Any:
        from ..verify import AdditiveLattice

        return AdditiveLattice(
            logpmf=half_lattice_logpmf(self.block),
            max_shift=self.shift_steps,
            period=self.block.M,
        )

    def privacy_profile(self) -> Any:
        from .profiles import laplace_profile

        return laplace_profile(self)

    def __repr__(self) -> str:
        return (
            f"Laplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
            f"grid={self.grid!r})"
        )


class ClampedLaplace(Mechanism):
    """Baseline: :class:`Laplace` then clamp (snap) into [lower, upper].

    Clamping is post-processing, so the guarantee is the Laplace one.  Mass beyond
    an end piles up *on* the end point, which biases answers near the edges -- the
    behaviour the range-adherent mechanisms (Croft et al. 2022) improve on.

    Supported: epsilon in [1e-05, 1000], sensitivity in [1e-280, 1e+295] (as
    :class:`Laplace`); finite lower < upper with ``|lower|, |upper| < 2^51·grid``.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    sensitivity : float
        Δ: the largest change of the true answer between neighbouring data sets.
    lower, upper : float
        The public range [lower, upper] the release is clamped into (finite, lower < upper).
    grid : float or None, default None
        The output grid step L, a power of two; None: the default, at least 4096 times
        finer than the sensitivity.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = Laplace.SUPPORTED

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        lower: float,
        upper: float,
        grid: float | None = None,
    ) -> None:
        self._supported("epsilon", epsilon)
        self._supported("sensitivity", sensitivity)
        self.lower, self.upper = check_interval(lower, upper, name="range")
        self.laplace = Laplace(epsilon=epsilon, sensitivity=sensitivity, grid=grid)
        check_representable(np.array([self.lower, self.upper]), self.laplace.grid,
                            name="lower/upper")
        self.epsilon = self.laplace.epsilon
        self.sensitivity = self.laplace.sensitivity
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        g = self.laplace.guarantee
        return Guarantee(g.epsilon, g.delta, g.notion, "Laplace then clamp (post-processing)",
                         g.details)

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        x = one_real(true_value)
        if x is not None and self.lower <= x <= self.upper:  # one value: the scalar kernel
            y = self.laplace._release_one(x, rng)  # (the ends are representable on the grid)
            return min(max(y, self.lower), self.upper)  # = np.clip of the array path
        values = check_values("true_value", true_value, lower=self.lower, upper=self.upper)
        raw = np.asarray(self.laplace.release(values, rng=rng), dtype=np.float64)
        return as_output(np.clip(raw, self.lower, self.upper), true_value)

    def noise(self, true_value: float | None = None) -> ClampedLaw:
        """The exact law of the clamped release for ``true_value`` (default: mid-range).

        Parameters
        ----------
        true_value : float or None, default None
            One true value (None: the default named in the summary above).

        Returns
        -------
        Law
            The exact law of the release (scipy.stats-like: ``pmf``/``pdf``, ``cdf``, ``sf``,
            ``ppf``, ``mean``, ``var``, ``std``, ``mean_abs``, ``interval``).
        """
        x = (self.lower + self.upper) / 2 if true_value is None else check_true_scalar(
            "true_value", true_value)
        x = float(check_values("true_value", x, lower=self.lower, upper=self.upper))
        def table() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            ys, logp = self._clamped_law(x)
            return ys, np.exp(logp)

        return ClampedLaw(self.laplace.noise(x), self.lower, self.upper, table)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        y = y.astype(np.float64, copy=False)
        ends = (y == self.lower) | (y == self.upper)
        inside = (y > self.lower) & (y < self.upper) & self.laplace._output_set(y)
        return ends | inside

    def privacy_profile(self) -> Any:
        from .profiles import clamped_laplace_profile

        return clamped_laplace_profile(self)

    def privacy_model(self) -> Any:
        """Exact clamped laws on a grid of true values near both ends and in the middle.

        Returns
        -------
        object
            The exact output law in the form :func:`dpnoise.verify` evaluates (never the claim).
        """
        from ..verify import DiscreteFamily

        L = self.laplace.grid
        S = self.laplace.shift_steps
        lo_i = math.ceil(self.lower / L)
        hi_i = math.floor(self.upper / L)
        mid = (lo_i + hi_i) // 2
        anchors = sorted({lo_i, mid, max(lo_i, hi_i - S)})
        pairs = [(a * L, min(a + S, hi_i) * L) for a in anchors]
        return DiscreteFamily(inputs=[], sensitivity=self.sensitivity, law=self._clamped_law,
                              pairs=pairs)

    def _clamped_law(self, x: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Exact pmf of clamp(Y) on the lattice points inside the range plus both ends."""
        law = self.laplace.noise(x)
        L = law.grid
        first = math.ceil((self.lower - law.center) / L - 0.5)
        last = math.floor((self.upper - law.center) / L - 0.5)
        cells = np.arange(first, last + 1)
        pts = law.center + (cells + 0.5) * L
        pts = pts[(pts > self.lower) & (pts < self.upper)]
        logp = law.logpmf(pts)
        below = float(law.cdf(np.nextafter(self.lower, -math.inf)))  # mass strictly below lower
        at_lower = below + (float(law.pmf(self.lower)) if self.laplace.in_output_set(
            [self.lower])[0] else 0.0)
        above = float(law.sf(np.nextafter(self.upper, -math.inf)))  # P(Y >= upper)
        ys = np.concatenate([[self.lower], pts, [self.upper]])
        with np.errstate(divide="ignore"):
            lp = np.concatenate([[math.log(at_lower) if at_lower > 0 else -math.inf], logp,
                                 [math.log(above) if above > 0 else -math.inf]])
        return ys, lp

    def mean_abs_error(self, true_value: float) -> float:
        """E|clamp(Y) − x| computed exactly from the lattice law.

        Parameters
        ----------
        true_value : float
            The true value, inside [lower, upper].

        Returns
        -------
        float
            ``E|clamp(Y) − x|``.
        """
        return self.noise(true_value).mean_abs_error(true_value)

    def __repr__(self) -> str:
        return (
            f"ClampedLaplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
            f"lower={self.lower!r}, upper={self.upper!r})"
        )


def naive_float_laplace(
    true_value: ArrayLike, scale: float, generator: np.random.Generator
) -> NDArray[np.float64]:
    """The UNSAFE textbook release ``x + numpy.laplace(0, scale)`` -- for demonstrations only."""
    x = np.asarray(true_value, dtype=np.float64)
    return x + generator.laplace(0.0, scale, size=x.shape)
