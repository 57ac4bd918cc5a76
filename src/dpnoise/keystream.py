"""The ChaCha20 keystream behind every dpnoise random source, with the GIL released.

One keystream is ChaCha20 (RFC 8439) under a 256-bit key with the 128-bit OpenSSL IV
``counter (4 bytes, little-endian) || nonce (12 bytes)``: block j of stream ``s`` is
ChaCha20(key, counter = j, nonce = s as 12 little-endian bytes), and the keystream is the
encryption of zero bytes.  Two implementations give the *same bytes*:

* ``"libcrypto"``: OpenSSL's ``EVP_chacha20`` called through :mod:`ctypes` on the system
  ``libcrypto`` (the library Python's own :mod:`ssl` links on Linux).  A :mod:`ctypes`
  call releases the GIL, so threads generate keystream on every core at once; the
  threaded split of :mod:`dpnoise.parallel` uses it.  Loaded on first use and accepted
  only after it reproduces the RFC 8439 Section 2.4.2 test vector and a pure-Python
  ChaCha20 block function (:func:`chacha20_block`, RFC 8439 Section 2.3) on two blocks
  of another stream.
* ``"cryptography"``: the ``cryptography`` package (OpenSSL inside a Rust extension).  It
  holds the GIL during ``update_into`` (its ``update_into`` never calls
  ``allow_threads``), so it serialises threads.  It is the default for one thread (a
  little faster than the ctypes path) and the fallback when ``libcrypto`` cannot be
  loaded; ``DPNOISE_KEYSTREAM=libcrypto|cryptography`` forces one or the other.

Both produce the keystream block by block into a caller's buffer (no copy); the choice
changes speed, never a single output word.
"""

from __future__ import annotations

import ctypes
import os
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from numpy.typing import NDArray

from .errors import ParameterError

BLOCK_BYTES = 1 << 18  # 256 KiB per cipher call: stays in L2 cache
_ZEROS = np.zeros(BLOCK_BYTES, dtype=np.uint8)  # read-only plaintext shared by every stream
_ZEROS.flags.writeable = False
#: address of the BLOCK_BYTES zero bytes (the plaintext), for compiled callers of c_handle()
zeros_address: int = _ZEROS.ctypes.data

# RFC 8439, Section 2.4.2: key 00 01 .. 1f, nonce 00 00 00 00 00 00 00 4a 00 00 00 00,
# initial counter 1; the first 16 bytes of the keystream (plaintext "Ladies and ..."
# xor ciphertext "6e 2e 35 9a ...").
_RFC_KEY = bytes(range(32))
_RFC_IV = (1).to_bytes(4, "little") + bytes.fromhex("000000000000004a00000000")
_RFC_FIRST16 = bytes.fromhex("224f51f3401bd9e12fde276fb8631ded")


def iv_for(stream: int, counter: int = 0) -> bytes:
    """The 16-byte IV of stream ``stream``: the 32-bit block counter (0: the stream's
    start; k: its k-th 64-byte block, 8 words on), then the stream index as nonce."""
    if not 0 <= stream < 1 << 64:
        raise ParameterError("stream index must be in [0, 2^64)")
    if not 0 <= counter < 1 << 32:
        raise ParameterError("block counter must be in [0, 2^32)")
    return counter.to_bytes(4, "little") + stream.to_bytes(12, "little")


class _CryptographyCipher:
    """ChaCha20 from the ``cryptography`` package (holds the GIL while it runs)."""

    name = "cryptography"
    exact = False  # update_into wants 63 spare bytes after the m it writes

    def __init__(self, key: bytes, iv: bytes) -> None:
        self._enc = Cipher(algorithms.ChaCha20(key, iv), mode=None).encryptor()

    def into(self, raw: NDArray[np.uint8], m: int) -> None:
        """Next ``m`` keystream bytes into raw[:m] (raw must have 63 spare bytes)."""
        self._enc.update_into(_ZEROS[:m], raw[: m + 63])

    def take(self, m: int) -> bytes:
        """Next ``m`` keystream bytes."""
        return bytes(self._enc.update(bytes(m)))


_LIB: Any = None
_LIB_TRIED = False


