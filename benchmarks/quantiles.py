"""Quantiles side by side: the median of 10^6 lognormal incomes clamped to [0, 250000] at
epsilon 1 (mean and 95th-percentile absolute error against the true median), and several
quantiles in one release against composing single quantiles (mean rank error, time).

Peers run in another interpreter (tmlt-analytics needs an older pyspark): set
DPNOISE_PEERS_PYTHON to it (e.g. /work/peers/bin/python); without it the peers are skipped.
Prints the machine's load (os.getloadavg()).  Usage: python benchmarks/quantiles.py [reps]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

from dpnoise.mechanisms.interval_quantile import IntervalQuantile
from dpnoise.mechanisms.multi_quantile import MultiQuantile

N, LOW, HIGH, EPS = 10 ** 6, 0.0, 250000.0, 1.0

PEER = r"""
import json, sys, numpy as np
from pyspark.sql import SparkSession
from tmlt.analytics.session import Session
from tmlt.analytics.query_builder import QueryBuilder
from tmlt.analytics.privacy_budget import PureDPBudget
from tmlt.analytics.protected_change import AddOneRow
reps = int(sys.argv[1])
x = np.clip(np.random.default_rng(7).lognormal(10, 1, 10 ** 6), 0, 250000)
spark = SparkSession.builder.master("local[2]").getOrCreate()
df = spark.createDataFrame([(float(v),) for v in x], ["x"])
out = []
for _ in range(reps):
    s = Session.from_dataframe(privacy_budget=PureDPBudget(1.0), source_id="t", dataframe=df,
                               protected_change=AddOneRow())
    q = QueryBuilder("t").median("x", low=0.0, high=250000.0)
    out.append(float(s.evaluate(q, PureDPBudget(1.0)).collect()[0][0]))
print(json.dumps(out))
"""


def rank_error(xs: np.ndarray, y: float, q: float) -> float:
    """Rows between the level's rank q·n and the ranks [#{x < y}, #{x <= y}] of y."""
    a, b = np.searchsorted(xs, y, "left"), np.searchsorted(xs, y, "right")
    return max(0.0, a - q * xs.size, q * xs.size - b)


def median_rows(x: np.ndarray, reps: int) -> dict[str, list[float]]:
    truth = float(np.median(x))
    m = IntervalQuantile(epsilon=EPS, level=0.5, lower=LOW, upper=HIGH)
    rows = {"dpnoise interval-quantile": [abs(m.release(x) - truth) for _ in range(reps)]}
    peers = os.environ.get("DPNOISE_PEERS_PYTHON")
    if peers and os.path.exists(peers):
        res = subprocess.run([peers, "-c", PEER, str(reps)], capture_output=True, text=True,
                             timeout=3600)
        if res.returncode == 0:
            vals = json.loads(res.stdout.strip().splitlines()[-1])
            rows["tmlt-analytics median"] = [abs(v - truth) for v in vals]
        else:
            print("tumult failed:", res.stderr[-300:])
    return rows


def joint_rows(x: np.ndarray, levels: list[float], reps: int) -> tuple[float, float, float,
                                                                        float, float]:
    xs = np.sort(x)
    joint = MultiQuantile(epsilon=EPS, levels=levels, lower=LOW, upper=HIGH)
    singles = [IntervalQuantile(epsilon=EPS / len(levels), level=q, lower=LOW, upper=HIGH)
               for q in levels]
    one = IntervalQuantile(epsilon=EPS, level=0.5, lower=LOW, upper=HIGH)
    ej, es, tj, ts, t1 = [], [], 0.0, 0.0, 0.0
    for _ in range(reps):
        t = time.perf_counter()
        out = joint.release(x)
        tj += time.perf_counter() - t
        ej.append(np.mean([rank_error(xs, y, q) for y, q in zip(out, levels, strict=True)]))
        t = time.perf_counter()
        single = [s.release(x) for s in singles]
        ts += time.perf_counter() - t
        es.append(np.mean([rank_error(xs, y, q) for y, q in zip(single, levels, strict=True)]))
        t = time.perf_counter()
        one.release(x)
        t1 += time.perf_counter() - t
    return float(np.mean(ej)), float(np.mean(es)), tj / reps, ts / reps, t1 / reps


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    print(f"load average {os.getloadavg()}; n = {N}, epsilon = {EPS}, {reps} repetitions")
    x = np.clip(np.random.default_rng(7).lognormal(10, 1, N), LOW, HIGH)
    for name, errs in median_rows(x, reps).items():
        print(f"median  {name:28s} MAE {np.mean(errs):10.4f}  p95 "
              f"{np.percentile(errs, 95):10.4f}")
    for levels in ([0.25, 0.5, 0.75], [k / 10 for k in range(1, 10)]):
        ej, es, tj, ts, t1 = joint_rows(x, levels, max(3, reps // 4))
        print(f"m={len(levels)}  mean rank error joint {ej:8.2f} vs composed singles {es:8.2f}; "
              f"time joint {tj:.2f}s, composed {ts:.2f}s, one quantile {t1:.2f}s "
              f"(joint/one {tj / t1:.2f}x)")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
