"""``--json`` output rendered column-at-a-time is byte-for-byte what ``json`` writes, and a
released table's columns / written files hold exactly ``Release.rows()``."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from dpnoise.cli import output
from dpnoise.cli.output import Table, dumps, json_default
from dpnoise.session import Budget, Session
from dpnoise.session.table import _write_csv, release_columns


def reference(obj: object) -> str:
    return json.dumps(obj, indent=2, default=json_default, allow_nan=True)


@pytest.fixture(params=["python", "duckdb"])
def renderer(request, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    """Both renderings: by Python (small parts) and by DuckDB (from DUCKDB_CELLS on)."""
    if request.param == "duckdb":
        monkeypatch.setattr(output, "DUCKDB_CELLS", 1)
    else:
        monkeypatch.setattr(output, "DUCKDB_CELLS", 10**12)
    return request.param


FLOATS = np.array([0.0, -0.0, 1.5, 0.1, 1e16, 1e-7, 123456789.123, 5e-324,
                   1.7976931348623157e308, np.nan, np.inf, -np.inf, 2.0**60, -3.25])


def test_numeric_arrays_render_as_json_does(renderer: str) -> None:
    g = np.random.default_rng(3)
    bits = g.integers(0, 2**63, 4000, dtype=np.int64).view(np.float64)  # any double
    f32 = np.array([0.1, -0.0, 1e30, np.nan, -np.inf], dtype=np.float32)
    arrays = [FLOATS, bits, g.laplace(0, 1e3, 500), f32,
              np.array([0, -1, 2**62, -(2**63)], dtype=np.int64),
              np.array([0, 2**64 - 1], dtype=np.uint64), np.array([True, False]),
              g.normal(size=(7, 3)), np.arange(12).reshape(4, 3)]
    objs = [{"x": a, "y": [1, a, {"z": a}], "w": (a, "s")} for a in arrays]
    objs += [arrays[0], [[arrays[-1]]]]  # at the top level, in nested lists
    assert dumps(objs) == reference(objs)  # many parts in one output
    if renderer == "python":  # (one DuckDB connection per call: slow to open)
        assert [dumps(o) for o in objs] == [reference(o) for o in objs]


def test_tables_render_as_their_rows(renderer: str) -> None:
    g = np.random.default_rng(4)
    n = 300
    cols = [np.arange(n), g.laplace(size=n), np.where(g.random(n) < 0.1, np.nan, 1.0),
            np.array([f"k\"{i}\u00e9\\" for i in range(n)]), g.integers(0, 9, n) > 4,
            np.array(["a", 1, 2.5, None, True] * (n // 5), dtype=object)]
    tables = [Table(cols[:k]) if k else Table([np.zeros(0)]) for k in range(len(cols) + 1)]
    tables.append(Table(cols[::-1]))
    obj = [{"a": {"rows": t}, "after": [t]} for t in tables]
    plain = [{"a": {"rows": t.rows()}, "after": [t.rows()]} for t in tables]
    assert dumps(obj) == reference(plain)
    assert dumps(tables[2]) == reference(tables[2].rows())
    odd = Table([np.array([(1, 2), "x"], dtype=object)])  # a non-scalar cell: json writes it
    assert dumps({"rows": odd}) == reference({"rows": odd.rows()})
    with pytest.raises(ValueError):
        Table([np.zeros(2), np.zeros(3)])


def test_plain_objects_unchanged(renderer: str) -> None:
    obj = {"a": 1, "b": [1.5, float("nan")], "c": np.float64(2.5), "d": np.zeros(0),
           "e": "@@dpnoise-not-a-placeholder", "f": None, "g": np.zeros((2, 0)),
           "h": np.ma.masked_array([1.0, 2.0], mask=[False, True]),  # left to json
           "i": np.arange(24).reshape(2, 3, 4)}
    assert dumps(obj) == reference(obj)


def test_large_table_keeps_row_order(capsys) -> None:  # type: ignore[no-untyped-def]
    """The default threshold, a table big enough for DuckDB's parallel scan; printed by
    emit_json (DuckDB writes the rows to a file that is copied to stdout)."""
    g = np.random.default_rng(5)
    n = 3 * output.DUCKDB_CELLS
    t = Table([np.arange(n), g.laplace(0, 100, n)])
    want = reference({"rows": t.rows(), "a": [1.5, 2.0]})
    assert dumps({"rows": t, "a": np.array([1.5, 2])}) == want
    output.emit_json({"rows": t, "a": np.array([1.5, 2])})
    assert capsys.readouterr().out == want + "\n"


def test_emit_json_prints_the_same_text(renderer: str, capsys) -> None:  # type: ignore[no-untyped-def]
    g = np.random.default_rng(7)
    t = Table([np.array(["a", "b\u00e9"] * 5), g.normal(size=10), np.arange(10) > 4])
    obj = {"q": "x", "rows": t, "arr": [g.normal(size=(3, 2)), np.arange(4)], "end": None}
    plain = {"q": "x", "rows": t.rows(), "arr": [obj["arr"][0], obj["arr"][1]], "end": None}
    output.emit_json(obj)
    assert capsys.readouterr().out == reference(plain) + "\n"
    output.emit_json({"rows": Table([np.zeros(0)])})
    assert capsys.readouterr().out == reference({"rows": []}) + "\n"


def test_release_columns_and_written_table_hold_the_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = {"region": np.array(["a", "b", "c", "a", "z"]), "x": np.arange(5.0)}
    schema = {"columns": {"region": {"categories": ["a", "b", "c"]},
                          "x": {"lower": 0, "upper": 4}}}
    s = Session(data, Budget(10.0), schema=schema)
    for q in ("histogram region", "mean x by region", "sum x"):
        r = s.release(q, epsilon=1.0)
        cols = release_columns(r)
        assert list(cols) == r.columns()
        assert [list(row) for row in zip(*(c.tolist() for c in cols.values()), strict=True)] == \
            [list(row) for row in r.rows(intervals=True)]
    for q in ("histogram region", "mean x by region"):
        path = tmp_path / f"{q[:4]}.csv"
        r = s.release(q, epsilon=1.0, output=str(path))
        assert path.read_bytes() == _csv_bytes(r.columns(), r.rows(intervals=True))


def _csv_bytes(header: list[str], rows: list) -> bytes:  # type: ignore[type-arg]
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def test_csv_is_what_csv_writer_writes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import duckdb

    g = np.random.default_rng(6)
    n = 2000
    bits = g.integers(-2**63, 2**63 - 1, n, dtype=np.int64).view(np.float64)
    bits[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e16, 1e-7]
    labels = ["a", "b,c", 'q"d', "e\nf", "", "x y", "\u00e9t\u00e9", "r\rs"]
    data = {"k": np.array([labels[i % len(labels)] for i in range(n)]),
            "v": bits, "i": g.integers(-10**15, 10**15, n), "b": g.random(n) < 0.5,
            "f": g.random(n).astype(np.float32)}
    for k, cols in enumerate((data, {"k": data["k"][:0], "v": bits[:0]},
                              {"o": np.array([None, 1.5] * 3, dtype=object), "v": bits[:6]})):
        path = tmp_path / f"t{k}.csv"
        con = duckdb.connect()
        _write_csv(con, str(path), cols)
        rows = list(zip(*(a.tolist() for a in cols.values()), strict=True))
        assert path.read_bytes() == _csv_bytes(list(cols), rows)


def test_emit_json_without_a_temporary_directory(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import tempfile

    def refuse(*_a, **_k):  # type: ignore[no-untyped-def]
        raise OSError("read-only")

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    monkeypatch.setattr(output, "DUCKDB_CELLS", 1)
    t = Table([np.arange(5), np.linspace(0, 1, 5)])
    output.emit_json({"rows": t})
    assert capsys.readouterr().out == reference({"rows": t.rows()}) + "\n"
