"""Throughput of dpnoise's exact integer count samplers vs numpy and OpenDP.

    python benchmarks/counts.py [--quick]

Rows: CountNoise release (exact 64-bit table, clamp to [0, N]) vs numpy
``Generator.integers`` over the same support (not private, not exact: the speed yardstick);
Geometric and DiscreteGaussian (exact CKS samplers) vs OpenDP's discrete Laplace/Gaussian
(``then_laplace``/``then_gaussian`` on integer vectors) when opendp is importable.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpnoise import CountNoise, CryptoRandom, DiscreteGaussian, Geometric


def best_rate(fn, n: int, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return n / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    n = 10**6 if a.quick else 10**7
    reps = 3 if a.quick else 5
    rng = CryptoRandom()
    gen = np.random.default_rng()
    counts = np.full(n, 500, dtype=np.int64)
    rows = []
    cn = CountNoise(epsilon=2.18, D=6, eta=0.8, lower=0, upper=1000)
    r_cn = best_rate(lambda: cn.release(counts, rng=rng), n, reps)
    r_np = best_rate(lambda: gen.integers(-6, 7, size=n), n, reps)
    rows.append(("CountNoise release (eps=2.18, D=6, clamp [0,N])", r_cn, r_np, "numpy integers"))
    m = n // 10
    sub = counts[:m]
    geo = Geometric(epsilon=1.0, upper=1000)
    dg = DiscreteGaussian(epsilon=1.0, sigma2=9.0, upper=1000)
    r_geo = best_rate(lambda: geo.release(sub, rng=rng), m, reps)
    r_dg = best_rate(lambda: dg.release(sub, rng=rng), m, reps)
    dg100 = DiscreteGaussian(epsilon=1.0, sigma2=10_000.0, upper=1000)
    r_dg100 = best_rate(lambda: dg100.release(sub, rng=rng), m, reps)
    peer_geo = peer_dg = peer_dg100 = None
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
        lap = space >> dp.m.then_laplace(scale=1.0)
        space2 = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int)
        gau = space2 >> dp.m.then_gaussian(scale=3.0)
        k = min(m, 200_000)
        data = [500] * k
        peer_geo = best_rate(lambda: lap(data), k, 2)
        peer_dg = best_rate(lambda: gau(data), k, 2)
        gau100 = space2 >> dp.m.then_gaussian(scale=100.0)
        peer_dg100 = best_rate(lambda: gau100(data), k, 2)
    except Exception as exc:  # pragma: no cover - optional peer
        print(f"(opendp not available: {exc})")
    rows.append(("Geometric release (eps=1, exact CKS)", r_geo, peer_geo, "OpenDP then_laplace"))
    rows.append(("DiscreteGaussian release (sigma=3, exact CKS)", r_dg, peer_dg,
                 "OpenDP then_gaussian"))
    rows.append(("DiscreteGaussian release (sigma=100, exact CKS)", r_dg100, peer_dg100,
                 "OpenDP then_gaussian"))
    print(f"{'sampler':52s} {'dpnoise /s':>12s} {'peer /s':>12s} {'ratio':>7s}  peer")
    for name, ours, peer, pname in rows:
        ps = f"{peer:12.3g}" if peer else f"{'-':>12s}"
        ratio = f"{ours / peer:7.2f}" if peer else f"{'-':>7s}"
        print(f"{name:52s} {ours:12.3g} {ps} {ratio}  {pname}")


if __name__ == "__main__":
    main()
