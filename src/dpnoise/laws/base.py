"""The shared base of the output laws (the scipy.stats pattern: a family writes little).

Every ``mechanism.noise()`` returns a law with one interface -- ``pmf``/``logpmf`` (or
``pdf``/``logpdf``), ``cdf``, ``sf``, ``ppf``, ``mean``, ``var``, ``std``, ``mean_abs`` and
``interval`` -- so utility is computed, not estimated.  As in ``scipy.stats.rv_discrete``, a
family writes what is special about it and inherits the rest:

:class:`Law`
    Any univariate law.  A family writes ``cdf``, ``ppf`` and ``var``; it inherits
    ``sf = 1 − cdf``, ``std = √var`` and ``interval`` (the central interval from ``ppf``).
    :class:`DiscreteLaw` adds ``pmf``/``logpmf`` from each other (write one of the two).
:class:`TableLaw`
    A law on a finite sorted table of points with their probabilities (the count laws, the
    lattice Gaussian, the range-Laplace lattice, the clamped Laplace).  The family hands
    over the table (``points``, ``probs``) and inherits ``pmf``/``logpmf`` (exact lookup),
    ``cdf`` (cumulative sums), ``ppf`` (smallest point with cdf >= q), ``mean``, ``var``
    and ``mean_abs`` (exactly rounded sums, :func:`math.fsum`).  A symmetric family
    overrides ``mean`` with its centre.
:class:`LatticeLaw`
    A law on an unbounded (or very long) regular lattice ``center + (j + offset)·grid``
    whose table is never built.  The family writes ``logpmf`` and ``cdf`` in closed form
    (:class:`~dpnoise.laws.half_lattice.HalfLatticeLaw` does, from the magnitude law) and
    inherits ``ppf`` (vectorised bisection on the lattice index).

What does not use these bases, and why:

* The continuous ideal laws (:class:`~dpnoise.mechanisms.truncated.TLapDistribution`,
  :class:`~dpnoise.laws.staircase.StaircaseDensity`,
  :class:`~dpnoise.laws.range_laplace_law.TruncatedLaplaceLaw`) inherit only :class:`Law`
  (``std`` and ``interval``): their cdf, ppf and moments are closed forms (or incomplete-gamma
  sums) that a generic table or bisection would compute less accurately.
* The multivariate laws (``MultivariateNoise``, ``BoxStaircaseDensity``,
  ``L1StaircaseDensity``, ``PlanarLaplaceNoise``) are vector-valued: cdf, ppf and interval
  have no single meaning there, so they keep their own per-coordinate moments.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..params import check_quantiles


def check_level(level: float) -> float:
    """A coverage level in (0, 1), else :class:`~dpnoise.ParameterError`."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating, np.integer)):
        raise ParameterError(f"level must be in (0, 1), got {level!r}")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level!r}")
    return float(level)


