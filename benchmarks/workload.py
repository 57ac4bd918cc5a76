"""Workload benchmark: Q queries released by Q separate ``dpnoise release`` commands
(each opens and fingerprints the data) vs one ``dpnoise release --workload`` run.

    python benchmarks/workload.py [--rows 1000000] [--queries 12]

Generates one parquet file of ROWS rows (a numeric column, a 4-category column and a
50-key integer column), a ledger per arm, and prints the wall time of each arm, the ratio,
and the machine's load (os.getloadavg) before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

QUERY_FORMS = ["count", "mean x", "sum x by g", "mean x by k", "count by g, k",
               "variance x by g", "median x", "count where x > 5", "histogram k",
               "sum x where g = 'a'", "stddev x by k", "mean x by g"]


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "dpnoise", *args], check=True,
                   capture_output=True, text=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10**6)
    ap.add_argument("--queries", type=int, default=12)
    a = ap.parse_args()
    queries = [QUERY_FORMS[i % len(QUERY_FORMS)] for i in range(a.queries)]
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        import pandas as pd

        rng = np.random.default_rng(0)
        data = Path(tmp) / "d.parquet"
        pd.DataFrame({"x": rng.uniform(0, 10, a.rows), "g": rng.choice(list("abcd"), a.rows),
                      "k": rng.integers(0, 50, a.rows)}).to_parquet(data)
        (Path(tmp) / "d.toml").write_text(
            '[dataset]\nmax_rows = 100000000\n[columns.x]\nlower = 0\nupper = 10\n'
            '[columns.g]\ncategories = ["a", "b", "c", "d"]\n'
            '[columns.k]\ninteger = true\nlower = 0\nupper = 49\n')
        eps = 1.0 / len(queries)
        wl = Path(tmp) / "w.toml"
        wl.write_text("".join(f'[queries.q{i}]\nquery = "{q}"\nepsilon = {eps!r}\n'
                              for i, q in enumerate(queries)))
        for arm in ("single", "workload"):
            _cli("ledger", "init", str(Path(tmp) / f"{arm}.ledger"), "--budget", "1")
        base = ["release", "--data", str(data)]
        t = time.perf_counter()
        for q in queries:
            _cli(*base, "--ledger", str(Path(tmp) / "single.ledger"), "--query", q,
                 "--epsilon", repr(eps))
        single = time.perf_counter() - t
        t = time.perf_counter()
        _cli(*base, "--ledger", str(Path(tmp) / "workload.ledger"), "--workload", str(wl))
        one = time.perf_counter() - t
    print(f"{a.rows} rows, {len(queries)} queries")
    print(f"  {len(queries)} separate releases: {single:8.2f} s")
    print(f"  one workload run:        {one:8.2f} s   ({single / one:.2f}x faster)")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
