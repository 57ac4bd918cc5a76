"""Small helpers shared by several test modules."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpnoise import Budget, SeededRandom, Session


class CountingSource:
    """A seeded random source that records how many words were drawn (in ``drawn``)."""

    def __init__(self, seed: int = 0) -> None:
        self.inner = SeededRandom(seed)
        self.drawn = 0

    def words(self, n: int) -> np.ndarray:
        self.drawn += n
        return self.inner.words(n)


def assert_removal_within_plan(q: Any, plans: dict[str, Any], full: dict[str, Any],
                               data: dict[str, np.ndarray], keep: np.ndarray,
                               schema: dict[str, Any], where: tuple[Any, ...]) -> None:
    """Keeping only the rows ``keep`` moves the primitives of ``q`` by no more than the
    calibrated bound: loss <= Σ_i ceil(diff_i / sens)·cell_eps must be <= the role's epsilon
    (the loss the triangle inequality charges)."""
    s2 = Session({k: v[keep] for k, v in data.items()}, Budget(1.0), schema=schema)
    part = s2.true_components(q)
    for role, p in plans.items():
        diff = np.abs(np.asarray(full[role], float) - np.asarray(part[role], float))
        steps = np.ceil(diff / p.spec.sensitivity - 1e-12).sum()
        assert steps * p.spec.epsilon <= p.epsilon * (1 + 1e-12), (*where, role, diff)
