"""Adversarial suite of the custodian path: one test per attack class, each
across csv, parquet and duckdb inputs (and numpy where it applies).

The rule under test: the only data-dependent thing a release emits is its noisy answer.
Ledger-side attacks (the --seed stream, resetting the ledger) are tested with the ledger.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpnoise import Budget, DpnoiseError, ParameterError, SeededRandom, Session
from dpnoise.cli import main
from dpnoise.session import Schema, parse_query
from dpnoise.session.aggregation import encoding_text
from dpnoise.session.engine import exact_sum

FORMATS = ("csv", "parquet", "duckdb")


def write(tmp: Path, fmt: str, header: list[str], rows: list[list[Any]],
          name: str = "data") -> Path:
    """Write ``rows`` (None = NULL; float('nan') = NaN) as csv text, or as a typed parquet
    / duckdb table (a column is DOUBLE if all its non-NULL values are numbers, else
    VARCHAR), using DuckDB itself (pyarrow is not needed)."""
    import duckdb

    if fmt == "csv":
        path = tmp / f"{name}.csv"

        def cell(v: Any) -> str:
            return "" if v is None else str(v)

        path.write_text(",".join(header) + "\n"
                        + "".join(",".join(cell(v) for v in r) + "\n" for r in rows))
        return path
    types = []
    for j in range(len(header)):
        vals = [r[j] for r in rows if r[j] is not None]
        num = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)
        types.append("DOUBLE" if num else "VARCHAR")
    cols = ", ".join(f'"{h}" {t}' for h, t in zip(header, types, strict=True))
    params = [[None if v is None else (float(v) if t == "DOUBLE" else str(v))
               for v, t in zip(r, types, strict=True)] for r in rows]
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t ({cols})")
    if params:
        marks = ", ".join("?" for _ in header)
        con.executemany(f"INSERT INTO t VALUES ({marks})", params)
    if fmt == "parquet":
        path = tmp / f"{name}.parquet"
        con.execute(f"COPY t TO '{str(path).replace(chr(39), chr(39) * 2)}' (FORMAT parquet)")
    else:
        path = tmp / f"{name}.duckdb"
        con.execute(f"ATTACH '{str(path).replace(chr(39), chr(39) * 2)}' AS out")
        con.execute("CREATE TABLE out.data AS SELECT * FROM t")
        con.execute("DETACH out")
    con.close()
    return path


def session(path: Any, schema: dict[str, Any], **kw: Any) -> Session:
    """A session with a seeded in-memory ledger, or a fresh ledger FILE (created explicitly;
    seeded randomness is never charged to a ledger file, so that one uses the CSPRNG)."""
    if kw.get("ledger") is not None:
        return Session(path, Budget(1e6), schema=schema, create_ledger=True, **kw)
    return Session(path, Budget(1e6), schema=schema, rng=SeededRandom(0), **kw)


# ------------------------------------------------------------------ attack 1
@pytest.mark.parametrize("fmt", FORMATS)
def test_attack1_null_in_a_measured_column_contributes_nothing(tmp_path: Path, fmt: str) -> None:
    """A NULL in x was clamped to ``lower`` in the sum but not counted,
    so ``mean x`` said 1001 in 300/300 draws.  Now a missing value is in neither the count
    nor the sum: every component equals the one without the NULL row."""
    schema = {"columns": {"x": {"lower": 1000, "upper": 1001},
                          "id": {"lower": 0, "upper": 10}}}
    with_null = write(tmp_path, fmt, ["id", "x"], [[1, 1000], [2, None]], "a")
    without = write(tmp_path, fmt, ["id", "x"], [[1, 1000]], "b")
    with session(with_null, schema) as s, session(without, schema) as t:
        for q in ("mean x", "sum x", "count x"):
            a, b = s.true_components(q), t.true_components(q)
            assert a.keys() == b.keys()
            for role in a:
                assert np.array_equal(a[role], b[role]), (q, role)
        assert s.true_answer("mean x").item() == 1000.0
        assert s.true_answer("sum x").item() == 1000.0  # not 2000: NULL is not `lower`
        assert s.true_answer("count").item() == 2  # count counts rows
        assert s.true_answer("count x").item() == 1  # count(col) counts values
        # the released means now spread like those of the NULL-free data set
        m = np.array([s.release("mean x", epsilon=1.0).value for _ in range(150)])
        assert 0.05 < np.mean(m >= 1000.999) < 0.6


# ------------------------------------------------------------------ attack 2
def _nan_id_rows(kind: str) -> list[list[Any]]:
    miss = {"nan": float("nan"), "text": "nan", "null": None, "empty": "",
            "blank": "   ", "NaN": "NaN"}[kind]
    return [[1, -10], [2, 5], [miss, 5], [miss, -10]]


@pytest.mark.parametrize("fmt", [*FORMATS, "numpy"])
@pytest.mark.parametrize("kind", ["nan", "text", "null", "empty", "blank", "NaN"])
def test_attack2_missing_person_ids_are_dropped(tmp_path: Path, fmt: str, kind: str) -> None:
    """``nan`` ids from a file were pooled into one person, so removing
    one such row moved ``sum x`` by 15 where 10 was calibrated.  Rows whose id is NULL,
    NaN, empty or blank are dropped identically for every input format."""
    if fmt == "csv" and kind == "nan":
        kind = "NaN"
    rows = _nan_id_rows(kind)
    schema = {"dataset": {"user_id": "pid", "max_contributions": 1},
              "columns": {"x": {"lower": -10, "upper": 5}}}
    data: Any
    if fmt == "numpy":
        dtype = float if kind in ("nan", "NaN") and isinstance(rows[2][0], float) else object
        data = {"pid": np.array([r[0] for r in rows], dtype=dtype),
                "x": np.array([r[1] for r in rows], dtype=float)}
    else:
        data = write(tmp_path, fmt, ["pid", "x"], rows)
    with session(data, schema) as s:
        assert s.true_answer("count").item() == 2
        assert s.true_answer("sum x").item() == -5.0
        (_, plan), = s.plans("sum x", 1.0)
        assert plan.spec.sensitivity == pytest.approx(10.0, rel=1e-4)


# ------------------------------------------------------------------ attack 3
_SECRET = "Zebra-7731"


@pytest.mark.parametrize("fmt", FORMATS)
def test_attack3_errors_are_no_oracle(tmp_path: Path, fmt: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``count where person_id = 123 and sex = 5`` failed with DuckDB's
    "Could not convert string 'Male'" exactly when person 123 existed, for free.  Now a
    query is type-checked against the schema before any data is read (same error, same
    message, whether or not the person exists), and text in a numeric column is missing,
    so a filter that selects it cannot fail; no message quotes a cell."""
    rows = [[1, "Female", 3.0], [2, "Male", 4.0]]
    present = write(tmp_path, fmt, ["person_id", "sex", "x"], [*rows, [123, "Male", _SECRET]],
                    "with")
    absent = write(tmp_path, fmt, ["person_id", "sex", "x"], rows, "without")
    typed = {"columns": {"person_id": {"integer": True, "lower": 0, "upper": 1000},
                         "sex": {"categories": ["Female", "Male"]},
                         "x": {"lower": 0, "upper": 10}}}
    outcomes = []
    for path in (present, absent):
        with session(path, typed, ledger=tmp_path / f"{path.stem}.sqlite") as s:
            with pytest.raises(ParameterError) as e:
                s.release("count where person_id = 123 and sex = 5", epsilon=0.1)
            assert "'sex' is categorical" in str(e.value) and s.spent.epsilon == 0
            outcomes.append(str(e.value))
            r = s.release("sum x where person_id = 123", epsilon=0.1)  # selects the text
            assert r.value >= 0 and s.spent.epsilon == pytest.approx(0.1)
            s.release("mean x where person_id = 123 and sex = 'Male'", epsilon=0.1)
    assert outcomes[0] == outcomes[1]
    # the same through the CLI: status 2, identical message, never the cell
    errs = []
    assert main(["ledger", "init", str(tmp_path / "c.sqlite"), "--budget", "10"]) == 0
    capsys.readouterr()
    for path in (present, absent):
        code = main(["release", "--data", str(path), "--ledger", str(tmp_path / "c.sqlite"),
                     "--budget", "10", "--keys", "person_id=0:1000",
                     "--categories", "sex=Female,Male", "--bounds", "x=0:10",
                     "--query", "count where person_id = 123 and sex = 5", "--epsilon", "0.1"])
        assert code == 2
        errs.append(capsys.readouterr().err)
    assert errs[0] == errs[1] and _SECRET not in errs[0]


