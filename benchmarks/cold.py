"""Cold construction of every mechanism, cell by cell: one row per mechanism x grid point.

    python benchmarks/cold.py [--repeats N] [--only NAME ...]

Each cell constructs the mechanism in fresh interpreters (``import dpnoise`` and the
mechanism's module loaded first -- their cost is the import row of benchmarks/targets.py),
at epsilon in {0.01, 0.1, 1, 5} and sensitivity in {1, 10, 1000} ({1, 2, 16} for the
integer mechanisms); the construction script is the targets table's (``targets._BUILD``).
A cell shows the best wall time of ``--repeats`` processes (cold: nothing cached), the CPU
time of that run, the same construction again in the process (warm: the per-process caches
keyed by public parameters), and pass/fail against the 20 ms target: in wall time (the
target, meant for an idle machine) and in CPU time (what the wall time would be on an idle
core; on a busy machine the wall time also counts the waits for a core).  The machine's load
average is printed at the top and with each mechanism; a cell outside a mechanism's
supported range (ParameterError) says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from targets import _BUILD, _EPSILONS, _INTEGER

TARGET_MS = 20.0
NAMES = ["Laplace", "ClampedLaplace", "TruncatedLaplace", "Gaussian", "AnalyticGaussian",
         "Staircase", "MultivariateStaircase", "RangeLaplace", "RangeLaplace half-line",
         "Geometric", "DiscreteGaussian", "CountNoise", "PlanarLaplace"]


def cell(name: str, eps: float, sens: int, repeats: int) -> tuple[float, float, float] | None:
    """(best cold wall ms, its CPU ms, warm ms) over ``repeats`` fresh processes, or None."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", _BUILD, name, str(eps), str(sens)],
                             env=env, capture_output=True, text=True, check=True)
        got = json.loads(out.stdout)
        if got is None:
            return None
        runs.append(tuple(got))
    return min(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes per cell")
    ap.add_argument("--only", nargs="+", choices=NAMES, help="these mechanisms only")
    args = ap.parse_args()
    one, five, _ = os.getloadavg()
    print(f"load average {one:.2f} (5-minute {five:.2f}) on {os.cpu_count()} cores; "
          f"best of {args.repeats} fresh processes per cell; target <= {TARGET_MS:.0f} ms\n")
    print("| mechanism | epsilon | sensitivity | cold ms | cold CPU ms | warm ms | wall <= 20 ms "
          "| CPU <= 20 ms |")
    print("|---|---|---|---|---|---|---|---|")
    passed = failed = cpu_passed = 0
    for name in args.only or NAMES:
        print(f"| *{name}* (load average {os.getloadavg()[0]:.2f}) |  |  |  |  |  |  |  |",
              flush=True)
        for eps in _EPSILONS:
            for sens in ((1, 2, 16) if name in _INTEGER else (1, 10, 1000)):
                got = cell(name, eps, sens, args.repeats)
                if got is None:
                    print(f"| {name} | {eps:g} | {sens} | outside its range |  |  | -- | -- |")
                    continue
                ok, cpu_ok = got[0] <= TARGET_MS, got[1] <= TARGET_MS
                passed, failed, cpu_passed = passed + ok, failed + (not ok), cpu_passed + cpu_ok
                print(f"| {name} | {eps:g} | {sens} | {got[0]:.1f} | {got[1]:.1f} | "
                      f"{got[2]:.1f} | {'pass' if ok else 'FAIL'} | "
                      f"{'pass' if cpu_ok else 'FAIL'} |", flush=True)
    print(f"\n{passed} of {passed + failed} cells pass in wall time, {cpu_passed} in CPU time "
          f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
