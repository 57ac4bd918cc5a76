"""The performance targets: distinct values, single calls, construction, the custodian CLI.

    python benchmarks/targets.py [--quick] [--only SECTION]

Every row of the performance-targets table, measured in ONE run on this machine: each dpnoise
rate is paired with a numpy ``x + Generator.laplace`` run right before it (the unsafe float
reference, same n, distinct true values), and the ratio is the median of the pairs, so machine
drift cancels.  Peers (diffprivlib, OpenDP, python-dp; the ``bench`` extra) are measured where
they have the mechanism.  ``--quick`` skips the 10^7 rows.  Each row names its target; the
load average is printed at the top and before each section.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import dpnoise
from constructions import INTEGER

GEN = np.random.default_rng()


def _t(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def paired(fn: Callable[[], object], x: np.ndarray, pairs: int = 5) -> tuple[float, float]:
    """(values/s of fn, median ratio fn-rate / numpy-rate), numpy run right before each."""
    n = x.size
    fn()
    ratios, rates = [], []
    for _ in range(pairs):
        ref = _t(lambda: x + GEN.laplace(0.0, 1.0, size=x.shape))
        t = _t(fn)
        ratios.append(ref / t)
        rates.append(n / t)
    return statistics.median(rates), statistics.median(ratios)


def row(what: str, value: str, target: str, ok: bool | None = None) -> None:
    """One row: what, the measured value, the target, PASS/FAIL (``ok``; blank for a
    reference row without a target) and the 1-minute load average when it was printed."""
    met = "" if ok is None else ("PASS" if ok else "FAIL")
    print(f"| {what} | {value} | {target} | {met} | {os.getloadavg()[0]:.2f} |", flush=True)


def per_call_us(fn: Callable[[], object], k: int = 2000) -> float:
    fn()
    best = min(_t(lambda: [fn() for _ in range(k)]) for _ in range(3))
    return best / k * 1e6


def peak_extra_bytes(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def throughput(quick: bool) -> None:
    n = 10**6
    rng = dpnoise.CryptoRandom()
    counts = GEN.integers(0, 10**6, n)
    xf = counts.astype(np.float64)
    x100 = GEN.uniform(0, 100, n)
    g = dpnoise.Geometric(epsilon=1.0, upper=None)
    _, r = paired(lambda: g.release(counts, rng=rng), xf)
    row("Geometric, distinct counts, eps 1", f"{r:.2f}x", ">= 0.7x", r >= 0.7)
    gc = dpnoise.Geometric(epsilon=1.0, upper=None, sampler="cks")
    _, r = paired(lambda: gc.release(counts, rng=rng), xf, pairs=3)
    row("  (reference: Geometric sampler='cks')", f"{r:.3f}x", "")
    dg = dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, upper=None)
    _, r = paired(lambda: dg.release(counts, rng=rng), xf)
    row("DiscreteGaussian, distinct, eps 1 delta 1e-6", f"{r:.2f}x", ">= 0.5x", r >= 0.5)
    dgc = dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, upper=None, sampler="cks")
    _, r = paired(lambda: dgc.release(counts, rng=rng), xf, pairs=3)
    row("  (reference: DiscreteGaussian sampler='cks')", f"{r:.3f}x", "")
    if not quick:
        c7 = GEN.integers(0, 10**6, 10 * n)
        _, r = paired(lambda: dg.release(c7, rng=rng), c7.astype(np.float64), pairs=3)
        row("DiscreteGaussian, distinct, 10^7", f"{r:.2f}x", ">= 0.5x", r >= 0.5)
    for dom, label in (((0, 100), "[0, 100]"), ((0, float("inf")), "half-line [0, inf)")):
        m = dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=dom)
        k = 10**5
        xs = x100[:k]
        _, r = paired(lambda m=m, xs=xs: m.release(xs, rng=rng), xs, pairs=3)
        mem = peak_extra_bytes(lambda m=m, xs=xs: m.release(xs, rng=rng)) / (8 * k)
        row(f"RangeLaplace {label}, distinct (10^5)", f"{r:.2f}x; peak {mem:.0f}x output",
            ">= 0.6x; <= 3x", r >= 0.6 and mem <= 3)
    un = dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 10), (20, 30)])
    for k in (2000, 10**5, 10**6):  # per-element union sampler: distinct values, nothing per centre
        xs = GEN.uniform(0, 10, k)
        rate_u, r = paired(lambda xs=xs: un.release(xs, rng=rng), xs, pairs=5)
        row(f"RangeLaplace union of 2 pieces, distinct ({k:.0e})", f"{r:.3f}x ({rate_u:,.0f}/s)",
            ">= 0.5x", r >= 0.5)
    big = GEN.uniform(0, 100, n if quick else 10 * n)
    for name, m in (
        ("Laplace", dpnoise.Laplace(epsilon=1.0, sensitivity=1.0)),
        ("ClampedLaplace", dpnoise.ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0,
                                                  upper=100.0)),
        ("TruncatedLaplace", dpnoise.TruncatedLaplace(epsilon=1.0, delta=1e-6,
                                                      sensitivity=1.0)),
        ("AnalyticGaussian", dpnoise.AnalyticGaussian(epsilon=1.0, delta=1e-6,
                                                      sensitivity=1.0)),
        ("Staircase", dpnoise.Staircase(epsilon=1.0, sensitivity=1.0)),
    ):
        _, r = paired(lambda m=m: m.release(big, rng=rng), big, pairs=5)
        row(f"{name}, distinct, 10^{7 - quick}", f"{r:.2f}x", ">= 1.0x", r >= 1.0)
    box = dpnoise.MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10), lam=0.1)
    pts = GEN.uniform(0, 100, (n // 10, 2))
    _, r = paired(lambda: box.release(pts, rng=rng), pts, pairs=3)
    row("MultivariateStaircase 2-D (10^5 vectors)", f"{r:.2f}x", ">= 0.6x", r >= 0.6)
    pl = dpnoise.PlanarLaplace.with_margin(epsilon=0.01, grid=1.0,
                                          domain=((0, 2000), (0, 2000)))
    pts = GEN.uniform(0, 2000, (n // 10, 2))
    _, r = paired(lambda: pl.release(pts, rng=rng), pts, pairs=3)
    row("PlanarLaplace (10^5 points)", f"{r:.2f}x", ">= 0.8x", r >= 0.8)
    keystream_share(rng)
    lap = dpnoise.Laplace(epsilon=1.0, sensitivity=1.0)
    xs = GEN.uniform(0, 1000, n if quick else 10 * n)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2
    saved = os.environ.get("DPNOISE_THREADS")
    for m, name in ((lap, "Laplace"), (g, "Geometric"), (dg, "DiscreteGaussian")):
        v = xs if m is lap else xs.astype(np.int64)
        r = threads_ratio(lambda m=m, v=v: m.release(v, rng=rng), cores)
        row(f"cores: {name}, {v.size:.0e} values, {cores} threads / 1 thread "
            "(DPNOISE_THREADS; default 1)", f"{r:.2f}x", ">= 1.7x", r >= 1.7)
        share, bound = parallel_share(lambda m=m, v=v: m.release(v, rng=rng), v.size, cores)
        row(f"  ({name}: share of a 1-thread release's CPU time in its chunk jobs; "
            f"Amdahl bound at {cores} threads)", f"{share:.1%} ({bound:.2f}x)", "")
    big_sort = GEN.random(1 << 22)
    r = threads_ratio(lambda: [np.sort(big_sort) for _ in range(cores)], cores,
                      split=lambda k: [np.sort(big_sort)])
    row(f"  (machine reference: GIL-free np.sort x{cores}, {cores} threads / 1 thread)",
        f"{r:.2f}x", "")
    if saved is None:
        os.environ.pop("DPNOISE_THREADS", None)
    else:
        os.environ["DPNOISE_THREADS"] = saved


def parallel_share(fn: Callable[[], object], n: int, cores: int, repeats: int = 15
                   ) -> tuple[float, float]:
    """(p, bound): p = the median share of a 1-thread release's CPU time (``thread_time``,
    so time the process waits for a core does not count) spent inside its chunk jobs (the
    input checks and the draws) -- the part ``cores`` threads share -- and the Amdahl bound
    1 / ((1 - p) + p * w), w = the busiest thread's share of the pieces (SPLIT_SPAN values
    with a sampler's compiled spans, else whole chunks of SPLIT_CHUNK values)."""
    from dpnoise import parallel

    real_split, real_map = parallel.run_split, parallel.chunk_map
    inside = [0.0]

    def timed(fn: Any) -> Any:
        def job(*args: Any) -> Any:
            t0 = time.thread_time()
            out = fn(*args)
            inside[0] += time.thread_time() - t0
            return out

        return job

    class TimedSpans:  # a sampler's compiled spans, timed like the jobs
        def __init__(self, compiled: Any) -> None:
            self.span = timed(compiled.span)

    used_spans = [False]

    def split(source: Any, size: int, work: Any, compiled: Any = None) -> None:
        used_spans[0] = compiled is not None
        real_split(source, size, timed(work), None if compiled is None else TimedSpans(compiled))

    os.environ["DPNOISE_THREADS"] = "1"
    # the mechanisms import these when they release: the input checks (chunk_map) and the
    # draws (run_split: per-chunk work, or the sampler's compiled spans) are what the
    # threads share
    parallel.run_split = split
    parallel.chunk_map = lambda size, fn: real_map(size, timed(fn))
    shares = []
    try:
        for _ in range(repeats):
            inside[0] = 0.0
            t0 = time.thread_time()
            fn()
            shares.append(inside[0] / (time.thread_time() - t0))
    finally:
        parallel.run_split, parallel.chunk_map = real_split, real_map
    p = statistics.median(shares)
    piece = parallel.SPLIT_SPAN if used_spans[0] else parallel.SPLIT_CHUNK
    pieces = -(-n // piece)
    w = min(1.0, -(-pieces // cores) * piece / n)
    return p, 1.0 / ((1.0 - p) + p * w)


def threads_ratio(fn: Callable[[], object], cores: int, pairs: int = 7,
                  split: Callable[[int], object] | None = None) -> float:
    """Median over interleaved pairs of (time with 1 thread) / (time with ``cores``).

    With ``split``, the threaded run calls split(i) on ``cores`` threads instead of setting
    DPNOISE_THREADS (the machine reference: how much a second core gives right now).
    """
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(cores)
    ratios = []
    for _ in range(pairs):
        os.environ["DPNOISE_THREADS"] = "1"
        one = _t(fn)
        os.environ["DPNOISE_THREADS"] = str(cores)
        many = _t(fn) if split is None else _t(lambda: list(pool.map(split, range(cores))))
        ratios.append(one / many)
    pool.shutdown()
    return statistics.median(ratios)


def _scalar_mechanisms() -> list[tuple[str, object, object]]:
    return [
        ("Laplace", dpnoise.Laplace(epsilon=1.0, sensitivity=1.0), 5.0),
        ("ClampedLaplace", dpnoise.ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0,
                                                  upper=100), 5.0),
        ("RangeLaplace [0,100]", dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0,
                                                      domain=(0, 100)), 5.0),
        ("Geometric", dpnoise.Geometric(epsilon=1.0), 5),
        ("DiscreteGaussian", dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6), 5),
        ("AnalyticGaussian", dpnoise.AnalyticGaussian(epsilon=1.0, delta=1e-6,
                                                      sensitivity=1.0), 5.0),
        ("Staircase", dpnoise.Staircase(epsilon=1.0, sensitivity=1.0), 5.0),
        ("TruncatedLaplace", dpnoise.TruncatedLaplace(epsilon=1.0, delta=1e-6,
                                                      sensitivity=1.0), 5.0),
    ]


