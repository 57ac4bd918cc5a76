"""A buffered supply of uniform 64-bit words for samplers that consume a random number of them.

Rejection samplers (Bernoulli(exp(−x)), discrete Laplace/Gaussian) ask for many small,
data-dependent batches.  Calling ``rng.words(k)`` for each batch costs an allocation and a
cipher call every time; :class:`WordStream` fills one large buffer with
:func:`~dpnoise.randomness.fill_words` and hands out consecutive, never reused slices.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..randomness import RandomSource, fill_words

_BLOCK = 1 << 16


class WordStream:
    """Consecutive fresh words from ``rng``; each word is handed out exactly once."""

    __slots__ = ("_buf", "_pos", "_rng", "_size")

    def __init__(self, rng: RandomSource, block: int = _BLOCK) -> None:
        self._rng = rng
        self._size = int(block)
        self._buf = np.empty(self._size + 8, dtype=np.uint64)
        self._pos = self._size  # empty: the first take() refills

    @property
    def rng(self) -> RandomSource:
        return self._rng

    def take(self, n: int) -> NDArray[np.uint64]:
        """``n`` fresh words (a view valid until the next call)."""
        if n > self._size:
            return self._rng.words(n)
        if self._pos + n > self._size:
            fill_words(self._rng, self._buf, self._size)
            self._pos = 0
        out = self._buf[self._pos : self._pos + n]
        self._pos += n
        return out
