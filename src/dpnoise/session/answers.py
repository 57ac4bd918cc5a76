"""From released components to answers: combining them, the error bars of every
statistic (live and from a ledger entry), the true components, and what a release
records.  Used by :mod:`dpnoise.session.session`, :mod:`dpnoise.session.spark_noise`
(the same error bars on the executors) and the report.

Statistics, for add/remove-one-individual neighbours with at most k rows each, values
clamped into the declared ``[lo, hi]`` and an optional public row bound N:

* COUNT: integer cells in ``[0, N]`` (``[0, ∞)`` without N), one row moves a cell by 1;
* SUM: cells in ``[N·min(lo, 0), N·max(hi, 0)]`` (a half-line or the real line without N),
  one row moves a cell by at most ``max(|lo|, |hi|)`` rounded up to the exact sum's grid
  (:func:`~dpnoise.session.engine.exact_sum`, at most 2^-16 relatively more);
* MEAN: half the epsilon releases the count of non-missing values C, half releases the
  *centred* sum S = Σ(x − mid) over the same values (one row moves it by at most
  ``(hi − lo)/2``, rounded up to its grid); the answer is ``clamp(mid + S/max(C, 1), lo,
  hi)`` -- post-processing, so always inside ``[lo, hi]``.  A missing value is in neither.
* VARIANCE / STDDEV, QUANTILE, groups whose keys are not public, two-dimensional
  bounding (``max_groups`` / ``max_rows_per_group``) and the error bars every release
  carries: see docs/custodian.md §5b, :mod:`dpnoise.session.interval_rank` (quantiles),
  :mod:`dpnoise.session.stats` and :mod:`dpnoise.session.intervals`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .adapter import Plan, Target, plan
from .aggregation import combine
from .engine import Aggregates, exact_sum
from .fixed_point import quantile_grid
from .interval_rank import recorded_level_interval, true_levels
from .intervals import component_interval, ratio_interval, variance_interval
from .query import Query
from .rank_bar import rank_bar_parts
from .schema import Schema
from .stats import level_interval, rank_error_from_parameters


def components_of(q: Query, agg: Aggregates) -> dict[str, NDArray[Any]]:
    """The true value of each component, keyed by role (see the module docstring)."""
    shape = agg.shape
    if q.stat in ("variance", "stddev"):
        return {"count": agg.values.reshape(shape),
                "power1": agg.power1.reshape(shape),  # type: ignore[union-attr]
                "power2": agg.power2.reshape(shape)}  # type: ignore[union-attr]
    if q.stat == "quantile":
        return {"count": agg.values.reshape(shape)}
    if q.stat == "distinct":  # distinct persons per cell after bounding
        return {"count": np.asarray(agg.persons).reshape(shape)}
    if q.stat == "count":
        counts = agg.values if q.column is not None else agg.rows
        return {"count": counts.reshape(shape)}
    if q.stat == "sum":
        return {"sum": agg.sums.reshape(shape)}
    # mean: count of non-missing values and Σ(x - mid) of the same values, exactly
    return {"count": agg.values.reshape(shape), "centred_sum": agg.centred.reshape(shape)}


def true_quantile(q: Query, schema: Schema, agg: Aggregates) -> NDArray[Any]:
    """The exact quantile(s) of the data snapped up to the public lattice, per cell: the
    first lattice point with ``D·B(y) >= Q·n`` (utility 0).  NOT private."""
    col = schema.numeric(q.column)  # type: ignore[arg-type]
    grid = quantile_grid(exact_sum(col, schema.max_rows), q)
    return true_levels(grid, q.quantile, agg.buckets)  # type: ignore[arg-type]


def combine_variance(parts: Mapping[str, Any], lower: float, upper: float) -> NDArray[Any]:
    """The sample variance ``(Q - S²/C)/(C - 1)`` from (noisy or true) count C, centred
    sum S and centred sum of squares Q -- post-processing into ``[0, h²·C/(C-1)]``
    (``h = (upper - lower)/2``, the largest sample variance of C values in the range);
    0 when C < 2."""
    c = np.asarray(parts["count"], dtype=np.float64)
    s1 = np.asarray(parts["power1"], dtype=np.float64)
    s2 = np.maximum(np.asarray(parts["power2"], dtype=np.float64), 0.0)
    cc = np.maximum(c, 2.0)
    v = (s2 - s1 * s1 / cc) / (cc - 1)
    h = (upper - lower) / 2
    v = np.clip(v, 0.0, h * h * cc / (cc - 1))
    return np.where(c < 2, 0.0, v)


def column_range(schema: Schema, q: Query) -> list[float] | None:
    """The measured column's public bounds (means, variances), else None."""
    if q.column is None or q.stat in ("count", "sum"):
        return None
    col = schema.numeric(q.column)
    return [float(col.lower), float(col.upper)]  # type: ignore[arg-type]


