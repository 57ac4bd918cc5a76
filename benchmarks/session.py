"""Session throughput: a GROUP BY over 10^6 public keys, and ledgered releases per second.

    python benchmarks/session.py [--quick]

Prints wall-clock times of the phases of one release (DuckDB aggregation + scatter onto
the public cells, calibration, noise, ledger) and a ratio against numpy's (unsafe,
float) Laplace for the same number of cells.  Also: sequential small releases per second
against a durable SQLite ledger (two fsync'd transactions each).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    import duckdb

    from dpnoise import Budget, Session

    groups = 100_000 if args.quick else 1_000_000
    rows = 3 * groups
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "big.parquet"
        t = time.perf_counter()
        duckdb.execute(
            f"COPY (SELECT (hash(i) % {groups})::BIGINT AS k, (i % 1000) / 10.0 AS x, "
            f"i // 2 AS uid FROM range({rows}) t(i)) TO '{data}' (FORMAT PARQUET)"
        )
        print(f"data: {rows:,} rows, {groups:,} public keys (parquet, "
              f"{data.stat().st_size / 1e6:.1f} MB, written in {time.perf_counter() - t:.2f} s)")
        schema = {"columns": {"k": {"integer": True, "lower": 0, "upper": groups - 1},
                              "x": {"lower": 0, "upper": 100}}}
        s = Session(data, Budget(10.0), Path(tmp) / "ledger.sqlite", schema=schema,
                    create_ledger=True)
        print(f"\n{'release':34s} {'total s':>8s} {'aggregate s':>12s} {'numpy lap s':>12s} "
              f"{'ratio':>6s}")
        for q in ("histogram k", "sum x by k", "mean x by k"):
            s.release(q, epsilon=1.0)  # warm: calibration cached, files in page cache
            t = time.perf_counter()
            r = s.release(q, epsilon=1.0)
            total = time.perf_counter() - t
            t = time.perf_counter()
            s.engine.aggregate(s.parse(q))
            agg = time.perf_counter() - t
            g = np.random.default_rng(0)
            reps = 2 if q.startswith("mean") else 1
            t = time.perf_counter()
            for _ in range(reps):
                _ = np.zeros(groups) + g.laplace(0.0, 1.0, groups)
            lap = time.perf_counter() - t
            assert r.values.size == groups
            print(f"{q:34s} {total:8.3f} {agg:12.3f} {lap:12.3f} {total / lap:6.1f}x")
        cold = Session(data, None, Path(tmp) / "ledger.sqlite", schema=schema)
        t = time.perf_counter()
        cold.release("mean x by k", epsilon=0.5)
        print(f"{'mean x by k, new Session object':34s} {time.perf_counter() - t:8.3f}")

        small = Path(tmp) / "small.csv"
        small.write_text("x\n" + "\n".join(str(i % 50) for i in range(1000)) + "\n")
        n = 50 if args.quick else 200
        s2 = Session(small, Budget(1000.0), Path(tmp) / "l2.sqlite", create_ledger=True,
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


if __name__ == "__main__":
    main()
