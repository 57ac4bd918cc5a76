"""Random sources: CSPRNG default, reproducible seeded source, fork safety, uniformity."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from scipy import stats

import dpnoise as dp
from dpnoise import CryptoRandom, NumpyRandom, ParameterError, SeededRandom, randomness
from dpnoise.randomness import fill_words, resolve_rng

from .helpers import bytes_from_fork, run_threads


def test_seeded_source_is_reproducible_and_seed_dependent() -> None:
    a = SeededRandom(5).words(1000)
    b = SeededRandom(5).words(1000)
    c = SeededRandom(6).words(1000)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert SeededRandom("5").words(4).tolist() != SeededRandom(5).words(4).tolist()


def test_stream_continues_across_calls_and_block_boundaries() -> None:
    one = SeededRandom(9).words(100_003)
    s = SeededRandom(9)
    parts = np.concatenate([s.words(7), s.words(65_536), s.words(34_460)])
    np.testing.assert_array_equal(one, parts)


def test_fill_matches_words() -> None:
    buf = np.zeros(1000 + 8, dtype=np.uint64)
    fill_words(SeededRandom(3), buf, 1000)
    np.testing.assert_array_equal(buf[:1000], SeededRandom(3).words(1000))
    assert not buf[1000:].any()  # the spare words are untouched
    with pytest.raises(ParameterError):
        SeededRandom(3).fill(np.zeros(10, dtype=np.uint64), 10)


def test_crypto_sources_are_independent() -> None:
    assert not np.array_equal(CryptoRandom().words(64), CryptoRandom().words(64))


def test_bits_are_uniform() -> None:
    w = SeededRandom(1).words(200_000)
    bits = np.unpackbits(w.view(np.uint8)).reshape(-1, 64).mean(axis=0)
    assert np.all(np.abs(bits - 0.5) < 0.006)
    top = (w >> np.uint64(56)).astype(int)
    counts = np.bincount(top, minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_crypto_random_never_replays_parent_stream_after_fork() -> None:
    source = CryptoRandom()
    source.words(10)  # parent has used the stream
    child = bytes_from_fork(lambda: source.words(32).tobytes(), 256)
    parent = source.words(32).tobytes()
    assert len(child) == 256
    assert child != parent


def test_resolve_rng() -> None:
    assert isinstance(resolve_rng(None), CryptoRandom)
    assert isinstance(resolve_rng(np.random.default_rng(1)), NumpyRandom)
    s = SeededRandom(1)
    assert resolve_rng(s) is s
    with pytest.raises(ParameterError, match="rng"):
        resolve_rng(42)
    with pytest.raises(ParameterError):
        SeededRandom(True)


def test_default_source_is_per_thread_and_keyed_once() -> None:
    first = randomness.default_source()
    assert type(first) is randomness.CryptoRandom
    assert randomness.resolve_rng(None) is first  # no fresh key per release
    others: list[object] = []
    t = threading.Thread(target=lambda: others.append(randomness.default_source()))
    t.start()
    t.join()
    assert others[0] is not first  # threads never share a source (or its buffered words)


def test_default_source_is_forgotten_in_a_forked_child() -> None:
    parent = randomness.default_source()
    parent.ints(1)  # the parent has buffered words a careless child could replay
    child = bytes_from_fork(
        lambda: bytes([randomness.default_source() is not parent])
        + np.array(randomness.default_source().ints(4), dtype=np.uint64).tobytes(),
        33,
    )
    assert child[0] == 1
    mine = np.array(parent.ints(4), dtype=np.uint64).tobytes()
    assert child[1:] != mine


def test_crypto_random_rekeys_before_the_block_counter_wraps(monkeypatch) -> None:
    # a small limit stands in for ChaCha20's 2^32 blocks: the source must move to a fresh
    # key before its stream passes the limit, and never repeat what it gave
    monkeypatch.setattr(randomness, "REKEY_WORDS", 4096)
    source = randomness.CryptoRandom()
    streams, seen = set(), []
    for _ in range(20):
        seen.append(source.words(1000))
        seen.extend(np.array(source.ints(3), dtype=np.uint64) for _ in range(5))
        streams.add(id(source._stream))
        assert source._stream.taken <= randomness.REKEY_WORDS
    assert len(streams) >= 4
    allw = np.concatenate(seen)
    assert np.unique(allw).size == allw.size


def test_seeded_and_keyed_sources_refuse_to_pass_the_counter_limit(monkeypatch) -> None:
    monkeypatch.setattr(randomness, "REKEY_WORDS", 1024)
    seeded = randomness.SeededRandom(1)
    seeded.words(1000)
    with pytest.raises(ParameterError, match="2\\^35"):
        seeded.words(100)
    keyed = randomness.KeyedRandom(bytes(32))
    with pytest.raises(ParameterError, match="counter"):
        keyed.words(2000)


@pytest.mark.parametrize("backend", ["cryptography", "libcrypto"])
def test_one_source_shared_by_threads_hands_out_each_word_once(backend: str) -> None:
    """Two threads drawing from ONE keyed source at once (words, fill, one-value ints, and a
    compiled release that draws the keystream itself): no exception, and no keystream word
    reaches both -- a word given twice would be the same noise in two releases."""
    from dpnoise import Laplace, keystream
    from dpnoise.randomness import KeyedRandom

    if backend == "libcrypto" and keystream.libcrypto() is None:
        pytest.skip("no system libcrypto")
    source = KeyedRandom(bytes(range(32)), backend=backend)
    got: list[list[np.ndarray]] = [[], []]
    errors: list[BaseException] = []
    start = threading.Barrier(2)
    laplace = Laplace(epsilon=1.0, sensitivity=1.0)

    def draw(i: int) -> None:
        try:
            start.wait()
            for _ in range(4):
                got[i].append(source.words(1 << 15))
                buf = np.empty((1 << 15) + 8, dtype=np.uint64)
                source.fill(buf, 1 << 15)
                got[i].append(buf[: 1 << 15])
                got[i].append(np.array(source.ints(3), dtype=np.uint64))
                laplace.release(np.zeros(1 << 12), rng=source)
        except BaseException as exc:
            errors.append(exc)

    run_threads(draw, 2)
    assert not errors, errors
    both = np.concatenate(got[0] + got[1])
    assert np.unique(both).size == both.size


class _Answers:
    """A caller's source whose words() answers ``make(n)``."""

    def __init__(self, make) -> None:
        self.make = make

    def words(self, n: int):
        return self.make(n)


