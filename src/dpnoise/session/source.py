"""Reading a data set into the typed, schema-defined view -- the only thing queries see.

The rule of the custodian path: *the only data-dependent thing a release emits is its
noisy answer*.  So the data is read ONCE, when the session opens, into an in-memory
DuckDB table ``__dp_view`` that holds exactly the declared columns, each converted to its
declared type by a conversion that cannot fail, plus the person id; nothing else of the
file is visible afterwards.  From then on no cell can raise an error or appear in a
message, and every query runs on columns of known types.

**Text form.**  Every raw value is first turned into text: ``TRY_CAST(value AS VARCHAR)``
(DuckDB prints a DOUBLE with the shortest decimal that round-trips, an integer or DECIMAL
exactly; a value with no text form is NULL), then stripped of ASCII whitespace (space,
``\\t``, ``\\n``, ``\\v``, ``\\f``, ``\\r``) at both ends.  CSV files are read with every
column as VARCHAR, so the text is the cell as written: RFC 4180 (IETF, "Common Format and
MIME Type for Comma-Separated Values (CSV) Files", 2005) -- quoted fields holding the
delimiter, doubled quotes or line breaks in any column, LF or CRLF, a UTF-8 byte-order mark
ignored, cells of any size (DuckDB's serial scanner is used when the parallel one refuses
the file).

**Text -> number** (defined once here; another engine must implement the same): the
stripped text must fully match ``[+-]?(D+.?D*|.D+)([eE][+-]?D+)?`` (D an ASCII digit; no
``inf``/``nan`` words, no hex, no digit separators, no thousands commas); it is then
converted to the nearest double (DuckDB ``TRY_CAST(text AS DOUBLE)``, correctly rounded);
a result that is not finite (``1e400``) is missing.

**Typed columns, the same rule without the text** (the text round trip cost
~1 µs per cell, 10 s for 10^7 rows x 2 columns).  A raw DOUBLE's text is the shortest
decimal that reads back to the same double, so the rule gives the value itself when it is
finite and missing otherwise; a raw integer of a type in :data:`DIRECT_NUMBER`, its exact
decimal read back correctly rounded, i.e. the value cast to DOUBLE.  For such columns read
only as numbers (not the person id, not a text column, no string categories) the view is
built from those expressions directly; tests/test_typed_view.py checks them bit for bit
against the text path on random bit patterns and boundary values.

**Per declared type** (a value that fails its test is *missing*, i.e. NULL in the view):

* numeric with bounds: the number (finite; NOT clamped here -- sums clamp);
* integer key ``[lower, upper]``: the number, if it is an integer inside the range;
* text (``text = true``, keys not public): the stripped text; missing if empty;
* categorical: the index of the declared category it equals -- text equal to a string
  category, or (numeric categories) a number equal to the category's value;
* person id (``user_id``): the stripped text; missing if NULL, empty, or one of
  ``nan``, ``+nan``, ``-nan`` in any letter case.  Rows whose person id is missing have no
  owner whose contribution could be bounded and are dropped from the view (for every
  input format alike: csv, parquet, duckdb, numpy).

**Lockdown.**  The file is opened once by this process (``os.open``; the path is never
globbed, so a name containing ``*?[]`` is that file) and DuckDB is handed ``/dev/fd/N``
of that descriptor, the only path in ``allowed_paths`` while ``enable_external_access``
is already off -- a ``.duckdb`` view or generated column that reads another file fails.
``.duckdb`` files must not carry an un-checkpointed ``.wal``; DuckDB attaches a file by
its resolved name (and derives the ``.wal`` name from it, mangling ``?``), so it is given
a private copy of the bytes read through the descriptor, attached READ_ONLY, and only a
BASE TABLE without generated columns is read (views and table macros are refused).
Extensions are never installed or auto-loaded.  After the view is built the source is
detached and the configuration locked (the descriptor stays open while the engine lives,
so ``/dev/fd/N`` -- which DuckDB does not let us remove from ``allowed_paths`` -- can only
ever name the file that was read; no SQL the engine runs reads a file any more).  The
fingerprint is the SHA-256 of the bytes read through that same descriptor; the file's
identity (device, inode, size, mtime) is checked again after the read, so a file swapped
or modified during the read is refused.

**Errors.**  Anything that goes wrong while reading is reported with a fixed message that
names the file and its format but never the reader's own text (DuckDB quotes the line).
Whether a file parses is a property of the whole file, fixed before any query; it does
not depend on any query and charges nothing.

Why this file is long (~600 lines): every input format (csv, parquet, duckdb, DataFrames)
goes through the same lock-down and typed-view code, which must be read as one piece.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParameterError
from .columns import Column, quote_identifier
from .files import absent_message, copy_fd, csv_header, open_regular, withheld
from .files import sha256_fd as _sha256_fd  # a module global: tests replace it
from .schema import Schema

NUMBER_REGEX = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
_WS = "chr(32) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)"
_MISSING_IDS = ("", "nan", "+nan", "-nan")
#: the serial csv scanner's record limit: 1 TiB (DuckDB allocates by content, not by it)
CSV_MAX_RECORD = 1 << 40
VIEW = "__dp_view"
UID = "__dp_uid"

CSV_SUFFIXES = (".csv", ".tsv", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")
DUCKDB_SUFFIXES = (".duckdb", ".db", ".ddb")


def sql_string(s: str) -> str:
    if "\x00" in s:
        raise ParameterError("a path or name must not contain a NUL character")
    return "'" + s.replace("'", "''") + "'"


def text_sql(expr: str) -> str:
    """The stripped text form of any raw value (never fails)."""
    return f"trim(TRY_CAST({expr} AS VARCHAR), {_WS})"


def number_sql(text: str) -> str:
    """Text -> finite double or NULL (never fails); see the module docstring."""
    v = f"TRY_CAST({text} AS DOUBLE)"
    return (f"(CASE WHEN regexp_full_match({text}, {sql_string(NUMBER_REGEX)}) "
            f"AND isfinite({v}) THEN {v} END)")


#: raw types whose value -> text -> number is computed without the text: the text
#: DuckDB writes for a DOUBLE is the shortest one that reads back to the same double
#: (so the rule gives the value itself when finite, else missing), and for these integer
#: types the exact decimal, read back correctly rounded -- the same double as a cast.
#: tests/test_typed_view.py checks both on random bit patterns against the text path.
#: Not listed (they go through the text): FLOAT (its text is the shortest FLOAT text,
#: read back as a different double), DECIMAL, HUGEINT, UBIGINT, VARCHAR, everything else.
DIRECT_NUMBER = frozenset({"DOUBLE", "BIGINT", "INTEGER", "SMALLINT", "TINYINT",
                           "UINTEGER", "USMALLINT", "UTINYINT"})


def direct_number_sql(value: str, raw_type: str) -> str:
    """``number_sql(text_sql(value))`` for a raw value of a type in DIRECT_NUMBER."""
    if raw_type == "DOUBLE":
        return f"(CASE WHEN isfinite({value}) THEN {value} END)"
    return f"CAST({value} AS DOUBLE)"


def _needs_text(schema: Schema, header: str) -> bool:
    """Whether the text form of ``header``'s values is read (not only its number): the
    person id, a text column, or string categories."""
    if header == schema.user_header():
        return True
    return any(c.header == header and (c.text or (c.categories is not None and any(
        isinstance(v, str) for v in c.categories))) for c in schema.columns.values())


def _typed_sql(col: Column, text: str, number: str) -> str:
    if col.text:  # a private key: the stripped text, missing when empty
        return f"nullif({text}, '')"
    if col.categories is not None:
        arms = []
        for i, c in enumerate(col.categories):
            if isinstance(c, str):
                arms.append(f"WHEN {text} = {sql_string(c)} THEN {i}")
            else:
                arms.append(f"WHEN {number} = CAST({float(c)!r} AS DOUBLE) THEN {i}")
        return f"CAST((CASE {' '.join(arms)} END) AS INTEGER)"
    if col.integer:
        return (f"(CASE WHEN {number} = floor({number}) AND {number} BETWEEN "
                f"CAST({col.lower!r} AS DOUBLE) AND CAST({col.upper!r} AS DOUBLE) "
                f"THEN {number} END)")
    return number


class Source:
    """Opens ``data`` into ``con`` as the typed view; ``fingerprint`` names what was read
    (``legacy_fingerprint``: a file's fingerprint as ledgers stored it before, with the
    file's size; only looked up, for replay, never stored)."""

    legacy_fingerprint: str | None = None

    def __init__(self, con: Any, data: Any, schema: Schema) -> None:
        import duckdb

        self.con = con
        self.schema = schema
        self.fd: int | None = None
        self._error = duckdb.Error
        # exact headers needed: declared columns' sources and the person id
        self.needed = sorted({c.header for c in schema.columns.values()}
                             | ({schema.user_header()} - {None}))  # type: ignore[arg-type]
        try:
            kind = frame_kind(data)
            if kind == "records":
                self.fingerprint = self._arrays({n: data[n] for n in data.dtype.names})
            elif kind == "spark":
                raise ParameterError(
                    "data is a pyspark DataFrame: open the session with engine=\"spark\"")
            elif kind is not None:
                self.fingerprint = self._frame(data, kind)
            elif isinstance(data, Mapping):
                self.fingerprint = self._arrays(data)
            elif isinstance(data, (str, Path)):
                self.fingerprint = self._file(Path(data))
            else:
                raise ParameterError(
                    "data must be a file path (.csv, .parquet, .duckdb), a pandas or polars "
                    "DataFrame, an Arrow table, a numpy record array or a mapping of numpy "
                    f"columns, got {type(data).__name__}"
                )
            self._build_view()
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the data file's descriptor (kept open so that ``/dev/fd/N``, which stays in
        DuckDB's allowed_paths -- they cannot be changed once external access is off --
        names the file that was read and never another one)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    # ------------------------------------------------------------------ inputs
    def _check_headers(self, headers: list[str], where: str) -> dict[str, str]:
        """Map each needed header to its position name ``c<i>``; refuse absent/duplicates."""
        missing = [h for h in self.needed if h not in headers]
        if missing:
            raise ParameterError(absent_message(missing, where))
        dup = sorted({h for h in self.needed if headers.count(h) > 1})
        if dup:
            raise ParameterError(f"column(s) {dup} appear more than once in {where}")
        return {h: f"c{headers.index(h)}" for h in self.needed}

    def _arrays(self, data: Mapping[Any, Any]) -> str:
        cols: dict[str, np.ndarray] = {}
        for k, v in data.items():
            name = str(k)
            quote_identifier(name)
            # a masked entry is missing (np.asarray would keep the value under the mask)
            a = np.ma.asarray(v).astype(object).filled(None) if np.ma.is_masked(v) \
                else np.asarray(v)
            if a.ndim != 1:
                raise ParameterError(f"data column {name!r} must be one-dimensional")
            cols[name] = native_column(a) if a.dtype.kind in "biufU" else _text_array(a)
        sizes = {a.size for a in cols.values()}
        if len(sizes) > 1:
            raise ParameterError("data columns must all have the same length")
        names = list(cols)
        self._raw_names = self._check_headers(names, "the data")
        h = hashlib.sha256()
        for k in sorted(cols):
            a = cols[k]
            h.update(k.encode() + b"\x00" + str(a.dtype).encode() + b"\x00")
            h.update(np.ascontiguousarray(a).tobytes() if a.dtype != object
                     else repr(a.tolist()).encode())
        reg = {f"c{i}": cols[n] for i, n in enumerate(names)}
        try:
            self.con.register("__dp_arrays", reg)
            pick = ", ".join(f"c{names.index(n)}" for n in self.needed) or "1 AS c_one"
            self.con.execute(f"CREATE TEMP TABLE __dp_raw AS SELECT {pick} FROM __dp_arrays")
            self.con.unregister("__dp_arrays")
        except self._error:
            raise ParameterError(
                "the data columns could not be read (use numpy arrays of numbers or strings; "
                "the reader's message is withheld because it may quote the data)"
            ) from None
        return "arrays:" + h.hexdigest()[:16]

    def _frame(self, data: Any, kind: str) -> str:
        """A pandas / polars DataFrame or an Arrow table, scanned in place by DuckDB.

        Only the needed columns are handed over (zero-copy where the library allows it).
        A pandas ``object`` column (mixed Python values) is turned into text element by
        element, exactly as a numpy object column is, so no value can make the scan fail
        on some rows only; every other dtype (numbers, nullable numbers, strings,
        categoricals) is scanned as it is and then goes through the same typed view."""
        if kind == "polars":
            data = data.to_arrow()  # zero-copy for numeric and string columns
            kind = "arrow"
        if kind == "arrow":
            headers = [str(n) for n in data.schema.names]
        else:
            headers = [str(c) for c in data.columns]
        names = self._check_headers(headers, f"the {kind} data")
        if kind == "arrow":
            frame = data.select([headers.index(h) for h in self.needed]).rename_columns(
                [names[h] for h in self.needed])
            if frame.num_columns == 0:
                import pyarrow as pa  # present: the object is an Arrow table

                frame = pa.table({"c_one": pa.array([1] * data.num_rows, pa.int8())})
        else:
            import pandas as pd  # present: the object is a pandas DataFrame

            cols = {}
            for h in self.needed:
                series = data.iloc[:, headers.index(h)]
                categorical = isinstance(series.dtype, pd.CategoricalDtype)
                if series.dtype == object or (categorical and not all(
                        isinstance(c, str) for c in series.cat.categories)):
                    # mixed Python values, or categories that are not text (DuckDB
                    # ENUMs are): the same text form as a numpy object column
                    series = pd.Series(_text_array(series.to_numpy(dtype=object)),
                                       dtype=object)
                elif isinstance(series.dtype, np.dtype) and series.dtype.kind in "biufU":
                    native = native_column(series.to_numpy())
                    if native.dtype != series.dtype:  # byte-swapped or long double only
                        series = pd.Series(native)
                cols[names[h]] = series.reset_index(drop=True)
            frame = pd.DataFrame(cols) if cols else pd.DataFrame(
                {"c_one": np.ones(len(data), dtype=np.int8)})
        pick = ", ".join(names[h] for h in self.needed) or "1 AS c_one"
        try:
            self.con.register("__dp_frame", frame)
            self.con.execute(f"CREATE TEMP TABLE __dp_raw AS SELECT {pick} FROM __dp_frame")
            self.con.unregister("__dp_frame")
            cols_sql = ", ".join(names[h] for h in self.needed) or "1"
            n, fp = self.con.execute(
                f"SELECT count(*), coalesce(sum(CAST(hash({cols_sql}) AS HUGEINT)), 0) "
                "FROM __dp_raw").fetchone()
        except self._error:
            raise ParameterError(
                f"the {kind} data could not be read (the reader's message is withheld "
                "because it may quote the data)"
            ) from None
        self._raw_names = names
        digest = hashlib.sha256(f"{kind}:{headers}:{n}:{fp}".encode()).hexdigest()
        return f"{kind}:{digest[:16]}"

    def _file(self, path: Path) -> str:
        name = path.name.lower()
        if name.endswith(".csv.gz") or name.endswith(".tsv.gz"):
            fmt, gz = "csv", True
        elif path.suffix.lower() in CSV_SUFFIXES:
            fmt, gz = "csv", False
        elif path.suffix.lower() in PARQUET_SUFFIXES:
            fmt, gz = "parquet", False
        elif path.suffix.lower() in DUCKDB_SUFFIXES:
            fmt, gz = "duckdb", False
        else:
            raise ParameterError(
                f"data file {str(path)!r}: unknown type {path.suffix!r} (use .csv, .tsv, "
                ".csv.gz, .parquet or .duckdb)"
            )
        if fmt != "duckdb" and self.schema.table is not None:
            raise ParameterError(
                f"table = {self.schema.table!r} names a table inside a .duckdb file; data "
                f"file {str(path)!r} is a {fmt} file (drop --table / the schema's table)"
            )
        fd = open_regular(path, "data file")
        ok = False
        try:
            before = os.fstat(fd)
            digest = _sha256_fd(fd)
            fd_path = f"/dev/fd/{fd}"
            if not os.path.exists(fd_path):  # pragma: no cover - every supported OS has it
                raise ParameterError("reading data files needs /dev/fd (Linux, macOS, BSD)")
            con = self.con
            if fmt == "duckdb":
                if os.path.exists(str(path) + ".wal"):
                    raise ParameterError(
                        f"data file {str(path)!r} has an un-checkpointed write-ahead log "
                        "(.wal): run CHECKPOINT on it first"
                    )
                # DuckDB attaches by the resolved NAME (and derives the .wal name from it,
                # mangling '?'), so it is given a private copy of the descriptor's bytes
                with tempfile.TemporaryDirectory(prefix="dpnoise-") as tmp:
                    copy = os.path.join(tmp, "data.duckdb")
                    copy_fd(fd, copy)
                    con.execute("SET allowed_paths = [" + ", ".join(
                        map(sql_string, (copy, copy + ".wal"))) + "]")
                    con.execute("SET enable_external_access = false")
                    self._duckdb(copy, path)
            else:
                con.execute(f"SET allowed_paths = [{sql_string(fd_path)}]")
                con.execute("SET enable_external_access = false")
                if fmt == "csv":
                    self._csv(fd, fd_path, path, gz, tsv=".tsv" in name)
                else:
                    self._parquet(fd_path, path)
            after = os.fstat(fd)
            ident = (before.st_dev, before.st_ino, before.st_size, before.st_mtime_ns)
            if (after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns) != ident:
                raise ParameterError(f"data file {str(path)!r} changed while it was read")
            ok = True
        finally:
            if ok:
                self.fd = fd
            else:
                os.close(fd)
        # the fingerprint stored in the ledger is the hash alone (the byte size would
        # roughly give the row count); the older form is kept to find older releases
        self.legacy_fingerprint = f"{fmt}:{digest[:32]}:{before.st_size}"
        return f"{fmt}:{digest[:32]}"

    def _csv(self, fd: int, fd_path: str, path: Path, gz: bool, tsv: bool) -> None:
        delim = "\t" if tsv else ","
        headers = csv_header(fd, gz, delim, path)
        names = self._check_headers(headers, f"the header of {str(path)!r}")
        columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(headers))) + "}"
        pick = ", ".join(names[h] for h in self.needed) or "1 AS c_one"
        common = (f"{sql_string(fd_path)}, header = true, auto_detect = false, "
                  f"delim = {sql_string(delim)}, quote = '\"', escape = '\"', "
                  f"columns = {columns}, null_padding = true, strict_mode = false, "
                  f"compression = {sql_string('gzip' if gz else 'none')}")
        # DuckDB's parallel scanner refuses quoted newlines together with null_padding,
        # and every scanner refuses a record longer than max_line_size (2 MiB by
        # default): a file either scans in parallel, or is read again by the serial
        # scanner with no practical record limit.  Which one succeeds depends on the whole
        # file only; both give the same rows, and a file neither reads is refused now.
        attempts = (f"read_csv({common})",
                    f"read_csv({common}, parallel = false, max_line_size = {CSV_MAX_RECORD})")
        for reader in attempts:
            try:
                self.con.execute(f"CREATE TEMP TABLE __dp_raw AS SELECT {pick} FROM {reader}")
                break
            except self._error:
                continue
        else:
            raise withheld(path, "CSV") from None
        self._raw_names = names

    def _parquet(self, fd_path: str, path: Path) -> None:
        reader = f"read_parquet({sql_string(fd_path)})"
        try:
            headers = [r[0] for r in self.con.execute(
                f"DESCRIBE SELECT * FROM {reader}").fetchall()]
        except self._error:
            raise withheld(path, "parquet") from None
        self._select_raw(headers, reader, path, "parquet")

    def _duckdb(self, fd_path: str, path: Path) -> None:
        con = self.con
        try:
            con.execute(f"ATTACH {sql_string(fd_path)} AS __dp_src (READ_ONLY)")
            rows = con.execute(
                "SELECT table_name, table_type FROM information_schema.tables "
                "WHERE table_catalog = '__dp_src' AND table_schema = 'main'").fetchall()
        except self._error:
            raise withheld(path, "a DuckDB database") from None
        kinds = {str(n): str(t) for n, t in rows}
        table = self.schema.table
        if table is None:
            base = sorted(n for n, t in kinds.items() if t == "BASE TABLE")
            if len(base) != 1:
                raise ParameterError(
                    f"the .duckdb file holds {len(base)} base tables: name one with "
                    "table = \"...\" in the schema's [dataset] (names read from the file "
                    "are not shown)"
                )
            table = base[0]
        if table not in kinds:
            raise ParameterError(f"the .duckdb file has no table {table!r} (names read "
                                 "from the file are not shown)")
        if kinds[table] != "BASE TABLE":
            raise ParameterError(
                f"{table!r} in the .duckdb file is a {kinds[table].lower()}, not a base "
                "table: only base tables are read (views and macros could read other data)"
            )
        try:
            cols = con.execute(
                "SELECT column_name, is_generated FROM duckdb_columns() WHERE database_name"
                " = '__dp_src' AND schema_name = 'main' AND table_name = $t "
                "ORDER BY column_index", {"t": table}).fetchall()
        except self._error:
            raise withheld(path, "a DuckDB database") from None
        if any(bool(g) for _, g in cols):
            raise ParameterError(f"table {table!r} has generated columns: only stored "
                                 "columns are read")
        self._select_raw([str(c) for c, _ in cols],
                         f"__dp_src.main.{quote_identifier(table)}", path, "a DuckDB database")
        con.execute("DETACH __dp_src")

    def _select_raw(self, headers: list[str], relation: str, path: Path, fmt: str) -> None:
        names = self._check_headers(headers, str(path))
        pick = ", ".join(f"{quote_identifier(h)} AS {names[h]}" for h in self.needed) \
            or "1 AS c_one"
        try:
            self.con.execute(f"CREATE TEMP TABLE __dp_raw AS SELECT {pick} FROM {relation}")
        except self._error:
            raise withheld(path, fmt) from None
        self._raw_names = names

    # ------------------------------------------------------------- typed view
    def _raw_types(self) -> dict[str, str]:
        """The DuckDB type of each raw column ``c<i>`` (VARCHAR for every CSV column)."""
        try:
            rows = self.con.execute("SELECT column_name, column_type FROM "
                                    "(DESCRIBE __dp_raw)").fetchall()
        except self._error:  # pragma: no cover - the table was just created
            return {}
        return {str(n): str(t) for n, t in rows}

    def _build_view(self) -> None:
        s = self.schema
        types = self._raw_types()
        raw = self._raw_names
        direct = {h for h, c in raw.items()
                  if types.get(c) in DIRECT_NUMBER and not _needs_text(s, h)}
        # stage 1: the text form (or, for DIRECT_NUMBER columns read only as numbers, the
        # raw value); stage 2: the number of each value under the text -> number rule
        firsts, numbers = [], []
        for i, h in enumerate(self.needed):
            firsts.append(f"{raw[h] if h in direct else text_sql(raw[h])} AS t{i}")
            t = f"t{i}"
            n = direct_number_sql(t, types[raw[h]]) if h in direct else number_sql(t)
            numbers.append(f"{n} AS n{i}")
        stage1 = ", ".join(firsts) or "1 AS t_one"
        tpos = {h: f"t{i}" for i, h in enumerate(self.needed)}
        stage2 = ", ".join([*(f"t{i}" for i in range(len(self.needed))), *numbers]) \
            or "1 AS n_one"
        outs = []
        for name, col in sorted(s.columns.items()):
            i = self.needed.index(col.header)
            outs.append(f"{_typed_sql(col, f't{i}', f'n{i}')} AS {quote_identifier(name)}")
        where = "TRUE"
        uh = s.user_header()
        if uh is not None:
            t = tpos[uh]
            outs.append(f"{t} AS {UID}")
            missing = ", ".join(sql_string(m) for m in _MISSING_IDS)
            where = f"{t} IS NOT NULL AND lower({t}) NOT IN ({missing})"
        select = ", ".join(outs) or "1 AS __dp_one"
        sql = (f"CREATE TABLE {VIEW} AS SELECT {select} FROM (SELECT {stage2} FROM "
               f"(SELECT {stage1} FROM __dp_raw)) WHERE {where}")
        try:
            self.con.execute(sql)
            self.con.execute("DROP TABLE __dp_raw")
        except self._error:
            raise ParameterError(
                "the typed view of the data could not be built (the engine's message is "
                "withheld because it may quote the data)"
            ) from None


