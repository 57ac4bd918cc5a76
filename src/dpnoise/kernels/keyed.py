"""The Python side of ``kernels/keyed.c``: a sampler's keystream and kernel in one call.

A sampler with a compiled chunk kernel loops, per chunk of 2^14-2^15 values, over "draw the
chunk's words, run the kernel on them" -- two foreign calls, and the GIL taken back between
them.  :class:`KeyedRun` hands the whole loop to ``dpk_keyed_run``, which draws the
ChaCha20 keystream itself through the system libcrypto's ``EVP_EncryptUpdate`` (its address
and the stream's cipher context, :meth:`dpnoise.randomness._ChaCha20Stream.direct`) and
calls the kernel through an adapter of one shape: one GIL release per call, so the chunks
of a split release (:mod:`dpnoise.parallel`) run on several cores without waiting for each
other.  The words, their order and so every value are those of the Python loop, which
stays the path for every other source (and :func:`reference_chunks` serves both).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import keystream
from ..randomness import RandomSource, _ChaCha20Stream, direct_stream, fill_words
from . import function, library


@lru_cache(maxsize=1)
def _driver() -> Any:
    """``dpk_keyed_run`` with its ctypes signature, or None (kernels off)."""
    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    return function("dpk_keyed_run", [vp, vp, vp, i64, vp, i64, i64, i64, i64, vp, vp], i64)


@lru_cache(maxsize=1)
def _keystream_fill() -> Any:
    """``dpk_keystream`` with its ctypes signature, or None (kernels off): one foreign call
    for a keystream fill of any size (:meth:`dpnoise.keystream._LibcryptoCipher.into_all`)."""
    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    return function("dpk_keystream", [vp, vp, vp, i64, vp, i64], i64)


keystream.fill_kernel = _keystream_fill


@lru_cache(maxsize=8)
def _address(name: str) -> int | None:
    """The address of the adapter ``name`` in the kernel library, or None."""
    lib = library()
    fn = getattr(lib, name, None) if lib is not None else None
    return None if fn is None else ctypes.cast(fn, ctypes.c_void_p).value


@lru_cache(maxsize=8)
def _adapter(name: str) -> Any:
    """The adapter ``name`` as a ctypes function ``(words, start, c, args) -> int64``, or
    None (kernels off)."""
    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    return function(name, [vp, i64, i64, vp], i64)


def chunk_step(adapter: str, words: NDArray[np.uint64], args: NDArray[np.int64]) -> Any:
    """The adapter ``adapter`` as the per-chunk ``kernel`` of :func:`reference_chunks` for
    a source the C loop cannot key (:func:`keyed_run` gave None): ``step(start, c)`` runs
    the adapter on values [start, start + c) from the c values' words in ``words`` (drawn
    by the Python loop) -- the same call, slots and values as in :class:`KeyedRun` --
    and is True when they are done, False when the numpy reference must recompute them.
    None when the kernels are off."""
    fn = _adapter(adapter)
    if fn is None:
        return None
    p_words, p_args = words.ctypes.data, args.ctypes.data

    # `keep` holds the arrays behind the raw addresses for as long as the step exists
    def step(start: int, c: int, keep: tuple[Any, ...] = (words, args)) -> bool:
        return fn(p_words, start, c, p_args) == 0

    return step


def kernel_args(*values: int | float | None) -> NDArray[np.int64]:
    """The ``args`` slots of an adapter: ints (pointers, shifts, masks) modulo 2^64,
    floats bit for bit, None as 0 (a null pointer)."""
    out = np.zeros(len(values), dtype=np.uint64)
    for i, v in enumerate(values):
        if isinstance(v, float):
            out[i : i + 1].view(np.float64)[0] = v
        elif v is not None:
            out[i] = int(v) % (1 << 64)
    return out.view(np.int64)


class KeyedRun:
    """``run(start, n)``: values [start, n) of a sampler in one GIL-free call.

    Per chunk of c = ``sub`` values (``start`` a multiple of ``sub``): ``per_value * c``
    words of the stream's keystream into ``words``, then the adapter (``kernels/keyed.c``)
    with ``args``.  Returns n, or the start of the chunk whose values the caller must
    compute with its numpy reference: that chunk's words are in ``words`` and the stream
    stands right after them (a sampler's probability-2^-63 event).  Holds the arrays whose
    raw addresses the C code uses.
    """

    def __init__(self, stream: _ChaCha20Stream, handle: tuple[int, int],
                 words: NDArray[np.uint64], per_value: int, sub: int, adapter: int,
                 args: NDArray[np.int64]) -> None:
        self.stream, self.words, self.args = stream, words, args
        self.per_value, self.sub = per_value, sub
        update, ctx = handle
        self._call = (update, ctx, keystream.zeros_address, keystream.BLOCK_BYTES,
                      words.ctypes.data)
        self._tail = (sub, per_value, adapter, args.ctypes.data)

    def __call__(self, start: int, n: int) -> int:
        most = self.per_value * (n - start)
        with self.stream.lock:  # the cipher context is the stream's: one drawer at a time
            if self.stream.room() < most:  # never let compiled code pass the block counter
                self.stream.advance(most)  # raises ParameterError
            stop = _driver()(*self._call, start, n, *self._tail)
            if stop < 0:
                raise RuntimeError("EVP_EncryptUpdate(chacha20) failed")
            drawn = stop - start + (min(self.sub, n - stop) if stop < n else 0)
            self.stream.advance(self.per_value * drawn)
        return int(stop)


def keyed_run(source: RandomSource, words: NDArray[np.uint64], per_value: int, sub: int,
              adapter: str, args: NDArray[np.int64]) -> KeyedRun | None:
    """A :class:`KeyedRun` of the adapter named ``adapter`` on ``source``, or None when
    ``source`` is not a keyed or seeded ChaCha20 stream on libcrypto with nothing
    buffered, or the kernels are off (the caller then runs its Python loop)."""
    stream = direct_stream(source)
    address = _address(adapter)
    if stream is None or address is None or _driver() is None:
        return None
    handle = stream.direct()
    if handle is None:
        return None
    return KeyedRun(stream, handle, words, per_value, sub, address, args)


@lru_cache(maxsize=1)
def _span_driver() -> Any:
    """``dpk_keyed_span`` with its ctypes signature, or None (kernels off).  Loading it
    checks the fused lattice-Laplace loop's own ChaCha20 first (:func:`fused_cipher_ok`)."""
    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    driver = function("dpk_keyed_span", [vp, vp, vp, vp, i64, vp, i64, i64, i64, i64, vp, vp],
                      i64)
    if driver is not None and not fused_cipher_ok():
        fused_loop(False)
    return driver


def fused_loop(on: bool | None = None) -> bool:
    """Whether split releases of the lattice Laplace (``dpk_keyed_block``) draw their
    keystream inside the kernel's loop (``kernels/block_keyed.c``: the same words, AVX-512
    only) rather than through libcrypto then the kernel; ``on`` sets it (tests compare the
    two paths, benchmarks time them).  False when the kernels are off."""
    use = function("dpk_block_keyed_use", [ctypes.c_int64], ctypes.c_int64)
    return bool(use(-1 if on is None else int(on))) if use is not None else False


#: RFC 8439 section 2.3.2's test key and nonce, with block counter 1
_RFC_KEY, _RFC_NONCE = bytes(range(32)), bytes.fromhex("000000090000004a00000000")


def chacha16_blocks(key: bytes, iv: bytes, n: int) -> NDArray[np.uint64] | None:
    """``n`` keystream blocks (a multiple of 16) from the 16-lane ChaCha20 of
    ``kernels/chacha16.h`` for ``key`` and the 16-byte ``iv`` (block counter, nonce), as
    8 words a block; None without the kernels, AVX-512 F, or room below the counter's end."""
    fn = function("dpk_chacha16_blocks", [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64,
                                          ctypes.c_void_p], ctypes.c_int64)
    out = np.empty(8 * max(n, 0), dtype=np.uint64)
    if fn is None or len(key) != 32 or len(iv) != 16 or fn(key, iv, n, out.ctypes.data) != 0:
        return None
    return out


@lru_cache(maxsize=1)
def fused_cipher_ok() -> bool:
    """The 16-lane ChaCha20 against the pure-Python RFC 8439 block function
    (:func:`dpnoise.keystream.chacha20_block`) on the RFC's test key and nonce, blocks 1,
    8, 9 and 16 of one pass (the first and last lane of each half): True when they agree
    (False without AVX-512: the fused loop is then never used)."""
    got = chacha16_blocks(_RFC_KEY, (1).to_bytes(4, "little") + _RFC_NONCE, 16)
    if got is None:
        return False
    raw = got.astype("<u8").tobytes()
    return all(raw[64 * (b - 1) : 64 * b] == keystream.chacha20_block(_RFC_KEY, b, _RFC_NONCE)
               for b in (1, 8, 9, 16))


_LOCAL = threading.local()  # each thread's words buffer for its spans


def _thread_words(size: int) -> NDArray[np.uint64]:
    """This thread's words buffer, at least ``size`` words (kept for its next span)."""
    words = getattr(_LOCAL, "words", None)
    if words is None or words.size < size:
        words = _LOCAL.words = np.empty(size, dtype=np.uint64)
    return words


class CompiledJob:
    """A sampler's compiled chunk body over a whole split release
    (:func:`dpnoise.parallel.run_split`): :meth:`span` computes values [start, end) of one
    keyed chunk in one GIL-free call, keying its own ChaCha20 context in C
    (``dpk_keyed_span``) -- no Python object per chunk, and a span may start inside a chunk
    (the keystream's block counter set to where the chunk's loop would be), so threads can
    share a release in pieces smaller than a chunk with the same words and values.

    ``args`` hold the adapter's slots with the addresses of the WHOLE release's arrays
    (the adapter adds a value's index); ``keep`` holds those arrays alive.
    """

    def __init__(self, adapter: int, args: NDArray[np.int64], per_value: int, sub: int,
                 keep: tuple[Any, ...]) -> None:
        self.per_value, self.sub = per_value, sub
        self._keep = (*keep, args)  # the arrays whose raw addresses the C code uses
        self._tail = (sub, per_value, adapter, args.ctypes.data)
        self._evp = keystream.evp_entry_points()

    def span(self, key: bytes, stream: int, chunk_start: int, start: int, end: int) -> bool:
        """Values [start, end) of chunk ``stream`` (which starts at ``chunk_start``; ``start``
        on its grid of ``sub`` values).  False: a sub-chunk needs the sampler's reference
        (probability about 2^-63 a value) -- the caller then recomputes the whole chunk the
        Python way, whose words and values are these."""
        first_word = self.per_value * (start - chunk_start)
        if (start - chunk_start) % self.sub or first_word % 8:
            raise ValueError("a span starts on the chunk's grid of sub-chunks")
        iv = keystream.iv_for(stream, counter=first_word // 8)  # 8 words a ChaCha20 block
        words = _thread_words(self.per_value * self.sub + 8)
        got = _span_driver()(self._evp, key, iv, keystream.zeros_address, keystream.BLOCK_BYTES,
                             words.ctypes.data, start, end, *self._tail)
        if got < 0:
            raise RuntimeError("EVP_EncryptInit_ex / EVP_EncryptUpdate(chacha20) failed")
        return bool(got == end)


def compiled_job(adapter: str, args: NDArray[np.int64], per_value: int, sub: int,
                 keep: tuple[Any, ...]) -> CompiledJob | None:
    """A :class:`CompiledJob` of the adapter named ``adapter``, or None when the kernels are
    off or the chunks' keystreams do not come from the system libcrypto (the caller's
    per-chunk Python path then runs, with the same words)."""
    address = _address(adapter)
    if (address is None or _span_driver() is None or keystream.gil_free() != "libcrypto"
            or keystream.evp_entry_points() is None):
        return None
    return CompiledJob(address, args, per_value, sub, keep)


def count_args(add: NDArray[np.int64] | None, lower: int | None, upper: int | None
               ) -> tuple[int | None, int, int, int]:
    """The adapter slots (add, lo, hi, mode) of a count release's last step (``add_clamp``
    in keyed.c): the true counts' address (or None), the clamps and which of them apply."""
    mode = (lower is not None) | (upper is not None) << 1
    return (None if add is None else add.ctypes.data, lower or 0, upper or 0, mode)


def add_clamp(out: NDArray[np.int64], add: NDArray[np.int64] | None, lower: int | None,
              upper: int | None) -> None:
    """``out = add + out``, then ``max(out, lower)`` and ``min(out, upper)`` (each when
    given), in place: what keyed.c's adapters do after their kernel, for the chunks the
    Python loop computes."""
    if add is not None:
        np.add(out, add, out=out)
    if lower is not None:
        np.maximum(out, lower, out=out)
    if upper is not None:
        np.minimum(out, upper, out=out)


def reference_chunks(source: RandomSource, words: NDArray[np.uint64], n: int, sub: int,
                     per_value: int, kernel: Any = None,
                     run: KeyedRun | None = None) -> Iterator[tuple[int, int]]:
    """The chunk loop of a sampler with a compiled kernel: yields the (start, c) of the
    chunks of ``sub`` values its numpy reference must compute, their words in ``words``.

    With ``run``: keystream and kernel run in C until a chunk needs the reference.  Else,
    per chunk: ``per_value * c`` words of ``source``, then ``kernel(start, c)`` (True:
    done).  Without either, every chunk is yielded.  The words drawn, and their order, are
    the same every way.
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
