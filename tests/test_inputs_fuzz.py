"""Fuzzing the custodian CLI: generated schema files (TOML text, malformed text, binary
bytes, brackets nested up to 200,000 deep) and generated argument lists for
``dpnoise release --data`` / ``dpnoise report`` run through the CLI's ``main`` in this
process, each under a per-example timeout.  Every run must end with status 0 or 2 (an
``error: ...`` line); an exception escaping ``main`` (a traceback) or an example that
outlives the timeout (a hang) fails the test.

Two sizes:

* default (the normal test run): ``DEFAULT_EXAMPLES`` examples per generator, seed fixed;
* ``DPNOISE_FUZZ=long``: ``LONG_EXAMPLES`` examples per generator, or as many as run in
  ``DPNOISE_FUZZ_SECONDS`` (default 300) of wall-clock time if that comes first (the rest
  of hypothesis' examples are then generated but not run, and not counted); seed random
  unless ``DPNOISE_FUZZ_SEED`` is set; run with ``-s`` to see the summary line
  (generator, seed, examples run, seconds, slowest example)::

      DPNOISE_FUZZ=long python -m pytest -s -p no:cacheprovider tests/test_inputs_fuzz.py
"""

from __future__ import annotations

import contextlib
import faulthandler
import gzip
import io
import os
import random
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from dpnoise.cli import main

LONG = os.environ.get("DPNOISE_FUZZ", "") == "long"
DEFAULT_EXAMPLES = 60
LONG_EXAMPLES = 5000
EXAMPLES = LONG_EXAMPLES if LONG else DEFAULT_EXAMPLES
SEED = int(os.environ.get("DPNOISE_FUZZ_SEED") or (
    random.SystemRandom().randrange(2**32) if LONG else 20261126))
#: wall-clock seconds per generator in the long run (at least 60)
LONG_SECONDS = max(60.0, float(os.environ.get("DPNOISE_FUZZ_SECONDS") or 300))
#: seconds one example may take before it counts as a hang
TIMEOUT = 60.0

pytestmark = pytest.mark.slow  # input fuzzing, not a privacy check: make test-quick skips it

FUZZ_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                         database=None, print_blob=True,
                         suppress_health_check=list(HealthCheck))


class HangError(Exception):
    """An example ran longer than TIMEOUT seconds."""


