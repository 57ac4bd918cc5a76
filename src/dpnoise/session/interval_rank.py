"""The custodian's quantiles at the data's resolution: one level
(:class:`~dpnoise.mechanisms.interval_quantile.IntervalQuantile`) or several in one release
(:class:`~dpnoise.mechanisms.multi_quantile.MultiQuantile`), per public cell.

The lattice.  A value enters as the exact sums' fixed-point integer ``q = floor(clamp(x) ·
2^s)`` (:mod:`dpnoise.session.fixed_point`), then is snapped UP onto the public lattice
``lo_q + j·2^p`` (``j = 0..N``, ``N = (hi_q - lo_q) >> p``, the finest power of two ``2^p``
with at most ``2^24 + 1`` points; :func:`~dpnoise.session.fixed_point.fine_quantile_grid`),
the last point taking the rows above it: a fixed function of one row.  The engine returns
each cell's distinct lattice indices and their row counts
(:class:`~dpnoise.session.buckets.SparseBuckets`); no dense candidate grid is formed.

Sensitivity.  The utility of lattice point ``y`` at level ``q = Q/D`` is
``-max(0, D·A(y) - Q·n, Q·n - D·B(y))`` (``A``/``B`` the rows below / at or below ``y``,
``n`` the cell's rows; McSherry and Talwar, "Mechanism design via differential privacy",
FOCS 2007; Smith, "Privacy-preserving statistical estimation with optimal convergence
rates", STOC 2011).  Removing a person moves ``A``, ``B`` and ``n`` of a cell by at most the
rows ``k`` the person has there (``max_contributions``; with GROUP BY the rows per cell), so
every utility by at most ``Δ = k·max(Q, D - Q)``; the mechanism is calibrated to that
(``contributions = k``).  With GROUP BY, a person changes at most ``L0`` cells (the
schema's bound), each an ``ε/L0`` release: ``ε`` in all (the accountant composes the
registry mechanism's privacy profile over ``L0`` cells).  Several levels: the recursion of
Kaplan, Schnapp and Stemmer ("Differentially private approximate quantiles", ICML 2022,
Alg. 1) of such steps at ``ε/⌈log2(m + 1)⌉`` per depth; its outputs are sorted.

Error bars (from the output's count and public parameters only): with probability
``>= 1 - β`` the released value is an empirical p-quantile of the cell's snapped values for
a ``p`` within ``E/n`` of the level -- ``E`` rows the mechanism's public rank bound
(:meth:`IntervalQuantile.rank_error`, :meth:`MultiQuantile.rank_error`, the latter for all
levels at once) -- and ``n`` is replaced by the lower end of the released noisy count
(union bound, ``β = α/2`` each).  Released ``with rank bar``
(:mod:`dpnoise.session.rank_bar`): no count, the whole ``α`` to the rank statement
(:meth:`IntervalRankPlan.rank_bar`), on a lattice of at most ``2^32 + 1`` points.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..mechanisms.base import Guarantee
from ..mechanisms.registry import Request, build
from .buckets import SparseBuckets
from .fixed_point import QuantileGrid

__all__ = ["IntervalRankPlan", "rebuild_rank_plan", "recorded_level_interval", "true_levels"]

#: probe points per cell of :meth:`IntervalRankPlan.utilities` (a custodian's check)
PROBES = 1025


class IntervalRankPlan:
    """A calibrated DP quantile (one level) or quantiles (several levels) per cell."""

    def __init__(self, grid: QuantileGrid, levels: tuple[float, ...], epsilon: float,
                 cells: bool, l1: int, per_cell: int, changed: int) -> None:
        self.grid = grid
        self.multi = len(levels) > 1
        self.name = "multi-quantile" if self.multi else "interval-quantile"
        rows = per_cell if cells else l1
        self.rows = int(rows)
        self.epsilon = float(epsilon)
        self.delta = 0.0
        self.cell_epsilon = self.epsilon / changed if cells else self.epsilon
        self.charge_cells = changed if cells else 1
        self.lower = math.ldexp(float(grid.lo_q), -grid.scale_exp)
        self.step = math.ldexp(1.0, grid.shift - grid.scale_exp)
        self.top = grid.size - 1
        upper = self.lower + self.top * self.step  # exact: < 2^53 steps of a power of two
        options: dict[str, Any] = {"contributions": self.rows}
        if self.multi:
            options["levels"] = tuple(float(v) for v in levels)
        else:
            options["level"] = float(levels[0])
        #: the registry mechanism; a person changes at most ``changed`` cells of a GROUP
        #: BY, each a cell_epsilon-DP release: charged as that many cells
        self.mechanism = build(self.name, Request(
            epsilon=self.cell_epsilon, lower=self.lower, upper=upper, grid=self.step,
            options=options))
        if self.mechanism.n_points != self.top:
            raise ParameterError("internal: the quantile lattice does not match the grid")
        if self.multi:
            self.levels = tuple(self.mechanism.levels)
            first = self.levels[(len(self.levels) - 1) // 2]
            self._first = first.limit_denominator(1 << 10)
        else:
            self.levels = (self.mechanism.level,)
            self._first = self.mechanism.level
        q, d = self._first.numerator, self._first.denominator
        #: utility sensitivity of the (first) step: k·max(Q, D - Q)
        self.delta_u = self.rows * max(q, d - q, 1)

    @property
    def level(self) -> float:
        return float(self.levels[0])

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.cell_epsilon, delta=0.0, notion="pure",
                         note=self.mechanism.guarantee.note)

    @property
    def spec(self) -> Any:
        from .stats import RankSpec

        step = self.mechanism.epsilon_step if self.multi else self.cell_epsilon
        return RankSpec(step, 0.0, float(self.delta_u))

    # ------------------------------------------------------------------ release
    def release(self, buckets: SparseBuckets, rng: Any) -> NDArray[np.float64]:
        """The released value(s) per cell: shape ``cells`` (one level) or ``(*cells, m)``."""
        out = []
        for index, count in buckets.cells():
            j = self.mechanism.release_counts(index, count, rng)
            out.append(np.asarray(j, dtype=np.float64))
        idx = np.asarray(out, dtype=np.float64).reshape(
            (*buckets.shape, *((len(self.levels),) if self.multi else ())))
        return self.lower + idx * self.step  # lattice points: exact doubles

    def record(self, values: Any) -> NDArray[np.int64]:
        """The lattice indices of released values (what the ledger records)."""
        return np.rint((np.asarray(values, dtype=np.float64) - self.lower) / self.step
                       ).astype(np.int64)

    # ------------------------------------------------------------------ error bars
    def rank_error(self, beta: float, n: Any = None) -> NDArray[np.float64]:
        """Rows of rank error at ``1 - beta`` (for several levels: all at once, with
        ``n`` the row count it is stated for)."""
        if not self.multi:
            return np.asarray(self.mechanism.rank_error(beta), dtype=np.float64)
        n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)[..., None]
        parts = np.asarray(self.mechanism.rank_error_parts(beta), dtype=np.float64)
        return parts[:, 0] + n * parts[:, 1]  # (*cells, m): fixed + slope·n

    def rank_bar(self, beta: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(rank_error, level_slack)``: with probability ``>= 1 − beta`` every released
        value's rank is within ``rank_error + level_slack·n`` rows of ``q·n`` (one level:
        ``(E/D, 0)``; several: :meth:`MultiQuantile.rank_error_parts`, per level).  Public
        parameters only (:mod:`dpnoise.session.rank_bar`)."""
        if not self.multi:
            return (np.asarray(self.mechanism.rank_error(beta), dtype=np.float64),
                    np.asarray(0.0))
        parts = np.asarray(self.mechanism.rank_error_parts(beta), dtype=np.float64)
        return parts[:, 0], parts[:, 1]

    def level_interval(self, n_low: Any, beta: float
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return _levels(self.levels, self.multi, self.rank_error(beta, n_low), n_low)

    # ------------------------------------------------------------------ custodian checks
    def probes(self) -> NDArray[np.int64]:
        """At most :data:`PROBES` public lattice indices, both ends included."""
        return np.unique(np.linspace(0, self.top, min(PROBES, self.top + 1)).round()
                         .astype(np.int64))

    def utilities(self, buckets: SparseBuckets) -> NDArray[Any]:
        """The (first step's) utility at every probe point per cell, exact integers,
        shaped ``(*cells, probes)``: what a custodian's sensitivity check compares."""
        y = self.probes()
        q, d = self._first.numerator, self._first.denominator
        rows = []
        big = int(buckets.count.sum()) * d >= 1 << 62  # else exact in int64
        for index, count in buckets.cells():
            cum = np.r_[0, np.cumsum(count)].astype(object if big else np.int64)
            a = cum[np.searchsorted(index, y, side="left")]
            b = cum[np.searchsorted(index, y, side="right")]
            n = cum[-1]
            rows.append(-np.maximum(np.maximum(d * a - q * n, q * n - d * b), 0))
        return np.asarray(rows, dtype=object if big else np.int64).reshape(
            (*buckets.shape, y.size))

    def parameters(self) -> dict[str, Any]:
        lv = [[f.numerator, f.denominator] for f in self.levels]
        out: dict[str, Any] = {
            "mechanism": self.name, "kind": "quantile", "epsilon": self.epsilon,
            "delta": 0.0, "cell_epsilon": self.cell_epsilon, "contributions": self.rows,
            "utility_sensitivity": self.delta_u,
            "lattice": {"lower": self.lower, "step": self.step, "points": self.top + 1},
            "range": [self.lower, self.lower + self.top * self.step],
            # the public lattice: y_j = (lo_q + j·2^shift)·2^-scale_exp, j = 0..points-1
            "grid": {"shift": self.grid.shift, "lo_q": str(self.grid.lo_q),
                     "hi_q": str(self.grid.hi_q), "scale_exp": self.grid.scale_exp}}
        if self.multi:
            out["levels"] = lv
        else:
            out["level"] = lv[0]
        return out


def _levels(levels: tuple[Fraction, ...], multi: bool, error: Any, n_low: Any
            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Levels within ``error/n`` rows of each level (``n`` the count's lower end)."""
    n = np.maximum(np.asarray(n_low, dtype=np.float64), 1.0)
    err = np.asarray(error, dtype=np.float64)  # rows: scalar, or (*cells, m) for several
    e = err / n[..., None] if multi else err / n
    q = np.asarray([float(v) for v in levels]) if multi else np.asarray(float(levels[0]))
    return np.clip(q - e, 0.0, 1.0), np.clip(q + e, 0.0, 1.0)


def recorded_level_interval(p: dict[str, Any], n_low: Any, beta: float
                            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:meth:`IntervalRankPlan.level_interval` of a recorded plan (its ``parameters()``),
    the mechanism rebuilt from the recorded public recipe."""
    return rebuild_rank_plan(p).level_interval(n_low, beta)


def rebuild_rank_plan(p: dict[str, Any]) -> IntervalRankPlan:
    """The plan of a recorded quantile release (its ``parameters()``), rebuilt from the
    recorded public recipe as one cell at the recorded per-cell epsilon and rows."""
    g = p["grid"]
    grid = QuantileGrid(int(g["shift"]), int(p["lattice"]["points"]), int(g["lo_q"]),
                        int(g["hi_q"]), int(g["scale_exp"]))
    raw = p["levels"] if "levels" in p else [p["level"]]
    levels = tuple(Fraction(int(a), int(b)) for a, b in raw)
    # rebuilt as one cell at the recorded per-cell epsilon and rows: the same mechanism
    rows = int(p["contributions"])
    return IntervalRankPlan(grid, tuple(float(v) for v in levels), float(p["cell_epsilon"]),
                            False, rows, rows, 1)


def true_levels(grid: QuantileGrid, level: Any, buckets: SparseBuckets) -> NDArray[Any]:
    """The exact quantile(s) of each cell's snapped values: the first lattice point ``y``
    with ``D·B(y) >= Q·n`` per level ``Q/D`` (the lower end of the lattice for an empty
    cell).  NOT private: the custodian's own check.  Shaped ``cells`` for one level,
    ``(*cells, m)`` for several."""
    several = isinstance(level, tuple)
    levels = [Fraction(float(v)).limit_denominator(1 << (10 if several else 16))
              for v in (level if several else (level,))]
    lower = math.ldexp(float(grid.lo_q), -grid.scale_exp)
    step = math.ldexp(1.0, grid.shift - grid.scale_exp)
    out = []
    for index, count in buckets.cells():
        cum = np.cumsum(count).astype(object)
        n = int(cum[-1]) if cum.size else 0
        row = []
        for f in levels:
            hit = np.flatnonzero(f.denominator * cum >= f.numerator * n)
            row.append(float(index[hit[0]]) if hit.size and n else 0.0)
        out.append(row)
    vals = lower + np.asarray(out, dtype=np.float64) * step
    return vals.reshape((*buckets.shape, *((len(levels),) if several else ())))
