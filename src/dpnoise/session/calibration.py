"""Calibration: the noised components of a query and the mechanism of each.

From public facts only -- the schema's bounds and caps, the public row bound and the
ledger's accountant -- a query becomes its components (a count, a sum, a centred sum, the
power sums of a variance, a quantile's rank; with keys that are not public, a partition
selection first), each with its sensitivity, grid unit and valid range
(:func:`component_targets`), calibrated by :func:`dpnoise.session.adapter.plan` at its
share of the release's (epsilon, delta) (:func:`calibrate`).  Nothing here reads data.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ParameterError
from .adapter import UNBOUNDED_CELLS, Target, plan
from .distinct import distinct_bounds
from .fixed_point import exact_sum, power_fixed, quantile_grid
from .gaussian_threshold import choose, gaussian_plans
from .interval_rank import IntervalRankPlan
from .optimal import person_selection
from .other_row import OTHER_SHARE, other_plan, wants_other
from .query import Query
from .rank_bar import wants_rank_bar
from .schema import Schema
from .stats import SelectionPlan
from .threshold import THRESHOLDED_STATS, thresholded_plans


def component_targets(s: Schema, q: Query, n: int | None) -> list[tuple[str, Target]]:
    """The noised components of ``q`` and the target (sensitivity, unit, valid range) of
    each, from the schema and the public row bound ``n`` (None: counts on [0, inf))."""
    cells = bool(q.group_by)
    l1, per_cell, changed = (distinct_bounds if q.stat == "distinct" else Schema.bounds)(
        s, cells)
    count_hi = float(n) if n is not None else math.inf

    def target(kind: str, unit: float, lo: float, hi: float) -> Target:
        return Target(kind, unit, l1, cells, lo, hi, per_cell, changed)  # type: ignore[arg-type]

    count = target("count", 1.0, 0.0, count_hi)
    if q.stat in ("count", "distinct"):
        return [("count", count)]
    col = s.numeric(q.column)  # type: ignore[arg-type]
    lo, hi = float(col.lower), float(col.upper)  # type: ignore[arg-type]
    exact = exact_sum(col, s.max_rows)
    if q.stat == "quantile":
        return [("count", count)]  # plus the rank component (_plans)
    if q.stat == "sum":
        unit = exact.sum_unit
        if n is not None:
            a, b = n * min(lo, 0.0), n * max(hi, 0.0)
        else:
            a = -math.inf if lo < 0 else 0.0
            b = math.inf if hi > 0 else 0.0
        return [("sum", target("sum", unit, a, b))]
    if q.stat in ("variance", "stddev"):
        pf = power_fixed(exact)
        u1 = pf.unit1 * pf.value_unit  # W · 2^(r-s-1), rounded up to Σc's grid
        u2 = math.ldexp(float(pf.unit2), 0) * pf.value_unit ** 2
        if n is not None:
            r1 = (-n * pf.width * pf.value_unit, n * pf.width * pf.value_unit)
            r2 = (0.0, n * float(pf.width) ** 2 * pf.value_unit ** 2)
        else:
            r1, r2 = (-math.inf, math.inf), (0.0, math.inf)
        return [("count", count), ("power1", target("sum", u1, *r1)),
                ("power2", target("sum", u2, *r2))]
    half = exact.mean_unit  # (hi - lo) / 2 rounded up to the centred sum's grid
    a, b = (-n * half, n * half) if n is not None else (-math.inf, math.inf)
    return [("count", count), ("centred_sum", target("sum", half, a, b))]


def count_cells(schema: Schema, q: Query) -> int:
    """The number of public cells of ``q`` (1 for a scalar); with a group column whose
    keys are not public, :data:`~dpnoise.session.adapter.UNBOUNDED_CELLS` (no public fact
    bounds them).

    Parameters
    ----------
    q : Query
        A parsed query.

    Returns
    -------
    int
        The number of cells.
    """
    n_cells = 1
    for g in q.group_by:
        col = schema.column(g)
        n_cells *= UNBOUNDED_CELLS if col.private_keys else col.n_keys()
    return min(n_cells, UNBOUNDED_CELLS)


def calibrate(schema: Schema, q: Query, epsilon: float, delta: float, mechanism: str | None,
              *, rows: int | None, accountant: str) -> list[tuple[str, Any]]:
    """The calibrated components of ``q`` at total (epsilon, delta).

    Splits: components share epsilon equally (a quantile: 1/4 to its count, 3/4 to its rank;
    with its error bar in ranks, all of it to the rank: :mod:`dpnoise.session.rank_bar`);
    with keys that are not public, a statistic with a count keeps the groups whose released
    count clears a threshold (all of epsilon to the components, all of delta to the
    threshold: :mod:`dpnoise.session.threshold`; a count of persons in many groups under
    ``pld`` may use discrete Gaussian noise instead:
    :mod:`dpnoise.session.gaussian_threshold`), a sum or a quantile spends half of epsilon
    and ALL of delta on partition selection first (the optimal selection for one group per
    person: :mod:`dpnoise.session.optimal`) and its components are pure."""
    targets = component_targets(schema, q, rows)
    out: list[tuple[str, Any]] = []
    exact = accountant == "zcdp"  # Renyi curves: no finite-support tables
    private = any(schema.column(g).private_keys for g in q.group_by)
    if private and q.stat in THRESHOLDED_STATS:
        if not delta > 0:
            SelectionPlan(epsilon, delta, 1)  # the same clear error: needs delta > 0
        _, per_cell, changed = (distinct_bounds if q.stat == "distinct" else Schema.bounds)(
            schema, True)  # a distinct-persons count: R = 1 per group
        if q.stat == "count" and not wants_other(q) and choose(
                mechanism, accountant, targets[0][1], epsilon, delta, changed, per_cell):
            return gaussian_plans(targets[0][1], epsilon, delta, changed, per_cell)
        share = (1 - OTHER_SHARE) if wants_other(q) else 1.0  # the other row: its own noise
        out = thresholded_plans(targets, epsilon * share, delta, mechanism, exact, per_cell,
                                changed)
        if wants_other(q):
            out.append(("other", other_plan(targets[0][1], epsilon - epsilon * share)))
        return out
    if private:
        _, _, changed = schema.bounds(True)
        out.append(("selection", person_selection(epsilon / 2, delta, changed)))
        epsilon, delta = epsilon / 2, 0.0
    if q.stat == "quantile":
        if delta:
            raise ParameterError("a quantile is pure epsilon-DP: pass delta=0")
        cells = bool(q.group_by)
        l1, per_cell, changed = schema.bounds(cells)
        col = schema.numeric(q.column)  # type: ignore[arg-type]
        grid = quantile_grid(exact_sum(col, schema.max_rows), q)
        levels = q.quantile if isinstance(q.quantile, tuple) else (q.quantile,)
        share = 1.0 if wants_rank_bar(q) else 3 / 4  # a rank bar needs no count
        if share < 1:
            out.append(("count", plan(targets[0][1], epsilon=epsilon / 4, delta=0.0,
                                      mechanism=mechanism, exact_sampler=exact)))
        out.append(("rank", IntervalRankPlan(grid, levels, share * epsilon, cells,  # type: ignore[arg-type]
                                             l1, per_cell, changed)))
        return out
    share = len(targets)
    out += [(role, plan(t, epsilon=epsilon / share, delta=delta / share,
                        mechanism=mechanism, exact_sampler=exact))
            for role, t in targets]
    return out
