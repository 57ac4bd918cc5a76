"""Small helpers shared by several test modules."""

from __future__ import annotations

import numpy as np

from dpnoise import SeededRandom


class CountingSource:
    """A seeded random source that records how many words were drawn (in ``drawn``)."""

    def __init__(self, seed: int = 0) -> None:
        self.inner = SeededRandom(seed)
        self.drawn = 0

    def words(self, n: int) -> np.ndarray:
        self.drawn += n
        return self.inner.words(n)
