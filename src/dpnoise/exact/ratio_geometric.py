"""Exact geometric law with a rational dyadic ratio: p(k) ∝ 2^(-a·k/M), k >= 0.

The staircase mechanism (Soria-Comas & Domingo-Ferrer 2013) needs a step index whose
probabilities fall by a
factor e^(-ε) per step.  e^(-ε) is irrational, so it cannot be sampled exactly from
random bits with a fixed number of words; instead dpnoise uses the largest ratio of the
form 2^(-a/M) (a, M positive integers, M <= 2^16) whose *exact* privacy loss is <= ε:

    k = Q·M + R,    P(Q = q) = 2^(-a·q) (1 − 2^(-a)),    P(R = r) = W_r / 2^64,

where Q = floor(T / a) with T ~ Geometric(1/2) read from trailing zero bits (so
P(Q >= q) = P(T >= a·q) = 2^(-a·q) exactly), and R comes from a 64-bit alias table with
integer weights W_r ∝ 2^(-a·r/M).  The block ratio 2^(-a) is exact, so the pmf is
periodic in log-ratio with period M and every probability is a known dyadic rational:
the verifier checks the pmf that is sampled.  Each draw reads two words (one more with
probability 2^-63, independent of any data), and the in-block weights are kept within
a 2^40 dynamic range so the 64-bit quantisation stays below ~1e-7 relative.

References:
  * J. Soria-Comas, J. Domingo-Ferrer, "Optimal data-independent noise for differential
    privacy", Information Sciences 250:200-214, 2013.
"""

from __future__ import annotations

import math
from functools import cached_property, lru_cache

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..params import LN2
from ..randomness import RandomSource
from .alias import AliasTable, quantize_weights_array

MAX_SPAN_BITS = 52
_LOW63 = np.uint64((1 << 63) - 1)
_TOP = np.uint64(1 << 63)
_ONE = np.uint64(1)


