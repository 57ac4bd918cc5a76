"""Split releases give the same values on 1, 2 and 3 threads, with or without the one-call
keystream-and-kernel path (kernels/keyed.c), and the same values as before that path existed
(seeded hashes); the input checks run on the threads and still refuse before any word."""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import itertools

import numpy as np
import pytest

import dpnoise
from dpnoise import ParameterError, SeededRandom, kernels
from dpnoise import keystream as ks
from dpnoise.kernels import keyed
from dpnoise.parallel import SPLIT_CHUNK, SPLIT_MIN, chunk_map, extremes
from dpnoise.randomness import KeyedRandom

N = SPLIT_MIN + SPLIT_CHUNK // 3  # three chunks, the last one partial

needs_fused = pytest.mark.skipif(
    not kernels.available() or ks.libcrypto() is None or keyed._driver() is None,
    reason="no compiled kernels or no system libcrypto: the Python chunk loop runs")


def _cases() -> list[tuple[str, object, np.ndarray]]:
    x = np.linspace(-50, 1000, N)
    xi = np.arange(N) % 5000
    return [
        ("lap", dpnoise.Laplace(epsilon=1.0, sensitivity=1.0), x),
        ("geo", dpnoise.Geometric(epsilon=1.0, upper=None), xi),
        ("geoc", dpnoise.Geometric(epsilon=0.5, lower=0, upper=5000), xi),
        ("dg", dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, upper=None), xi),
        ("dgc", dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, lower=0, upper=5000), xi),
    ]


#: the sampler modules whose chunk loop uses a KeyedRun (the count samplers always do)
_KEYED_SAMPLERS = [mod for mod in ("geometric", "integer_block", "dg_table")
                   if hasattr(importlib.import_module(f"dpnoise.exact.{mod}"), "keyed_run")]


