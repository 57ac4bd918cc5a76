"""Staircase (paper 004): throughput vs numpy's (unsafe) Laplace, and utility vs Laplace.

    python benchmarks/staircase.py [--quick]

Throughput: dpnoise.Staircase.release on 10^6 (10^7 without --quick) true values with the
default OS-keyed ChaCha20 CSPRNG and the exact lattice sampler, against numpy's
``x + Generator.laplace`` (the unsafe speed reference), dpnoise.Laplace and, when
installed, diffprivlib's float Staircase (per value).  One process, best of 5 runs.
Utility: variance / E|noise| / 95% interval of the released (exact lattice) law beside
the ideal staircase and Laplace with the same epsilon and sensitivity.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import dpnoise
from _common import print_table, rate
from dpnoise.laws.staircase import laplace_interval_size, laplace_variance


def paired(fn, ref, n: int, repeats: int = 9) -> tuple[float, float]:
    """Median rate of ``fn`` and median ratio to ``ref``, measured back to back.

    On a shared machine the load changes between runs; each candidate run is paired with
    a reference run right after it and the median of the per-pair ratios is reported.
    """
    rates, ratios = [], []
    for _ in range(repeats):
        a = rate(fn, n, repeats=1)
        b = rate(ref, n, repeats=1)
        rates.append(a)
        ratios.append(a / b)
    return float(np.median(rates)), float(np.median(ratios))


def throughput(n: int) -> None:
    gen = np.random.default_rng(1)
    x = np.full(n, 1.5)
    src = dpnoise.CryptoRandom()

    def numpy_ref(k: int) -> object:
        return x[:k] + gen.laplace(0.0, 1.0, size=k)

    ref = rate(numpy_ref, n, repeats=5)
    rows: list[tuple[str, float]] = [("numpy x + Generator.laplace (UNSAFE float)", ref)]
    lap = dpnoise.Laplace(epsilon=1.0, sensitivity=1.0)
    candidates = [("dpnoise Laplace eps=1 (exact lattice)", lap)]
    for eps, sens in ((0.01, 1.0), (0.1, 1.0), (0.5, 1.0), (1.0, 1.0), (2.0, 1.0), (5.0, 1.0),
                      (1.0, 1.01)):
        m = dpnoise.Staircase(epsilon=eps, sensitivity=sens)
        candidates.append((f"dpnoise Staircase eps={eps} sens={sens} "
                           f"({m.law.words_per_draw} words/draw)", m))
    print(f"{'paired with numpy (median of 9 back-to-back pairs)':58s} {'samples/s':>14s} "
          f"{'ratio':>12s}")
    for name, m in candidates:
        r, ratio = paired(lambda k, m=m: m.release(x[:k], rng=src), numpy_ref, n)
        rows.append((name, ratio * ref))  # scaled to the reference run of the table
        print(f"{name:58s} {r:14,.0f} {ratio:11.3f}x")
    box = dpnoise.MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10), lam=0.1)
    xs = np.zeros((n // 10, 2))
    rows.append(("dpnoise MultivariateStaircase 2-D (vectors, eps=1)",
                 rate(lambda k: box.release(xs[:k], rng=src), n // 10, repeats=3)))
    rows.append(("numpy 2-D Laplace (vectors, UNSAFE float)",
                 rate(lambda k: xs[:k] + gen.laplace(0, 11.0, size=(k, 2)), n // 10,
                      repeats=3)))
    try:
        from diffprivlib.mechanisms import Staircase as DplStaircase

        dm = DplStaircase(epsilon=1.0, sensitivity=1.0, gamma=0.4167)
        rows.append(("diffprivlib Staircase.randomise (per value, float)",
                     rate(lambda k: [dm.randomise(1.5) for _ in range(k)], 20_000, repeats=3)))
    except ImportError:
        print("diffprivlib not installed: skipped (pip install -e '.[bench]')")
    print_table(f"Throughput, {n:,} releases (samples/s; 1 core; dpnoise rows = median "
                "paired ratio x this numpy run)", rows, ref, "numpy")


def utility() -> None:
    print("\nUtility at sensitivity 1 (released = exact law of what dpnoise samples)")
    print(f"{'eps':>5s} {'Var ideal':>12s} {'Var released':>13s} {'Var Laplace':>12s} "
          f"{'gain':>7s} {'CI95 released':>14s} {'CI95 Laplace':>13s}")
    for eps in (0.1, 0.5, 1.0, 2.0, 5.0):
        m = dpnoise.Staircase(epsilon=eps, sensitivity=1.0)
        law = m.noise()
        ci = dpnoise.Staircase(epsilon=eps, sensitivity=1.0, criterion="interval").noise()
        lo, hi = ci.interval(0.95)
        lv = laplace_variance(eps)
        print(f"{eps:5.1f} {m.ideal.var():12.6f} {law.var():13.6f} {lv:12.6f} "
              f"{1 - law.var() / lv:6.1%} {hi - lo:14.6f} "
              f"{laplace_interval_size(eps, 1.0, 0.95):13.6f}")
    box = dpnoise.MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10), lam=0.1)
    l1 = dpnoise.L1Staircase(epsilon=1.0, sensitivity=11.0)
    print("\n2-D, eps = 1: per-coordinate variance (released)")
    print(f"  box S_f = [-1,1]x[-10,10], lam=0.1 : {box.var()[0]:.4f}, {box.var()[1]:.3f}  "
          f"(ideal 4.0338, 403.38; Laplace(11) per coordinate 242)")
    print(f"  L1 ball, Delta = 11, lam*={l1.lam:.4f}: {l1.var()[0]:.3f}  (ideal "
          f"{l1.ideal().var():.3f}; Laplace(11) 242)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10^6 releases instead of 10^7")
    args = parser.parse_args()
    throughput(10**6 if args.quick else 10**7)
    utility()


if __name__ == "__main__":
    main()