def ctz63(words: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Trailing zeros of the low 63 bits of each word (63 when they are all zero)."""
    lo = words | _TOP
    t = lo & (~lo + _ONE)
    return np.bitwise_count(t - _ONE).astype(np.int64)


def extend_counts(rng: RandomSource, words: NDArray[np.uint64], T: NDArray[np.int64]) -> None:
    """Where the low 63 bits were all zero (p = 2^-63), continue the count on fresh words."""
    pending = np.flatnonzero((words & _LOW63) == 0)
    T[pending] = 63
    while pending.size:
        w = rng.words(pending.size) & _LOW63
        nz = w != 0
        T[pending[nz]] += ctz63(w[nz])
        T[pending[~nz]] += 63
        pending = pending[~nz]


@lru_cache(maxsize=128)
def _table(M: int, inner: float) -> AliasTable:
    r = np.arange(M, dtype=np.float64)
    return AliasTable(quantize_weights_array(np.exp(-inner * r)))


def ratio_candidates(target: float, max_block: int) -> list[tuple[int, int]]:
    """All (a, M) with a = floor(M·target) >= 1, M <= max_block, best a/M first.

    The in-block dynamic range a·(M−1)/M bits is capped at 52 bits, so the 64-bit
    quantisation error stays below ~2^-12 relative (the exact loss is then computed
    from the integer tables, so the cap only bounds how much of the budget it costs).
    Ties in a/M keep the smallest M.
    """
    if not (target > 0 and math.isfinite(target)):
        raise ParameterError(f"ratio exponent must be finite and > 0, got {target!r}")
    if _TABLE_FROM <= max_block <= _TABLE_BLOCK:
        ar, mr, first_m = _candidate_table(target)
        keep = first_m <= max_block
        if keep.any():
            return list(zip(ar[keep].tolist(), mr[keep].tolist(), strict=True))
        max_block = max(1, max_block)  # none: the direct computation raises the error
    return _ratio_candidates_direct(target, max_block)


_TABLE_BLOCK = 1 << 16  # the largest block length (RatioGeometric's M <= 2^16)
_TABLE_FROM = 1 << 12  # below this cap the direct computation is quicker than the table


def _blocks(target: float, top: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every block length M = 1 .. ``top`` in order (as a loop over M would: a =
    floor(M·target) in the same float64 product) with a >= 1, up to the first M with
    a >= 1 past the span cap: the arrays (M, a)."""
    Ms = np.arange(1, top + 1, dtype=np.int64)
    a = np.floor(Ms * target).astype(np.int64)
    valid = a >= 1
    over = valid & (a * (Ms - 1) > MAX_SPAN_BITS * Ms)
    if over.any():
        stop = int(np.argmax(over))
        Ms, a, valid = Ms[:stop], a[:stop], valid[:stop]
    return Ms[valid], a[valid]


@lru_cache(maxsize=32)
def _candidate_table(target: float) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                             NDArray[np.int64]]:
    """Every candidate (a, M) for block lengths up to 2^16, in :func:`ratio_candidates`'s
    order, with the smallest block length m that yields it: the list for a smaller
    ``max_block`` b is the candidates with m <= b (the M that yield a reduced pair are its
    multiples, and the span cap stops at the same M whatever b), in the same order."""
    Ms, a = _blocks(target, _TABLE_BLOCK)
    g = np.gcd(a, Ms)
    base = _TABLE_BLOCK + 1
    keys = (a // g) * base + Ms // g
    pairs, first = np.unique(keys, return_index=True)  # Ms ascending: first = smallest M
    ar, mr = pairs // base, pairs % base
    order = np.lexsort((mr, -ar / mr))
    return ar[order], mr[order], Ms[first][order]


def _ratio_candidates_direct(target: float, max_block: int) -> list[tuple[int, int]]:
    """:func:`ratio_candidates` computed for this ``max_block`` alone."""
    Ms, a = _blocks(target, max(1, max_block))  # pairs reduced by their gcd below
    if not Ms.size:
        raise ParameterError(
            f"cannot represent the ratio 2^-{target:.3g} with block length <= {max_block}; "
            "epsilon too small for this grid (pass a coarser grid)"
        )
    g = np.gcd(a, Ms)
    base = int(Ms.max()) + 1
    pairs = np.sort((a // g) * base + Ms // g)
    pairs = pairs[np.flatnonzero(np.diff(pairs, prepend=-1))]  # the distinct reduced (a, M)
    ar, mr = pairs // base, pairs % base
    # best a/M first ((−a)/M as a float, the same division), ties: the smaller M
    order = np.lexsort((mr, -ar / mr))
    return list(zip(ar[order].tolist(), mr[order].tolist(), strict=True))


class RatioGeometric:
    """Exact k >= 0, p(k) ∝ e^(-inner·r) 2^(-a·q) for k = qM + r (64-bit quantised in a block).

    ``inner`` (default a·ln2/M, a plain geometric) is the log-ratio of consecutive steps
    inside a block; the step across a block boundary then has log-ratio
    a·ln2 − (M−1)·inner.  With inner = ε' and a = floor(M ε'/ln2), every step except
    the boundary one decays at the full rate ε' and the boundary step absorbs the
    dyadic rounding -- the law is as steep as the budget allows where the mass is.
    """

    def __init__(self, a: int, M: int, inner: float | None = None) -> None:
        if not (isinstance(a, int) and isinstance(M, int) and a >= 1 and 1 <= M <= 1 << 16):
            raise ParameterError(f"need integers a >= 1 and 1 <= M <= 65536, got a={a}, M={M}")
        inner = a * LN2 / M if inner is None else float(inner)
        if not (inner > 0 and (M - 1) * inner <= MAX_SPAN_BITS * LN2 + 1e-9):
            raise ParameterError("block dynamic range exceeds 2^52; use a smaller block")
        if (M - 1) * inner > a * LN2 + 1e-12:
            raise ParameterError("in-block decay exceeds the block ratio 2^-a")
        self.a = a
        self.M = M
        self.inner = inner
        self.table = _table(M, inner)
        # Q = floor(T / a) for T = 0..63 (T >= 63 handled by the rare extension path)
        self.q_of_t = np.arange(64, dtype=np.int64) // a

    @property
    def decay(self) -> float:
        """Average log-ratio per step, a·ln2/M (nats)."""
        return self.a * LN2 / self.M

    # ---------------------------------------------------------------- sampling
    def q_from_words(self, rng: RandomSource, words: NDArray[np.uint64]) -> NDArray[np.int64]:
        """Q = floor(T/a) from the trailing zeros of each word's low 63 bits (bit 63 unused)."""
        T = ctz63(words)
        if T.size and T.max() >= 63:
            extend_counts(rng, words, T)
            return T // self.a
        return self.q_of_t[T]

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        """n draws of k (two words each)."""
        w = rng.words(2 * n)
        q = self.q_from_words(rng, w[:n])
        r = self.table.sample_words(w[n:])
        return q * self.M + r

    # ------------------------------------------------------------- exact law
    @cached_property
    def weights(self) -> list[int]:
        return self.table.exact_weights()

    @cached_property
    def log_weights(self) -> NDArray[np.float64]:
        """ln(W_r / 2^64) (math.log of the exact integers: abs. error ~1e-14)."""
        return np.array([math.log(w) - 64 * LN2 for w in self.weights])

    @cached_property
    def log_block(self) -> float:
        """ln P(Q = 0) = ln(1 − 2^-a)."""
        return math.log1p(-(2.0 ** -self.a))

    def logpmf(self, k: ArrayLike) -> NDArray[np.float64]:
        k = np.asarray(k, dtype=np.int64)
        q, r = np.divmod(np.maximum(k, 0), self.M)
        out = -(q * self.a) * LN2 + self.log_block + self.log_weights[r]
        return np.where(k < 0, -np.inf, out)

    def pmf(self, k: ArrayLike) -> NDArray[np.float64]:
        return np.exp(self.logpmf(k))

    @cached_property
    def _in_block_tail(self) -> NDArray[np.float64]:
        """P(R >= r) for r = 0..M (exact integers, then one rounding)."""
        w = self.weights
        tails = [0] * (self.M + 1)
        acc = 0
        for r in range(self.M - 1, -1, -1):
            acc += w[r]
            tails[r] = acc
        return np.array([t / 2.0**64 for t in tails])

    def sf(self, k: ArrayLike) -> NDArray[np.float64]:
        """P(K >= k) = 2^(-a(q+1)) + 2^(-aq)(1 − 2^-a) P(R >= r), k = qM + r."""
        k = np.asarray(k, dtype=np.int64)
        q, r = np.divmod(np.maximum(k, 0), self.M)
        rho = 2.0 ** -self.a
        base = np.exp2(-(q * self.a).astype(np.float64))
        out = base * (rho + (1 - rho) * self._in_block_tail[r])
        return np.where(k <= 0, 1.0, out)

    @cached_property
    def moments(self) -> tuple[float, float]:
        """(E[k], E[k^2]) exactly (40-digit mpmath from the integer weights)."""
        with mpmath.workdps(40):
            tot = mpmath.mpf(2) ** 64
            er = mpmath.fsum(mpmath.mpf(w) * r for r, w in enumerate(self.weights)) / tot
            er2 = mpmath.fsum(mpmath.mpf(w) * r * r for r, w in enumerate(self.weights)) / tot
            rho = mpmath.mpf(2) ** -self.a
            eq = rho / (1 - rho)
            eq2 = rho * (1 + rho) / (1 - rho) ** 2
            M = self.M
            ek = M * eq + er
            ek2 = M * M * eq2 + 2 * M * eq * er + er2
            return float(ek), float(ek2)

    @cached_property
    def step_log_ratios(self) -> NDArray[np.float64]:
        """D_r = ln p(k) − ln p(k+1) for k ≡ r (mod M) (log of exact integer ratios)."""
        w = self.weights
        out = [math.log(w[r] / w[r + 1]) for r in range(self.M - 1)]
        out.append(math.log(w[self.M - 1] / w[0]) + self.a * LN2)
        return np.array(out)

    @cached_property
    def quantisation_error(self) -> float:
        """max_r |ln P(R = r) − ln P_ideal(R = r)| (ideal in-block weights ∝ e^(−inner·r))."""
        with mpmath.workdps(40):
            x = mpmath.exp(-mpmath.mpf(self.inner))
            tot = mpmath.fsum(x**r for r in range(self.M))
            worst = mpmath.mpf(0)
            for r, w in enumerate(self.weights):
                ideal = x**r / tot
                worst = max(worst, abs(mpmath.log(mpmath.mpf(w) / mpmath.mpf(2) ** 64 / ideal)))
            return float(worst)
