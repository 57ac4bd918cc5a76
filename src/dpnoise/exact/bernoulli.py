"""Exact Bernoulli trials from random words: Bernoulli(a/b), Bernoulli(exp(−a/b)).

Integers only (no floating point decides an outcome); every function is vectorised over
numpy arrays of per-element parameters.

* :func:`bernoulli_ratio` -- P(1) = a/b exactly (0 <= a <= b, 1 <= b < 2^63): the top
  ``bitlen(b)`` bits of a word give u ∈ [0, 2^bitlen(b)); retry if u >= b (probability
  < 1/2); return u < a.
* :func:`bernoulli_exp_unit` -- P(1) = exp(−γ), γ = a/b ∈ [0, 1] (Canonne, Kamath, Steinke
  2020, Algorithm 1 = von Neumann): draw A_K ~ Bernoulli(γ/K) for K = 1, 2, … until the
  first failure; return 1 iff that K is odd.  P(K > k) = γ^k/k!, so P(K odd) = e^{−γ}.
  Bernoulli(γ/K) is drawn as Bernoulli(a/b) ∧ Bernoulli(1/K) (independent), which keeps
  every denominator below 2^63.
* :func:`uniform_below_exp` -- P(1) = e^{−q} for an integer q >= 0 with ONE word: a lazy
  comparison of the uniform u = 0.w₁w₂… (64-bit digits) with e^{−q}, against the exact
  integers ⌊2^{64j} e^{−q}⌋ (certified: mpmath at high precision, with a margin check).
  The first word decides unless it equals ⌊2^64 e^{−q}⌋ (probability 2^-64);
  then further words decide.
  This replaces CKS's q separate Bernoulli(e^{−1}) trials by one exactly equivalent test.
* :func:`bernoulli_exp` -- P(1) = exp(−a/b) for any a >= 0: Bernoulli(e^{−⌊γ⌋}) ∧
  Bernoulli(exp(−(γ − ⌊γ⌋))).

The number of words consumed is random but depends only on the parameters and on the
random words themselves (never on a private value passed alongside).
"""

from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from .words import WordStream

_MAX_DEN = 1 << 63
_U64 = np.uint64
EXP_TABLE_SIZE = 48  # e^{-47} < 2^-64: beyond, the first-word threshold is 0


