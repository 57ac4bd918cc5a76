"""RangeLaplace is not rebuilt on identical public parameters (an in-process cache keyed by
domain, sensitivity, epsilon, mode and grid), and the cache never mixes parameters."""

import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import ParameterError, RangeLaplace
from dpnoise.grid import grid_sensitivity
from dpnoise.mechanisms import range_laplace as rl


def test_identical_parameters_share_the_calibration_and_the_sampler():
    for dom in ((0, 100), (0, math.inf), [(0, 10), (20, 30)]):
        a = RangeLaplace(epsilon=0.5, sensitivity=2.0, domain=dom)
        b = RangeLaplace(epsilon=0.5, sensitivity=2.0, domain=dom)
        assert a.block == b.block and a.grid == b.grid and a.bound is b.bound
        assert (a._conv or a._union) is (b._conv or b._union)


def test_different_parameters_are_not_mixed():
    base = RangeLaplace(epsilon=0.5, sensitivity=2.0, domain=(0, 100))
    for other in (RangeLaplace(epsilon=0.5, sensitivity=2.0, domain=(0, 100), mode="metric"),
                  RangeLaplace(epsilon=0.6, sensitivity=2.0, domain=(0, 100)),
                  RangeLaplace(epsilon=0.5, sensitivity=3.0, domain=(0, 100)),
                  RangeLaplace(epsilon=0.5, sensitivity=2.0, domain=(0, 101)),
                  RangeLaplace(epsilon=0.5, sensitivity=2.0, domain=(0, 100), grid=2.0**-4)):
        assert other._conv is not base._conv
        fresh = dict(rl._BUILT)
        rl._BUILT.clear()
        try:
            rebuilt = RangeLaplace(epsilon=other.epsilon, sensitivity=other.sensitivity,
                                   domain=other.domain, mode=other.mode,
                                   grid=None if other.grid == base.grid else other.grid)
        finally:
            rl._BUILT.update(fresh)
        assert (rebuilt.block, rebuilt.grid, rebuilt.continuous_scale) == (
            other.block, other.grid, other.continuous_scale)


@pytest.mark.parametrize("bad", [True, np.bool_(True), Decimal(1), 1 + 0j, [1.0], np.array([1.0])])
def test_a_bad_grid_is_refused_even_when_its_equal_is_cached(bad):
    """The grid is checked before the cache is asked: True == 1.0 == 1+0j and Decimal(1)
    hash alike, so a cached grid=1.0 build must not let them through (and a list or array
    must not raise TypeError: unhashable)."""
    RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10), grid=1.0)
    with pytest.raises(ParameterError, match="grid"):
        RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10), grid=bad)


def test_the_cache_is_bounded():
    for k in range(rl._BUILT_MAX + 5):
        RangeLaplace(epsilon=1.0 + k / 64, sensitivity=1.0, domain=(0, 10))
    assert len(rl._BUILT) <= rl._BUILT_MAX


@settings(max_examples=200, deadline=None)
@given(sens=st.floats(1e-200, 1e200), k=st.integers(-300, 300))
def test_grid_sensitivity_is_exact(sens, k):
    from fractions import Fraction

    grid = 2.0**k
    assert grid_sensitivity(sens, grid) == math.ceil(Fraction(sens) / Fraction(grid))
