"""The README's performance summary: a short table measured now.

    python benchmarks/summary.py

``make bench`` (``benchmarks/run.py``) records its output and writes it into the README's
``bench:summary`` block.

Measures, in this process on one core, 10^6 releases of distinct true values (ε = 1, over
[0, 1000]) for dpnoise's most used mechanisms, each paired with numpy's unsafe
``x + Generator.laplace`` right before it, and the peer libraries' Laplace when they are
importable (the ``bench`` extra: ``make bench`` installs them); run.py adds the date,
the machine's load average and the command.
The full benchmarks and their discussion: docs/performance.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import dpnoise  # noqa: E402
from _common import rate  # noqa: E402

N = 1_000_000


def _numpy_rate(x: np.ndarray) -> float:
    g = np.random.default_rng()
    return rate(lambda n: x[:n] + g.laplace(0.0, 1.0, n), N)


def _ours() -> list[tuple[str, object, np.ndarray]]:
    g = np.random.default_rng(1)
    real = g.uniform(0, 1000, N)
    counts = g.integers(0, 1000, N).astype(np.int64)
    src = dpnoise.CryptoRandom()
    return [
        ("`Laplace` (exact lattice)", dpnoise.Laplace(epsilon=1.0, sensitivity=1.0), real),
        ("`ClampedLaplace` [0, 1000]",
         dpnoise.ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0, upper=1000), real),
        ("`Geometric` (counts)", dpnoise.Geometric(epsilon=1.0, sensitivity=1), counts),
        ("`DiscreteGaussian` (δ = 1e-6)",
         dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, sensitivity=1), counts),
    ], src


def _peers() -> list[tuple[str, object, int]]:
    out = []
    try:
        from diffprivlib.mechanisms import Laplace as DplLaplace

        m = DplLaplace(epsilon=1.0, sensitivity=1.0)
        out.append(("diffprivlib `Laplace.randomise`",
                    lambda n: [m.randomise(1.5) for _ in range(n)], 20_000))
    except ImportError:
        pass
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                 dp.l1_distance(T=float), scale=1.0)
        out.append(("OpenDP `make_laplace` (vector)", lambda n: meas([1.5] * n), 50_000))
    except ImportError:
        pass
    return out


def _rate(r: float) -> str:
    return f"{r / 1e6:.1f} M" if r >= 1e5 else f"{r / 1e3:.0f} k"


def measure() -> str:
    """The block's markdown: one row per implementation, rates and ratios vs numpy."""
    mechs, src = _ours()
    rows = []
    x = mechs[0][2]
    for name, mech, values in mechs:
        ref = _numpy_rate(x)
        ours = rate(lambda n, m=mech, v=values: m.release(v[:n], rng=src), N)
        rows.append((name, ours, ours / ref))
    ref = _numpy_rate(x)
    for name, fn, n in _peers():
        r = rate(fn, n, repeats=1)
        rows.append((name, r, r / ref))
    lines = [
        "One core, 10^6 distinct true values, ε = 1; each ratio against numpy's unsafe "
        "`x + Generator.laplace` measured right before it:",
        "",
        "| release | values/s | vs numpy |",
        "|---|---:|---:|",
        *(f"| {name} | {_rate(r)} | {q:.2f}x |" if q >= 0.1 else
          f"| {name} | {_rate(r)} | {q:.4f}x |" for name, r, q in rows),
    ]
    if len(rows) == len(mechs):
        lines += ["", "(peer libraries not installed in this run: `make bench` installs them)"]
    return "\n".join(lines) + "\n"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(measure(), end="")


if __name__ == "__main__":
    main()
