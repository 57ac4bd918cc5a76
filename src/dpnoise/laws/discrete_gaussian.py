"""Exact privacy accounting and moments of the discrete Gaussian N_ℤ(0, σ²) (CKS 2020).

p(z) = exp(−z²/(2σ²)) / Σ_k exp(−k²/(2σ²)),  z ∈ ℤ.  ``σ²`` is the *scale* parameter;
the variance is smaller than σ².

δ(ε) for integer sensitivity Δ (CKS Theorem 7, paper eq. 45) is the hockey-stick sum

    δ(ε) = Σ_z [p(z) − e^ε p(z − Δ)]^+  =  P[X > εσ²/Δ − Δ/2] − e^ε P[X > εσ²/Δ + Δ/2],

evaluated here as a sum of *positive* terms p(z)·(1 − e^{ε + (2zΔ − Δ²)/(2σ²)}) over
z < Δ/2 − εσ²/Δ (each term by ``expm1``, no cancellation), with the normaliser from
mpmath (Jacobi θ₃ for σ >= 1, a direct sum below).  The window |z| <= 40σ + 60 leaves out
mass below e^-800.  The returned δ is inflated by a relative 1e-9 to cover float rounding,
so it is an upper bound.

References:
  * C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020.
  * P. Sadeghi, S. Asoodeh, F. du Pin Calmon, "Differentially Private Mechanisms for Count
    Queries", arXiv:2007.09374, 2020.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

import mpmath
import numpy as np

from ..errors import ParameterError
from ..float_sum import fsum_array

REL_MARGIN = 1e-9
MAX_SIGMA2 = 1e10


def _s2(sigma2: float | Fraction) -> float:
    s = float(sigma2)
    if not (0 < s <= MAX_SIGMA2) or not math.isfinite(s):
        raise ParameterError(f"sigma^2 must be in (0, {MAX_SIGMA2:g}], got {sigma2!r}")
    return s


@lru_cache(maxsize=256)
def log_normaliser(sigma2: float) -> float:
    """ln Σ_k exp(−k²/(2σ²)), accurate to ~1e-16 relative."""
    s = _s2(sigma2)
    with mpmath.workdps(40):
        s_mp = mpmath.mpf(s)
        if s >= 1:
            q = mpmath.exp(-2 * mpmath.pi**2 * s_mp)
            z = mpmath.sqrt(2 * mpmath.pi * s_mp) * mpmath.jtheta(3, 0, q)
        else:
            K = math.ceil(math.sqrt(1400 * s)) + 3
            z = 1 + 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(k * k) / (2 * s_mp))
                                    for k in range(1, K + 1))
        return float(mpmath.log(z))


def window(sigma2: float) -> int:
    return math.ceil(40 * math.sqrt(_s2(sigma2))) + 60


def logpmf(z: np.ndarray, sigma2: float) -> np.ndarray:
    s = _s2(sigma2)
    z = np.asarray(z, dtype=np.float64)
    return -(z * z) / (2 * s) - log_normaliser(s)


def pmf(z: np.ndarray, sigma2: float) -> np.ndarray:
    return np.exp(logpmf(z, sigma2))


class DeltaBuffers:
    """Scratch arrays that :func:`delta` reuses across calls (a σ² search evaluates δ ~30
    times on arrays of up to 2^20 points: fresh arrays cost more in page faults than the
    arithmetic on them).  The values computed are the same floats either way."""

    def __init__(self) -> None:
        self.size = 0

    def take(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if n > self.size:
            self.size = max(n, int(self.size * 1.25))
            self._z, self._lp, self._gap = (np.empty(self.size) for _ in range(3))
            self._iota = np.arange(self.size, dtype=np.float64)
        return self._z[:n], self._lp[:n], self._gap[:n]

    def grid(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points a, a+1, ..., b (as ``np.arange(a, b + 1)``, exact below 2^53) and two
        scratch arrays of the same length."""
        z, lp, gap = self.take(b - a + 1)
        np.add(self._iota[: b - a + 1], a, out=z)
        return z, lp, gap


