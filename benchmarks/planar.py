"""Planar Laplace throughput: dpnoise (exact-bit, grid, exceptions) vs numpy float baselines.

    python benchmarks/planar.py [--quick]

Baselines (both UNSAFE on floats, for speed comparison only): numpy's Gamma(2) radius with
a uniform angle, and the paper's Lambert-W inverse CDF (scipy.special.lambertw).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.special import lambertw

from _common import print_table, rate
from dpnoise import PlanarLaplace, SeededRandom


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 200_000 if args.quick else 2_000_000
    repeats = 2 if args.quick else 3
    eps_g = 0.01
    m = PlanarLaplace.with_margin(epsilon=eps_g, grid=1.0, domain=((0, 2000), (0, 2000)))
    gen = np.random.default_rng(1)
    b = 1 / eps_g

    def numpy_gamma(k: int) -> object:
        r = gen.gamma(2.0, b, k)
        t = gen.uniform(0, 2 * math.pi, k)
        return 1000.0 + r * np.cos(t), 1000.0 + r * np.sin(t)

    def paper_lambertw(k: int) -> object:
        u = gen.random(k)
        t = gen.uniform(-math.pi, math.pi, k)
        r = -(np.real(lambertw((u - 1) / math.e, k=-1)) + 1) * b
        return 1000.0 + r * np.cos(t), 1000.0 + r * np.sin(t)

    seeded = SeededRandom(3)
    ref = rate(numpy_gamma, n, repeats=repeats)
    rows = [
        ("numpy gamma radius + uniform angle (unsafe floats)", ref),
        ("paper sampler, scipy lambertw (unsafe floats)", rate(paper_lambertw, n,
                                                               repeats=repeats)),
        ("dpnoise PlanarLaplace, CSPRNG (default)",
         rate(lambda k: m.release(np.full((k, 2), 1000.0)), n, repeats=repeats)),
        ("dpnoise PlanarLaplace, SeededRandom",
         rate(lambda k: m.release(np.full((k, 2), 1000.0), rng=seeded), n, repeats=repeats)),
    ]
    print(f"planar Laplace, {n:,} points, eps_g = {eps_g}/m, grid 1 m, region {m.region}; "
          f"guarantee eps' - eps = {m.additive_c:.3g}")
    print_table("points per second", rows, ref, "numpy")


if __name__ == "__main__":
    main()