def recorded_components(q: Query, plans: list[tuple[str, Any]],
                         noisy: Mapping[str, Any]) -> dict[str, NDArray[Any]]:
    """What the ledger records beside the answer: the noisy components the answer was
    combined from (none for a count or a sum, whose answer IS its component); for a
    quantile, its noisy count and the index of the released candidate on the public grid.
    Released (noisy) values only."""
    if q.stat in ("count", "sum", "distinct"):  # the other row is recorded beside
        return {r: np.asarray(v) for r, v in noisy.items() if r == "other"}
    out = {role: np.asarray(v) for role, v in noisy.items() if role != "rank"}
    if q.stat == "quantile":  # the released lattice indices
        out["rank"] = dict(plans)["rank"].record(noisy["rank"])
    return out


def rebuild_plan(p: Mapping[str, Any]) -> Plan:
    """A component's calibrated plan rebuilt from its recorded public recipe."""
    t = p["target"]
    target = Target(p["kind"], float(t["unit"]), int(t["rows"]), bool(t["cells"]),
                    float(t["lower"]), float(t["upper"]), t["per_cell"], t["changed"])
    if "gaussian_threshold" in p:  # a Gaussian threshold's count: its recorded sigma^2
        from .gaussian_threshold import rebuild_count

        return rebuild_count(target, dict(p))
    return plan(target, epsilon=float(p["epsilon"]), delta=float(p["delta"]),
                mechanism=p["mechanism"],
                exact_sampler="sampler='cks'" in str(p.get("repr", "")))


def entry_interval(entry: Any, confidence: float = 0.95
                   ) -> tuple[NDArray[Any], NDArray[Any]]:
    """Error bars of a PAST release (a ledger :class:`Entry`), recomputed from its stored
    answer, the noisy components recorded in its complete event and the public recipe in
    its parameters -- never from data -- by the same functions as the live release's
    (:func:`interval_function`).  A count or a sum needs only its answer; a mean,
    variance or quantile needs its recorded components: a release recorded without them
    (older ledgers, executor-written, very large tables) raises ``ParameterError`` saying
    "components not recorded"."""
    from ..laws.base import check_level

    conf = check_level(confidence)
    params = entry.parameters or {}
    plans = dict(params.get("plans", {}))
    if entry.answer is None:
        raise ParameterError(f"release {entry.id} has no answer ({entry.status})")
    interval = params.get("interval") or {}
    roles = set(plans) - {"selection", "other"}
    stat = interval.get("stat") or ("count" if roles == {"count"} else
                                    "sum" if roles == {"sum"} else None)
    stat = "count" if stat == "distinct" else stat  # its answer is its count component
    answer = np.asarray(entry.answer)
    if stat in ("count", "sum") and roles == {stat}:
        comps: dict[str, Any] = {stat: answer}
    else:
        comps = dict(getattr(entry, "components", None) or {})
        if stat is None or not comps:
            note = getattr(entry, "record_note", None) or "components not recorded"
            raise ParameterError(f"release {entry.id}: no error bars: {note}")
    rebuilt: list[tuple[str, Any]] = []
    for role, p in plans.items():
        if role == "selection":
            continue
        if role == "rank":
            rebuilt.append((role, p))
            continue
        if "target" not in p:
            raise ParameterError(f"release {entry.id}: its {role} plan has no public recipe "
                                 "(recorded by an older dpnoise)")
        rebuilt.append((role, rebuild_plan(p)))
    ivs = interval_function(stat, interval.get("range"), rebuilt, comps, answer.shape)
    return ivs(conf)  # type: ignore[no-any-return]


def entry_interval_at(entry: Any, confidence: float) -> tuple[NDArray[Any], NDArray[Any]]:
    return entry_interval(entry, confidence)


