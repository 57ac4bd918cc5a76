"""The sliced quantile step draws exactly what the full pass over all pieces draws: under a
seed, the same output and the same words consumed, for one step on any slice of the rows, for
one quantile and for the recursion of several quantiles (far bucket included: small cutoffs
force it)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dpnoise as dp
from dpnoise.exact.exponential_pieces import sample_pieces
from dpnoise.exact.words import WordStream
from dpnoise.mechanisms.interval_quantile import (
    IntervalQuantile,
    pieces,
    pieces_from_counts,
    smallest_power,
    snap,
)
from dpnoise.mechanisms.multi_quantile import JITTER_BITS, MultiQuantile
from dpnoise.mechanisms.quantile_step import SortedRows, sample_step

DECILES = tuple(k / 10 for k in range(1, 10))


def _streams(seed: int) -> tuple[WordStream, WordStream]:
    return (WordStream(dp.SeededRandom(seed), block=64),
            WordStream(dp.SeededRandom(seed), block=64))


@st.composite
def slices(draw: st.DrawFn) -> tuple:
    """Rows on 0..70 (distinct points, counts), a sub-lattice [lo, lo + N] and the rows in it."""
    pts = sorted(draw(st.sets(st.integers(0, 70), max_size=14)))
    counts = draw(st.lists(st.integers(1, 4), min_size=len(pts), max_size=len(pts)))
    lo = draw(st.integers(0, 70))
    n_points = draw(st.integers(0, 70 - lo))
    v = np.array(pts, dtype=np.int64)
    a = int(np.searchsorted(v, lo, "left"))
    b = int(np.searchsorted(v, lo + n_points, "right"))
    return v, np.array(counts, dtype=np.int64), lo, n_points, a, b


@given(slices(), st.integers(1, 12), st.data(), st.integers(1, 1 << 22), st.integers(0, 40),
       st.integers(0, 2 ** 31))
@settings(max_examples=150, deadline=None)
def test_one_step_on_a_slice_equals_the_full_pass(sl: tuple, den: int, data: st.DataObject,
                                                  below_one: int, cutoff: int, seed: int) -> None:
    """Bases ``p/2^24`` in [3/4, 1): far points are accepted often, so far draws count."""
    v, counts, lo, n_points, a, b = sl
    num = data.draw(st.integers(0, den))
    p = (1 << 24) - below_one
    cutoff = data.draw(st.sampled_from([0, 1, 2, cutoff]))
    rows = SortedRows.from_counts(v, counts)
    s, ln, d = pieces_from_counts(v[a:b] - lo, counts[a:b], n_points, num, den)
    w_full, w_slice = _streams(seed)
    for _ in range(3):
        assert (sample_step(w_slice, rows, a, b, lo, n_points, num, den, p, cutoff)
                == sample_pieces(w_full, s, ln, d, p, cutoff))
    assert int(w_slice.take(1)[0]) == int(w_full.take(1)[0])  # same words consumed


@given(st.lists(st.integers(0, 40), max_size=40), st.sampled_from([0.1, 0.25, 0.5, 0.9]),
       st.floats(0.05, 3.0), st.integers(0, 2 ** 31))
@settings(max_examples=40, deadline=None)
def test_one_quantile_equals_the_full_pass(data: list[int], level: float, eps: float,
                                           seed: int) -> None:
    m = IntervalQuantile(epsilon=eps, level=level, lower=0.0, upper=40.0, grid=1.0)
    x = np.array(data, dtype=float)
    s, ln, d = pieces(snap(x, 0.0, 1.0, 40), 40, m.level.numerator, m.level.denominator)
    w_full = WordStream(dp.SeededRandom(seed), block=4096)
    assert (m.release_index(x, dp.SeededRandom(seed))
            == sample_pieces(w_full, s, ln, d, m.p, m.cutoff))
    idx, cnt = np.unique(snap(x, 0.0, 1.0, 40), return_counts=True)
    assert m.release_counts(idx, cnt, dp.SeededRandom(seed)) == m.release_index(
        x, dp.SeededRandom(seed))


def _full_pass_multi(m: MultiQuantile, idx: np.ndarray, seed: int) -> list[int]:
    """The recursion as a full pass: every step builds all pieces of its rows."""
    words = WordStream(dp.SeededRandom(seed), block=4096)
    jitter = (words.take(idx.size) >> np.uint64(64 - JITTER_BITS)).astype(np.int64)
    fine = np.sort((idx << JITTER_BITS) + jitter)
    out: list[int] = []

    def recurse(x: np.ndarray, lo: int, hi: int, levels: list[Fraction]) -> None:
        if not levels:
            return
        k = (len(levels) - 1) // 2
        q = levels[k]
        qn, qd, p = m._step(q)
        s, ln, d = pieces(x - lo, hi - lo, qn, qd)
        v = lo + sample_pieces(words, s, ln, d, p, smallest_power(hi - lo + 1, p, Fraction(1)))
        out.append(v)
        cut = int(np.searchsorted(x, v, side="left"))
        recurse(x[:cut], lo, v, [r / q for r in levels[:k]])
        recurse(x[cut:], v, hi, [(r - q) / (1 - q) for r in levels[k + 1:]])

    recurse(fine, 0, ((m.n_points + 1) << JITTER_BITS) - 1, list(m.levels))
    return sorted(j >> JITTER_BITS for j in out)


@given(st.lists(st.integers(0, 30), max_size=60),
       st.sampled_from([(0.5,), (0.25, 0.75), (0.1, 0.5, 0.9), DECILES]),
       st.floats(0.1, 4.0), st.integers(0, 2 ** 31))
@settings(max_examples=30, deadline=None)
def test_several_quantiles_equal_the_full_pass(data: list[int], levels: tuple, eps: float,
                                               seed: int) -> None:
    m = MultiQuantile(epsilon=eps, levels=levels, lower=0.0, upper=30.0, grid=1.0)
    x = np.array(data, dtype=float)
    assert m.release_indices(x, dp.SeededRandom(seed)) == _full_pass_multi(
        m, snap(x, 0.0, 1.0, 30), seed)


def test_sorted_rows_from_rows_and_from_counts_agree() -> None:
    x = np.array([2, 2, 5, 7, 7, 7, 9], dtype=np.int64)
    a = SortedRows.from_sorted(x)
    b = SortedRows.from_counts([2, 5, 7, 9], [2, 1, 3, 1])
    assert a.values.tolist() == b.values.tolist() == [2, 5, 7, 9]
    assert a.upto.tolist() == b.upto.tolist() == [0, 2, 3, 6, 7]
    assert SortedRows.from_sorted(x[:0]).upto.tolist() == [0]
    assert a.split(0, 4, 7) == 2 and a.split(1, 3, 10) == 3
