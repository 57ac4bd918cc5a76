"""The engine-neutral plan of one query: what every engine computes, defined once.

A validated :class:`~dpnoise.session.query.Query` compiles (:func:`compile_query`) to an
:class:`AggregatePlan` over the typed view of :mod:`dpnoise.session.source`:

1. **filter** -- a :data:`TypedPredicate`: numeric columns compared with doubles,
   categorical columns as a set of category *codes* (computed here from the public
   categories), ``IS [NOT] NULL``, and SQL three-valued ``NOT``/``AND``/``OR``; a missing
   value makes a comparison unknown, so the row is selected by neither ``p`` nor ``NOT p``;
2. **keys** -- every :class:`GroupKey` becomes an integer in ``[0, size)`` (a category
   code, or ``x - lower`` for an integer key); a row whose key is missing is dropped;
3. **contribution bounding** (:class:`Bounding`, with a ``user_id``) -- among the selected
   rows, each person keeps the ``k`` rows with the smallest
   ``(SHA-256(encoding), encoding)``, where ``encoding`` is the canonical text
   (:func:`encoding_parts`) of the integers the aggregates read from that row: its key
   indices and the measured column's token (category code, or fixed-point value ``q``).
   The choice depends only on that person's selected rows, never on the engine (DuckDB's
   ``sha256`` and Spark's ``sha2(_, 256)`` agree bit for bit on the same text), and two
   rows with the same encoding contribute identically, so ties do not matter;
4. **aggregates** -- one node each (:class:`CountRows`, :class:`CountValues`,
   :class:`FixedSum`, :class:`CentredSum`), every one exact: counts are integers, sums are
   exact integer sums of ``q = floor(clamp(x) · 2^s)`` clamped to what ``R`` rows can reach
   and rounded once onto a public grid
   (:func:`~dpnoise.session.fixed_point.exact_sum`; Casacuberta, Shoemate, Vadhan and
   Wagaman, "Widespread underestimation of sensitivity in differentially private
   libraries and how to fix it", ACM CCS 2022).

An engine is a small visitor over these nodes (``engine.py`` writes DuckDB SQL,
``spark.py`` Spark column expressions); the dense scatter of the per-group results onto
every public cell (:func:`scatter`) is shared.  A new statistic adds a node here and one
method per engine, never a feature of one engine only.

The fixed-point arithmetic of exact sums lives in :mod:`dpnoise.session.fixed_point`.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .buckets import SparseBuckets
from .fixed_point import (
    ExactSum,
    PowerFixed,
    QuantileGrid,
    exact_sum,
    power_fixed,
    quantile_grid,
)
from .query import Between, BoolOp, Compare, InList, IsNull, Not, Predicate, Query
from .schema import Schema

#: version tag of the canonical row encoding hashed by contribution bounding
ENCODING_TAG = "dpnoise-bound-v1"
#: version tag of the canonical group encoding (which groups a person keeps)
GROUP_TAG = "dpnoise-group-v1"

# ------------------------------------------------------------ typed predicates
@dataclass(frozen=True)
class NumCompare:
    """``column OP value`` on a numeric column of the typed view (a double)."""

    column: str
    op: Literal["=", "<>", "<", "<=", ">", ">="]
    value: float


@dataclass(frozen=True)
class NumIn:
    column: str
    values: tuple[float, ...]
    negate: bool = False


@dataclass(frozen=True)
class NumBetween:
    column: str
    low: float
    high: float
    negate: bool = False


@dataclass(frozen=True)
class CodeIn:
    """A categorical column's code is one of ``codes`` (no codes: never true; a missing
    value is unknown either way, as in SQL)."""

    column: str
    codes: tuple[int, ...]


@dataclass(frozen=True)
class IsMissing:
    column: str
    negate: bool = False


@dataclass(frozen=True)
class Negation:
    arg: TypedPredicate


@dataclass(frozen=True)
class Junction:
    op: Literal["AND", "OR"]
    args: tuple[TypedPredicate, ...]


TypedPredicate = NumCompare | NumIn | NumBetween | CodeIn | IsMissing | Negation | Junction

_PY_OPS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}


def typed_predicate(p: Predicate, schema: Schema) -> TypedPredicate:
    """The predicate over the typed view: literals become doubles, and a comparison on a
    categorical column becomes the set of codes of the public categories it selects."""
    if isinstance(p, Not):
        return Negation(typed_predicate(p.arg, schema))
    if isinstance(p, BoolOp):
        return Junction(p.op, tuple(typed_predicate(a, schema) for a in p.args))
    col = schema.column(p.column)
    if isinstance(p, IsNull):
        return IsMissing(p.column, p.negate)
    if col.categories is not None:
        def key(v: Any) -> Any:
            return v if isinstance(v, str) else float(v)

        cats = col.categories
        if isinstance(p, Compare):
            op = _PY_OPS[p.op]
            codes = [i for i, c in enumerate(cats) if op(key(c), key(p.value))]
        elif isinstance(p, InList):
            vals = {key(v) for v in p.values}
            codes = [i for i, c in enumerate(cats) if (key(c) in vals) != p.negate]
        else:
            assert isinstance(p, Between)
            codes = [i for i, c in enumerate(cats)
                     if (key(p.low) <= key(c) <= key(p.high)) != p.negate]
        return CodeIn(p.column, tuple(codes))
    if isinstance(p, Compare):
        return NumCompare(p.column, p.op, float(p.value))  # type: ignore[arg-type]
    if isinstance(p, InList):
        return NumIn(p.column, tuple(float(v) for v in p.values), p.negate)
    assert isinstance(p, Between)
    return NumBetween(p.column, float(p.low), float(p.high), p.negate)


# ------------------------------------------------------------------ plan nodes
@dataclass(frozen=True)
class GroupKey:
    """A GROUP BY column as an integer index in ``[0, size)``: a category code
    (``offset`` None) or ``x - offset`` for an integer key; or (``private``) the text
    of a column whose keys are not public (``size`` 0: the groups come from the data and
    are released only through DP partition selection)."""

    column: str
    size: int
    offset: float | None = None
    private: bool = False


@dataclass(frozen=True)
class Token:
    """The integer one row's measured column contributes: a category code, or the
    fixed-point value ``q = floor(clamp(x, lo, hi) · 2^s)`` of a numeric column."""

    column: str
    fixed: ExactSum | None  # None: a categorical column (its code)
    lower: float | None = None
    upper: float | None = None


@dataclass(frozen=True)
class CountRows:
    """Rows per cell (after bounding).  Output column ``n``."""

    name: str = "n"


@dataclass(frozen=True)
class CountValues:
    """Non-missing values of ``token``'s column per cell.  Output column ``nv``."""

    token: Token
    name: str = "nv"