def test_attack3_reserve_before_aggregating_and_fixed_abort_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reservation precedes every data-dependent step; a failure afterwards keeps the
    charge, stores a fixed reason code and raises a fixed message (no cell, no chain)."""
    path = write(tmp_path, "csv", ["x"], [[1.0], [2.0]])
    order: list[str] = []
    reasons: list[str] = []
    with session(path, {"columns": {"x": {"lower": 0, "upper": 5}}},
                 ledger=tmp_path / "l.sqlite") as s:
        real_reserve, real_abort = s.ledger.reserve, s.ledger.abort

        def reserve(**kw: Any) -> int:
            order.append("reserve")
            return real_reserve(**kw)

        def aggregate(q: Any) -> Any:
            order.append("aggregate")
            raise ValueError(f"Could not convert string '{_SECRET}'")

        def abort(rid: int, reason: str) -> None:
            reasons.append(reason)
            real_abort(rid, reason)

        monkeypatch.setattr(s.ledger, "reserve", reserve)
        monkeypatch.setattr(s.ledger, "abort", abort)
        monkeypatch.setattr(s.engine, "aggregate", aggregate)
        with pytest.raises(DpnoiseError) as e:
            s.release("sum x", epsilon=0.25)
        assert order == ["reserve", "aggregate"]
        assert reasons == ["release_failed"]
        assert _SECRET not in str(e.value) and e.value.__cause__ is None
        assert e.value.__suppress_context__
        assert s.spent.epsilon == 0.25  # the charge is kept
        assert [h.status for h in s.history()] == ["aborted"]


# ------------------------------------------------------------------ attack 5
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("stem", ["data[1]", "a*", "q?", "[ab]"])
def test_attack5_the_data_path_is_never_a_glob(tmp_path: Path, fmt: str, stem: str) -> None:
    """``--data "g/data[1].csv"`` read ``g/data1.csv`` and ``a*.csv`` read
    every match.  The named file is opened by this process and DuckDB is handed its
    descriptor: exactly that file is read and fingerprinted."""
    schema = {"columns": {"x": {"lower": 0, "upper": 1000}}}
    target = write(tmp_path, fmt, ["x"], [[7.0]], stem)
    decoys = [write(tmp_path, fmt, ["x"], [[500.0], [500.0]], n)
              for n in ("data1", "ab", "a", "q1", "a_b")]
    with session(target, schema) as s:
        assert s.true_answer("count").item() == 1
        assert s.true_answer("sum x").item() == 7.0
        fp = s.engine.fingerprint
    with session(decoys[0], schema) as t:
        assert t.engine.fingerprint != fp
    with pytest.raises(ParameterError, match="cannot be opened"):
        session(tmp_path / f"nothing*{target.suffix}", schema)


# ------------------------------------------------------------------ attack 6
def _locked(s: Session, secret: Path) -> None:
    con = s.engine.con
    for sql in (f"SELECT * FROM read_text('{secret}')", f"SELECT * FROM read_csv('{secret}')",
                "SET enable_external_access = true", "INSTALL httpfs", "LOAD httpfs"):
        with pytest.raises(Exception):  # noqa: B017 - any refusal will do
            con.execute(sql).fetchall()
    assert con.execute("SELECT current_setting('enable_external_access')").fetchone() == \
        (False,)
    assert con.execute("SELECT current_setting('lock_configuration')").fetchone() == (True,)


@pytest.mark.parametrize("fmt", FORMATS)
def test_attack6_no_input_can_read_other_files(tmp_path: Path, fmt: str) -> None:
    """A ``.duckdb`` view ``SELECT content FROM read_text('/etc/...')``
    was released from and printed through a conversion error.  Only base tables without
    generated columns are read, external access is off while reading and after, and the
    configuration is locked; for every format."""
    import duckdb

    secret = tmp_path / "secret.txt"
    secret.write_text(_SECRET)
    schema = {"columns": {"x": {"lower": 0, "upper": 10}}}
    path = write(tmp_path, fmt, ["x"], [[1.0]])
    with session(path, schema) as s:
        _locked(s, secret)
    if fmt != "duckdb":
        return
    db = tmp_path / "evil.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE VIEW v AS SELECT content AS x FROM read_text('{secret}')")
    con.execute("CREATE TABLE g (y DOUBLE, x AS (y * 2))")
    con.execute("CREATE MACRO tm() AS TABLE SELECT 1 AS x")
    con.execute("CREATE TABLE ok (x DOUBLE)")
    con.execute("INSERT INTO ok VALUES (3)")
    con.close()
    for table, match in (("v", "is a view"), ("g", "generated"), ("tm", "no table")):
        with pytest.raises(ParameterError, match=match) as e:
            session(db, {**schema, "dataset": {"table": table}})
        assert _SECRET not in str(e.value)
    with session(db, {**schema, "dataset": {"table": "ok"}}) as s:
        assert s.true_answer("sum x").item() == 3.0
        _locked(s, secret)
    (tmp_path / "evil.duckdb.wal").write_bytes(b"")
    with pytest.raises(ParameterError, match="write-ahead log"):
        session(db, {**schema, "dataset": {"table": "ok"}})


# ------------------------------------------------------------------ attack 8
@pytest.mark.parametrize("text", ["count where " + "(" * 400 + "x > 1" + ")" * 400,
                                  "count where " + "not " * 400 + "x > 1"])
def test_attack8_deep_nesting_is_a_clear_error(text: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ParameterError, match="nest at most"):
        parse_query(text)
    from dpnoise.demo import survey_paths

    data, _ = survey_paths()
    assert main(["release", "--data", str(data), "--ledger", ":memory:", "--budget", "1",
                 "--query", text, "--epsilon", "0.1"]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # (after the in-memory ledger's notice)
    assert last.startswith("error: ") and "Traceback" not in err and "nest at most" in last


@pytest.mark.parametrize(("spec", "match"), [
    ('integer = "false"\nlower = 0\nupper = 3', "integer must be a boolean"),
    ("integer = 1\nlower = 0\nupper = 3", "integer must be a boolean"),
    ('lower = "0"\nupper = 3', "lower bound must be a number"),
    ("lower = -1e308\nupper = 1e308", "2\\^970"),
    ("lower = 0\nupper = inf", "finite"),
    ("lower = 0\nupper = nan", "finite"),
    ('categories = ["a", 1]', "all strings or all numbers"),
    ("categories = [1, 1.0]", "distinct"),
    ("source = 3\nlower = 0\nupper = 1", "source must be a string"),
])
def test_attack8_strict_toml_types(tmp_path: Path, spec: str, match: str) -> None:
    p = tmp_path / "s.toml"
    p.write_text(f"[columns.x]\n{spec}\n")
    with pytest.raises(ParameterError, match=match):
        Schema.from_toml(p)


def test_attack8_huge_bounds_sum_stays_finite() -> None:
    """|bound| <= 2^970: 2^53 values at the bound still sum to a finite double, and the
    exact-sum unit at the bound is finite."""
    big = math.ldexp(1.0, 970)
    schema = Schema.from_dict({"columns": {"x": {"lower": -big, "upper": big}}})
    e = exact_sum(schema.column("x"))
    assert math.isfinite(e.sum_unit * 2.0**53) and e.sum_unit >= big
    data = {"x": np.array([big, big, -1.0])}
    with Session(data, Budget(1.0), schema=schema, rng=SeededRandom(0)) as s:
        assert s.true_answer("sum x").item() == pytest.approx(2 * big, rel=1e-4)
        assert math.isfinite(s.release("sum x", epsilon=1.0).value)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("agg", ["MODE", "MIN", "MAX", "percentile_disc"])
def test_attack8_unsupported_aggregates_named(tmp_path: Path, fmt: str, agg: str) -> None:
    path = write(tmp_path, fmt, ["x"], [[1.0]])
    with session(path, {"columns": {"x": {"lower": 0, "upper": 10}}}) as s:
        for text in (f"SELECT {agg}(x) FROM data", f"{agg.lower()} x"):
            with pytest.raises(ParameterError, match=f"unsupported aggregate {agg.upper()}"):
                s.release(text, epsilon=0.1)
        assert s.spent.epsilon == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_attack8_guarantee_says_per_row_without_user_id(tmp_path: Path, fmt: str) -> None:
    path = write(tmp_path, fmt, ["pid", "x"], [[1, 1.0], [1, 2.0]])
    cols = {"x": {"lower": 0, "upper": 10}}
    with session(path, {"columns": cols}) as s:
        g = s.release("count", epsilon=0.1).guarantee
        assert "one row" in g and "individual" not in g
    with session(path, {"columns": cols, "dataset": {"user_id": "pid"}}) as s:
        assert "one individual" in s.release("count", epsilon=0.1).guarantee


@pytest.mark.parametrize("fmt", FORMATS)
def test_attack8_non_identifier_headers_via_source(tmp_path: Path, fmt: str) -> None:
    """The real UCI adult header ``hours-per-week``: declared under an identifier with
    ``source``; queries use the identifier."""
    path = write(tmp_path, fmt, ["hours-per-week", "person id"],
                 [[40, "a"], [60, "b"], [99, "b"]])
    schema = {"dataset": {"user_id": "person id"},
              "columns": {"hours": {"lower": 0, "upper": 80, "source": "hours-per-week"}}}
    with session(path, schema) as s:
        # 'b' keeps one row (k = 1): the one whose canonical encoding hashes lowest
        fixed = exact_sum(s.schema.column("hours"))
        q = {v: math.floor(min(v, 80) * fixed.scale) for v in (60, 99)}
        kept = min((60, 99), key=lambda v: (
            hashlib.sha256(encoding_text((q[v],)).encode()).hexdigest(), q[v]))
        assert s.true_answer("sum hours").item() == 40.0 + min(kept, 80)
        assert s.true_answer("SELECT COUNT(hours) FROM data").item() == 2
        with pytest.raises(ParameterError, match="no quoted identifiers"):
            s.release('sum "hours-per-week"', epsilon=0.1)


# ---------------------------------------------------- conversion and file shape
TEXT_TO_NUMBER = [("5", 5.0), (" 5 ", 5.0), ("\t7", 7.0), ("+5", 5.0), ("-2.5", -2.5),
                  ("5.", 5.0), (".5", 0.5), ("1e3", 1000.0), ("1E-2", 0.01), ("007", 7.0),
                  ("1e400", None), ("-1e400", None), ("NaN", None), ("nan", None),
                  ("Infinity", None), ("inf", None), ("0x10", None), ("1_000", None),
                  ("1,5", None), ("", None), ("abc", None), ("5 5", None), ("--5", None),
                  ("e5", None), (".", None)]


@pytest.mark.parametrize("fmt", ["csv", "parquet", "duckdb"])
def test_the_text_to_number_rule(tmp_path: Path, fmt: str) -> None:
    """The one documented conversion (source.py): strip ASCII whitespace, a decimal
    literal, nearest double, finite; anything else is missing.  Pinned here so that
    another engine can implement the same."""
    rows = [[i, f'"{t}"' if fmt == "csv" and (t != t.strip() or "," in t) else t]
            for i, (t, _) in enumerate(TEXT_TO_NUMBER)]
    path = write(tmp_path, fmt, ["i", "v"], rows)
    schema = {"dataset": {"max_rows": 1000},  # a fine exact-sum grid (2^-13)
              "columns": {"v": {"lower": -1e9, "upper": 1e9},
                          "i": {"integer": True, "lower": 0, "upper": len(rows) - 1}}}
    with session(path, schema) as s:
        got = s.true_answer("sum v by i")
        present = s.true_answer("count v by i")
        grid = exact_sum(s.schema.column("v"), 1000).sum_grid
    assert grid == 2.0**-13  # 2^(bits(U) + bits(rows) - 53) units of 2^-22
    for i, (text, want) in enumerate(TEXT_TO_NUMBER):
        assert present[i] == (want is not None), text
        if want is not None:
            assert abs(got[i] - want) <= grid / 2, text


def test_ragged_and_unparseable_csv(tmp_path: Path) -> None:
    """Short rows are padded with missing values, long rows keep their declared cells:
    no error.  A file that is not valid UTF-8 cannot be parsed at all -- refused when
    the session opens, with a fixed message that quotes nothing of the file."""
    p = tmp_path / "r.csv"
    p.write_text("x,y\n1,2\n3\n4,5,6\n\"7\",8\n")
    schema = {"columns": {"x": {"lower": 0, "upper": 10}, "y": {"lower": 0, "upper": 10}}}
    with session(p, schema) as s:
        assert s.true_answer("sum x").item() == 15.0
        assert s.true_answer("count y").item() == 3
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"x,y\n1,2\n" + _SECRET.encode() + b"\xff\xfe,3\n")
    with pytest.raises(ParameterError, match="withheld") as e:
        session(bad, schema)
    assert _SECRET not in str(e.value)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(ParameterError, match="no header"):
        session(empty, schema)


def test_a_file_changed_during_the_read_is_refused(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from dpnoise.session import source

    path = write(tmp_path, "csv", ["x"], [[1.0]])
    real = source._sha256_fd

    def hash_then_touch(fd: int) -> str:
        out = real(fd)
        os.utime(path, ns=(1, 1))
        return out

    monkeypatch.setattr(source, "_sha256_fd", hash_then_touch)
    with pytest.raises(ParameterError, match="changed while it was read"):
        session(path, {"columns": {"x": {"lower": 0, "upper": 5}}})


def test_unsupported_aggregate_message_names_every_supported_statistic(tmp_path: Path) -> None:
    """The refusal of MAX lists every aggregate the query language releases (all of _AGG)."""
    from dpnoise.session.query import _AGG

    path = write(tmp_path, "csv", ["x"], [[1.0]])
    with session(path, {"columns": {"x": {"lower": 0, "upper": 10}}}) as s:
        with pytest.raises(ParameterError) as info:
            s.release("SELECT MAX(x) FROM data", epsilon=0.1)
        message = str(info.value)
        for name in _AGG:
            assert name.upper() in message, name
        assert s.spent.epsilon == 0