def frame_kind(data: Any) -> str | None:
    """``pandas``, ``polars``, ``arrow``, ``records`` (numpy record array), ``spark`` or
    None -- decided without importing any of these libraries (a DataFrame of a library
    can only exist if that library was imported already)."""
    if isinstance(data, np.ndarray):
        return "records" if data.dtype.names else None
    for module, attr, kind in (("pandas", "DataFrame", "pandas"),
                               ("polars", "DataFrame", "polars"),
                               ("pyarrow", "Table", "arrow"),
                               ("pyarrow", "RecordBatch", "arrow"),
                               ("pyspark.sql", "DataFrame", "spark"),
                               ("pyspark.sql.connect.dataframe", "DataFrame", "spark")):
        mod = sys.modules.get(module)
        cls = getattr(mod, attr, None) if mod is not None else None
        if isinstance(cls, type) and isinstance(data, cls):
            return kind
    return None


#: pandas' missing markers (``pd.NA``, ``pd.NaT``), recognised without importing pandas
_NA_TYPES = ("NAType", "NaTType")


def native_column(a: np.ndarray) -> np.ndarray:
    """A numeric or text column as DuckDB scans it: in native byte order (a byte-swapped
    array holds the same values), and long double as the nearest double -- what its text
    would give; beyond the double range, infinite, i.e. missing."""
    if a.dtype.kind == "f" and a.dtype.itemsize > 8:
        with np.errstate(over="ignore"):
            return a.astype(np.float64)
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def _text_array(a: np.ndarray) -> np.ndarray:
    """An object (or other non-numeric) column as text or None, element by element: the
    same text form DuckDB gives typed values (shortest round-trip repr of a float), with
    None, float NaN and the pandas missing markers (``pd.NA``, ``NaT``) as NULL -- so a
    column of mixed Python types can never make the registration fail on some rows only."""
    def text(v: Any) -> str | None:
        if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)) or \
                type(v).__name__ in _NA_TYPES:
            return None
        if isinstance(v, (float, np.floating)):
            return repr(float(v))
        if isinstance(v, (bytes, bytearray)):  # as DuckDB writes a BLOB (parquet, Arrow)
            return "".join(chr(b) if 32 <= b <= 126 and b not in b"\"'\\" else f"\\x{b:02X}"
                           for b in v)
        return str(v)

    return np.array([text(v) for v in a.tolist()], dtype=object)
