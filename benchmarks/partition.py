"""Counts over keys that are not public, side by side: groups released and count error.

    python benchmarks/partition.py [--runs N] [--peer-runs M] [--peers opendp,pipelinedp,tumult]

The table: 10^6 rows, one row per person, a ``city`` column drawn from a seeded Zipf law
(12,537 distinct keys, most of them a tail of one or two persons) whose values are not
public.  Every library releases ``count by city`` at epsilon 1, delta 1e-6, one row per
person (one group, one row in it), and reports per run the groups released and the mean
absolute error of their counts against the truth.  Then the one-row-one-group target: 400
groups of 25 persons each, the share released by dpnoise at (1, 1e-6).

Peers run in the interpreter named by ``DPNOISE_PEERS_PYTHON`` (default
``/work/peers/bin/python``: OpenDP, PipelineDP and Tumult Analytics need their own pins); a
peer missing there is skipped with a note.  Prints the machine's load (os.getloadavg()).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

EPSILON, DELTA = 1.0, 1e-6
ZIPF_EXPONENT = 1.5182
SCHEMA = {"dataset": {"max_rows": 2_000_000}, "columns": {"city": {"text": True}}}

PEER_CODE = r'''
import json, sys, time
import numpy as np
codes = np.load(sys.argv[1]); which = sys.argv[2]; runs = int(sys.argv[3])
EPS, DELTA = 1.0, 1e-6
out = []
if which == "opendp":
    import opendp.prelude as dp
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    t = dp.t.make_count_by(*space, TV=int)
    d_mid = t.map(1)
    def meas(scale, thr):
        return t >> dp.m.then_laplace_threshold(scale=scale, threshold=thr)
    lo, hi = 0.01, 100.0          # smallest scale with epsilon <= 1 (threshold large)
    for _ in range(60):
        mid = (lo + hi) / 2
        if meas(mid, 10**6).map(1)[0] <= EPS: hi = mid
        else: lo = mid
    scale = hi
    tl, th = 1, 10**6             # smallest threshold with delta <= 1e-6
    while th - tl > 1:
        mid = (tl + th) // 2
        if meas(scale, mid).map(1)[1] <= DELTA: th = mid
        else: tl = mid
    m = meas(scale, th)
    data = [str(c) for c in codes.tolist()]  # OpenDP's int is 32-bit: keys as strings
    for _ in range(runs):
        out.append({int(k): float(v) for k, v in m(data).items()})
    note = f"make_count_by >> laplace_threshold(scale={scale:.4f}, threshold={th})"
elif which == "pipelinedp":
    import pipeline_dp
    rows = list(enumerate(codes.tolist()))
    for _ in range(runs):
        acc = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPS, total_delta=DELTA)
        engine = pipeline_dp.DPEngine(acc, pipeline_dp.LocalBackend())
        params = pipeline_dp.AggregateParams(
            noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=[pipeline_dp.Metrics.COUNT],
            max_partitions_contributed=1, max_contributions_per_partition=1)
        ex = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0],
                                        partition_extractor=lambda r: r[1],
                                        value_extractor=lambda r: 0)
        res = engine.aggregate(rows, params, ex)
        acc.compute_budgets()
        out.append({int(k): float(v.count) for k, v in res})
    note = "DPEngine count, Laplace, default partition selection"
elif which == "tumult":
    import os
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need tmlt too
    from pyspark.sql import SparkSession
    from tmlt.analytics import (AddOneRow, ApproxDPBudget, KeySet, PureDPBudget, QueryBuilder,
                                Session)
    spark = SparkSession.builder.master("local[2]").config(
        "spark.driver.memory", "4g").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    import pandas as pd
    sdf = spark.createDataFrame(pd.DataFrame({"city": codes.astype("int64")}))
    for _ in range(runs):
        s = Session.from_dataframe(privacy_budget=ApproxDPBudget(EPS, DELTA), source_id="t",
                                   dataframe=sdf, protected_change=AddOneRow())
        keys = s.evaluate(QueryBuilder("t").get_groups(["city"]), ApproxDPBudget(EPS / 2, DELTA))
        ks = KeySet.from_dataframe(keys)
        res = s.evaluate(QueryBuilder("t").groupby(ks).count(), PureDPBudget(EPS / 2))
        out.append({int(r["city"]): float(r["count"]) for r in res.collect()})
    note = "get_groups (eps/2, delta) then count over the released keys (eps/2)"
print(json.dumps({"note": note, "runs": [{str(k): v for k, v in r.items()} for r in out]}))
'''


def city_codes(rows: int) -> np.ndarray:
    """The ``city`` keys: a Zipf law of exponent 1.5182 (seeded: 12,537 distinct keys in
    10^6 rows), one row per person."""
    return np.random.default_rng(2026).zipf(ZIPF_EXPONENT, rows).astype(np.int64)


def score(truth: dict[int, int], released: dict[int, float]) -> tuple[int, float]:
    """Groups released and the mean absolute error of their counts."""
    if not released:
        return 0, float("nan")
    err = [abs(v - truth.get(k, 0)) for k, v in released.items()]
    return len(released), float(np.mean(err))


def run_dpnoise(codes: np.ndarray, runs: int) -> tuple[list[tuple[int, float]], str]:
    from dpnoise import Budget, Session

    truth = dict(zip(*np.unique(codes, return_counts=True), strict=True))
    data = {"city": np.char.add("c", codes.astype(str))}
    out = []
    with Session(data, Budget(EPSILON * runs, DELTA * runs), schema=SCHEMA) as s:
        for _ in range(runs):
            r = s.release("count by city", epsilon=EPSILON, delta=DELTA)
            rel = {int(k[1:]): float(v) for k, v in zip(r.group_keys[0], r.values, strict=True)}
            out.append(score(truth, rel))
        sel = dict(s.plans("count by city", EPSILON, DELTA))["selection"]
    return out, f"count thresholded on its own noise (threshold {sel.threshold})"


def run_peer(codes_path: str, which: str, runs: int, truth: dict[int, int]
             ) -> tuple[list[tuple[int, float]], str] | None:
    python = os.environ.get("DPNOISE_PEERS_PYTHON", "/work/peers/bin/python")
    if not os.path.exists(python):
        print(f"  {which}: skipped (no peers interpreter at {python})")
        return None
    proc = subprocess.run([python, "-c", PEER_CODE, codes_path, which, str(runs)],
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        print(f"  {which}: skipped ({proc.stderr.strip().splitlines()[-1:]})")
        return None
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    return [score(truth, {int(k): v for k, v in r.items()}) for r in got["runs"]], got["note"]


def target_25(runs: int) -> float:
    """The share of 25-person groups released (one row per person, one group each)."""
    from dpnoise import Budget, Session

    sizes = [25] * 400
    city = np.repeat([f"k{i}" for i in range(len(sizes))], sizes)
    with Session({"city": city}, Budget(EPSILON * runs, DELTA * runs), schema=SCHEMA) as s:
        shown = [len(s.release("count by city", epsilon=EPSILON, delta=DELTA).values)
                 for _ in range(runs)]
    return float(np.sum(shown)) / (len(sizes) * runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10**6)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--peer-runs", type=int, default=2)
    ap.add_argument("--peers", default="opendp,pipelinedp,tumult")
    a = ap.parse_args()
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    codes = city_codes(a.rows)
    keys, counts = np.unique(codes, return_counts=True)
    truth = dict(zip(keys.tolist(), counts.tolist(), strict=True))
    print(f"{a.rows} rows, {keys.size} city keys (not public), epsilon {EPSILON}, "
          f"delta {DELTA}, one row per person")
    results = {}
    t0 = time.perf_counter()
    results["dpnoise"] = run_dpnoise(codes, a.runs)
    print(f"  dpnoise: {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "codes.npy")
        np.save(path, codes)
        for which in [p for p in a.peers.split(",") if p]:
            t0 = time.perf_counter()
            got = run_peer(path, which, a.peer_runs, truth)
            if got is not None:
                results[which] = got
                print(f"  {which}: {time.perf_counter() - t0:.1f} s")
    print(f"\n{'library':12s} {'runs':>5s} {'groups/run':>11s} {'mean |error|':>13s}  method")
    for name, (runs, note) in results.items():
        g = np.mean([r[0] for r in runs])
        e = np.mean([r[1] for r in runs])
        print(f"{name:12s} {len(runs):5d} {g:11.1f} {e:13.2f}  {note}")
    share = target_25(a.runs)
    print(f"\ngroups of 25 persons released (400 groups x {a.runs} runs): {100 * share:.1f} %")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
