"""The one-value (scalar) release path of every mechanism: same words, same law.

``release(x)`` for one number runs a Python-integer kernel (:mod:`dpnoise.exact.scalar`)
instead of the numpy array kernel.  It must read the same words and return exactly what the
array kernel returns for them (checked on seeded streams and on scripted words that force the
2^-63 extension), follow ``noise(x)`` (chi-square), and refuse bad input before any word.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnoise import (
    AnalyticGaussian,
    ClampedLaplace,
    CountNoise,
    CryptoRandom,
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    ParameterError,
    SeededRandom,
    Staircase,
    TruncatedLaplace,
)
from dpnoise.randomness import word_ints

from .helpers import CountingSource, bytes_from_fork, law_chi_square_pvalue, run_threads

REAL = {
    "laplace": (lambda: Laplace(epsilon=1.0, sensitivity=1.0),
                [0.0, 3.3, -7.1, 1e6, 0.49999999999999994 / 4096, -2.5 / 4096]),
    "laplace-coarse": (lambda: Laplace(epsilon=0.7, sensitivity=3.0, grid=0.5), [0.25, -1.0]),
    "clamped": (lambda: ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0),
                [0.0, 0.3, 9.99, 10.0]),
    "truncated": (lambda: TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0),
                  [0.0, 2.7, -1e5]),
    "staircase-joint": (lambda: Staircase(epsilon=1.0, sensitivity=1.0), [0.0, 4.2, -3.0]),
    "staircase-product": (lambda: Staircase(epsilon=0.01, sensitivity=1.0, grid=0.25),
                          [0.0, 4.2]),
    "analytic-gaussian": (lambda: AnalyticGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0),
                          [0.0, 5.5, -123.0]),
    "gaussian": (lambda: Gaussian(epsilon=0.5, delta=1e-5, sensitivity=2.0), [1.0, -0.1]),
}
COUNT = {
    "geometric": (lambda: Geometric(epsilon=1.0, lower=0, upper=20), [0, 3, 20]),
    "geometric-free": (lambda: Geometric(epsilon=0.3, sensitivity=2, lower=None, upper=None,
                                         boundary="none"), [0, -17, 1 << 40]),
    "discrete-gaussian": (lambda: DiscreteGaussian(epsilon=1.0, delta=1e-6, lower=0, upper=10),
                          [0, 5, 10]),
    "count-noise": (lambda: CountNoise(epsilon=2.18, D=6, eta=0.8, upper=40), [0, 3, 40]),
    "count-noise-clip": (lambda: CountNoise.optimal(epsilon=0.5, D=8, eta=0.1, upper=30,
                                                    boundary="clip"), [0, 15, 30]),
}
CASES = {**REAL, **COUNT}
_BUILT: dict[str, object] = {}


def _mech(name: str) -> object:
    if name not in _BUILT:
        _BUILT[name] = CASES[name][0]()
    return _BUILT[name]


@pytest.mark.parametrize("name", list(CASES))
def test_scalar_equals_array_kernel_on_the_same_words(name: str) -> None:
    """40 scalar releases == 40 one-element array releases from the same seeded stream, with
    the same output type as the 0-d array path and the same number of words consumed."""
    m = _mech(name)
    if name == "staircase-product":
        assert not m.law.joint and m.law.words_per_draw == 3
    if name == "staircase-joint":
        assert m.law.joint
    for i, x in enumerate(CASES[name][1]):
        fast_src, ref_src = SeededRandom(100 + i), SeededRandom(100 + i)
        fast = [m.release(x, rng=fast_src) for _ in range(40)]
        ref = [m.release(np.array([x]), rng=ref_src)[0] for _ in range(40)]
        assert fast == ref, (name, x)
        zero_d = m.release(np.array(x), rng=SeededRandom(100 + i))  # the 0-d array path
        assert fast[0] == zero_d and type(fast[0]) is type(zero_d)
        assert type(fast[0]) is (int if name in COUNT else float)
        np.testing.assert_array_equal(fast_src.words(4), ref_src.words(4))
    # numpy scalars take the same path and give the same values
    x = CASES[name][1][0]
    y = np.int64(x) if name in COUNT else np.float64(x)
    assert m.release(y, rng=SeededRandom(5)) == m.release(x, rng=SeededRandom(5))


class ScriptedWords:
    """A source handing out a fixed list of words (no ``ints``: the generic path)."""

    def __init__(self, words: list[int]) -> None:
        self.left = list(words)

    def words(self, n: int) -> np.ndarray:
        out, self.left = self.left[:n], self.left[n:]
        assert len(out) == n, "script exhausted"
        return np.array(out, dtype=np.uint64)


@pytest.mark.parametrize("name", ["laplace", "truncated", "staircase-joint",
                                  "staircase-product", "geometric-free"])
@pytest.mark.parametrize("first", [0, 1 << 63])
def test_extension_event_matches_array_kernel(name: str, first: int) -> None:
    """A first word whose low 63 bits are zero (probability 2^-63) continues the count on
    fresh words in both paths identically."""
    m = _mech(name)
    x = CASES[name][1][0]
    rest = [0x9E3779B97F4A7C15, 0x0123456789ABCDEF, 0, 1 << 40, 0xFFFF0000FFFF0000]
    script = [first, *rest]
    fast = m.release(x, rng=ScriptedWords(script))
    ref = m.release(np.array([x]), rng=ScriptedWords(script))[0]
    assert fast == ref
    assert abs(fast - x) > 0 or name == "geometric-free"


def test_count_noise_boundary_cell_draws_the_extra_word() -> None:
    """A first digit in a cell holding a CDF boundary (probability <= 2D/2^16) reads 48 bits
    of one more word, in both paths identically."""
    m = _mech("count-noise")
    table = m.table
    cell = table._lut_list.index(table._sentinel)  # a cell holding a CDF boundary
    for low in (0, 0xFFFFFFFFFFFF0000):
        script = [cell | 0x1234_5678_0000_0000, low, 7, 9]  # low 16 bits = the digit
        fast = m.release(5, rng=ScriptedWords(script))
        ref = m.release(np.array([5]), rng=ScriptedWords(script))[0]
        assert fast == ref


@pytest.mark.parametrize("name", ["laplace", "clamped", "truncated", "staircase-joint",
                                  "staircase-product", "analytic-gaussian", "geometric",
                                  "discrete-gaussian", "count-noise"])
def test_scalar_releases_follow_noise(name: str) -> None:
    m = _mech(name)
    x = CASES[name][1][1]
    rng = SeededRandom(77)
    y = np.array([m.release(x, rng=rng) for _ in range(6000)])
    assert law_chi_square_pvalue(y, m.noise(x)) > 1e-3


BAD_REAL = [math.nan, math.inf, -math.inf, True, np.bool_(False), "1", None, 1e300, 10**400]


@pytest.mark.parametrize("name", list(REAL))
def test_bad_scalars_refused_before_any_word(name: str) -> None:
    m = _mech(name)
    bad = list(BAD_REAL)
    if name == "clamped":
        bad += [-1e-9, 10.5, 11]
    for value in bad:
        src = CountingSource()
        with pytest.raises(ParameterError):
            m.release(value, rng=src)
        assert src.drawn == 0, value


@pytest.mark.parametrize("name", list(COUNT))
def test_bad_counts_refused_before_any_word(name: str) -> None:
    m = _mech(name)
    bad = [1.5, math.nan, True, "3", 1 << 53, -(1 << 53)]
    if name != "geometric-free":
        bad += [-1, {"geometric": 21, "discrete-gaussian": 11}.get(name, 41 if name ==
                                                                    "count-noise" else 31)]
    for value in bad:
        src = CountingSource()
        with pytest.raises(ParameterError):
            m.release(value, rng=src)
        assert src.drawn == 0, value
    # an integer-valued float count is still accepted (through the array checks)
    assert m.release(3.0, rng=SeededRandom(1)) == m.release(3, rng=SeededRandom(1))


def test_buffered_words_keep_keystream_order() -> None:
    """Scalar ints and array words of one source interleave into the plain keystream."""
    ref = SeededRandom(3).words(1500).tolist()
    s = SeededRandom(3)
    got = word_ints(s, 2) + word_ints(s, 3) + s.words(5).tolist() + word_ints(s, 9)
    buf = np.empty(508, dtype=np.uint64)
    from dpnoise.randomness import fill_words

    fill_words(s, buf, 500)
    got += buf[:500].tolist()
    for _ in range(100):
        got += word_ints(s, 3)
    got += word_ints(s, 300) + s.words(381).tolist()
    assert got == ref


def test_scalar_words_after_fork_are_fresh() -> None:
    source = CryptoRandom()
    source.ints(3)  # the parent's buffer now holds unused words
    child = bytes_from_fork(lambda: np.array(source.ints(4), dtype=np.uint64).tobytes(), 32)
    parent = np.array(source.ints(4), dtype=np.uint64).tobytes()
    assert len(child) == 32 and child != parent


def test_threads_sharing_a_source_never_reuse_a_word() -> None:
    """Four threads take words from one seeded source: every keystream word once, no repeat."""

    s = SeededRandom(9)
    got: list[list[int]] = [[] for _ in range(4)]

    def work(i: int) -> None:
        for _ in range(600):
            got[i].extend(word_ints(s, 3))

    run_threads(work, 4)
    words = [w for g in got for w in g]
    assert sorted(words) == sorted(SeededRandom(9).words(len(words)).tolist())