@dataclass(frozen=True)
class FixedSum:
    """``Σ q`` exactly, clamped to ``fixed.sum_limits``, rounded half up to multiples of
    ``2^sum_shift`` and returned as that integer (an exact double).  Output ``s``."""

    token: Token
    name: str = "s"


@dataclass(frozen=True)
class CentredSum:
    """``2·Σq - C·(lo_q + hi_q)`` exactly (C = non-missing values), clamped to
    ``±centred_limit``, rounded half up to multiples of ``2^mean_shift``.  Output ``c``."""

    token: Token
    name: str = "c"


@dataclass(frozen=True)
class CountPersons:
    """Distinct persons per cell after bounding (rows without a user_id).  Output ``u``:
    the count DP partition selection thresholds."""

    name: str = "u"


@dataclass(frozen=True)
class PowerSum:
    """``Σ c^power`` (power 1 or 2) of a variance's centred values (:class:`PowerFixed`)
    exactly, clamped to what ``rows`` rows reach, rounded half up onto its grid.  Output
    ``c1`` / ``c2``."""

    token: Token
    fixed: PowerFixed
    power: int
    name: str = "c1"


Aggregate = CountRows | CountValues | FixedSum | CentredSum | CountPersons | PowerSum


@dataclass(frozen=True)
class Bounding:
    """Keep at most ``k`` rows per person (see the module docstring, step 3); or, with
    ``groups`` G and ``per_group`` R (grouped queries whose schema declares
    ``max_groups`` / ``max_rows_per_group``), at most R rows in each of at most G groups:
    the person's groups with the smallest ``(SHA-256(g), g)`` -- ``g`` the canonical
    text of the group's key indices (:data:`GROUP_TAG`) -- then in each kept group the R
    rows with the smallest ``(SHA-256(e), e)`` as above.  Both choices depend only on
    that person's selected rows (Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo and
    Gipson, "Differentially private SQL with bounded user contribution", PETS 2020, §3:
    per-partition and cross-partition contribution bounding)."""

    k: int
    groups: int | None = None
    per_group: int | None = None


