"""Integers beyond 2^53 given to a real-valued mechanism were rounded twice (to a float on
input, then to the grid): refused with a ParameterError naming the range, for Python ints
and integer arrays alike; up to 2^53 (exact as floats) they are released as before."""

from __future__ import annotations

import numpy as np
import pytest

import dpnoise as dp
from dpnoise import ParameterError, SeededRandom

BIG = (1 << 53) + 1


def _coarse_laplace() -> dp.Laplace:
    """A grid coarse enough that values past 2^53 are on-grid indices below 2^53."""
    return dp.Laplace(epsilon=1.0, sensitivity=2.0**20)


@pytest.mark.parametrize("value", [BIG, -BIG, 1 << 63, -(1 << 70), np.int64(BIG),
                                   np.array([0, BIG], dtype=np.int64),
                                   np.array([1 << 63], dtype=np.uint64), [3, -BIG]],
                         ids=["int", "neg-int", "2^63", "-2^70", "np.int64", "int64-array",
                              "uint64-array", "list"])
def test_integers_past_2_53_are_refused(value: object) -> None:
    with pytest.raises(ParameterError, match=r"2\^53"):
        _coarse_laplace().release(value, rng=SeededRandom(1))


def test_integers_up_to_2_53_are_released_as_their_floats() -> None:
    m = _coarse_laplace()
    ints = np.array([1 << 53, -(1 << 53), 7], dtype=np.int64)
    a = m.release(ints, rng=SeededRandom(4))
    b = m.release(ints.astype(np.float64), rng=SeededRandom(4))
    assert np.array_equal(a, b)
    assert m.release(1 << 53, rng=SeededRandom(4)) == m.release(2.0**53, rng=SeededRandom(4))
