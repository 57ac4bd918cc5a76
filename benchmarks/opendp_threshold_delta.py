"""OpenDP's thresholded count: the delta its privacy map states against the true delta of
its release rule, for a key of one person.

    python benchmarks/opendp_threshold_delta.py [--runs N]

``make_count_by >> then_laplace_threshold(scale, threshold)`` on string keys (one row per
person, symmetric distance 1 -> the map's input (l0, l1, linf) = (1, 1, 1)).  The release
keeps a key iff its noisy count ``c + Z >= threshold`` (``Z`` discrete Laplace of the given
scale: ``P(Z >= k) = e^{-k/s}/(1 + e^{-1/s})`` for k >= 1); a key that exists only because
of one person (c = 1) therefore appears with probability ``P(Z >= threshold - 1)``, and the
mechanism's delta is at least that.  The script prints, per threshold: the map's delta, that
probability in 50-digit arithmetic, and the measured release rate of keys of count 1, 2 and
3 at a small threshold (where it can be measured).  The peer runs in the interpreter named
by ``DPNOISE_PEERS_PYTHON`` (default ``/work/peers/bin/python``).  Prints the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess

import mpmath

PEER_CODE = r'''
import json, sys
import opendp.prelude as dp
dp.enable_features("contrib")
runs = int(sys.argv[1])
space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
t = dp.t.make_count_by(*space, TV=int)
out = {"d_mid": list(t.map(1)), "maps": {}}
for thr in (2, 3, 14, 15):
    out["maps"][thr] = (t >> dp.m.then_laplace_threshold(scale=1.0, threshold=thr)).map(1)
m = t >> dp.m.then_laplace_threshold(scale=1.0, threshold=3)
data = ["a"] + ["b"] * 2 + ["c"] * 3
hits = {"a": 0, "b": 0, "c": 0}
low = 10**9
for _ in range(runs):
    r = m(data)
    for k in r:
        hits[k] += 1
        low = min(low, r[k])
out["rates"] = {k: v / runs for k, v in hits.items()}
out["lowest_released"] = low
print(json.dumps(out))
'''


def tail(scale: float, k: int) -> mpmath.mpf:
    """P(Z >= k), k >= 1, for the discrete Laplace of ``scale`` (50 digits)."""
    with mpmath.workdps(50):
        r = mpmath.exp(-1 / mpmath.mpf(scale))
        return r ** k / (1 + r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20000)
    a = ap.parse_args()
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    python = os.environ.get("DPNOISE_PEERS_PYTHON", "/work/peers/bin/python")
    if not os.path.exists(python):
        print(f"skipped: no peers interpreter at {python}")
        return
    proc = subprocess.run([python, "-c", PEER_CODE, str(a.runs)], capture_output=True,
                          text=True, timeout=3600, check=True)
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"make_count_by map(1) = (l0, l1, linf) = {tuple(got['d_mid'])}; scale 1")
    print(f"{'threshold':>9s} {'map delta':>12s} {'P(Z >= thr-1)':>14s} {'P(Z >= thr)':>12s}")
    for thr, (_, d) in sorted(got["maps"].items(), key=lambda kv: int(kv[0])):
        k = int(thr)
        print(f"{k:9d} {d:12.4g} {float(tail(1.0, k - 1)):14.4g} {float(tail(1.0, k)):12.4g}")
    r = got["rates"]
    print(f"\nthreshold 3, {a.runs} releases: keys of count 1, 2, 3 released at rates "
          f"{r['a']:.4f}, {r['b']:.4f}, {r['c']:.4f}; exact P(c + Z >= 3): "
          f"{float(tail(1.0, 2)):.4f}, {float(tail(1.0, 1)):.4f}, "
          f"{float(1 - tail(1.0, 1)):.4f}; lowest value released {got['lowest_released']}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
