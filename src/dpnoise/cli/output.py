"""Machine-readable output of the ``dpnoise`` commands (``--json``).

The text is exactly ``json.dumps(obj, indent=2, default=..., allow_nan=True)``: numbers
are written as Python writes them (``repr`` of a float -- the shortest text that reads
back to the same double -- ``NaN``/``Infinity`` for non-finite values, integers in full).
Python's indenting encoder is a pure-Python loop (~5 s for a table of 10^6 cells), so
large numeric parts are rendered column-at-a-time instead: a :class:`Table` (columns of
equal length, written as a list of rows) and any one- or two-dimensional numpy array of
numbers are swapped for a placeholder, the rest is encoded by ``json``, and each
placeholder is replaced by its rendering -- the same bytes the encoder would have written
(tests/test_cli_output.py compares them).  From :data:`DUCKDB_CELLS` cells on, the
numbers are formatted and the rows assembled by DuckDB (already loaded by every command
that releases a table), whose DOUBLE -> VARCHAR text is Python's ``repr`` (the shortest
round-trip digits, the same switch to exponent notation; tested on random bit patterns);
below that, by Python, one column at a time.  :func:`emit_json` lets DuckDB write such a
part to a temporary file that is copied to stdout, so no Python string is made per row.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..ledger.chain import json_default


class Table:
    """Columns of equal length, written as a JSON list of rows (``[[c0, c1, ...], ...]``).

    Row ``i`` holds ``column[i]`` of each column as ``.tolist()`` gives it."""

    def __init__(self, columns: Sequence[Any]) -> None:
        self.columns = [np.asarray(c) for c in columns]
        if any(c.ndim != 1 for c in self.columns):
            raise ValueError("Table columns must be one-dimensional")
        if len({c.size for c in self.columns}) > 1:
            raise ValueError("Table columns must have the same length")

    def __len__(self) -> int:
        return self.columns[0].size if self.columns else 0

    def rows(self) -> list[list[Any]]:
        """The plain list of rows (what ``json`` would be given without this class)."""
        return [list(r) for r in zip(*(c.tolist() for c in self.columns), strict=True)]


def _float_text(a: NDArray[Any]) -> list[str]:
    """``json``'s text of each float: ``repr``, or NaN / Infinity / -Infinity."""
    out = list(map(float.__repr__, a.astype(np.float64, copy=False).tolist()))
    bad = np.flatnonzero(~np.isfinite(a))
    for i in bad.tolist():
        v = float(a[i])
        out[i] = "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    return out


_SCALARS = (str, int, float, bool, type(None))


def _texts(a: NDArray[Any]) -> list[str] | None:
    """The JSON text of each element of a 1-D array, or None if some element would not
    be written as a scalar (then the caller leaves the array to ``json``)."""
    kind = a.dtype.kind
    if kind == "b":
        return ["true" if v else "false" for v in a.tolist()]
    if kind in "iu":
        return list(map(int.__repr__, a.tolist()))
    if kind == "f":
        return _float_text(a)
    values = a.tolist()
    if kind in "US" or (kind == "O" and all(isinstance(v, _SCALARS) for v in values)):
        enc = json.JSONEncoder(default=json_default, allow_nan=True)
        return [enc.encode(v) for v in values]
    return None


def _render_list(texts: list[str], indent: str) -> str:
    """``[...]`` of scalar texts, elements one level deeper than ``indent``."""
    inner = indent + "  "
    return "[\n" + inner + (",\n" + inner).join(texts) + "\n" + indent + "]"


