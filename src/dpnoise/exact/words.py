"""Uniform 64-bit words: a buffered supply, and exact multiply-high index draws.

:func:`mulhi64` maps a word w to the index floor(w·n/2^64) of [0, n); each index u has
the exactly known probability :func:`index_probability` (⌊2^64/n⌋ or ⌈2^64/n⌉ over 2^64).


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


_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def mulhi64(w: NDArray[np.uint64], n: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """floor(w·n / 2^64) exactly, elementwise (32-bit limbs, no overflow)."""
    wh, wl = w >> _S32, w & _M32
    nh, nl = n >> _S32, n & _M32
    ll, lh, hl, hh = wl * nl, wl * nh, wh * nl, wh * nh
    mid = (ll >> _S32) + (lh & _M32) + (hl & _M32)
    return hh + (lh >> _S32) + (hl >> _S32) + (mid >> _S32)


def index_probability(u: NDArray[np.int64], n: NDArray[np.int64]) -> NDArray[np.float64]:
    """P(mulhi64(word, n) = u) = (⌈(u+1)2^64/n⌉ − ⌈u·2^64/n⌉)/2^64, exactly then rounded.

    With 2^64 = q·n + rem: count = q + ⌈(u+1)rem/n⌉ − ⌈u·rem/n⌉ (u·rem < n² <= 2^64 ...
    computed in Python integers for safety; vectorised via numpy object arrays).
    """
    u = np.asarray(u, dtype=object)
    n = np.asarray(n, dtype=object)
    two64 = 1 << 64
    q, rem = two64 // n, two64 % n
    up = -((-(u + 1) * rem) // n)
    lo = -((-u * rem) // n)
    cnt = q + up - lo
    return (cnt / float(two64)).astype(np.float64) if cnt.ndim else np.float64(cnt / two64)
