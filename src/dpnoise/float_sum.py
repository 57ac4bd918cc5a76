"""``math.fsum`` of a float64 array, quickly when its values span many binades.

``math.fsum`` returns the exactly rounded sum, but its running list of partials grows with
the spread of the exponents: summing the ~10^6 terms p(z)·z² of a wide discrete Gaussian
takes over half a second, and the 1.1·10^7 cells of a truncated Laplacian table at
δ = 10^-300 (values from 10^-304 to 10^-4) over 6 s.  :func:`fsum_array` computes the same
float another way.  A finite double with sign bit σ, biased exponent field E (0..2046) and
52-bit fraction F is (−1)^σ·M·2^(e − 1075) with e = max(E, 1) and the integer
M = F + [E > 0]·2^52 < 2^53 (IEEE 754-2008, Sec. 3.4; E = 0 are the subnormals), so the
exact sum is N·2^−1074 for the integer

    N = Σ_{bins (σ, E)} 2^(e − 1) · Σ_{x in the bin} (−1)^σ·M(x).

Each x is split without error into x_hi (x with the 26 low fraction bits cleared) and
x_lo = x − x_hi (exact: the two share their leading bits, or are both subnormal).  In a bin,
x_hi is an integer multiple of 2^(e − 1049) below 2^27 of them and x_lo one of 2^(e − 1075)
below 2^26, so over a chunk of at most 2^18 terms (2 MB: it stays in cache) every partial
sum that ``numpy.bincount`` forms is an integer multiple of the unit below 2^45 of them:
it is exact in float64 (a bin sum beyond the float range shows up as inf, and then that
chunk's terms are added one by one as Python integers).  The bin sums are scaled to
integers (``ldexp``, exact), added as int64 (exact for 2^15 chunks, then flushed into a
Python integer), N is formed once, and N / 2^1074 is rounded once by Python's correctly
rounded integer true division -- round-half-even, as ``math.fsum``.
The same float, bit for bit, in five passes over the data.  :class:`ExactSum` keeps the
integer bins between calls, so a sum can be fed in pieces (the verifier's hockey-stick sums
over 10^7 outcomes, in cache-sized chunks).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

#: terms per chunk: every bin's float partial sum stays an integer below 2^45 units
_CHUNK = 1 << 18
#: chunks of int64 bin sums (each below 2^45) added before a flush into a Python integer
_FLUSH = 1 << 15
_SPLIT = 26  # low fraction bits that go to x_lo
_HIGH = np.uint64(((1 << 64) - 1) ^ ((1 << _SPLIT) - 1))
_S52 = np.uint64(52)
_BINS = 4096  # sign bit × 2048 exponent fields
_E = np.maximum(np.arange(_BINS) & 0x7FF, 1)  # e = max(E, 1) of each bin
_TO_LO_UNITS = 1075 - _E  # x_lo sums / 2^(e − 1075)
_TO_HI_UNITS = _TO_LO_UNITS - _SPLIT  # x_hi sums / 2^(e − 1049)


def _flush(hi: NDArray[np.int64], lo: NDArray[np.int64]) -> int:
    """Σ_bins 2^(e − 1)·(hi·2^26 + lo): N of the module docstring (signs are in hi, lo)."""
    total = 0
    for k in np.flatnonzero((hi != 0) | (lo != 0)).tolist():
        total += ((int(hi[k]) << _SPLIT) + int(lo[k])) << (int(_E[k]) - 1)
    return total


class ExactSum:
    """A running exact sum of float64 terms given in arrays of any sizes, in any order.

    :meth:`value` is ``math.fsum`` of every term added, bit for bit (the module docstring's
    N, rounded once), so a long sum can be fed in cache-sized chunks.  Non-finite terms give
    ``math.fsum``'s own result for them (inf, nan, or its ``ValueError`` for inf − inf).
    """

    def __init__(self) -> None:
        self._hi = np.zeros(_BINS, dtype=np.int64)
        self._lo = np.zeros(_BINS, dtype=np.int64)
        self._chunks = 0
        self._n = 0
        self._specials: set[float] = set()  # the kinds of non-finite terms seen
        self._only_negative_zeros = True

    def add(self, x: NDArray[np.float64]) -> None:
        """Add every term of ``x`` (flattened)."""
        x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        bits = x.view(np.uint64)
        for i in range(0, x.size, _CHUNK):
            self._add_chunk(x[i:i + _CHUNK], bits[i:i + _CHUNK])

    def _add_chunk(self, xc: NDArray[np.float64], b: NDArray[np.uint64]) -> None:
        key = (b >> _S52).view(np.int64)  # σ·2048 + E
        x_hi = (b & _HIGH).view(np.float64)
        hb = np.bincount(key, weights=x_hi, minlength=_BINS)
        with np.errstate(invalid="ignore"):  # inf − inf: handled below
            lb = np.bincount(key, weights=xc - x_hi, minlength=_BINS)
        if not (np.all(np.isfinite(hb)) and np.all(np.isfinite(lb))):  # inf, nan, overflow
            self._add_rare(xc)
            return
        if self._only_negative_zeros and (hb.any() or lb.any()
                                          or not np.all(b == np.uint64(1 << 63))):
            self._only_negative_zeros = False
        self._hi += np.ldexp(hb, _TO_HI_UNITS).astype(np.int64)
        self._lo += np.ldexp(lb, _TO_LO_UNITS).astype(np.int64)
        self._chunks += 1
        if self._chunks % _FLUSH == 0:
            self._n += _flush(self._hi, self._lo)
            self._hi[:] = 0
            self._lo[:] = 0

    def _add_rare(self, xc: NDArray[np.float64]) -> None:
        """A chunk with non-finite terms or bin sums beyond the float range: its finite
        terms one by one as exact integers (N's units of 2^-1074), its others by kind."""
        self._only_negative_zeros = False
        fin = np.isfinite(xc)
        self._specials.update(float(v) if not math.isnan(v) else math.nan
                              for v in set(xc[~fin].tolist()))
        for v in xc[fin].tolist():
            num, den = v.as_integer_ratio()  # den = 2^k, k <= 1074
            self._n += num * ((1 << 1074) // den)

    def value(self) -> float:
        """``math.fsum`` of every term added so far."""
        if self._specials:
            return math.fsum(sorted(self._specials, key=repr))
        n = self._n + _flush(self._hi, self._lo)
        if n == 0:  # math.fsum's own zero (its sign for all −0.0 terms varies with Python)
            return math.fsum([-0.0]) if self._only_negative_zeros and self._chunks else 0.0
        return n / (1 << 1074)


def fsum_array(x: NDArray[np.float64]) -> float:
    """``math.fsum(x.tolist())`` for a float64 array (flattened), bit for bit.

    Non-finite values give ``math.fsum``'s result for them; an exact sum beyond the float
    range raises ``OverflowError``, as ``math.fsum`` does.
    """
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    if x.size < 64:
        return math.fsum(x.tolist())
    acc = ExactSum()
    acc.add(x)
    return acc.value()
