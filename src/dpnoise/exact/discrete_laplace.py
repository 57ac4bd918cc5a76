"""Exact discrete Laplace (two-sided geometric) over the integers: p(y) ∝ exp(−|y|·s/t).

Canonne, Kamath, Steinke 2020, Algorithm 2, vectorised: for integers s, t >= 1,

1. U uniform on {0..t−1}; accept it with probability exp(−U/t) (exact Bernoulli);
2. V >= 0 with P(V >= v) = e^{−v} (exact lazy comparison, one word);
3. X = U + t·V has P(X = x) ∝ e^{−x/t}; Y = ⌊X/s⌋ then has P(Y = y) ∝ e^{−y s/t};
4. a fair sign; reject (−, 0) so that 0 is not counted twice.

Rejected candidates are redrawn in batches; the number of rounds depends only on random
words, never on a released value.  No floating point decides any outcome.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .bernoulli import bernoulli_exp_unit, exp_neg_threshold_count
from .words import WordStream

MAX_T = 1 << 56
_U64 = np.uint64


def uniform_int(ws: WordStream, t: int, n: int) -> NDArray[np.uint64]:
    """n exact uniform integers in [0, t) (1 <= t <= 2^56) by rejection on top bits."""
    if t == 1:
        return np.zeros(n, dtype=np.uint64)
    bits = (t - 1).bit_length()
    shift = _U64(64 - bits)
    u = ws.take(n) >> shift
    bad = np.flatnonzero(u >= t)
    while bad.size:  # probability < 1/2 per retry
        r = ws.take(bad.size) >> shift
        u[bad] = r
        bad = bad[r >= t]
    return u


def _candidates(ws: WordStream, s: int, t: int, m: int) -> NDArray[np.int64]:
    """m candidate draws; accepted ones first (returns only the accepted)."""
    U = uniform_int(ws, t, m)
    keep = bernoulli_exp_unit(ws, U, np.full(m, t, dtype=np.uint64), m)
    idx = np.flatnonzero(keep)
    U = U[idx].astype(np.int64)
    V = exp_neg_threshold_count(ws, idx.size)
    X = U + np.int64(t) * V
    Y = X // np.int64(s) if s != 1 else X
    neg = (ws.take(idx.size) >> _U64(63)).astype(bool)
    ok = ~(neg & (Y == 0))
    return np.where(neg, -Y, Y)[ok]


def discrete_laplace(ws: WordStream, s: int, t: int, n: int) -> NDArray[np.int64]:
    """n exact draws with P(Y = y) = (1 − e^{−s/t})/(1 + e^{−s/t}) · e^{−|y| s/t}."""
    if not (1 <= t <= MAX_T) or not (1 <= s <= MAX_T):
        raise ParameterError(f"discrete Laplace needs integers 1 <= s, t <= 2^56, got {s}, {t}")
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        got = _candidates(ws, s, t, need + need // 2 + 16)
        k = min(got.size, need)
        out[filled : filled + k] = got[:k]
        filled += k
    return out
