"""Valid output sets of range-adherent mechanisms: intervals, half-lines, unions of intervals.

A :class:`Domain` is a finite, sorted list of disjoint closed pieces ``[l_1, r_1] < ... <
[l_K, r_K]`` where ``l_1`` may be ``-inf`` and ``r_K`` may be ``+inf``.
:func:`Interval`, :func:`HalfLine`, :func:`Union` and :func:`as_domain` build one; pieces that
overlap or touch are merged and zero-length pieces of a union are dropped with a warning
.  A single zero-width interval ``[a, a]`` is allowed: mechanisms release ``a``
deterministically.

References:
  * W. L. Croft, J.-R. Sack, W. Shi, "Differential Privacy via a Truncated and Normalized
    Laplace Mechanism", Journal of Computer Science and Technology 37(2):369-388, 2022,
    doi:10.1007/s11390-020-0193-z.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ParameterError
from .params import as_real_scalar

Piece = tuple[float, float]


def _real(name: str, v: Any) -> float:
    """A bound by the one numeric-input rule (:func:`dpnoise.params.as_real_scalar`: no str,
    bool, Decimal or complex; an int past the float range refused), NaN refused."""
    x = as_real_scalar(name, v)
    if math.isnan(x):
        raise ParameterError(f"{name} must not be NaN")
    return x


@dataclass(frozen=True)
class Domain:
    """Sorted disjoint closed pieces; ends may be infinite (use the factory functions).

    Parameters
    ----------
    pieces : tuple of (float, float)
        Sorted, disjoint closed pieces ``(lower, upper)``; only the first may start at -inf
        and only the last may end at +inf.

    Raises
    ------
    ParameterError
        If the pieces are empty, unsorted, overlapping or infinite where they may not be.
    """

    pieces: tuple[Piece, ...]

    def __post_init__(self) -> None:
        if not self.pieces:
            raise ParameterError("domain must not be empty")
        prev = -math.inf
        for i, (lo, hi) in enumerate(self.pieces):
            if math.isnan(lo) or math.isnan(hi) or lo > hi:
                raise ParameterError(f"domain piece {i} must satisfy lower <= upper, got "
                                     f"[{lo!r}, {hi!r}]")
            if i and not lo > prev:
                raise ParameterError("domain pieces must be sorted and disjoint")
            if (math.isinf(lo) and i > 0) or (math.isinf(hi) and i < len(self.pieces) - 1):
                raise ParameterError("only the first piece may start at -inf and only the last "
                                     "may end at +inf")
            if lo == hi and math.isinf(lo):
                raise ParameterError("a domain piece cannot be a single infinite point")
            prev = hi

    # ------------------------------------------------------------ shape
    @property
    def lower(self) -> float:
        """The smallest point (may be -inf)."""
        return self.pieces[0][0]

    @property
    def upper(self) -> float:
        """The largest point (may be +inf)."""
        return self.pieces[-1][1]

    @property
    def is_convex(self) -> bool:
        """One piece (an interval, a half-line or the real line)."""
        return len(self.pieces) == 1

    @property
    def is_degenerate(self) -> bool:
        """A single point [a, a]."""
        return len(self.pieces) == 1 and self.pieces[0][0] == self.pieces[0][1]

    @property
    def bounded_below(self) -> bool:
        """Whether the domain has a finite lower end."""
        return math.isfinite(self.lower)

    @property
    def bounded_above(self) -> bool:
        """Whether the domain has a finite upper end."""
        return math.isfinite(self.upper)

    @property
    def kind(self) -> str:
        """"point", "interval", "half-line", "line", "union" (finite gaps, both ends
        unbounded, the paper's class (b)) or "bounded-union" (class (c))."""
        if self.is_degenerate:
            return "point"
        if self.is_convex:
            n_inf = (not self.bounded_below) + (not self.bounded_above)
            return ("interval", "half-line", "line")[n_inf]
        if not self.bounded_below and not self.bounded_above:
            return "union"
        return "bounded-union"

    @property
    def width(self) -> float:
        """Upper minus lower end (inf if unbounded)."""
        return self.upper - self.lower

    @property
    def finite_endpoints(self) -> list[float]:
        """Every finite end of every piece, in order."""
        return [t for p in self.pieces for t in p if math.isfinite(t)]

    @property
    def min_piece_length(self) -> float:
        """The length of the shortest piece."""
        return min(hi - lo for lo, hi in self.pieces)

    def contains(self, x: ArrayLike) -> NDArray[np.bool_]:
        """Elementwise membership (closed pieces).

        Parameters
        ----------
        x : array_like of float
            Values.

        Returns
        -------
        numpy.ndarray of bool
            True where the value lies in a piece.
        """
        x = np.asarray(x, dtype=np.float64)
        out = np.zeros(x.shape, dtype=bool)
        for lo, hi in self.pieces:
            out |= (x >= lo) & (x <= hi)
        return out

    def check_values(self, values: ArrayLike, *, name: str = "true_value"
                     ) -> NDArray[np.float64]:
        """Finite float64 values that all lie in the domain (else ParameterError).

        Parameters
        ----------
        values : array_like of float
            True values.
        name : str, default "true_value"
            The parameter name used in the error message.

        Returns
        -------
        numpy.ndarray of float64
            The values as an array.

        Raises
        ------
        ParameterError
            If a value is not a finite real number or lies outside the domain.
        """
        from .params import as_real_array

        arr = as_real_array(name, values)  # numbers only: no bool, str, complex, ragged
        if not arr.size:
            return arr
        lo, hi = float(np.min(arr)), float(np.max(arr))  # NaN propagates into both
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ParameterError(f"{name} must be finite (no NaN or infinity)")
        if self.is_convex:
            if lo < self.lower or hi > self.upper:
                bad = lo if lo < self.lower else hi
                raise ParameterError(f"{name} must lie in the declared domain {self}, "
                                     f"got {bad!r}")
            return arr
        if not np.all(self.contains(arr)):
            bad = arr[~self.contains(arr)].reshape(-1)[0]
            raise ParameterError(f"{name} must lie in the declared domain {self}, got {bad!r}")
        return arr

    def __str__(self) -> str:
        def fmt(t: float) -> str:
            return "inf" if t == math.inf else "-inf" if t == -math.inf else f"{t:g}"

        return " ∪ ".join(
            ("(" if math.isinf(lo) else "[") + f"{fmt(lo)}, {fmt(hi)}" +
            (")" if math.isinf(hi) else "]") for lo, hi in self.pieces)


def _merge(pieces: Iterable[Piece], *, warn_empty: bool) -> tuple[Piece, ...]:
    ps = sorted(pieces)
    if not ps:
        raise ParameterError("domain must not be empty")
    kept = [p for p in ps if p[1] > p[0]]
    if len(kept) < len(ps):
        if not kept:
            if len({p for p in ps}) == 1:
                return (ps[0],)
            raise ParameterError("a union of several single points is not supported")
        if warn_empty:
            warnings.warn("zero-length pieces of the domain were dropped", stacklevel=3)
    out: list[list[float]] = []
    for lo, hi in kept:
        if out and lo <= out[-1][1]:  # overlapping or touching: merge
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((a, b) for a, b in out)


def Interval(lower: Any, upper: Any) -> Domain:  # noqa: N802 - reads like a type
    """The closed interval [lower, upper]; infinite ends make it a half-line or the line.

    Parameters
    ----------
    lower, upper : float
        The ends (may be infinite; lower <= upper).

    Returns
    -------
    Domain
        The domain.

    Raises
    ------
    ParameterError
        If an end is not a real number or the pieces are not ordered (lower <= upper).
    """
    lo, hi = _real("domain lower bound", lower), _real("domain upper bound", upper)
    if lo > hi:
        raise ParameterError(f"domain must satisfy lower <= upper, got [{lo!r}, {hi!r}]")
    if lo == hi and math.isinf(lo):
        raise ParameterError("domain cannot be a single infinite point")
    return Domain(((lo, hi),))


def HalfLine(lower: Any = None, upper: Any = None) -> Domain:  # noqa: N802
    """[lower, inf) (give ``lower``) or (-inf, upper] (give ``upper``).

    Parameters
    ----------
    lower : float or None, default None
        The finite lower end of ``[lower, inf)``.
    upper : float or None, default None
        The finite upper end of ``(-inf, upper]`` (give exactly one of the two).

    Returns
    -------
    Domain
        The domain.

    Raises
    ------
    ParameterError
        If an end is not a real number or the pieces are not ordered (lower <= upper).
    """
    if (lower is None) == (upper is None):
        raise ParameterError("HalfLine needs exactly one of lower= or upper=")
    if lower is not None:
        lo = _real("domain lower bound", lower)
        if math.isinf(lo):
            raise ParameterError("half-line end must be finite")
        return Domain(((lo, math.inf),))
    hi = _real("domain upper bound", upper)
    if math.isinf(hi):
        raise ParameterError("half-line end must be finite")
    return Domain(((-math.inf, hi),))


def Union(*pieces: Sequence[Any]) -> Domain:  # noqa: N802
    """Union of closed intervals (sorted and merged; zero-length pieces dropped).

    Parameters
    ----------
    *pieces : (float, float)
        Closed intervals ``(lower, upper)``, or one list of them.

    Returns
    -------
    Domain
        The domain.

    Raises
    ------
    ParameterError
        If an end is not a real number or the pieces are not ordered (lower <= upper).
    """
    if len(pieces) == 1 and pieces[0] and isinstance(pieces[0][0], (list, tuple)):
        pieces = tuple(pieces[0])
    parsed = []
    for i, p in enumerate(pieces):
        if len(p) != 2:
            raise ParameterError(f"domain piece {i} must be a pair (lower, upper), got {p!r}")
        lo, hi = _real(f"domain piece {i} lower", p[0]), _real(f"domain piece {i} upper", p[1])
        if lo > hi:
            raise ParameterError(f"domain piece {i} must satisfy lower <= upper, got "
                                 f"[{lo!r}, {hi!r}]")
        parsed.append((lo, hi))
    return Domain(_merge(parsed, warn_empty=True))


def as_domain(spec: Any) -> Domain:
    """A Domain from a Domain, a pair ``(lower, upper)`` or a list of pairs.

    Parameters
    ----------
    spec : Domain, (float, float) or list of (float, float)
        A domain, an interval's ends or a list of pieces.

    Returns
    -------
    Domain
        The domain.

    Raises
    ------
    ParameterError
        If an end is not a real number or the pieces are not ordered (lower <= upper).
    """
    if isinstance(spec, Domain):
        return spec
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and not isinstance(
            spec[0], (tuple, list)):
        return Interval(spec[0], spec[1])
    if isinstance(spec, (tuple, list)) and spec and all(isinstance(p, (tuple, list))
                                                          for p in spec):
        return Union(*spec)
    raise ParameterError(
        "domain must be a Domain, a pair (lower, upper) or a list of pairs, got "
        f"{spec!r}")
