"""A released table as columns, and writing it to ``.csv`` / ``.parquet``.

Only released, public numbers are handled here (post-processing, no privacy cost): the
public cell labels, the released values and, where the release has them, its error-bar
columns.  Everything is column-at-a-time (numpy arrays, one ``tolist`` per column), so a
table of 10^6 cells costs a few hundred milliseconds, not a Python loop over cells.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: the suffixes ``output=`` / ``--output`` accept
TABLE_FORMATS = (".csv", ".parquet")


def release_columns(release: Any, intervals: bool = True) -> dict[str, NDArray[Any]]:
    """The columns of ``release.columns(intervals)`` as arrays aligned with
    ``release.values.ravel()``: row ``i`` of these columns, element by element through
    ``.tolist()``, is exactly ``release.rows(intervals=intervals)[i]``."""
    names = release.columns(intervals)
    keys = release.key_arrays()
    cols: list[NDArray[Any]] = [np.asarray(keys[g]) for g in release.group_by]
    cols.append(np.asarray(release.values).ravel())
    if len(names) > len(cols):  # the release carries error bars
        cols.extend(np.asarray(a).ravel() for a in release.interval())
    return dict(zip(names, cols, strict=True))


def write_table(release: Any, path: str) -> None:
    """Write a released table (its public cell labels, the released values and, where
    the release has them, the error-bar columns) to ``path`` (.csv or .parquet; the
    session refuses an existing path before anything is spent).  The CSV holds the same
    text as ``csv.writer`` over ``release.rows(intervals=True)``."""
    data = release_columns(release, intervals=True)
    columns = list(data)
    if Path(path).suffix.lower() == ".csv":
        import csv

        with open(path, "x", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(columns)
            w.writerows(zip(*(a.tolist() for a in data.values()), strict=True))
        return
    import duckdb

    con = duckdb.connect(":memory:")  # a fresh connection: never the session's engine
    try:
        con.register("released", data)
        target = str(path).replace("'", "''")
        con.execute(f"COPY (SELECT * FROM released) TO '{target}' (FORMAT parquet)")
    finally:
        con.close()
