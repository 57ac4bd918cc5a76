"""Two threads against one on a large release, with what decides the gain.

    python benchmarks/threads.py [--n 1e6] [--pairs 15] [--wait-idle SECONDS]

For Laplace, Geometric and DiscreteGaussian on n distinct values (rng a reused
``CryptoRandom``), prints:

* the share of a one-thread release's CPU time spent inside its chunk jobs (input checks and
  draws: what threads share; ``time.thread_time``, so waiting for a core does not count) and
  the Amdahl bound it gives on two threads with whole 2^18-value chunks;
* the median over interleaved pairs of (time on 1 thread) / (time on 2 threads)
  (``DPNOISE_THREADS``), the best-of ratio, and in the same pairs the machine's own
  reference: a GIL-free ``np.sort`` on two threads against one after the other;
* voluntary context switches and minor page faults per two-thread release (GIL and pool
  hand-overs; first touches of the output).

The machine's load average is printed before and after.  ``--wait-idle S`` waits up to S
seconds, before each mechanism, for a second in which both CPUs are 85 % idle (/proc/stat),
and prints the idle share it found: on a shared machine the ratios mean little otherwise.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import dpnoise
from targets import parallel_share


def _t(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def _idle_share(seconds: float = 1.0) -> float:
    """The share of CPU time idle over the next ``seconds`` (all CPUs), from /proc/stat."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]

    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return (i1 - i0) / max(1, t1 - t0)


def _wait_idle(limit: float) -> float:
    end, share = time.time() + limit, 0.0
    while time.time() < end:
        share = _idle_share()
        if share >= 0.85:
            break
    return share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--wait-idle", type=float, default=0.0)
    args = parser.parse_args()
    n, gen, rng = int(args.n), np.random.default_rng(1), dpnoise.CryptoRandom()
    xs = gen.uniform(0, 1000, n)
    big = gen.random(1 << 19)
    pool = ThreadPoolExecutor(2)
    print(f"load average {os.getloadavg()} on {os.cpu_count()} CPUs; n = {n:.0e}, "
          f"{args.pairs} interleaved pairs")
    for name, m, v in (
        ("Laplace", dpnoise.Laplace(epsilon=1.0, sensitivity=1.0), xs),
        ("Geometric", dpnoise.Geometric(epsilon=1.0, upper=None), xs.astype(np.int64)),
        ("DiscreteGaussian", dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, upper=None),
         xs.astype(np.int64)),
    ):
        def release(m: object = m, v: np.ndarray = v) -> object:
            return m.release(v, rng=rng)  # type: ignore[attr-defined]

        idle = f", idle {_wait_idle(args.wait_idle):.0%}" if args.wait_idle else ""
        share, bound = parallel_share(release, n, 2)
        ratios, ones, twos, refs = [], [], [], []
        for _ in range(args.pairs):
            os.environ["DPNOISE_THREADS"] = "1"
            ones.append(_t(release))
            os.environ["DPNOISE_THREADS"] = "2"
            twos.append(_t(release))
            ratios.append(ones[-1] / twos[-1])
            serial = _t(lambda: (np.sort(big), np.sort(big)))
            refs.append(serial / _t(lambda: list(pool.map(lambda i: np.sort(big), range(2)))))
        before = resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(10):
            release()
        after = resource.getrusage(resource.RUSAGE_SELF)
        os.environ.pop("DPNOISE_THREADS", None)
        print(f"{name:17s} in chunk jobs {share:.1%} (Amdahl {bound:.2f}x) | 2 threads / 1: "
              f"median {statistics.median(ratios):.2f}x, best {min(ones) / min(twos):.2f}x "
              f"({min(ones) * 1e3:.2f} / {min(twos) * 1e3:.2f} ms) | np.sort reference "
              f"{statistics.median(refs):.2f}x | per release: "
              f"{(after.ru_nvcsw - before.ru_nvcsw) / 10:.1f} voluntary switches, "
              f"{(after.ru_minflt - before.ru_minflt) / 10:.1f} page faults{idle}")
    pool.shutdown()
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
