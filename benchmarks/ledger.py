"""The ledger's cost per release, format 3 (rollback journal, ``synchronous=EXTRA``: every
commit durable in the main file) against format 2's WAL journal (``synchronous=FULL``; a
commit could live in the -wal file only), on this machine's file system.

Prints, for each: reserve + complete per second (one process, 300 releases), the median
reservation after 1000 releases (with a second writer, so each reservation also verifies
the other's events), and the time to open (verify) a 2001-event ledger.  The machine's load
is printed with the figures: they are fsync-bound and vary with the disk and its load.

    python benchmarks/ledger.py
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpnoise.session import Budget, Ledger

KW: dict[str, Any] = dict(query="count", canonical="count", query_key="k", dataset="d",
                          mechanism="m", parameters={}, guarantee={})


def _as_format_2(led: Ledger) -> None:
    """The journal format 2 ran with (for comparison only)."""
    led._con.execute("PRAGMA journal_mode=WAL")
    led._con.execute("PRAGMA synchronous=FULL")


def _measure(tmp: Path, wal: bool) -> dict[str, float]:
    p = tmp / ("wal.sqlite" if wal else "delete.sqlite")
    led = Ledger(p, budget=Budget(1e6), create=True)
    other = Ledger(p)  # a second writer (opened before the WAL switch, which it refuses)
    if wal:
        _as_format_2(led)
        _as_format_2(other)
    n = 300
    t = time.perf_counter()
    for i in range(n):
        led.complete(led.reserve(epsilon=1.0, delta=0, **KW), np.array([i]))
    per_s = n / (time.perf_counter() - t)
    sync = led._con.execute("PRAGMA synchronous").fetchone()[0]
    led._con.execute("PRAGMA synchronous=OFF")  # build the rest fast
    for i in range(n, 1000):
        led.complete(led.reserve(epsilon=1.0, delta=0, **KW), np.array([i]))
    led._con.execute(f"PRAGMA synchronous={sync}")
    times = []
    for _ in range(30):
        other.reserve(epsilon=1.0, delta=0, **KW)
        t = time.perf_counter()
        led.reserve(epsilon=1.0, delta=0, **KW)
        times.append(time.perf_counter() - t)
    other.close()
    led.close()
    t = time.perf_counter()  # (a WAL file is switched back to DELETE by this open)
    Ledger(p).close()
    return {"releases_per_s": per_s, "reserve_ms": 1e3 * statistics.median(times),
            "open_ms": 1e3 * (time.perf_counter() - t)}


def main() -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores, load average {load}")
    with tempfile.TemporaryDirectory(prefix="dpnoise-ledger-bench-") as d:
        tmp = Path(d)
        new, old = _measure(tmp, wal=False), _measure(tmp, wal=True)
    print(f"{'':38s}{'format 3 (DELETE, EXTRA)':>26s}{'WAL, FULL (format 2)':>24s}")
    for key, label in (("releases_per_s", "reserve + complete per second"),
                       ("reserve_ms", "reservation after 1000 releases (ms)"),
                       ("open_ms", "open and verify 2000+ events (ms)")):
        print(f"{label:38s}{new[key]:26.1f}{old[key]:24.1f}   ratio {new[key] / old[key]:.2f}")


if __name__ == "__main__":
    main()
