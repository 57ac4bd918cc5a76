"""Custodian speed: ``Session.release`` against ONE plain DuckDB query, and the
CLI's ``--json`` / ``--output`` for 10^6 cells.

    python benchmarks/session.py [--quick] [--rows N] [--keys K] [--repeats R]

Prints, in one run (repeats interleaved, medians reported, load average shown):

1. ``sum x by k`` (and ``histogram k``, ``mean x by k``) over ROWS rows and KEYS public
   integer keys (parquet): the plain DuckDB query ``SELECT k, count(*), sum(least(
   greatest(x, 0), 100)) FROM read_parquet(...) GROUP BY k`` (clamping and grouping
   included, no privacy) against dpnoise: opening the Session (file hashed, the typed view
   built once: declared columns only, the text-to-number rule, missing values), and one
   release on a durable ledger with its breakdown -- aggregation (exact INT128
   fixed-point sums + scatter onto the public cells), noise, ledger (reserve + complete),
   the rest (parse, calibration, error bars).  Ratios: release / plain, and (open +
   release) / plain -- the custodian reads the file once, however many releases follow.
2. ``dpnoise release --data FILE --json`` (and ``--output FILE.csv`` / ``.parquet``) for
   10^6 cells (10^6 rows, 10^6 keys; one process each, median of the repeats).
3. Sequential small releases per second against a durable ledger, and replays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCHEMA_TOML = """[dataset]
max_rows = {rows}
[columns.x]
lower = 0
upper = 100
[columns.k]
integer = true
lower = 0
upper = {kmax}
"""


def _write_parquet(path: Path, rows: int, keys: int) -> None:
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute(
        f"COPY (SELECT (hash(i) % {keys})::BIGINT AS k, "
        f"(hash(i + {rows}) % 100000) / 1000.0 AS x FROM range({rows}) t(i)) "
        f"TO '{path}' (FORMAT PARQUET, ROW_GROUP_SIZE 1000000)")
    con.close()


def _plain(path: Path, keys: int) -> tuple[float, float]:
    """The same aggregation as one plain DuckDB query on the file (fresh connection):
    (wall, CPU) seconds."""
    import duckdb

    con = duckdb.connect(":memory:")
    t, c = time.perf_counter(), time.process_time()
    con.execute(
        f"SELECT k, count(*) AS n, sum(least(greatest(x, 0), 100)) AS s "
        f"FROM read_parquet('{path}') WHERE k BETWEEN 0 AND {keys - 1} GROUP BY k"
    ).fetchnumpy()
    out = time.perf_counter() - t, time.process_time() - c
    con.close()
    return out


class _Timers:
    """Wall-clock totals of wrapped callables (the benchmark's own instrumentation)."""

    def __init__(self) -> None:
        self.t: dict[str, float] = {}

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.t[name] = self.t.get(name, 0.0) + time.perf_counter() - t0
        return timed


def _release_breakdown(path: Path, schema: dict[str, Any], ledger: Path, query: str
                       ) -> dict[str, float]:
    from dpnoise import Budget, Session
    from dpnoise.session import adapter

    timers = _Timers()
    t0, c0 = time.perf_counter(), time.process_time()
    s = Session(path, Budget(1e6), ledger, schema=schema, create_ledger=not ledger.exists())
    out = {"open": time.perf_counter() - t0, "open_cpu": time.process_time() - c0}
    s.engine.aggregate = timers.wrap("aggregate", s.engine.aggregate)  # type: ignore[method-assign]
    s.ledger.reserve = timers.wrap("ledger", s.ledger.reserve)  # type: ignore[method-assign]
    s.ledger.complete = timers.wrap("ledger", s.ledger.complete)  # type: ignore[method-assign]
    original = adapter.Plan.release
    adapter.Plan.release = timers.wrap("noise", original)  # type: ignore[method-assign]
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        s.release(query, epsilon=1.0)
        out["release"] = time.perf_counter() - t0
        out["release_cpu"] = time.process_time() - c0
    finally:
        adapter.Plan.release = original  # type: ignore[method-assign]
        s.close()
    out["other"] = out["release"] - sum(timers.t.values())
    out.update(timers.t)
    return out


def _cli(args: list[str], cwd: Path) -> tuple[float, float]:
    """One ``dpnoise`` process, its output discarded: (wall, CPU user+sys) seconds."""
    import resource

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dpnoise", *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^6 rows, 10^5 keys, 2 repeats")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--keys", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    args = ap.parse_args()
    rows = args.rows or (1_000_000 if args.quick else 10_000_000)
    keys = args.keys or (100_000 if args.quick else 1_000_000)
    reps = args.repeats or (2 if args.quick else 3)
    schema = {"dataset": {"max_rows": rows},
              "columns": {"x": {"lower": 0, "upper": 100},
                          "k": {"integer": True, "lower": 0, "upper": keys - 1}}}
    print(f"{os.cpu_count()} cores, {_load()}, {reps} interleaved repeats (medians)")
    with tempfile.TemporaryDirectory(prefix="dpnoise-bench-") as tmpdir:
        tmp = Path(tmpdir)
        data = tmp / "big.parquet"
        t = time.perf_counter()
        _write_parquet(data, rows, keys)
        print(f"data: {rows:,} rows, {keys:,} public keys (parquet, "
              f"{data.stat().st_size / 1e6:.0f} MB, written in {time.perf_counter() - t:.1f} s)")

        # 1. Session.release vs one plain DuckDB query ------------------------------
        queries = ("sum x by k", "histogram k", "mean x by k")
        plain: list[tuple[float, float]] = []
        res: dict[str, list[dict[str, float]]] = {q: [] for q in queries}
        ledger = tmp / "ledger.sqlite"
        for q in queries:  # warm-up, not counted: imports, calibration caches, page cache
            _release_breakdown(data, schema, ledger, q)
        for _ in range(reps):
            for q in queries:
                plain.append(_plain(data, keys))
                res[q].append(_release_breakdown(data, schema, ledger, q))
        p = statistics.median(w for w, _ in plain)
        pc = statistics.median(c for _, c in plain)
        print(f"\nplain DuckDB query (no privacy), median: {p:.3f} s wall, {pc:.3f} s CPU "
              f"(both threads)  [{_load()}]")
        cols = ("open", "release", "aggregate", "noise", "ledger", "other")
        print(f"{'dpnoise (durable ledger)':22s}" + "".join(f"{c:>10s}" for c in cols)
              + f"{'rel/plain':>11s}{'(open+rel)/plain':>18s}")
        for q in queries:
            med = {c: statistics.median(r.get(c, 0.0) for r in res[q]) for c in cols}
            both = statistics.median(r["open"] + r["release"] for r in res[q])
            print(f"{q:22s}" + "".join(f"{med[c]:10.3f}" for c in cols)
                  + f"{med['release'] / p:10.2f}x{both / p:17.2f}x")
            rc = statistics.median(r["release_cpu"] for r in res[q])
            oc = statistics.median(r["open_cpu"] for r in res[q])
            print(f"{'   CPU s (process)':22s}{oc:10.3f}{rc:10.3f}{'':40s}"
                  f"{rc / pc:10.2f}x{(oc + rc) / pc:17.2f}x")
        print("open = file hashed + typed view built (once per session); release = one "
              "Session.release; aggregate/noise/ledger are parts of it (wall s).  CPU: the "
              "process's CPU time, all threads -- steadier than wall time on a loaded machine")

        # 2. the CLI with 10^6 cells ---------------------------------------------------
        cli_rows, cli_keys = (200_000, 200_000) if args.quick else (1_000_000, 1_000_000)
        small = tmp / "cells.parquet"
        _write_parquet(small, cli_rows, cli_keys)
        (tmp / "cells.toml").write_text(SCHEMA_TOML.format(rows=cli_rows, kmax=cli_keys - 1))
        base = ["release", "--data", str(small), "--ledger", ":memory:", "--budget", "1000",
                "--epsilon", "1", "--query", "sum x by k"]
        times: dict[str, list[tuple[float, float]]] = {"--json": [], "--output .csv": [],
                                         "--output .parquet": [], "(table, 30 rows)": []}
        for i in range(reps):
            times["--json"].append(_cli([*base, "--json"], tmp))
            times["--output .csv"].append(_cli([*base, "--output", f"o{i}.csv"], tmp))
            times["--output .parquet"].append(_cli([*base, "--output", f"o{i}.parquet"], tmp))
            times["(table, 30 rows)"].append(_cli(base, tmp))
        print(f"\ndpnoise release --data ({cli_rows:,} rows) 'sum x by k' -> {cli_keys:,} "
              f"cells, whole process, median  [{_load()}]")
        for k, v in times.items():
            print(f"  {k:20s} {statistics.median(w for w, _ in v):7.2f} s wall, "
                  f"{statistics.median(c for _, c in v):6.2f} s CPU   (wall/CPU of each run: "
                  + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in v) + ")")

        # 3. small ledgered releases --------------------------------------------------
        from dpnoise import Budget, Session

        tiny = tmp / "small.csv"
        tiny.write_text("x\n" + "\n".join(str(i % 50) for i in range(1000)) + "\n")
        n = 50 if args.quick else 200
        s2 = Session(tiny, Budget(1000.0), tmp / "l2.sqlite", create_ledger=True,
                     schema={"columns": {"x": {"lower": 0, "upper": 50}}})
        s2.release("count where x > 10", epsilon=0.5)
        t = time.perf_counter()
        for _ in range(n):
            s2.release("count where x > 10", epsilon=0.5)
        dt = time.perf_counter() - t
        print(f"\nledgered releases (small csv, durable ledger): {n / dt:.0f} /s "
              f"({1000 * dt / n:.1f} ms each)")
        t = time.perf_counter()
        for _ in range(n):
            s2.release("count where x > 10", epsilon=0.5, replay=True)
        dt = time.perf_counter() - t
        print(f"replayed from the ledger:                      {n / dt:.0f} /s")
        s2.close()


if __name__ == "__main__":
    main()
