"""Domains: intervals, half-lines, unions (§7 edge cases)."""

import math
import warnings

import numpy as np
import pytest

from dpnoise import Domain, HalfLine, Interval, ParameterError, Union, as_domain

INF = math.inf


def test_interval_half_line_line_kinds():
    assert Interval(0, 1).kind == "interval"
    assert Interval(0, 1).width == 1
    assert HalfLine(lower=0).pieces == ((0.0, INF),)
    assert HalfLine(upper=2).pieces == ((-INF, 2.0),)
    assert HalfLine(lower=0).kind == "half-line"
    assert Interval(-INF, INF).kind == "line"
    assert Interval(3, 3).kind == "point"
    assert Union((0, 1), (2, 3)).kind == "bounded-union"
    assert Union((-INF, 0), (1, INF)).kind == "union"


def test_union_sorts_merges_and_drops_zero_length():
    d = Union((5, 6), (0, 1), (0.5, 2), (2, 3))
    assert d.pieces == ((0.0, 3.0), (5.0, 6.0))
    with pytest.warns(UserWarning, match="zero-length"):
        d = Union((0, 1), (4, 4), (2, 3))
    assert d.pieces == ((0.0, 1.0), (2.0, 3.0))
    assert Union([(0, 1), (2, 3)]).pieces == ((0.0, 1.0), (2.0, 3.0))


def test_contains_and_check_values():
    d = Union((0, 1), (2, INF))
    assert d.contains([0, 1, 1.5, 2, 1e300]).tolist() == [True, True, False, True, True]
    assert d.finite_endpoints == [0.0, 1.0, 2.0]
    np.testing.assert_array_equal(d.check_values([0.5, 3]), [0.5, 3])
    for bad in ([1.5], [np.nan], [np.inf], [-0.1]):
        with pytest.raises(ParameterError):
            d.check_values(bad)
    with pytest.raises(ParameterError, match="domain"):
        Interval(0, 1).check_values(1.0000001)


@pytest.mark.parametrize("make", [
    lambda: Interval(1, 0),
    lambda: Interval(np.nan, 1),
    lambda: Interval(INF, INF),
    lambda: Interval("a", 1),
    lambda: HalfLine(),
    lambda: HalfLine(lower=0, upper=1),
    lambda: HalfLine(lower=INF),
    lambda: Union(),
    lambda: Union((0, 1, 2)),
    lambda: Union((2, 1)),
    lambda: Union((1, 1), (2, 2)),
    lambda: Union((-INF, 0), (-INF, 5), (7, 8)) and Domain(((0, 1), (0.5, 2))),
    lambda: Domain(((0, INF), (5, 6))),
    lambda: as_domain("0..1"),
    lambda: as_domain(("0", "10")),  # float("0") read strings as numbers
    lambda: Interval(np.bool_(True), 2),
    lambda: Interval(0, 10**400),  # OverflowError
])
def test_invalid_domains_raise(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ParameterError):
            make()


def test_as_domain_forms():
    assert as_domain((0, 1)) == Interval(0, 1)
    assert as_domain([(0, 1), (2, 3)]) == Union((0, 1), (2, 3))
    d = Interval(0, 5)
    assert as_domain(d) is d
    assert str(Union((-INF, 0), (1, 2))) == "(-inf, 0] ∪ [1, 2]"
