"""Throughput of dpnoise's safe Laplace vs numpy's (unsafe) Laplace and the peer libraries.

    python benchmarks/throughput.py [--quick]

One process, one core, in one run.  dpnoise uses its default OS-keyed ChaCha20 CSPRNG and
the exact lattice sampler; numpy's ``x + Generator.laplace`` is the (unsafe) speed
reference.  diffprivlib, OpenDP and python-dp are measured when importable (the ``bench``
extra); per-value APIs are timed on fewer samples and reported as samples/second.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import dpnoise
from _common import print_table, rate


def peers(eps: float) -> list[tuple[str, object, int]]:
    """(name, fn(n), sample count) for each importable peer library."""
    out: list[tuple[str, object, int]] = []
    try:
        from diffprivlib.mechanisms import Laplace as DplLaplace

        mech = DplLaplace(epsilon=eps, sensitivity=1.0)
        out.append(("diffprivlib Laplace.randomise (per value)",
                    lambda n: [mech.randomise(1.5) for _ in range(n)], 20_000))
    except ImportError:
        print("diffprivlib not installed: skipped (pip install -e '.[bench]')")
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                 dp.l1_distance(T=float), scale=1.0 / eps)
        out.append(("OpenDP make_laplace (vector)", lambda n: meas([1.5] * n), 50_000))
    except ImportError:
        print("opendp not installed: skipped")
    try:
        from pydp.algorithms.numerical_mechanisms import LaplaceMechanism

        pm = LaplaceMechanism(epsilon=eps, sensitivity=1.0)
        out.append(("python-dp LaplaceMechanism.add_noise (per value)",
                    lambda n: [pm.add_noise(1.5) for _ in range(n)], 50_000))
    except ImportError:
        print("python-dp not installed: skipped")
    return out


def keystream_rates() -> None:
    """ChaCha20 keystream words/s of the two implementations (same bytes; dpnoise.keystream)."""
    import time

    from dpnoise import keystream
    from dpnoise.randomness import KeyedRandom

    n = 1 << 15  # one kernel chunk's worth of words, into a reused buffer
    buf = np.empty(n + 8, dtype=np.uint64)
    srcs = {}
    for which in ("cryptography", "libcrypto"):
        if which == "libcrypto" and keystream.libcrypto() is None:
            print("system libcrypto not loadable: the ctypes keystream is skipped")
            continue
        srcs[which] = KeyedRandom(bytes(32), backend=which)
    best = dict.fromkeys(srcs, float("inf"))
    for _ in range(41):  # interleaved, best of 41: the two see the same machine load
        for which, src in srcs.items():
            t0 = time.perf_counter()
            src.fill(buf, n)
            best[which] = min(best[which], time.perf_counter() - t0)
    rows = [(f"keystream: {w} (holds the GIL: {'yes' if w == 'cryptography' else 'no'})",
             n / t) for w, t in best.items()]
    print_table("ChaCha20 keystream, 64-bit words/s (same words from both)", rows, rows[0][1],
                "cryptography")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10^6 only, fewer peer samples")
    args = parser.parse_args()
    eps = 1.0
    mech = dpnoise.Laplace(epsilon=eps, sensitivity=1.0)
    gen = np.random.default_rng(1)
    sizes = [10**6] if args.quick else [10**6, 10**7]
    for n in sizes:
        x = gen.uniform(0, 1000, n)
        ref = rate(lambda k, x=x: x[:k] + gen.laplace(0.0, 1.0 / eps, size=k), n)
        rows = [
            ("numpy x + Generator.laplace (UNSAFE float sampler)", ref),
            ("dpnoise Laplace.release (exact lattice, CSPRNG)", rate(
                lambda k, x=x: mech.release(x[:k]), n)),
            ("dpnoise Laplace.release (exact lattice, SeededRandom)", rate(
                lambda k, x=x: mech.release(x[:k], rng=dpnoise.SeededRandom(1)), n)),
        ]
        if n == sizes[0]:
            for name, fn, count in peers(eps):
                k = count // 10 if args.quick else count
                rows.append((name, rate(fn, k, repeats=1)))
        print_table(f"Laplace releases, n = {n:,}, epsilon = {eps}", rows, ref, "numpy")
        ours = rows[1][1]
        peer_rows = rows[3:]
        for name, r in peer_rows:
            print(f"  dpnoise / {name.split()[0]}: {ours / r:,.0f}x")
    keystream_rates()


if __name__ == "__main__":
    main()
