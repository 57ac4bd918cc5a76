"""Exact sampling of a base-b exponential mechanism over lattice pieces.

The law: lattice points ``y`` of a finite set split into pieces (runs of consecutive
points); every point of piece ``i`` has the same integer score ``d_i >= 0`` and

    P(y) ∝ b^{d(y)},   b = p / 2^24  (p an integer in (0, 2^24)),

so piece ``i`` has weight ``len_i · b^{d_i}``.  Because ``b`` is a dyadic rational, every
weight is an exact rational and the whole law is sampled with integer arithmetic only -- no
floating-point value of any weight is ever formed (the failure of floating-point sampling of
the exponential mechanism: Ilvento, "Implementing the exponential mechanism with base-2
differential privacy", CCS 2020).

Algorithm (exact rejection; the accepted draw has exactly the law above):

1. ``near`` = pieces with ``d_i < c`` (``c`` = ``cutoff``), each of integer weight
   ``len_i · p^{d_i} · 2^{24(c - d_i)}``; one ``far`` bucket of weight
   ``(Σ_far len_i) · p^c`` -- every far piece proposed with ``b^c`` instead of ``b^{d_i}``;
2. draw an integer uniformly below the total weight (exact: uniform bits, reject above);
3. a near piece: output a uniform point of it; the far bucket: pick a far lattice point
   uniformly, accept it with probability ``b^{d_i - c}`` (``d_i - c`` independent
   Bernoulli(p/2^24) draws, each a 24-bit word compared with ``p``) else restart.

A proposal is weight ``len_i b^{min(d_i, c)}`` >= the target weight, and the acceptance is
the exact ratio, so the accepted point has the target law (von Neumann rejection).  With
``c`` chosen so that ``(Σ_far len) b^c <= Σ_near weight`` (callers: ``b^c · points <= 1`` and
a piece of score 0), an attempt succeeds with probability >= 1/2.

Timing: the attempts, the big-integer sizes and the Bernoulli chains depend on the scores
(the data); this sampler is exact but not constant-operation (see docs/timing.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from .words import WordStream

#: the base's denominator exponent: b = p / 2^BASE_BITS
BASE_BITS = 24


def uniform_below(words: WordStream, bound: int) -> int:
    """An exactly uniform integer in ``[0, bound)`` (``bound >= 1``): uniform bits of
    ``bound``'s length (the first word most significant), rejected when ``>= bound``
    (probability < 1/2 per try)."""
    bits = max(1, (bound - 1).bit_length())
    nwords = (bits + 63) // 64
    shift = 64 * nwords - bits
    while True:
        w = words.take(nwords)
        if nwords == 1:
            x = int(w[0]) >> shift
        else:  # the words as one big-endian integer (linear time, not a shift per word)
            x = int.from_bytes(w.astype(">u8").tobytes(), "big") >> shift
        if x < bound:
            return x


def bernoulli_power(words: WordStream, p: int, k: int) -> bool:
    """True with probability exactly ``(p / 2^24)^k``: ``k`` independent 24-bit draws all
    below ``p``."""
    left = int(k)
    while left > 0:
        n = min(left, 256)
        w = words.take(n) >> np.uint64(64 - BASE_BITS)
        if bool(np.any(w >= np.uint64(p))):
            return False
        left -= n
    return True


def scaled_powers(p: int, scores: list[int], cutoff: int) -> list[int]:
    """``p^s · 2^{24(c − s)}`` for each ``s`` in ``scores`` (all ``< c``), exactly: from the
    smallest score up, each the previous times ``p^δ`` divided exactly by ``2^{24δ}`` (a
    multiplication by a small number per distinct score instead of a power each)."""
    out: dict[int, int] = {}
    prev_s, prev_w = 0, 1 << (BASE_BITS * cutoff)
    for sc in sorted(set(scores)):
        step = sc - prev_s
        prev_w = (prev_w * p ** step) >> (BASE_BITS * step)
        prev_s = sc
        out[sc] = prev_w
    return [out[sc] for sc in scores]


def sample_pieces(words: WordStream, starts: NDArray[np.int64], lengths: NDArray[np.int64],
                  scores: NDArray[np.int64], p: int, cutoff: int) -> int:
    """One lattice point with ``P(y) ∝ (p/2^24)^{score(y)}`` (see the module docstring).

    ``starts``/``lengths``/``scores``: the pieces (lengths >= 0; pieces of length 0 carry
    no mass); ``cutoff``: ``c`` >= 0.  Returns the lattice point (an int).  The far bucket's
    points are the far pieces' points in the pieces' order.
    """
    keep = lengths > 0
    starts, lengths, scores = starts[keep], lengths[keep], scores[keep]
    near = scores < cutoff
    f_start, f_len, f_score = starts[~near], lengths[~near], scores[~near]
    f_cum = np.cumsum(f_len)

    def far_point(j: int) -> tuple[int, int]:
        k = int(np.searchsorted(f_cum, j, side="right"))
        offset = j - (int(f_cum[k - 1]) if k else 0)
        return int(f_start[k]) + offset, int(f_score[k])

    far_points = int(f_cum[-1]) if f_cum.size else 0
    return sample_near_far(words, starts[near], lengths[near], scores[near], far_points,
                           far_point, p, cutoff)


def sample_near_far(words: WordStream, n_start: NDArray[np.int64], n_len: NDArray[np.int64],
                    n_score: NDArray[np.int64], far_points: int,
                    far_point: Callable[[int], tuple[int, int]], p: int, cutoff: int) -> int:
    """The rejection loop of :func:`sample_pieces` given its near pieces (``n_*``: positive
    lengths, scores ``< cutoff``, in order) and the far bucket as a count of points and a
    map ``far_point(j) -> (point, score)`` from the bucket's ``j``-th point (scores
    ``>= cutoff``).  Callers that can locate far points without listing the far pieces
    (a bisection) pass that map; the words drawn, hence the output, are those of
    :func:`sample_pieces` on the same pieces."""
    weights = [int(ln) * w for ln, w in zip(n_len.tolist(), scaled_powers(
        p, n_score.tolist(), cutoff), strict=True)]
    weights.append(far_points * p ** cutoff)
    cum = np.cumsum(np.array(weights, dtype=object))
    total = int(cum[-1])
    while True:
        x = uniform_below(words, total)
        i = int(np.searchsorted(cum, x, side="right"))
        if i < len(n_len):
            return int(n_start[i]) + uniform_below(words, int(n_len[i]))
        point, score = far_point(uniform_below(words, far_points))
        if bernoulli_power(words, p, score - cutoff):
            return point
