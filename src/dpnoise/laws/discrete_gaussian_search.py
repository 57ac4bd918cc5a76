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

import numpy as np

from ..exact.discrete_gaussian import grid_sigma2
from . import discrete_gaussian as dga

_CLOSE = 1e-11  # the bracket's ends sit this far (relative) either side of the root
SMALL = 100.0  # below this σ² the bisection is as quick (its sums have ~40σ + 60 terms)
_SLACK = 1e-13  # relative: float error of either sum, and of ln Z here against mpmath's
_REACH_NATS = 50.0  # the window keeps the terms within e^-50 of the largest


def _near_delta(s: float, epsilon: float, d: int, work: dga.DeltaBuffers
                ) -> tuple[float, float]:
    """(S, B): the terms of :func:`~dpnoise.laws.discrete_gaussian.delta`'s sum for N_ℤ(0, s)
    within e^-50 of the largest, summed, and a bound on the terms left out, both times
    delta's (1 + 1e-9).  Each term is p(z)·(1 − e^(ε + (2zΔ − Δ²)/(2s))) <= p(z); the terms
    left out are those with z <= L < 0, whose sum is at most
    e^(−L²/(2s))/(Z·(1 − e^(−|L|/s))) (consecutive ratios below e^(−|L|/s)).  For s >= 100,
    ln Z = ½ ln(2πs) to within 1e-16 relative (the θ₃ correction is below e^-1900)."""
    z_max = d / 2 - epsilon * s / d
    hi = math.ceil(z_max) - 1 if z_max == math.ceil(z_max) else math.floor(z_max)
    reach = math.sqrt(2 * _REACH_NATS * s)
    if z_max < 0:
        reach = min(reach, _REACH_NATS * s / -z_max)
    lo = max(-dga.window(s) - d, math.floor(min(0.0, z_max) - reach) - 2)
    if hi < lo:
        return 0.0, math.inf
    log_z = 0.5 * math.log(2 * math.pi * s)
    z, lp, gap = work.grid(lo, hi)
    np.multiply(z, z, out=lp)
    np.divide(lp, -2 * s, out=lp)
    np.subtract(lp, log_z, out=lp)
    np.multiply(z, 2 * d, out=gap)
    np.subtract(gap, d * d, out=gap)
    np.divide(gap, 2 * s, out=gap)
    np.add(gap, epsilon, out=gap)
    np.exp(lp, out=lp)
    np.expm1(gap, out=gap)
    np.multiply(lp, gap, out=lp)  # −term
    total = -float(np.sum(lp[lp < 0]))
    edge = lo - 1  # the largest z left out (the full sum starts at −window − Δ)
    left_out = 0.0
    if edge >= -dga.window(s) - d:
        left_out = math.exp(-edge * edge / (2 * s) - log_z) / -math.expm1(edge / s)
    return total * (1 + dga.REL_MARGIN), left_out * (1 + dga.REL_MARGIN)


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
        v = _near_delta(math.exp(x), epsilon, d, work)[0]
        return (math.log(v) if v > 0 else -745.0) - lt

    start = math.log(_continuous_root(epsilon, target, d))
    xa, xb = start, start + 1e-7
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
    if r is not None and SMALL / 2 <= r < dga.MAX_SIGMA2 / 8:  # (ln Z above: s >= 50)
        lo, hi = r * (1 - _CLOSE), r * (1 + _CLOSE)
        below, _ = _near_delta(lo, epsilon, d, work)  # δ(lo) >= below (terms are > 0)
        part, rest = _near_delta(hi, epsilon, d, work)  # δ(hi) <= part + rest
        if (below * (1 - _SLACK) > target_delta
                and (part + rest) * (1 + _SLACK) + 1e-300 <= target_delta
                and grid_sigma2(Fraction(lo * (1 - 1e-13))) ==
                grid_sigma2(Fraction(hi * (1 + 1e-12)))):
            return hi
    return dga.calibrate_sigma2(epsilon, target_delta, sensitivity)

