"""The exact law of a symmetric release on the half-offset grid, shared by lattice mechanisms.

A lattice mechanism releases ``c·L + Z·L`` where c is the exact grid index of the true value
and ``Z = ±(K + 1/2)`` with a fair sign and a magnitude K >= 0 drawn exactly.  Given the
magnitude law (ln P(K = k), P(K >= k) and the half-moments E[K + 1/2], E[(K + 1/2)²]),
:class:`HalfLatticeLaw` provides the scipy.stats-like interface: for u = (y − c)/L,

    P(Y = y)  = P(K = |u| − 1/2) / 2                  (u ∈ ℤ + 1/2, else 0)
    P(Y <= y) = 1 − P(K >= ⌊u − 1/2⌋ + 1)/2           (u >= 0)
              = P(K >= ⌈−u − 1/2⌉)/2                  (u < 0)

with mean c, E|Y − c| = L·E[K + 1/2] and Var Y = L²·E[(K + 1/2)²].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..params import LN2
from .base import LatticeLaw

_HALF_INTEGERS_END = 2.0**52  # |u| from here on: no float is a half-integer
_CELLS_END = 2.0**62  # cdf arguments clipped here (cell indices stay inside int64)


class MagnitudeLaw(Protocol):
    """The exact law of K >= 0."""

    def logpmf(self, k: ArrayLike) -> NDArray[np.float64]:
        """ln P(K = k)."""
        ...

    def sf(self, k: ArrayLike) -> NDArray[np.float64]:
        """P(K >= k)."""
        ...

    def half_moments(self) -> tuple[float, float]:
        """(E[K + 1/2], E[(K + 1/2)²])."""
        ...


def half_lattice_logpmf(
    magnitude: MagnitudeLaw,
) -> Callable[[NDArray[np.int64]], NDArray[np.float64]]:
    """ln P(Z = z + 1/2) by lattice index z, for the verifier's lattice models.

    The fair sign splits P(K = k) between z = k and z = −k − 1, so K = z for z >= 0 and
    K = −z − 1 below.
    """
    return lambda z: magnitude.logpmf(np.where(z >= 0, z, -z - 1)) - LN2


class HalfLatticeLaw(LatticeLaw):
    """Law of c + Z·L, Z = ±(K + 1/2) (scipy-like: pmf, cdf, ppf, moments, interval).

    Writes logpmf, cdf, sf and the moments from the magnitude law; inherits pmf, std,
    interval and ppf (bisection on the half-offset lattice) from
    :class:`~dpnoise.laws.base.LatticeLaw`.  ``support_max`` is the largest possible K
    (None: unbounded); it bounds the ppf search.
    """

    offset = 0.5

    def __init__(self, magnitude: MagnitudeLaw, grid: float, center: float = 0.0,
                 support_max: int | None = None) -> None:
        self.magnitude = magnitude
        self.grid = grid
        self.center = center
        self.support_max = support_max
        if support_max is not None:
            self.reach = support_max + 1

    def support_ends(self) -> tuple[float, float]:
        """c ∓ (K_max + 1/2)·L for a bounded magnitude, else (-inf, +inf).

        Returns
        -------
        tuple of float
            ``(low, high)``.
        """
        if self.support_max is None:
            return -math.inf, math.inf
        reach = (self.support_max + 0.5) * self.grid
        return self.center - reach, self.center + reach

    def _cells(self, y: ArrayLike) -> NDArray[np.float64]:
        return (np.asarray(y, dtype=np.float64) - self.center) / self.grid

    def logpmf(self, y: ArrayLike) -> NDArray[np.float64]:
        u = self._cells(y)
        # no half-integer reaches 2^52 in magnitude (there floor(u) + 0.5 rounds back to u)
        on_lattice = (np.floor(u) + 0.5 == u) & (np.abs(u) < _HALF_INTEGERS_END)
        k = np.floor(np.abs(np.where(on_lattice, u, 0.5))).astype(np.int64)
        return np.where(on_lattice, self.magnitude.logpmf(k) - LN2, -np.inf)

    def _tail_indices(self, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.bool_],
                                                    NDArray[np.int64], NDArray[np.int64]]:
        """(u, isnan(u), first k with k + 1/2 > u, first k with k + 1/2 >= −u) for the cdf
        and sf; u clipped to keep indices inside int64 (+-inf and |u| >= 2^62 included: no
        supported law has mass there; for a bounded K, small: the law is flat out there)."""
        u = self._cells(y)
        nan = np.isnan(u)
        end = _CELLS_END if self.support_max is None else self.support_max + 2.0
        u = np.clip(np.where(nan, 0.0, u), -end, end)
        kpos = np.floor(u - 0.5).astype(np.int64) + 1
        kneg = np.ceil(-u - 0.5).astype(np.int64)
        return u, nan, kpos, kneg

    def cdf(self, y: ArrayLike) -> NDArray[np.float64]:
        u, nan, kpos, kneg = self._tail_indices(y)
        out = np.where(u >= 0, 1.0 - 0.5 * self.magnitude.sf(kpos),
                       0.5 * self.magnitude.sf(kneg))
        return np.where(nan, np.nan, out)

    def sf(self, y: ArrayLike) -> NDArray[np.float64]:
        """P(Y > y), from the magnitude's tail directly (1 − cdf would lose every digit of
        an upper tail below ~1e-16 to cancellation)."""
        u, nan, kpos, kneg = self._tail_indices(y)
        out = np.where(u >= 0, 0.5 * self.magnitude.sf(kpos),
                       1.0 - 0.5 * self.magnitude.sf(kneg))
        return np.where(nan, np.nan, out)

    def mean(self) -> float:
        return self.center

    def var(self) -> float:
        return self.grid * self.grid * self.magnitude.half_moments()[1]  # inf past 2^1024

    def std(self) -> float:
        """L·sqrt(E[(K + 1/2)^2]): finite whenever the scale is, even where var is not."""
        return self.grid * math.sqrt(self.magnitude.half_moments()[1])

    def mean_abs(self) -> float:
        """E|Y − c| = L·E[K + 1/2]."""
        return self.grid * self.magnitude.half_moments()[0]