@dataclass(frozen=True)
class AggregatePlan:
    """Everything an engine needs to compute the true aggregates of one query."""

    columns: tuple[str, ...]  # typed-view columns read (sorted)
    where: TypedPredicate | None
    keys: tuple[GroupKey, ...]
    token: Token | None  # the measured column, if any
    bounding: Bounding | None
    aggregates: tuple[Aggregate, ...]
    buckets: QuantileGrid | None = None  # quantiles: rows per (cell, lattice index)
    values_only: bool = False  # only rows whose measured value is present (quantiles)

    @property
    def private(self) -> bool:
        """Grouped by a column whose keys are not public (one key, its text)."""
        return any(k.private for k in self.keys)

    @property
    def shape(self) -> tuple[int, ...]:
        if self.private:
            raise ParameterError("a query over keys that are not public has no dense shape")
        return tuple(k.size for k in self.keys)

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.keys else 1

    @property
    def strides(self) -> tuple[int, ...]:
        """C-order strides of the cell index ``Σ key_i · stride_i``."""
        out, acc = [], 1
        for k in reversed(self.keys):
            out.append(acc)
            acc *= k.size
        return tuple(reversed(out))

    def grids(self) -> tuple[float, float]:
        """Real units of one step of ``s`` and of ``c``."""
        if self.token is None or self.token.fixed is None:
            return 1.0, 1.0
        return self.token.fixed.sum_grid, self.token.fixed.mean_grid


def compile_query(q: Query, schema: Schema) -> AggregatePlan:
    """The plan of ``q`` (already validated against ``schema``)."""
    where = typed_predicate(q.where, schema) if q.where is not None else None
    keys = []
    for g in q.group_by:
        col = schema.column(g)
        if col.private_keys:
            keys.append(GroupKey(g, 0, None, private=True))
            continue
        keys.append(GroupKey(g, col.n_keys(),
                             None if col.categories is not None else float(col.lower)))  # type: ignore[arg-type]
    token = None
    buckets = None
    aggs: list[Aggregate] = [CountRows()]
    if q.column is not None:
        col = schema.column(q.column)
        fixed = exact_sum(col, schema.max_rows) if col.is_numeric else None
        token = Token(q.column, fixed, col.lower, col.upper)
        aggs.append(CountValues(token))
        if q.stat == "sum":
            aggs.append(FixedSum(token))
        elif q.stat == "mean":
            aggs.append(CentredSum(token))
        elif q.stat in ("variance", "stddev"):
            pf = power_fixed(fixed)  # type: ignore[arg-type]
            aggs += [PowerSum(token, pf, 1, "c1"), PowerSum(token, pf, 2, "c2")]
        elif q.stat == "quantile":
            buckets = quantile_grid(fixed, q)  # type: ignore[arg-type]
            aggs = [CountValues(token)]
    if any(k.private for k in keys) or q.stat == "distinct":  # distinct: persons per cell
        aggs.append(CountPersons())
    bounding = None
    if schema.user_id:
        _, per_cell, cells = schema.bounds(bool(keys))
        two_d = bool(keys) and schema.max_groups is not None
        bounding = Bounding(schema.max_contributions, cells if two_d else None,
                            per_cell if two_d else None)
    return AggregatePlan(tuple(sorted(q.columns())), where, tuple(keys), token, bounding,
                         tuple(aggs), buckets, values_only=buckets is not None)


def encoding_parts(plan: AggregatePlan) -> tuple[str, ...]:
    """The per-row columns the bounding encoding is made of, in order: the key indices
    ``k0, k1, ...`` (a private key: its text) then the measured column's token ``tok``."""
    return (*(f"k{i}" for i in range(len(plan.keys))), *(("tok",) if plan.token else ()))


def text_parts(plan: AggregatePlan) -> frozenset[str]:
    """The encoding parts that are text (private keys): encoded as ``<length>:<text>``
    (length in characters) so that no two different rows share an encoding."""
    return frozenset(f"k{i}" for i, k in enumerate(plan.keys) if k.private)


def _part(v: int | str | None) -> str:
    if v is None:
        return "|N"
    if isinstance(v, str):
        return f"|{len(v)}:{v}"
    return "|" + str(int(v))