def _terms_sum(z: np.ndarray, lp: np.ndarray, gap: np.ndarray, s: float, d: int,
               epsilon: float) -> float:
    """Σ of the positive terms exp(lp)·(−expm1(gap)) for the grid points z (in place, the
    same float operations as ``delta``'s expressions; ``lp``, ``gap`` are overwritten)."""
    np.multiply(z, z, out=lp)
    np.negative(lp, out=lp)
    np.divide(lp, 2 * s, out=lp)
    np.subtract(lp, log_normaliser(s), out=lp)  # logpmf(z, s)
    np.multiply(z, 2, out=gap)
    np.multiply(gap, d, out=gap)
    np.subtract(gap, d * d, out=gap)
    np.divide(gap, 2 * s, out=gap)
    np.add(epsilon, gap, out=gap)  # epsilon + (2zd − d²)/(2s)
    np.exp(lp, out=lp)
    np.expm1(gap, out=gap)
    np.negative(gap, out=gap)
    np.multiply(lp, gap, out=lp)  # the terms
    return float(np.sum(lp[lp > 0]))


def delta(sigma2: float | Fraction, epsilon: float, sensitivity: int = 1,
          buffers: DeltaBuffers | None = None) -> float:
    """Upper bound (relative margin 1e-9) of the exact δ(ε) for integer sensitivity Δ
    (``buffers``: scratch arrays reused across calls; the same value with or without)."""
    s = _s2(sigma2)
    d = int(sensitivity)
    if d < 1:
        raise ParameterError("sensitivity must be an integer >= 1")
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise ParameterError("epsilon must be finite and >= 0")
    z_max = d / 2 - epsilon * s / d  # terms are positive for z < z_max
    lo = -window(s) - d
    hi = math.ceil(z_max) - 1 if z_max == math.ceil(z_max) else math.floor(z_max)
    if hi < lo:
        return 0.0
    total = []
    step = 1 << 20
    for a in range(lo, hi + 1, step):
        if buffers is not None:
            z, lp, gap = buffers.grid(a, min(hi, a + step - 1))
            total.append(_terms_sum(z, lp, gap, s, d, epsilon))
            continue
        z = np.arange(a, min(hi, a + step - 1) + 1, dtype=np.float64)
        lp = logpmf(z, s)
        gap = epsilon + (2 * z * d - d * d) / (2 * s)
        terms = np.exp(lp) * -np.expm1(gap)
        # positive terms summed pairwise (numpy): relative error <= ceil(log2 n)·u (< 3e-15
        # here), far inside REL_MARGIN = 1e-9 -- math.fsum's exactness cost 0.14 s at eps 0.01
        total.append(float(np.sum(terms[terms > 0])))
    val = math.fsum(total)
    return min(1.0, val * (1 + REL_MARGIN) + 1e-300) if val > 0 else 0.0


def moments(sigma2: float | Fraction) -> tuple[float, float, float]:
    """(P(Z = 0), Var Z, E|Z|)."""
    s = _s2(sigma2)
    K = window(s)
    z = np.arange(-K, K + 1, dtype=np.float64)
    p = pmf(z, s)
    return float(p[K]), fsum_array(p * z * z), fsum_array(p * np.abs(z))  # = math.fsum


def _bisect_sigma2(f, target: float, lo: float, hi: float, increasing: bool) -> float:
    """Smallest (increasing=False: δ-type decreasing f) σ² with f(σ²) <= target, geometric."""
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if (f(mid) <= target) != increasing:
            hi = mid
        else:
            lo = mid
        if hi / lo - 1 < 1e-13:
            break
    return hi if not increasing else lo


