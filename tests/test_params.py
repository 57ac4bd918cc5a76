"""Validation helpers: every message names the parameter and the valid range."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnoise import ParameterError
from dpnoise.params import (
    check_delta,
    check_epsilon,
    check_int,
    check_interval,
    check_sensitivity,
    check_values,
)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, None, "x", True, 1001])
def test_epsilon(bad: object) -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        check_epsilon(bad)


def test_epsilon_ok() -> None:
    assert check_epsilon(0.5) == 0.5
    assert check_epsilon(np.float32(2)) == 2.0


@pytest.mark.parametrize("bad", [0, -0.1, 1, 1.5, math.nan])
def test_delta(bad: float) -> None:
    with pytest.raises(ParameterError, match=r"delta must be in \(0, 1\)"):
        check_delta(bad)


def test_delta_variants() -> None:
    assert check_delta(0.0, allow_zero=True) == 0.0
    with pytest.raises(ParameterError, match=r"\(0, 0.5\)"):
        check_delta(0.5, upper=0.5)
    assert check_delta(0.5, upper=0.5, upper_inclusive=True) == 0.5


def test_sensitivity() -> None:
    with pytest.raises(ParameterError, match="sensitivity"):
        check_sensitivity(0)


def test_interval() -> None:
    assert check_interval(0, 1) == (0.0, 1.0)
    for lo, hi in [(1, 1), (2, 1), (math.nan, 1), (0, math.inf)]:
        with pytest.raises(ParameterError, match="range"):
            check_interval(lo, hi)
    assert check_interval(0, math.inf, allow_infinite=True) == (0.0, math.inf)


def test_values() -> None:
    np.testing.assert_array_equal(check_values("x", [1, 2]), [1.0, 2.0])
    with pytest.raises(ParameterError, match=r"x must lie in the declared range \[0, 1\]"):
        check_values("x", [0.5, 2], lower=0, upper=1)
    with pytest.raises(ParameterError, match="finite"):
        check_values("x", [math.nan])
    with pytest.raises(ParameterError, match="real"):
        check_values("x", ["a"])


def test_int() -> None:
    assert check_int("n", 3.0) == 3
    with pytest.raises(ParameterError, match=r"n must be an integer in \[1, 5\]"):
        check_int("n", 9, lower=1, upper=5)
    with pytest.raises(ParameterError):
        check_int("n", 2.5)
