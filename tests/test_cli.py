"""The command line: the documented commands work, bad input exits non-zero with a message."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpnoise.cli import main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dpnoise", *args], capture_output=True,
                          text=True, timeout=120)


def test_help_lists_commands() -> None:
    out = run("--help")
    assert out.returncode == 0
    for cmd in ("release", "verify", "demo", "reproduce"):
        assert cmd in out.stdout


def test_release_laplace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "laplace", "--epsilon", "1", "--sensitivity", "1", "42"]) == 0
    out = capsys.readouterr().out
    assert "1-DP" in out and "42 ->" in out


def test_release_json_is_reproducible_with_seed(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["release", "laplace", "--epsilon", "1", "--seed", "7", "--json", "1", "2"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert first == second
    assert first["guarantee"]["epsilon"] == 1.0
    assert [r["true"] for r in first["releases"]] == [1.0, 2.0]


def test_verify_laplace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "laplace", "--epsilon", "1", "--sensitivity", "1"]) == 0
    assert "PASS" in capsys.readouterr().out


def test_verify_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "laplace", "--epsilon", "0.5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is True and report["verified_epsilon"] <= 0.5


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["release", "laplace", "--epsilon", "-1", "3"], "epsilon must be in [1e-05, 1000]"),
        (["release", "laplace", "--epsilon", "1", "--sensitivity", "0", "3"], "sensitivity"),
        (["release", "laplace", "--epsilon", "1", "nan"], "finite"),
        (["release", "clamped-laplace", "--epsilon", "1", "--lower", "0", "--upper", "1", "5"],
         "declared range"),
    ],
)
def test_bad_input_exits_nonzero(args: list[str], needle: str) -> None:
    out = run(*args)
    assert out.returncode == 2
    assert needle in out.stderr and out.stdout == ""


@pytest.mark.slow  # runs the whole demo: no privacy check here
def test_demo_runs() -> None:
    out = run("demo", "--seed", "1")
    assert out.returncode == 0, out.stderr
    assert "respondents" in out.stdout


def test_progress_is_silent_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from dpnoise.progress import progress

    assert list(progress(range(5), total=5, desc="x")) == [0, 1, 2, 3, 4]
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_release_output_writes_the_table_with_error_bars(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """--output FILE (.csv / .parquet): the released table and its low/high columns are
    written, not printed; a bad suffix or an existing file is refused before any spend."""
    import csv as csv_mod

    import duckdb

    from dpnoise.demo import survey_paths

    data, _ = survey_paths()
    base = ["release", "--data", str(data), "--ledger", ":memory:", "--budget", "1",
            "--query", "histogram region", "--epsilon", "0.5"]
    out_csv = tmp_path / "t.csv"
    assert main([*base, "--output", str(out_csv)]) == 0
    printed = capsys.readouterr().out
    assert f"written:    {out_csv}" in printed and "north" not in printed
    with out_csv.open() as fh:
        rows = list(csv_mod.reader(fh))
    assert rows[0] == ["region", "count", "low", "high"] and len(rows) == 5
    for _region, value, low, high in rows[1:]:
        assert float(low) <= float(value) <= float(high)
    out_pq = tmp_path / "t.parquet"
    assert main([*base, "--output", str(out_pq)]) == 0
    got = duckdb.sql(f"SELECT * FROM read_parquet('{out_pq}')").fetchall()
    assert len(got) == 4 and {r[0] for r in got} == {"north", "south", "east", "west"}
    capsys.readouterr()
    assert main([*base, "--output", str(out_csv)]) == 2  # exists already
    assert main([*base, "--output", str(tmp_path / "t.txt")]) == 2  # unknown format
    err = capsys.readouterr().err
    assert "exists already" in err and ".csv or .parquet" in err
