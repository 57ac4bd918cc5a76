"""A caller's own random source, its answers checked before a sampler reads them.

dpnoise's samplers read 64-bit words from a :class:`~dpnoise.randomness.RandomSource`.  The
package's own sources (the OS-keyed ChaCha20 CSPRNG, keyed and seeded streams) are trusted;
any other object passed as ``rng=`` is wrapped in :class:`CheckedSource` by
:func:`dpnoise.randomness.resolve_rng`, so that a source answering with the wrong type,
shape or length, or stuck at one word, raises a :class:`~dpnoise.errors.ParameterError`
naming ``rng`` instead of a traceback deep in a sampler, a wrong law or a loop that never
ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import ParameterError

#: equal words in a row that mark a caller's source as stuck (:class:`CheckedSource`)
STUCK_RUN = 4


class CheckedSource:
    """A caller's own :class:`~dpnoise.randomness.RandomSource`, its answers checked before a
    sampler reads them.

    ``words(n)`` must return a numpy ``uint64`` array of shape ``(n,)`` (and ``ints(k)``, if
    the source has it, ``k`` Python ints in [0, 2^64)); anything else -- a list, floats,
    too few words, None -- raises :class:`~dpnoise.errors.ParameterError` naming ``rng``
    instead of a traceback deep in a sampler or a wrong law.  A ``fill`` method is used
    as the source's own (it writes into the sampler's buffer).  The same word
    :data:`STUCK_RUN` times in a row (across calls; probability 2^-192 at any place for
    uniform words) is refused as a stuck source: the samplers' rejection loops would never
    end on it.

    Parameters
    ----------
    source : RandomSource
        The caller's source.
    """

    def __init__(self, source: Any) -> None:
        self.source = source
        self._tail = np.empty(0, dtype=np.uint64)  # the last STUCK_RUN - 1 words seen
        if callable(getattr(source, "fill", None)):
            self.fill = self._fill
        if callable(getattr(source, "ints", None)):
            self.ints = self._ints

    def _not_stuck(self, w: NDArray[np.uint64]) -> None:
        """Refuse a run of :data:`STUCK_RUN` equal words (with the previous calls' tail)."""
        run = np.concatenate((self._tail, w))
        same = run[1:] == run[:-1]
        k = STUCK_RUN - 1  # equal neighbours in a row
        if same.size >= k and np.any(np.lib.stride_tricks.sliding_window_view(
                same, k).all(axis=1)):
            raise ParameterError(f"rng returned the same word {STUCK_RUN} times in a row: "
                                 "not a random source (a sampler's rejection loop would "
                                 "never end on it)")
        self._tail = run[-k:].copy()

    def _fill(self, buffer: NDArray[np.uint64], n: int) -> None:
        self.source.fill(buffer, n)  # type: ignore[attr-defined]
        self._not_stuck(buffer[:n])

    def words(self, n: int) -> NDArray[np.uint64]:
        """``source.words(n)``, checked: a numpy uint64 array of shape ``(n,)``."""
        n = int(n)
        w = self.source.words(n)
        if not (isinstance(w, np.ndarray) and w.dtype == np.uint64 and w.shape == (n,)):
            got = (f"dtype {w.dtype}, shape {w.shape}" if isinstance(w, np.ndarray)
                   else type(w).__name__)
            raise ParameterError(f"rng.words({n}) must return a numpy uint64 array of shape "
                                 f"({n},), got {got}")
        self._not_stuck(w)
        return w

    def _ints(self, k: int) -> list[int]:
        out = self.source.ints(k)  # type: ignore[attr-defined]
        if not (isinstance(out, list) and len(out) == k
                and all(type(v) is int and 0 <= v < 1 << 64 for v in out)):
            raise ParameterError(f"rng.ints({k}) must return a list of {k} ints in [0, 2^64)")
        self._not_stuck(np.array(out, dtype=np.uint64))
        return out

    def __repr__(self) -> str:
        return f"CheckedSource({self.source!r})"
