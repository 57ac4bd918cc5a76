"""The last grid point where a nondecreasing function stays at or below a target.

Exact calibrations (count noise's η on a 2^-40 grid) look for the largest integer j in a
bracket with f(j) <= target, f nondecreasing and every evaluation exact (rational) but
costly.  Bisection needs one evaluation per bit of the grid (40); this search proposes each
point by interpolating between the bracket's ends (regula falsi: on ln f while the ends are
more than a factor e apart, as δ curves span orders of magnitude, then on f) and falls back
to a bisection step whenever the bracket did not at least halve, so it never takes more
than about twice bisection's evaluations and usually a handful.  Each comparison is the exact
``f(j) <= target``, and the bracket keeps f(lo) <= target < f(hi), so for a nondecreasing f
the answer -- the j with f(j) <= target < f(j + 1) -- is unique and the same as bisection's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction


def _log(x: Fraction | int | float) -> float:
    """ln x of a positive exact number (-inf for 0), without overflowing a float."""
    if x <= 0:
        return -math.inf
    f = Fraction(x)
    return math.log(f.numerator) - math.log(f.denominator)


def last_at_most(f: Callable[[int], Fraction], target: Fraction, lo: int, hi: int,
                 f_lo: Fraction, f_hi: Fraction) -> int:
    """The largest j in [lo, hi) with f(j) <= target, for f nondecreasing on [lo, hi].

    Parameters
    ----------
    f : callable
        Exact function of an integer grid index (evaluated only strictly inside the bracket).
    target : Fraction
        The bound.
    lo, hi : int
        A bracket with f(lo) = ``f_lo`` <= target < f(hi) = ``f_hi`` (hi may be a limit point
        whose value is known without evaluating f there).
    """
    log_t = _log(target)
    while hi - lo > 1:
        width = hi - lo
        a, b, t = _log(f_lo), _log(f_hi), log_t
        if b - a < 1.0:  # the ends within a factor e: interpolate f itself
            a, b, t = float(f_lo), float(f_hi), float(target)
        mid = (lo + hi) // 2
        if math.isfinite(a) and math.isfinite(b) and b > a:
            guess = lo + int((t - a) / (b - a) * width)
            mid = min(hi - 1, max(lo + 1, guess))
        value = f(mid)
        if value <= target:
            lo, f_lo = mid, value
        else:
            hi, f_hi = mid, value
        if 2 * (hi - lo) > width and hi - lo > 1:  # interpolation stalled: bisect once
            mid = (lo + hi) // 2
            value = f(mid)
            if value <= target:
                lo, f_lo = mid, value
            else:
                hi, f_hi = mid, value
    return lo