def encoding_text(values: tuple[int | str | None, ...]) -> str:
    """Reference implementation of the canonical row encoding: the tag, then for each
    part ``|`` and its decimal integer text (``N`` when missing; a text part as
    ``<length>:<text>``).  Engines build the same text with their own string functions
    (tested to agree)."""
    return ENCODING_TAG + "".join(_part(v) for v in values)


def group_encoding_text(values: tuple[int | str | None, ...]) -> str:
    """The canonical text of a group (its key parts only), ordered by SHA-256 to choose
    the ``max_groups`` groups a person keeps."""
    return GROUP_TAG + "".join(_part(v) for v in values)


# ----------------------------------------------------------------- results
@dataclass(frozen=True)
class Aggregates:
    """Dense per-cell aggregates (cells = product of public keys, C order; 1 cell if none)."""

    shape: tuple[int, ...]
    rows: NDArray[np.int64]  # rows per cell (after bounding)
    values: NDArray[np.int64]  # non-missing values of the column per cell (= rows without)
    sums: NDArray[np.float64]  # exact sum of clamped values, on its grid (0 without column)
    centred: NDArray[np.float64]  # exact Σ(x - mid) of clamped values, on its grid
    persons: NDArray[np.int64] | None = None  # distinct persons per cell (private keys)
    power1: NDArray[np.float64] | None = None  # Σc (variance), real units
    power2: NDArray[np.float64] | None = None  # Σc², real units
    buckets: SparseBuckets | None = None  # rows per (cell, lattice index) of a quantile
    labels: NDArray[Any] | None = None  # private keys: the groups' texts (sorted)


def _power_grids(plan: AggregatePlan) -> tuple[float, float]:
    for a in plan.aggregates:
        if isinstance(a, PowerSum):
            return a.fixed.grid1, a.fixed.grid2
    return 1.0, 1.0


def scatter(plan: AggregatePlan, groups: Mapping[str, Any]) -> Aggregates:
    """Scatter per-group results (columns ``k0..``, ``n`` and the aggregates' outputs, as
    arrays) onto every public cell; a cell no row reached is 0.  A quantile's rows are
    per (group, bucket ``kb``); a private key's groups are the ones present, sorted by
    their text."""
    if plan.buckets is not None:
        return _scatter_buckets(plan, groups)
    if plan.private:
        return _private_groups(plan, groups)
    shape = plan.shape
    n = np.asarray(groups["n"], dtype=np.int64)
    nv = np.asarray(groups["nv"], dtype=np.int64) if "nv" in groups else n
    s = np.asarray(groups["s"], dtype=np.float64) if "s" in groups else np.zeros(n.size)
    c = np.asarray(groups["c"], dtype=np.float64) if "c" in groups else np.zeros(n.size)
    idx = np.zeros(n.size, dtype=np.int64)
    for i, stride in enumerate(plan.strides):
        idx += np.asarray(groups[f"k{i}"], dtype=np.int64) * stride
    size = plan.n_cells
    rows = np.zeros(size, dtype=np.int64)
    vals = np.zeros(size, dtype=np.int64)
    sums = np.zeros(size, dtype=np.float64)
    cent = np.zeros(size, dtype=np.float64)
    sum_grid, mean_grid = plan.grids()
    rows[idx], vals[idx] = n, nv
    persons = None
    if "u" in groups:  # distinct persons per public cell
        persons = np.zeros(size, dtype=np.int64)
        persons[idx] = np.asarray(groups["u"], dtype=np.int64)
    sums[idx], cent[idx] = s * sum_grid, c * mean_grid  # powers of two: exact
    p1 = p2 = None
    if "c1" in groups:
        g1, g2 = _power_grids(plan)
        p1, p2 = np.zeros(size), np.zeros(size)
        p1[idx] = np.asarray(groups["c1"], dtype=np.float64) * g1
        p2[idx] = np.asarray(groups["c2"], dtype=np.float64) * g2
    return Aggregates(shape, rows, vals, sums, cent, persons=persons, power1=p1, power2=p2)