def entry_cells(entry: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """``(group_by, keys)`` of a past release: its declared public keys (a tuple, or a
    range for integer keys, per group column) or, for groups chosen by DP partition
    selection, the released keys recorded in its complete event (``()`` keys when not
    recorded)."""
    cells = (entry.parameters or {}).get("cells") or {}
    group_by = tuple(cells.get("group_by", ()))
    released = getattr(entry, "released_keys", None)
    if released is not None:
        return group_by, tuple(released)
    keys = tuple(range(k["range"][0], k["range"][1] + 1) if isinstance(k, dict) else tuple(k)
                 for k in cells.get("keys", ()))
    return group_by, keys


def interval_function(stat: str, col_range: Any, plans: list[tuple[str, Any]],
                       noisy: Mapping[str, Any], shape: tuple[int, ...]) -> Any:
    """``confidence -> (low, high)`` from the NOISY components and public plans only (a
    quantile's ``rank`` plan may be its recorded parameters); a quantile released with its
    bar in ranks (no count): ``(rank_error, level_slack)`` instead
    (:mod:`dpnoise.session.rank_bar`)."""
    pl = {r: p for r, p in plans if r not in ("selection", "other")}

    def ivs(confidence: float) -> tuple[NDArray[Any], NDArray[Any]]:
        alpha = 1 - confidence
        if stat in ("count", "sum", "distinct"):
            role = next(iter(pl))
            lo, hi = component_interval(pl[role], noisy[role], alpha)
        elif stat == "mean":
            c = component_interval(pl["count"], noisy["count"], alpha / 2)
            s = component_interval(pl["centred_sum"], noisy["centred_sum"], alpha / 2)
            lo, hi = ratio_interval(c, s, float(col_range[0]), float(col_range[1]))
        elif stat in ("variance", "stddev"):
            c = component_interval(pl["count"], noisy["count"], alpha / 3)
            s1 = component_interval(pl["power1"], noisy["power1"], alpha / 3)
            s2 = component_interval(pl["power2"], noisy["power2"], alpha / 3)
            h = (float(col_range[1]) - float(col_range[0])) / 2
            lo, hi = variance_interval(c, s1, s2, h)
            if stat == "stddev":
                lo, hi = np.sqrt(lo), np.sqrt(hi)
        elif "count" not in pl:  # quantile with its bar in ranks: no count, all alpha
            return rank_bar_parts(pl["rank"], alpha, shape)
        else:  # quantile: levels
            c = component_interval(pl["count"], noisy["count"], alpha / 2)
            rank = pl["rank"]
            if not isinstance(rank, dict):
                lo, hi = rank.level_interval(c[0], alpha / 2)
            elif rank.get("mechanism") in ("interval-quantile", "multi-quantile"):
                lo, hi = recorded_level_interval(rank, c[0], alpha / 2)
            else:  # recorded by report noisy max over the public grid (older releases)
                q_num, q_den = (int(v) for v in rank["level"])
                lo, hi = level_interval(q_num, q_den,
                                        rank_error_from_parameters(rank, alpha / 2), c[0])
        return np.asarray(lo).reshape(shape), np.asarray(hi).reshape(shape)

    return ivs


def public_cells(group_by: tuple[str, ...], keys: tuple[Any, ...]) -> dict[str, Any]:
    """The public cell labels of a release (declared keys only), for reports."""
    return {"group_by": list(group_by),
            "keys": [{"range": [k.start, k.stop - 1]} if isinstance(k, range)
                     else [str(v) for v in k] for k in keys]}


def combine_answer(q: Query, schema: Schema, parts: dict[str, NDArray[Any]]) -> NDArray[Any]:
    if q.stat == "quantile":
        return np.asarray(parts["rank"], dtype=np.float64)
    if q.stat in ("variance", "stddev"):
        col = schema.numeric(q.column)  # type: ignore[arg-type]
        v = combine_variance(parts, float(col.lower), float(col.upper))  # type: ignore[arg-type]
        return np.sqrt(v) if q.stat == "stddev" else v
    if q.stat == "mean":
        col = schema.numeric(q.column)  # type: ignore[arg-type]
        return combine(q.stat, parts, col.lower, col.upper)
    return combine("count" if q.stat == "distinct" else q.stat, parts)


def composed_guarantee(plans: list[tuple[str, Plan]], eps: float, dl: float,
                        per_individual: bool = True) -> str:
    parts = [f"{role}: {p.guarantee} per cell" for role, p in plans]
    core = f"({eps:.6g}, {dl:.3g})-DP" if dl else f"{eps:.6g}-DP"
    # without a user_id a person may own several rows: the guarantee is per row only
    unit = "one individual (user_id)" if per_individual else \
        "one row (no user_id declared: a person owning several rows is not covered)"
    return f"{core} for add/remove {unit} [{'; '.join(parts)}]"
