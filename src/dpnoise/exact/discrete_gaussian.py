"""Exact discrete Gaussian over the integers: p(y) ∝ exp(−y²/(2σ²)), σ² rational.

Canonne, Kamath, Steinke 2020 (CKS), Algorithm 3, vectorised: with t = ⌊σ⌋ + 1 draw Y
from the discrete Laplace of scale t and accept it with probability
exp(−(|Y| − σ²/t)²/(2σ²)).  Any t >= 1 gives the exact law; t ≈ σ makes it efficient.

To keep every integer below 2^63 the scale is represented as

    σ² = t·m/c,   c = 2^j,  m integer,

so that  (|Y| − σ²/t)²/(2σ²) = (c|Y| − m)² / (2·t·m·c).  :func:`grid_sigma2` rounds a
requested σ² *up* to this form (relative change <= 2^-20, never less noise).  The
acceptance test is Bernoulli(exp(−q − r/den)) with q, r the integer quotient/remainder,
done exactly (:mod:`dpnoise.exact.bernoulli`).  Rare huge |Y| (|c|Y| − m| >= 2^32) are
handled with Python integers, still exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .bernoulli import bernoulli_exp_qr
from .discrete_laplace import discrete_laplace
from .words import WordStream

MAX_SIGMA2 = Fraction(1 << 40)
_PRECISION_BITS = 21


@dataclass(frozen=True)
class DGParams:
    """σ² = t·m/c exactly; t = ⌊σ_requested⌋ + 1."""

    t: int
    m: int
    c: int

    @property
    def sigma2(self) -> Fraction:
        return Fraction(self.t * self.m, self.c)

    @property
    def den(self) -> int:
        return 2 * self.t * self.m * self.c


def grid_sigma2(sigma2: Fraction) -> DGParams:
    """The smallest σ'² = t·m/c >= σ² on the sampler's grid (relative step ~2^-21)."""
    s = Fraction(sigma2)
    if not (0 < s <= MAX_SIGMA2):
        raise ParameterError(f"sigma^2 must be in (0, 2^40], got {float(s)!r}")
    t = math.isqrt(s.numerator // s.denominator) + 1
    j = max(0, _PRECISION_BITS - t.bit_length())
    c = 1 << j
    m = -((-s * c) // t)  # ceil(s c / t)
    m = max(int(m), 1)
    p = DGParams(t, m, c)
    if p.den >= 1 << 62:
        raise ParameterError("sigma^2 too large for the exact sampler")  # pragma: no cover
    return p


def _accept(ws: WordStream, y: NDArray[np.int64], p: DGParams) -> NDArray[np.bool_]:
    """Bernoulli(exp(−(c|y| − m)²/(2tmc))) for each candidate, exactly."""
    a = np.abs(y)
    n = a.size
    den = np.full(n, p.den, dtype=np.uint64)
    big = a >= (np.int64(1) << np.int64(62)) // np.int64(p.c)
    diff = np.where(big, 0, a * np.int64(p.c) - np.int64(p.m))
    huge = big | (np.abs(diff) >= np.int64(1) << np.int64(32))
    num = (diff.astype(np.int64) ** 2).astype(np.uint64)
    q = num // den
    r = num - q * den
    for i in np.flatnonzero(huge):  # exact big-integer path (practically never taken)
        d = abs(int(a[i]) * p.c - p.m) ** 2
        qi, ri = divmod(d, p.den)
        q[i] = min(qi, (1 << 63))
        r[i] = ri
    return bernoulli_exp_qr(ws, q, r, den)


def discrete_gaussian(ws: WordStream, p: DGParams, n: int) -> NDArray[np.int64]:
    """n exact draws from the discrete Gaussian with σ² = p.sigma2."""
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        y = discrete_laplace(ws, 1, p.t, need + need // 2 + 16)
        y = y[_accept(ws, y, p)]
        k = min(y.size, need)
        out[filled : filled + k] = y[:k]
        filled += k
    return out
