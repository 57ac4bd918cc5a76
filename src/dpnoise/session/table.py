"""A released table as columns, and writing it to ``.csv`` / ``.parquet``.

Only released, public numbers are handled here (post-processing, no privacy cost): the
public cell labels, the released values and, where the release has them, its error-bar
columns.  Everything is column-at-a-time (numpy arrays, one ``tolist`` per column), so a
table of 10^6 cells costs a few hundred milliseconds, not a Python loop over cells.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: the suffixes ``output=`` / ``--output`` accept
TABLE_FORMATS = (".csv", ".parquet")


def check_new_file(path: str, what: str) -> None:
    """Refuse, before anything is spent or written, a path that cannot become a new file:
    one that exists (or is a dangling link), ends in a path separator, or whose directory
    does not exist or is not writable."""
    from ..errors import ParameterError

    if not path or "\x00" in path:
        raise ParameterError(f"{what} must be a non-empty path without NUL, got {path!r}")
    if path.endswith(("/", os.sep)) or Path(path).name in ("", ".", ".."):
        raise ParameterError(f"{what} {path!r} names a directory: give a file name")
    if os.path.lexists(path):
        raise ParameterError(f"{what} {path!r} exists already: give a new path")
    parent = Path(path).parent
    if not parent.is_dir():
        raise ParameterError(f"{what} {path!r}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(f"{what} {path!r}: directory {str(parent)!r} is not writable")


def duckdb_error() -> type[BaseException]:
    """DuckDB's error class (imported lazily: writing a table is the only use here)."""
    import duckdb

    return duckdb.Error  # type: ignore[no-any-return]


def positive_zero(a: Any) -> Any:
    """``a`` with every -0.0 made +0.0 (``x + 0.0`` is ``x`` except that it maps -0.0 to
    +0.0, IEEE 754 round-to-nearest): a printed ``-0.0`` bound reads as a sign of the data."""
    arr = np.asarray(a)
    return arr + 0.0 if arr.dtype.kind == "f" else a


def release_columns(release: Any, intervals: bool = True) -> dict[str, NDArray[Any]]:
    """The columns of ``release.columns(intervals)`` as arrays aligned with
    ``release.values.ravel()``: row ``i`` of these columns, element by element through
    ``.tolist()``, is exactly ``release.rows(intervals=intervals)[i]``."""
    names = release.columns(intervals)
    keys = release.key_arrays()
    cols: list[NDArray[Any]] = [np.asarray(keys[g]) for g in release.group_by]
    cols.append(positive_zero(np.asarray(release.values).ravel()))
    if len(names) > len(cols):  # the release carries error bars
        cols.extend(positive_zero(np.asarray(a).ravel()) for a in release.error_bars())
    return dict(zip(names, cols, strict=True))


def write_table(release: Any, path: str) -> None:
    """Write a released table (its public cell labels, the released values and, where
    the release has them, the error-bar columns) to ``path`` (.csv or .parquet; the
    session refuses an existing path before anything is spent).  The CSV holds the same
    text as ``csv.writer`` over ``release.rows(intervals=True)``."""
    import duckdb

    refuse_true_answer(release)
    data = release_columns(release, intervals=True)
    con = duckdb.connect(":memory:")  # a fresh connection: never the session's engine
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute("SET preserve_insertion_order = true")  # the CSV's lines in order
        if Path(path).suffix.lower() == ".csv":
            _write_csv(con, path, data)
            return
        con.register("released", data)
        target = str(path).replace("'", "''")
        con.execute(f"COPY (SELECT * FROM released) TO '{target}' (FORMAT parquet)")
    finally:
        con.close()


def _csv_field(v: str) -> str:
    """One text field as ``csv.writer`` (excel dialect, QUOTE_MINIMAL) writes it."""
    if any(ch in v for ch in ',"\r\n'):
        return '"' + v.replace('"', '""') + '"'
    return v


def _write_csv(con: Any, path: str, data: dict[str, NDArray[Any]]) -> None:
    """The bytes ``csv.writer`` writes for the header and the rows (``str`` of each
    number -- ``repr`` for a float, ``nan``/``inf`` -- CRLF line ends), the numbers
    formatted and each line assembled and written by DuckDB (its DOUBLE -> VARCHAR is
    Python's ``repr``; tests/test_cli_output.py compares the files)."""
    import csv
    import io

    head = io.StringIO(newline="")
    csv.writer(head).writerow(list(data))
    cols: dict[str, Any] = {}
    exprs: list[str] = []
    simple = len(data) > 1  # csv.writer quotes a lone empty field: leave that to it
    for j, a in enumerate(data.values()):
        name, kind = f"c{j}", a.dtype.kind
        if kind == "f":
            cols[name] = a.astype(np.float64, copy=False)
            exprs.append(f"coalesce(CASE WHEN isinf({name}) THEN (CASE WHEN {name} > 0 "
                         f"THEN 'inf' ELSE '-inf' END) ELSE CAST({name} AS VARCHAR) END, "
                         "'nan')")  # a NaN is scanned as NULL
        elif kind in "iu":
            cols[name] = a
            exprs.append(f"CAST({name} AS VARCHAR)")
        elif kind == "b":
            cols[name] = a
            exprs.append(f"(CASE WHEN {name} THEN 'True' ELSE 'False' END)")
        elif kind == "U":
            cols[name] = np.array([_csv_field(v) for v in a.tolist()], dtype=object)
            exprs.append(name)
        else:
            simple = False
    if not simple:
        with open(path, "x", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(list(data))
            w.writerows(zip(*(a.tolist() for a in data.values()), strict=True))
        return
    import shutil
    import tempfile

    with open(path, "xb") as out, tempfile.TemporaryDirectory(prefix="dpnoise-csv-") as tmp:
        body = os.path.join(tmp, "rows.csv")
        con.register("released", cols)
        # DuckDB writes each line (raw: no quoting) followed by \n; the \r is ours
        line = ", ',', ".join(exprs)
        target = body.replace("'", "''")
        con.execute(f"COPY (SELECT concat({line}, chr(13)) FROM released) TO '{target}' "
                    "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '')")
        out.write(head.getvalue().encode("utf-8"))
        with open(body, "rb") as fh:
            shutil.copyfileobj(fh, out, 1 << 22)


#: what the writers and the report say when given a true answer
NOT_PUBLISHABLE = ("this is the custodian-only TRUE answer (Session.true_table), not a "
                   "private release: it is never written as a release nor reported")


def refuse_true_answer(obj: Any) -> None:
    """Raise ParameterError when ``obj`` is a custodian-only true answer."""
    from ..errors import ParameterError

    if getattr(obj, "custodian_only", False):
        raise ParameterError(NOT_PUBLISHABLE)
