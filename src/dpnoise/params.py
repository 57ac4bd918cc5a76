"""Validation of privacy and query parameters: the one place that knows what is valid.

Each checker returns the value converted to ``float`` (or an array) and raises
:class:`~dpnoise.errors.ParameterError` naming the parameter and its valid range.
They never touch randomness, so a mechanism that validates first cannot leak or
spend anything on bad input.
"""

from __future__ import annotations

import ctypes
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ParameterError

LN2 = math.log(2.0)  # ln 2: defined here once, imported by every module that needs it


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_real_scalar(name: str, value: Any) -> float:
    """The one numeric-input rule: int, float, numpy real scalars and Fraction only.

    bool (and numpy bool), str, bytes, None, complex and anything else are refused -- a
    string "1" or True is never silently taken as 1.0.  A 0-d real numpy array counts as
    its scalar.  Integers or fractions too large for a float are refused too.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParameterError(
            f"{name} must be a real number (int, float or Fraction), got {_short(value)}")
    try:
        return float(value)
    except (OverflowError, TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a real number within the float range, "
                             f"got {_short(value)}") from exc


@dataclass(frozen=True)
class Interval:
    """A supported parameter range, e.g. ``Interval(1e-5, 1000)`` is [1e-05, 1000]."""

    lo: float
    hi: float
    lo_open: bool = False
    hi_open: bool = False

    def __contains__(self, x: float) -> bool:
        above = x > self.lo if self.lo_open else x >= self.lo
        below = x < self.hi if self.hi_open else x <= self.hi
        return bool(above and below)

    def __str__(self) -> str:
        return (f"{'(' if self.lo_open else '['}{self.lo:g}, "
                f"{self.hi:g}{')' if self.hi_open else ']'}")


# Sensitivities of the real-valued mechanisms: grid steps (2^-k times the sensitivity, k <= ~40)
# stay normal floats above 2^-1022, and outputs -- at most ~2^23 grid steps of noise beyond the
# true value even at the smallest epsilon, |index| < 2^53 enforced -- stay below 2^1024 (1e295
# ~ 2^980 leaves room for a custodian's sum of two values at bounds up to 2^970).
SENSITIVITY_RANGE = Interval(1e-280, 1e295)


def supported(ranges: Mapping[str, Interval]) -> Mapping[str, Interval]:
    """A mechanism's read-only ``SUPPORTED`` table: parameter name -> :class:`Interval`."""
    return MappingProxyType(dict(ranges))


def check_supported(owner: str, supported: Mapping[str, Interval], name: str, value: Any,
                    *, key: str | None = None) -> float:
    """``value`` as a float inside ``supported[key or name]``; else ParameterError.

    The message names the parameter, the mechanism and its supported range; nothing is
    computed before this check, so no bad value can make a constructor slow or crash.
    """
    x = as_real_scalar(name, value)
    rng = supported[key or name]
    if not (math.isfinite(x) and x in rng):
        raise ParameterError(
            f"{name} must be in {rng} for {owner} (its supported range), got {_short(value)}")
    return x


