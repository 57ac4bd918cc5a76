"""Large releases cut into independent keystream chunks; threads on request.

A release of n >= :data:`SPLIT_MIN` values draws one 256-bit key from the caller's source
(four words) and cuts the work into chunks of :data:`SPLIT_CHUNK` values; chunk i is
sampled from the ChaCha20 keystream (that key, stream i) -- independent keystreams
(D. J. Bernstein, "ChaCha, a variant of Salsa20", SASC 2008; nonce use as in RFC 8439,
Section 2.3).  Chunks are split by *index*, not by thread, so a seeded release gives the
same values on one core or many; threads only decide who computes which chunk.
Releases below :data:`SPLIT_MIN` values read the caller's source directly.

Threads are off unless ``DPNOISE_THREADS`` asks for more than one (same outputs either
way).  They share the whole release, not only the draws:

* the input checks of a large release (:func:`extremes`, the minimum and maximum behind the
  finiteness, domain and grid checks) run by chunks through :func:`chunk_map`, and all end
  before :func:`run_split` draws the key -- the release's first random word;
* every per-value step runs in the chunk jobs, each writing into its slice of the
  preallocated output (counts are added and clamped there by the sampler:
  :func:`dpnoise.mechanisms.integers.split_clamped_release`);
* with the compiled kernels and the system libcrypto a job is ONE foreign call, so one GIL
  release: ``kernels/keyed.c`` (:mod:`dpnoise.kernels.keyed`) draws the chunk's keystream
  through libcrypto's ``EVP_EncryptUpdate`` and runs the sampler's kernel on it, the same
  words in the same order as the Python loop (two calls per 2^14 values) it replaces;
  chunk keystreams therefore come from libcrypto whatever the thread count (the same bytes
  as the ``cryptography`` package: :mod:`dpnoise.keystream`);
* a sampler with a compiled body hands :func:`run_split` its *compiled spans*
  (:class:`dpnoise.kernels.keyed.CompiledJob`): each span keys its own ChaCha20 context in
  C, with the block counter at its first word, so no Python object is made per chunk and a
  span may start inside a chunk -- one thread takes whole chunks, several take pieces of
  :data:`SPLIT_SPAN` values (10^6 values: 16 pieces instead of 3.8 chunks to share); a
  span that meets the sampler's probability-2^-63 event stops, and its chunk is recomputed
  by the per-chunk path afterwards (the same words and values);
* the calling thread and ``DPNOISE_THREADS - 1`` pool workers take the next chunk (or
  piece) index in turn (:func:`_each`); the caller waits only for jobs a worker has taken,
  and workers let go of the release's arrays before it returns.

What stays serial is the output's allocation, the key and the input checks' Python: a
10^6-value release spends about 96-97 % of its one-thread CPU time in the chunk jobs
(``benchmarks/targets.py`` prints the share next to each two-thread row), an Amdahl bound
of about 1.85x on two threads.  What the threads cannot share is memory bandwidth: the
input is read twice (checks, then kernel) and the output written once, and on this
project's shared 2-vCPU machine a GIL-free ``np.sort`` on two threads gains only about
1.5x, so threads stay opt-in (docs/performance.md, "Threads").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from . import keystream
from .randomness import KeyedRandom, RandomSource

SPLIT_MIN = 1 << 19
SPLIT_CHUNK = 1 << 18
#: the piece of a chunk one thread computes when several share a release (compiled spans):
#: a multiple of every sampler's sub-chunk, so a piece starts where the chunk's loop would
SPLIT_SPAN = 1 << 16

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


class CompiledSpans(Protocol):
    """A sampler's compiled body over a whole split release
    (:class:`dpnoise.kernels.keyed.CompiledJob`)."""

    def span(self, key: bytes, stream: int, chunk_start: int, start: int, end: int) -> bool:
        """Values [start, end) of chunk ``stream``; False: recompute the chunk with work."""
        ...


def run_split(source: RandomSource, n: int, work: Work,
              compiled: CompiledSpans | None = None) -> None:
    """Run ``work(chunk_source, start, stop)`` over [0, n).

    Below :data:`SPLIT_MIN`: one call with ``source`` itself.  Otherwise: one key from
    ``source``, chunk i of SPLIT_CHUNK values on ``KeyedRandom(key, stream=i)``, chunks
    computed by up to :func:`threads` threads (:func:`_each`; results identical for any
    thread count).  With ``compiled`` (and libcrypto) the chunks run as compiled spans
    instead -- whole chunks on one thread, pieces of :data:`SPLIT_SPAN` values on several
    (finer pieces balance the threads) -- each one GIL-free call with no Python object
    per chunk; a chunk whose span asked for the sampler's reference is recomputed by
    ``work`` afterwards (its words and values are the same).
    """
    if n < SPLIT_MIN:
        work(source, 0, n)
        return
    key = source.words(4).tobytes()
    which = keystream.gil_free()  # libcrypto when loaded: same words, drawn without the GIL
    count = -(-n // SPLIT_CHUNK)

    def job(i: int) -> None:
        s = i * SPLIT_CHUNK
        work(KeyedRandom(key, stream=i, backend=which), s, min(s + SPLIT_CHUNK, n))

    if compiled is None:
        _each(count, job)
        return
    size = SPLIT_CHUNK if threads() <= 1 else SPLIT_SPAN
    spans = [(s // SPLIT_CHUNK, s) for s in range(0, n, size)]
    redo: set[int] = set()

    def piece(k: int) -> None:
        i, s = spans[k]
        if not compiled.span(key, i, i * SPLIT_CHUNK, s, min(s + size, n)):
            redo.add(i)

    _each(len(spans), piece)
    for i in sorted(redo):  # probability about 2^-45 a chunk: its reference draws more words
        job(i)