@contextlib.contextmanager
def time_limit(seconds: float):  # type: ignore[no-untyped-def]
    """Raise :class:`HangError` in this (main) thread after ``seconds`` (SIGALRM interrupts
    blocking system calls such as opening a FIFO); a C-level hang that never returns to
    Python is caught by faulthandler, which kills the process (a failed run)."""
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover
        pytest.fail("the fuzz tests need the main thread (SIGALRM)")

    def alarm(signum: int, frame: Any) -> None:
        raise HangError(f"example still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    faulthandler.dump_traceback_later(3 * seconds, exit=True)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        faulthandler.cancel_dump_traceback_later()


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse: a usage error is status 2
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def check(argv: list[str], stats: dict[str, Any]) -> None:
    t = time.perf_counter()
    with time_limit(TIMEOUT):
        rc, out, err = run_cli(argv)
    dt = time.perf_counter() - t
    stats["n"] += 1
    stats["slowest"] = max(stats["slowest"], dt)
    stats["codes"][rc] = stats["codes"].get(rc, 0) + 1
    if os.environ.get("DPNOISE_FUZZ_VERBOSE"):
        print(rc, argv[-12:], err.strip().splitlines()[-1:] if err.strip() else "")
    assert rc in (0, 2), (rc, argv, err[-2000:])
    assert "Traceback" not in err and "Traceback" not in out, (argv, err[-2000:])
    if rc == 2:
        assert "error: " in err or "usage: " in err, (argv, err[-2000:])


def summarise(name: str, stats: dict[str, Any], start: float) -> None:
    print(f"\nfuzz[{name}]: seed={SEED} examples={stats['n']} "
          f"seconds={time.perf_counter() - start:.1f} slowest={stats['slowest']:.2f}s "
          f"exit codes={dict(sorted(stats['codes'].items()))}")


def fuzz(name: str, strategy: st.SearchStrategy[Any],
         body: Callable[[Any], list[str]]) -> None:
    stats: dict[str, Any] = {"n": 0, "slowest": 0.0, "codes": {}}
    start = time.perf_counter()

    @seed(SEED)
    @FUZZ_SETTINGS
    @given(strategy)
    def one(x: Any) -> None:
        if LONG and time.perf_counter() - start > LONG_SECONDS:
            return  # out of time: generated, not run, not counted
        check(body(x), stats)

    try:
        one()
    finally:
        summarise(name, stats, start)
    if LONG:  # 5000 examples, or the full time budget
        assert stats["n"] >= EXAMPLES or time.perf_counter() - start > LONG_SECONDS
    else:
        assert stats["n"] >= EXAMPLES  # every example ran (none skipped or filtered)


# ------------------------------------------------------------------ fixtures on disk
@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("fuzz")
    rows = "".join(f'{20 + i % 70},{["north", "south", "east"][i % 3]},{i % 2},'
                   f'{1000 * i},"note ""{i}""\n,x"\n' for i in range(60))
    head = "age,region,smoker,income,note\n"
    (d / "d.csv").write_text(head + rows)
    (d / "crlf.csv").write_bytes(("\ufeff" + head + rows).replace("\n", "\r\n").encode())
    (d / "nohead.csv").write_text(rows)
    (d / "d.tsv").write_text(head.replace(",", "\t") + "30\tnorth\t1\t5\tx\n")
    (d / "d.csv.gz").write_bytes(gzip.compress((head + rows).encode()))
    (d / "bad.csv").write_bytes(head.encode() + b"3\xff,\x00north\n")
    (d / "empty.csv").write_bytes(b"")
    (d / "dir.csv").mkdir()
    os.mkfifo(d / "fifo.csv")
    (d / "zero.csv").symlink_to("/dev/zero")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(d / "sock.csv"))
    (d / "d.toml").write_text('[columns.age]\nlower = 0\nupper = 100\n')
    (d / "out").mkdir()
    assert run_cli(["ledger", "init", str(d / "l.db"), "--budget", "1e9"])[0] == 0
    out = {p.name: str(p) for p in d.iterdir()}
    out["dir"] = str(d)
    out["_sock"] = sock  # type: ignore[assignment]  # keep the socket bound
    return out


# ------------------------------------------------------------------ schema files
NUMBERS = ["0", "1", "-1", "100", "-0.0", "1e308", "-1e308", "2e154", "3.2e144",
           f"{2.0**480!r}", f"{2.0**970!r}", "1e-320", "nan", "inf", "-inf", "1_000",
           "0x10", "9007199254740993", "99999999999999999999999", "0.5"]
LITERALS = [*NUMBERS, '"x"', '""', '"north"', "true", "false", "[]", "[1, 2]",
            '["a", "b"]', '["a", 1]', "[[1]]", "{}", "{a = 1}", "1979-05-27",
            '"age"', '"\\u0000"', "'lit'", '"""multi\nline"""']
KEYS = ["lower", "upper", "categories", "integer", "source", "text", "description",
        "user_id", "max_rows", "max_contributions", "table", "max_groups",
        "max_rows_per_group", "name", "bogus", "age", "dataset", "columns"]
COLS = ["age", "income", "region", "smoker", "note", "x", "bad-name", '"quoted col"', "1a"]


@st.composite
def toml_text(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["near-valid", "near-valid", "near-valid", "structured",
                                 "structured", "mutated", "binary", "text", "deep"]))
    if kind == "binary":
        return draw(st.binary(max_size=400))
    if kind == "text":
        return draw(st.text(max_size=300)).encode("utf-8", "surrogatepass")
    if kind == "deep":
        n = draw(st.sampled_from([10, 63, 64, 65, 1000, 100_000, 200_000]))
        o, c = draw(st.sampled_from([("[", "]"), ("{a = ", "}"), ("[{a = ", "}]")]))
        return (f"{draw(st.sampled_from(['x', 'columns', 'dataset']))} = "
                + o * n + "1" + c * n + "\n").encode()
    lines = []
    if kind == "near-valid":  # a valid schema with a few values replaced
        base = VALID.copy()
        for _ in range(draw(st.integers(0, 3))):
            i = draw(st.integers(0, len(base) - 1))
            if " = " in base[i]:
                own = base[i].split(" = ")[0]
                key = own if draw(st.integers(0, 2)) else draw(st.sampled_from(KEYS))
                base[i] = f"{key} = {draw(st.sampled_from(LITERALS))}"
        lines = base
    for _ in range(draw(st.integers(0, 5 if kind != "near-valid" else 1))):
        header = draw(st.sampled_from(["[dataset]", "[columns]", "[[columns]]", "[x]",
                                       *(f"[columns.{c}]" for c in COLS)]))
        lines.append(header)
        for _ in range(draw(st.integers(0, 5))):
            lines.append(f"{draw(st.sampled_from(KEYS))} = {draw(st.sampled_from(LITERALS))}")
    text = "\n".join(lines) + "\n"
    if kind == "mutated" and text:
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.text(max_size=5)) + text[i + draw(st.integers(0, 5)):]
    return text.encode("utf-8", "surrogatepass")


