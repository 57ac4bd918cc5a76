"""Geometric under the accuracy rule: speed and E|noise| of what ``sampler="auto"`` picks.

    python benchmarks/accuracy_rule.py [--pairs 5]

For each ε (sensitivity 1) it prints the sampler ``auto`` chose, the ratio of its E|noise|
to the two-sided geometric law's at the asked ε (1/sinh ε), and its rate on 10^6 distinct
true counts as a ratio to numpy's ``x + Generator.laplace`` run right before it (median of
the pairs, so machine drift cancels), next to the forced uniform block, the opt-in
first-steps block and the CKS samplers.  The
machine's load (os.getloadavg) is printed first: the ratios are only comparable at a
similar load.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

import dpnoise

GEN = np.random.default_rng()


def _t(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def paired_ratio(fn: Callable[[], object], x: np.ndarray, pairs: int) -> float:
    """Median over ``pairs`` of (numpy time / fn time), numpy run right before each."""
    fn()
    ratios = []
    for _ in range(pairs):
        ref = _t(lambda: x + GEN.laplace(0.0, 1.0, size=x.shape))
        ratios.append(ref / _t(fn))
    return statistics.median(ratios)


def mean_abs_ratio(m: dpnoise.Geometric, epsilon: float) -> float:
    return float(m.noise().mean_abs()) * math.sinh(epsilon)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--n", type=int, default=10**6)
    a = ap.parse_args()
    print(f"load average (1, 5, 15 min): {os.getloadavg()}, cores: {os.cpu_count()}")
    rng = dpnoise.CryptoRandom()
    counts = GEN.integers(0, 10**6, a.n)
    xf = counts.astype(np.float64)
    print("| eps | auto picks | auto E|noise|/ideal | auto vs numpy | block vs numpy "
          "(E ratio) | first-steps vs numpy (E ratio) | cks vs numpy |")
    print("|---|---|---|---|---|---|---|")
    for eps in (0.1, 1.0, 3.0, 5.0, 8.0, 10.0, 12.0, 14.0):
        auto = dpnoise.Geometric(epsilon=eps, upper=None)
        block = dpnoise.Geometric(epsilon=eps, upper=None, sampler="block")
        cks = dpnoise.Geometric(epsilon=eps, upper=None, sampler="cks")
        r_auto = paired_ratio(lambda m=auto: m.release(counts, rng=rng), xf, a.pairs)
        r_block = paired_ratio(lambda m=block: m.release(counts, rng=rng), xf, a.pairs)
        r_cks = paired_ratio(lambda m=cks: m.release(counts, rng=rng), xf, max(1, a.pairs // 2))
        try:
            first = dpnoise.Geometric(epsilon=eps, upper=None, sampler="first-steps")
            r_first = paired_ratio(lambda m=first: m.release(counts, rng=rng), xf, a.pairs)
            first_cell = f"{r_first:.2f}x ({mean_abs_ratio(first, eps):.4f})"
        except (dpnoise.ParameterError, TypeError):  # older versions: no such sampler
            first_cell = "-"
        print(f"| {eps:g} | {getattr(auto, 'sampler', '?')} | {mean_abs_ratio(auto, eps):.4f} "
              f"| {r_auto:.2f}x | {r_block:.2f}x ({mean_abs_ratio(block, eps):.4f}) "
              f"| {first_cell} | {r_cks:.3f}x |", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
