"""The true ε(δ) of compositions, computed independently of dpnoise.accounting.

A composition is described by its *laws*, not by mechanisms: a Gaussian part (Σ of
Δ²/σ² over the Gaussian releases: the k-fold composition of Gaussian pairs is the Gaussian
pair of μ² = ΣΔ_i²/σ_i², Dong, Roth, Su, "Gaussian differential privacy", JRSS-B 2022,
Cor. 3.3) and discrete parts, each a family of k releases of one integer-valued law at
sensitivity 1 whose privacy loss is an affine function of the noise:

* discrete Gaussian N_ℤ(0, σ²), shift 1: L(z) = (1 − 2z)/(2σ²), so the k-fold loss is
  (k − 2S)/(2σ²) with S the sum of k independent draws, whose pmf is the k-fold
  convolution of the pmf (direct convolution of non-negative terms: each entry to
  relative precision ~k·n·u);
* two-sided geometric (discrete Laplace) of decay a, shift 1: L = +a if z <= 0, −a
  otherwise, P(L = a) = 1/(1 + e^{−a}): the k-fold loss is a·(2B − k), B binomial;
* lattice Laplace (half-offset lattice (j + 1/2)·L, pmf ∝ r^{|y|−1/2}, r = e^{−a}) at a
  shift of s cells: L = a(|y − s| − |y|) ∈ a·{−s, …, s} with masses in closed form; the
  k-fold loss by repeated squaring of direct convolutions on the integer lattice of a.

When a product of families has more than 2·10^6 atoms its losses are rounded UP onto a
grid of ``MERGE_GRID`` (1e-6) and merged: the δ(ε) computed is then between the true
δ(ε) and δ(ε − 1e-6·(number of merges)), so the reported ε is an upper bound of the true
one within a few 1e-6 (a comparison "accountant >= truth" only gets stricter).

The composed PLD of the discrete parts is their product (a list of losses and masses);
the Gaussian part is kept in closed form, so

    δ(ε) = Σ_i p_i H_μ(ε − L_i),   H_μ(x) = Φ(−x/μ + μ/2) − e^x Φ(−x/μ − μ/2)

(Balle and Wang, "Improving the Gaussian mechanism for differential privacy", ICML 2018,
Thm. 8; H_0(x) = (1 − e^x)_+), evaluated with log Φ and expm1 (no cancellation), and ε(δ)
is found by bisection to 1e-9 relative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_ndtr


@dataclass
class Composition:
    """Σ Δ²/σ² of the Gaussian releases, and the discrete families (kind, parameter, k)."""

    mu2: float = 0.0
    discrete: list[tuple[str, float, int]] = field(default_factory=list)

    def gaussian(self, sigma: float, sensitivity: float = 1.0, k: int = 1) -> Composition:
        self.mu2 += k * (sensitivity / sigma) ** 2
        return self

    def discrete_gaussian(self, sigma2: float, k: int) -> Composition:
        self.discrete.append(("dg", float(sigma2), int(k)))
        return self

    def geometric(self, decay: float, k: int) -> Composition:
        self.discrete.append(("geo", float(decay), int(k)))
        return self

    def lattice_laplace(self, decay: float, shift: int, k: int) -> Composition:
        self.discrete.append((f"lap{int(shift)}", float(decay), int(k)))
        return self


MERGE_GRID = 1e-6


def _power(p: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """k-fold self-convolution by repeated squaring (direct, non-negative terms)."""
    out = np.ones(1)
    base, n = p, k
    while n:
        if n & 1:
            out = np.convolve(out, base)
        n >>= 1
        if n:
            base = np.convolve(base, base)
    return out


def _lattice_laplace_pld(a: float, s: int, k: int) -> tuple[NDArray[np.float64],
                                                            NDArray[np.float64]]:
    """PLD of k lattice Laplace releases (decay a per cell, shift s cells)."""
    r = math.exp(-a)
    c = (1 - r) / 2  # P(y = ±(j + 1/2)) = c·r^j
    j = np.arange(s, dtype=np.float64)
    mid = c * r**j  # y = j + 1/2 in (0, s): loss a(s − 2j − 1)
    p = np.zeros(2 * s + 1)  # index m + s for the loss a·m
    p[2 * s] = 0.5  # y < 0: loss +a s (mass 1/2)
    p[s + (s - 1 - 2 * np.arange(s))] += mid
    p[0] += c * r**s / (1 - r)  # y > s: loss −a s
    out = _power(p, k)
    m = np.arange(out.size) - k * s
    return a * m.astype(np.float64), out


def _dg_sum_pmf(sigma2: float, k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Support and pmf of the sum of k draws of N_ℤ(0, σ²) (mass beyond 14σ: < e^-98, far
    below every δ used, and dropping it only lowers δ by less than that)."""
    K = math.ceil(14 * math.sqrt(sigma2)) + 2
    z = np.arange(-K, K + 1)
    w = np.exp(-(z.astype(np.float64) ** 2) / (2 * sigma2))
    p = w / math.fsum(w.tolist())
    out = np.ones(1)
    base, n = p, k
    while n:  # repeated squaring with direct (non-negative) convolutions
        if n & 1:
            out = np.convolve(out, base)
        n >>= 1
        if n:
            base = np.convolve(base, base)
    lo = -K * k
    return np.arange(lo, lo + out.size), out


