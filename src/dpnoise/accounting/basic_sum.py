"""Basic composition's sums, Σε and Σδ of the claimed guarantees, carried exactly.

Basic (sequential) composition charges k releases of (ε_i, δ_i)-DP mechanisms
(Σε_i, Σδ_i) (Dwork and Roth, "The algorithmic foundations of differential privacy", 2014,
Thm. 3.16).  Every accountant reports this bound (alone, or as one of the bounds it takes
the minimum of), so it must never be below the exact sum of the claimed guarantees.  A
floating-point sum rounded to nearest can be: ten ε = 0.1 (the double 0.1000000000000000055…)
add up to the double 0.9999999999999999, below their exact sum 1 + 5.6e-17, and would fit a
total ε = 1 that they exceed.

So the sums are carried exactly.  Each claimed ε or δ is a double (or an exact rational), so
k·ε and every sum of them is a rational with a power-of-two denominator: a
:class:`fractions.Fraction`, of which a charge or state reports the smallest double >= it
(:func:`~dpnoise.exact.rational.float_up`).  A double total B is then exceeded exactly when
the exact sum exceeds it (float_up(S) <= B iff S <= B), which is the ledger's own test under
the ``basic`` accountant: every accountant refuses the same release.

**Values written before the exact sums** (charges and states serialised without them, read
back from old ledgers) were sums and integer multiples rounded to nearest.  They are composed
as they were (so an old ledger's state hashes still verify) until a current charge joins
them; from then on, and whenever such a value is reported, it is replaced by
:func:`legacy_bound`, an upper bound of the exact sum it stood for.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from ..exact.rational import float_up

#: round-to-nearest operations assumed per release for a value written before the exact
#: sums: the old code rounded at most 3 times per mechanism of a release (the claimed ε as
#: a double, k·ε and the running sum) and twice per composition (n·ε and the sum), so this
#: covers releases of up to 340 mechanisms (a release has a handful).
LEGACY_ROUNDINGS_PER_RELEASE = 1024
_UNIT = Fraction(1, 1 << 53)  # u: the relative rounding error of round-to-nearest doubles
_TINY = Fraction(1, 1 << 900)  # the absolute error of subnormal roundings, times any k < 2^100


def exact(value: Any) -> Fraction:
    """``value`` (int, float, numpy real or Fraction) as the exact rational it denotes."""
    if isinstance(value, numbers.Rational):
        return Fraction(value.numerator, value.denominator)
    return Fraction(float(value))  # a double (or float32) is converted exactly


def claimed_sum(terms: Iterable[tuple[int, Any]]) -> Fraction:
    """Σ k·x over the (k, x) pairs, exactly."""
    return sum((k * exact(x) for k, x in terms), Fraction(0))


def capped(delta: Fraction) -> Fraction:
    """min(1, δ): a δ of 1 holds for every mechanism, so the cap stays an upper bound."""
    return min(Fraction(1), delta)


def up(value: Fraction) -> float:
    """The smallest double >= ``value`` (what a charge or state reports)."""
    return float_up(value)


def legacy_bound(value: float, releases: int) -> Fraction:
    """An upper bound of the exact sum that a value written before the exact sums stood for.

    It was computed from the claimed guarantees by at most R = 1024·max(1, releases)
    roundings to nearest (:data:`LEGACY_ROUNDINGS_PER_RELEASE`) of non-negative sums and
    integer multiples.  A rounding to nearest in the normal range errs by at most u = 2^-53
    of its result, so along every chain of operations the exact value is at most
    (1 + u)^R <= 1 + 2Ru times the computed one; sums of non-negative terms and integer
    multiples keep that relative bound, and every intermediate result is at most the final
    one.  Subnormal roundings err by at most 2^-1075 each, scaled by integer factors below
    2^100: the absolute term 2^-900 covers them.

    Parameters
    ----------
    value : float
        The stored sum (ε or δ; >= 0).
    releases : int
        How many releases it composes.

    Returns
    -------
    Fraction
        value·(1 + 2Ru) + 2^-900, >= the exact sum it was computed from.
    """
    r = LEGACY_ROUNDINGS_PER_RELEASE * max(1, int(releases))
    return exact(value) * (1 + 2 * r * _UNIT) + _TINY


def compose_basic(state: Any, charge: Any,
                  n: int) -> tuple[float, float, tuple[Fraction, Fraction] | None]:
    """The basic (Σε, Σδ) of a :class:`~.accountant.State` after ``n`` releases of a
    :class:`~.accountant.Charge`: (ε, δ, the exact sums) with ε, δ the smallest doubles >=
    the exact sums.

    Unless both sides were written before the exact sums: then rounded to nearest as they
    were, so that an old ledger's states still hash to what it recorded (their values are
    replaced by upper bounds when reported, or when a current charge joins them).
    """
    if state.basic_exact is None and not charge.basic_up:
        return (state.basic_epsilon + n * charge.basic_epsilon,
                min(1.0, state.basic_delta + n * charge.basic_delta), None)
    (se, sd), (ce, cd) = state.basic_bound(), charge.basic_bound()
    exact = se + n * ce, capped(sd + n * cd)
    return up(exact[0]), up(exact[1]), exact
