"""Large releases cut into independent keystream chunks; threads on request.

A release of n >= :data:`SPLIT_MIN` values draws one 256-bit key from the caller's source
(four words) and cuts the work into chunks of :data:`SPLIT_CHUNK` values; chunk i is
sampled from the ChaCha20 keystream (that key, stream i) -- independent keystreams
(D. J. Bernstein, "ChaCha, a variant of Salsa20", SASC 2008; nonce use as in RFC 8439,
Section 2.3).  Chunks are split by *index*, not by thread, so a seeded release gives the
same values on one core or many; threads only decide who computes which chunk.

Threads: a chunk body that is a compiled kernel (:mod:`dpnoise.kernels`; ctypes releases
the GIL for the whole call) runs on every core by default; a numpy chunk body runs on one
thread unless ``DPNOISE_THREADS`` asks for more (same outputs either way).  Why (measured;
README "Performance", "Threads"): the numpy kernels are ~30 passes over cache-sized blocks,
each of which releases the GIL for only a few microseconds, so two threads spend their time
handing the GIL to each other (a "convoy") and ran *slower* than one on this project's
2-core machine (0.7-0.85x).  With threads, the chunks' keystreams come from the system
libcrypto through ctypes, which releases the GIL (:mod:`dpnoise.keystream`; the same words
as the ``cryptography`` package, which holds it).  ``DPNOISE_THREADS=1`` turns threads off.
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


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def threads(gil_free: bool = False) -> int:
    """Threads for a split release: ``DPNOISE_THREADS`` if set; else every core for a
    GIL-free (compiled-kernel) chunk body and 1 for a numpy one (numpy's short passes
    convoy on the GIL: two threads ran slower than one)."""
    env = os.environ.get("DPNOISE_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    return cores() if gil_free else 1


def _pool(workers: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_PID
    if _POOL is None or os.getpid() != _POOL_PID or _POOL._max_workers < workers:
        _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpnoise")
        _POOL_PID = os.getpid()
    return _POOL


def run_split(source: RandomSource, n: int, work: Work, *, gil_free: bool = False) -> None:
    """Run ``work(chunk_source, start, stop)`` over [0, n).

    Below :data:`SPLIT_MIN`: one call with ``source`` itself.  Otherwise: one key from
    ``source``, chunk i of SPLIT_CHUNK values on ``KeyedRandom(key, stream=i)``, chunks
    computed by up to :func:`threads` threads (results identical for any thread count).
    ``gil_free``: the chunk body is a compiled kernel that releases the GIL (threads by
    default on every core; otherwise only when ``DPNOISE_THREADS`` asks).
    """
    if n < SPLIT_MIN:
        work(source, 0, n)
        return
    key = source.words(4).tobytes()
    bounds = [(i, s, min(s + SPLIT_CHUNK, n)) for i, s in enumerate(range(0, n, SPLIT_CHUNK))]

    workers = min(threads(gil_free), len(bounds))
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
