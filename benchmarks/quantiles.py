"""Quantiles side by side: the median of 10^6 lognormal incomes clamped to [0, 250000] at
epsilon 1 (the exact expected absolute error of dpnoise's law and of the law Tumult
documents, computed on the data; the mean absolute error of sampled releases against the
true median with its standard error, and the 95th percentile), and several quantiles in one
release against composing single quantiles (mean
rank error with its standard error; the DP step's time against one quantile's, measured in
interleaved rounds and reported as ratios of medians).

Every mechanism releases from the SAME data (seed 7).  Peers run in another interpreter
(tmlt-analytics needs an older pyspark): set DPNOISE_PEERS_PYTHON to it (e.g.
/work/peers/bin/python); without it the peers are skipped (DPNOISE_PEERS_REPS: their
repetitions, default as dpnoise's; DPNOISE_PEERS_ONLY: name prefixes, e.g. "tmlt").
Prints the machine's load (os.getloadavg()) before and after.  Usage:
python benchmarks/quantiles.py [reps] [joint_reps] (defaults 50 and 30; joint_reps 0 skips
the several-quantile rows).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import numpy as np

from dpnoise.exact.exponential_pieces import BASE_BITS
from dpnoise.mechanisms.interval_quantile import (
    IntervalQuantile,
    pieces,
    pieces_from_counts,
    snap,
)
from dpnoise.mechanisms.multi_quantile import MultiQuantile

N, LOW, HIGH, EPS = 10 ** 6, 0.0, 250000.0, 1.0

TUMULT = r"""
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

# OpenDP's exponential-mechanism quantile needs a candidate list: 1025 evenly spaced points
# (the resolution of the earlier dpnoise grid), scale found for epsilon 1 by binary search
OPENDP = r"""
import json, sys, numpy as np
import opendp.prelude as dp
dp.enable_features("contrib")
reps = int(sys.argv[1])
x = np.clip(np.random.default_rng(7).lognormal(10, 1, 10 ** 6), 0, 250000)
cands = np.linspace(0.0, 250000.0, 1025).tolist()
space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
make = lambda s: space >> dp.m.then_private_quantile(dp.max_divergence(), cands, 0.5, s)
m = make(dp.binary_search_param(make, d_in=1, d_out=1.0))
data = x.tolist()
print(json.dumps([float(m(data)) for _ in range(reps)]))
"""

PIPELINEDP = r"""
import json, sys, numpy as np
import pipeline_dp
reps = int(sys.argv[1])
x = np.clip(np.random.default_rng(7).lognormal(10, 1, 10 ** 6), 0, 250000)
rows = [(i, float(v)) for i, v in enumerate(x)]
out = []
for _ in range(reps):
    acc = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1.0, total_delta=0.0)
    eng = pipeline_dp.DPEngine(acc, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(
        noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=[pipeline_dp.Metrics.PERCENTILE(50)],
        max_partitions_contributed=1, max_contributions_per_partition=1,
        min_value=0.0, max_value=250000.0)
    ext = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0],
                                     partition_extractor=lambda r: 0,
                                     value_extractor=lambda r: r[1])
    res = eng.aggregate(rows, params, ext, public_partitions=[0])
    acc.compute_budgets()
    (_, metrics), = list(res)
    out.append(float(metrics.percentile_50))
print(json.dumps(out))
"""

PEERS = {"tmlt-analytics median": TUMULT, "opendp private_quantile (1025 candidates)": OPENDP,
         "pipeline-dp PERCENTILE(50)": PIPELINEDP}


def rank_error(xs: np.ndarray, y: float, q: float) -> float:
    """Rows between the level's rank q·n and the ranks [#{x < y}, #{x <= y}] of y."""
    a, b = np.searchsorted(xs, y, "left"), np.searchsorted(xs, y, "right")
    return max(0.0, a - q * xs.size, q * xs.size - b)


#: the session's median: the default level bar (a quarter of epsilon to a noisy count) and
#: the rank bar (all of epsilon to the quantile, no count)
SESSION_QUERIES = {"dpnoise session 'median x'": "median x",
                   "dpnoise session 'median x with rank bar'": "median x with rank bar"}


def session_median(x: np.ndarray, reps: int, query: str = "median x") -> list[float]:
    """The custodian path: ``query`` through a Session (DuckDB), epsilon 1 in all (level
    bar: 3/4 to the rank, 1/4 to the count its error bar uses; rank bar: all to the rank),
    lattice of at most 2^24 + 1 points."""
    from dpnoise import Budget, Session

    truth = float(np.median(x))
    schema = {"columns": {"x": {"lower": LOW, "upper": HIGH}}}
    with Session({"x": x}, Budget(reps * EPS + 1), schema=schema) as s:
        return [abs(float(s.release(query, epsilon=EPS).value) - truth)
                for _ in range(reps)]