class Law:
    """A univariate law.  Write ``cdf``, ``ppf``, ``var`` (and the density or mass)."""

    def cdf(self, y: ArrayLike) -> NDArray[np.float64]:  # pragma: no cover - abstract
        raise NotImplementedError

    def sf(self, y: ArrayLike) -> NDArray[np.float64]:
        return 1.0 - self.cdf(y)

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:  # pragma: no cover - abstract
        raise NotImplementedError

    def support_ends(self) -> tuple[float, float]:
        """The infimum and supremum of the support (what ``ppf(0)`` and ``ppf(1)`` return).

        As scipy.stats: -inf / +inf on a side where the law is unbounded (not where its
        float cdf happens to leave 0 or reach 1), else the extreme point of positive
        probability (or density).  A family with a bounded side overrides this.

        Returns
        -------
        tuple of float
            ``(low, high)``.
        """
        return -math.inf, math.inf

    def _with_ends(self, q: NDArray[np.float64], x: ArrayLike) -> NDArray[np.float64]:
        """The quantiles ``x`` at levels ``q``, with ``q = 0`` and ``q = 1`` set to the
        support's ends (:meth:`support_ends`)."""
        lo, hi = self.support_ends()
        x = np.asarray(x, dtype=np.float64)
        return np.where(q == 0, lo, np.where(q == 1, hi, x))

    def var(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def std(self) -> float:
        """The standard deviation ``sqrt(var())``.

        Returns
        -------
        float
            The standard deviation.
        """
        return math.sqrt(self.var())

    def interval(self, level: float) -> tuple[float, float]:
        """Central interval ``(ppf((1 − level)/2), ppf((1 + level)/2))``: at least ``level``
        of the mass for a discrete law, exactly ``level`` for a continuous one.

        Parameters
        ----------
        level : float
            The probability in (0, 1).

        Returns
        -------
        tuple of float
            ``(low, high)``.

        Raises
        ------
        ParameterError
            If ``level`` is not in (0, 1).
        """
        a = (1 - check_level(level)) / 2
        return float(self.ppf(a)), float(self.ppf(1 - a))

    def _repr_html_(self) -> str:
        """Notebook display: a chart of the law (binned from its exact cdf) and moments."""
        from ..views import html_of

        return html_of("law", self)


class DiscreteLaw(Law):
    """A law on a countable set of points.  Write one of ``pmf``/``logpmf``."""

    def pmf(self, y: ArrayLike) -> NDArray[np.float64]:
        return np.exp(self.logpmf(y))

    def logpmf(self, y: ArrayLike) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.log(self.pmf(y))


class TableLaw(DiscreteLaw):
    """A law on the sorted ``points`` with probabilities ``probs``.

    ``normalise=True`` divides by the total of ``probs`` (for a table cut from an infinite
    law); ``logprobs`` (optional) are the exact logs, used by ``logpmf`` when given;
    ``tails`` = (below, above) says on which side the table was cut from a law with
    unbounded support (there :meth:`support_ends`, ``ppf(0)`` or ``ppf(1)``, is infinite).
    """

    def __init__(self, points: ArrayLike, probs: ArrayLike, *, normalise: bool = False,
                 logprobs: ArrayLike | None = None,
                 tails: tuple[bool, bool] = (False, False)) -> None:
        self.tails = tails
        self.points = np.asarray(points, dtype=np.float64)
        self.probs = np.asarray(probs, dtype=np.float64)
        self._logprobs = None if logprobs is None else np.asarray(logprobs, dtype=np.float64)
        cum = np.cumsum(self.probs)
        nz = np.flatnonzero(self.probs > 0)
        self._top = int(nz[-1]) if nz.size else self.points.size - 1  # cdf is 1 from here
        self._total = float(cum[-1]) if normalise else 1.0
        if normalise:
            cum /= cum[-1]
        self._cum = cum

    def _lookup(self, y: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """Index of each y in the table and whether y is exactly that point."""
        y = np.asarray(y, dtype=np.float64)
        idx = np.clip(np.searchsorted(self.points, y), 0, self.points.size - 1)
        return idx, self.points[idx] == y

    def pmf(self, y: ArrayLike) -> NDArray[np.float64]:
        idx, hit = self._lookup(y)
        return np.where(hit, self.probs[idx], 0.0)

    def logpmf(self, y: ArrayLike) -> NDArray[np.float64]:
        if self._logprobs is None:
            return super().logpmf(y)
        idx, hit = self._lookup(y)
        return np.where(hit, self._logprobs[idx], -np.inf)

    def cdf(self, y: ArrayLike) -> NDArray[np.float64]:
        """Sum of the probabilities of the points <= y (1 from the last point of positive
        probability on, whatever the rounding of the sums; NaN at NaN)."""
        y = np.asarray(y, dtype=np.float64)
        k = np.searchsorted(self.points, y, side="right")  # NaN sorts past the last point
        out = np.where(k > 0, np.minimum(self._cum[np.maximum(k - 1, 0)], 1.0), 0.0)
        return np.where(np.isnan(y), np.nan, np.where(k > self._top, 1.0, out))

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        """Smallest point whose cdf reaches q (q shaded by 1e-15 against rounding in the sums);
        q = 0 and 1: the support's ends (:meth:`support_ends`)."""
        q = check_quantiles(q)
        k = np.searchsorted(self._cum, q * (1 - 1e-15), side="left")
        return self._with_ends(q, self.points[np.clip(k, 0, self.points.size - 1)])

    def support_ends(self) -> tuple[float, float]:
        """The lowest and highest point of positive probability; -inf / +inf on a side the
        table was cut from an unbounded law (``tails``).

        Returns
        -------
        tuple of float
            ``(low, high)``.
        """
        nz = np.flatnonzero(self.probs > 0)  # not empty: the probabilities sum to 1
        lo = -math.inf if self.tails[0] else float(self.points[nz[0]])
        hi = math.inf if self.tails[1] else float(self.points[nz[-1]])
        return lo, hi

    def _expect(self, values: NDArray[np.float64]) -> float:
        return math.fsum((self.probs * values).tolist()) / self._total

    def mean(self) -> float:
        return self._expect(self.points)

    def var(self) -> float:
        return self._expect((self.points - self.mean()) ** 2)

    def mean_abs(self, about: float | None = None) -> float:
        """E|Y − about|; about defaults to the mean (the scipy-like / harness convention)."""
        c = self.mean() if about is None else about
        return self._expect(np.abs(self.points - c))


class LatticeLaw(DiscreteLaw):
    """A law on the lattice ``center + (j + offset)·grid``, j an integer, never tabulated.

    The family writes ``logpmf``, ``cdf`` and (for a bounded law) ``support_ends``;
    ``ppf`` is the smallest lattice point with cdf >= q, by vectorised bisection on j within
    ``reach`` cells of the centre, and the support's ends at q = 0 and 1.
    """

    grid: float
    center: float
    offset: float = 0.0
    reach: int = 1 << 45

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        """Smallest lattice point y with cdf(y) >= q and cdf(y) > 0, by vectorised bisection on
        the cell index; at q = 0 and 1 the support's ends (:meth:`support_ends`: -inf / +inf
        for an unbounded law, not where the float cdf leaves 0 or reaches 1)."""
        q = np.asarray(q, dtype=np.float64)
        if np.any(np.isnan(q)) or np.any((q < 0) | (q > 1)):
            raise ParameterError("q must be in [0, 1]")
        lo = np.full(q.shape, -self.reach - 1, dtype=np.int64)
        hi = np.full(q.shape, self.reach, dtype=np.int64)
        while np.any(hi - lo > 1):
            mid = (lo + hi) // 2
            c = self.cdf(self.center + (mid + self.offset) * self.grid)
            ok = (c >= q) & (c > 0)
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        return self._with_ends(q, self.center + (hi + self.offset) * self.grid)
