"""The two ChaCha20 implementations (system libcrypto via ctypes, ``cryptography``) give the
same keystream, which is RFC 8439's; the random sources give the same words on either."""

from __future__ import annotations

import numpy as np
import pytest

from dpnoise import ParameterError
from dpnoise import keystream as ks
from dpnoise.randomness import KeyedRandom, SeededRandom, fill_words

needs_libcrypto = pytest.mark.skipif(ks.libcrypto() is None,
                                     reason="no system libcrypto: the cryptography path is used")


def _stream(which: str, key: bytes, stream: int, lengths: list[int]) -> bytes:
    c = ks.new_cipher(key, stream, which)
    parts = []
    for m in lengths:
        buf = np.zeros(m + 64, dtype=np.uint8)
        c.into(buf, m)
        parts.append(buf[:m].tobytes())
    return b"".join(parts)


@pytest.mark.parametrize("which", ["cryptography", pytest.param("libcrypto",
                                                                 marks=needs_libcrypto)])
def test_rfc8439_vector(which: str) -> None:
    """RFC 8439 Section 2.4.2: key 00..1f, nonce 0:0:0:4a:0:0, counter 1."""
    c = (ks._CryptographyCipher(ks._RFC_KEY, ks._RFC_IV) if which == "cryptography"
         else ks._LibcryptoCipher(ks._RFC_KEY, ks._RFC_IV, ks.libcrypto()))
    buf = np.zeros(128, dtype=np.uint8)
    c.into(buf, 64)
    assert buf[:16].tobytes() == ks._RFC_FIRST16


@needs_libcrypto
def test_libcrypto_equals_cryptography() -> None:
    """Same bytes for several keys and streams, odd lengths and calls across block edges."""
    rng = np.random.default_rng(4)
    for stream in (0, 1, 7, 2**64 - 1):
        key = rng.bytes(32)
        lengths = [1, 63, 64, 65, 1000, ks.BLOCK_BYTES - 5, 70_000]
        assert _stream("libcrypto", key, stream, lengths) == _stream("cryptography", key,
                                                                      stream, lengths)


@needs_libcrypto
def test_sources_give_the_same_words_on_both_backends() -> None:
    key = bytes(range(3, 35))
    for kw in ({}, {"stream": 5}):
        a = KeyedRandom(key, **kw, backend="libcrypto")
        b = KeyedRandom(key, **kw, backend="cryptography")
        np.testing.assert_array_equal(a.words(9), b.words(9))
        np.testing.assert_array_equal(a.words(100_003), b.words(100_003))
        buf_a = np.zeros(5008, dtype=np.uint64)
        buf_b = np.zeros(5008, dtype=np.uint64)
        fill_words(a, buf_a, 5000)
        fill_words(b, buf_b, 5000)
        np.testing.assert_array_equal(buf_a, buf_b)
        assert not buf_a[5000:].any()


def test_backend_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    first = SeededRandom(11).words(1000)
    monkeypatch.setenv("DPNOISE_KEYSTREAM", "cryptography")
    assert ks.backend() == ks.gil_free() == "cryptography"
    assert SeededRandom(11)._stream.backend == "cryptography"
    np.testing.assert_array_equal(SeededRandom(11).words(1000), first)
    if ks.libcrypto() is not None:
        monkeypatch.setenv("DPNOISE_KEYSTREAM", "libcrypto")
        assert SeededRandom(11)._stream.backend == "libcrypto"
        np.testing.assert_array_equal(SeededRandom(11).words(1000), first)
    with pytest.raises(ParameterError, match="backend"):
        ks.new_cipher(bytes(32), 0, "aes")
    with pytest.raises(ParameterError, match="stream index"):
        KeyedRandom(bytes(32), stream=2**64)


def test_pure_python_block_is_the_keystream() -> None:
    """The reference block function against RFC 8439 and the cryptography package."""
    assert ks.chacha20_block(ks._RFC_KEY, 1, ks._RFC_IV[4:])[:16] == ks._RFC_FIRST16
    key = bytes(range(100, 132))
    nonce = ks.iv_for(3)[4:]
    ref = b"".join(ks.chacha20_block(key, j, nonce) for j in range(3))
    assert _stream("cryptography", key, 3, [192]) == ref


def test_threads_are_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """One thread unless DPNOISE_THREADS asks for more (two were slower than one here)."""
    from dpnoise.parallel import threads

    monkeypatch.delenv("DPNOISE_THREADS", raising=False)
    assert threads() == 1
    monkeypatch.setenv("DPNOISE_THREADS", "3")
    assert threads() == 3
    monkeypatch.setenv("DPNOISE_THREADS", "many")
    assert threads() == 1


@needs_libcrypto
def test_int_buffer_same_on_both_backends() -> None:
    """The one-value path's Python-int buffer, then array requests, on either cipher."""
    out = []
    for which in ("libcrypto", "cryptography"):
        s = KeyedRandom(bytes(range(32)), stream=2, backend=which)
        out.append([s.ints(3), s.ints(20), s.words(7).tolist(), s.ints(1)])
    assert out[0] == out[1]
