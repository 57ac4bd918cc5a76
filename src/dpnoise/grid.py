"""Grids (lattices) that continuous mechanisms release on: exact float64 arithmetic.

A grid step is a power of two ``L = 2^j``.  A true value x is mapped to the grid
index ``floor(x/L + 1/2)`` (round half up), computed exactly.  The division q = x/L is
exact for a power-of-two L (away from the subnormal range, where |q| < 1/2 and the index
is 0 either way), but the float sum q + 1/2 is NOT: for x = (1/2 − 2^-54)·L it rounds up
to 1 while the exact index is 0.  :func:`round_half_up` therefore splits q into i = floor(q)
and its fractional part f = q − i, which is exact (f keeps a subset of q's bits), and
returns i + [f >= 1/2].  Two
true values at distance <= Δ map to indices at distance <= ceil(Δ/L) (if Δ/L is an
integer, exactly Δ/L: rounding half up commutes with integer shifts), which is the
grid sensitivity every lattice mechanism calibrates to.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from .errors import ParameterError, PrecisionError

MAX_INDEX = 1 << 51


def check_grid(grid: float, *, name: str = "grid") -> float:
    """A grid step must be a power of two 2^j with -1000 < j < 1000."""
    from .params import as_real_scalar

    g = as_real_scalar(name, grid)  # numbers only (no str, bool, None, complex)
    if not (math.isfinite(g) and g > 0):
        raise ParameterError(f"{name} must be a positive power of two, got {grid!r}")
    mant, exp = math.frexp(g)
    if mant != 0.5 or not -1000 < exp - 1 < 1000:
        raise ParameterError(f"{name} must be a power of two 2^j with -1000 < j < 1000, got {g!r}")
    return g


def power_of_two_at_most(x: float) -> float:
    """Largest power of two <= x (x > 0, finite)."""
    _mant, exp = math.frexp(x)
    return math.ldexp(0.5, exp)


def grid_sensitivity(sensitivity: float, grid: float) -> int:
    """ceil(Δ / L) computed exactly: the largest index distance of neighbouring inputs."""
    q = sensitivity / grid
    if math.frexp(grid)[0] == 0.5 and 2.0**-1000 < q < 2.0**1000:
        return math.ceil(q)  # L a power of two: Δ/L is exact (a normal float)
    return math.ceil(Fraction(sensitivity) / Fraction(grid))


def round_half_up(q: NDArray[np.float64]) -> NDArray[np.float64]:
    """floor(q + 1/2) exactly for float64 ``q`` with |q| < 2^51 (see the module docstring)."""
    i = np.floor(q)
    return i + ((q - i) >= 0.5)


def round_half_up_inplace(q: NDArray[np.float64], work: NDArray[np.float64]) -> None:
    """:func:`round_half_up` in place for the samplers' chunk buffers (``work``: same size)."""
    np.floor(q, out=work)
    np.subtract(q, work, out=q)  # the fractional part: exact
    np.greater_equal(q, 0.5, out=q, casting="unsafe")  # 1.0 or 0.0
    np.add(work, q, out=q)


def index_of(x: float, grid: float) -> int:
    """Grid index floor(x/L + 1/2) of one float, exactly (|x/L| < 2^51)."""
    return int(round_half_up(np.array([x / grid]))[0])


def to_index(
    values: NDArray[np.float64], grid: float, *, name: str = "true_value"
) -> NDArray[np.int64]:
    """Grid index floor(x/L + 1/2) of each value, exactly (raises if |x/L| >= 2^51)."""
    scaled = values / grid
    if scaled.size and np.max(np.abs(scaled)) >= MAX_INDEX:
        raise PrecisionError(
            f"{name} is too large for the grid step {grid!r}: |{name}| must be < 2^51 * grid "
            f"= {MAX_INDEX * grid:g}; choose a coarser grid"
        )
    return round_half_up(scaled).astype(np.int64)


def check_representable(values: NDArray[np.float64], grid: float, *, name: str = "true_value",
                        bounds: tuple[float, float] | None = None) -> None:
    """Refuse (before any randomness) values whose grid index is not exact: |x/L| >= 2^51.
    ``bounds``: the values' (min, max) when the caller has them (no second pass)."""
    if not values.size:
        return
    lo, hi = (float(values.min()), float(values.max())) if bounds is None else bounds
    if max(-lo, hi) >= MAX_INDEX * grid:
        raise PrecisionError(
            f"{name} is too large for the grid step {grid!r}: |{name}| must be < 2^51 * grid "
            f"= {MAX_INDEX * grid:g}; choose a coarser grid"
        )


def from_half_index(half: NDArray[np.int64], grid: float) -> NDArray[np.float64]:
    """Values half * (L/2): exact while |half| < 2^53."""
    if half.size and np.max(np.abs(half)) >= (1 << 53):
        raise PrecisionError("release fell outside the exactly representable range of the grid")
    return half.astype(np.float64) * (grid / 2)
