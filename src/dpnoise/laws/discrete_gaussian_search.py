"""The discrete Gaussian's σ² for a target δ in a few evaluations, on the same sampler grid.

:func:`~dpnoise.laws.discrete_gaussian.calibrate_sigma2` brackets the smallest σ² with
δ(σ²) <= target to 1e-13 (relative) by secant steps from a factor-4 bracket: about 30
evaluations of δ, each a sum over up to 40σ points.  The mechanism then rounds σ² *up* to
the exact sampler's grid (:func:`~dpnoise.exact.discrete_gaussian.grid_sigma2`, relative
step ~2^-20), so it only needs to know which grid cell the answer falls in.

:func:`calibrate_sigma2_on_grid` finds the root with a cheap δ (the same sum over the
window of terms within e^-36 of the largest; relative error ~1e-16), then evaluates the
*exact* δ at r·(1 ∓ 1e-11): if δ(lo) > target >= δ(hi), the bisection's answer h (which has
δ(h) <= target < δ(h') for some h' with h/h' − 1 < 1e-13) lies in (lo·(1 − 1e-13),
hi·(1 + 1e-12)) because δ is decreasing (its computed values err by ~1e-15 relative, far
less than the change of δ over those distances).  When the grid rounds both ends of that
interval to the same point, every σ² in it -- the bisection's answer included -- gives the
same sampler σ²: the same calibration, bit for bit, from three or four sums instead of
thirty.  Otherwise (a grid point inside the 2e-11-wide interval: about one case in 10^5)
the full bisection runs.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from ..exact.discrete_gaussian import grid_sigma2
from . import discrete_gaussian as dga

_CLOSE = 1e-11  # the exact evaluations sit this far (relative) either side of the root
SMALL = 100.0  # below this σ² the bisection is as quick (its sums have ~40σ + 60 terms)


def _near_delta(s: float, epsilon: float, d: int, work: dga.DeltaBuffers) -> float:
    """δ(ε) of N_ℤ(0, s) as :func:`~dpnoise.laws.discrete_gaussian.delta` sums it, but only
    over the terms within e^-36 of the largest (the search's estimate, not a guarantee)."""
    z_max = d / 2 - epsilon * s / d
    hi = math.ceil(z_max) - 1 if z_max == math.ceil(z_max) else math.floor(z_max)
    reach = math.sqrt(72.0 * s)
    if z_max < 0:
        reach = min(reach, 36.0 * s / -z_max)
    lo = max(-dga.window(s) - d, math.floor(min(0.0, z_max) - reach) - 2)
    if hi < lo:
        return 0.0
    z, lp, gap = work.grid(lo, hi)
    return dga._terms_sum(z, lp, gap, s, d, epsilon) * (1 + dga.REL_MARGIN)  # as delta()


def _continuous_root(epsilon: float, target: float, d: int) -> float:
    """σ² where the continuous Gaussian's δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) equals
    ``target`` (Balle & Wang 2018, Theorem 8), by secant steps on ln σ²: the starting
    point of the search (the classic σ² when the closed form is out of float range)."""
    lt = math.log(target)

    def g(x: float) -> float:
        sigma = math.exp(0.5 * x)
        a, b = d / (2 * sigma) - epsilon * sigma / d, -d / (2 * sigma) - epsilon * sigma / d
        v = 0.5 * math.erfc(-a / math.sqrt(2)) - math.exp(epsilon) * 0.5 * math.erfc(
            -b / math.sqrt(2))
        return math.log(v) - lt if v > 0 else -745.0 - lt

    classic = max(1.0, 2.0 * math.log(1.25 / target) * (d / epsilon) ** 2)
    xa, xb = math.log(classic), math.log(classic) - 0.1
    try:
        ga, gb = g(xa), g(xb)
        for _ in range(60):
            if gb == ga or abs(xb - xa) < 1e-12:
                break
            x = xb - gb * (xb - xa) / (gb - ga)
            xa, ga, xb = xb, gb, min(max(x, xb - 2.0), xb + 2.0)
            gb = g(xb)
    except (OverflowError, ValueError):
        return classic
    r = math.exp(xb)
    return r if math.isfinite(r) and r > 0 else classic


def _root(epsilon: float, target: float, d: int, work: dga.DeltaBuffers) -> float | None:
    """σ² with the estimate of δ equal to ``target`` (secant on ln δ against ln σ² from the
    continuous Gaussian's σ²), or None after 12 estimates."""
    lt = math.log(target)

    def g(x: float) -> float:
        v = _near_delta(math.exp(x), epsilon, d, work)
        return (math.log(v) if v > 0 else -745.0) - lt

    start = math.log(_continuous_root(epsilon, target, d))
    xa, xb = start, start + 1e-4
    ga, gb = g(xa), g(xb)
    for _ in range(10):
        if gb == ga:
            return None
        x = xb - gb * (xb - xa) / (gb - ga)
        x = min(max(x, xb - 2.0), xb + 2.0)  # a factor e^2 at most per step
        xa, ga, xb = xb, gb, x
        if abs(xb - xa) < 1e-14:
            return math.exp(xb)
        gb = g(xb)
    return None


@lru_cache(maxsize=64)
def calibrate_sigma2_on_grid(epsilon: float, target_delta: float, sensitivity: int = 1
                             ) -> float:
    """A σ² that :func:`~dpnoise.exact.discrete_gaussian.grid_sigma2` rounds to the same
    sampler σ² as :func:`~dpnoise.laws.discrete_gaussian.calibrate_sigma2`'s answer (which
    it returns when the shortcut cannot show that); cached per process."""
    d = int(sensitivity)
    if _continuous_root(epsilon, target_delta, d) < SMALL:  # δ sums a few hundred terms
        return dga.calibrate_sigma2(epsilon, target_delta, sensitivity)
    work = dga.DeltaBuffers()
    r = _root(epsilon, target_delta, d, work)
    if r is not None and 1e-2 < r < dga.MAX_SIGMA2 / 8:
        lo, hi = r * (1 - _CLOSE), r * (1 + _CLOSE)
        if (dga.delta(lo, epsilon, d, work) > target_delta >= dga.delta(hi, epsilon, d, work)
                and grid_sigma2(Fraction(lo * (1 - 1e-13))) ==
                grid_sigma2(Fraction(hi * (1 + 1e-12)))):
            return hi
    return dga.calibrate_sigma2(epsilon, target_delta, sensitivity)

