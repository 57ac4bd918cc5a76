"""The lattice Laplace's fused loop (kernels/block_keyed.c): its own 16-lane ChaCha20
(kernels/chacha16.h) gives libcrypto's keystream block for block, and a split release's
spans give the same values through it as through libcrypto then the block kernel -- every
output alignment, sub-chunks that are not whole batches, integers and releases, a span that
stops for the sampler's reference, and the same seeded releases as before it existed."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpnoise
from dpnoise import SeededRandom, kernels
from dpnoise import keystream as ks
from dpnoise.exact import geometric
from dpnoise.exact.geometric import BlockGeometric
from dpnoise.kernels import keyed
from dpnoise.parallel import SPLIT_CHUNK, SPLIT_MIN

pytestmark = pytest.mark.skipif(
    not keyed.fused_cipher_ok() or ks.libcrypto() is None or keyed._span_driver() is None,
    reason="no AVX-512, compiled kernels or system libcrypto: the fused loop never runs")

SUB = 1 << 14  # the block kernel's sub-chunk (exact/geometric.py)

#: the spans take the fused loop only at the AVX-512 level (DPNOISE_SIMD=4 or 0 caps it)
fused_level = pytest.mark.skipif(geometric.SIMD_LEVEL < 2,
                                 reason="DPNOISE_SIMD caps the kernels below AVX-512")


@pytest.fixture
def fused(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Restores the fused loop's setting and the test stop after the test."""
    stop = kernels.function("dpk_block_keyed_test_stop", [ctypes.c_int64], ctypes.c_int64)
    yield stop
    stop(-1)
    keyed.fused_loop(True)


def _libcrypto_blocks(key: bytes, iv: bytes, n: int) -> bytes:
    cipher = ks.new_cipher(key, int.from_bytes(iv[4:], "little"), "libcrypto")
    skip = int.from_bytes(iv[:4], "little")
    if skip:  # the stream from block `skip` on: a cipher keyed at that counter
        cipher = ks._LibcryptoCipher(key, iv, ks.libcrypto())
    return cipher.take(64 * n)


@settings(max_examples=25, deadline=None)
@given(key=st.binary(min_size=32, max_size=32), stream=st.integers(0, 2**64 - 1),
       counter=st.one_of(st.integers(0, 2**32 - 64), st.just(2**32 - 64)))
def test_the_sixteen_lane_chacha20_is_libcryptos(key: bytes, stream: int, counter: int) -> None:
    iv = ks.iv_for(stream, counter)
    got = keyed.chacha16_blocks(key, iv, 64)
    assert got is not None
    assert got.astype("<u8").tobytes() == _libcrypto_blocks(key, iv, 64)


def test_the_sixteen_lane_chacha20_matches_rfc_8439_and_refuses_a_wrap() -> None:
    key, nonce = bytes(range(32)), bytes.fromhex("000000090000004a00000000")
    got = keyed.chacha16_blocks(key, (1).to_bytes(4, "little") + nonce, 16)
    assert got is not None
    raw = got.astype("<u8").tobytes()
    assert raw[:16].hex() == "10f1e7e4d13b5915500fdd1fa32071c4"  # RFC 8439 sec. 2.3.2
    for b in range(16):
        assert raw[64 * b : 64 * (b + 1)] == ks.chacha20_block(key, 1 + b, nonce)
    assert keyed.chacha16_blocks(key, (2**32 - 15).to_bytes(4, "little") + nonce, 16) is None
    assert keyed.chacha16_blocks(key, bytes(16), 15) is None  # whole passes of 16 blocks


def _spans(integers: bool, offset: int, n: int, pieces: list[tuple[int, int]],
           fused_on: bool) -> tuple[np.ndarray, list[bool]]:
    """Values [0, n) of one chunk (stream 3) through compiled spans, the output `offset`
    values into its array (every alignment mod 64 bytes)."""
    keyed.fused_loop(fused_on)
    block = BlockGeometric(5679)
    rng = np.random.default_rng(7)
    centre = None if integers else rng.normal(0, 1e4, n)
    store = np.full(n + 8, -1, dtype=np.int64 if integers else np.float64)
    out = store[offset : offset + n]
    job = block.keyed_job(out, centre=centre, grid=None if integers else 0.25)
    assert job is not None
    done = [job.span(bytes(range(1, 33)), 3, 0, s, e) for s, e in pieces]
    assert np.all(store[:offset] == -1) and np.all(store[offset + n :] == -1)  # nothing else
    return out.copy(), done


@pytest.mark.parametrize("integers", [False, True])
@pytest.mark.parametrize("offset", range(8))
def test_spans_give_the_same_values_fused_or_not(fused, integers: bool, offset: int) -> None:  # type: ignore[no-untyped-def]
    """Whole sub-chunks, a last sub-chunk that is not whole batches (256 + 37 values:
    libcrypto's loop from there) and one that is (256), and a span that starts on a later
    sub-chunk -- every one computed to its end (the span returns True)."""
    n = 2 * SUB + 256 + 37
    pieces = [(SUB, n), (0, SUB)]
    a, done_a = _spans(integers, offset, n, pieces, True)
    b, done_b = _spans(integers, offset, n, pieces, False)
    assert done_a == done_b == [True, True]
    np.testing.assert_array_equal(a, b)
    m = 2 * SUB + 256  # its last sub-chunk whole batches: the fused loop to the end
    c, done_c = _spans(integers, offset, m, [(0, m)], True)
    d, done_d = _spans(integers, offset, m, [(0, m)], False)
    assert done_c == done_d == [True]
    np.testing.assert_array_equal(c, d)


@fused_level
def test_a_fused_span_stopped_for_the_reference_recomputes_its_chunk(fused) -> None:  # type: ignore[no-untyped-def]
    """A sub-chunk reported as needing the reference (as a Q of 63 would be): the span says
    so, and the release -- whose caller then recomputes that chunk -- is unchanged."""
    n = 3 * SUB
    _, done = _spans(False, 0, n, [(0, n)], True)
    assert done == [True]
    fused(1)  # the second sub-chunk of every span
    _, done = _spans(False, 0, n, [(0, n)], True)
    assert done == [False]
    lap = dpnoise.Laplace(epsilon=1.0, sensitivity=1.0)
    x = np.linspace(-5, 5, SPLIT_MIN + SPLIT_CHUNK // 3)
    stopped = lap.release(x, rng=SeededRandom(2))
    fused(-1)
    keyed.fused_loop(False)
    np.testing.assert_array_equal(stopped, lap.release(x, rng=SeededRandom(2)))


def test_split_releases_are_the_same_fused_or_not(fused) -> None:  # type: ignore[no-untyped-def]
    n = SPLIT_MIN + SPLIT_CHUNK // 3 + 5
    x = np.random.default_rng(1).uniform(-100, 100, n)
    xi = np.arange(n) % 977
    cases = [(dpnoise.Laplace(epsilon=0.5, sensitivity=2.0), x),
             (dpnoise.Geometric(epsilon=1.0, upper=None), xi)]
    for m, data in cases:
        keyed.fused_loop(True)
        a = m.release(data, rng=SeededRandom(9))
        keyed.fused_loop(False)
        np.testing.assert_array_equal(a, m.release(data, rng=SeededRandom(9)))
