"""The remembered monotone test gives every answer a direct evaluation gives: a bisection
asking it ends on the same float as one evaluating f each time, with fewer evaluations."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise.laws.gaussian import analytic_gaussian_sigma
from dpnoise.laws.monotone_test import DecreasingTest
from dpnoise.mechanisms import gaussian

_bisect = gaussian.bisect_above  # the search the mechanism runs


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 40.0), st.floats(1e-12, 0.5), st.floats(0.5, 2.0), st.floats(0.9, 1.1))
def test_answers_are_the_evaluations(slope: float, goal: float, scale: float,
                                     start: float) -> None:
    def f(x: float) -> float:  # decreasing: goal at x = scale
        return goal * math.exp(-slope * math.log(x / scale))

    test = DecreasingTest(f, goal)
    test.locate(scale * start)
    for x in [scale * (1 + k * 1e-9) for k in range(-50, 51, 7)] + [scale * 0.5, scale * 2]:
        assert test.above(x) == (f(x) > goal)
    plain = _bisect(lambda x: f(x) > goal, scale * 0.99, scale * 1.02)
    fresh = DecreasingTest(f, goal)
    fresh.locate(scale * start)
    assert _bisect(fresh.above, scale * 0.99, scale * 1.02) == plain


def test_flat_function_is_always_evaluated() -> None:
    calls = []

    def f(x: float) -> float:
        calls.append(x)
        return 1.0 if x < 1 else 0.5

    test = DecreasingTest(f, 0.75)
    test.value(0.5)
    test.value(2.0)
    assert test.above(0.25) and not test.above(4.0)  # slope ln2/ln4 = 0.5: inferred
    assert len(calls) == 2
    level = DecreasingTest(lambda x: 1.0 - 1e-16 * x, 0.5)
    level.value(1.0)
    level.value(2.0)  # both above: no bracket, nothing inferred
    before = level.evaluations
    level.above(0.5)
    assert level.evaluations == before + 1


def test_lattice_gaussian_search_lands_on_the_plain_bisections_sigma() -> None:
    for grid, steps, eps in ((1.0, 1, 0.01), (2.0**-7, 1283, 0.1), (2.0**-10, 1024, 5.0)):
        sigma = analytic_gaussian_sigma(eps, 1e-6, steps * grid)
        ideal = gaussian._IdealDelta(grid, steps, eps)
        goal = 1e-6 * (1 - 1e-7)
        lo, hi = sigma * (1 - 1e-3), sigma * (1 + 1e-3)
        test = DecreasingTest(ideal, goal)
        test.locate(sigma)
        assert _bisect(test.above, lo, hi) == _bisect(lambda s, f=ideal, g=goal: f(s) > g, lo, hi)
        assert test.evaluations <= 6
