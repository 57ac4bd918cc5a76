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

import ctypes
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from . import keystream
from .randomness import KeyedRandom, RandomSource, direct_stream, fill_words

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
    """job(0), ..., job(count - 1) on up to :func:`threads` threads: the calling thread and
    pool workers each take the next index in turn (dynamic, so a late or slow thread just
    takes fewer); a worker's exception is raised here after all jobs have ended."""
    workers = min(threads(), count)
    if workers <= 1:
        for i in range(count):
            job(i)
        return
    indices = iter(range(count))  # next() on it is atomic under the GIL

    def drain() -> None:
        for i in indices:
            job(i)

    helpers = [_pool(workers - 1).submit(drain) for _ in range(workers - 1)]
    try:
        drain()  # the calling thread works too
    finally:
        for h in helpers:
            h.exception()  # wait: no job may still run when this returns
    for h in helpers:
        h.result()  # re-raises a worker's exception


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
    flat = values.reshape(-1) if values.flags.c_contiguous else None
    if flat is None or flat.size < SPLIT_MIN or threads() <= 1:
        return values.min(), values.max()
    parts = np.array(chunk_map(flat.size, lambda s, e: (flat[s:e].min(), flat[s:e].max())))
    return parts[:, 0].min(), parts[:, 1].max()


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


@lru_cache(maxsize=1)
def _driver() -> Any:
    """``dpk_keyed_run`` (kernels/keyed.c) with its ctypes signature, or None (kernels off)."""
    from . import kernels

    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    return kernels.function("dpk_keyed_run", [vp, vp, vp, i64, vp, i64, i64, i64, i64, vp, vp],
                            i64)


@lru_cache(maxsize=8)
def _kernel_address(name: str) -> int | None:
    from . import kernels

    lib = kernels.library()
    fn = getattr(lib, name, None) if lib is not None else None
    return None if fn is None else ctypes.cast(fn, ctypes.c_void_p).value


def kernel_args(*values: int | float | None) -> NDArray[np.int64]:
    """The ``args`` slots of a keyed kernel: ints (pointers, shifts, masks) modulo 2^64,
    floats bit for bit, None as 0 (a null pointer)."""
    out = np.zeros(len(values), dtype=np.uint64)
    for i, v in enumerate(values):
        if isinstance(v, float):
            out[i : i + 1].view(np.float64)[0] = v
        elif v is not None:
            out[i] = int(v) % (1 << 64)
    return out.view(np.int64)


def keyed_runner(source: RandomSource, words: NDArray[np.uint64], per_value: int, sub: int,
                 kernel: str, args: NDArray[np.int64]) -> Callable[[int, int], int] | None:
    """Keystream and compiled kernel in one GIL-free call (``dpk_keyed_run``), or None.

    The returned ``run(start, n)`` does, without the GIL, what a sampler's Python loop
    does for values [start, n) in chunks of ``sub`` (``start`` a multiple of it): per chunk
    of c values, ``per_value * c`` words of ``source``'s keystream into ``words``, then the
    adapter ``kernel`` (kernels/keyed.c) with ``args`` on them.  It returns n, or the start
    of the chunk whose values the caller must compute with its numpy reference -- that
    chunk's words are in ``words`` and the stream stands right after them (the sampler's
    probability-2^-63 event).  The same words in the same order as the Python loop, so the
    same values; None when ``source`` is not a keyed or seeded ChaCha20 stream on libcrypto
    with nothing buffered, or the kernels are off (the caller then runs its Python loop).
    """
    stream = direct_stream(source)
    driver, address = _driver(), _kernel_address(kernel)
    if stream is None or driver is None or address is None:
        return None
    handle = stream.direct()
    if handle is None:
        return None
    update, ctx = handle
    p_words, p_args = words.ctypes.data, args.ctypes.data
    zeros, block = keystream.zeros_address, keystream.BLOCK_BYTES

    def run(start: int, n: int, keep: tuple[Any, ...] = (words, args)) -> int:
        # ``keep``: the closure must hold the arrays whose raw addresses C uses
        most = per_value * (n - start)
        if stream.room() < most:  # never let compiled code pass the 32-bit block counter
            stream.advance(most)  # raises ParameterError
        stop = driver(update, ctx, zeros, block, p_words, start, n, sub, per_value, address,
                      p_args)
        if stop < 0:
            raise RuntimeError("EVP_EncryptUpdate(chacha20) failed")
        stream.advance(per_value * (stop - start + (min(sub, n - stop) if stop < n else 0)))
        return stop

    return run


def reference_chunks(source: RandomSource, words: NDArray[np.uint64], n: int, sub: int,
                     per_value: int, kernel: Callable[[int, int], bool] | None = None,
                     run: Callable[[int, int], int] | None = None) -> Iterator[tuple[int, int]]:
    """The chunk loop of a sampler with a compiled kernel: yields the (start, c) of the
    chunks of ``sub`` values its numpy reference must compute, their words in ``words``.

    With ``run`` (from :func:`keyed_runner`): the keystream and the kernel run in C until a
    chunk needs the reference.  Else, per chunk: ``per_value * c`` words of ``source``,
    then ``kernel(start, c)`` (True: done).  Without either, every chunk is yielded.  The
    words drawn, and their order, are the same every way.
    """
    start = 0
    while start < n:
        if run is not None:
            start = run(start, n)
            if start >= n:
                return
            c = min(sub, n - start)
        else:
            c = min(sub, n - start)
            fill_words(source, words, per_value * c)
            if kernel is not None and kernel(start, c):
                start += c
                continue
        yield start, c
        start += c
