"""Exact rational helpers: certified bounds of e^x and directed rounding of Fractions.

* :func:`exp_lower` returns a rational ``E_lo <= e^x`` (about 64 significant bits), so a
  pmf built from ``E_lo`` is exactly optimal for ``ε_lo = ln E_lo <= ε`` and every
  hockey-stick δ evaluated at ``E_lo`` is an upper bound of the δ at the true ``e^ε``
  (δ(E) = Σ (p − E q)^+ is nonincreasing in E).
* :func:`float_up` / :func:`float_down` convert a Fraction to the nearest double on the
  safe side, so a reported δ is never rounded down.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from ..errors import ParameterError

_BITS = 64


def exp_lower(x: float | Fraction) -> Fraction:
    """A rational E_lo with e^x·(1 − 2^-62) <= E_lo <= e^x (E_lo = 1 exactly for x = 0).

    ``x`` is taken exactly (a float is its binary value).  mpmath evaluates e^x with 64
    guard bits beyond what is kept, and one unit of the last kept place is subtracted,
    so the bound holds despite mpmath's own (sub-ulp) rounding.
    """
    xf = Fraction(x)
    if xf < 0:
        raise ParameterError(f"exp_lower needs x >= 0, got {x!r}")
    if xf == 0:
        return Fraction(1)
    with mpmath.workprec(_BITS + 64 + max(64, int(abs(xf) * 2) + 8)):
        v = mpmath.exp(mpmath.mpf(xf.numerator) / xf.denominator)
        e = int(mpmath.floor(mpmath.log(v, 2)))
        k = _BITS - e
        m = int(mpmath.floor(v * mpmath.mpf(2) ** k))
    return Fraction(m - 1, 1 << k) if k >= 0 else Fraction((m - 1) << (-k))


def exp_upper(x: float | Fraction) -> Fraction:
    """A rational E_hi >= e^x (mirror of :func:`exp_lower`)."""
    xf = Fraction(x)
    if xf == 0:
        return Fraction(1)
    lo = exp_lower(xf)
    return lo * (1 + Fraction(1, 1 << (_BITS - 4)))


def float_up(q: Fraction | int) -> float:
    """The smallest double >= q."""
    q = Fraction(q)
    f = float(q)
    if Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


def float_down(q: Fraction | int) -> float:
    """The largest double <= q."""
    q = Fraction(q)
    f = float(q)
    if Fraction(f) > q:
        f = math.nextafter(f, -math.inf)
    return f


def as_fraction(name: str, value: object, *, low: Fraction | None = None,
                high: Fraction | None = None, open_ends: bool = True) -> Fraction:
    """An exact rational from an int, Fraction, decimal string or float (its binary value)."""
    if isinstance(value, bool) or value is None:
        raise ParameterError(f"{name} must be a real number, got {value!r}")
    try:
        if isinstance(value, str):
            q = Fraction(value.strip())
        elif isinstance(value, (int, Fraction)):
            q = Fraction(value)
        else:
            f = float(value)  # type: ignore[arg-type]
            if not math.isfinite(f):
                raise ParameterError(f"{name} must be finite, got {value!r}")
            q = Fraction(f)
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        if isinstance(exc, ParameterError):
            raise
        raise ParameterError(f"{name} must be a real number, got {value!r}") from exc
    lo_bad = low is not None and (q <= low if open_ends else q < low)
    hi_bad = high is not None and (q >= high if open_ends else q > high)
    if lo_bad or hi_bad:
        lb = "(" if open_ends else "["
        rb = ")" if open_ends else "]"
        lo_s = "-inf" if low is None else str(low)
        hi_s = "inf" if high is None else str(high)
        raise ParameterError(f"{name} must be in {lb}{lo_s}, {hi_s}{rb}, got {value!r}")
    return q