VALID = ["[dataset]", "max_rows = 1000", "[columns.age]", "lower = 0", "upper = 100",
         "[columns.income]", "lower = 0", "upper = 100000", "[columns.region]",
         'categories = ["north", "south", "east"]', "[columns.smoker]", "integer = true",
         "lower = 0", "upper = 1"]
QUERIES = ["count", "sum age", "mean income", "variance age", "stddev income",
           "quantile 0.5 age", "count by region", "mean age by region", "count where age > 3",
           "SELECT region, SUM(income) FROM data GROUP BY region"]


def test_fuzz_schema_files(files: dict[str, str]) -> None:
    path = Path(files["dir"]) / "fuzz.toml"

    def body(x: tuple[bytes, str, str, bool]) -> list[str]:
        text, data, q, dry = x
        path.write_bytes(text)
        return ["release", "--data", files[data], "--schema", str(path), "--query", q,
                "--epsilon", "1", "--ledger", ":memory:", "--budget", "100",
                *(["--dry-run"] if dry else ["--seed", "1"])]

    fuzz("schema files", st.tuples(toml_text(), st.sampled_from(["d.csv", "crlf.csv"]),
                                   st.sampled_from(QUERIES), st.booleans()), body)


# ------------------------------------------------------------------ argument lists
VALUES = [*NUMBERS, "", "x", "0.95", "1.5", "1e-5", "1000", "1001", "5", "-5", "2",
          "10,1e-6", "1,2,3"]
COLUMN_NAMES = ["age", "income", "region", "smoker", "note", "nope", "", "age income"]


@st.composite
def queries(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=60))
    stat = draw(st.sampled_from(["count", "sum", "mean", "variance", "stddev", "median",
                                 "histogram", "quantile 0.9", "quantile 1.5", "count(",
                                 "avg"]))
    col = draw(st.sampled_from(COLUMN_NAMES))
    q = f"{stat} {col}" if stat != "count" or draw(st.booleans()) else stat
    if draw(st.booleans()):
        lit = draw(st.sampled_from(["3", "'north'", "1e400", "-0", "'x''y'", "nan", "null",
                                    "(1, 2)", "9007199254740993"]))
        op = draw(st.sampled_from([">", "<=", "=", "<>", "in", "between 1 and", "is",
                                   "is not null", "not in"]))
        q += f" where {draw(st.sampled_from(COLUMN_NAMES))} {op} {lit}"
    if draw(st.booleans()):
        q += " by " + ", ".join(draw(st.lists(st.sampled_from(COLUMN_NAMES), max_size=3)))
    return q