def expected_mae_session(x: np.ndarray, truth: float, query: str) -> float:
    """The exact expected absolute error of the session's ``query`` on ``x``: the law of
    its rank plan's registry mechanism (its lattice, its epsilon share) over the cell's
    snapped rows as the engine aggregates them, no sampling.  Reads the data (custodian
    side) to compute the law: a measurement, never a release."""
    from dpnoise import Budget, Session

    schema = {"columns": {"x": {"lower": LOW, "upper": HIGH}}}
    with Session({"x": x}, Budget(EPS), schema=schema) as s:
        q = s.parse(query)
        m = dict(s.plans(q, EPS))["rank"].mechanism
        (index, count), = list(s.engine.aggregate(q).buckets.cells())
    return expected_mae_of(m, pieces_from_counts(index, count, m.n_points, 1, 2), truth)


def median_rows(x: np.ndarray, reps: int) -> dict[str, list[float]]:
    """Absolute errors of each mechanism's median; each row is printed as soon as it is
    measured (a peer can take minutes).  DPNOISE_PEERS_REPS sets the peers' repetitions
    (default ``reps``); DPNOISE_PEERS_ONLY (comma-separated name prefixes) picks peers."""
    truth = float(np.median(x))
    m = IntervalQuantile(epsilon=EPS, level=0.5, lower=LOW, upper=HIGH)
    rows: dict[str, list[float]] = {}
    rows["dpnoise interval-quantile"] = [abs(m.release(x) - truth) for _ in range(reps)]
    print_row("dpnoise interval-quantile", rows["dpnoise interval-quantile"])
    for name, query in SESSION_QUERIES.items():
        rows[name] = session_median(x, reps, query)
        print_row(name, rows[name])
    peers = os.environ.get("DPNOISE_PEERS_PYTHON")
    if not (peers and os.path.exists(peers)):
        print("DPNOISE_PEERS_PYTHON unset: peers skipped")
        return rows
    peer_reps = int(os.environ.get("DPNOISE_PEERS_REPS", reps))
    only = [w for w in os.environ.get("DPNOISE_PEERS_ONLY", "").split(",") if w]
    for name, code in PEERS.items():
        if only and not any(name.startswith(w) for w in only):
            continue
        res = subprocess.run([peers, "-c", code, str(peer_reps)], capture_output=True,
                             text=True, timeout=7200)
        if res.returncode == 0:
            vals = json.loads(res.stdout.strip().splitlines()[-1])
            rows[name] = [abs(v - truth) for v in vals]
            print_row(name, rows[name])
        else:
            print(f"{name} failed:", res.stderr[-300:])
    return rows


def print_row(name: str, errs: list[float]) -> None:
    mae, se = mean_se(errs)
    print(f"median  {name:42s} MAE {mae:10.4f} ± {se:.4f} (s.e., {len(errs)} releases)  "
          f"p95 {np.percentile(errs, 95):10.4f}", flush=True)


def mean_abs_progression(a: np.ndarray, g: float, ln: np.ndarray, t: float) -> np.ndarray:
    """The mean over ``j = 0..ln−1`` of ``|a + j·g − t|`` (per piece, closed form)."""
    a, ln = a.astype(np.float64), ln.astype(np.float64)
    js = np.clip(np.floor((t - a) / g), -1, ln - 1)  # the last index with a point <= t
    below = (js + 1) * (t - a) - g * js * (js + 1) / 2
    above = (ln - js - 1) * (a - t) + g * (ln * (ln - 1) - js * (js + 1)) / 2
    return (below + above) / ln


def expected_mae_dpnoise(x: np.ndarray, truth: float) -> float:
    """The exact expected absolute error of ``interval-quantile``'s median on ``x``: its law
    (pieces of the lattice weighted by length·b^d) against ``truth``, no sampling."""
    m = IntervalQuantile(epsilon=EPS, level=0.5, lower=LOW, upper=HIGH)
    return expected_mae_of(m, pieces(snap(x, m.lower, m.grid, m.n_points), m.n_points, 1, 2),
                           truth)


def expected_mae_of(m: IntervalQuantile, law: tuple[np.ndarray, ...], truth: float) -> float:
    """The expected absolute error against ``truth`` of mechanism ``m``'s law given by its
    pieces ``(starts, lengths, d)`` (each weighted by length·b^d, a uniform point inside)."""
    s, ln, d = law
    s, ln, d = s[ln > 0], ln[ln > 0], d[ln > 0]
    logw = np.log(ln.astype(np.float64)) + d * math.log(m.p / 2 ** BASE_BITS)
    w = np.exp(logw - logw.max())
    return float(np.sum(w * mean_abs_progression(m.lower + s * m.grid, m.grid, ln, truth))
                 / np.sum(w))


