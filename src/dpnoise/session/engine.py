"""The embedded engine: an :class:`~dpnoise.session.aggregation.AggregatePlan` run by DuckDB.

The data set is read once, when the engine opens, into the typed view of
:mod:`dpnoise.session.source` (declared columns only, each of its declared type, missing
values NULL, rows without a person id dropped; DuckDB then locked down).  Queries run on
that view only, so no cell can raise an error: every comparison is DOUBLE against DOUBLE
or a category code against a set of codes, and every literal is a bound parameter.

What is computed -- the missing-value rule, which rows survive contribution bounding, the
exact fixed-point sums -- is defined once, engine-neutrally, in
:mod:`dpnoise.session.aggregation`; this module only writes it as DuckDB SQL (one small method
per plan node).  The Spark engine (:mod:`dpnoise.session.spark`) writes the same plan as
Spark column expressions.

**Missing values** -- one rule, the same in every statistic (and in the sensitivity):
a row counts in ``count`` whatever its values; a missing value is skipped by everything
that reads the column: ``count(col)`` counts non-missing values, ``sum`` adds the
non-missing clamped values, ``mean`` is (non-missing clamped sum) / (non-missing count).
A predicate on a missing value is *unknown* (SQL three-valued logic): the row is
selected neither by ``x > 5`` nor by ``not x > 5`` (only ``x is null`` selects it).
Rows whose GROUP BY key is missing fall in no cell.
"""

from __future__ import annotations

import threading
from typing import Any

from .aggregation import (
    ENCODING_TAG,
    GROUP_TAG,
    AggregatePlan,
    Aggregates,
    CentredSum,
    CodeIn,
    CountPersons,
    CountRows,
    CountValues,
    FixedSum,
    IsMissing,
    Junction,
    Negation,
    NumBetween,
    NumCompare,
    NumIn,
    PowerSum,
    Token,
    TypedPredicate,
    compile_query,
    encoding_parts,
    merge_persons,
    persons_plan,
    scatter,
    text_parts,
)
from .columns import quote_identifier
from .fixed_point import DEFAULT_ROW_CAP, ExactSum, exact_sum
from .query import Query
from .schema import Schema
from .source import UID, VIEW, Source

__all__ = ["DEFAULT_ROW_CAP", "Aggregates", "DuckDBEngine", "Engine", "ExactSum",
           "exact_sum"]


def _hugeint(v: int) -> str:
    return f"CAST('{int(v)}' AS HUGEINT)"


def _clamp(expr: str, lo: int, hi: int) -> str:
    return f"greatest(least({expr}, {_hugeint(hi)}), {_hugeint(lo)})"


def _round_to_grid(expr: str, shift: int) -> str:
    """Round half up onto multiples of 2^shift: an integer (< 2^53) as DOUBLE."""
    return f"CAST(({expr} + {(1 << shift) >> 1}) >> {shift} AS DOUBLE)"