def check_true_scalar(name: str, value: Any) -> float:
    """ONE real true value for ``noise(true_value)``: an array is refused (the law of one
    release is for one true value; call noise() once per value)."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "__array__") and np.ndim(value)):
        raise ParameterError(
            f"{name} must be a single real number for noise() (the law of one release); "
            f"got an array of shape {np.shape(value)}: call noise() once per value")
    arr = check_values(name, value)
    return float(arr.reshape(-1)[0])


def check_finite(name: str, value: Any) -> float:
    """A finite real number (no NaN, no infinity)."""
    x = as_real_scalar(name, value)
    if not math.isfinite(x):
        raise ParameterError(f"{name} must be finite, got {x!r}")
    return x


def check_positive(name: str, value: Any, *, upper: float = math.inf) -> float:
    """A finite real number in (0, upper]."""
    x = as_real_scalar(name, value)
    if not (math.isfinite(x) and 0.0 < x <= upper):
        bound = "inf)" if math.isinf(upper) else f"{upper:g}]"
        raise ParameterError(f"{name} must be in (0, {bound}, got {x!r}")
    return x


def check_epsilon(epsilon: Any, *, name: str = "epsilon", upper: float = 1000.0) -> float:
    """Privacy parameter epsilon: finite, in (0, upper]; 1000 is far beyond any meaningful use."""
    return check_positive(name, epsilon, upper=upper)


def check_sensitivity(sensitivity: Any, *, name: str = "sensitivity") -> float:
    """Sensitivity: finite and > 0."""
    return check_positive(name, sensitivity)


def check_delta(
    delta: Any,
    *,
    name: str = "delta",
    upper: float = 1.0,
    upper_inclusive: bool = False,
    allow_zero: bool = False,
) -> float:
    """Privacy parameter delta in (0, upper) (or [0, ...) / ..., upper] as requested)."""
    x = as_real_scalar(name, delta)
    low_ok = x >= 0.0 if allow_zero else x > 0.0
    high_ok = x <= upper if upper_inclusive else x < upper
    if not (math.isfinite(x) and low_ok and high_ok):
        lo = "[0" if allow_zero else "(0"
        hi = f"{upper:g}]" if upper_inclusive else f"{upper:g})"
        raise ParameterError(f"{name} must be in {lo}, {hi}, got {x!r}")
    return x


def check_interval(
    lower: Any, upper: Any, *, name: str = "range", allow_infinite: bool = False
) -> tuple[float, float]:
    """An interval [lower, upper] with lower < upper (NaN never; infinite ends only if allowed)."""
    lo = as_real_scalar(f"{name} lower bound", lower)
    hi = as_real_scalar(f"{name} upper bound", upper)
    if math.isnan(lo) or math.isnan(hi):
        raise ParameterError(f"{name} bounds must not be NaN, got [{lo!r}, {hi!r}]")
    if not allow_infinite and (math.isinf(lo) or math.isinf(hi)):
        raise ParameterError(f"{name} bounds must be finite, got [{lo!r}, {hi!r}]")
    if not lo < hi:
        raise ParameterError(
            f"{name} must be a non-empty interval with lower < upper, got [{lo!r}, {hi!r}]"
        )
    return lo, hi


#: the allocator asked for a release's output (a name of its own, so that a test can make it
#: refuse)
_allocate = np.empty
#: from this many values on, :func:`real_array` asks for the output's memory first
RESERVE_MIN = 1 << 16


def output_buffer(n: int, dtype: Any = np.float64) -> NDArray[Any]:
    """An uninitialised array for the ``n`` values of a release's output, or a ParameterError
    naming ``n`` when the allocator refuses it.

    No size limit is chosen in advance (what fits depends on the machine and the moment):
    numpy's MemoryError -- or ValueError for a size past the address space -- becomes the
    ParameterError, raised where every release allocates its output, before any word is
    drawn.  Untouched pages of a large buffer cost nothing until they are written.
    """
    try:
        return _allocate(n, dtype=dtype)
    except (MemoryError, ValueError):
        gib = n * np.dtype(dtype).itemsize / 2**30
        raise ParameterError(f"the output of {n} values does not fit in memory ({gib:.3g} GiB "
                             f"could not be allocated): release them in smaller pieces"
                             ) from None


def reserve_output(n: int) -> None:
    """Refuse, before any work, ``n`` values whose float64 output the allocator would refuse
    (:func:`output_buffer`; the buffer asked for is given back at once)."""
    output_buffer(n)  # dropped at once


def as_real_array(name: str, values: Any) -> NDArray[np.float64]:
    """True values as float64: real numbers or arrays of them only.

    Refused with ParameterError: bool, str, bytes, None, complex and object values (also
    inside lists), numpy arrays of those dtypes, and ragged sequences, and integers past
    2^53 in magnitude (:func:`_check_exact_integers`).  A Fraction (or other real number)
    scalar is converted exactly as ``float()`` does.  An array whose output
    could not be allocated is refused before it is read (:func:`real_array`).
    """
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        _check_exact_integers(name, int(values), int(values))
    arr = real_array(name, values)
    if arr.dtype.kind in "iu" and arr.dtype.itemsize > 4 and arr.size:
        _check_exact_integers(name, int(arr.min()), int(arr.max()))
    return arr.astype(np.float64, copy=False)


#: integers up to this magnitude are exact as float64
EXACT_INTEGER = 1 << 53


def _check_exact_integers(name: str, lo: int, hi: int) -> None:
    """Refuse integer true values past 2^53 in magnitude for a real-valued mechanism.

    Such a value x is rounded twice: to the float fl(x) (an error up to ulp(x)/2, ulp(x) >= 2)
    and then to the grid.  Each rounding is monotone, but together they can move two
    neighbours' grid cells apart by one cell more than the rounding of exact values that the
    calibration accounts for (a tie of fl() lands on a cell boundary), and no proof covers
    that extra cell: the value is refused rather than released under a guarantee not
    shown to hold.  Up to 2^53 the conversion is exact and nothing changes.
    """
    if max(-lo, hi) > EXACT_INTEGER:
        raise ParameterError(
            f"{name} must be integers in [-2^53, 2^53] (exact as floats) for a real-valued "
            f"mechanism, got values in [{lo}, {hi}]: pass floats, or rescale")


def real_array(name: str, values: Any) -> NDArray[Any]:
    """Like :func:`as_real_array` but keeping an integer dtype (for counts).

    A numpy subclass is read as a plain array (a ``np.matrix`` keeps two dimensions under
    every reshape); a masked array with a masked entry is refused (that entry has no true
    value, and its hidden data would be released).  From :data:`RESERVE_MIN` values on, the
    memory of an output of as many float64 values is asked for before anything is read or
    converted (:func:`reserve_output`): a broadcast view of 2^40 zeros costs no memory
    itself but would be scanned for minutes before its output failed to allocate.
    """
    if isinstance(values, np.ma.MaskedArray):
        if np.ma.is_masked(values):
            raise ParameterError(f"{name} is a masked array with masked entries: fill or drop "
                                 f"them first (a masked entry has no true value)")
        values = np.ma.getdata(values)
    if isinstance(values, np.ndarray) and type(values) is not np.ndarray:
        values = values.view(np.ndarray)
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "iuf":
            raise ParameterError(f"{name} must be real numbers, got an array of dtype "
                                 f"{values.dtype}")
        if values.size >= RESERVE_MIN:
            reserve_output(values.size)
        return values
    if not (isinstance(values, (list, tuple)) or hasattr(values, "__array__")):
        x = as_real_scalar(name, values)
        if isinstance(values, (int, np.integer)) and abs(int(values)) < 1 << 63:
            return np.asarray(int(values), dtype=np.int64)
        return np.asarray(x, dtype=np.float64)
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged nesting
        raise ParameterError(f"{name} must be a real number or a rectangular array of real "
                             f"numbers (ragged sequences are refused)") from exc
    if arr.dtype.kind not in "iuf":
        raise ParameterError(f"{name} must be real numbers (no bool, str, bytes, None or "
                             f"complex entries), got dtype {arr.dtype}")
    if arr.size >= RESERVE_MIN:
        reserve_output(arr.size)
    return arr


def output_values(name: str, values: Any, *, booleans: bool = False) -> NDArray[Any]:
    """Values to test against a mechanism's output set, by the true values' rule
    (:func:`real_array`: a real number or a rectangular real array, an integer dtype kept
    so large integers compare exactly).  NaN and infinities are numbers here (a caller
    answers False for them, or True for an output that is NaN by design); bool is refused
    unless ``booleans`` (a mechanism whose release is a boolean keep mask)."""
    if booleans:
        if isinstance(values, (bool, np.bool_)):
            return np.asarray(values)
        if isinstance(values, (list, tuple, np.ndarray)):
            try:
                arr = np.asarray(values)
            except (TypeError, ValueError):  # ragged: real_array below names the rule
                arr = None
            if arr is not None and arr.dtype == np.bool_:
                return arr
    return real_array(name, values)


_BOUNDS_MIN = 1 << 12  # from this many float64 values on, one compiled pass (kernels/bounds.c)


@lru_cache(maxsize=1)
def _bounds_kernel() -> Any:
    from . import kernels

    vp = ctypes.c_void_p
    return kernels.function("dpk_bounds", [vp, ctypes.c_int64, vp], ctypes.c_int64)


def array_bounds(arr: NDArray[Any]) -> tuple[float, float]:
    """(min, max) of a non-empty real array, both NaN if an entry is NaN: one compiled pass
    over a large float64 array (``kernels/bounds.c``), else numpy's ``min()`` and ``max()``."""
    if arr.size >= _BOUNDS_MIN and arr.dtype == np.float64 and arr.flags.c_contiguous:
        fn = _bounds_kernel()
        if fn is not None:
            lohi = np.empty(2)
            found = fn(arr.ctypes.data, arr.size, lohi.ctypes.data)
            if found == 0:
                return float(lohi[0]), float(lohi[1])
            if found == 1:
                return math.nan, math.nan
    return float(arr.min()), float(arr.max())  # NaN propagates through min/max


