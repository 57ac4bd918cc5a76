"""Alias-method sampling with exact dyadic probabilities.

A table with ``T = 2^m`` columns (m >= 1) and column mass ``D = 2^(64-m)``
represents integer weights ``W_i`` that sum to exactly ``2^64``.  One uniform
64-bit word ``w`` is split into a column ``c = w >> (64-m)`` and a threshold draw
``u = w mod D``; the outcome is ``c`` if ``u < thr[c]`` else ``alias[c]``.  Hence

    P(i) = (thr[i] + sum_{c: alias[c] = i} (D - thr[c])) / 2^64        (exactly)

and :meth:`AliasTable.exact_weights` recomputes these numerators from the table that
is actually sampled, so a verifier checks the sampled pmf, not the intended one.
One word per draw, no loops, no floating point in the sampling path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..randomness import RandomSource

TOTAL = 1 << 64


def quantize_weights(probabilities: Sequence[float] | NDArray[np.float64]) -> list[int]:
    """Integer weights summing to exactly 2^64, proportional to ``probabilities``.

    Largest-remainder rounding of the *exact* shares: each float is an exact dyadic
    rational, so the shares floor(p_i·2^64/Σp) and their remainders are computed with
    plain integer arithmetic (fast for 10^5 entries, no Fractions); the remaining units go
    one each to the largest remainders.  Every weight is within one unit of its share.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or np.any(p < 0) or not np.all(np.isfinite(p)):
        raise ParameterError("probabilities must be a non-empty 1-D array of finite values >= 0")
    ratios = [float(x).as_integer_ratio() for x in p.tolist()]
    den = max(d for _, d in ratios)
    ints = [n * (den // d) for n, d in ratios]
    total = sum(ints)
    if total <= 0:
        raise ParameterError("probabilities must not all be zero")
    shares = [divmod(v << 64, total) for v in ints]
    weights = [q for q, _ in shares]
    rest = TOTAL - sum(weights)
    order = sorted(range(len(shares)), key=lambda i: shares[i][1], reverse=True)
    for i in order[:rest]:
        weights[i] += 1
    return weights


class AliasTable:
    """Exact alias sampler for integer weights summing to 2^64."""

    __slots__ = ("_alias", "_size", "_thr", "bits", "columns", "mass")

    def __init__(self, weights: Sequence[int]) -> None:
        w = [int(x) for x in weights]
        if not w or any(x < 0 for x in w) or sum(w) != TOTAL:
            raise ParameterError("alias weights must be non-negative integers summing to 2^64")
        n = len(w)
        bits = max(1, (n - 1).bit_length())
        cols = 1 << bits
        mass = TOTAL >> bits
        w = w + [0] * (cols - n)
        thr = [0] * cols
        alias = list(range(cols))
        small = [i for i in range(cols) if w[i] < mass]
        large = [i for i in range(cols) if w[i] >= mass]
        rem = list(w)
        while small and large:
            s = small.pop()
            g = large[-1]
            thr[s] = rem[s]
            alias[s] = g
            rem[g] -= mass - rem[s]
            if rem[g] < mass:
                large.pop()
                small.append(g)
        for i in large + small:  # exactly full columns (integer arithmetic: no drift)
            if rem[i] != mass:
                raise AssertionError("alias construction lost mass")  # pragma: no cover
            thr[i] = mass
            alias[i] = i
        self.bits = bits
        self.columns = cols
        self.mass = mass
        self._size = n
        self._thr = np.array(thr, dtype=np.uint64)
        self._alias = np.array(alias, dtype=np.int64)

    @property
    def size(self) -> int:
        """Number of outcomes 0..size-1."""
        return self._size

    def sample_words(self, words: NDArray[np.uint64]) -> NDArray[np.int64]:
        """Outcomes for the given uniform words (one word per outcome)."""
        col = (words >> np.uint64(64 - self.bits)).astype(np.int64)
        u = words & np.uint64(self.mass - 1)
        return np.where(u < self._thr[col], col, self._alias[col])

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        return self.sample_words(rng.words(n))

    def exact_weights(self) -> list[int]:
        """Numerators of the sampled probabilities (denominator 2^64), from the table itself."""
        out = [0] * self.columns
        thr = [int(x) for x in self._thr]
        alias = [int(x) for x in self._alias]
        for c in range(self.columns):
            out[c] += thr[c]
            out[alias[c]] += self.mass - thr[c]
        if any(out[self._size :]):
            raise AssertionError("padding columns carry mass")  # pragma: no cover
        return out[: self._size]