OPTIONS: dict[str, Callable[[dict[str, str]], st.SearchStrategy[str]]] = {
    "--epsilon": lambda f: st.sampled_from(VALUES),
    "--delta": lambda f: st.sampled_from(VALUES),
    "--bounds": lambda f: st.builds(lambda c, a, b: f"{c}={a}:{b}", st.sampled_from(COLUMN_NAMES),
                              st.sampled_from(NUMBERS), st.sampled_from(NUMBERS)),
    "--categories": lambda f: st.builds(lambda c, v: f"{c}={v}", st.sampled_from(COLUMN_NAMES),
                                  st.sampled_from(["north,south", "1,2", "", ",", "a,a"])),
    "--keys": lambda f: st.builds(lambda c, a, b: f"{c}={a}:{b}", st.sampled_from(COLUMN_NAMES),
                            st.sampled_from(["0", "-3", "1.5", "1e9", "x"]),
                            st.sampled_from(["1", "100", "0", "1e9", "nan"])),
    "--user-id": lambda f: st.sampled_from(COLUMN_NAMES),
    "--max-contributions": lambda f: st.sampled_from(VALUES),
    "--max-rows": lambda f: st.sampled_from(VALUES),
    "--confidence": lambda f: st.sampled_from(VALUES),
    "--mechanism": lambda f: st.sampled_from(
        ["laplace", "geometric", "clamped-laplace", "range-laplace", "staircase",
         "count-noise", "discrete-gaussian", "truncated-laplace", "nope", ""]),
    "--reserve-for": lambda f: st.sampled_from(VALUES),
    "--limit": lambda f: st.sampled_from(VALUES),
    "--text": lambda f: st.sampled_from(COLUMN_NAMES),
    "--max-groups": lambda f: st.sampled_from(VALUES),
    "--max-rows-per-group": lambda f: st.sampled_from(VALUES),
    "--release-rows": lambda f: st.sampled_from(VALUES),
    "--output": lambda f: st.sampled_from([os.path.join(f["out"], "o.csv"), "missing/o.csv",
                                     "o.csv/", f["out"], os.path.join(f["out"], "o.parquet"),
                                     os.path.join(f["out"], "o.json"), ""]),
    "--table": lambda f: st.sampled_from(["t", "", "x-y"]),
    "--engine": lambda f: st.sampled_from(["duckdb", "nope"]),
}


@st.composite
def arguments(draw: st.DrawFn, files: dict[str, str]) -> list[str]:
    if draw(st.integers(0, 7)) == 0:  # the report command
        target = draw(st.sampled_from(["r.html", "missing/r.html", "r.html/", ".", "",
                                       "fifo.csv", "dir.csv"]))
        path = target if target in ("", ".") else os.path.join(files["dir"], target)
        return ["report", files["l.db"], "--out", path]
    if draw(st.booleans()):  # near-valid: a release that works, then a few flags changed
        argv = ["release", "--data", files["d.csv"], "--query",
                draw(st.sampled_from(QUERIES)) if draw(st.booleans()) else draw(queries()),
                "--bounds", "age=0:100", "--bounds", "income=0:1e5",
                "--categories", "region=north,south,east", "--keys", "smoker=0:1",
                "--epsilon", "1", "--ledger", ":memory:", "--budget", "100"]
        for _ in range(draw(st.integers(0, 3))):
            flag = draw(st.sampled_from(sorted(OPTIONS)))
            argv += [flag, draw(OPTIONS[flag](files))]
        argv += draw(st.lists(st.sampled_from(["--dry-run", "--json", "--replay"]),
                              max_size=2, unique=True))
        return argv
    data = draw(st.sampled_from(["d.csv", "crlf.csv", "nohead.csv", "d.tsv", "d.csv.gz",
                                 "bad.csv", "empty.csv", "dir.csv", "fifo.csv", "zero.csv",
                                 "sock.csv", "missing.csv", "d.toml"]))
    argv = ["release", "--data", os.path.join(files["dir"], data), "--query", draw(queries())]
    if draw(st.integers(0, 3)):
        argv += ["--epsilon", "1"]
    for flag in draw(st.lists(st.sampled_from(sorted(OPTIONS)), max_size=6)):
        argv += [flag, draw(OPTIONS[flag](files))]
    for flag in draw(st.lists(st.sampled_from(["--dry-run", "--json", "--replay"]),
                              max_size=2, unique=True)):
        argv.append(flag)
    if draw(st.integers(0, 4)) == 0:
        argv += ["--ledger", files["l.db"]]
    else:
        argv += ["--ledger", ":memory:", "--budget", draw(st.sampled_from([*VALUES, "100"]))]
        if draw(st.booleans()):
            argv += ["--seed", draw(st.sampled_from(["1", "x", ""]))]
    if draw(st.integers(0, 5)) == 0:  # shuffled: flags and values out of order
        draw(st.randoms(use_true_random=False)).shuffle(argv)
    return argv


def test_fuzz_argument_lists(files: dict[str, str]) -> None:
    out_dir = Path(files["out"])

    def body(argv: list[str]) -> list[str]:
        for p in out_dir.iterdir():  # a fresh output directory per example
            p.unlink()
        return argv

    fuzz("argument lists", arguments(files), body)