@lru_cache(maxsize=64)
def calibrate_sigma2(epsilon: float, target_delta: float, sensitivity: int = 1) -> float:
    """The smallest σ² (to 1e-13 relative) with δ(ε) <= target_delta (cached per process).

    A bracket [lo, hi] with δ(lo) > target >= δ(hi) is found from the classic Gaussian σ²
    by factors of 4, then narrowed by secant steps on ln δ against ln σ² (δ is smooth and
    monotone; through the last two points, kept inside the bracket, else the midpoint);
    once a step is below 1e-11, one probe 4e-14 (relative) across the root closes the
    bracket.  About 15 evaluations instead of ~60 for bisection.  The answer is the
    bracket end with δ(hi) <= target, as bisection's.
    """
    work = DeltaBuffers()
    f = lru_cache(maxsize=None)(lambda s: delta(s, epsilon, sensitivity, work))
    d = float(sensitivity)
    guess = min(MAX_SIGMA2, max(1.0, 2.0 * math.log(1.25 / target_delta) * (d / epsilon) ** 2))
    lo, hi = guess / 4, guess
    while f(hi) > target_delta:
        lo, hi = hi, hi * 4
        if hi > MAX_SIGMA2:
            raise ParameterError("delta target needs sigma^2 > 1e10; raise epsilon or delta")
    while lo > 1e-4 and f(lo) <= target_delta:
        lo, hi = lo / 4, lo
    if f(lo) <= target_delta:  # δ(1e-4) already meets the target
        return _bisect_sigma2(f, target_delta, 1e-6, lo, increasing=False)
    return _secant_sigma2(f, target_delta, lo, hi)


def _secant_sigma2(f: Callable[[float], float], target: float, lo: float, hi: float
                   ) -> float:
    """Smallest σ² in [lo, hi] (to 1e-13 relative) with decreasing f(σ²) <= target, given
    f(lo) > target >= f(hi)."""
    lt = math.log(target)

    def g(s: float) -> float:
        v = f(s)
        return (math.log(v) if v > 0 else -745.0) - lt

    pts = [(math.log(lo), g(lo)), (math.log(hi), g(hi))]  # the last two evaluated points
    for _ in range(100):
        if hi / lo - 1 < 1e-13:
            break
        x0, x1 = math.log(lo), math.log(hi)
        (xa, ga), (xb, gb) = pts[-2], pts[-1]
        x = xb - gb * (xb - xa) / (gb - ga) if gb != ga else 0.5 * (x0 + x1)
        if not (x0 + 1e-6 * (x1 - x0) < x < x1 - 1e-6 * (x1 - x0)):
            x = 0.5 * (x0 + x1)
        step = abs(x - xb)
        r = math.exp(x)
        if not lo < r < hi:
            r = math.sqrt(lo * hi)
        above = f(r) > target
        pts.append((math.log(r), g(r)))
        if above:
            lo = r
        else:
            hi = r
        if step < 1e-11:  # converged: probe just across the root to close the bracket
            p = r * (1 + 4e-14) if above else r * (1 - 4e-14)
            if lo < p < hi:
                if f(p) > target:
                    lo = p
                else:
                    hi = p
    return hi


def sigma2_for_variance(variance: float) -> float:
    """σ² whose discrete Gaussian has the given variance (Var is increasing in σ²)."""
    if not variance > 0:
        raise ParameterError("variance must be > 0")
    # smallest σ² with Var >= variance, i.e. with −Var(σ²) <= −variance (negation is exact)
    return _bisect_sigma2(lambda s: -moments(s)[1], -variance, 1e-4, max(1.0, 2 * variance),
                          increasing=False)


def sigma2_for_zero_mass(eta: float) -> float:
    """σ² with P(Z = 0) = η (P(Z = 0) is decreasing in σ²)."""
    if not 0 < eta < 1:
        raise ParameterError("eta must be in (0, 1)")
    lo, hi = 1e-4, 1.0
    while moments(hi)[0] > eta:
        lo, hi = hi, hi * 4
    return _bisect_sigma2(lambda s: moments(s)[0], eta, lo, hi, increasing=False)
