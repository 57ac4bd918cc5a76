"""The privacy-loss distribution of a discrete-Gaussian count thresholded over unknown keys.

Each group's count ``u`` gets independent discrete Gaussian noise ``Z ~ N_ℤ(0, σ²)``
(Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy", NeurIPS
2020) and the group is released, with ``y = u + Z``, iff ``y >= τ``.  One person is in at
most ``G`` groups with at most ``R`` rows in each.  Take ``D' = D + {person}``:

* **groups of D.**  At most ``G`` of their counts move, each by at most ``R``.  The noise
  is log-concave, so a shift ``s <= R`` is dominated by the shift ``R`` (monotone likelihood
  ratio: Lehmann and Romano, "Testing Statistical Hypotheses", 2005, Thm. 3.4.1), and a
  product of dominated pairs is dominated by the product of the dominating ones (Dong, Roth
  and Su, "Gaussian differential privacy", JRSS-B 2022, Lemma C.2).  For ``P = ⊗N_ℤ(R, σ²)``
  against ``Q = ⊗N_ℤ(0, σ²)`` (``G`` coordinates) the privacy loss is LINEAR in the sum
  ``T = Σ z_i`` of the noises: ``L = (G R² + 2 R T)/(2σ²)``; the reverse pair has the same
  distribution of losses (``T`` is symmetric).  So the pair's PLD is the law of ``T`` -- the
  G-fold convolution of the discrete Gaussian pmf -- pushed through that line
  (:func:`sum_atoms`; the mass outside the computed window is put at ``+∞``).  Thresholding
  is post-processing.
* **groups that exist only in D'.**  At most ``G``, each of count ``<= R``, released only
  if ``R + Z >= τ``: some is released with probability ``<= p = 1 − (1 − P(Z >= τ − R))^G``,
  independently of the rest, and never from ``D``.

Hence for the ordered pair ``(M(D'), M(D))`` the PLD is ``(1 − p)·(L_G + ln(1 − p)) + p·(+∞)``
and for ``(M(D), M(D'))`` it is ``L_G − ln(1 − p)`` (the event "no new group" has probability
``1 − p`` under ``D'``).  Both are dominated by ``(1 − p)·envelope(L_G, L_G − ln(1 − p)) +
p·(+∞)`` -- the :class:`~dpnoise.profile.DominatingPairs` with ``coin = 1 − p`` that the
mechanism reports, and whose ``δ(ε) = p + (1 − p)·max(H_ε(L_G), H_ε(L_G − ln(1 − p)))``
(:func:`total_delta`) is its stated ``δ``.  The mass at ``+∞`` makes Rényi divergences
infinite: there is no zCDP guarantee, only a PLD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..exact.discrete_gaussian import grid_sigma2
from ..profile import LossAtoms
from . import discrete_gaussian as dga

#: the convolution window is |z| <= WINDOW_SIGMAS·σ + 10 per coordinate (outside: +∞)
WINDOW_SIGMAS = 14
#: the stated delta stays this far (relatively) below the asked one: the accountant rounds
#: the PLD's losses up onto its grid, which raises delta(eps) by ~1e-4 relatively
ACCOUNTANT_ROOM = 1e-3
#: the most groups per person this construction accepts (the convolution's size)
MAX_GROUPS = 64


def _window(sigma2: float, rows: int) -> int:
    return math.ceil(WINDOW_SIGMAS * math.sqrt(sigma2)) + rows + 10


@lru_cache(maxsize=64)
def tails(sigma2: float) -> NDArray[np.float64]:
    """``P(Z >= k)`` for ``k = 0..K`` (K the full 40σ window), each a sum of positive terms
    rounded up by a relative 1e-12; beyond ``K`` the mass is below e^-800."""
    K = dga.window(sigma2)
    p = dga.pmf(np.arange(0, K + 1), sigma2)
    return np.minimum(1.0, np.cumsum(p[::-1])[::-1] * (1 + 1e-12) + 1e-300)


def tail(sigma2: float, k: int) -> float:
    """``P(Z >= k)`` for integer k (negative k by symmetry, rounded up)."""
    t = tails(sigma2)
    if k >= 0:
        return float(t[k]) if k < t.size else 1e-300
    j = 1 - k  # P(Z >= k) = 1 − P(Z <= k − 1) = 1 − P(Z >= 1 − k)
    return min(1.0, 1.0 - float(t[j]) * (1 - 1e-12) + 1e-16) if j < t.size else 1.0


def new_group_mass(sigma2: float, threshold: int, groups: int, rows: int) -> float:
    """``p = 1 − (1 − P(Z >= τ − R))^G``, rounded up."""
    q = tail(sigma2, threshold - rows)
    if q >= 1:
        return 1.0
    return min(1.0, -math.expm1(groups * math.log1p(-q)) * (1 + 1e-12))


@lru_cache(maxsize=64)
def sum_atoms(sigma2: float, groups: int, rows: int) -> LossAtoms:
    """The PLD of ``(⊗N_ℤ(R, σ²), ⊗N_ℤ(0, σ²))`` over ``G`` coordinates: losses
    ``(G R² + 2 R t)/(2σ²)`` with the probabilities of ``T = t``; the mass of T outside the
    window (at most ``G·P(|Z| > K)``, bounded by the window's own tail) at ``+∞``.
    Convolution of positive terms (relative error ~G·n·u, covered by a 1e-9 margin)."""
    if not 1 <= groups <= MAX_GROUPS:
        raise ParameterError(f"groups must be in [1, {MAX_GROUPS}] for the Gaussian "
                             f"threshold, got {groups}")
    K = _window(sigma2, rows)
    one = dga.pmf(np.arange(-K, K + 1), sigma2)
    out, base, g = np.array([1.0]), one, groups
    while g:  # binary powering of the convolution
        if g & 1:
            out = np.convolve(out, base)
        g >>= 1
        if g:
            base = np.convolve(base, base)
    t = np.arange(-groups * K, groups * K + 1, dtype=np.float64)
    loss = (groups * rows * rows + 2.0 * rows * t) / (2.0 * sigma2)
    probs = out * (1 - 1e-9)  # the margin of the float convolution, moved to +inf
    outside = min(1.0, groups * 2 * tail(sigma2, K + 1) + 1e-9)
    keep = probs > 0
    err = 1e-12 * (1.0 + np.abs(loss[keep]))
    return LossAtoms(np.concatenate([loss[keep], [math.inf]]),
                     np.concatenate([probs[keep], [outside]]),
                     np.concatenate([err, [0.0]]))


def hockey(atoms: LossAtoms, epsilon: float, shift: float = 0.0) -> float:
    """``H_{e^ε} = Σ P(y)·(1 − e^{ε − loss(y)})_+`` of atoms whose losses are moved up by
    ``shift`` (each loss rounded up by its error bound)."""
    loss = np.asarray(atoms.losses) + np.asarray(atoms.error) + shift
    with np.errstate(over="ignore", invalid="ignore"):
        gain = np.where(np.isinf(loss), 1.0, -np.expm1(np.minimum(0.0, epsilon - loss)))
    return min(1.0, float(np.sum(np.asarray(atoms.probs) * gain)) * (1 + 1e-12))


def total_delta(sigma2: float, threshold: int, groups: int, rows: int, epsilon: float
                ) -> float:
    """``δ(ε) = p + (1 − p)·max(H_ε(L_G), H_ε(L_G − ln(1 − p)))`` (module docstring)."""
    p = new_group_mass(sigma2, threshold, groups, rows)
    if p >= 1:
        return 1.0
    atoms = sum_atoms(sigma2, groups, rows)
    h = max(hockey(atoms, epsilon), hockey(atoms, epsilon, -math.log1p(-p)))
    return min(1.0, (p + (1 - p) * h) * (1 + 1e-12))


@dataclass(frozen=True)
class Calibration:
    """σ² (on the exact sampler's grid), the threshold τ and the exact δ at ε."""

    sigma2: Fraction
    threshold: int
    delta: float


def _least_threshold(s2: float, groups: int, rows: int, epsilon: float, delta: float
                     ) -> int | None:
    """The smallest τ with ``total_delta <= δ`` at this σ² (None: none exists)."""
    hi = rows + dga.window(s2)
    if total_delta(s2, hi, groups, rows, epsilon) > delta:
        return None
    lo = rows  # P(Z >= 0) >= 1/2 > δ: never feasible
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if total_delta(s2, mid, groups, rows, epsilon) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _gaussian_sigma(epsilon: float, delta: float, l2: float) -> float:
    """The continuous Gaussian's σ at (ε, δ) for L2 sensitivity l2 (Balle and Wang,
    "Improving the Gaussian mechanism for differential privacy", ICML 2018, Thm. 8): only
    a starting point of the search, never a guarantee."""
    def d(sig: float) -> float:
        mu = l2 / sig
        ncdf = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
        return ncdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * ncdf(-epsilon / mu - mu / 2)

    lo, hi = 1e-3 * l2, 1e4 * l2
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


@lru_cache(maxsize=32)
def calibrate(epsilon: float, delta: float, groups: int, rows: int) -> Calibration:
    """The (σ², τ) with the LOWEST threshold at (ε, δ), then the smallest σ² with it: σ runs
    over a 3 % geometric grid from 0.9 times the continuous Gaussian's σ (L2 sensitivity
    √G·R at the whole δ) until the threshold has risen by 2 above its minimum.  The target
    is ``δ·(1 − 10^-3)`` so that the accountant's grid-rounded PLD stays within ``δ``."""
    start = _gaussian_sigma(epsilon, delta, math.sqrt(groups) * rows) * 0.9
    best: tuple[int, Fraction] | None = None
    for k in range(200):
        s2 = grid_sigma2(Fraction(start * 1.03 ** k) ** 2).sigma2
        tau = _least_threshold(float(s2), groups, rows, epsilon, delta * (1 - ACCOUNTANT_ROOM))
        if tau is None:
            continue
        if best is None or tau < best[0]:
            best = (tau, s2)
        elif tau >= best[0] + 2:
            break
    if best is None:
        raise ParameterError(f"no Gaussian threshold reaches delta={delta!r} at "
                             f"epsilon={epsilon!r} with {groups} groups of {rows} rows")
    tau, s2 = best
    return Calibration(s2, tau, total_delta(float(s2), tau, groups, rows, epsilon))
