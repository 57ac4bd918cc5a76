"""Sources of random bits.

Every mechanism draws its randomness as 64-bit words from a :class:`RandomSource`
passed explicitly (``rng=``).  The default is :class:`CryptoRandom`: a ChaCha20
keystream (OpenSSL through the ``cryptography`` package, or the system libcrypto through
ctypes, which releases the GIL -- the same bytes, see :mod:`dpnoise.keystream`) keyed
with 256 bits from ``os.urandom``.  It is produced in cache-sized blocks into a numpy
buffer, which is several times faster than ``os.urandom`` itself and than numpy's own
Laplace sampler.  One-value releases take their few words as Python ints from a buffer of
up to 256 keystream words (:func:`word_ints`); array requests drain that buffer first, so
each word is used once and in keystream order whatever mix of calls consumes the stream.

* ``rng=None`` uses :func:`default_source`: one :class:`CryptoRandom` per thread and per
  process, keyed from ``os.urandom`` when the thread first needs it (no seed anywhere, no
  state shared between threads).  Keying a ChaCha20 cipher costs about 6 us, more than a
  whole one-value release, so the key is kept for the thread's later releases; each
  ``CryptoRandom()`` made explicitly has its own key.
* Fork safety: a forked child never replays its parent's stream.  Every
  ``CryptoRandom`` notices that it runs in a new process (``os.getpid()`` changed) and
  rekeys from ``os.urandom`` before producing a word, and ``os.register_at_fork`` drops
  the per-thread default sources in the child.
* Counter safety: ChaCha20's block counter has 32 bits (RFC 8439 Section 2.3), so one
  key and nonce give at most 2^32 blocks of 64 bytes (2^35 words).  A ``CryptoRandom``
  counts the words it hands out and rekeys from ``os.urandom`` before that limit
  (:data:`REKEY_WORDS`); the keyed and seeded sources, which cannot rekey without changing
  their stream, refuse to go past it.
* :class:`SeededRandom` is the same ChaCha20 generator keyed from a user seed via
  SHA-256: reproducible experiments and tests, never a default.
* A ``numpy.random.Generator`` is accepted too (wrapped in :class:`NumpyRandom`), for
  tests and simulations only: it is not cryptographically secure.

Where random bits are handled -- one protocol, one job per module: this module holds the
protocol (:class:`RandomSource`: ``words``, ``fill``, and the Python-int path
:func:`word_ints`) and every source; :mod:`dpnoise.keystream` is only the ChaCha20 cipher
behind the sources; :mod:`dpnoise.parallel` cuts one source into independently keyed chunks
for large releases (and :mod:`dpnoise.kernels.keyed` lets compiled code draw such a keyed
stream's next words itself: :meth:`_ChaCha20Stream.direct`, the same words); words become
integers of a distribution only in :mod:`dpnoise.exact` (:mod:`dpnoise.exact.words`: the
buffered :class:`~dpnoise.exact.words.WordStream` and the
exact multiply-high index map).  No mechanism reads randomness any other way.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from .checked_source import CheckedSource
from .errors import ParameterError
from .keystream import BLOCK_BYTES, new_cipher

_INT_BLOCK = 256  # largest refill (words) of the Python-int buffer of one-value releases

#: Words one ChaCha20 key and nonce may produce: 2^32 blocks of 8 words (RFC 8439's 32-bit
#: block counter), less a margin of 2^20 words for the buffered refills of one-value calls.
REKEY_WORDS = (1 << 35) - (1 << 20)


@runtime_checkable
class RandomSource(Protocol):
    """Anything that returns independent uniform 64-bit words."""

    def words(self, n: int) -> NDArray[np.uint64]:
        """``n`` independent uniform words in [0, 2^64).

        Parameters
        ----------
        n : int
            How many words.

        Returns
        -------
        numpy.ndarray of uint64
            ``n`` independent uniform words in [0, 2^64).
        """
        ...


def fill_words(source: RandomSource, buffer: NDArray[np.uint64], n: int) -> None:
    """Write ``n`` fresh words into ``buffer[:n]`` (``buffer`` needs 8 spare words).

    Sources with a ``fill`` method (the ChaCha20 ones) write in place without a copy.
    """
    fill = getattr(source, "fill", None)
    if fill is not None:
        fill(buffer, n)
    else:
        buffer[:n] = source.words(n)


class _ChaCha20Stream:
    """ChaCha20 keystream turned into uint64 words, produced block by block.

    The cipher comes from :mod:`dpnoise.keystream` (the system libcrypto through ctypes,
    which releases the GIL, or the ``cryptography`` package; same bytes either way).
    """

    def __init__(self, key: bytes, stream: int = 0, backend: str | None = None) -> None:
        if len(key) != 32:
            raise ParameterError("ChaCha20 key must be 32 bytes")
        # 32-bit block counter 0, then a 96-bit nonce holding the stream index: one key gives
        # 2^64 independent keystreams (RFC 8439 Section 2.3), e.g. one per chunk of a release
        self._cipher = new_cipher(key, stream, backend)
        self._scratch: NDArray[np.uint8] | None = None  # allocated on the first words()
        # words already taken from the keystream as Python ints, handed out by ints() and
        # drained first by fill()/words(): every word is used once, in keystream order
        self._ints: list[int] = []
        self._ipos = 0
        self._int_block = 8
        # keystream words taken from the cipher so far (the counter-wrap guard)
        self.taken = 0
        # one source shared by threads must never hand the same word out twice: every draw
        # from the cipher or the buffer holds this lock (a cipher context is not thread-safe:
        # two threads in EVP_EncryptUpdate at once produce the same keystream bytes)
        self.lock = threading.Lock()

    @property
    def backend(self) -> str:
        return str(self._cipher.name)

    def _count(self, words: int) -> None:
        """Account for ``words`` more keystream words; refuse to pass the counter's end."""
        self.taken += words
        if self.taken > REKEY_WORDS:
            raise ParameterError(
                "a ChaCha20 stream may give at most 2^35 - 2^20 words (its 32-bit block "
                "counter would wrap); use a fresh key or stream index"
            )

    def _into_all(self, raw: NDArray[np.uint8], m: int) -> bool:
        """m keystream bytes in one foreign call when the cipher can (see
        :meth:`dpnoise.keystream._LibcryptoCipher.into_all`); False: the caller loops."""
        into_all = getattr(self._cipher, "into_all", None)
        return into_all is not None and into_all(raw, m)

    def room(self) -> int:
        """Words this stream can still take from its cipher before the counter limit."""
        return REKEY_WORDS - self.taken

    def direct(self) -> tuple[int, int] | None:
        """(address of ``EVP_EncryptUpdate``, cipher context) for compiled code that draws
        this stream's next words itself; None unless the cipher is libcrypto's and no word
        is buffered for the one-value path.  Such code checks :meth:`room` first and
        reports the words it drew with :meth:`advance`."""
        handle = getattr(self._cipher, "c_handle", None)
        if handle is None or self._ipos < len(self._ints):
            return None
        return handle()

    def advance(self, words: int) -> None:
        """Count ``words`` drawn from the cipher by compiled code (see :meth:`direct`);
        refuses, as any draw does, to pass the counter's end."""
        self._count(words)

    def _drain(self, out: NDArray[np.uint64], n: int) -> int:
        """Move up to n buffered words into out[:m]; returns m (the caller holds the lock)."""
        p = self._ipos
        if p >= len(self._ints):  # nothing buffered (the array-only case)
            return 0
        m = min(n, len(self._ints) - p)
        self._ipos = p + m
        out[:m] = self._ints[p : p + m]
        return m

    def ints(self, k: int) -> list[int]:
        """The next ``k`` words as Python ints: one cipher call per _INT_BLOCK words, so a
        one-value release pays neither a cipher call nor numpy machinery per draw."""
        with self.lock:
            p = self._ipos
            q = p + k
            if q > len(self._ints):
                # refills double from 8 words (one ChaCha20 block: a fresh source's first
                # one-value release converts only what it may use) up to _INT_BLOCK
                size = self._int_block
                self._int_block = min(2 * size, _INT_BLOCK)
                size = max(size, -(-(q - len(self._ints)) // 8) * 8)
                self._count(size)
                raw = self._cipher.take(size * 8)
                self._ints = self._ints[p:] + list(struct.unpack(f"={size}Q", raw))
                p, q = 0, k
            self._ipos = q
            return self._ints[p:q]

    def fill(self, buffer: NDArray[np.uint64], n: int) -> None:
        """Keystream words into buffer[:n] in place; buffer must hold n + 8 words."""
        if buffer.dtype != np.uint64 or buffer.size < n + 8 or not buffer.flags.c_contiguous:
            raise ParameterError("fill needs a contiguous uint64 buffer with 8 spare words")
        with self.lock:
            self._fill(buffer, n)

    def _fill(self, buffer: NDArray[np.uint64], n: int) -> None:
        """:meth:`fill` with the lock held."""
        first = self._drain(buffer, n)
        if first == n:
            return
        self._count(n - first)
        raw = buffer.view(np.uint8)
        done, total = first * 8, n * 8
        if total - done > BLOCK_BYTES and self._into_all(raw[done:], total - done):
            return  # one foreign call for the whole fill (libcrypto, compiled kernels)
        into = self._cipher.into
        while done < total:
            m = min(total - done, BLOCK_BYTES)
            into(raw[done:], m)
            done += m

    def words(self, n: int) -> NDArray[np.uint64]:
        out = np.empty(n, dtype=np.uint64)
        with self.lock:
            self._words_into(out, n)
        return out

    def _words_into(self, out: NDArray[np.uint64], n: int) -> None:
        """The next n words into ``out`` (the caller holds the lock)."""
        first = self._drain(out, n)
        if first == n:
            return
        self._count(n - first)
        raw = out.view(np.uint8)
        into = self._cipher.into
        exact = self._cipher.exact  # writes exactly m bytes (else it needs 63 spare bytes)
        done, total = first * 8, n * 8
        if total - done > BLOCK_BYTES and self._into_all(raw[done:], total - done):
            return
        while done < total:
            m = min(total - done, BLOCK_BYTES)
            if exact:
                into(raw[done:], m)
            else:
                if self._scratch is None:
                    self._scratch = np.empty(BLOCK_BYTES + 64, dtype=np.uint8)
                into(self._scratch, m)
                raw[done : done + m] = self._scratch[:m]
            done += m


class CryptoRandom:
    """Cryptographically secure default: ChaCha20 keyed from ``os.urandom``, fork-safe.

    Rekeys from ``os.urandom`` in a forked child and before the stream could reach
    ChaCha20's block-counter limit (:data:`REKEY_WORDS`), so it never repeats a keystream
    block, whatever the process or the amount drawn.
    """

    def __init__(self) -> None:
        self._rekey()

    def _rekey(self) -> None:
        self._pid = os.getpid()
        self._stream = _ChaCha20Stream(os.urandom(32))

    def _ready(self, n: int) -> _ChaCha20Stream:
        """The stream to draw ``n`` words from: a fresh key after a fork or near the limit."""
        if os.getpid() != self._pid or self._stream.room() < n + _INT_BLOCK:
            self._rekey()
        return self._stream

    def words(self, n: int) -> NDArray[np.uint64]:
        """The next words of the keystream (rekeyed from ``os.urandom`` after a fork).

        Parameters
        ----------
        n : int
            How many words.

        Returns
        -------
        numpy.ndarray of uint64
            ``n`` independent uniform words in [0, 2^64).
        """
        n = int(n)
        return self._ready(n).words(n)

    def fill(self, buffer: NDArray[np.uint64], n: int) -> None:
        """Write ``n`` fresh words into ``buffer[:n]`` in place (no copy).

        Parameters
        ----------
        buffer : numpy.ndarray of uint64
            A contiguous buffer of at least ``n + 8`` words.
        n : int
            How many words.

        Raises
        ------
        ParameterError
            If the buffer is not contiguous uint64 with 8 spare words.
        """
        self._ready(n).fill(buffer, n)

    def ints(self, k: int) -> list[int]:
        """``k`` fresh words as Python ints (buffered, see :func:`word_ints`).

        Parameters
        ----------
        k : int
            How many words.

        Returns
        -------
        list of int
            The next ``k`` words of the keystream as Python ints in [0, 2^64).
        """
        return self._ready(k).ints(k)

    def __repr__(self) -> str:
        return "CryptoRandom()"


class KeyedRandom:
    """ChaCha20 keyed with a given 32-byte secret key (e.g. one derived with HKDF for one
    partition of a distributed release); as secure as the key is secret and fresh.

    It draws only in the process that made it: a forked child would replay its parent's
    keystream (the same noise in two releases) and cannot rekey without changing the
    stream, so there every draw raises :class:`~dpnoise.errors.ParameterError`.
    """

    def __init__(self, key: bytes, stream: int = 0, *, backend: str | None = None) -> None:
        if not isinstance(key, bytes) or len(key) != 32:
            raise ParameterError("key must be 32 bytes")
        self._pid = os.getpid()
        self._stream = _ChaCha20Stream(key, stream, backend)

    def stream(self) -> _ChaCha20Stream:
        """The keystream, in the process that keyed it only (else ParameterError)."""
        if os.getpid() != self._pid:
            raise ParameterError(
                "this KeyedRandom was keyed in another process: a forked child would replay "
                "its parent's words (the same noise twice); key a new one in the child")
        return self._stream

    def words(self, n: int) -> NDArray[np.uint64]:
        return self.stream().words(int(n))

    def fill(self, buffer: NDArray[np.uint64], n: int) -> None:
        self.stream().fill(buffer, n)

    def ints(self, k: int) -> list[int]:
        return self.stream().ints(k)

    def __repr__(self) -> str:
        return "KeyedRandom(<secret key>)"


class SeededRandom:
    """Reproducible ChaCha20 stream keyed by SHA-256 of ``seed``; for tests and experiments.

    Parameters
    ----------
    seed : int, str or bytes
        The seed; the ChaCha20 key is ``SHA-256(b"dpnoise-seed\x00" + type tag + seed)``.

    Raises
    ------
    ParameterError
        If ``seed`` is not an int, str or bytes (a bool is refused).
    """

    def __init__(self, seed: int | str | bytes) -> None:
        if isinstance(seed, bool):
            raise ParameterError("seed must be an int, str or bytes")
        if isinstance(seed, int):
            material = b"int:" + str(seed).encode()
        elif isinstance(seed, str):
            material = b"str:" + seed.encode()
        elif isinstance(seed, bytes):
            material = b"bytes:" + seed
        else:
            raise ParameterError(f"seed must be an int, str or bytes, got {type(seed).__name__}")
        self._seed = seed
        self._stream = _ChaCha20Stream(hashlib.sha256(b"dpnoise-seed\x00" + material).digest())

    def words(self, n: int) -> NDArray[np.uint64]:
        """The next words of the seeded keystream.

        Parameters
        ----------
        n : int
            How many words.

        Returns
        -------
        numpy.ndarray of uint64
            ``n`` independent uniform words in [0, 2^64).
        """
        return self._stream.words(int(n))

    def fill(self, buffer: NDArray[np.uint64], n: int) -> None:
        """Write ``n`` fresh words into ``buffer[:n]`` in place (no copy).

        Parameters
        ----------
        buffer : numpy.ndarray of uint64
            A contiguous buffer of at least ``n + 8`` words.
        n : int
            How many words.

        Raises
        ------
        ParameterError
            If the buffer is not contiguous uint64 with 8 spare words.
        """
        self._stream.fill(buffer, n)

    def ints(self, k: int) -> list[int]:
        """The next ``k`` words as Python ints.

        Parameters
        ----------
        k : int
            How many words.

        Returns
        -------
        list of int
            The next ``k`` words of the keystream as Python ints in [0, 2^64).
        """
        return self._stream.ints(k)

    def __repr__(self) -> str:
        return f"SeededRandom({self._seed!r})"


class NumpyRandom:
    """Wraps a ``numpy.random.Generator`` (not cryptographically secure: tests/simulation only).

    Parameters
    ----------
    generator : numpy.random.Generator
        The generator the words come from.
    """

    def __init__(self, generator: np.random.Generator) -> None:
        self.generator = generator

    def words(self, n: int) -> NDArray[np.uint64]:
        """Uniform words from the wrapped generator.

        Parameters
        ----------
        n : int
            How many words.

        Returns
        -------
        numpy.ndarray of uint64
            ``n`` independent uniform words in [0, 2^64).
        """
        return self.generator.integers(0, 2**64 - 1, size=int(n), dtype=np.uint64, endpoint=True)


RngLike = RandomSource | np.random.Generator | None


_OWN_SOURCES: frozenset[type] = frozenset()

_DEFAULT = threading.local()  # .source: this thread's CryptoRandom in this process


def _forget_default_sources() -> None:
    """In a forked child: no thread inherits its parent's default source."""
    global _DEFAULT
    _DEFAULT = threading.local()


os.register_at_fork(after_in_child=_forget_default_sources)


def default_source() -> CryptoRandom:
    """The source ``rng=None`` uses: this thread's own :class:`CryptoRandom`.

    Keyed from ``os.urandom`` on the thread's first use, forgotten in a forked child
    (``os.register_at_fork``; the source itself also rekeys when ``os.getpid()`` changes)
    and rekeyed before ChaCha20's counter limit.  Threads never share it, so no lock is
    contended and no word is handed out twice.
    """
    source = getattr(_DEFAULT, "source", None)
    if source is None:
        source = _DEFAULT.source = CryptoRandom()
    return source


def resolve_rng(rng: RngLike) -> RandomSource:
    """The random source a release uses: ``None`` -> :func:`default_source`, a numpy
    Generator wrapped in :class:`NumpyRandom`, any other source in :class:`CheckedSource`."""
    if rng is None:
        return default_source()
    if type(rng) in _OWN_SOURCES:  # fast path: skips the runtime Protocol check
        return rng
    if isinstance(rng, np.random.Generator):
        return NumpyRandom(rng)
    if isinstance(rng, RandomSource) and not isinstance(rng, type):  # not the class itself
        return CheckedSource(rng)
    raise ParameterError(
        "rng must be None (OS-keyed CSPRNG), a dpnoise RandomSource "
        f"or a numpy.random.Generator, got {type(rng).__name__}"
    )


def direct_stream(source: RandomSource) -> _ChaCha20Stream | None:
    """The ChaCha20 stream of a keyed or seeded source (compiled code may draw from it
    directly, see :meth:`_ChaCha20Stream.direct`), else None."""
    if type(source) is KeyedRandom:
        return source.stream()  # refuses in a forked child
    if type(source) is SeededRandom:
        return source._stream
    return None


def word_ints(source: RandomSource, k: int) -> list[int]:
    """``k`` fresh words as Python ints, for the one-value (scalar) release paths.

    The ChaCha20 sources serve them from a buffer of keystream words (8, then doubling up
    to 256 per cipher call); their ``fill``/``words`` hand out the rest of that buffer
    first, so the sequence of words a source produces -- and every seeded output -- is the
    same whichever mix of scalar and array calls consumes it.  Other sources: ``words(k).tolist()``.
    """
    ints = getattr(source, "ints", None)
    if ints is not None:
        return ints(k)
    return source.words(k).tolist()


_OWN_SOURCES = frozenset({CryptoRandom, KeyedRandom, SeededRandom, NumpyRandom, CheckedSource})
