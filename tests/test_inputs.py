"""Inputs that must neither crash, hang nor speak about the data, each reproduced with real
files and real processes: RFC 4180 csv (quoted newlines and quotes, CRLF, a BOM, cells over
2 MiB), a csv without a header line, variance bounds, schema files of the wrong shape,
output paths checked before anything is reserved, FIFOs / devices / sockets as data, and
the ``-0.0`` lower error bar."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

from dpnoise import ParameterError
from dpnoise.cli import main
from dpnoise.session import Budget, Ledger, Schema, Session
from dpnoise.session.source import VIEW, Source

SCHEMA = {"columns": {"age": {"lower": 0, "upper": 100},
                      "region": {"categories": ["north", "south"]}}}
TOML = """[columns.age]
lower = 0
upper = 100

[columns.region]
categories = ["north", "south"]
"""


def run(*args: str, cwd: Path | None = None, timeout: float = 120
        ) -> subprocess.CompletedProcess[str]:
    """``dpnoise ARGS`` in a new process (a hang fails the test at ``timeout``)."""
    return subprocess.run([sys.executable, "-m", "dpnoise", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


class Done:
    """What :func:`cli` returns: the shape of a CompletedProcess."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> Done:
    """``dpnoise ARGS`` in this process (the cheap route for variants of one scenario;
    every scenario is also run once in a real process)."""
    capsys.readouterr()
    try:
        rc = main(list(args))
    except SystemExit as exc:  # argparse
        rc = int(exc.code or 0)
    out, err = capsys.readouterr()
    return Done(rc, out, err)


def clean_error(p: subprocess.CompletedProcess[str] | Done) -> str:
    """Assert a clean refusal (status 2, one ``error:`` line, no traceback); its text."""
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr
    assert "error: " in p.stderr, p.stderr
    return p.stderr


def view(path: Path, schema: dict = SCHEMA) -> list[tuple]:  # type: ignore[type-arg]
    con = duckdb.connect()
    src = Source(con, path, Schema.from_dict(schema))
    try:
        return con.execute(f"SELECT age, region FROM {VIEW}").fetchall()
    finally:
        src.close()
        con.close()


def expected(text: str) -> list[tuple]:  # type: ignore[type-arg]
    """The typed view by Python's csv module (RFC 4180) and the documented rule."""
    csv.field_size_limit(1 << 30)
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))
    head = rows[0]
    out = []
    for r in rows[1:]:
        r = r + [""] * (len(head) - len(r))
        age = r[head.index("age")].strip(" \t\n\v\f\r")
        reg = r[head.index("region")].strip(" \t\n\v\f\r")
        out.append((float(age) if age else None,
                    ["north", "south"].index(reg) if reg in ("north", "south") else None))
    return out


# ------------------------------------------------------------------ RFC 4180 csv
BIG = "z" * (3 << 20)  # one cell of 3 MiB (DuckDB's default record limit is 2 MiB)
CSV_CASES = {
    "quoted newline, undeclared column": 'age,region,note\n30,north,"two\nlines"\n40,south,x\n',
    "quoted newline, declared column": 'age,region\n30,"north"\n41,"so\nuth"\n50,south\n',
    "doubled quotes": 'age,region,note\n30,north,"say ""hi"", twice"\n40,south,""""\n',
    "CRLF with a quoted CRLF": 'age,region,note\r\n30,north,"a\r\nb"\r\n40,south,c\r\n',
    "BOM": '\ufeffage,region\n30,north\n40,south\n',
    "BOM, CRLF, quoted header": '\ufeff"age","region"\r\n30,north\r\n',
    "cell over 2 MiB": f"age,region,note\n30,north,{BIG}\n40,south,ok\n",
    "quoted cell over 2 MiB with newlines": 'age,region,note\n30,north,"'
    + "ab\n" * (1 << 20) + '"\n40,south,ok\n',
    "short row padded": 'age,region,note\n30,"north","x\ny"\n40\n',
}


@pytest.mark.parametrize("name", list(CSV_CASES))
def test_rfc4180_csv_is_read_exactly(tmp_path: Path, name: str) -> None:
    text = CSV_CASES[name]
    f = tmp_path / "data.csv"
    f.write_bytes(text.encode("utf-8"))
    assert view(f) == expected(text)


