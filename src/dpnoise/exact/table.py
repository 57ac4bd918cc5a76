"""Finite-table integer sampler: a pmf on {offset .. offset+m−1} given by 64-bit weights.

The weights W_i are non-negative integers summing to exactly 2^64 and the pmf that is
sampled is W_i / 2^64 *exactly*: one uniform 64-bit word w is mapped by the integer
inverse CDF  i = #{j >= 1 : C_j <= w},  C_j = W_0 + … + W_{j−1}.  The weights ARE the
pmf (:meth:`IntegerTable.exact_weights` recomputes them from the cumulative table used).

Speed: the uniform w is generated lazily, 16 bits first.  A 2^16-entry lookup table
indexed by those top bits holds the outcome of every cell [k·2^48, (k+1)·2^48) that
contains no C_j in its interior; only when the first 16 bits fall in one of the <= m−1
cells containing a boundary (probability <= (m−1)/2^16) are the remaining 48 bits drawn
from a fresh word and the full 64-bit comparison made (``searchsorted`` on the exact C_j).
The bits of w are i.i.d. uniform either way, so the outcome law is exactly the inverse
CDF of a uniform 64-bit word; one ChaCha20 word serves four draws.

:func:`quantize_symmetric` turns an exact rational pmf into such weights: every weight
off the centre is rounded *down* (so no outcome gains mass and zero stays zero), the
centre takes the remainder (a few units of 2^-64), and the table stays symmetric.

:meth:`IntegerTable.release` is the fused, chunked kernel (2^14 per chunk, preallocated
buffers, ufuncs with ``out=``): Y = clip(clip(n, lo_in, hi_in) + Z, lo_out, hi_out) in
int64.  Every element costs the same operations whatever n is (no branch on n).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from fractions import Fraction
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..randomness import RandomSource, fill_words, word_ints

TOTAL = 1 << 64
_LITTLE = sys.byteorder == "little"
LUT_BITS = 16
_CHUNK = 1 << 14
_I64_MIN = int(np.iinfo(np.int64).min)
_I64_MAX = int(np.iinfo(np.int64).max)
MAX_OUTCOMES = 1 << 14
_DIGITS_PER_WORD = 64 // LUT_BITS


def quantize_symmetric(pmf: Sequence[Fraction]) -> list[int]:
    """64-bit weights for a symmetric rational pmf on −D..D (odd length, centre = index D)."""
    n = len(pmf)
    if n % 2 != 1:
        raise ParameterError("a symmetric pmf needs an odd number of entries")
    c = n // 2
    if any(pmf[i] != pmf[n - 1 - i] for i in range(c)) or sum(pmf) != 1:
        raise ParameterError("pmf must be symmetric and sum to 1")
    if any(p < 0 for p in pmf):
        raise ParameterError("pmf must be non-negative")
    w = [int(p * TOTAL) for p in pmf]  # floor (p >= 0)
    w[c] = TOTAL - (sum(w) - w[c])
    return w


class IntegerTable:
    """Exact sampler for P(Z = offset + i) = weights[i] / 2^64 (integer inverse CDF)."""

    def __init__(self, weights: Sequence[int], offset: int) -> None:
        w = [int(x) for x in weights]
        if not w or len(w) > MAX_OUTCOMES or any(x < 0 for x in w) or sum(w) != TOTAL:
            raise ParameterError(
                f"table weights must be 1..{MAX_OUTCOMES} non-negative integers summing to 2^64"
            )
        self.offset = int(offset)
        cum = [0]
        for x in w:
            cum.append(cum[-1] + x)
        self._cum = tuple(cum)  # C_0 = 0 .. C_m = 2^64
        inner = cum[1:-1]
        # boundaries strictly below 2^64 (C_j = 2^64 only after the last non-zero weight)
        self._bounds = np.array([c for c in inner if c < TOTAL], dtype=np.uint64)
        shift = 64 - LUT_BITS
        cell = 1 << shift
        lut = np.empty(1 << LUT_BITS, dtype=np.int64)
        amb = np.zeros(1 << LUT_BITS, dtype=bool)
        starts = np.arange(1 << LUT_BITS, dtype=np.uint64) << np.uint64(shift)
        lut[:] = np.searchsorted(self._bounds, starts, side="right").astype(np.int64)
        for c in inner:
            if c < TOTAL and c % cell:  # a boundary inside a cell: that cell is ambiguous
                amb[c >> shift] = True
        vals = lut + self.offset
        small = vals.min() > -(1 << 15) and vals.max() < (1 << 15)
        dtype = np.int16 if small else np.int64
        self._sentinel = int(np.iinfo(dtype).min)  # marks a boundary cell
        self._lut = np.where(amb, self._sentinel, vals).astype(dtype)
        self.weights: tuple[int, ...] = tuple(w)

    @property
    def support(self) -> tuple[int, int]:
        nz = [i for i, x in enumerate(self.weights) if x]
        return self.offset + nz[0], self.offset + nz[-1]

    def exact_weights(self) -> list[int]:
        """W_i = C_{i+1} − C_i from the cumulative table the sampler compares against."""
        return [b - a for a, b in zip(self._cum[:-1], self._cum[1:], strict=True)]

    def outcome_of_words(self, words: NDArray[np.uint64]) -> NDArray[np.int64]:
        """The plain inverse CDF of each word (reference implementation, for tests)."""
        return np.searchsorted(self._bounds, words, side="right").astype(np.int64) + self.offset

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        return self.release(rng, None, n)

    @cached_property
    def _lut_list(self) -> list[int]:
        return self._lut.astype(np.int64).tolist()

    def draw_one(self, rng: RandomSource) -> int:
        """One Z, as :meth:`release` draws its first value: the first 16-bit digit of one
        fresh word (the low bits on little-endian machines, as numpy's uint16 view) through
        the lookup table, and in a boundary cell the top 48 bits of one more word."""
        (w,) = word_ints(rng, 1)
        d = (w & 0xFFFF) if _LITTLE else (w >> 48)
        z = self._lut_list[d]
        if z == self._sentinel:  # probability <= (m − 1)/2^16: 48 fresh bits decide
            (low,) = word_ints(rng, 1)
            full = (d << (64 - LUT_BITS)) | (low >> LUT_BITS)
            z = int(np.searchsorted(self._bounds, np.uint64(full), side="right")) + self.offset
        return z

    def release(
        self,
        rng: RandomSource,
        centre: NDArray[np.int64] | None,
        n: int | None = None,
        *,
        clip_in: tuple[int | None, int | None] = (None, None),
        clip_out: tuple[int | None, int | None] = (None, None),
    ) -> NDArray[np.int64]:
        """clip(clip(centre, *clip_in) + Z, *clip_out) for each centre (or Z alone)."""
        if centre is not None:
            n = centre.size
        if n is None:
            raise ParameterError("need centre or n")
        out = np.empty(n, dtype=np.int64)
        chunk = min(max(n, 1), _CHUNK)
        words = np.empty(chunk // _DIGITS_PER_WORD + 16, dtype=np.uint64)
        digits = words.view(np.uint16)
        lut, sentinel = self._lut, self._sentinel
        zbuf = np.empty(chunk, dtype=lut.dtype)
        cin = np.empty(chunk, dtype=np.int64)
        lo_i = _I64_MIN if clip_in[0] is None else int(clip_in[0])
        hi_i = _I64_MAX if clip_in[1] is None else int(clip_in[1])
        lo_o = None if clip_out[0] is None else int(clip_out[0])
        hi_o = None if clip_out[1] is None else int(clip_out[1])
        do_in = clip_in != (None, None)
        for start in range(0, n, chunk):
            c = min(chunk, n - start)
            fill_words(rng, words, -(-c // _DIGITS_PER_WORD))
            d = digits[:c]
            z = zbuf[:c]
            o = out[start : start + c]
            np.take(lut, d, out=z, mode="clip")  # indices < 2^16 always: no bounds check
            if z.min() == sentinel:  # first digit in a boundary cell: 48 fresh bits decide
                k = np.flatnonzero(z == sentinel)
                low = rng.words(k.size) >> np.uint64(LUT_BITS)
                full = (d[k].astype(np.uint64) << np.uint64(64 - LUT_BITS)) | low
                z[k] = self.outcome_of_words(full)
            if centre is None:
                o[:] = z
            else:
                ce = centre[start : start + c]
                if do_in:
                    np.clip(ce, lo_i, hi_i, out=cin[:c])
                    ce = cin[:c]
                np.add(z, ce, out=o)
            if lo_o is not None and hi_o is not None:
                np.clip(o, lo_o, hi_o, out=o)
            elif lo_o is not None:
                np.maximum(o, lo_o, out=o)
            elif hi_o is not None:
                np.minimum(o, hi_o, out=o)
        return out