def scalars() -> None:
    """One release(x) of one Python number: with the default ``rng=None`` (this thread's
    OS-keyed source, keyed once) and with a caller-held CryptoRandom, against the peers'
    per-value calls in the same run."""
    rng = dpnoise.CryptoRandom()
    mechs = _scalar_mechanisms()
    held, default = [], {}
    for name, m, x in mechs:
        held.append(f"{name} {per_call_us(lambda m=m, x=x: m.release(x, rng=rng)):.1f}")
        default[name] = per_call_us(lambda m=m, x=x: m.release(x))
    worst = max(default.values())
    row("one scalar release(x) with rng=None, us", "; ".join(
        f"{k} {v:.1f}" for k, v in default.items()), "Laplace <= 5 us; each <= 10 us",
        default["Laplace"] <= 5 and worst <= 10)
    row("  the same with rng=CryptoRandom() held by the caller, us", "; ".join(held), "")
    try:
        from diffprivlib.mechanisms import Laplace as DplLaplace

        d = DplLaplace(epsilon=1.0, sensitivity=1.0)
        row("  diffprivlib Laplace.randomise, us", f"{per_call_us(lambda: d.randomise(5.0)):.1f}",
            "")
    except ImportError:
        pass
    try:
        from pydp.algorithms.numerical_mechanisms import LaplaceMechanism

        p = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
        pydp = per_call_us(lambda: p.add_noise(5.0))
        row("  python-dp LaplaceMechanism.add_noise, us", f"{pydp:.1f}", "")
        row("  dpnoise rng=None: Laplace / python-dp, slowest mechanism / python-dp",
            f"{default['Laplace'] / pydp:.2f}x, {worst / pydp:.2f}x", "<= 1.5x (Laplace)",
            default["Laplace"] / pydp <= 1.5)
    except ImportError:
        pass
    row("  numpy x + laplace(), us", f"{per_call_us(lambda: 5.0 + GEN.laplace()):.2f}", "")
    union = dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 10), (20, 30)])
    t = per_call_us(lambda: union.release(5.0), k=500)
    row("one scalar release on the union (0, 10) U (20, 30), us", f"{t:.1f}", "<= 20 us",
        t <= 20)


