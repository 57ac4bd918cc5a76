"""One exponential-mechanism quantile step on a slice of sorted rows, without listing the pieces.

The rows are given ONCE as their distinct sorted lattice points ``V[0..u)`` and the
cumulative row counts ``C[0..u]`` (``C[0] = 0``, ``C[i+1] − C[i]`` the rows at ``V[i]``).  A
step looks at the rows ``V[a..b)`` on the sub-lattice ``[lo, lo + N]`` (the rows between two
released neighbours, in the recursion of several quantiles; all rows for one quantile) and
draws exactly what :func:`~dpnoise.exact.exponential_pieces.sample_pieces` draws on the
pieces of :func:`~dpnoise.mechanisms.interval_quantile.pieces_from_counts` for
``(V[a..b) − lo, C[a+1..b] − C[a..b))`` -- the same words from the stream, the same output
-- but in ``O(log u + near)`` operations instead of ``O(b − a)``:

* with ``n = C[b] − C[a]``, ``A_i = C[i] − C[a]`` rows below ``V[i]`` and ``B_i = C[i+1] − C[a]``
  rows at or below it, a value's score is ``max(0, D·A_i − Q·n, Q·n − D·B_i)`` and the gap
  after it scores ``|D·B_i − Q·n|``; both ``A_i`` and ``B_i`` increase with ``i``, so the
  pieces with score ``< c`` (the near pieces, exact integer weights) are the values
  ``i ∈ [i_lo, i_hi)`` and the gaps ``i ∈ [g_lo, g_hi)`` found by binary search on ``C``
  (``D·B_i > Q·n − c  ⟺  C[i+1] > C[a] + ⌊(Q·n − c)/D⌋`` and
  ``D·A_i < Q·n + c  ⟺  C[i] < C[a] + ⌈(Q·n + c)/D⌉``);
* the far bucket holds the lattice's other points (``N + 1`` minus the near points); its
  ``j``-th point, in the pieces' order (the first piece, far values, far gaps), is found by
  bisection on ``V[i] − i`` (the lattice points in gaps up to ``i``, plus a constant).

Both paths therefore cost ``O(n)`` once (sorting the rows and finding their runs) plus
``O(log n + near)`` per step, instead of ``O(n)`` per step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exact.exponential_pieces import sample_near_far, sample_pieces
from ..exact.words import WordStream


@dataclass(frozen=True)
class SortedRows:
    """Distinct sorted lattice points ``values`` and cumulative row counts ``upto``
    (``upto[0] = 0``, ``upto[i + 1] − upto[i] >= 1`` rows at ``values[i]``)."""

    values: NDArray[np.int64]
    upto: NDArray[np.int64]

    @classmethod
    def from_sorted(cls, idx: ArrayLike) -> SortedRows:
        """From sorted (non-decreasing) lattice indices, one per row."""
        x = np.asarray(idx, dtype=np.int64)
        if x.size == 0:
            return cls(x, np.zeros(1, dtype=np.int64))
        new = np.empty(x.size, dtype=np.bool_)
        new[0] = True
        np.not_equal(x[1:], x[:-1], out=new[1:])
        if np.count_nonzero(new) == x.size:  # all distinct: no gather
            return cls(x, np.arange(x.size + 1, dtype=np.int64))
        first = np.flatnonzero(new)
        upto = np.empty(first.size + 1, dtype=np.int64)
        upto[:-1] = first
        upto[-1] = x.size
        return cls(x[first], upto)

    @classmethod
    def from_counts(cls, index: ArrayLike, counts: ArrayLike) -> SortedRows:
        """From distinct increasing lattice indices and their row counts (``>= 1``)."""
        v = np.asarray(index, dtype=np.int64)
        upto = np.zeros(v.size + 1, dtype=np.int64)
        np.cumsum(np.asarray(counts, dtype=np.int64), out=upto[1:])
        return cls(v, upto)

    @property
    def size(self) -> int:
        """Distinct points."""
        return int(self.values.size)

    def split(self, a: int, b: int, point: int) -> int:
        """The first ``i`` in ``[a, b]`` with ``values[i] >= point``."""
        return a + int(np.searchsorted(self.values[a:b], point, side="left"))


def sample_step(words: WordStream, rows: SortedRows, a: int, b: int, lo: int, n_points: int,
                q_num: int, q_den: int, p: int, cutoff: int) -> int:
    """The lattice point (relative to ``lo``) that ``sample_pieces`` draws on the pieces of
    the rows ``a..b`` of ``rows`` on the lattice ``[lo, lo + n_points]`` at level
    ``q_num/q_den`` with base ``p/2^24`` and cutoff ``cutoff`` (see the module docstring)."""
    if b <= a:  # no rows: one piece, the whole lattice, score 0
        zero = np.zeros(1, dtype=np.int64)
        return sample_pieces(words, zero, zero + (n_points + 1), zero, p, cutoff)
    return _Slice(rows, a, b, lo, n_points, q_num, q_den, cutoff).sample(words, p)


class _Slice:
    """The near pieces and the far-bucket map of one step (see :func:`sample_step`)."""

    def __init__(self, rows: SortedRows, a: int, b: int, lo: int, n_points: int,
                 q_num: int, q_den: int, cutoff: int) -> None:
        self.v, self.c = rows.values, rows.upto
        self.a, self.b, self.lo, self.cutoff, self.qd = a, b, lo, cutoff, q_den
        self.base = int(self.c[a])
        self.qn = q_num * (int(self.c[b]) - self.base)
        self.end = lo + n_points + 1  # one past the lattice's last point
        self.len0 = int(self.v[a]) - lo
        if cutoff > 0:
            below = self.base + (self.qn - cutoff) // q_den     # D·B > Qn − c ⟺ C > below
            above = self.base - ((-(self.qn + cutoff)) // q_den)  # D·A < Qn + c ⟺ C < above
            s = int(np.searchsorted(self.c, below, side="right"))
            t = int(np.searchsorted(self.c, above, side="left"))
        else:  # nothing is near
            s = t = a
        # near values: i in [s − 1, t); near gaps: i in [s − 1, t − 1); within [a, b]
        self.i_lo = self.g_lo = min(max(a, s - 1), b)
        self.i_hi = min(max(t, self.i_lo), b)
        self.g_hi = min(max(t - 1, self.g_lo), b)
        self.near0 = self.qn < cutoff

    def vx(self, i: int) -> int:
        """``V[i]``, and the lattice's end for ``i = b`` (so gaps ``g0..g1`` hold
        ``vx(g1) − vx(g0) − (g1 − g0)`` points)."""
        return int(self.v[i]) if i < self.b else self.end

    def gap_points(self, g0: int, g1: int) -> int:
        return self.vx(g1) - self.vx(g0) - (g1 - g0) if g1 > g0 else 0

    def value_score(self, i: int) -> int:
        a_i, b_i = int(self.c[i]) - self.base, int(self.c[i + 1]) - self.base
        return max(0, self.qd * a_i - self.qn, self.qn - self.qd * b_i)

    def gap_score(self, i: int) -> int:
        return abs(self.qd * (int(self.c[i + 1]) - self.base) - self.qn)

    def near(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Starts, lengths and scores of the near pieces (positive lengths), in order."""
        v, c, lo, qd, qn = self.v, self.c, self.lo, self.qd, self.qn
        vi = slice(self.i_lo, self.i_hi)
        v_start = v[vi] - lo
        v_score = np.maximum(np.maximum(qd * (c[vi] - self.base) - qn,
                                        qn - qd * (c[self.i_lo + 1:self.i_hi + 1] - self.base)),
                             0)
        gi = np.arange(self.g_lo, self.g_hi)
        nxt = np.where(gi + 1 < self.b, v[np.minimum(gi + 1, v.size - 1)], self.end)
        g_start = v[gi] + 1
        g_len = nxt - g_start
        g_score = np.abs(qd * (c[gi + 1] - self.base) - qn)
        keep = g_len > 0
        first = [0] if self.near0 and self.len0 > 0 else []
        starts = np.concatenate([np.array(first, dtype=np.int64), v_start,
                                 g_start[keep] - lo])
        lengths = np.concatenate([np.array([self.len0] * len(first), dtype=np.int64),
                                  np.ones(v_start.size, dtype=np.int64), g_len[keep]])
        scores = np.concatenate([np.array([qn] * len(first), dtype=np.int64), v_score,
                                 g_score[keep]])
        return starts, lengths, scores

    def far_point(self, j: int) -> tuple[int, int]:
        """The far bucket's ``j``-th point (relative to ``lo``) and its score, in the
        pieces' order: the first piece, the far values, the far gaps."""
        if not self.near0:
            if j < self.len0:
                return j, self.qn
            j -= self.len0
        left = self.i_lo - self.a
        right = self.b - self.i_hi
        if j < left + right:
            i = self.a + j if j < left else self.i_hi + (j - left)
            return int(self.v[i]) - self.lo, self.value_score(i)
        j -= left + right
        in_left = self.gap_points(self.a, self.g_lo)
        g0, g1 = (self.a, self.g_lo) if j < in_left else (self.g_hi, self.b)
        if j >= in_left:
            j -= in_left
        # the largest i in [g0, g1) with gap_points(g0, i) <= j: bisection on vx(i) − i
        target = j + self.vx(g0) - g0
        lo_i, hi_i = g0, g1
        while hi_i - lo_i > 1:
            mid = (lo_i + hi_i) // 2
            if self.vx(mid) - mid <= target:
                lo_i = mid
            else:
                hi_i = mid
        offset = j - self.gap_points(g0, lo_i)
        return int(self.v[lo_i]) + 1 + offset - self.lo, self.gap_score(lo_i)

    def sample(self, words: WordStream, p: int) -> int:
        starts, lengths, scores = self.near()
        near_points = int(lengths.sum())
        far = self.end - self.lo - near_points
        return sample_near_far(words, starts, lengths, scores, far, self.far_point, p,
                               self.cutoff)
