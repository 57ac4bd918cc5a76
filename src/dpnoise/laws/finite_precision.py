"""Finite-precision accounting (Gazeau et al. 2013, Gazeau-Miller-Palamidessi 2013, "GMP").

A mechanism that computes ``true + noise`` in floating point and then **rounds** the
result to a grid of step L (and returns an *exception* outside a bounded region M_r)
is ε'-DP with (GMP Thm 4.5, corrected)::

    ε' = ε + ln(1 + R · e^{ε(ℓ + δt)/Δ})                                   (*)

* ε, Δ   the privacy parameter and sensitivity of the *ideal* (real-number) noise;
* δt     a bound on |implemented noise − ideal noise| on the range that matters
         (GMP's kδ0 + δn, eq. 3);
* ℓ      the diameter of a rounding cell: ℓ = L in 1-D, ℓ = √2·L for square cells in 2-D;
* R      the rounding robustness of eq. (5), max over cells λ(C^{+δt} \\ C^{−δt}) / λ(C^{−δt}):
         1-D  R = 4δt/(L − 2δt);      2-D  R = 8Lδt/(L − 2δt)².
The bound needs L > 2δt (otherwise no guarantee; check B2 of
``dpnoise reproduce finite-precision`` measures 1.204 > ε = 1).

:func:`eps_prime_printed` keeps the paper's §5/§6 form (with its errata) for comparison only.

Implementation error δt:

* :func:`delta_t_recommended`: the dpnoise samplers compute −ln U as ``e·ln2 − log1p(f)``
  (e Geometric, f 52 random bits), so the error is *relative*:
  1-D  δt = 2^-49·(b + D + A);   2-D with radius b·(E1 + E2): δt = 2^-46·(b + D + A),
  with b = Δ/ε, D = diam(M_r), A = max |coordinate| of M_r.
* :func:`delta_t_inverse_cdf`: the paper's §5 inverse-CDF sampler on a 2^-q grid; its
  error grows like e^{D/b} (δt = 2b·e^{(D+δr)/b}·2^-q + 2^-50(A + D + δr), δr = 2δt(0)).
* :func:`delta_t_planar_polar`: the paper's §6 polar sampler (Lambert W), with the
  corrected modulus of continuity of the radius.

Mironov's snapping mechanism (M12) is the 1-D comparison: ε' = ε(1 + 12ηB/Δ) + 2η,
η = 2^-53, B the clamp bound, grid forced to Λ = 2^⌈log2(Δ/ε)⌉.

Example: ε = 1, Δ = 1, range [−1000, 1000], L = 2^-20 gives ε' = 1.0000224.

References:
  * I. Gazeau, D. Miller, C. Palamidessi, "Preserving differential privacy under
    finite-precision semantics", QAPL 2013, EPTCS 117, pp. 1-18, 2013.
  * I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy",
    ACM CCS 2012.

Errata of the paper, each explained: docs/papers.md#errata-finite-precision.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any, Literal

from scipy import optimize

from ..errors import ParameterError, PrecisionError
from ..grid import check_grid
from ..params import (
    as_real_scalar,
    check_epsilon,
    check_interval,
    check_positive,
    check_sensitivity,
)

ETA = 2.0**-53  # unit roundoff of binary64
MAX_INDEX = 2.0**51  # |coordinate| / L must stay below this for exact rounding
MIN_GRID_OVER_DT = 2.0**10  # pitfall 5: require L >= 2^10·δt
Sampler = Literal["recommended", "inverse-cdf", "polar"]


# ------------------------------------------------------------------ eq. (5) and (*)
def _check_dim(dim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim not in (1, 2):
        raise ParameterError(f"dim must be 1 or 2, got {dim!r}")
    return dim


def _check_dt(delta_t: float) -> float:
    dt = as_real_scalar("delta_t", delta_t)  # no str, bool, None; an int past float refused
    if not (math.isfinite(dt) and dt >= 0):
        raise ParameterError(f"delta_t must be a finite number >= 0, got {delta_t!r}")
    return dt


def _exp_or_inf(x: float) -> float:
    """e^x, +inf past the float range (math.exp raises OverflowError there)."""
    return math.exp(x) if x < 709.0 else math.inf


def cell_diameter(grid: float, dim: int = 1) -> float:
    """Diameter ℓ of a rounding cell: L (1-D interval) or √2·L (2-D square, Euclidean)."""
    return grid if _check_dim(dim) == 1 else math.sqrt(2.0) * grid


def rounding_robustness(grid: float, delta_t: float, dim: int = 1) -> float:
    """R of eq. (5): λ(C^{+δt} \\ C^{−δt}) / λ(C^{−δt}) for an interval / square cell of side L.

    1-D: ((L + 2δt) − (L − 2δt)) / (L − 2δt) = 4δt/(L − 2δt).
    2-D: ((L + 2δt)² − (L − 2δt)²) / (L − 2δt)² = 8Lδt/(L − 2δt)².
    (C^{+δt} of a square is inside the square of side L + 2δt, so this is an upper bound.)
    """
    dt = _check_dt(delta_t)
    grid = check_positive("grid", grid)
    if not grid > 2 * dt:
        raise PrecisionError(
            f"the grid step must exceed 2*delta_t = {2 * dt:.3g} (got grid={grid!r}): "
            "GMP's Theorem 4.5 gives no guarantee there"
        )
    inner = grid - 2 * dt
    return 4 * dt / inner if _check_dim(dim) == 1 else 8 * grid * dt / (inner * inner)


def eps_prime(epsilon: float, sensitivity: float, grid: float, delta_t: float,
              dim: int = 1) -> float:
    """Corrected GMP bound (*) ε' = ε + ln(1 + R·e^{ε(ℓ + δt)/Δ}).

    >>> round(eps_prime(1.0, 1.0, 2.0**-20, 2.0**-49 * 3001.0), 7)
    1.0000224

    Gazeau, Miller & Palamidessi, *Preserving Differential Privacy under Finite-Precision
    Semantics*, QAPL 2013, Theorem 4.5 with ε restored in the exponent: ``R`` is the
    rounding-robustness ratio of the grid for an implementation error δt, and ``ℓ`` the
    diameter of a grid cell (L in 1-D, √2·L in 2-D).

    Parameters
    ----------
    epsilon : float
        ε of the ideal mechanism.
    sensitivity : float
        Δ.
    grid : float
        The output grid step L.
    delta_t : float
        The implementation's largest absolute error δt on the relevant range.
    dim : int, default 1
        1 or 2 (the planar Laplace).

    Returns
    -------
    float
        ε' >= ε.

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    PrecisionError
        If the grid is not coarser than 2·δt.
    """
    return epsilon + eps_prime_overhead(epsilon, sensitivity, grid, delta_t, dim)


def eps_prime_overhead(epsilon: float, sensitivity: float, grid: float, delta_t: float,
                       dim: int = 1) -> float:
    """ε' − ε = ln(1 + R·e^{ε(ℓ+δt)/Δ}), computed with log1p (accurate when tiny).

    This is also the additive constant c of the metric form ln P1/P2 <= ε·d/Δ + c