def keystream_share(rng: object) -> None:
    """How much of the keystream's rate Laplace turns into values: (words a value draws x
    values/s) / keystream words/s, both measured here, 10^6 distinct values; the median of 7
    interleaved repeats, each timing the keystream as the best of 5 fills and the release
    as the best of 3."""
    from dpnoise.kernels import keyed
    from dpnoise.randomness import KeyedRandom

    class Counting:
        def __init__(self) -> None:
            self.n, self.inner = 0, dpnoise.CryptoRandom()

        def words(self, n: int) -> np.ndarray:
            self.n += int(n)
            return self.inner.words(n)

    lap = dpnoise.Laplace(epsilon=1.0, sensitivity=1.0)
    xs = GEN.uniform(0, 1000, 10**6)
    counting = Counting()
    # below 2^19 values one source draws every word (larger releases key one keystream per
    # chunk from a few of its words)
    lap.release(xs[: 1 << 18], rng=counting)
    per_value = counting.n / (1 << 18)
    src = KeyedRandom(bytes(32))
    buf = np.empty((1 << 15) + 8, dtype=np.uint64)
    kernel = _block_kernel_alone(lap, src, xs)
    shares, keys, laps, kernels = [], [], [], []
    lap.release(xs, rng=rng)  # warm: the output's memory, the chunk keystreams' setup
    for _ in range(7):  # each a best of several runs, the keystream's of more (conservative)
        t_key = min(_t(lambda: src.fill(buf, 1 << 15)) for _ in range(5)) / (1 << 15)
        t_lap = min(_t(lambda: lap.release(xs, rng=rng)) for _ in range(3)) / xs.size
        shares.append(per_value * t_key / t_lap)
        keys.append(t_key)
        laps.append(t_lap)
        kernels.append(min(kernel() for _ in range(3)) / xs.size)
    share = statistics.median(shares)
    row("Laplace's share of the keystream rate (words/value x values/s / words/s)",
        f"{share:.0%} ({per_value:.2f} words a value)", ">= 75%", share >= 0.75)
    words_ns = per_value * statistics.median(keys) * 1e9
    kernel_ns, lap_ns = statistics.median(kernels) * 1e9, statistics.median(laps) * 1e9
    fused = "keystream computed in the kernel's loop" if keyed.fused_loop() else \
        "libcrypto's keystream, then the kernel"
    row("  where a value's time goes, ns: its keystream words alone; the release beyond them "
        f"({fused}); the compiled block kernel alone on the release's chunks and memory "
        f"({_kernel_loop()} loop; the fused loop overlaps it with the cipher)",
        f"{words_ns:.2f}; {lap_ns - words_ns:.2f}; {kernel_ns:.2f} "
        f"(whole release {lap_ns:.2f})", "")