@pytest.mark.parametrize("make", [
    lambda n: [1] * n,                                  # a list
    lambda n: np.full(n, 0.5),                          # floats
    lambda n: np.zeros(max(n - 1, 0), dtype=np.uint64),  # too few words
    lambda n: np.zeros((n, 1), dtype=np.uint64),        # wrong shape (hung a union release)
    lambda n: None,
])
def test_a_callers_source_with_bad_words_is_a_parameter_error(make) -> None:
    from dpnoise import Geometric, Laplace, RangeLaplace

    union = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0.0, 1.0), (2.0, 100.0)])
    for m in (Laplace(epsilon=1.0, sensitivity=1.0), Geometric(epsilon=1.0), union):
        for x in (5, np.array([5.0, 6.0])):
            with pytest.raises(ParameterError, match=r"rng\.words"):
                m.release(x, rng=_Answers(make))


def test_a_source_class_instead_of_an_instance_is_refused() -> None:
    from dpnoise import Laplace

    with pytest.raises(ParameterError, match="rng"):
        Laplace(epsilon=1.0, sensitivity=1.0).release(1.0, rng=CryptoRandom)


def test_a_callers_good_source_gives_the_seeded_values() -> None:
    from dpnoise import Laplace

    m = Laplace(epsilon=1.0, sensitivity=1.0)
    x = np.arange(100.0)
    assert np.array_equal(m.release(x, rng=_Answers(SeededRandom(4).words)),
                          m.release(x, rng=SeededRandom(4)))


