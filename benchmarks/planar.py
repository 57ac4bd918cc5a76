"""Planar Laplace throughput: dpnoise (exact-bit, grid, exceptions) vs numpy float baselines.

    python benchmarks/planar.py [--quick]

Baselines (both UNSAFE on floats, for speed comparison only): numpy's Gamma(2) radius with
a uniform angle, and the paper's Lambert-W inverse CDF (scipy.special.lambertw).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
from scipy.special import lambertw

from dpnoise import PlanarLaplace, SeededRandom


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 200_000 if args.quick else 2_000_000
    repeat = 2 if args.quick else 3
    eps_g = 0.01
    m = PlanarLaplace.with_margin(epsilon=eps_g, grid=1.0, domain=((0, 2000), (0, 2000)))
    pts = np.full((n, 2), 1000.0)
    gen = np.random.default_rng(1)
    b = 1 / eps_g

    def numpy_gamma() -> object:
        r = gen.gamma(2.0, b, n)
        t = gen.uniform(0, 2 * math.pi, n)
        return pts[:, 0] + r * np.cos(t), pts[:, 1] + r * np.sin(t)

    def paper_lambertw() -> object:
        u = gen.random(n)
        t = gen.uniform(-math.pi, math.pi, n)
        r = -(np.real(lambertw((u - 1) / math.e, k=-1)) + 1) * b
        return pts[:, 0] + r * np.cos(t), pts[:, 1] + r * np.sin(t)

    seeded = SeededRandom(3)
    rows = [
        ("numpy gamma radius + angle (unsafe floats)", best_of(numpy_gamma, repeat)),
        ("paper sampler, scipy lambertw (unsafe floats)", best_of(paper_lambertw, repeat)),
        ("dpnoise PlanarLaplace, CSPRNG (default)", best_of(lambda: m.release(pts), repeat)),
        ("dpnoise PlanarLaplace, SeededRandom", best_of(lambda: m.release(pts, rng=seeded),
                                                        repeat)),
    ]
    base = rows[0][1]
    print(f"planar Laplace, {n:,} points, eps_g = {eps_g}/m, grid 1 m, region "
          f"{m.region}; guarantee eps' - eps = {m.additive_c:.3g}")
    print(f"{'sampler':<48} {'Mpoints/s':>10} {'time vs numpy':>14}")
    for name, t in rows:
        print(f"{name:<48} {n / t / 1e6:>10.2f} {t / base:>13.2f}x")


if __name__ == "__main__":
    main()
