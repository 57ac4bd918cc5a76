"""Shared helpers for the benchmark scripts: timing and table printing."""

from __future__ import annotations

import time
from collections.abc import Callable


def rate(fn: Callable[[int], object], n: int, *, repeats: int = 3) -> float:
    """Best samples/second over ``repeats`` runs of ``fn(n)`` (after one warm-up run)."""
    fn(min(n, 1000))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(n)
        best = min(best, time.perf_counter() - t0)
    return n / best


def print_table(title: str, rows: list[tuple[str, float]], reference: float, ref_name: str
                ) -> None:
    print(f"\n{title}")
    print(f"{'implementation':58s} {'samples/s':>14s} {'vs ' + ref_name:>12s}")
    for name, r in rows:
        print(f"{name:58s} {r:14,.0f} {r / reference:11.3f}x")
