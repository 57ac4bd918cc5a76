"""Count noise's exact δ in integers over one common denominator is the same Fraction as the
rational computation it replaces (each term normalised), for pmfs given as Fractions or as
integer numerators over a denominator."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise.laws import count_noise as cf


def _rational_one_way(p: list[Fraction], E: Fraction, shift: int) -> Fraction:
    n, tot = len(p), Fraction(0)
    for y in range(min(0, shift), n + max(0, shift)):
        a = p[y] if 0 <= y < n else 0
        b = p[y - shift] if 0 <= y - shift < n else 0
        if a - E * b > 0:
            tot += a - E * b
    return tot


_fracs = st.fractions(min_value=0, max_value=1, max_denominator=10**12)


@settings(max_examples=25, deadline=None)
@given(st.lists(_fracs, min_size=1, max_size=8),
       st.fractions(min_value=1, max_value=50, max_denominator=10**9))
def test_hockey_delta_is_the_rational_computation(p: list[Fraction], E: Fraction) -> None:
    want = max(_rational_one_way(p, E, 1), _rational_one_way(p, E, -1))
    assert cf.hockey_delta(p, E) == want
    assert cf.exact_sum(p) == sum(p, Fraction(0))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**64), min_size=1, max_size=12),
       st.fractions(min_value=1, max_value=50, max_denominator=10**9))
def test_hockey_delta_of_numerators(w: list[int], E: Fraction) -> None:
    p = [Fraction(x, 2**64) for x in w]
    want = max(_rational_one_way(p, E, 1), _rational_one_way(p, E, -1))
    assert cf.hockey_delta(w, E, 2**64) == want