def _kernel_loop() -> str:
    """Which loop of kernels/block.c this CPU runs: AVX-512, AVX2 or plain C (or none)."""
    import ctypes

    from dpnoise import kernels
    from dpnoise.exact.geometric import SIMD_LEVEL

    isa = kernels.function("dpk_block_isa", [], ctypes.c_int64)
    return "no kernel" if isa is None else ("plain C", "AVX2", "AVX-512")[min(isa(), SIMD_LEVEL)]


def _block_kernel_alone(lap: Any, src: Any, centre: np.ndarray) -> Callable[[], float]:
    """The Laplace block kernel (kernels/block.c) over all of ``centre`` as a release runs it
    -- chunks of 2^14 values, each chunk's words in one 256 KiB buffer (drawn once, before),
    the true values read from the caller's array and the values written to a fresh output
    of the same size with the release's non-temporal stores -- without the keystream, the
    input checks or the chunk loop's keying.  One call of the compiled chunk loop would
    redraw the words."""
    from dpnoise.exact.geometric import SIMD_LEVEL, STREAM_MIN, _block_kernel

    kern, block, c = _block_kernel(), lap._sampler(), 1 << 14
    if kern is None:
        return lambda: math.nan
    words = np.empty(2 * c + 8, dtype=np.uint64)
    src.fill(words, 2 * c)
    n, out = centre.size, np.empty(centre.size)
    packed = block._packed_table
    head = (words.ctypes.data, c, c, packed.ctypes.data, block.table.bits, 2 * block.M)
    tail = (1.0 / lap.grid, lap.grid / 2)
    calls = [(*head[:1], min(c, n - s), min(c, n - s), *head[3:], centre.ctypes.data + 8 * s,
              *tail, out.ctypes.data + 8 * s, None, SIMD_LEVEL, int(n >= STREAM_MIN))
             for s in range(0, n, c)]
    empty = [(args[0], 0, 0, *args[3:]) for args in calls]  # the same calls on no values
    keep = (words, centre, out, packed)  # the arrays behind the raw addresses

    def run() -> float:
        """Seconds of the kernel's work: the calls' time less that of the same calls on no
        values (the foreign calls' own cost, ~1-3 us each)."""
        assert keep
        t0 = time.perf_counter()
        for args in calls:
            kern(*args)
        t1 = time.perf_counter()
        for args in empty:
            kern(*args)
        return (t1 - t0) - (time.perf_counter() - t1)

    return run


