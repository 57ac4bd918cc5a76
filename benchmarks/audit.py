"""Black-box audit of Laplace samplers: dpnoise vs numpy and peers (x = 0 vs 1, eps = 1).

    python benchmarks/audit.py [--quick]

Prints each sampler's verdict, the 99.9% lower confidence bound on its privacy loss, the
strongest event found, and the audit time.  Peers that are not importable are skipped.
"""

from __future__ import annotations

import argparse
import time

from dpnoise.audit import audit
from dpnoise.audit_targets import TARGETS, TargetUnavailableError, build_target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 5_000 if args.quick else 20_000
    print(f"audit: {n:,} explore + {n:,} test samples per input; exact support test on "
          "2,000 outputs where an oracle exists")
    print(f"{'target':<22} {'verdict':<8} {'claimed':>8} {'eps >= (99.9%)':>15} "
          f"{'support leak':>13} {'time s':>7}  strongest event")
    for name in TARGETS:
        try:
            t = build_target(name, seed=1)
        except TargetUnavailableError as exc:
            print(f"{name:<22} skipped: {exc}")
            continue
        t0 = time.perf_counter()
        rep = audit(t.sampler, t.x, t.x_prime, claimed_epsilon=t.claimed_epsilon, n=n,
                    support=t.support)
        dt = time.perf_counter() - t0
        sup = (f"{rep.support_impossible}/{rep.support_checked}" if rep.support_checked
               else "-")
        ev = rep.best_event.event if rep.best_event else "-"
        print(f"{name:<22} {'PASS' if rep.passed else 'FAIL':<8} {t.claimed_epsilon:>8.4g} "
              f"{rep.epsilon_lower_bound:>15.4g} {sup:>13} {dt:>7.2f}  {ev}")


if __name__ == "__main__":
    main()
