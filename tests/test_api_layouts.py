"""The library API on every numpy dtype and memory layout of the same true values: the
compiled kernels read raw pointers, so a byte-swapped, strided, read-only or narrow-dtype
array must give what the native float64 / int64 array gives (same seed, same values), with
no warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpnoise
from dpnoise import SeededRandom

_VALUES = np.arange(2, 82, 2)  # 40 counts in [2, 80]: exact in every dtype below


def _layouts(base: np.ndarray) -> dict[str, np.ndarray]:
    strided = np.zeros(2 * base.size, dtype=">f8")
    strided[::2] = base
    readonly = base.astype(np.float64)
    readonly.flags.writeable = False
    out = {dt: base.astype(dt) for dt in (">f8", ">i8", ">u4", "f4", "f2", "i1", "u8", "g")}
    out.update({"byteswapped strided": strided[::2], "reversed twice": base[::-1][::-1],
                "read-only": readonly})
    return out


@pytest.mark.parametrize("make", [
    lambda: dpnoise.Laplace(epsilon=1.0, sensitivity=1.0),
    lambda: dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0.0, 1.0), (2.0, 99.0)]),
    lambda: dpnoise.Geometric(epsilon=1.0, upper=200),
    lambda: dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, lower=None),
    lambda: dpnoise.CountNoise(epsilon=1.0, D=10, eta="1/2"),
])
def test_every_dtype_and_layout_gives_the_native_arrays_values(make) -> None:
    m = make()
    ref = m.release(_VALUES.astype(np.float64), rng=SeededRandom(3))
    for name, arr in _layouts(_VALUES).items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = m.release(arr, rng=SeededRandom(3))
        assert np.array_equal(out, ref), name


_MECHANISMS = [
    lambda: dpnoise.Laplace(epsilon=1.0, sensitivity=1.0),
    lambda: dpnoise.Gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0),
    lambda: dpnoise.Geometric(epsilon=1.0, upper=200),
    lambda: dpnoise.MultivariateStaircase(epsilon=1.0, sensitivities=[1.0, 2.0]),
]


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("make", _MECHANISMS)
def test_a_numpy_matrix_is_read_as_its_array(make) -> None:
    """np.matrix stays 2-D under reshape(-1): it raised ValueError/TypeError in a sampler."""
    m = make()
    out = m.release(np.matrix([[6.0, 8.0]]), rng=SeededRandom(2))
    assert type(out) is np.ndarray
    assert np.array_equal(out, m.release(np.array([[6.0, 8.0]]), rng=SeededRandom(2)))


@pytest.mark.parametrize("make", _MECHANISMS)
def test_a_masked_entry_is_refused_not_released(make) -> None:
    """A masked entry's hidden value was released as if it were a true value."""
    m = make()
    with pytest.raises(dpnoise.ParameterError, match="masked"):
        m.release(np.ma.array([6.0, 8.0], mask=[False, True]), rng=SeededRandom(2))
    unmasked = m.release(np.ma.array([6.0, 8.0]), rng=SeededRandom(2))
    assert type(unmasked) is np.ndarray
    assert np.array_equal(unmasked, m.release(np.array([6.0, 8.0]), rng=SeededRandom(2)))