#: one cold construction in a fresh interpreter: ``import dpnoise`` and the mechanism's
#: module are loaded first (their cost is the import row), then one construction is timed
#: (cold: nothing cached for these parameters), then the same construction again (warm:
#: the per-process caches keyed by public parameters)
_BUILD = r"""
import json, sys, time
import dpnoise
from constructions import builders  # benchmarks/ is on the PYTHONPATH the caller passes
name, eps, sens = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
build = builders(eps, sens)[name]
getattr(dpnoise, name.split()[0])
w, c = time.perf_counter(), time.process_time()
try:
    build()
except dpnoise.ParameterError:  # outside the mechanism's supported range
    print("null")
    raise SystemExit(0)
cold, cpu = time.perf_counter() - w, time.process_time() - c
w = time.perf_counter()
build()
print(json.dumps([cold * 1e3, cpu * 1e3, (time.perf_counter() - w) * 1e3]))
"""

_INTEGER = INTEGER
_EPSILONS = (0.01, 0.1, 1.0, 5.0)


def construction() -> None:
    """Cold construction of every mechanism at epsilon in {0.01, 0.1, 1, 5} and sensitivity
    in {1, 10, 1000} ({1, 2, 16} for the integer mechanisms), best of two fresh processes
    per cell: one row per mechanism with its worst cell (wall time, the target; and that
    run's CPU time, what an idle core would take), the cells over the target, and the warm
    construction (the same parameters again in the process)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    names = ["Laplace", "ClampedLaplace", "TruncatedLaplace", "Gaussian", "AnalyticGaussian",
             "Staircase", "MultivariateStaircase", "RangeLaplace", "RangeLaplace half-line",
             "Geometric", "DiscreteGaussian", "CountNoise", "PlanarLaplace"]
    for name in names:
        sens = (1, 2, 16) if name in _INTEGER else (1, 10, 1000)
        cells = []
        for eps in _EPSILONS:
            for d in sens:
                runs = [json.loads(subprocess.run(
                    [sys.executable, "-c", _BUILD, name, str(eps), str(d)], env=env,
                    capture_output=True, text=True, check=True).stdout) for _ in range(2)]
                if runs[0] is not None:
                    cells.append((*min(runs), eps, d))
        wall, cpu, _, eps, d = max(cells)
        over = [f"eps {e:g} sens {s:g}: {c:.0f}" for c, _, _, e, s in cells if c > 20]
        warm = max(a for _, _, a, _, _ in cells)
        row(f"cold construction, {name}: worst of {len(cells)} cells (ms)",
            f"{wall:.1f} at eps {eps:g}, sens {d:g} (CPU {cpu:.1f}); warm {warm:.1f}"
            + (f"; over 20 ms: {', '.join(over)}" if over else ""), "<= 20 ms", wall <= 20)
    four = [(0, 1), (2, 3), (4, 5), (6, 7)]
    t = _t(lambda: dpnoise.RangeLaplace(epsilon=0.01, sensitivity=1.0, domain=four)) * 1e3
    row("construction, 4-piece union at eps 0.01 (ms, in process)", f"{t:.0f}", "<= 200 ms",
        t <= 200)


def startup() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for label, cmd, target in (
        ("import dpnoise (s, median of 5 processes)", [sys.executable, "-c", "import dpnoise"],
         0.3),
        ("dpnoise --help (s, median of 5 processes)", [sys.executable, "-m", "dpnoise", "--help"],
         0.5),
    ):
        times = [_t(lambda cmd=cmd: subprocess.run(cmd, env=env, capture_output=True,
                                                   check=True)) for _ in range(5)]
        median = statistics.median(times)
        row(label, f"{median:.2f}", f"<= {target} s", median <= target)


def custodian() -> None:
    """The custodian CLI and Session on the generated 10^6-row file (benchmarks/table.py:
    numbers, integers, text keys, nulls): one ``dpnoise release`` process end to end and
    ``Session(...)`` open, medians of 3 (a fresh file each run's first open)."""
    import tempfile

    from table import SCHEMA, write_table

    with tempfile.TemporaryDirectory() as tmp:
        data, schema = os.path.join(tmp, "people.parquet"), os.path.join(tmp, "people.toml")
        write_table(data, 10**6)
        with open(schema, "w") as fh:
            fh.write(SCHEMA)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        cli, opened = [], []
        for i in range(3):
            ledger = os.path.join(tmp, f"l{i}.ledger")
            subprocess.run([sys.executable, "-m", "dpnoise", "ledger", "init", ledger,
                            "--budget", "10"], env=env, check=True, capture_output=True)
            cmd = [sys.executable, "-m", "dpnoise", "release", "--data", data, "--schema",
                   schema, "--ledger", ledger, "--epsilon", "0.5", "--query",
                   "mean income by region"]
            cli.append(_t(lambda cmd=cmd: subprocess.run(cmd, env=env, check=True,
                                                         capture_output=True)))
            opened.append(_t(lambda: dpnoise.Session(data=data, schema=schema,
                                                     ledger=":memory:",
                                                     budget=dpnoise.Budget(epsilon=1.0))))
        t_cli, t_open = statistics.median(cli), statistics.median(opened)
        row("dpnoise release (mean by a text key), 10^6-row parquet, whole command (s)",
            f"{t_cli:.2f}", "<= 1.5 s", t_cli <= 1.5)
        row("Session(...) open, 10^6-row parquet (s)", f"{t_open:.2f}", "<= 0.7 s",
            t_open <= 0.7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="skip the 10^7 rows")
    parser.add_argument("--only", choices=["startup", "throughput", "scalars", "construction",
                                           "custodian"],
                        help="run one section of the table")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; ratios vs numpy's "
          "x + Generator.laplace (unsafe float), median of paired runs\n")
    print("| what | measured | target | met | load average |\n|---|---|---|---|---|")
    sections = {"startup": startup, "throughput": lambda: throughput(args.quick),
                "scalars": scalars, "construction": construction, "custodian": custodian}
    for name, fn in sections.items():
        if args.only in (None, name):
            row(f"*{name}*", "", "")
            fn()


if __name__ == "__main__":
    main()