class _SQL:
    """The DuckDB visitor: one method per plan node; literals are bound parameters."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    def lit(self, v: float) -> str:
        key = f"p{len(self.params)}"
        self.params[key] = float(v)
        return f"CAST(${key} AS DOUBLE)"

    def predicate(self, p: TypedPredicate) -> str:
        if isinstance(p, Negation):
            return f"(NOT {self.predicate(p.arg)})"
        if isinstance(p, Junction):
            return "(" + f" {p.op} ".join(self.predicate(a) for a in p.args) + ")"
        c = quote_identifier(p.column)
        if isinstance(p, IsMissing):
            return f"({c} IS {'NOT NULL' if p.negate else 'NULL'})"
        if isinstance(p, CodeIn):
            # a missing value is unknown (NULL) either way, exactly as in SQL
            return (f"({c} IN ({', '.join(map(str, p.codes))}))" if p.codes
                    else f"({c} <> {c})")
        if isinstance(p, NumCompare):
            return f"({c} {p.op} {self.lit(p.value)})"
        if isinstance(p, NumIn):
            vals = ", ".join(map(self.lit, p.values))
            return f"({c} {'NOT IN' if p.negate else 'IN'} ({vals}))"
        assert isinstance(p, NumBetween)
        word = "NOT BETWEEN" if p.negate else "BETWEEN"
        return f"({c} {word} {self.lit(p.low)} AND {self.lit(p.high)})"

    def token(self, t: Token) -> str:
        c = quote_identifier(t.column)
        if t.fixed is None:
            return f"CAST({c} AS BIGINT)"
        lo, hi = self.lit(t.lower), self.lit(t.upper)  # type: ignore[arg-type]
        clamped = f"(CASE WHEN {c} < {lo} THEN {lo} WHEN {c} > {hi} THEN {hi} ELSE {c} END)"
        return f"CAST(floor({clamped} * {self.lit(t.fixed.scale)}) AS BIGINT)"

    def aggregate(self, a: Any, persons: bool = False) -> str:
        if isinstance(a, CountRows):
            return "count(*)"
        if isinstance(a, CountValues):
            return "count(tok)"
        if isinstance(a, CountPersons):
            return "count(DISTINCT __dp_uid)" if persons else "count(*)"
        if isinstance(a, PowerSum):
            pf = a.fixed
            lo_q = a.token.fixed.lo_q
            c = f"(2 * ((tok - {int(lo_q)}) >> {pf.shift}) - {pf.width})"
            term = c if a.power == 1 else f"CAST({c} AS HUGEINT) * CAST({c} AS HUGEINT)"
            total = f"CAST(coalesce(sum(CAST({term} AS HUGEINT)), 0) AS HUGEINT)"
            if a.power == 1:
                lim = pf.rows * pf.width
                return _round_to_grid(_clamp(total, -lim, lim), pf.s1)
            return _round_to_grid(_clamp(total, 0, pf.rows * pf.width ** 2), pf.s2)
        fixed = a.token.fixed
        total = "CAST(coalesce(sum(tok), 0) AS HUGEINT)"
        if isinstance(a, FixedSum):
            lo, hi = fixed.sum_limits
            return _round_to_grid(_clamp(total, lo, hi), fixed.sum_shift)
        assert isinstance(a, CentredSum)
        mid2 = fixed.lo_q + fixed.hi_q
        lim = fixed.centred_limit
        centred = f"2 * {total} - CAST(count(tok) AS HUGEINT) * {_hugeint(mid2)}"
        return _round_to_grid(_clamp(centred, -lim, lim), fixed.mean_shift)

    def plan(self, plan: AggregatePlan) -> str:
        where = self.predicate(plan.where) if plan.where is not None else "TRUE"
        cols = []
        for i, k in enumerate(plan.keys):
            c = quote_identifier(k.column)
            if k.private:
                expr = c
            else:
                expr = f"CAST({c} AS BIGINT)" if k.offset is None else \
                    f"CAST({c} - {self.lit(k.offset)} AS BIGINT)"
            cols.append(f"{expr} AS k{i}")
            where += f" AND {c} IS NOT NULL"
        if plan.token is not None:
            cols.append(f"{self.token(plan.token)} AS tok")
            if plan.values_only:
                where += f" AND {quote_identifier(plan.token.column)} IS NOT NULL"
        if plan.bounding is not None:
            cols.append(f"{UID} AS __dp_uid")
        base = f"SELECT {', '.join(cols) or '1 AS __dp_one'} FROM {VIEW} WHERE {where}"
        if plan.bounding is not None:
            texts = text_parts(plan)

            def part(p: str) -> str:
                if p in texts:
                    return f"'|' || CAST(length({p}) AS VARCHAR) || ':' || {p}"
                return f"'|' || coalesce(CAST({p} AS VARCHAR), 'N')"

            parts = " || ".join(part(p) for p in encoding_parts(plan))
            enc = f"'{ENCODING_TAG}'" + (f" || {parts}" if parts else "")
            b = plan.bounding
            if b.groups is None:
                base = (
                    f"SELECT * EXCLUDE (__dp_enc, __dp_rn) FROM (SELECT *, row_number() "
                    f"OVER (PARTITION BY __dp_uid ORDER BY sha256(__dp_enc), __dp_enc) AS "
                    f"__dp_rn FROM (SELECT *, {enc} AS __dp_enc FROM ({base}))) "
                    f"WHERE __dp_rn <= {int(b.k)}"
                )
            else:
                gparts = " || ".join(part(f"k{i}") for i in range(len(plan.keys)))
                genc = f"'{GROUP_TAG}' || {gparts}"
                base = (
                    f"SELECT * EXCLUDE (__dp_enc, __dp_genc, __dp_rn, __dp_gr) FROM "
                    f"(SELECT *, dense_rank() OVER (PARTITION BY __dp_uid ORDER BY "
                    f"sha256(__dp_genc), __dp_genc) AS __dp_gr, row_number() OVER "
                    f"(PARTITION BY __dp_uid, __dp_genc ORDER BY sha256(__dp_enc), __dp_enc)"
                    f" AS __dp_rn FROM (SELECT *, {enc} AS __dp_enc, {genc} AS __dp_genc "
                    f"FROM ({base}))) "
                    f"WHERE __dp_gr <= {int(b.groups)} AND __dp_rn <= {int(b.per_group)}"  # type: ignore[arg-type]
                )
        keys = [f"k{i}" for i in range(len(plan.keys))]
        if plan.buckets is not None:
            g = plan.buckets
            base = (f"SELECT *, CAST((tok - {int(g.lo_q)} + {(1 << g.shift) - 1}) >> "
                    f"{g.shift} AS BIGINT) AS kb FROM ({base})")
            keys.append("kb")
        persons = plan.bounding is not None
        select = ", ".join([*keys, *(f"{self.aggregate(a, persons)} AS {a.name}"
                                     for a in plan.aggregates)])
        sql = f"SELECT {select} FROM ({base})"
        if keys:
            sql += " GROUP BY " + ", ".join(keys)
        return sql


class DuckDBEngine:
    """A locked-down in-memory DuckDB holding the typed view of one data set."""

    name = "duckdb"

    def __init__(self, data: Any, schema: Schema) -> None:
        import duckdb

        self.schema = schema
        self._lock = threading.Lock()  # one DuckDB connection: one query at a time
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
        self.legacy_fingerprint = self._source.legacy_fingerprint

    def sql(self, q: Query) -> tuple[str, dict[str, Any]]:
        """The one SQL statement for ``q`` (validated against the schema) and its
        bound parameters; it reads only the typed view."""
        v = _SQL()
        return v.plan(compile_query(q, self.schema)), v.params

    def aggregate(self, q: Query) -> Aggregates:
        """Run ``q`` (validated against the schema) and scatter its groups onto the public
        cells.  Nothing here can fail on any content of the data."""
        plan = compile_query(q, self.schema)
        v = _SQL()
        sql = v.plan(plan)
        agg = scatter(plan, self.fetchnumpy(sql, v.params))
        if plan.buckets is not None and plan.private:
            v = _SQL()
            sql = v.plan(persons_plan(plan))
            agg = merge_persons(agg, self.fetchnumpy(sql, v.params))
        return agg

    def fetchnumpy(self, sql: str, params: Any = None) -> dict[str, Any]:
        """One statement on the typed view, its columns as numpy arrays; threads sharing
        the engine take turns (one DuckDB connection runs one query at a time)."""
        with self._lock:
            return self.con.execute(sql, params).fetchnumpy()

    def close(self) -> None:
        self.con.close()
        self._source.close()


#: the historical name of the embedded engine
Engine = DuckDBEngine
