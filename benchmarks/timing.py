"""Benchmark: does the release time depend on where the true value sits in the domain?

    python benchmarks/timing.py [--rounds N]

For every mechanism with a domain, one value per call is released at an *edge* of the domain
and in its *middle*, alternately (interleaved, so drift hits both alike), after a warm-up at
both.  The median time per call of each is printed with the ratio max/min; a ratio >= 1.3x is
flagged FAIL.  Then the *first* release of freshly built mechanisms (where a
per-centre table would be built, if there were one: there is none, on any domain): FAIL at
>= 1.3x.  What "constant time" means in CPython is
stated in docs/timing.md: the same sequence of operations, not the same number of cycles.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from dpnoise import (
    ClampedLaplace,
    CountNoise,
    CryptoRandom,
    DiscreteGaussian,
    Geometric,
    RangeLaplace,
    TruncatedLaplace,
)

THRESHOLD = 1.3


def cases() -> list[tuple[str, Callable[[], Any], Any, Any]]:
    """(label, build, edge value, middle value)."""
    return [
        ("RangeLaplace [0,100] eps=0.1 (0 vs 50)",
         lambda: RangeLaplace(epsilon=0.1, sensitivity=1.0, domain=(0, 100)), 0.0, 50.0),
        ("RangeLaplace [0,100] eps=0.1 (100 vs 50)",
         lambda: RangeLaplace(epsilon=0.1, sensitivity=1.0, domain=(0, 100)), 100.0, 50.0),
        ("RangeLaplace [0,inf) eps=0.5 (0 vs 100)",
         lambda: RangeLaplace(epsilon=0.5, sensitivity=1.0, domain=(0, math.inf)), 0.0, 100.0),
        ("RangeLaplace (0,8)U(12,24) eps=1 (8 vs 4)",
         lambda: RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 8), (12, 24)]), 8.0, 4.0),
        ("ClampedLaplace [0,100] eps=0.1 (0 vs 50)",
         lambda: ClampedLaplace(epsilon=0.1, sensitivity=1.0, lower=0, upper=100), 0.0, 50.0),
        ("TruncatedLaplace eps=1 d=1e-5 (0 vs 1e6)",
         lambda: TruncatedLaplace(epsilon=1.0, delta=1e-5, sensitivity=1.0), 0.0, 1e6),
        ("CountNoise [0,1000] (0 vs 500)",
         lambda: CountNoise(epsilon=2.18, D=6, eta=0.8, upper=1000), 0, 500),
        ("Geometric [0,100] eps=0.5 (0 vs 50)",
         lambda: Geometric(epsilon=0.5, upper=100), 0, 50),
        ("DiscreteGaussian [0,1000] (0 vs 500)",
         lambda: DiscreteGaussian(epsilon=1.0, delta=1e-6, upper=1000), 0, 500),
    ]


def measure(mech: Any, edge: Any, middle: Any, rounds: int, rng: Any) -> tuple[float, float]:
    for _ in range(20):  # warm-up at both points (tables, caches, branch history)
        mech.release(edge, rng=rng)
        mech.release(middle, rng=rng)
    t_edge, t_mid = [], []
    for i in range(rounds):
        order = ((edge, t_edge), (middle, t_mid)) if i % 2 else ((middle, t_mid), (edge, t_edge))
        for x, acc in order:
            t0 = time.perf_counter()
            mech.release(x, rng=rng)
            acc.append(time.perf_counter() - t0)
    return statistics.median(t_edge), statistics.median(t_mid)


def first_use_cases() -> list[tuple[str, Callable[[], Any], Any, Any]]:
    """Mechanisms whose first release at a new true value could differ (per-centre tables)."""
    return [c for c in cases() if c[0].startswith("RangeLaplace")]


def measure_first(build: Callable[[], Any], edge: Any, middle: Any, rounds: int,
                  rng: Any) -> tuple[float, float]:
    """The FIRST release of a freshly built mechanism (construction not timed), at the edge
    on one instance and in the middle on another, alternately."""
    t_edge, t_mid = [], []
    for i in range(rounds):
        pair = ((edge, t_edge), (middle, t_mid)) if i % 2 else ((middle, t_mid), (edge, t_edge))
        for x, acc in pair:
            mech = build()
            t0 = time.perf_counter()
            mech.release(x, rng=rng)
            acc.append(time.perf_counter() - t0)
    return statistics.median(t_edge), statistics.median(t_mid)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--first-rounds", type=int, default=40)
    args = ap.parse_args(argv)
    rng = CryptoRandom()
    failed = 0
    print(f"{'mechanism (edge vs middle)':48s} {'edge us':>9s} {'middle us':>10s} {'ratio':>7s}")
    for label, build, edge, middle in cases():
        e, m = measure(build(), edge, middle, args.rounds, rng)
        ratio = max(e, m) / min(e, m)
        flag = "FAIL" if ratio >= THRESHOLD else "ok"
        failed += flag == "FAIL"
        print(f"{label:48s} {e * 1e6:9.1f} {m * 1e6:10.1f} {ratio:6.2f}x {flag}", flush=True)
    print(f"\nfirst release after construction ({args.first_rounds} fresh mechanisms each):")
    for label, build, edge, middle in first_use_cases():
        e, m = measure_first(build, edge, middle, args.first_rounds, rng)
        ratio = max(e, m) / min(e, m)
        flag = "FAIL" if ratio >= THRESHOLD else "ok"
        failed += flag == "FAIL"
        print(f"{label:48s} {e * 1e6:9.1f} {m * 1e6:10.1f} {ratio:6.2f}x {flag}", flush=True)
    print(f"\n{failed} case(s) at or above {THRESHOLD}x")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
