"""Large releases cut into independent keystream chunks; threads on request.

A release of n >= :data:`SPLIT_MIN` values draws one 256-bit key from the caller's source
(four words) and cuts the work into chunks of :data:`SPLIT_CHUNK` values; chunk i is
sampled from the ChaCha20 keystream (that key, stream i) -- independent keystreams
(D. J. Bernstein, "ChaCha, a variant of Salsa20", SASC 2008; nonce use as in RFC 8439,
Section 2.3).  Chunks are split by *index*, not by thread, so a seeded release gives the
same values on one core or many; threads only decide who computes which chunk.

Threads are off unless ``DPNOISE_THREADS`` asks for more than one (same outputs either
way).  With the compiled kernels (:mod:`dpnoise.kernels`; ctypes releases the GIL for the
whole call) a chunk runs without the GIL except for a few Python statements per 2^14
values, and the keystream comes from the system libcrypto through ctypes (GIL released;
:mod:`dpnoise.keystream`).  Measured on this project's 2-vCPU machine (docs/performance.md):
the kernel alone scales 1.64-1.85x on two threads, the ChaCha20 keystream alone 1.0-1.56x,
a whole 10^6-value Laplace release 0.93-1.46x depending on the run (Geometric and
DiscreteGaussian, whose kernels take ~1-3 ns a value, 0.85-1.21x) -- not a reliable gain,
so threads stay opt-in.  (Without the kernels, ~30 numpy passes per chunk convoy on the
GIL: 0.7-0.85x.)
Releases below :data:`SPLIT_MIN` values read the caller's
source directly.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from . import keystream
from .randomness import KeyedRandom, RandomSource

SPLIT_MIN = 1 << 19
SPLIT_CHUNK = 1 << 18

Work = Callable[[RandomSource, int, int], None]

_POOL: ThreadPoolExecutor | None = None
_POOL_PID = -1


def threads() -> int:
    """Threads for a split release: ``DPNOISE_THREADS`` (default 1, i.e. no threads)."""
    env = os.environ.get("DPNOISE_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    return 1


def _pool(workers: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_PID
    if _POOL is None or os.getpid() != _POOL_PID or _POOL._max_workers < workers:
        _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpnoise")
        _POOL_PID = os.getpid()
    return _POOL


def run_split(source: RandomSource, n: int, work: Work) -> None:
    """Run ``work(chunk_source, start, stop)`` over [0, n).

    Below :data:`SPLIT_MIN`: one call with ``source`` itself.  Otherwise: one key from
    ``source``, chunk i of SPLIT_CHUNK values on ``KeyedRandom(key, stream=i)``, chunks
    computed by up to :func:`threads` threads (results identical for any thread count).
    """
    if n < SPLIT_MIN:
        work(source, 0, n)
        return
    key = source.words(4).tobytes()
    bounds = [(i, s, min(s + SPLIT_CHUNK, n)) for i, s in enumerate(range(0, n, SPLIT_CHUNK))]

    workers = min(threads(), len(bounds))
    which = keystream.gil_free() if workers > 1 else None  # same words either way

    def job(b: tuple[int, int, int]) -> None:
        i, s, e = b
        work(KeyedRandom(key, stream=i, backend=which), s, e)

    if workers <= 1:
        for b in bounds:
            job(b)
        return
    for _ in _pool(workers).map(job, bounds):
        pass