def expected_mae_interval_law(x: np.ndarray, truth: float, q: float = 0.5) -> float:
    """The exact expected absolute error of the law Tumult Core's NoisyQuantile documents:
    the intervals between consecutive distinct values (and the bounds), each weighted by
    length·e^(−ε·|rank − q·n| / (2·max(q, 1 − q))), rank = values below it, then a uniform
    point inside."""
    v = np.sort(x)
    vals = v[(v >= LOW) & (v < HIGH)]
    first = np.flatnonzero(np.r_[True, vals[1:] != vals[:-1]]) if vals.size else vals
    rights = np.r_[vals[first], HIGH]
    ranks = np.r_[first + int(np.sum(v < LOW)), int(np.sum(v < HIGH))]
    lefts = np.r_[LOW, rights[:-1]]
    ok = lefts < rights
    l, r, rk = lefts[ok], rights[ok], ranks[ok].astype(np.float64)
    logw = np.log(r - l) - np.abs(rk - q * x.size) * EPS / (2 * max(q, 1 - q))
    w = np.exp(logw - logw.max())
    inside = ((truth - l) ** 2 + (r - truth) ** 2) / (2 * (r - l))
    e = np.where(truth <= l, (l + r) / 2 - truth, np.where(truth >= r, truth - (l + r) / 2,
                                                            inside))
    return float(np.sum(w * e) / np.sum(w))


def mean_se(values: list[float]) -> tuple[float, float]:
    """The mean and its standard error (sample standard deviation / sqrt(count))."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0


def joint_rows(x: np.ndarray, levels: list[float], reps: int) -> dict[str, float]:
    """Mean rank errors (± standard error) of the joint release and of m composed singles,
    and the median times of the joint release, the composed singles and one quantile, each
    round timing all three back to back (so load changes hit them alike)."""
    xs = np.sort(x)
    joint = MultiQuantile(epsilon=EPS, levels=levels, lower=LOW, upper=HIGH)
    singles = [IntervalQuantile(epsilon=EPS / len(levels), level=q, lower=LOW, upper=HIGH)
               for q in levels]
    one = IntervalQuantile(epsilon=EPS, level=0.5, lower=LOW, upper=HIGH)
    ej, es, tj, ts, t1 = [], [], [], [], []
    for _ in range(reps):
        t = time.perf_counter()
        out = joint.release(x)
        tj.append(time.perf_counter() - t)
        t = time.perf_counter()
        single = [s.release(x) for s in singles]
        ts.append(time.perf_counter() - t)
        t = time.perf_counter()
        one.release(x)
        t1.append(time.perf_counter() - t)
        ej.append(np.mean([rank_error(xs, y, q) for y, q in zip(out, levels, strict=True)]))
        es.append(np.mean([rank_error(xs, y, q) for y, q in zip(single, levels, strict=True)]))
    (mj, sj), (ms, ss) = mean_se(ej), mean_se(es)
    return {"joint": mj, "joint_se": sj, "single": ms, "single_se": ss,
            "t_joint": float(np.median(tj)), "t_single": float(np.median(ts)),
            "t_one": float(np.median(t1)),
            "ratio_q25": float(np.percentile(np.array(tj) / np.array(t1), 25)),
            "ratio_q75": float(np.percentile(np.array(tj) / np.array(t1), 75))}


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    joint_reps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    print(f"load average {os.getloadavg()}; n = {N}, epsilon = {EPS}, {reps} repetitions",
          flush=True)
    x = np.clip(np.random.default_rng(7).lognormal(10, 1, N), LOW, HIGH)
    truth = float(np.median(x))
    print(f"median  expected MAE, exact from each law on this data (no sampling error): "
          f"dpnoise interval-quantile {expected_mae_dpnoise(x, truth):.7f}, the law "
          f"tmlt-analytics documents {expected_mae_interval_law(x, truth):.7f}", flush=True)
    print("median  expected MAE, exact, of the session's law (level bar: 2^24 + 1 lattice "
          "points, rank bar: 2^32 + 1): "
          + ", ".join(f"{name} {expected_mae_session(x, truth, q):.7f}"
                      for name, q in SESSION_QUERIES.items()), flush=True)
    rows = median_rows(x, reps)
    base = rows.get("tmlt-analytics median")
    if base is not None:
        (mb, sb) = mean_se(base)
        for name in ("dpnoise interval-quantile", *SESSION_QUERIES):
            md, sd = mean_se(rows[name])
            print(f"median  {name} − tmlt-analytics: {md - mb:+.4f} ± {np.hypot(sd, sb):.4f} "
                  f"(s.e. of the difference)")
    for levels in ([0.25, 0.5, 0.75], [k / 10 for k in range(1, 10)]) if joint_reps else ():
        r = joint_rows(x, levels, joint_reps)
        print(f"m={len(levels)}  mean rank error joint {r['joint']:7.2f} ± {r['joint_se']:.2f} vs "
              f"composed singles {r['single']:7.2f} ± {r['single_se']:.2f}; median time joint "
              f"{r['t_joint'] * 1e3:.1f} ms, composed {r['t_single'] * 1e3:.1f} ms, one quantile "
              f"{r['t_one'] * 1e3:.1f} ms (joint/one {r['t_joint'] / r['t_one']:.2f}x; per round "
              f"quartiles {r['ratio_q25']:.2f}-{r['ratio_q75']:.2f}x)")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