def test_rfc4180_csv_releases_in_a_real_process(tmp_path: Path) -> None:
    """The whole CLI on a file with quoted newlines, CRLF, a BOM and a 3 MiB cell: at
    epsilon = 1000 the count's noise is 0 except with probability ~e^-1000."""
    text = ("\ufeffage,region,note\r\n" + "".join(
        f'{20 + i},{"north" if i % 2 else "south"},"line\r\nbreak ""{i}"""\r\n'
        for i in range(37)) + f"99,north,{BIG}\r\n")
    (tmp_path / "d.csv").write_bytes(text.encode())
    (tmp_path / "d.toml").write_text(TOML)
    p = run("release", "--data", "d.csv", "--query", "count by region", "--epsilon", "1000",
            "--ledger", ":memory:", "--budget", "1000", "--seed", "1", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert [r[:2] for r in rows] == [["north", 19], ["south", 19]]


def test_malformed_csv_refused_when_the_session_opens_quoting_no_cell(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_bytes(b"age,region\n30,north\n40,SENTINEL\xff\xfeCELL\n")
    with pytest.raises(ParameterError) as e:
        Session(str(f), Budget(1), None, schema=SCHEMA)  # refused at open, no query
    assert "SENTINEL" not in str(e.value) and "CELL" not in str(e.value)
    assert e.value.__cause__ is None and e.value.__suppress_context__
    (tmp_path / "s.toml").write_text(TOML)
    p = run("release", "--data", str(f), "--schema", "s.toml", "--query", "count",
            "--epsilon", "1", "--ledger", ":memory:", "--budget", "1", cwd=tmp_path)
    assert "SENTINEL" not in clean_error(p)


# ------------------------------------------------------------------ no header line
def test_csv_without_header_line_names_no_data(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("33,SECRET_FIRST_ROW\n44,SECRET_SECOND\n")
    (tmp_path / "d.toml").write_text(TOML)
    p = run("release", "--data", "d.csv", "--query", "count", "--epsilon", "1",
            "--ledger", ":memory:", "--budget", "1", cwd=tmp_path)
    err = clean_error(p)
    assert "SECRET" not in err and "33" not in err and "['age', 'region']" in err


# ------------------------------------------------------------------ variance bounds
def test_variance_bounds_above_2_480_refused_at_2_480_released(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("x\n1\n2\n")
    b = 2.0**480
    ok = f"x={-b!r}:{b!r}"
    above = f"x={-b!r}:{math.nextafter(b, math.inf)!r}"
    base = ("release", "--data", "d.csv", "--epsilon", "1", "--ledger", ":memory:",
            "--budget", "10")
    # real processes: the scenario of the report (an OverflowError traceback before)
    assert run(*base, "--bounds", ok, "--query", "variance x", "--seed", "1",
               cwd=tmp_path).returncode == 0
    assert "2^480" in clean_error(run(*base, "--bounds", "x=0:1e200", "--query",
                                      "stddev x", "--dry-run", cwd=tmp_path))
    for stat in ("variance", "stddev"):
        for extra in (("--seed", "1"), ("--dry-run",), ("--max-rows", "1000", "--seed", "1")):
            good = cli(capsys, *base, "--bounds", ok, "--query", f"{stat} x", *extra)
            assert good.returncode == 0, good.stderr[-3000:]
            bad = cli(capsys, *base, "--bounds", above, "--query", f"{stat} x", *extra)
            assert "2^480" in clean_error(bad)
    # a public row bound so large that the sum of squares leaves the exact grid: refused
    clean_error(cli(capsys, *base, "--bounds", ok, "--query", "variance x", "--max-rows",
                    str(2**50), "--seed", "1"))
    # the schema file route, and mean/sum keep the full 2^970 range (dry-run included)
    (tmp_path / "d.toml").write_text(f"[columns.x]\nlower = -1e200\nupper = {2.0**970!r}\n")
    assert "2^480" in clean_error(cli(capsys, *base, "--query", "variance x"))
    for q in ("mean x", "sum x", "count where x > 0"):
        for extra in (("--dry-run",), ("--seed", "1")):
            p = cli(capsys, *base, "--query", q, *extra)
            assert p.returncode == 0, p.stderr[-3000:]


# ------------------------------------------------------------------ schema shapes
DEEP = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
BAD_SCHEMAS: dict[str, bytes] = {
    "binary bytes": b"\x00\xff\xfe\x80\x81garbage\x00",
    "dataset = 5": b"dataset = 5\n",
    "columns = 5": b"columns = 5\n",
    "columns = [1, 2]": b"columns = [1, 2]\n",
    "nested 100,000 deep": DEEP.encode(),
    "nested tables 100,000 deep": ("x = " + "{a = " * 100_000 + "1" + "}" * 100_000
                                   + "\n").encode(),
    "columns.age = 5": b"[columns]\nage = 5\n",
    "dataset = [1]": b"dataset = [1]\n",
    "top-level array of tables": b"[[columns]]\nx = 1\n",
    "invalid TOML": b"[columns.age\nlower = \n",
    "empty column name": b'[columns.""]\nlower = 0\nupper = 1\n',
    "bounds as strings": b'[columns.age]\nlower = "0"\nupper = "1"\n',
    "nan bound": b"[columns.age]\nlower = nan\nupper = 1\n",
    "categories nested": b"[columns.age]\ncategories = [[1], [2]]\n",
    "max_rows huge": b"[dataset]\nmax_rows = 1e400\n[columns.age]\nlower = 0\nupper = 1\n",
    "user_id table": b"[dataset.user_id]\nx = 1\n",
    "UTF-16": "[columns.age]\nlower = 0\nupper = 1\n".encode("utf-16"),
}


@pytest.mark.parametrize("name", list(BAD_SCHEMAS))
def test_schema_files_of_the_wrong_shape_are_clean_errors(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("age,region\n30,north\n")
    (tmp_path / "s.toml").write_bytes(BAD_SCHEMAS[name])
    args = ("release", "--data", "d.csv", "--schema", "s.toml", "--query", "count",
            "--epsilon", "1", "--ledger", ":memory:", "--budget", "1")
    if name in ("binary bytes", "dataset = 5", "columns = 5", "columns = [1, 2]",
                "nested 100,000 deep"):  # the reported cases, in a real process
        clean_error(run(*args, cwd=tmp_path))
    for extra in ((), ("--dry-run",)):
        clean_error(cli(capsys, *args, *extra))


# ------------------------------------------------------------------ output paths
def test_output_path_refused_before_anything_is_reserved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("age,region\n30,north\n40,south\n")
    (tmp_path / "d.toml").write_text(TOML)
    (tmp_path / "sub").mkdir()
    assert run("ledger", "init", "l.db", "--budget", "1", cwd=tmp_path).returncode == 0
    args = ("release", "--data", "d.csv", "--query", "count by region", "--epsilon", "0.5",
            "--ledger", "l.db", "--output")
    assert "does not exist" in clean_error(run(*args, "missing-dir/out.csv", cwd=tmp_path))
    for out in ("out.csv/", "newdir/", ".", "d.csv", "sub", "sub/", "missing/x.parquet"):
        clean_error(cli(capsys, *args, out))
    with Ledger(str(tmp_path / "l.db")) as led:
        assert led.spent().epsilon == 0.0 and led.entries() == []
    ok = cli(capsys, *args, "sub/fine.csv")
    assert ok.returncode == 0 and (tmp_path / "sub" / "fine.csv").is_file(), ok.stderr


def test_report_out_path_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "fifo.html")
    assert run("ledger", "init", "l.db", "--budget", "1", cwd=tmp_path).returncode == 0
    assert "does not exist" in clean_error(run("report", "l.db", "--out", "missing/r.html",
                                               cwd=tmp_path, timeout=60))
    for out in ("r.html/", ".", "sub", "fifo.html"):
        clean_error(cli(capsys, "report", "l.db", "--out", out))
    assert cli(capsys, "report", "l.db", "--out", "sub/r.html").returncode == 0


def test_report_never_overwrites_the_ledger_or_another_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out`` named the ledger itself (or a data file, or a link to either): the report
    replaced it and every recorded release was lost.  Only an earlier report (or an empty
    file) is replaced now."""
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "ledger", "init", "l.db", "--budget", "1").returncode == 0
    before = (tmp_path / "l.db").read_bytes()
    (tmp_path / "data.csv").write_text("x\n1\n")
    os.symlink("l.db", tmp_path / "link.html")
    for out in ("l.db", "data.csv", "link.html"):
        assert "not an HTML page" in clean_error(cli(capsys, "report", "l.db", "--out", out))
    assert (tmp_path / "l.db").read_bytes() == before
    assert (tmp_path / "data.csv").read_text() == "x\n1\n"
    (tmp_path / "empty.html").touch()
    for out in ("r.html", "r.html", "empty.html"):  # a new file, a report again, empty
        assert cli(capsys, "report", "l.db", "--out", out).returncode == 0


# ------------------------------------------------------------------ not regular files
def _specials(tmp: Path) -> dict[str, Path]:
    fifo = tmp / "fifo.csv"
    os.mkfifo(fifo)
    dev = tmp / "zero.csv"
    dev.symlink_to("/dev/zero")  # a character device: read forever if ever opened
    sock = tmp / "sock.csv"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))  # left bound: the file stays a socket while the test runs
    tmp.joinpath("dir.csv").mkdir()
    return {"fifo": fifo, "device": dev, "socket": sock, "directory": tmp / "dir.csv",
            "_keep": s}  # type: ignore[dict-item]


def test_data_that_is_not_a_regular_file_is_refused_without_hanging(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    special = _specials(tmp_path)
    (tmp_path / "s.toml").write_text(TOML)
    args = ("--schema", "s.toml", "--query", "count", "--epsilon", "1", "--ledger",
            ":memory:", "--budget", "1")
    # the reported hang, in a real process with a timeout
    p = run("release", "--data", str(special["fifo"]), *args, cwd=tmp_path, timeout=60)
    assert "not a regular file" in clean_error(p)
    for kind in ("fifo", "device", "socket", "directory"):
        assert "not a regular file" in clean_error(
            cli(capsys, "release", "--data", str(special[kind]), *args))
        with pytest.raises(ParameterError, match="not a regular file"):
            Session(str(special[kind]), Budget(1), None, schema=SCHEMA)


def test_schema_that_is_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("age,region\n30,north\n")
    os.mkfifo(tmp_path / "s.toml")
    p = run("release", "--data", "d.csv", "--schema", "s.toml", "--query", "count",
            "--epsilon", "1", "--ledger", ":memory:", "--budget", "1", cwd=tmp_path,
            timeout=60)
    assert "not a regular file" in clean_error(p)


# ------------------------------------------------------------------ -0.0 never printed
def test_count_lower_error_bar_is_never_negative_zero(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("age,region\n30,north\n40,south\n")
    (tmp_path / "d.toml").write_text(TOML)
    base = ("release", "--data", "d.csv", "--query", "count by region", "--epsilon", "1",
            "--ledger", ":memory:", "--budget", "100")
    zeros = 0
    for seed in range(4):
        go = run if seed == 0 else (lambda *a, cwd: cli(capsys, *a))
        p = go(*base, "--seed", str(seed), "--json", cwd=tmp_path)
        assert p.returncode == 0 and "-0.0" not in p.stdout, p.stdout
        lows = [r[2] for r in json.loads(p.stdout)["rows"]]
        zeros += sum(v == 0 for v in lows)
        out = tmp_path / f"o{seed}.csv"
        p = go(*base, "--seed", str(seed), "--output", out.name, cwd=tmp_path)
        assert p.returncode == 0 and "-0.0" not in out.read_text()
        text = go(*base, "--seed", str(seed), cwd=tmp_path).stdout
        assert " -0 " not in text and "-0.0" not in text
    assert zeros > 0  # the case (a lower bar clamped to 0) did occur
    s = Session({"age": np.array([30.0]), "region": np.array(["north"])}, Budget(10), None,
                schema=SCHEMA, rng=None)
    r = s.release("count by region", epsilon=1)
    lo, _ = r.interval()
    assert all(math.copysign(1.0, v) == 1.0 for v in np.ravel(lo) if v == 0)