, e.g. geo-indistinguishability ε_g·d + c.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    R = rounding_robustness(grid, delta_t, dim)
    if R == 0.0:  # delta_t = 0: no rounding error, no overhead (0·inf would be NaN)
        return 0.0
    return math.log1p(R * _exp_or_inf(epsilon * (cell_diameter(grid, dim) + delta_t)
                                      / sensitivity))


def eps_prime_printed(epsilon: float, sensitivity: float, grid: float, delta_t: float,
                      dim: int = 1) -> float:
    """The paper's §5/§6 form, for comparison only (valid but loose: >= ε + ln 2).

    R_1D = (L+2δt)/(L−2δt), R_2D = ((L+2δt)/(L−2δt))², exponent ε(L+δt)/Δ in both
    dimensions.  In 2-D it uses L instead of the cell diameter √2·L (erratum 3), so with
    δt close to L it can even come out below the corrected value.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    dt = _check_dt(delta_t)
    if not grid > 2 * dt:
        raise PrecisionError(f"the grid step must exceed 2*delta_t = {2 * dt:.3g}")
    ratio = (grid + 2 * dt) / (grid - 2 * dt)
    R = ratio if _check_dim(dim) == 1 else ratio * ratio
    return epsilon + math.log1p(R * math.exp(epsilon * (grid + dt) / sensitivity))


# ------------------------------------------------------------------ implementation error δt
def delta_t_recommended(scale: float, diameter: float, max_abs: float, dim: int = 1) -> float:
    """δt of the dpnoise samplers (E = e·ln2 − log1p(f)) (derived here).

    1-D: 2^-49·(b + D + A).  2-D (radius b·(E1+E2), angle 2π·k·2^-53): 2^-46·(b + D + A).
    The relative error does not grow with the range (unlike the inverse CDF).
    """
    factor = 2.0**-49 if _check_dim(dim) == 1 else 2.0**-46
    return factor * (scale + diameter + max_abs)


def delta_t_inverse_cdf(scale: float, diameter: float, max_abs: float, bits: int = 53) -> float:
    """δt of the paper's §5 inverse-CDF sampler with u on a 2^-bits grid.

    δt(δr) = 2b·e^{(D+δr)/b}·2^-q + 2^-50·(A + D + δr), evaluated at δr = 2·δt(0).
    Returns inf when the sampler cannot even reach the range (|X| <= q·ln2·b).
    """
    if diameter >= bits * math.log(2.0) * scale:
        return math.inf
    def dt(dr: float) -> float:
        with _NoOverflow():
            return (2 * scale * math.exp((diameter + dr) / scale) * 2.0**-bits
                    + 2.0**-50 * (max_abs + diameter + dr))
    return dt(2 * dt(0.0))


def planar_polar_max_radius(scale: float, bits: int = 53) -> float:
    """Largest radius the paper's §6 sampler reaches with u on a 2^-bits grid: the r with
    (1 + r/b)·e^{−r/b} = 2^-bits (≈ 40.46·b for 53 bits)."""
    target = bits * math.log(2.0)
    t = optimize.brentq(lambda t: t - math.log1p(t) - target, 1.0, 4 * target + 10)
    return t * scale


def delta_t_planar_polar(scale: float, diameter: float, max_abs: float, bits: int = 53,
                         w_err: float = 0.0, angle_bits: int | None = None) -> float:
    """δt of the paper's §6 polar sampler (§4.3), corrected.

    δt = ω_r + 2π(D + δr)·2^-q + w_err·b + 2^-47·(b + D + A), with the radial modulus
    ω_r <= 1.01·max(b√(2δ0), min(b√(2δ0·e^{D'/b}), 2δ0·e^{D'/b}·b²/D')), D' = D + δr,
    δ0 = 2^-q and δr = 2·δt(0).  ``w_err`` is the relative error of the Lambert W used
    (>= 1.5e-4 for scipy's ``lambertw``, measured).  ``angle_bits`` (default ``bits``) is the
    resolution of the angle's uniform, if different.  Returns inf if the sampler's radius
    cap (:func:`planar_polar_max_radius`) is below D.
    """
    if planar_polar_max_radius(scale, bits) < diameter:
        return math.inf
    d0 = 2.0**-bits
    d_angle = 2.0 ** -(bits if angle_bits is None else angle_bits)

    def dt(dr: float) -> float:
        dp = diameter + dr
        with _NoOverflow():
            grow = math.exp(dp / scale)
        omega = 1.01 * max(scale * math.sqrt(2 * d0),
                           min(scale * math.sqrt(2 * d0 * grow), 2 * d0 * grow * scale**2 / dp))
        return (omega + 2 * math.pi * dp * d_angle + w_err * scale
                + 2.0**-47 * (scale + diameter + max_abs))

    return dt(2 * dt(0.0))


class _NoOverflow:
    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is OverflowError:
            raise PrecisionError("the range is far too wide for this sampler (e^{D/b} overflows)")
        return False


# ------------------------------------------------------------------ Mironov (M12)
def mironov_grid(epsilon: float, sensitivity: float) -> float:
    """Λ: the smallest power of two >= λ = Δ/ε, the grid M12's snapping forces."""
    lam = check_sensitivity(sensitivity) / check_epsilon(epsilon)
    m, e = math.frexp(lam)
    return math.ldexp(1.0, e - 1) if m == 0.5 else math.ldexp(1.0, e)


def mironov_eps_prime(epsilon: float, sensitivity: float, bound: float) -> float:
    """Snapping mechanism (Mironov 2012): ε' = ε(1 + 12ηB/Δ) + 2η, η = 2^-53.

    ``bound`` is B, the clamp bound of M12 (outputs and inputs in [−B, B]).  Unlike
    diffprivlib's ``Snapping.effective_epsilon`` (ε + 12Bε + 2η: the η is missing from
    the middle term, over-conservative by ~2^53), the η is kept here.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    if not (math.isfinite(bound) and bound > 0):
        raise ParameterError(f"bound must be a finite number > 0, got {bound!r}")
    return epsilon * (1 + 12 * ETA * bound / sensitivity) + 2 * ETA


def mironov_noise_epsilon(target: float, sensitivity: float, bound: float) -> float:
    """The ε to run M12's noise at so that its ε' equals ``target``."""
    target = check_epsilon(target)
    check_sensitivity(sensitivity)
    return (target - 2 * ETA) / (1 + 12 * ETA * bound / sensitivity)


# ------------------------------------------------------------------ regions on the grid
def aligned_interval(lower: float, upper: float, grid: float) -> tuple[float, float]:
    """Snap [lower, upper] outwards to cell boundaries (j ± 1/2)·L: [m, M) ⊇ [lower, upper].

    Cells are [(j − 1/2)L, (j + 1/2)L) around the grid points j·L, so M_r is a union of
    cells (needed by the exception event of Thm 4.5; pitfall 7).  Exact in float64.
    """
    lower, upper = check_interval(lower, upper, name="range")
    L = check_grid(grid)
    if max(abs(lower), abs(upper)) / L >= MAX_INDEX:
        raise ParameterError(
            f"the range [{lower:g}, {upper:g}] is too wide for grid {L!r}: "
            f"|coordinates| / grid must stay below 2^51"
        )
    k_lo = math.floor(lower / L - 0.5)
    k_hi = math.floor(upper / L - 0.5) + 1
    return (k_lo + 0.5) * L, (k_hi + 0.5) * L


# ------------------------------------------------------------------ reports
@dataclass(frozen=True)
class PrecisionReport:
    """ε' of one configuration, corrected and as printed, with Mironov's for comparison."""

    epsilon: float
    sensitivity: float
    grid: float
    dim: int
    sampler: str
    bits: int
    diameter: float
    max_abs: float
    delta_t: float
    robustness: float
    eps_prime: float
    eps_prime_printed: float
    mironov_eps_prime: float | None
    mironov_grid: float | None

    @property
    def overhead(self) -> float:
        """ε' − ε (the additive constant c of the metric form)."""
        return self.eps_prime - self.epsilon

    @property
    def ratio(self) -> float:
        return self.eps_prime / self.epsilon

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "overhead": self.overhead, "ratio": self.ratio}


def _region_geometry(lower: float, upper: float, grid: float, dim: int) -> tuple[float, float]:
    m, M = aligned_interval(lower, upper, grid)
    width = M - m
    diameter = width if dim == 1 else math.sqrt(2.0) * width
    return diameter, max(abs(m), abs(M))


def delta_t_for(sampler: Sampler, *, scale: float, diameter: float, max_abs: float, dim: int,
                bits: int = 53, w_err: float = 0.0) -> float:
    """δt of a named sampler (see the module docstring)."""
    if sampler == "recommended":
        return delta_t_recommended(scale, diameter, max_abs, dim)
    if sampler == "inverse-cdf":
        if dim != 1:
            raise ParameterError("sampler 'inverse-cdf' is 1-D; use 'polar' in 2-D")
        return delta_t_inverse_cdf(scale, diameter, max_abs, bits)
    if sampler == "polar":
        if dim != 2:
            raise ParameterError("sampler 'polar' is 2-D; use 'inverse-cdf' in 1-D")
        return delta_t_planar_polar(scale, diameter, max_abs, bits, w_err)
    raise ParameterError(
        f"sampler must be 'recommended', 'inverse-cdf' or 'polar', got {sampler!r}")


def analyse(
    *,
    epsilon: float,
    sensitivity: float,
    lower: float,
    upper: float,
    grid: float,
    dim: int = 1,
    sampler: Sampler = "recommended",
    bits: int = 53,
    delta_t: float | None = None,
    w_err: float = 0.0,
) -> PrecisionReport:
    """ε' for noise with parameters (ε, Δ) on the region [lower, upper]^dim rounded to ``grid``.

    The region is snapped outwards to cell boundaries first (:func:`aligned_interval`);
    D is its Euclidean diameter and A its largest |coordinate|.  ``delta_t`` overrides
    the sampler's error bound.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    dim = _check_dim(dim)
    L = check_grid(grid)
    diameter, max_abs = _region_geometry(lower, upper, L, dim)
    b = sensitivity / epsilon
    dt = (delta_t_for(sampler, scale=b, diameter=diameter, max_abs=max_abs, dim=dim, bits=bits,
                      w_err=w_err)
          if delta_t is None else _check_dt(delta_t))
    if not math.isfinite(dt) or not 2 * dt < L:
        corrected = printed = R = math.inf
    else:
        R = rounding_robustness(L, dt, dim)
        corrected = eps_prime(epsilon, sensitivity, L, dt, dim)
        printed = eps_prime_printed(epsilon, sensitivity, L, dt, dim)
    mir = mir_grid = None
    if dim == 1:
        mir = mironov_eps_prime(epsilon, sensitivity, max(abs(lower), abs(upper)))
        mir_grid = mironov_grid(epsilon, sensitivity)
    return PrecisionReport(
        epsilon=epsilon, sensitivity=sensitivity, grid=L, dim=dim, sampler=sampler, bits=bits,
        diameter=diameter, max_abs=max_abs, delta_t=dt, robustness=R, eps_prime=corrected,
        eps_prime_printed=printed, mironov_eps_prime=mir, mironov_grid=mir_grid,
    )


def grid_for_tolerance(
    *,
    epsilon: float,
    sensitivity: float,
    lower: float,
    upper: float,
    tolerance: float,
    dim: int = 1,
    sampler: Sampler = "recommended",
    bits: int = 53,
    w_err: float = 0.0,
) -> PrecisionReport:
    """The finest power-of-two grid L with ε' <= tolerance·ε (e.g. tolerance = 1.0001).

    ε' − ε ≈ (4δt/L)·e^{εℓ/Δ} falls with L until L ~ Δ/ε and then rises, so the feasible
    grids form an interval; the finest one (least rounding error) is returned.  Grids
    with L < 2^10·δt (pitfall 5) or ``|coordinate|/L >= 2^51`` are never proposed.
    Raises :class:`PrecisionError` when no grid meets the tolerance.

    Parameters
    ----------
    epsilon : float
        ε.
    sensitivity : float
        Δ.
    lower, upper : float
        The range the true values and outputs lie in.
    tolerance : float
        The largest accepted ratio ε'/ε (> 1).
    dim : int, default 1
        1 or 2.
    sampler : {"recommended", "inverse-cdf", "polar"}, default "recommended"
        Which floating-point sampler's error δt is assumed.
    bits : int, default 53
        Mantissa bits of the arithmetic.
    w_err : float, default 0.0
        An extra error term of the sampler, in units of its scale.

    Returns
    -------
    PrecisionReport
        The grid, δt, ε' and the overhead.

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    PrecisionError
        If no grid meets the tolerance.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    lower, upper = check_interval(lower, upper, name="range")
    tolerance = as_real_scalar("tolerance", tolerance)
    if not (math.isfinite(tolerance) and tolerance > 1):
        raise ParameterError(f"tolerance must be a ratio > 1 (e.g. 1.0001), got {tolerance!r}")
    span = max(abs(lower), abs(upper), upper - lower)
    j_lo = math.floor(math.log2(span)) - 50
    j_hi = math.ceil(math.log2(max(span, sensitivity / epsilon))) + 4
    best: PrecisionReport | None = None
    for j in range(max(j_lo, -999), min(j_hi, 999) + 1):
        L = 2.0**j
        try:
            rep = analyse(epsilon=epsilon, sensitivity=sensitivity, lower=lower, upper=upper,
                          grid=L, dim=dim, sampler=sampler, bits=bits, w_err=w_err)
        except (PrecisionError, ParameterError):
            continue
        if not MIN_GRID_OVER_DT * rep.delta_t <= L:
            continue
        if rep.eps_prime <= tolerance * epsilon:
            return rep
        if best is None or rep.eps_prime < best.eps_prime:
            best = rep
    hint = "" if best is None else (
        f"; the best grid is {best.grid!r} with eps' = {best.eps_prime:.9g} "
        f"({best.ratio:.9g} x epsilon)")
    raise PrecisionError(f"no power-of-two grid gives eps' <= {tolerance!r} x epsilon{hint}")
