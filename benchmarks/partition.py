"""Counts over keys that are not public, side by side: groups released and count error.

    python benchmarks/partition.py [--runs N] [--peer-runs M]
        [--peers opendp,opendp-honest,pipelinedp,tumult] [--many-groups G]

The first table: 10^6 rows, one row per person, a ``city`` column drawn from a seeded Zipf
law (12,537 distinct keys, most of them a tail of one or two persons) whose values are not
public.  Every library releases ``count by city`` at epsilon 1, delta 1e-6, one row per
person (one group, one row in it), and reports per run the groups released and the mean
absolute error of their counts against the truth.  Beside dpnoise's session (the count
thresholded on its own noise): the alternative of the optimal selection at (eps_s, delta)
then a geometric count at 1 - eps_s ("dpnoise-split-eps_s"), and OpenDP twice: as its
privacy map calibrates it, and at the smallest threshold whose TRUE delta (a key of one
person is kept iff 1 + Z >= threshold) is <= 1e-6 ("opendp-honest").

The second table (``--many-groups G``, default 16): persons in G distinct cities each, one
row in each, about 10^6 rows; dpnoise under the pld accountant with the geometric threshold
and with the Gaussian threshold, PipelineDP with Gaussian noise at the same bounds.  Then
the one-row-one-group target: 400 groups of 25 persons each, the share released by dpnoise
at (1, 1e-6).

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
GROUPS = int(sys.argv[4]) if len(sys.argv) > 4 else 1
EPS, DELTA = 1.0, 1e-6
out = []
if which in ("opendp", "opendp-honest"):
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
    # its map states P(Z > threshold - 1) for a key of one person, but a key is kept iff
    # its noisy count >= threshold: the true delta is P(Z >= threshold - 1) = the map's value
    # at threshold - 1.  "opendp-honest": the smallest threshold whose TRUE delta <= DELTA.
    honest = which == "opendp-honest"
    if honest:
        th += 1
        assert meas(scale, th - 1).map(1)[1] <= DELTA
    m = meas(scale, th)
    true_delta = meas(scale, th - 1).map(1)[1]
    data = [str(c) for c in codes.tolist()]  # OpenDP's int is 32-bit: keys as strings
    for _ in range(runs):
        out.append({int(k): float(v) for k, v in m(data).items()})
    note = (f"make_count_by >> laplace_threshold(scale={scale:.4f}, threshold={th}); map delta "
            f"{m.map(1)[1]:.3g}, true delta {true_delta:.3g}")
elif which in ("pipelinedp", "pipelinedp-many"):
    import pipeline_dp
    many = which == "pipelinedp-many"  # codes: (person, city) pairs, GROUPS cities each
    rows = [tuple(r) for r in codes.tolist()] if many else list(enumerate(codes.tolist()))
    for _ in range(runs):
        acc = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPS, total_delta=DELTA)
        engine = pipeline_dp.DPEngine(acc, pipeline_dp.LocalBackend())
        params = pipeline_dp.AggregateParams(
            noise_kind=pipeline_dp.NoiseKind.GAUSSIAN if many else pipeline_dp.NoiseKind.LAPLACE,
            metrics=[pipeline_dp.Metrics.COUNT],
            max_partitions_contributed=GROUPS if many else 1,
            max_contributions_per_partition=1)
        ex = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0],
                                        partition_extractor=lambda r: r[1],
                                        value_extractor=lambda r: 0)
        res = engine.aggregate(rows, params, ex)
        acc.compute_budgets()
        out.append({int(k): float(v.count) for k, v in res})
    note = (f"DPEngine count, {'Gaussian' if many else 'Laplace'}, default partition "
            "selection")
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


#: the error over released groups of at least this true count (no selection bias left there)
LARGE = 60


def score(truth: dict[int, int], released: dict[int, float]) -> tuple[int, float, float]:
    """Groups released, the mean absolute error of their counts, and that error over the
    released groups of true count >= LARGE (near the threshold a released group is biased
    upward: the more small groups a library releases, the larger its overall error)."""
    if not released:
        return 0, float("nan"), float("nan")
    err = [abs(v - truth.get(k, 0)) for k, v in released.items()]
    big = [abs(v - truth[k]) for k, v in released.items() if truth.get(k, 0) >= LARGE]
    return len(released), float(np.mean(err)), float(np.mean(big)) if big else float("nan")


def run_dpnoise(codes: np.ndarray, runs: int) -> tuple[list[tuple[int, float, float]], str]:
    from dpnoise import Budget, Session

    truth = dict(zip(*np.unique(codes, return_counts=True), strict=True))
    data = {"city": np.char.add("c", codes.astype(str))}
    out = []
    with Session(data, Budget(EPSILON * runs, DELTA * runs), schema=SCHEMA) as s:
        for _ in range(runs):
            r = s.release("count by city", epsilon=EPSILON, delta=DELTA)
            rel = {int(k[1:]): float(v) for k, v in zip(r.group_keys[0], r.values, strict=True)}
            out.append(score(truth, rel))
        roles = dict(s.plans("count by city", EPSILON, DELTA))
    law = roles["count"].mechanism.noise()
    return out, (f"count thresholded on its own noise (threshold {roles['selection'].threshold}"
                 f"; exact E|noise| {float(law.mean_abs()):.3f})")


def run_split(codes: np.ndarray, runs: int, eps_selection: float
              ) -> tuple[list[tuple[int, float, float]], str]:
    """The alternative for one group per person: the optimal selection at
    (eps_selection, delta) on the person counts, then the kept groups' counts with exact
    geometric noise at epsilon - eps_selection (basic composition: (epsilon, delta))."""
    from dpnoise import Geometric
    from dpnoise.mechanisms.optimal_selection import OptimalSelection

    keys, counts = np.unique(codes, return_counts=True)
    truth = dict(zip(keys.tolist(), counts.tolist(), strict=True))
    sel = OptimalSelection(epsilon=eps_selection, delta=DELTA)
    noise = Geometric(epsilon=EPSILON - eps_selection, upper=None, sampler="cks")
    rng, out = None, []  # None: the OS-keyed CSPRNG
    for _ in range(runs):
        keep = sel.release(counts, rng=rng)
        y = noise.release(counts[keep], rng=rng)
        out.append(score(truth, dict(zip(keys[keep].tolist(), np.asarray(y, float).tolist(),
                                         strict=True))))
    return out, (f"optimal selection (eps {eps_selection:g}, delta) then count "
                 f"(eps {EPSILON - eps_selection:g})")


def run_peer(codes_path: str, which: str, runs: int, truth: dict[int, int], groups: int = 1
             ) -> tuple[list[tuple[int, float, float]], str] | None:
    python = os.environ.get("DPNOISE_PEERS_PYTHON", "/work/peers/bin/python")
    if not os.path.exists(python):
        print(f"  {which}: skipped (no peers interpreter at {python})")
        return None
    proc = subprocess.run([python, "-c", PEER_CODE, codes_path, which, str(runs), str(groups)],
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        print(f"  {which}: skipped ({proc.stderr.strip().splitlines()[-1:]})")
        return None
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    return [score(truth, {int(k): v for k, v in r.items()}) for r in got["runs"]], got["note"]


def many_group_table(persons: int, groups: int) -> np.ndarray:
    """(person, city) pairs: every person in ``groups`` DISTINCT cities (one row in each),
    each city drawn from the same seeded Zipf law (duplicates of a person dropped)."""
    rng = np.random.default_rng(2027)
    city = rng.zipf(ZIPF_EXPONENT, (persons, groups)).astype(np.int64)
    pid = np.repeat(np.arange(persons, dtype=np.int64), groups)
    pairs = np.unique(np.stack([pid, city.reshape(-1)], axis=1), axis=0)
    return pairs


def run_many(pairs: np.ndarray, groups: int, runs: int, mechanism: str
             ) -> tuple[list[tuple[int, float, float]], str]:
    """dpnoise on the many-group table under the pld accountant with ``mechanism``."""
    from dpnoise import Budget, Session

    keys, counts = np.unique(pairs[:, 1], return_counts=True)
    truth = dict(zip(keys.tolist(), counts.tolist(), strict=True))
    schema = {"dataset": {"user_id": "pid", "max_groups": groups, "max_rows_per_group": 1,
                          "max_rows": 2_000_000}, "columns": {"city": {"text": True}}}
    data = {"pid": pairs[:, 0].astype(str), "city": np.char.add("c", pairs[:, 1].astype(str))}
    out = []
    # room above runs x (epsilon, delta): the pld accountant rounds each PLD up on its grid
    with Session(data, Budget(2 * EPSILON * runs, 2 * DELTA * runs, accountant="pld"),
                 schema=schema) as s:
        for _ in range(runs):
            r = s.release("count by city", epsilon=EPSILON, delta=DELTA, mechanism=mechanism)
            rel = {int(k[1:]): float(v) for k, v in zip(r.group_keys[0], r.values, strict=True)}
            out.append(score(truth, rel))
        sel = dict(s.plans("count by city", EPSILON, DELTA, mechanism))["selection"]
    return out, f"{sel.name}, threshold {sel.threshold} (pld)"


def many_groups(a: argparse.Namespace, tmp: str) -> None:
    """The persons-in-many-groups table: dpnoise's geometric and Gaussian thresholds."""
    groups = a.many_groups
    pairs = many_group_table(a.rows // groups, groups)
    keys, counts = np.unique(pairs[:, 1], return_counts=True)
    truth = dict(zip(keys.tolist(), counts.tolist(), strict=True))
    print(f"\n{pairs.shape[0]} rows, {a.rows // groups} persons in {groups} distinct cities "
          f"each (one row per city), {keys.size} city keys, epsilon {EPSILON}, delta {DELTA}")
    results = {f"dpnoise {m}": run_many(pairs, groups, a.runs, m)
               for m in ("geometric", "discrete-gaussian")}
    if "pipelinedp" in a.peers:
        path = os.path.join(tmp, "pairs.npy")
        np.save(path, pairs)
        got = run_peer(path, "pipelinedp-many", a.peer_runs, truth, groups)
        if got is not None:
            results["pipelinedp"] = got
    table(results)


def table(results: dict[str, tuple[list[tuple[int, float, float]], str]]) -> None:
    print(f"\n{'library':26s} {'runs':>5s} {'groups/run':>11s} {'mean |error|':>13s} "
          f"{f'(count >= {LARGE})':>16s}  method")
    for name, (runs, note) in results.items():
        g = np.mean([r[0] for r in runs])
        e = np.mean([r[1] for r in runs])
        b = np.mean([r[2] for r in runs])
        print(f"{name:26s} {len(runs):5d} {g:11.1f} {e:13.2f} {b:16.2f}  {note}")


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
    ap.add_argument("--peers", default="opendp,opendp-honest,pipelinedp,tumult")
    ap.add_argument("--many-groups", type=int, default=16,
                    help="groups per person of the second table (1: skip it)")
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
    for eps_sel in (0.1, 0.25, 0.5):
        results[f"dpnoise-split-{eps_sel:g}"] = run_split(codes, a.runs, eps_sel)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "codes.npy")
        np.save(path, codes)
        for which in [p for p in a.peers.split(",") if p]:
            t0 = time.perf_counter()
            got = run_peer(path, which, a.peer_runs, truth)
            if got is not None:
                results[which] = got
                print(f"  {which}: {time.perf_counter() - t0:.1f} s")
        table(results)
        if a.many_groups > 1:
            many_groups(a, tmp)
    share = target_25(a.runs)
    print(f"\ngroups of 25 persons released (400 groups x {a.runs} runs): {100 * share:.1f} %")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
