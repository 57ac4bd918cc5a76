"""The sums every accountant composes -- basic composition's Σε, Σδ and zCDP's Σρ -- exactly.

Basic (sequential) composition charges releases of (ε_i, δ_i)-DP mechanisms (Σε_i, Σδ_i)
(Dwork and Roth, "The algorithmic foundations of differential privacy", 2014, Thm. 3.16),
and ρ_i-zCDP releases compose to (Σρ_i)-zCDP (Bun and Steinke, "Concentrated differential
privacy: simplifications, extensions, and lower bounds", TCC 2016, Lemma 2.3).  Every
accountant reports basic composition (alone, or as one of the bounds it takes the minimum
of) and the zCDP accountant compares Σρ with a ρ total, so neither sum may be below the
exact sum of what the releases claim.  A floating-point sum rounded to nearest can be: ten
ε = 0.1 (the double 0.1000000000000000055...) add up to the double 0.9999999999999999, below
their exact sum 1 + 5.6e-17, and would fit a total ε = 1 that they exceed.

So the sums are carried exactly.  Each claimed ε, δ or ρ is a double (or an exact rational),
so k·ε and every sum of them is a rational with a power-of-two denominator: a
:class:`fractions.Fraction`, of which a charge or state reports the smallest double >= it
(:func:`~dpnoise.exact.rational.float_up`).  A double total B is then exceeded exactly when
the exact sum exceeds it (float_up(S) <= B iff S <= B), which is the ledger's own test under
the ``basic`` accountant: every accountant refuses the same releases.

**Rényi curves** (ε(α) on a fixed grid of orders, summed over releases: Mironov, "Rényi
differential privacy", CSF 2017, Prop. 1) are float arrays; they are composed with every
addition and integer multiple rounded to nearest and then raised by one unit in the last
place (:func:`compose_curves`), so a composed curve is never below the exact sum of its
releases' curves however many there are (a sum rounded to nearest drifts by up to n·u).

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

import numpy as np
from numpy.typing import NDArray

from ..exact.rational import float_up

#: round-to-nearest operations assumed per release for a value written before the exact
#: sums: the old code rounded at most 3 times per mechanism of a release (its claim as a
#: double, k·ε and the running sum) and twice per composition (n·ε and the sum), so this
#: covers releases of up to 340 mechanisms (a release has a handful).
LEGACY_ROUNDINGS_PER_RELEASE = 1024
_UNIT = Fraction(1, 1 << 53)  # u: the relative rounding error of round-to-nearest doubles
_TINY = Fraction(1, 1 << 900)  # the absolute error of subnormal roundings, times any k < 2^100

Sums = tuple[Fraction, Fraction, Fraction]  # (Σε, Σδ, Σρ)


def exact(value: Any) -> Fraction:
    """``value`` (int, float, numpy real or Fraction) as the exact rational it denotes."""
    if isinstance(value, numbers.Rational):
        return Fraction(value.numerator, value.denominator)
    return Fraction(float(value))  # a double (or float32) is converted exactly


def claimed_sum(terms: Iterable[tuple[Any, Any]]) -> Fraction:
    """Σ k·x over the (k, x) pairs, exactly."""
    return sum((exact(k) * exact(x) for k, x in terms), Fraction(0))


def capped(delta: Fraction) -> Fraction:
    """min(1, δ): a δ of 1 holds for every mechanism, so the cap stays an upper bound."""
    return min(Fraction(1), delta)


def up(value: Fraction) -> float:
    """The smallest double >= ``value`` (what a charge or state reports)."""
    return float_up(value)


def legacy_bound(value: float, releases: int) -> Fraction:
    """An upper bound of the exact sum that a value written before the exact sums stood for.

    It was computed from the claimed values by at most R = 1024·max(1, releases) roundings
    to nearest (:data:`LEGACY_ROUNDINGS_PER_RELEASE`) of non-negative sums and integer
    multiples.  In the normal range a rounding to nearest gives fl(v) >= v/(1 + u),
    u = 2^-53.  By induction over the operations, a value computed with r roundings is at
    least its exact value divided by (1 + u)^r: a sum of two such values, or an integer
    multiple of one, keeps the larger exponent before its own rounding adds one.  So the
    exact sum is at most (1 + u)^R <= 1 + 2Ru times the stored value (Ru <= 1).  Subnormal
    roundings err by at most 2^-1075 each, scaled by integer factors below 2^100: the
    absolute term 2^-900 covers them.  (A δ capped at 1 was replaced by 1, itself a bound.)

    Parameters
    ----------
    value : float
        The stored sum (ε, δ or ρ; >= 0).
    releases : int
        How many releases it composes.

    Returns
    -------
    Fraction
        value·(1 + 2Ru) + 2^-900, >= the exact sum it was computed from.
    """
    r = LEGACY_ROUNDINGS_PER_RELEASE * max(1, int(releases))
    return exact(value) * (1 + 2 * r * _UNIT) + _TINY


def bound(values: tuple[float, float, float], exact_sums: Sums | None, releases: int) -> Sums:
    """Exact upper bounds of the (Σε, Σδ, Σρ) a charge or state stands for: its exact sums
    (``exact_sums``), the values themselves (they were rounded up, or compose nothing), or
    else (written before the exact sums) their :func:`legacy_bound`."""
    if exact_sums is not None:
        return exact_sums
    if releases == 0:
        return exact(values[0]), exact(values[1]), exact(values[2])
    e, d, rho = (legacy_bound(v, releases) for v in values)
    return e, capped(d), rho


def reported(values: tuple[float, float, float], exact_sums: Sums | None,
             releases: int) -> tuple[float, float, float]:
    """The (Σε, Σδ, Σρ) as doubles never below the sums they stand for."""
    if exact_sums is not None or releases == 0:
        return values
    e, d, rho = bound(values, None, releases)
    return up(e), up(d), up(rho)


def compose_sums(state: Any, charge: Any, n: int) -> tuple[float, float, float, Sums | None]:
    """The (Σε, Σδ, Σρ) of a :class:`~.accountant.State` after ``n`` releases of a
    :class:`~.accountant.Charge`, as doubles rounded up, and the exact sums.

    Unless both sides were written before the exact sums: then rounded to nearest as they
    were, so that an old ledger's states still hash to what it recorded (their values are
    replaced by upper bounds when reported, or when a current charge joins them).
    """
    if state.sums is None and not charge.rounded_up:
        return (state.basic_epsilon + n * charge.basic_epsilon,
                min(1.0, state.basic_delta + n * charge.basic_delta),
                state.rho + n * charge.rho, None)
    (se, sd, sr), (ce, cd, cr) = state.sums_bound(), charge.sums_bound()
    sums = se + n * ce, capped(sd + n * cd), sr + n * cr
    return up(sums[0]), up(sums[1]), up(sums[2]), sums


def compose_curves(old: NDArray[np.float64], new: NDArray[np.float64], n: int, *,
                   legacy: bool, old_releases: int = 0) -> NDArray[np.float64]:
    """``old`` + ``n``·``new`` for Rényi curves (values >= 0, possibly +inf), never below the
    exact sum when neither operand is: n·new and the sum each rounded to nearest, then raised
    one unit in the last place (a correctly rounded result is within half a unit of the
    exact one).

    ``legacy``: both sides were written before the exact sums -- rounded to nearest as then,
    so an old ledger's state hashes still verify.  ``old_releases`` > 0: ``old`` was so
    composed (a state written before the exact sums that a current charge now joins); it is
    first multiplied by a double >= 1 + 2Ru (R as in :func:`legacy_bound`), raised one unit,
    which bounds the drift of its round-to-nearest sums.
    """
    if legacy:
        return old + n * new
    if n == 0:
        return old.copy()
    if old_releases > 0:
        r = LEGACY_ROUNDINGS_PER_RELEASE * old_releases
        old = np.nextafter(old * up(1 + 2 * r * _UNIT), np.inf)
    part = new if n == 1 else np.nextafter(n * new, np.inf)
    return np.nextafter(old + part, np.inf)