def bit_length(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Number of significant bits of each uint64 (0 for 0), integers only."""
    y = x.copy()
    for s in (1, 2, 4, 8, 16, 32):
        y |= y >> _U64(s)
    return np.bitwise_count(y).astype(np.uint64)


def _as_u64(name: str, v: ArrayLike, n: int) -> NDArray[np.uint64]:
    arr = np.asarray(v)
    if arr.dtype.kind not in "iu":
        raise ParameterError(f"{name} must be integers")
    if arr.size and arr.min() < 0:
        raise ParameterError(f"{name} must be >= 0")
    arr = arr.astype(np.uint64, copy=False)
    return np.broadcast_to(arr, (n,)) if arr.ndim == 0 else arr


def _size(a: ArrayLike, b: ArrayLike, n: int | None) -> int:
    return int(np.broadcast(np.asarray(a), np.asarray(b)).size) if n is None else n


# ------------------------------------------------------------------ a / b
def _ratio_shifted(ws: WordStream, a: NDArray[np.uint64], b: NDArray[np.uint64],
                   shift: NDArray[np.uint64] | np.uint64) -> NDArray[np.bool_]:
    """Bernoulli(a/b) given shift = 64 − bitlen(b) (scalar or per element)."""
    n = a.size
    u = ws.take(n) >> shift
    out = u < a
    bad = np.flatnonzero(u >= b)
    scalar = np.ndim(shift) == 0
    while bad.size:  # each retry happens with probability < 1/2
        s = shift if scalar else shift[bad]
        bb = b if np.ndim(b) == 0 else b[bad]
        u = ws.take(bad.size) >> s
        out[bad] = u < (a if np.ndim(a) == 0 else a[bad])
        bad = bad[u >= bb]
    return out


def bernoulli_ratio(ws: WordStream, a: ArrayLike, b: ArrayLike, n: int | None = None
                    ) -> NDArray[np.bool_]:
    """n exact Bernoulli(a/b) trials (arrays or scalars; 0 <= a <= b, 1 <= b < 2^63)."""
    n = _size(a, b, n)
    if n == 0:
        return np.zeros(0, dtype=bool)
    av = _as_u64("a", a, n)
    bv = _as_u64("b", b, n)
    if bv.min() < 1 or bv.max() >= _MAX_DEN or np.any(av > bv):
        raise ParameterError("need 0 <= a <= b and 1 <= b < 2^63")
    return _ratio_shifted(ws, np.ascontiguousarray(av), np.ascontiguousarray(bv),
                          _U64(64) - bit_length(np.ascontiguousarray(bv)))


def _one_over(ws: WordStream, k: int, n: int) -> NDArray[np.bool_]:
    """n Bernoulli(1/k) trials (k >= 1 a Python int)."""
    if k == 1:
        return np.ones(n, dtype=bool)
    if k & (k - 1) == 0:  # power of two 2^j: j bits, no rejection
        return (ws.take(n) >> _U64(65 - k.bit_length())) == 0
    shift = _U64(64 - k.bit_length())
    u = ws.take(n) >> shift
    out = u == 0
    bad = np.flatnonzero(u >= k)
    while bad.size:  # retry probability < 1/2
        u = ws.take(bad.size) >> shift
        out[bad] = u == 0
        bad = bad[u >= k]
    return out


# ------------------------------------------------------------- exp(-a/b)
def bernoulli_exp_unit(ws: WordStream, a: ArrayLike, b: ArrayLike, n: int | None = None
                       ) -> NDArray[np.bool_]:
    """Exact Bernoulli(exp(−a/b)) for 0 <= a <= b < 2^63 (γ ∈ [0, 1]); CKS Algorithm 1."""
    n = _size(a, b, n)
    if n == 0:
        return np.zeros(0, dtype=bool)
    av = np.ascontiguousarray(_as_u64("a", a, n))
    bv = np.ascontiguousarray(_as_u64("b", b, n))
    if bv.min() < 1 or bv.max() >= _MAX_DEN or np.any(av > bv):
        raise ParameterError("need 0 <= a <= b and 1 <= b < 2^63")
    shift = _U64(64) - bit_length(bv)
    out = np.zeros(n, dtype=bool)
    live = _ratio_shifted(ws, av, bv, shift)  # A_1 ~ Bernoulli(γ)
    np.logical_not(live, out=out)  # first failure at K = 1 (odd)
    idx = np.flatnonzero(live)
    k = 2
    while idx.size:
        go = _one_over(ws, k, idx.size)
        sub = idx[go]
        go2 = _ratio_shifted(ws, av[sub], bv[sub], shift[sub])
        alive = np.zeros(idx.size, dtype=bool)
        alive[np.flatnonzero(go)[go2]] = True
        if k % 2 == 1:
            out[idx[~alive]] = True
        idx = idx[alive]
        k += 1
    return out


@lru_cache(maxsize=4096)
def _exp_digits(q: int, words: int) -> int:
    """⌊2^{64·words} e^{−q}⌋, certified.

    mpmath evaluates e^{−q} at P bits with an error far below 2^{-(P-8)} relative; the
    floor is accepted only if the scaled value is farther than 2^{64·words+16−P} from an
    integer (e^{−q} is irrational for q >= 1, so increasing P always succeeds).
    """
    if q == 0:
        return (1 << (64 * words)) - 1  # u < 1 always: any prefix compares below 2^{64w}
    bits = 64 * words
    if q > bits * 0.6931471805599453 + 1:  # 2^bits e^{-q} < e^{-1} < 1: the floor is 0
        return 0
    prec = bits + 128 + q.bit_length()
    while True:
        with mpmath.workprec(prec):
            v = mpmath.exp(-mpmath.mpf(q)) * mpmath.mpf(2) ** bits
            f = mpmath.floor(v)
            gap = min(v - f, f + 1 - v)
            if gap > mpmath.mpf(2) ** (bits + 16 - prec):
                return int(f)
        prec *= 2  # pragma: no cover


@lru_cache(maxsize=1)
def _exp_table() -> NDArray[np.uint64]:
    """⌊2^64 e^{−q}⌋ for q = 0..EXP_TABLE_SIZE−1 (q = 0 stored as 2^64 − 1, meaning 'always')."""
    return np.array([_exp_digits(q, 1) for q in range(EXP_TABLE_SIZE)], dtype=np.uint64)


def uniform_below_exp(ws: WordStream, q: ArrayLike, n: int | None = None
                      ) -> NDArray[np.bool_]:
    """Exact Bernoulli(e^{−q}) for integers q >= 0 by lazy comparison (about one word each)."""
    qv = np.asarray(q)
    if n is None:
        n = int(qv.size)
    qv = np.ascontiguousarray(_as_u64("q", qv, n))
    if n == 0:
        return np.zeros(0, dtype=bool)
    table = _exp_table()
    capped = np.minimum(qv, _U64(EXP_TABLE_SIZE - 1)).astype(np.intp)
    thr = table[capped]
    thr = np.where(qv >= EXP_TABLE_SIZE, _U64(0), thr)
    w = ws.take(n).copy()
    out = w < thr
    out[qv == 0] = True
    tie = np.flatnonzero((w == thr) & (qv > 0))
    for i in tie:  # probability 2^-64 each: compare further digits exactly
        out[i] = _lazy_tail(ws, int(qv[i]), int(w[i]))
    return out


def _lazy_tail(ws: WordStream, q: int, prefix: int) -> bool:
    """u < e^{−q} given that the first word equals ⌊2^64 e^{−q}⌋; reads more words."""
    words = 1
    while True:
        words += 1
        prefix = (prefix << 64) | int(ws.take(1)[0])
        c = _exp_digits(q, words)
        if prefix != c:
            return prefix < c


def bernoulli_exp_qr(ws: WordStream, q: NDArray[np.uint64], r: NDArray[np.uint64],
                     b: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """Exact Bernoulli(exp(−(q + r/b))) for integers q >= 0, 0 <= r < b < 2^63 (arrays)."""
    n = q.size
    ok = uniform_below_exp(ws, q, n)
    idx = np.flatnonzero(ok)
    if idx.size:
        ok[idx] = bernoulli_exp_unit(ws, r[idx], b[idx], idx.size)
    return ok


def exp_neg_threshold_count(ws: WordStream, n: int) -> NDArray[np.int64]:
    """n draws of V >= 0 with P(V >= v) = e^{−v} exactly (one word each, lazily extended).

    V = #{v >= 1 : u < e^{−v}} for a uniform u; the thresholds ⌊2^64 e^{−v}⌋ are exact
    integers, so V is decided by the first word unless it equals one of them.
    """
    table = _exp_table()[1:]  # v = 1..; strictly decreasing
    asc = np.ascontiguousarray(table[::-1])
    w = ws.take(n).copy()
    # number of v with w < T_v  ==  number of thresholds > w
    v = (asc.size - np.searchsorted(asc, w, side="right")).astype(np.int64)
    tie = np.flatnonzero(np.isin(w, table) | (w == 0))
    for i in tie:  # probability <= 2^-58: decide the boundary comparison(s) exactly
        v[i] = _exp_count_exact(ws, int(w[i]))
    return v


def _exp_count_exact(ws: WordStream, first: int) -> int:
    """max{v : u < e^{−v}} for u whose first 64-bit digit is ``first`` (exact, lazy)."""
    prefix, words = first, 1
    v = 0
    while True:
        cand = v + 1
        while True:  # decide u < e^{-cand} with the digits drawn so far, extending if tied
            c = _exp_digits(cand, words)
            if prefix != c:
                below = prefix < c
                break
            prefix = (prefix << 64) | int(ws.take(1)[0])
            words += 1
        if not below:
            return v
        v = cand


def bernoulli_exp(ws: WordStream, a: ArrayLike, b: ArrayLike, n: int | None = None
                  ) -> NDArray[np.bool_]:
    """Exact Bernoulli(exp(−a/b)) for any a >= 0, 1 <= b < 2^63."""
    n = _size(a, b, n)
    if n == 0:
        return np.zeros(0, dtype=bool)
    av = _as_u64("a", a, n)
    bv = _as_u64("b", b, n)
    if bv.min() < 1 or bv.max() >= _MAX_DEN:
        raise ParameterError("need 1 <= b < 2^63")
    q = av // bv
    r = av - q * bv
    ok = uniform_below_exp(ws, q, n)
    idx = np.flatnonzero(ok)
    if idx.size:
        ok[idx] = bernoulli_exp_unit(ws, r[idx], bv[idx], idx.size)
    return ok
