"""Numbers as a statistics office prints them: to the precision their error bar supports.

A released value with a 95% error bar of half-width ``w`` is printed to the decimal place
of the second significant digit of ``w`` (the common rule of reporting an uncertainty to
two significant figures and the value to the same place; e.g. Taylor, "An Introduction to
Error Analysis", 2nd ed. 1997, §2.2), with thousands separators: ``3,007`` (± 31),
``49,000`` (± 11,000), ``46.57`` (± 0.92).  Digits beyond that place are noise.  The full
released value is kept in the downloadable csv.  Quantile levels are written in words:
"between the 47th and 53rd percentiles".
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

SIGNIFICANT = 6  # digits shown when a value has no error bar


def place_for(half_width: float) -> int | None:
    """The power of ten a value with error bar half-width ``half_width`` is rounded to:
    that of the second significant digit of ``half_width`` (None: no usable width)."""
    w = float(half_width)
    if not math.isfinite(w) or w <= 0:
        return None
    return math.floor(math.log10(w)) - 1


def at_place(x: float, place: int, rounding: str = ROUND_HALF_EVEN) -> str:
    """``x`` rounded to ``10**place`` with thousands separators (``-0`` printed as 0).
    Exact decimal arithmetic on the double's exact value (``rounding``: a
    :mod:`decimal` rounding mode, e.g. ``ROUND_FLOOR`` for a lower end)."""
    d = Decimal(float(x)).quantize(Decimal(1).scaleb(place), rounding=rounding)
    text = f"{d:,.{max(0, -place)}f}"
    return text[1:] if text.startswith("-") and d == 0 else text


def significant(x: float, digits: int = SIGNIFICANT) -> str:
    """``x`` to ``digits`` significant digits, thousands separators, no exponent for
    magnitudes below 10^15 (trailing zeros of the fraction dropped)."""
    v = float(x)
    if not math.isfinite(v):
        return str(v)
    if v == 0:
        return "0"
    if abs(v) >= 1e15 or abs(v) < 1e-6:
        return format(v, f".{digits}g")
    place = math.floor(math.log10(abs(v))) - digits + 1
    text = at_place(v, place)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def exact_text(x: float) -> str:
    """Every digit of the double ``x`` (its shortest round-trip form), with separators."""
    v = float(x)
    if not math.isfinite(v):
        return str(v)
    text = f"{Decimal(repr(v)):,f}"
    if text.endswith(".0"):
        text = text[:-2]
    return text[1:] if text.startswith("-") and v == 0 else text


def value_text(x: float, low: float | None = None, high: float | None = None,
               integer: bool = False) -> str:
    """A released value to the precision its error bar ``[low, high]`` supports."""
    place = None
    if low is not None and high is not None:
        place = place_for((float(high) - float(low)) / 2)
        if place is None:  # an error bar of width 0: every digit is supported
            return exact_text(x)
    if place is None:
        return at_place(x, 0) if integer else significant(x)
    return at_place(x, max(place, 0) if integer else place)


def interval_texts(low: float, high: float, integer: bool = False) -> tuple[str, str]:
    """The ends of an error bar, printed to the same place as its value and rounded
    OUTWARD (the printed bar contains the computed one: rounding never narrows it)."""
    place = place_for((float(high) - float(low)) / 2)
    if place is None:
        return (value_text(low, low, high, integer=integer),
                value_text(high, low, high, integer=integer))
    place = max(place, 0) if integer else place
    return at_place(low, place, ROUND_FLOOR), at_place(high, place, ROUND_CEILING)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``47th``, ``53rd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _percentile(level: float, *, up: bool) -> str:
    """A quantile level as a percentile, rounded outward (to 0.1 when narrower than 1)."""
    p = 100 * float(level)
    whole = math.ceil(p - 1e-9) if up else math.floor(p + 1e-9)
    return ordinal(int(whole))


def levels_in_words(low: float, high: float) -> str:
    """A quantile's level interval in words, rounded outward to whole percentiles:
    "between the 47th and 53rd percentiles" (or "at or below the 53rd percentile")."""
    lo, hi = float(low), float(high)
    if lo <= 0 and hi >= 1:
        return "anywhere in the data's range (the error bar spans every level)"
    if lo <= 0:
        return f"at or below the {_percentile(hi, up=True)} percentile"
    if hi >= 1:
        return f"at or above the {_percentile(lo, up=False)} percentile"
    a, b = _percentile(lo, up=False), _percentile(hi, up=True)
    if a == b:
        return f"at the {a} percentile"
    return f"between the {a} and {b} percentiles"


def level_words(num: int, den: int) -> str:
    """A quantile's target level: "median" for 1/2, else e.g. "90th percentile"."""
    if 2 * num == den:
        return "median"
    p = 100 * num / den
    return f"{ordinal(round(p))} percentile" if abs(p - round(p)) < 1e-9 else \
        f"{p:g}th percentile"


def ranks_in_words(rank_error: float, level_slack: float) -> str:
    """A quantile's rank bar in words, rounded outward: "rank within ±21 rows of q·n" (and
    "+ 0.0113 % of n" for the part that grows with the cell's rows ``n``)."""
    rows = math.ceil(float(rank_error) - 1e-9)
    text = f"rank within ±{rows:,} rows of q·n"
    if level_slack > 0:
        pct = 100 * float(level_slack)
        digits = max(1, 1 - math.floor(math.log10(pct)))  # two significant digits, up
        up = math.ceil(pct * 10 ** digits - 1e-9) / 10 ** digits
        text = f"rank within ±({rows:,} rows + {up:.{digits}f} % of n) of q·n"
    return text