def _family_pld(kind: str, par: float, k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if kind.startswith("lap"):
        return _lattice_laplace_pld(par, int(kind[3:]), k)
    if kind == "dg":
        s, p = _dg_sum_pmf(par, k)
        return (k - 2 * s.astype(np.float64)) / (2 * par), p
    b = np.arange(k + 1)
    q = 1.0 / (1.0 + math.exp(-par))  # P(L = +a)
    logp = np.array([math.lgamma(k + 1) - math.lgamma(i + 1) - math.lgamma(k - i + 1)
                     for i in range(k + 1)]) + b * math.log(q) + (k - b) * math.log1p(-q)
    return par * (2 * b - k).astype(np.float64), np.exp(logp)


def discrete_pld(comp: Composition) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Losses and masses of the product of the discrete families (tiny masses dropped:
    below 1e-40 in total, far under any δ used here)."""
    L, p = np.zeros(1), np.ones(1)
    for kind, par, k in comp.discrete:
        lf, pf = _family_pld(kind, par, k)
        keep = pf > 1e-45
        lf, pf = lf[keep], pf[keep]
        if L.size * lf.size > 2_000_000:
            L, p = _merged_product(L, p, lf, pf)
            continue
        L = (L[:, None] + lf[None, :]).ravel()
        p = (p[:, None] * pf[None, :]).ravel()
        if L.size > 2_000_000:  # merge onto a fine grid (exact enough: 1e-12 in L)
            key = np.round(L * 1e12).astype(np.int64)
            uk, inv = np.unique(key, return_inverse=True)
            p = np.bincount(inv, weights=p)
            L = uk / 1e12
    return L, p


def _merged_product(L: NDArray[np.float64], p: NDArray[np.float64], lf: NDArray[np.float64],
                    pf: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The product's losses rounded up onto MERGE_GRID and merged (by chunks)."""
    lo = math.floor((L.min() + lf.min()) / MERGE_GRID) - 2
    hi = math.ceil((L.max() + lf.max()) / MERGE_GRID) + 2
    acc = np.zeros(hi - lo + 1)
    if L.size > lf.size:
        L, p, lf, pf = lf, pf, L, p
    base = np.ceil(lf / MERGE_GRID).astype(np.int64) - lo
    for li, pi in zip(L.tolist(), p.tolist(), strict=True):
        idx = base + math.ceil(li / MERGE_GRID)  # ceil(x) + ceil(y) >= ceil(x + y)
        np.add.at(acc, idx, pi * pf)
    nz = np.flatnonzero(acc)
    return (nz + lo) * MERGE_GRID, acc[nz]


def _hockey_gauss(x: NDArray[np.float64], mu: float) -> NDArray[np.float64]:
    """H_μ(x) for the Gaussian pair of μ > 0, stably: Φ(a)(1 − e^{x + lnΦ(b) − lnΦ(a)})."""
    a = -x / mu + mu / 2
    b = -x / mu - mu / 2
    la, lb = log_ndtr(a), log_ndtr(b)
    return np.exp(la) * -np.expm1(np.minimum(x + lb - la, 0.0))


def delta(comp: Composition, epsilon: float,
          pld: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None) -> float:
    L, p = pld if pld is not None else discrete_pld(comp)
    x = epsilon - L
    if comp.mu2 > 0:
        h = _hockey_gauss(x, math.sqrt(comp.mu2))
    else:
        h = np.where(x < 0, -np.expm1(np.minimum(x, 0.0)), 0.0)
    return math.fsum((p * h).tolist())


def epsilon(comp: Composition, target: float,
            pld: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None) -> float:
    """The true ε at δ = ``target`` (bisection; δ(ε) is non-increasing)."""
    pld = pld if pld is not None else discrete_pld(comp)
    lo, hi = 0.0, 1.0
    while delta(comp, hi, pld) > target:
        lo, hi = hi, 2 * hi
    if delta(comp, lo, pld) <= target:
        return 0.0
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if delta(comp, mid, pld) > target:
            lo = mid
        else:
            hi = mid
    return hi
