"""Composing 1000 + 1 releases under the "pld" accountant (target < 50 ms).

    python benchmarks/reserve_after_1000.py [--ledger-n N]

* **in memory**: the state of 1000 lattice Laplace(scale 96) releases, then one more
  release composed onto it (``Accountant.compose``, the ledger's incremental step) and the
  ``fits`` test -- best and median of 7 (wall clock), and the best CPU time of the process
  (``time.process_time``: what the step costs when the machine is shared);
* **ledger file**: ``Ledger.reserve`` after N reservations (transaction, compose from the
  cached state, fits, the reserve event, the new cached state, fsync) -- best and median
  of 3.

Prints the machine's load (os.getloadavg()) before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from dpnoise import Laplace
from dpnoise.accounting import AccountingBudget, get_accountant


def in_memory() -> tuple[float, float, float, int]:
    acc = get_accountant("pld")
    charge = acc.charge_for(Laplace(epsilon=1 / 96, sensitivity=1.0))
    state = acc.compose_many(acc.empty(), charge, 1000)
    times, cpu = [], []
    for _ in range(7):
        t, c = time.perf_counter(), time.process_time()
        nxt = acc.compose(state, charge)
        acc.fits(nxt, AccountingBudget(2.0, 1e-6))
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return min(times), statistics.median(times), min(cpu), state.pld.masses.size


def ledger_file(n: int) -> tuple[float, float, float]:
    """Reserving one more in a ledger FILE after ``n`` (the accounting benchmark's timing):
    (best, median, the n's seconds)."""
    from accounting import time_ledger_reserve  # benchmarks/accounting.py

    times, build, _opened, _spent = time_ledger_reserve(n)
    return min(times), statistics.median(times), build


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ledger-n", type=int, default=1000, help="reservations before (0: skip)")
    args = ap.parse_args()
    print("load (1, 5, 15 min) before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    best, med, cpu, size = in_memory()
    print(f"in memory: compose one more after 1000 + fits: best {1000 * best:.1f} ms, median "
          f"{1000 * med:.1f} ms wall; best {1000 * cpu:.1f} ms CPU time of this process "
          f"(target < 50 ms; state {size} grid points)")
    if args.ledger_n:
        best, med, build = ledger_file(args.ledger_n)
        print(f"ledger file: reserve one more after {args.ledger_n} ({build:.0f} s to build): "
              f"best {1000 * best:.1f} ms, median {1000 * med:.1f} ms")
    print("load (1, 5, 15 min) after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