def _bounds_by_chunks(arr: NDArray[Any]) -> tuple[float, float]:
    """:func:`array_bounds` of a large contiguous array by chunks, on the release's threads
    when it has several (:func:`dpnoise.parallel.chunk_map`); NaN if any chunk has one."""
    if not arr.flags.c_contiguous:
        return array_bounds(arr)
    from .parallel import chunk_map

    flat = arr.reshape(-1)
    parts = chunk_map(flat.size, lambda s, e: array_bounds(flat[s:e]))
    if any(math.isnan(v) for part in parts for v in part):
        return math.nan, math.nan
    return min(p[0] for p in parts), max(p[1] for p in parts)


def check_values(
    name: str,
    values: ArrayLike,
    *,
    lower: float = -math.inf,
    upper: float = math.inf,
) -> NDArray[np.float64]:
    """True answers as a float64 array: all finite and inside [lower, upper]."""
    return check_values_bounds(name, values, lower=lower, upper=upper)[0]


def check_values_bounds(
    name: str,
    values: ArrayLike,
    *,
    lower: float = -math.inf,
    upper: float = math.inf,
) -> tuple[NDArray[np.float64], float, float]:
    """:func:`check_values`, with the smallest and largest value it found (0.0, 0.0 for no
    values), so a caller's further range checks need no second pass over the array."""
    arr = as_real_array(name, values)
    lo = hi = 0.0
    if arr.size:
        lo, hi = _bounds_by_chunks(arr)  # NaN if any entry is NaN
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ParameterError(f"{name} must be finite (no NaN or infinity)")
        if lo < lower or hi > upper:
            raise ParameterError(
                f"{name} must lie in the declared range [{lower:g}, {upper:g}], "
                f"got values in [{lo:g}, {hi:g}]"
            )
    return arr, lo, hi


def check_int(name: str, value: Any, *, lower: int | None = None, upper: int | None = None) -> int:
    """An integer in [lower, upper] (either end optional)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ParameterError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if (lower is not None and v < lower) or (upper is not None and v > upper):
        lo = "-inf" if lower is None else str(lower)
        hi = "inf" if upper is None else str(upper)
        raise ParameterError(f"{name} must be an integer in [{lo}, {hi}], got {v}")
    return v


def check_quantiles(q: ArrayLike) -> NDArray[np.float64]:
    """``q`` as a float64 array; raise ParameterError if any entry is NaN or outside [0, 1]."""
    q = np.asarray(q, dtype=np.float64)
    if not np.all((q >= 0) & (q <= 1)):  # NaN fails both comparisons
        raise ParameterError("q must be in [0, 1]")
    return q
