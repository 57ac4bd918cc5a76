"""ppf(0) and ppf(1) are the infimum and supremum of the law's support, as in scipy.stats:
-inf / +inf on an unbounded side (they were where the float cdf leaves 0 or reaches 1,
e.g. -744 for a unit Laplace), the extreme point of positive probability (or density) on
a bounded side (the Gaussian lattice's and a bounded count table's ppf(0) was a point of
probability 0)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpnoise as dp
from dpnoise.laws.range_laplace_law import TruncatedLaplaceLaw
from dpnoise.mechanisms import registry

INF = math.inf


def _registered(name: str) -> Any:
    entry = registry.entries(None)[name]
    return entry.build(entry.example)


#: name -> (the law, whether its support is unbounded below, above)
LAWS: dict[str, tuple[Callable[[], Any], bool, bool]] = {
    "laplace": (lambda: dp.Laplace(epsilon=1.0, sensitivity=1.0).noise(3.25), True, True),
    "staircase": (lambda: dp.Staircase(epsilon=1.0, sensitivity=1.0).noise(), True, True),
    "staircase-ideal": (lambda: dp.Staircase(epsilon=1.0, sensitivity=1.0).ideal, True, True),
    "geometric": (lambda: dp.Geometric(epsilon=1.0, lower=None).noise(0), True, True),
    "geometric-clamped": (lambda: dp.Geometric(epsilon=1.0).noise(4), False, True),
    # the sampled table is all of the law; the exact sampler's law is unbounded
    "discrete-gaussian-table": (lambda: dp.DiscreteGaussian(epsilon=1.0, delta=1e-6).noise(),
                                False, False),
    "discrete-gaussian-cks": (lambda: dp.DiscreteGaussian(
        epsilon=1.0, delta=1e-6, sampler="cks", lower=None).noise(7), True, True),
    "gaussian": (lambda: dp.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0).noise(10.0),
                 False, False),
    "truncated": (lambda: dp.TruncatedLaplace(epsilon=1.0, delta=1e-6,
                                              sensitivity=1.0).noise(2.5), False, False),
    "truncated-ideal": (lambda: dp.TLapDistribution(1.0, 1e-6), False, False),
    "count-noise": (lambda: _registered("count-noise").noise(), False, False),
    "clamped": (lambda: dp.ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0,
                                          upper=10.0).noise(5.0), False, False),
    "range-interval": (lambda: dp.RangeLaplace(epsilon=1.0, sensitivity=1.0,
                                               domain=(0.0, 10.0)).noise(9.5), False, False),
    "range-half-line": (lambda: dp.RangeLaplace(epsilon=1.0, sensitivity=1.0,
                                                domain=(0.0, INF)).noise(0.75), False, True),
    "half-line-law": (lambda: TruncatedLaplaceLaw(((-INF, 0.0),), -1.0, 1.0), True, False),
    "interval-law": (lambda: TruncatedLaplaceLaw(((0.0, 3.0),), 1.0, 1.0), False, False),
}


def _law(name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LAWS[name][0]()


@pytest.mark.parametrize("name", sorted(LAWS))
def test_ppf_at_0_and_1_are_the_support_ends(name: str) -> None:
    law, (_, open_below, open_above) = _law(name), LAWS[name]
    lo, hi = float(law.ppf(0.0)), float(law.ppf(1.0))
    both = np.asarray(law.ppf(np.array([1.0, 0.3, 0.0])))
    assert both[0] == hi and both[2] == lo and lo < float(both[1]) < hi  # alone or together
    assert (lo == -INF) == open_below and (hi == INF) == open_above, (lo, hi)
    discrete = hasattr(law, "pmf")
    if not open_below:  # nothing below the lowest point, and that point is possible
        assert float(law.cdf(np.nextafter(lo, -INF))) == 0
        assert float(law.pmf(lo) if discrete else law.cdf(lo + 1e-9 * (1 + abs(lo)))) > 0
    if not open_above:
        assert float(law.cdf(hi)) == 1
        assert float(law.pmf(hi) if discrete else law.sf(hi - 1e-9 * (1 + abs(hi)))) > 0


@pytest.mark.parametrize("name", ["laplace", "truncated", "gaussian", "range-half-line"])
def test_the_interval_is_unchanged_inside(name: str) -> None:
    """Only the two ends moved: a central interval is still finite points of the law."""
    lo, hi = _law(name).interval(0.95)
    assert math.isfinite(lo) and math.isfinite(hi) and lo < hi


def test_the_ends_of_a_continuous_law_are_exact() -> None:
    """Bisection stopped a few ulps inside (2.9999999999999982 for an end at 3)."""
    assert TruncatedLaplaceLaw(((0.0, 3.0),), 1.0, 1.0).ppf(np.array([0.0, 1.0])).tolist() \
        == [0.0, 3.0]
    assert float(TruncatedLaplaceLaw(((-INF, 0.0),), -1.0, 1.0).ppf(1.0)) == 0.0
    t = dp.TLapDistribution(1.0, 1e-6)
    assert t.ppf(np.array([0.0, 1.0])).tolist() == [-t.A, t.A]
