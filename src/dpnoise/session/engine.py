"""Executing a validated :class:`~dpnoise.session.query.Query` with DuckDB (embedded).

The data set is read once, when the engine opens, into the typed view of
:mod:`dpnoise.session.source` (declared columns only, each of its declared type, missing
values NULL, rows without a person id dropped; DuckDB then locked down).  Queries run on
that view only, so no cell can raise an error: every comparison is DOUBLE against DOUBLE
or a category code against a set of codes, and every literal is a bound parameter.

**Missing values** -- one rule, the same in every statistic (and in the sensitivity):
a row counts in ``count`` whatever its values; a missing value is skipped by everything
that reads the column: ``count(col)`` counts non-missing values, ``sum`` adds the
non-missing clamped values, ``mean`` is (non-missing clamped sum) / (non-missing count).
A predicate on a missing value is *unknown* (SQL three-valued logic): the row is
selected neither by ``x > 5`` nor by ``not x > 5`` (only ``x is null`` selects it).
Rows whose GROUP BY key is missing fall in no cell.

**Contribution bounding**: with a ``user_id`` only ``max_contributions`` rows per person
are kept among the rows a query selects (chosen by a hash of the row's typed values, so
the choice depends only on that person's own rows).

**Exact sums** (Casacuberta, Shoemate, Vadhan and Wagaman, "Widespread underestimation of
sensitivity in differentially private libraries and how to fix it", ACM CCS 2022): a
floating-point sum depends on the order of addition, and its rounding can move one
person's influence past the calibrated sensitivity.  Here every clamped value ``x`` in
``[lo, hi]`` enters as the integer ``q = floor(x * 2^s)`` with ``2^s`` chosen so that
``|q| <= 2^52`` (``s = 52 - E``, ``max(|lo|, |hi|) <= 2^E``); the ``q`` are summed exactly as
128-bit integers (DuckDB HUGEINT) -- a result independent of order and of parallelism --
and the exact sum is clamped to what ``R`` rows can reach (``R`` = the public
``max_rows``, else 2^36) and rounded ONCE onto a public grid of ``2^g`` units (round half
up: ``floor((S + 2^(g-1)) / 2^g)``, a monotone map that commutes with shifts by whole grid
steps), the finest grid on which every such sum is an exact double.  One row moves ``S``
by at most ``U = max(|lo_q|, |hi_q|)`` units, and clamping is 1-Lipschitz, so one row
moves the released truth by at most ``ceil(U / 2^g)`` grid steps: that --
``max(|lo|, |hi|)`` rounded up to the grid (relatively at most ``R·2^-52`` larger: 2^-16
without ``max_rows``, 2^-39 with ``max_rows = 5000``) -- is the unit the sensitivity is
calibrated with (:func:`exact_sum`).  The mean's centred sum ``Σ(2q - lo_q - hi_q)`` is
handled the same way with ``U = hi_q - lo_q``.  No floating-point sum is ever formed.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .query import Between, BoolOp, Compare, InList, IsNull, Not, Predicate, Query
from .schema import Column, Schema, quote_identifier
from .source import UID, VIEW, Source

#: rows per cell for which the exact sum is guaranteed to convert to a double exactly
#: when the schema declares no max_rows (larger sums are clamped to that many rows' worth)
DEFAULT_ROW_CAP = 2**36


@dataclass(frozen=True)
class ExactSum:
    """The fixed-point plan of one bounded column (see the module docstring)."""

    scale_exp: int  # q = floor(clamp(x) * 2^scale_exp)
    lo_q: int
    hi_q: int
    rows: int  # the sums are clamped to what this many rows can reach
    sum_shift: int  # the released sum is S rounded to multiples of 2^sum_shift units
    sum_unit: float  # per-row bound of the released sum (real units, on its grid)
    mean_shift: int  # centred sum, in units of 2^-(scale_exp + 1)
    mean_unit: float

    @property
    def sum_grid(self) -> float:
        return math.ldexp(1.0, self.sum_shift - self.scale_exp)

    @property
    def mean_grid(self) -> float:
        return math.ldexp(1.0, self.mean_shift - self.scale_exp - 1)


def _shift_and_unit(u: int, rows: int) -> tuple[int, int]:
    # the finest grid on which rows * u units is still an exact double (< 2^53 steps)
    shift = max(0, u.bit_length() + rows.bit_length() - 53)
    return shift, max(1, -(-u >> shift)) << shift  # ceil(u / 2^shift) grid steps, >= 1


def exact_sum(col: Column, max_rows: int | None = None) -> ExactSum:
    """Resolution, grids and per-row units of the exact sums of ``col``.

    The grid is the finest on which a sum of ``max_rows`` (default 2^36) rows at the
    bound is an exact double: about 2^-(53 - log2 rows) of the per-row bound.  The exact
    sum is clamped to what that many rows can reach (a 1-Lipschitz, monotone map, so the
    sensitivity is unchanged), so the conversion to a double is always exact."""
    if col.lower is None or col.upper is None:
        raise ParameterError(f"column {col.name!r} has no bounds to sum")
    lo, hi = float(col.lower), float(col.upper)
    e = math.frexp(max(abs(lo), abs(hi)))[1]  # max(|lo|, |hi|) < 2^e
    k = 52 - e
    lo_q, hi_q = math.floor(math.ldexp(lo, k)), math.floor(math.ldexp(hi, k))
    rows = DEFAULT_ROW_CAP if max_rows is None else int(max_rows)
    s_shift, s_unit = _shift_and_unit(max(abs(lo_q), abs(hi_q)), rows)
    m_shift, m_unit = _shift_and_unit(hi_q - lo_q, rows)
    return ExactSum(k, lo_q, hi_q, rows, s_shift, math.ldexp(float(s_unit), -k),
                    m_shift, math.ldexp(float(m_unit), -k - 1))


def _hugeint(v: int) -> str:
    return f"CAST('{int(v)}' AS HUGEINT)"


def _clamp(expr: str, lo: int, hi: int) -> str:
    return f"greatest(least({expr}, {_hugeint(hi)}), {_hugeint(lo)})"


@dataclass(frozen=True)
class Aggregates:
    """Dense per-cell aggregates (cells = product of public keys, C order; 1 cell if none)."""

    shape: tuple[int, ...]
    rows: NDArray[np.int64]  # rows per cell (after bounding)
    values: NDArray[np.int64]  # non-missing values of the column per cell (= rows without)
    sums: NDArray[np.float64]  # exact sum of clamped values, on its grid (0 without column)
    centred: NDArray[np.float64]  # exact Σ(x - mid) of clamped values, on its grid


_PY_OPS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}


def _category_codes(col: Column, test: Any) -> list[int]:
    assert col.categories is not None
    return [i for i, c in enumerate(col.categories) if test(c)]


def typed_predicate_sql(p: Predicate, schema: Schema, params: dict[str, Any]) -> str:
    """SQL for a predicate over the typed view: numeric columns against DOUBLE parameters,
    categorical columns as a set of category codes (computed here from the public
    categories), so that nothing can fail whatever the data holds."""

    def lit(v: Any) -> str:
        key = f"p{len(params)}"
        params[key] = float(v)
        return f"CAST(${key} AS DOUBLE)"

    if isinstance(p, Not):
        return f"(NOT {typed_predicate_sql(p.arg, schema, params)})"
    if isinstance(p, BoolOp):
        return "(" + f" {p.op} ".join(typed_predicate_sql(a, schema, params)
                                      for a in p.args) + ")"
    col = schema.column(p.column)
    c = quote_identifier(p.column)
    if isinstance(p, IsNull):
        return f"({c} IS {'NOT NULL' if p.negate else 'NULL'})"
    if col.categories is not None:
        def key(v: Any) -> Any:
            return v if isinstance(v, str) else float(v)

        if isinstance(p, Compare):
            op = _PY_OPS[p.op]
            codes = _category_codes(col, lambda x: op(key(x), key(p.value)))
        elif isinstance(p, InList):
            vals = {key(v) for v in p.values}
            codes = _category_codes(col, lambda x: (key(x) in vals) != p.negate)
        else:
            assert isinstance(p, Between)
            codes = _category_codes(
                col, lambda x: (key(p.low) <= key(x) <= key(p.high)) != p.negate)
        # a missing value is unknown (NULL) either way, exactly as in SQL
        return f"({c} IN ({', '.join(map(str, codes))}))" if codes else f"({c} <> {c})"
    if isinstance(p, Compare):
        return f"({c} {p.op} {lit(p.value)})"
    if isinstance(p, InList):
        return f"({c} {'NOT IN' if p.negate else 'IN'} ({', '.join(map(lit, p.values))}))"
    assert isinstance(p, Between)
    word = "NOT BETWEEN" if p.negate else "BETWEEN"
    return f"({c} {word} {lit(p.low)} AND {lit(p.high)})"


class Engine:
    """A locked-down in-memory DuckDB holding the typed view of one data set."""

    def __init__(self, data: Any, schema: Schema) -> None:
        import duckdb

        self.schema = schema
        self.con = duckdb.connect(":memory:", config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
        })
        try:
            self.con.execute("SET enable_progress_bar = false")  # never draw on a terminal
            self._source = Source(self.con, data, schema)
        except BaseException:
            self.con.close()
            raise
        self.fingerprint = self._source.fingerprint

    def sql(self, q: Query) -> tuple[str, dict[str, Any]]:
        """The one SQL statement for ``q`` (validated against the schema) and its
        bound parameters; it reads only the typed view."""
        s = self.schema
        params: dict[str, Any] = {}
        where = typed_predicate_sql(q.where, s, params) if q.where is not None else "TRUE"
        needed = [quote_identifier(c) for c in sorted(q.columns())]
        if s.user_id:
            needed.append(UID)
        cols = ", ".join(needed) or "1 AS __dp_one"
        base = f"SELECT {cols} FROM {VIEW} WHERE {where}"
        for g in q.group_by:
            base += f" AND {quote_identifier(g)} IS NOT NULL"
        if s.user_id:
            order = ", ".join(needed)
            base = (
                f"SELECT * EXCLUDE (__dp_rn) FROM (SELECT *, row_number() OVER "
                f"(PARTITION BY {UID} ORDER BY hash({order}), {order}) AS __dp_rn "
                f"FROM ({base})) WHERE __dp_rn <= {int(s.max_contributions)}"
            )
        keys = []
        for g in q.group_by:
            col = s.column(g)
            if col.categories is not None:
                keys.append(f"CAST({quote_identifier(g)} AS BIGINT)")
            else:
                keys.append(f"CAST({quote_identifier(g)} - CAST({col.lower!r} AS DOUBLE) "
                            "AS BIGINT)")
        total = centred = "CAST(0 AS DOUBLE)"
        if q.column is not None:
            c = quote_identifier(q.column)
            cnt = f"count({c})"
            col = s.column(q.column)
            if col.is_numeric and q.stat != "count":
                e = exact_sum(col, s.max_rows)
                params["lo"], params["hi"] = float(col.lower), float(col.upper)  # type: ignore[arg-type]
                params["scale"] = math.ldexp(1.0, e.scale_exp)
                clamped = (f"(CASE WHEN {c} < $lo THEN $lo WHEN {c} > $hi THEN $hi "
                           f"ELSE {c} END)")
                sq = f"CAST(coalesce(sum(CAST(floor({clamped} * $scale) AS BIGINT)), 0) " \
                     "AS HUGEINT)"
                sq = _clamp(sq, e.rows * min(e.lo_q, 0), e.rows * max(e.hi_q, 0))
                total = (f"CAST(({sq} + {(1 << e.sum_shift) >> 1}) >> {e.sum_shift} "
                         "AS DOUBLE)")
                mid2 = e.lo_q + e.hi_q
                width = e.rows * (e.hi_q - e.lo_q)
                cq = _clamp(f"2 * CAST(coalesce(sum(CAST(floor({clamped} * $scale) AS BIGINT))"
                            f", 0) AS HUGEINT) - CAST({cnt} AS HUGEINT) * {_hugeint(mid2)}",
                            -width, width)
                centred = (f"CAST(({cq} + {(1 << e.mean_shift) >> 1}) >> {e.mean_shift} "
                           "AS DOUBLE)")
        else:
            cnt = "count(*)"
        select = ", ".join([*(f"{k} AS k{i}" for i, k in enumerate(keys)),
                            "count(*) AS n", f"{cnt} AS nv", f"{total} AS s",
                            f"{centred} AS c"])
        sql = f"SELECT {select} FROM ({base})"
        if keys:
            sql += " GROUP BY " + ", ".join(f"k{i}" for i in range(len(keys)))
        return sql, params

    def aggregate(self, q: Query) -> Aggregates:
        """Run ``q`` (validated against the schema) and scatter its groups onto the public
        cells.  Nothing here can fail on any content of the data."""
        sql, params = self.sql(q)
        res = self.con.execute(sql, params).fetchnumpy()
        shape = tuple(self.schema.column(g).n_keys() for g in q.group_by)
        size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        n = np.asarray(res["n"], dtype=np.int64)
        nv = np.asarray(res["nv"], dtype=np.int64)
        s = np.asarray(res["s"], dtype=np.float64)
        c = np.asarray(res["c"], dtype=np.float64)
        sum_grid = mean_grid = 1.0
        if q.column is not None and self.schema.column(q.column).is_numeric \
                and q.stat != "count":
            e = exact_sum(self.schema.column(q.column), self.schema.max_rows)
            sum_grid, mean_grid = e.sum_grid, e.mean_grid
        idx = np.zeros(n.size, dtype=np.int64)
        for i in range(len(q.group_by)):
            idx = idx * shape[i] + np.asarray(res[f"k{i}"], dtype=np.int64)
        rows = np.zeros(size, dtype=np.int64)
        vals = np.zeros(size, dtype=np.int64)
        sums = np.zeros(size, dtype=np.float64)
        cent = np.zeros(size, dtype=np.float64)
        rows[idx], vals[idx] = n, nv
        sums[idx], cent[idx] = s * sum_grid, c * mean_grid  # powers of two: exact
        return Aggregates(shape, rows, vals, sums, cent)

    def close(self) -> None:
        self.con.close()
        self._source.close()
