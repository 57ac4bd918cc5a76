"""The lattice-Laplace kernel's grid index, computed for a whole chunk two values at a time
in doubles (kernels/block.c), is floor(x/L + 1/2) exactly as the numpy reference's: tested
where a double rounding could go wrong -- half-way points, the exact ends of the supported
range |x/L| < 2^51, signed zeros, odd lengths (the scalar tail)."""

from __future__ import annotations

import numpy as np
import pytest

from dpnoise.exact import geometric
from dpnoise.exact.geometric import BlockGeometric
from dpnoise.randomness import SeededRandom

from .helpers import kernel_and_reference

pytestmark = pytest.mark.skipif(geometric._block_kernel() is None, reason="kernels off")


def _hard_centres(grid: float, n: int) -> np.ndarray:
    top = 2.0**51
    rng = np.random.default_rng(7)
    idx = np.concatenate([
        np.nextafter(top, 0) - np.arange(40),            # just inside the range
        -(np.nextafter(top, 0) - np.arange(40)),
        top / 2 + np.arange(-20, 20) + 0.5,              # half-way points, large magnitude
        -(top / 2 + np.arange(-20, 20) + 0.5),
        np.arange(-20, 20) + 0.5,                         # half-way points near zero
        np.nextafter(np.arange(-20, 20) + 0.5, -np.inf),  # just below half-way
        np.nextafter(np.arange(-20, 20) + 0.5, np.inf),
        [0.0, -0.0, 5e-324, -5e-324, 0.49999999999999994, -0.5, 0.5],
        rng.uniform(-top, top, 400),
        rng.normal(0, 1e3, 400),
    ])
    x = idx * grid
    return np.resize(x, n)


@pytest.mark.parametrize("grid", [2.0**-30, 1.0, 2.0**12])
@pytest.mark.parametrize("n", [64, 1001, (1 << 14) + 3])
def test_block_kernel_grid_index_equals_reference(monkeypatch: pytest.MonkeyPatch, grid: float,
                                                  n: int) -> None:
    b = BlockGeometric(7)  # small steps: 2Z stays small next to 2c near 2^52
    x = _hard_centres(grid, n)
    fast, ref = kernel_and_reference(
        monkeypatch, geometric, "_block_kernel",
        lambda: b.signed_odd(SeededRandom(9), n, centre=x, grid=grid))
    np.testing.assert_array_equal(fast, ref)
