"""Validation of privacy and query parameters: the one place that knows what is valid.

Each checker returns the value converted to ``float`` (or an array) and raises
:class:`~dpnoise.errors.ParameterError` naming the parameter and its valid range.
They never touch randomness, so a mechanism that validates first cannot leak or
spend anything on bad input.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ParameterError

LN2 = math.log(2.0)  # ln 2: defined here once, imported by every module that needs it


def _as_real(name: str, value: Any) -> float:
    if isinstance(value, bool) or value is None:
        raise ParameterError(f"{name} must be a real number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a real number, got {value!r}") from exc
    return x


def check_finite(name: str, value: Any) -> float:
    """A finite real number (no NaN, no infinity)."""
    x = _as_real(name, value)
    if not math.isfinite(x):
        raise ParameterError(f"{name} must be finite, got {x!r}")
    return x


def check_positive(name: str, value: Any, *, upper: float = math.inf) -> float:
    """A finite real number in (0, upper]."""
    x = _as_real(name, value)
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
    x = _as_real(name, delta)
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
    lo = _as_real(f"{name} lower bound", lower)
    hi = _as_real(f"{name} upper bound", upper)
    if math.isnan(lo) or math.isnan(hi):
        raise ParameterError(f"{name} bounds must not be NaN, got [{lo!r}, {hi!r}]")
    if not allow_infinite and (math.isinf(lo) or math.isinf(hi)):
        raise ParameterError(f"{name} bounds must be finite, got [{lo!r}, {hi!r}]")
    if not lo < hi:
        raise ParameterError(
            f"{name} must be a non-empty interval with lower < upper, got [{lo!r}, {hi!r}]"
        )
    return lo, hi


def check_values(
    name: str,
    values: ArrayLike,
    *,
    lower: float = -math.inf,
    upper: float = math.inf,
) -> NDArray[np.float64]:
    """True answers as a float64 array: all finite and inside [lower, upper]."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be real numbers, got {values!r}") from exc
    if arr.size:
        lo, hi = float(arr.min()), float(arr.max())  # NaN propagates through min/max
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ParameterError(f"{name} must be finite (no NaN or infinity)")
        if lo < lower or hi > upper:
            raise ParameterError(
                f"{name} must lie in the declared range [{lower:g}, {upper:g}], "
                f"got values in [{lo:g}, {hi:g}]"
            )
    return arr


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
    """``q`` as a float64 array; raise ParameterError if any entry is outside [0, 1].

    (NaN compares false both ways, so it is not rejected here.)
    """
    q = np.asarray(q, dtype=np.float64)
    if np.any((q < 0) | (q > 1)):
        raise ParameterError("q must be in [0, 1]")
    return q
