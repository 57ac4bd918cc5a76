"""The one-pass bounds of the input check (kernels/bounds.c) equal numpy's min() and max(), and
find a NaN or an infinity wherever it sits (vector body, its second half, the scalar tail)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnoise.params import _bounds_kernel, array_bounds, check_values

pytestmark = pytest.mark.skipif(_bounds_kernel() is None, reason="kernels off")


@pytest.mark.parametrize("n", [4096, 4103, 10**4 + 5])
def test_bounds_equal_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.normal(0, 1e3, n)
    for where in (0, 7, 8, 15, n // 2, n - 1):
        y = x.copy()
        y[where] = -1e300
        assert array_bounds(y) == (float(y.min()), float(y.max()))
        y[(where + 3) % n] = 1e300
        assert array_bounds(y) == (float(y.min()), float(y.max()))
        for bad in (math.nan, math.inf, -math.inf):
            z = x.copy()
            z[where] = bad
            lo, hi = array_bounds(z)
            assert not (math.isfinite(lo) and math.isfinite(hi)), (where, bad)
            with pytest.raises(ValueError, match="finite"):
                check_values("true_value", z)