def _render_rows(columns: list[list[str]], n: int, indent: str) -> str:
    """A list of ``n`` rows (one text list per column), as ``json`` indents it."""
    if n == 0:
        return "[]"
    r_ind, e_ind = indent + "  ", indent + "    "
    c = len(columns)
    if c == 0:
        return _render_list(["[]"] * n, indent)
    step = 2 * c + 1
    toks: list[str] = [""] * (n * step)
    toks[0::step] = [r_ind + "[\n" + e_ind] * n
    sep = ",\n" + e_ind
    for j, col in enumerate(columns):
        toks[1 + 2 * j::step] = col
        if j < c - 1:
            toks[2 + 2 * j::step] = [sep] * n
    end = "\n" + r_ind + "]"
    toks[2 * c::step] = [end + ",\n"] * n
    toks[-1] = end
    return "[\n" + "".join(toks) + "\n" + indent + "]"


#: from this many cells on, a table or array is rendered by DuckDB
DUCKDB_CELLS = 20_000


def _render_duckdb(con: Any, columns: list[NDArray[Any]], rows: bool, indent: str,
                   file: str | None = None) -> list[str | Path] | None:
    """Rows (``rows``) or the elements of one column, formatted and assembled by DuckDB
    (connection ``con``); None if a column holds something else than JSON scalars.
    Returned as pieces of text; with ``file``, the long middle piece is written there by
    DuckDB (one element a line, each followed by ``,`` but the last) and its path
    returned in its place -- no Python string per element."""
    data: dict[str, Any] = {}
    exprs = []
    for j, c in enumerate(columns):
        name = f"c{j}"
        kind = c.dtype.kind
        if kind == "f":
            data[name] = c.astype(np.float64, copy=False)  # json writes the double
            # a NaN is scanned as NULL; DOUBLE -> VARCHAR is repr() for finite values
            exprs.append(f"coalesce(CASE WHEN isinf({name}) THEN (CASE WHEN {name} > 0 "
                         f"THEN 'Infinity' ELSE '-Infinity' END) ELSE CAST({name} AS "
                         "VARCHAR) END, 'NaN')")
        elif kind in "biu":
            data[name] = c
            exprs.append(f"CAST({name} AS VARCHAR)")
        else:
            texts = _texts(c)
            if texts is None:
                return None
            data[name] = np.array(texts, dtype=object)
            exprs.append(name)
    r_ind, e_ind = indent + "  ", indent + "    "
    # separators as SQL literals: spaces, newlines, brackets and commas only
    if rows:  # concat(): one string built per row (a chain of || builds one per step)
        sep = f", '{',' + chr(10) + e_ind}', "
        sql = (f"concat('{r_ind}[{chr(10)}{e_ind}', {sep.join(exprs)}, "
               f"'{chr(10)}{r_ind}]')")
    else:
        sql = f"concat('{r_ind}', {exprs[0]})"
    con.register("__dp_part", data)
    try:
        if file is not None:
            target = file.replace("'", "''")
            con.execute(f"COPY (SELECT concat({sql}, ',') FROM __dp_part) TO '{target}' "
                        "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '')")
            size = os.path.getsize(file)
            with open(file, "rb") as fh:
                fh.seek(max(size - 2, 0))
                tail = fh.read()
            if tail == b",\n":
                os.truncate(file, size - 2)  # the last element takes no comma
                return ["[\n", Path(file), "\n" + indent + "]"]
        texts = con.execute(f"SELECT {sql} AS r FROM __dp_part").fetchnumpy()["r"].tolist()
    finally:
        con.unregister("__dp_part")
    return ["[\n" + ",\n".join(texts) + "\n" + indent + "]"]


