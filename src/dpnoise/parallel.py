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
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from . import keystream
from .randomness import KeyedRandom, RandomSource

SPLIT_MIN = 1 << 19
SPLIT_CHUNK = 1 << 18

Work = Callable[[RandomSource, int, int], None]
T = TypeVar("T")

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


def _each(count: int, job: Callable[[int], None]) -> None:
    """job(0), ..., job(count - 1) on up to :func:`threads` threads.

    The calling thread and ``threads() - 1`` pool workers each take the next index in turn
    (dynamic: a thread that wakes late or is preempted takes fewer), and the caller waits
    only for jobs a worker has taken -- not for a worker that has not woken yet.  The first
    exception of any job is raised here once every taken job has ended.
    """
    workers = min(threads(), count)
    if workers <= 1:
        for i in range(count):
            job(i)
        return
    indices = iter(range(count))  # next() on it is atomic under the GIL
    ended = threading.Condition()
    state: dict[str, Any] = {"ended": 0, "error": None}
    # the workers reach the job (and through it the release's arrays) only through this
    # list, emptied before returning: a worker that has not finished its own call must not
    # keep an output alive (the next release could not reuse its memory: page faults)
    todo = [job]

    def drain() -> None:
        for i in indices:
            try:
                todo[0](i)
            except BaseException as exc:  # raised by the caller below
                state["error"] = state["error"] or exc
            with ended:
                state["ended"] += 1
                ended.notify_all()

    pool = _pool(workers - 1)
    for _ in range(workers - 1):
        pool.submit(drain)
    drain()  # the calling thread works too
    with ended:
        ended.wait_for(lambda: state["ended"] == count)
    todo.clear()
    if state["error"] is not None:
        raise state["error"]


def chunk_map(n: int, fn: Callable[[int, int], T]) -> list[T]:
    """``[fn(start, stop)]`` over the split's chunks of [0, n) (one call below
    :data:`SPLIT_MIN` or on one thread), computed on up to :func:`threads` threads, in
    chunk order: e.g. the checks of a large release's inputs, which must end before its
    first random word is drawn."""
    if n < SPLIT_MIN or threads() <= 1:
        return [fn(0, n)]
    count = -(-n // SPLIT_CHUNK)
    results: list[Any] = [None] * count

    def job(i: int) -> None:
        s = i * SPLIT_CHUNK
        results[i] = fn(s, min(s + SPLIT_CHUNK, n))

    _each(count, job)
    return results


def extremes(values: NDArray[Any]) -> tuple[Any, Any]:
    """(min, max) of a non-empty array as numpy scalars (NaN propagates), by chunks on the
    split's threads when it is large and contiguous."""
    if not values.flags.c_contiguous:
        return values.min(), values.max()
    flat = values.reshape(-1)
    parts = chunk_map(flat.size, lambda s, e: (flat[s:e].min(), flat[s:e].max()))
    if len(parts) == 1:
        return parts[0]
    both = np.array(parts)
    return both[:, 0].min(), both[:, 1].max()


def run_split(source: RandomSource, n: int, work: Work) -> None:
    """Run ``work(chunk_source, start, stop)`` over [0, n).

    Below :data:`SPLIT_MIN`: one call with ``source`` itself.  Otherwise: one key from
    ``source``, chunk i of SPLIT_CHUNK values on ``KeyedRandom(key, stream=i)``, chunks
    computed by up to :func:`threads` threads (:func:`_each`; results identical for any
    thread count).
    """
    if n < SPLIT_MIN:
        work(source, 0, n)
        return
    key = source.words(4).tobytes()
    which = keystream.gil_free()  # libcrypto when loaded: same words, drawn without the GIL

    def job(i: int) -> None:
        s = i * SPLIT_CHUNK
        work(KeyedRandom(key, stream=i, backend=which), s, min(s + SPLIT_CHUNK, n))

    _each(-(-n // SPLIT_CHUNK), job)