def _private_groups(plan: AggregatePlan, groups: Mapping[str, Any]) -> Aggregates:
    labels = np.asarray([str(v) for v in groups["k0"]], dtype=object)
    order = np.argsort(labels.astype(str), kind="stable")
    labels = labels[order]
    n = np.asarray(groups["n"], dtype=np.int64)[order]
    nv = np.asarray(groups["nv"], dtype=np.int64)[order] if "nv" in groups else n
    u = np.asarray(groups["u"], dtype=np.int64)[order]
    sum_grid, mean_grid = plan.grids()

    def real(name: str, grid: float) -> NDArray[np.float64]:
        if name not in groups:
            return np.zeros(n.size)
        return np.asarray(groups[name], dtype=np.float64)[order] * grid

    g1, g2 = _power_grids(plan)
    p1 = real("c1", g1) if "c1" in groups else None
    p2 = real("c2", g2) if "c2" in groups else None
    return Aggregates((n.size,), n, nv, real("s", sum_grid), real("c", mean_grid),
                      persons=u, power1=p1, power2=p2, labels=labels)


def persons_plan(plan: AggregatePlan) -> AggregatePlan:
    """For a quantile over keys that are not public: the same selected, bounded rows
    without the bucket split, counting distinct persons per group (a person's count in
    ONE bucket would undercount the group)."""
    from dataclasses import replace

    assert plan.token is not None
    return replace(plan, buckets=None, aggregates=(CountValues(plan.token), CountPersons()),
                   values_only=True)


def merge_persons(agg: Aggregates, groups: Mapping[str, Any]) -> Aggregates:
    """Attach the distinct persons of :func:`persons_plan`'s groups (by label)."""
    from dataclasses import replace

    pos = {str(v): int(u) for v, u in zip(groups["k0"], groups["u"], strict=True)}
    persons = np.asarray([pos.get(str(v), 0) for v in agg.labels.tolist()],  # type: ignore[union-attr]
                         dtype=np.int64)
    return replace(agg, persons=persons)


def _scatter_buckets(plan: AggregatePlan, groups: Mapping[str, Any]) -> Aggregates:
    grid = plan.buckets
    assert grid is not None
    b = np.asarray(groups["kb"], dtype=np.int64)
    nv = np.asarray(groups["nv"], dtype=np.int64)
    if plan.private:
        labels_all = np.asarray([str(v) for v in groups["k0"]], dtype=object)
        labels = np.asarray(sorted(set(labels_all.tolist())), dtype=object)
        pos = {v: i for i, v in enumerate(labels.tolist())}
        idx = np.asarray([pos[v] for v in labels_all.tolist()], dtype=np.int64)
        size = labels.size
        persons = np.zeros(size, dtype=np.int64)
        np.maximum.at(persons, idx, np.asarray(groups["u"], dtype=np.int64))
        shape: tuple[int, ...] = (size,)
    else:
        labels, persons = None, None
        shape = plan.shape
        size = plan.n_cells
        idx = np.zeros(b.size, dtype=np.int64)
        for i, stride in enumerate(plan.strides):
            idx += np.asarray(groups[f"k{i}"], dtype=np.int64) * stride
    sparse = SparseBuckets.build(shape, idx, b, nv, grid.size - 1)
    vals = sparse.rows()
    zero = np.zeros(size)
    return Aggregates(shape, vals.copy(), vals, zero, zero, persons=persons,
                      buckets=sparse, labels=labels)


def combine(stat: str, parts: Mapping[str, Any], lower: float | None = None,
            upper: float | None = None) -> NDArray[Any]:
    """The answer from its (noisy or true) components -- post-processing only: a count
    as integers, a sum as is, a mean ``clamp(mid + S / max(C, 1), lo, hi)``."""
    if stat == "count":
        return np.asarray(parts["count"]).astype(np.int64)
    if stat == "sum":
        return np.asarray(parts["sum"], dtype=np.float64)
    lo, hi = float(lower), float(upper)  # type: ignore[arg-type]
    mid = (lo + hi) / 2
    count = np.asarray(parts["count"], dtype=np.float64)
    sums = np.asarray(parts["centred_sum"], dtype=np.float64)
    return np.clip(mid + sums / np.maximum(count, 1.0), lo, hi)


def component_sources(stat: str, counted_column: bool) -> dict[str, str]:
    """Which aggregate output (``n``, ``nv``, ``s``, ``c``) each component role reads."""
    if stat == "count":
        return {"count": "nv" if counted_column else "n"}
    if stat == "sum":
        return {"sum": "s"}
    return {"count": "nv", "centred_sum": "c"}