class _Swap:
    """Replaces the large parts of an object by placeholders, and renders them back."""

    def __init__(self, spill: bool = False) -> None:
        self.tag = f"@@dpnoise-{uuid.uuid4().hex}-"
        self.parts: dict[str, Any] = {}
        self.con: Any = None  # a DuckDB connection, opened for the first large part
        self.spill = spill  # may DuckDB write large parts to files (emit_json)?
        self.tmpdir: str | None = None  # made for the first such part

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        if self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def _file(self) -> str | None:
        """A new file name in a private temporary directory, or None (no spilling, or
        no writable temporary directory: then the part is built in memory)."""
        if not self.spill:
            return None
        if self.tmpdir is None:
            import tempfile

            try:
                self.tmpdir = tempfile.mkdtemp(prefix="dpnoise-json-")
            except OSError:
                self.spill = False
                return None
        return os.path.join(self.tmpdir, f"part{len(os.listdir(self.tmpdir))}.txt")

    def walk(self, o: Any) -> Any:
        if isinstance(o, Table) or (type(o) is np.ndarray and o.size and (
                o.ndim == 1 or (o.ndim == 2 and o.shape[1])) and o.dtype.kind in "biuf"):
            key = f"{self.tag}{len(self.parts)}@@"
            self.parts[key] = o
            return key
        if type(o) is dict:
            return {k: self.walk(v) for k, v in o.items()}
        if type(o) in (list, tuple):
            return [self.walk(v) for v in o]
        return o

    def render(self, o: Any, indent: str) -> list[str | Path]:
        if isinstance(o, Table):
            cols, n, rows = o.columns, len(o), True
        elif o.ndim == 1:
            cols, n, rows = [o], o.size, False
        else:
            cols, n, rows = [o[:, j] for j in range(o.shape[1])], o.shape[0], True
        if n == 0 or not cols:
            return [_indented(o.rows() if isinstance(o, Table) else o.tolist(), indent)]
        if n * len(cols) >= DUCKDB_CELLS:
            if self.con is None:
                import duckdb

                self.con = duckdb.connect(":memory:")
                self.con.execute("SET enable_progress_bar = false")
                self.con.execute("SET preserve_insertion_order = true")  # rows in order
            pieces = _render_duckdb(self.con, cols, rows, indent, self._file())
            if pieces is not None:
                return pieces
        texts = [_texts(c) for c in cols]
        if any(t is None for t in texts):  # not all scalars: let json write it
            return [_indented(o.rows(), indent)]
        if not rows:
            return [_render_list(texts[0], indent)]  # type: ignore[arg-type]
        return [_render_rows(texts, n, indent)]  # type: ignore[arg-type]


def _indented(obj: Any, indent: str) -> str:
    text = json.dumps(obj, indent=2, default=json_default, allow_nan=True)
    return text.replace("\n", "\n" + indent)


def _pieces(obj: Any, spill: bool = False) -> Iterator[str | Path]:
    """The text of ``json.dumps(obj, indent=2, ...)`` in pieces; with ``spill``, large
    parts may come as the path of a (temporary) file holding their text, valid until the
    next piece is asked for."""
    swap = _Swap(spill)
    text = json.dumps(swap.walk(obj), indent=2, default=json_default, allow_nan=True)
    pos = 0
    try:
        for key, part in swap.parts.items():
            at = text.index(f'"{key}"', pos)
            line = text.rfind("\n", 0, at) + 1
            indent = text[line:at]
            indent = indent[: len(indent) - len(indent.lstrip(" "))]
            yield text[pos:at]
            yield from swap.render(part, indent)
            pos = at + len(key) + 2
    finally:
        swap.close()
    yield text[pos:]


def dumps(obj: Any) -> str:
    """``json.dumps(obj, indent=2, default=..., allow_nan=True)``, the same text, with
    tables and numeric arrays rendered column-at-a-time."""
    return "".join(p for p in _pieces(obj) if isinstance(p, str))


def emit_json(obj: Any) -> None:
    """Print ``dumps(obj)`` and a newline; large parts are copied to stdout from the file
    DuckDB wrote them to (ASCII text: ``json`` escapes every other character)."""
    out = sys.stdout
    for piece in _pieces(obj, spill=True):
        if isinstance(piece, str):
            out.write(piece)
            continue
        buffer = getattr(out, "buffer", None)
        with open(piece, "rb") as fh:
            if buffer is None:
                out.write(fh.read().decode("ascii"))
            else:
                out.flush()
                shutil.copyfileobj(fh, buffer, 1 << 22)
                buffer.flush()
    out.write("\n")
