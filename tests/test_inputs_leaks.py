"""No message on the data path contains data: sentinel strings planted in cells (and in
the names of undeclared columns, and as the first row of a csv without a header line) never
appear in an exception's text (its whole chain), a warning, or anything printed -- for
every input format, for schemas that do not match the file, and for valid and invalid
queries.  The only data-dependent output is a noisy answer, which holds no sentinel."""

from __future__ import annotations

import gzip
import traceback
import warnings
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

from dpnoise import SeededRandom
from dpnoise.cli import main
from dpnoise.session import Budget, Session

TEXT = "S3NT1NEL"
NUMBER = "7777777.25"  # clamped away by every declared bound below
SENTINELS = (TEXT, "7777777")

SCHEMA = {"columns": {"age": {"lower": 0, "upper": 100},
                      "region": {"categories": ["north", "south"]},
                      "smoker": {"integer": True, "lower": 0, "upper": 1}}}
WRONG_SCHEMAS = [
    {"columns": {"missing_col": {"lower": 0, "upper": 1}}},
    {"columns": {"age": {"lower": 0, "upper": 100, "source": "nope"}}},
    {"dataset": {"user_id": "absent_id"}, "columns": {"age": {"lower": 0, "upper": 1}}},
    {"dataset": {"table": "other"}, "columns": {"age": {"lower": 0, "upper": 1}}},
]
QUERIES = [
    "count", "count where age > 30", "sum age", "mean age", "variance age",
    "quantile 0.5 age", "count by region", "mean age by region, smoker",
    "count where region = 'north' and not smoker = 1", "count where age is null",
    "SELECT region, COUNT(*) FROM data GROUP BY region",
    # invalid: unknown columns, wrong literal types, bad syntax, undeclared group keys
    "count where note > 3", "sum region", "count by note", "count where age = 'x'",
    "count where region = 5", "mean", "count by age", "SELECT * FROM data",
    "count where (", "sum age where age between 3", "quantile 2 age",
]


def rows(n: int = 12) -> list[list[str]]:
    out = []
    for i in range(n):
        sentinel_cell = [TEXT, f" {TEXT} ", NUMBER, f"{TEXT}\n{NUMBER}", ""][i % 5]
        out.append([
            str(20 + i) if i % 3 else sentinel_cell,        # age: numbers and sentinels
            ["north", "south", sentinel_cell][i % 3],      # region
            ["0", "1", sentinel_cell, "1.5"][i % 4],       # smoker
            f"{TEXT}-{i}",                                  # note (undeclared)
            NUMBER,                                         # amount (undeclared)
        ])
    return out


HEADER = ["age", "region", "smoker", f"note_{TEXT}", "amount"]


def _csv_text(header: bool, delim: str = ",") -> str:
    def field(v: str) -> str:
        return '"' + v.replace('"', '""') + '"' if any(c in v for c in f'{delim}"\n') else v
    body = [HEADER, *rows()] if header else rows()
    return "".join(delim.join(field(v) for v in r) + "\n" for r in body)


def sources(tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    (tmp / "h.csv").write_text(_csv_text(True))
    out["csv"] = str(tmp / "h.csv")
    (tmp / "n.csv").write_text(_csv_text(False))
    out["csv, no header line"] = str(tmp / "n.csv")
    (tmp / "t.tsv").write_text(_csv_text(True, "\t"))
    out["tsv"] = str(tmp / "t.tsv")
    (tmp / "g.csv.gz").write_bytes(gzip.compress(_csv_text(True).encode()))
    out["csv.gz"] = str(tmp / "g.csv.gz")
    frame = pd.DataFrame(rows(), columns=HEADER)
    frame.to_parquet(tmp / "p.parquet")
    out["parquet"] = str(tmp / "p.parquet")
    con = duckdb.connect(str(tmp / "d.duckdb"))
    con.register("f", frame)
    con.execute("CREATE TABLE t AS SELECT * FROM f")
    con.execute(f'CREATE TABLE "{TEXT}_second" AS SELECT * FROM f')
    con.close()
    out["duckdb"] = str(tmp / "d.duckdb")
    out["pandas"] = frame
    out["arrays"] = {h: np.array([r[i] for r in rows()], dtype=object)
                     for i, h in enumerate(HEADER)}
    return out


def texts_of(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc) + repr(exc.args)


def assert_clean(text: str, where: str) -> None:
    for s in SENTINELS:
        assert s not in text, f"{where}: data ({s!r}) in {text[-1500:]!r}"


def test_no_message_contains_data(tmp_path: Path) -> None:
    seen = 0
    for fmt, data in sources(tmp_path).items():
        for schema in [SCHEMA, *WRONG_SCHEMAS,
                       {**SCHEMA, "dataset": {"table": "t"}} if fmt == "duckdb" else SCHEMA]:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    # seeded: the noisy answers are fixed too (a random float's digits
                    # could spell the numeric sentinel by chance)
                    s = Session(data, Budget(1e6), None, schema=schema, rng=SeededRandom(7))
                except Exception as exc:
                    assert_clean(texts_of(exc), f"{fmt} open")
                    seen += 1
                    continue
                with s:
                    for q in QUERIES:
                        try:
                            r = s.release(q, epsilon=1.0)
                            assert_clean(r.table() + repr(r.guarantee), f"{fmt} {q!r}")
                        except Exception as exc:
                            assert_clean(texts_of(exc), f"{fmt} {q!r}")
                            seen += 1
                for w in caught:
                    assert_clean(str(w.message), f"{fmt} warning")
    assert seen > 40  # the refusals really ran


@pytest.mark.parametrize("form", ["csv", "csv, no header line"])
def test_cli_prints_no_data(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    monkeypatch.chdir(tmp_path)
    src = sources(tmp_path)[form]
    for q in ("count", "count by region", "sum note", "count where note > 1", "mean age"):
        for extra in ((), ("--json",), ("--user-id", "note"), ("--text", "region")):
            capsys.readouterr()
            rc = main(["release", "--data", src, "--bounds", "age=0:100",
                       "--categories", "region=north,south", "--query", q, "--epsilon", "1",
                       "--ledger", ":memory:", "--budget", "100", "--seed", "1", *extra])
            out, err = capsys.readouterr()
            assert rc in (0, 2)
            assert_clean(out + err, f"{form} {q!r} {extra}")
