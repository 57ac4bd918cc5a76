"""Closed-form tail probabilities of RangeLaplace (ConvexSampler.tails) against the
tabulated exact law, and the error bars they produce against the table-based ones."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpnoise import ParameterError, RangeLaplace, SeededRandom, Union
from dpnoise.session.intervals import _tails, component_interval

DOMAINS = {
    "interval": (0.0, 10.0),
    "three-cells": (0.0, 0.75),
    "half-line": (0.0, math.inf),
    "neg-half-line": (-math.inf, 3.0),
    "line": (-math.inf, math.inf),
}


def _table_tails(m: RangeLaplace, t: float, y: float) -> tuple[float, float]:
    law = m.noise(t)
    return float(law.cdf(y)), float(law.sf(y)) + float(law.pmf(y))


@pytest.mark.parametrize("name", sorted(DOMAINS))
@pytest.mark.parametrize("eps,grid", [(1.0, 0.25), (0.3, 0.125), (2.0, 0.5)])
def test_closed_form_tails_match_table(name: str, eps: float, grid: float) -> None:
    d = DOMAINS[name]
    m = RangeLaplace(epsilon=eps, sensitivity=1.0, domain=d, grid=grid)
    lo = d[0] if math.isfinite(d[0]) else -20.0
    hi = d[1] if math.isfinite(d[1]) else 20.0
    for t in np.linspace(lo, hi, 5):
        law = m.noise(float(t))
        p = law.points
        ys = np.concatenate([p[:4], p[-4:], p[::max(1, p.size // 25)],
                             [lo - 2.5 * grid, hi + 2.5 * grid, t, t + grid / 3]])
        for y in ys.tolist():
            got = m.tail_probabilities(float(t), y)
            want = _table_tails(m, float(t), y)
            assert got == pytest.approx(want, abs=1e-12), (t, y)


def test_union_falls_back_to_table() -> None:
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=Union((0.0, 2.0), (5.0, 6.0)),
                     grid=0.25)
    for t, y in [(1.0, 0.125), (1.0, 5.375), (5.5, 1.875), (0.0, 6.125)]:
        assert m.tail_probabilities(t, y) == _table_tails(m, t, y)


def test_tail_probabilities_validate_true_value() -> None:
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0.0, 1.0), grid=0.25)
    with pytest.raises(ParameterError, match="true_value"):
        m.tail_probabilities(5.0, 0.125)


class _TableOnly(RangeLaplace):
    """The same mechanism with the closed form switched off: error bars from the table."""

    tail_probabilities = None  # type: ignore[assignment]


@pytest.mark.parametrize("domain,integer", [((0.0, 10.0), False), ((0.0, 40.0), True),
                                            ((-5.0, 5.0), False)])
def test_error_bars_unchanged(domain: tuple[float, float], integer: bool) -> None:
    kw = dict(epsilon=0.8, sensitivity=1.0, domain=domain, grid=0.25)
    fast, slow = RangeLaplace(**kw), _TableOnly(**kw)
    target = SimpleNamespace(lower=domain[0], upper=domain[1], integer=integer)
    y = np.asarray(fast.release(np.array([domain[0], domain[0] + 3.0, domain[1] - 0.5]),
                                  rng=SeededRandom(3)))
    _tails.cache_clear()
    a = component_interval(SimpleNamespace(target=target, mechanism=fast), y, 0.1)
    b = component_interval(SimpleNamespace(target=target, mechanism=slow), y, 0.1)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert np.all(a[0] <= a[1])


def test_error_bars_on_half_lines_and_the_line() -> None:
    """An unbounded side is searched within 80 noise scales of the output (the tail beyond
    is < e^-80): the interval is finite, contains the true value at the usual confidence,
    and equals the one found on a bounded domain far wider than the noise."""
    from types import SimpleNamespace

    y = np.array([3.0, 40.0])
    for dom in ((0.0, math.inf), (-math.inf, 100.0), (-math.inf, math.inf)):
        m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=dom)
        plan = SimpleNamespace(mechanism=m, target=SimpleNamespace(
            lower=dom[0], upper=dom[1], integer=False))
        low, high = component_interval(plan, y, 0.05)
        assert np.all(np.isfinite(low)) and np.all(np.isfinite(high))
        assert np.all(low < y) and np.all(y < high)
        assert np.all(high - low < 20 * m.scale)