def test_a_keyed_source_refuses_to_draw_in_a_forked_child() -> None:
    """A forked child drawing from its parent's KeyedRandom replayed the parent's next words:
    the same noise in the parent's and the child's releases.  Every way of drawing refuses."""
    from dpnoise import Laplace
    from dpnoise.randomness import KeyedRandom

    source = KeyedRandom(bytes(32))
    source.words(3)
    laplace = Laplace(epsilon=1.0, sensitivity=1.0)

    def attempts() -> bytes:
        verdicts = []
        for draw in (lambda: source.words(4), lambda: source.ints(2),
                     lambda: source.fill(np.empty(16, dtype=np.uint64), 8),
                     lambda: laplace.release(1.0, rng=source),
                     lambda: laplace.release(np.zeros(1 << 16), rng=source)):
            try:
                draw()
                verdicts.append(b"d")
            except ParameterError:
                verdicts.append(b"r")
        return b"".join(verdicts)

    assert bytes_from_fork(attempts, 5) == b"rrrrr"
    assert attempts() == b"ddddd"  # the parent keeps its stream


class _Stuck:
    """A source of one word forever, through words, fill or ints."""

    def __init__(self, word: int, via: str) -> None:
        self.word = np.uint64(word)
        if via == "fill":
            self.fill = self._fill
        if via == "ints":
            self.ints = lambda k: [int(self.word)] * k

    def words(self, n: int) -> np.ndarray:
        return np.full(n, self.word, dtype=np.uint64)

    def _fill(self, buffer: np.ndarray, n: int) -> None:
        buffer[:n] = self.word


@pytest.mark.parametrize("via", ["words", "fill", "ints"])
@pytest.mark.parametrize("word", [0, 2**64 - 1])
def test_a_stuck_source_of_ones_own_is_refused_not_looped_on(word: int, via: str) -> None:
    """A caller's source stuck at one word made the rejection loops of Laplace, Geometric,
    Staircase, TruncatedLaplace, ClampedLaplace and RangeLaplace spin forever; the same
    word four times in a row (2^-192 for uniform words) is now a ParameterError naming rng."""
    mechanisms = [dp.Laplace(epsilon=1.0, sensitivity=1.0), dp.Geometric(epsilon=1.0),
                  dp.Staircase(epsilon=1.0, sensitivity=1.0),
                  dp.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10))]
    outcomes: list[str] = []

    def run() -> None:
        for m in mechanisms:
            for x in (np.ones(5), np.ones(50_000)):
                try:
                    m.release(x, rng=_Stuck(word, via))
                    outcomes.append("released")  # all ones can end a loop: a garbage law
                except ParameterError as e:
                    outcomes.append("refused" if "rng" in str(e) else str(e))

    worker = threading.Thread(target=run, daemon=True)  # a hang fails the test, not the run
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), f"a release looped on a stuck source after {outcomes}"
    assert set(outcomes) <= {"released", "refused"} and "refused" in outcomes


def test_a_stuck_run_across_calls_is_refused_and_random_words_pass() -> None:
    from dpnoise.checked_source import STUCK_RUN, CheckedSource

    src = CheckedSource(_Stuck(7, "words"))
    for _ in range(STUCK_RUN - 1):
        src.words(1)  # three equal words so far: a uniform source can do that (2^-128)
    with pytest.raises(ParameterError, match="same word"):
        src.words(1)
    gen = np.random.default_rng(5)

    class Own:
        def words(self, n: int) -> np.ndarray:
            return gen.integers(0, 2**64, n, dtype=np.uint64)

    out = dp.Laplace(epsilon=1.0, sensitivity=1.0).release(np.zeros(20_000), rng=Own())
    assert out.shape == (20_000,) and np.isfinite(out).all()
