"""Executing a validated :class:`~dpnoise.session.query.Query` with DuckDB (embedded).

Data is read in place: ``.csv``/``.tsv`` via ``read_csv_auto``, ``.parquet`` via
``read_parquet``, ``.duckdb``/``.db`` attached READ_ONLY (table from the schema), or a
mapping of numpy columns registered with DuckDB.  The engine only ever sees queries that
passed :meth:`Query.validate`: identifiers are plain and declared, literals are bound
parameters.

One SQL statement computes, per group, the number of rows, the number of non-NULL values
of the aggregated column and the sum of that column *clamped into its declared bounds*,
after contribution bounding: with a ``user_id`` column only ``max_contributions`` rows per
individual are kept (chosen by a hash of the row, so the choice depends only on that
individual's own rows); rows whose ``user_id`` is NULL (or NaN in a numpy column) have no
owner whose contribution could be bounded and are dropped.  Groups are then scattered
into a dense array over ALL public cells (every declared key, empty cells included;
undeclared keys are dropped), so which cells appear never depends on the data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .query import Query, predicate_sql
from .schema import Schema, check_identifier


@dataclass(frozen=True)
class Aggregates:
    """Dense per-cell aggregates (cells = product of public keys, C order; 1 cell if none)."""

    shape: tuple[int, ...]
    rows: NDArray[np.int64]  # rows per cell (after bounding)
    values: NDArray[np.int64]  # non-NULL values of the column per cell (= rows for COUNT(*))
    sums: NDArray[np.float64]  # sum of clamped values per cell (0 without a column)


def _sql_string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class Engine:
    """A DuckDB connection with the data set exposed as the view ``__dp_source``."""

    def __init__(self, data: Any, schema: Schema) -> None:
        import duckdb

        self.schema = schema
        self._duckdb = duckdb
        self.con = duckdb.connect(":memory:")
        self.con.execute("SET enable_progress_bar = false")  # never draw on the user's terminal
        self._columns: list[str] | None = None
        self.fingerprint = self._attach(data)

    def _attach(self, data: Any) -> str:
        con = self.con
        if isinstance(data, Mapping):
            cols = {check_identifier(str(k)): np.asarray(v) for k, v in data.items()}
            con.register("__dp_arrays", cols)
            con.execute('CREATE VIEW __dp_source AS SELECT * FROM "__dp_arrays"')
            h = hashlib.sha256()
            for k in sorted(cols):
                h.update(k.encode())
                h.update(np.ascontiguousarray(cols[k]).tobytes()
                         if cols[k].dtype != object else repr(cols[k].tolist()).encode())
            return "arrays:" + h.hexdigest()[:16]
        if not isinstance(data, (str, Path)):
            raise ParameterError(
                "data must be a file path (.csv, .parquet, .duckdb) or a mapping of numpy "
                f"columns, got {type(data).__name__}"
            )
        path = Path(data)
        if not path.is_file():
            raise ParameterError(f"data file {str(path)!r} does not exist")
        suffix = path.suffix.lower()
        lit = _sql_string(str(path.resolve()))
        try:
            if suffix in (".csv", ".tsv", ".txt") or path.name.endswith(".csv.gz"):
                con.execute(f"CREATE VIEW __dp_source AS SELECT * FROM read_csv_auto({lit})")
            elif suffix in (".parquet", ".pq"):
                con.execute(f"CREATE VIEW __dp_source AS SELECT * FROM read_parquet({lit})")
            elif suffix in (".duckdb", ".db", ".ddb"):
                con.execute(f"ATTACH {lit} AS __dp_db (READ_ONLY)")
                table = self.schema.table or self._only_table()
                check_identifier(table, what="table")
                con.execute(f'CREATE VIEW __dp_source AS SELECT * FROM __dp_db.main."{table}"')
            else:
                raise ParameterError(
                    f"data file {str(path)!r}: unknown type {suffix!r} (use .csv, .parquet or "
                    ".duckdb)"
                )
            con.execute("SELECT * FROM __dp_source LIMIT 0")
        except self._duckdb.Error as exc:
            raise ParameterError(f"cannot read data file {str(path)!r}: {exc}") from exc
        st = path.stat()
        return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"

    def _only_table(self) -> str:
        rows = self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = '__dp_db'"
        ).fetchall()
        if len(rows) != 1:
            raise ParameterError(
                "the .duckdb file holds several tables: name one with table = \"...\" in the "
                f"schema's [dataset] (found {sorted(r[0] for r in rows)})"
            )
        return str(rows[0][0])

    def columns(self) -> list[str]:
        """Column names of the data (read once: the file is fingerprinted at open too)."""
        if self._columns is None:
            self._columns = [r[0] for r in self.con.execute("DESCRIBE __dp_source").fetchall()]
        return self._columns

    def check_columns(self, q: Query) -> None:
        present = set(self.columns())
        need = q.columns() | ({self.schema.user_id} if self.schema.user_id else set())
        missing = sorted(need - present)
        if missing:
            raise ParameterError(
                f"column(s) {missing} are declared in the schema but absent from the data "
                f"(data has {sorted(present)})"
            )

    def sql(self, q: Query) -> tuple[str, dict[str, Any]]:
        """The one SQL statement for ``q`` and its bound parameters."""
        s = self.schema
        params: dict[str, Any] = {}
        where = predicate_sql(q.where, params) if q.where is not None else "TRUE"
        needed = sorted(q.columns() | ({s.user_id} if s.user_id else set()))
        cols = ", ".join(f'"{c}"' for c in needed) or "1 AS __dp_one"
        base = f"SELECT {cols} FROM __dp_source WHERE {where}"
        for g in q.group_by:
            base += f' AND "{g}" IS NOT NULL'
        if s.user_id:
            # rows without an owner are dropped: DuckDB puts all NULL ids in ONE partition,
            # so keeping k of them would let removing one such row swap another row in
            # (a sum could move by hi - lo > max(|lo|, |hi|), a histogram by 2 cells)
            base += f' AND "{s.user_id}" IS NOT NULL'
            k = s.max_contributions
            order = ", ".join(f'"{c}"' for c in needed)
            base = (
                f"SELECT * EXCLUDE (__dp_rn) FROM (SELECT *, row_number() OVER "
                f'(PARTITION BY "{s.user_id}" ORDER BY hash({order}), {order}) AS __dp_rn '
                f"FROM ({base})) WHERE __dp_rn <= {int(k)}"
            )
        keys = []
        for g in q.group_by:
            col = s.column(g)
            keys.append(f'CAST("{g}" AS VARCHAR)' if col.categories is not None
                        else f'CAST("{g}" AS DOUBLE)')
        if q.column is not None:
            col = s.numeric(q.column) if q.stat != "count" else s.column(q.column)
            cnt = f'count("{q.column}")'
            if col.is_numeric:
                params["lo"], params["hi"] = col.lower, col.upper
                total = f'coalesce(sum(least(greatest(CAST("{q.column}" AS DOUBLE), $lo), $hi)), 0)'
            else:
                total = "0.0"
        else:
            cnt, total = "count(*)", "0.0"
        select = ", ".join([*(f"{k} AS k{i}" for i, k in enumerate(keys)),
                            "count(*) AS n", f"{cnt} AS nv", f"{total} AS s"])
        sql = f"SELECT {select} FROM ({base})"
        if keys:
            sql += " GROUP BY " + ", ".join(f"k{i}" for i in range(len(keys)))
        return sql, params

    def aggregate(self, q: Query) -> Aggregates:
        """Run ``q`` (already validated) and scatter its groups onto the public cells."""
        self.check_columns(q)
        sql, params = self.sql(q)
        try:
            res = self.con.execute(sql, params).fetchnumpy()
        except self._duckdb.Error as exc:
            raise ParameterError(f"query could not be executed on the data: {exc}") from exc
        shape = tuple(self.schema.column(g).n_keys() for g in q.group_by)
        size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        n = np.asarray(res["n"], dtype=np.int64)
        nv = np.asarray(res["nv"], dtype=np.int64)
        s = np.asarray(res["s"], dtype=np.float64)
        if not q.group_by:
            return Aggregates((), n[:1].copy(), nv[:1].copy(), s[:1].copy())
        idx = np.zeros(n.size, dtype=np.int64)
        keep = np.ones(n.size, dtype=bool)
        for i, g in enumerate(q.group_by):
            col = self.schema.column(g)
            raw = res[f"k{i}"]
            if col.categories is not None:
                lookup = {str(c): j for j, c in enumerate(col.categories)}
                pos = np.fromiter((lookup.get(v, -1) for v in raw), dtype=np.int64,
                                  count=len(raw))
            else:
                v = np.asarray(raw, dtype=np.float64)
                assert col.lower is not None and col.upper is not None
                ok = (v == np.floor(v)) & (v >= col.lower) & (v <= col.upper)
                pos = np.where(ok, v - col.lower, -1).astype(np.int64)
            keep &= pos >= 0
            idx = idx * shape[i] + np.maximum(pos, 0)
        idx = idx[keep]
        rows = np.bincount(idx, weights=n[keep], minlength=size).astype(np.int64)
        vals = np.bincount(idx, weights=nv[keep], minlength=size).astype(np.int64)
        sums = np.bincount(idx, weights=s[keep], minlength=size)
        return Aggregates(shape, rows, vals, sums)

    def close(self) -> None:
        self.con.close()