def _load_libcrypto() -> Any:
    """The system libcrypto with EVP_chacha20, or None (wrong answers or not found)."""
    if sys.platform == "darwin":  # macOS refuses unversioned libcrypto loads (aborts)
        return None
    for name in ("libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"):
        try:
            # the short setup calls keep the GIL (PyDLL): releasing it for a microsecond
            # would only hand it to another thread; the keystream call releases it (CDLL)
            lib = ctypes.PyDLL(name)
            lib.EVP_EncryptUpdate = ctypes.CDLL(name).EVP_EncryptUpdate
            lib.EVP_chacha20.restype = ctypes.c_void_p
            lib.EVP_chacha20.argtypes = []
        except (OSError, AttributeError):
            continue
        lib.EVP_CIPHER_CTX_new.restype = ctypes.c_void_p
        lib.EVP_CIPHER_CTX_new.argtypes = []
        lib.EVP_CIPHER_CTX_free.restype = None
        lib.EVP_CIPHER_CTX_free.argtypes = [ctypes.c_void_p]
        lib.EVP_EncryptInit_ex.restype = ctypes.c_int
        lib.EVP_EncryptInit_ex.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_char_p, ctypes.c_char_p]
        lib.EVP_EncryptUpdate.restype = ctypes.c_int
        lib.EVP_EncryptUpdate.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.POINTER(ctypes.c_int), ctypes.c_void_p,
                                          ctypes.c_int]
        if _self_test(lib):
            return lib
    return None


def _rotl(v: int, c: int) -> int:
    return ((v << c) & 0xFFFFFFFF) | (v >> (32 - c))


def chacha20_block(key: bytes, counter: int, nonce: bytes) -> bytes:
    """One 64-byte ChaCha20 block in pure Python (RFC 8439 Section 2.3): the reference that
    the loaded library is checked against."""
    words = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    words += [int.from_bytes(key[i : i + 4], "little") for i in range(0, 32, 4)]
    words += [counter & 0xFFFFFFFF]
    words += [int.from_bytes(nonce[i : i + 4], "little") for i in range(0, 12, 4)]
    x = list(words)
    for _ in range(10):
        for a, b, c, d in ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                           (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)):
            x[a] = (x[a] + x[b]) & 0xFFFFFFFF
            x[d] = _rotl(x[d] ^ x[a], 16)
            x[c] = (x[c] + x[d]) & 0xFFFFFFFF
            x[b] = _rotl(x[b] ^ x[c], 12)
            x[a] = (x[a] + x[b]) & 0xFFFFFFFF
            x[d] = _rotl(x[d] ^ x[a], 8)
            x[c] = (x[c] + x[d]) & 0xFFFFFFFF
            x[b] = _rotl(x[b] ^ x[c], 7)
    return b"".join(((x[i] + words[i]) & 0xFFFFFFFF).to_bytes(4, "little") for i in range(16))


def _self_test(lib: Any) -> bool:
    """The RFC 8439 vector, and two blocks of another stream equal to :func:`chacha20_block`."""
    try:
        out = np.zeros(256, dtype=np.uint8)
        _LibcryptoCipher(_RFC_KEY, _RFC_IV, lib).into(out, 64)
        if out[:16].tobytes() != _RFC_FIRST16:
            return False
        key = bytes(range(7, 39))
        _LibcryptoCipher(key, iv_for(5), lib).into(out, 130)
        nonce = iv_for(5)[4:]
        ref = chacha20_block(key, 0, nonce) + chacha20_block(key, 1, nonce)
        return out[:128].tobytes() == ref
    except Exception:  # any failure of the foreign library: do not use it
        return False