def _hash(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


#: sha256 prefixes of release(x, rng=SeededRandom(N)) computed before the threads were
#: reworked (the chunk loop in Python, two foreign calls per 2^14 values): the seeded
#: outputs must not change.
BEFORE = {"lap": "7775e2275aaba18e", "geo": "ce494bfbcc909540", "geoc": "197e4a9f00f1d87e",
          "dg": "fe95c5ecfa50524d", "dgc": "d44a0f5039b45729"}


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_split_releases_equal_the_earlier_seeded_outputs(threads: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPNOISE_THREADS", threads)
    got = {name: _hash(m.release(x, rng=SeededRandom(N))) for name, m, x in _cases()}
    assert got == BEFORE


@needs_fused
def test_one_call_path_equals_the_python_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same values when every chunk goes through the Python loop (no KeyedRun)."""
    assert {"integer_block", "dg_table"} <= set(_KEYED_SAMPLERS)
    monkeypatch.setenv("DPNOISE_THREADS", "2")
    fused = [m.release(x, rng=SeededRandom(5)) for _, m, x in _cases()]
    for mod in _KEYED_SAMPLERS:
        monkeypatch.setattr(f"dpnoise.exact.{mod}.keyed_run", lambda *a, **k: None)
        monkeypatch.setattr(f"dpnoise.exact.{mod}.compiled_job", lambda *a, **k: None)
    loop = [m.release(x, rng=SeededRandom(5)) for _, m, x in _cases()]
    for a, b in zip(fused, loop, strict=True):
        np.testing.assert_array_equal(a, b)


@needs_fused
def test_a_span_reads_its_chunk_stream_from_where_it_starts() -> None:
    """dpk_keyed_span keys ChaCha20 itself with the block counter of its first word: a span
    that starts inside a chunk reads the words the chunk's whole loop reads there."""
    key, sub, per_value, chunk_start, n = bytes(range(32)), 1024, 2, 5000, 5000 + 4 * 1024 + 77
    want = KeyedRandom(key, stream=7).words(per_value * (n - chunk_start))
    out = np.zeros(per_value * n, dtype=np.uint64)  # the adapter writes at per_value * index
    job = keyed.compiled_job("dpk_keyed_words", keyed.kernel_args(out.ctypes.data, per_value, -1),
                             per_value, sub, (out,))
    assert job is not None
    for start in (chunk_start + 2 * sub, chunk_start):  # the later piece first
        end = n if start > chunk_start else chunk_start + 2 * sub
        assert job.span(key, 7, chunk_start, start, end)
    np.testing.assert_array_equal(out[per_value * chunk_start:], want)
    with pytest.raises(ValueError, match="grid"):
        job.span(key, 7, chunk_start, chunk_start + 100, n)


@needs_fused
@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_span_stopped_for_the_reference_recomputes_its_chunk(
        threads: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probability-2^-63 path of a compiled span: it computes part of chunk 1 and asks
    for the reference; run_split recomputes that whole chunk the per-chunk way -- the same
    values as a release without spans."""
    monkeypatch.setenv("DPNOISE_THREADS", threads)
    real = keyed.CompiledJob.span
    stopped: list[int] = []

    def stop_in_chunk_1(self: keyed.CompiledJob, key: bytes, stream: int, chunk_start: int,
                        start: int, end: int) -> bool:
        if stream != 1:
            return real(self, key, stream, chunk_start, start, end)
        stopped.append(start)
        real(self, key, stream, chunk_start, start, start + self.sub)
        self._keep[0][start + self.sub : end] = -12345  # the rest of the piece: not computed
        return False

    for name, m, x in _cases():
        want = m.release(x, rng=SeededRandom(11))
        stopped.clear()
        monkeypatch.setattr(keyed.CompiledJob, "span", stop_in_chunk_1)
        got = m.release(x, rng=SeededRandom(11))
        monkeypatch.setattr(keyed.CompiledJob, "span", real)
        assert stopped, name
        np.testing.assert_array_equal(got, want)


@needs_fused
def test_keyed_run_draws_the_stream_and_stops_where_asked() -> None:
    """dpk_keyed_run's words are the stream's, chunk after chunk; a chunk sent to the
    reference keeps its words in the buffer and the next call goes on after them."""
    key, sub, per_value, n = bytes(range(32)), 1000, 2, 5500
    want = KeyedRandom(key, stream=4).words(per_value * n)
    out = np.zeros(per_value * n, dtype=np.uint64)
    words = np.empty(per_value * sub + 8, dtype=np.uint64)
    source = KeyedRandom(key, stream=4, backend="libcrypto")
    run = keyed.keyed_run(source, words, per_value, sub, "dpk_keyed_words",
                          keyed.kernel_args(out.ctypes.data, per_value, 3000))
    assert run is not None
    assert run(0, n) == 3000  # stopped: chunk [3000, 4000) is for the reference
    np.testing.assert_array_equal(out[: per_value * 3000], want[: per_value * 3000])
    np.testing.assert_array_equal(words[: per_value * sub], want[6000:8000])
    assert run(4000, n) == n  # goes on right after the stopped chunk's words
    np.testing.assert_array_equal(out[8000:], want[8000:])
    assert source._stream.taken == per_value * n
    np.testing.assert_array_equal(source.words(3), KeyedRandom(key, 4).words(2 * n + 3)[-3:])


@needs_fused
def test_a_chunk_sent_to_the_reference_gives_the_same_values(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """The probability-2^-63 path: KeyedRun stops at a chunk (its words drawn), the numpy
    reference computes it from those words, the C loop goes on -- same values."""
    real = keyed.KeyedRun.__call__
    stops = []

    def stop_once(self: keyed.KeyedRun, start: int, n: int) -> int:
        at = start + 2 * self.sub  # the third chunk of this call
        if stops or at >= n:
            return real(self, start, n)
        stops.append(at)
        if real(self, start, at) != at:
            raise AssertionError("unexpected stop")
        self.stream.fill(self.words, self.per_value * min(self.sub, n - at))  # as C would
        return at

    for name, m, x in _cases():
        if name.startswith("lap") and "geometric" not in _KEYED_SAMPLERS:
            continue  # the block sampler runs its own loop
        want = m.release(x[:70_000], rng=KeyedRandom(bytes(32), backend="libcrypto"))
        stops.clear()
        monkeypatch.setattr(keyed.KeyedRun, "__call__", stop_once)
        got = m.release(x[:70_000], rng=KeyedRandom(bytes(32), backend="libcrypto"))
        monkeypatch.setattr(keyed.KeyedRun, "__call__", real)
        assert stops, name
        np.testing.assert_array_equal(got, want)


def test_checks_on_threads_refuse_before_any_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN or an out-of-domain count in the last chunk is refused, on 2 threads, and the
    source has given no word."""
    monkeypatch.setenv("DPNOISE_THREADS", "2")
    x = np.linspace(0, 1, N)
    x[-1] = np.nan
    rng = SeededRandom(3)
    with pytest.raises(ParameterError, match="finite"):
        dpnoise.Laplace(epsilon=1.0, sensitivity=1.0).release(x, rng=rng)
    xi = np.arange(N)
    with pytest.raises(ParameterError, match="domain"):
        dpnoise.Geometric(epsilon=1.0, upper=N - 2).release(xi, rng=rng)
    np.testing.assert_array_equal(rng.words(4), SeededRandom(3).words(4))


def test_chunk_map_and_extremes_on_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    v = np.random.default_rng(2).normal(size=N)
    for t in ("1", "3"):
        monkeypatch.setenv("DPNOISE_THREADS", t)
        assert extremes(v) == (v.min(), v.max())
        spans = chunk_map(N, lambda s, e: (s, e))
        assert spans[0][0] == 0 and spans[-1][1] == N
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    v[-5] = np.nan
    assert all(np.isnan(extremes(v)))


@needs_fused
def test_count_clamps_equal_on_every_simd_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """keyed.c's add-and-clamp step (AVX-512, AVX2, plain C) gives the numpy reference's
    integers: counts at both clamps, a length that leaves a tail after the vector loop."""
    isa = kernels.function("dpk_add_clamp_isa", [ctypes.c_int64], ctypes.c_int64)
    xi = np.concatenate([np.zeros(40_000, np.int64), np.full(40_003, 30, np.int64)])
    mechs = (dpnoise.Geometric(epsilon=0.5, lower=0, upper=30),
             dpnoise.DiscreteGaussian(epsilon=1.0, delta=1e-6, lower=0, upper=None))

    def releases() -> list[np.ndarray]:
        return [m.release(xi, rng=KeyedRandom(bytes(32), backend="libcrypto")) for m in mechs]

    widths = {}
    try:
        for cap in range(isa(-1), -1, -1):
            assert isa(cap) == cap
            widths[cap] = releases()
    finally:
        isa(-1)
    for mod in ("integer_block", "dg_table"):  # the Python loop: numpy's add, max, min
        monkeypatch.setattr(f"dpnoise.exact.{mod}.keyed_run", lambda *a, **k: None)
    want = releases()
    assert want[0].min() == 0 and want[0].max() == 30 and want[1].min() == 0
    for got in widths.values():
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)


def test_a_failing_chunk_job_raises_in_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whichever thread runs it, a job's exception reaches the caller after every job has
    ended."""
    monkeypatch.setenv("DPNOISE_THREADS", "3")
    seen: list[int] = []

    def fn(s: int, e: int) -> int:
        seen.append(s)
        if s == SPLIT_CHUNK:
            raise ValueError("chunk 1")
        return s

    with pytest.raises(ValueError, match="chunk 1"):
        chunk_map(N, fn)
    assert sorted(seen) == [0, SPLIT_CHUNK, 2 * SPLIT_CHUNK]


@pytest.mark.skipif(not kernels.available(), reason="no compiled kernels")
def test_count_bounds_equal_numpy_on_every_simd_width() -> None:
    """kernels/count_bounds.c (one call per chunk of the domain check) on every width: the
    extremes anywhere -- first, last, in the vector body or the tail -- and short arrays."""
    from dpnoise.mechanisms.integers import _extremes

    isa = kernels.function("dpk_count_bounds_isa", [ctypes.c_int64], ctypes.c_int64)
    rng = np.random.default_rng(9)
    cases = [rng.integers(-(2**62), 2**62, size) for size in (64, 65, 95, 1000, 4099)]
    for v in cases[:]:
        for at in (0, len(v) - 1, len(v) // 2, len(v) - 3):
            w = v.copy()
            w[at] = -(2**63)
            w[(at + 7) % len(w)] = 2**63 - 1
            cases.append(w)
    try:
        for cap in range(isa(-1), -1, -1):
            assert isa(cap) == cap
            for v in cases:
                assert _extremes(v) == (int(v.min()), int(v.max()))
    finally:
        isa(-1)


@needs_fused
def test_a_large_fill_is_one_call_and_the_same_words() -> None:
    """Fills and word requests above one cipher block go to libcrypto in one foreign call
    (``dpk_keystream``): the same words as the ``cryptography`` package's block loop."""
    key, n = bytes(range(5, 37)), 200_003
    calls = []
    a = KeyedRandom(key, stream=9, backend="libcrypto")
    real = a._stream._cipher.into_all

    def counted(raw: np.ndarray, m: int) -> bool:
        calls.append(m)
        return real(raw, m)

    a._stream._cipher.into_all = counted
    b = KeyedRandom(key, stream=9, backend="cryptography")
    got = np.zeros(n + 8, dtype=np.uint64)
    want = np.zeros(n + 8, dtype=np.uint64)
    a.fill(got, n)
    b.fill(want, n)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(a.words(n), b.words(n))
    assert calls == [8 * n, 8 * n]


def test_releases_from_several_threads_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Callers on their own threads share the pool: no deadlock (each caller works its own
    chunks and waits only for chunks a worker took) and the same values as one at a time."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("DPNOISE_THREADS", "2")
    cases = _cases()
    alone = [m.release(x, rng=SeededRandom(i)) for i, (_, m, x) in enumerate(cases)]
    with ThreadPoolExecutor(len(cases)) as callers:
        together = list(callers.map(lambda i: cases[i][1].release(cases[i][2],
                                                                  rng=SeededRandom(i)),
                                    range(len(cases))))
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)