class _LibcryptoCipher:
    """ChaCha20 from the system libcrypto via ctypes (the GIL is released while the
    keystream is computed)."""

    name = "libcrypto"
    exact = True  # writes exactly m bytes

    def __init__(self, key: bytes, iv: bytes, lib: Any) -> None:
        ctx = lib.EVP_CIPHER_CTX_new()
        if not ctx:
            raise MemoryError("EVP_CIPHER_CTX_new failed")
        self._finalizer = weakref.finalize(self, lib.EVP_CIPHER_CTX_free, ctx)
        if lib.EVP_EncryptInit_ex(ctx, lib.EVP_chacha20(), None, key, iv) != 1:
            raise RuntimeError("EVP_EncryptInit_ex(chacha20) failed")
        self._ctx, self._update = ctx, lib.EVP_EncryptUpdate
        self._update_address = ctypes.cast(lib.EVP_EncryptUpdate, ctypes.c_void_p).value
        self._outl = ctypes.c_int(0)
        self._outl_ref = ctypes.byref(self._outl)
        self._zeros = _ZEROS.ctypes.data

    def into(self, raw: NDArray[np.uint8], m: int) -> None:
        """Next ``m`` keystream bytes into raw[:m] (raw must hold m bytes, contiguous)."""
        if self._update(self._ctx, raw.ctypes.data, self._outl_ref, self._zeros, m) != 1 or (
            self._outl.value != m
        ):
            raise RuntimeError("EVP_EncryptUpdate(chacha20) failed")

    def into_all(self, raw: NDArray[np.uint8], m: int) -> bool:
        """Next ``m`` keystream bytes (any size) into raw[:m] in ONE foreign call, so the GIL
        is released once, not once per :data:`BLOCK_BYTES` (``dpk_keystream`` in
        kernels/keyed.c, the same bytes); False when the compiled kernels are off."""
        fn = fill_kernel()
        if fn is None:
            return False
        if fn(self._update_address, self._ctx, self._zeros, BLOCK_BYTES, raw.ctypes.data, m):
            raise RuntimeError("EVP_EncryptUpdate(chacha20) failed")
        return True

    def take(self, m: int) -> bytes:
        """Next ``m`` keystream bytes."""
        buf = np.empty(m, dtype=np.uint8)
        self.into(buf, m)
        return buf.tobytes()

    def c_handle(self) -> tuple[int, int]:
        """(address of ``EVP_EncryptUpdate``, this cipher's context): compiled code that holds
        both draws the next keystream bytes itself, exactly as :meth:`into` would (encrypting
        :data:`zeros_address`), with no Python in between (:mod:`dpnoise.kernels.keyed`)."""
        return self._update_address, self._ctx


def _no_fill_kernel() -> Any:
    return None


#: ``() -> dpk_keystream`` (a ctypes function) or None: set by :mod:`dpnoise.kernels.keyed`
#: when it is imported (the kernels sit above this module; without them every fill is one
#: cipher call per :data:`BLOCK_BYTES`, the same bytes)
fill_kernel: Callable[[], Any] = _no_fill_kernel


def libcrypto() -> Any:
    """The checked system libcrypto (loaded once), or None."""
    global _LIB, _LIB_TRIED
    if not _LIB_TRIED:
        _LIB_TRIED = True
        _LIB = _load_libcrypto()
    return _LIB


_EVP: Any = None


def evp_entry_points() -> Any:
    """The checked libcrypto's ``EVP_CIPHER_CTX_new``, ``EVP_CIPHER_CTX_free``,
    ``EVP_EncryptInit_ex``, ``EVP_EncryptUpdate`` and ``EVP_chacha20()`` as a ctypes array
    of five addresses (compiled code keys a ChaCha20 context itself:
    ``dpk_keyed_span`` in kernels/keyed.c), or None without the library."""
    global _EVP
    lib = libcrypto()
    if lib is None:
        return None
    if _EVP is None:
        names = ("EVP_CIPHER_CTX_new", "EVP_CIPHER_CTX_free", "EVP_EncryptInit_ex",
                 "EVP_EncryptUpdate")
        addresses = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in names]
        _EVP = (ctypes.c_void_p * 5)(*addresses, lib.EVP_chacha20())
    return _EVP


def backend() -> str:
    """The implementation new streams use unless told otherwise: ``DPNOISE_KEYSTREAM``
    ("libcrypto" or "cryptography"), default "cryptography" (slightly faster on one
    thread here: 5.2 vs 5.0 GB/s); threaded releases ask for "libcrypto" (GIL-free)."""
    if os.environ.get("DPNOISE_KEYSTREAM") == "libcrypto" and libcrypto() is not None:
        return "libcrypto"
    return "cryptography"


def gil_free() -> str:
    """The implementation for keystreams computed on worker threads: "libcrypto" when the
    system library loaded and passed its self-test, else "cryptography"."""
    if os.environ.get("DPNOISE_KEYSTREAM") == "cryptography":
        return "cryptography"
    return "libcrypto" if libcrypto() is not None else "cryptography"


def new_cipher(key: bytes, stream: int, which: str | None = None) -> Any:
    """A keystream cipher for (key, stream); ``which`` forces an implementation."""
    iv = iv_for(stream)
    which = backend() if which is None else which
    if which == "libcrypto":
        lib = libcrypto()
        if lib is None:
            raise ParameterError("the system libcrypto is not available")
        return _LibcryptoCipher(key, iv, lib)
    if which == "cryptography":
        return _CryptographyCipher(key, iv)
    raise ParameterError(f"keystream backend must be 'libcrypto' or 'cryptography', got {which!r}")
