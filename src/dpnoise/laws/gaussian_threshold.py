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
  (:func:`fold_atoms`; the mass outside the computed window is put at ``+∞``).  Thresholding
  is post-processing.
* **groups that exist only in D'.**  At most ``G``, each of count ``<= R``, released only
  if ``R + Z >= τ``: some is released with probability ``<= p = 1 − (1 − P(Z >= τ − R))^G``,
  independently of the rest, and never from ``D``.

A person with ``k`` groups of his own and ``j <= G − k`` groups of ``D`` is dominated by the
case ``(k, j = G − k)`` (more shifted coordinates, or more new groups, only dominate).  In
that case the ordered pair ``(M(D'), M(D))`` has the PLD ``(1 − p_k)·(L_j + ln(1 − p_k)) +
p_k·(+∞)`` (the event "no new group" has probability ``1 − p_k`` under ``D'`` and 1 under
``D``), dominated by ``(1 − p_k)·L_j + p_k·(+∞)``, and ``(M(D), M(D'))`` has ``L_j − ln(1 −
p_k)``.  The mechanism reports these two pairs for every ``k = 0..G``
(:func:`cases`; beyond :data:`EVERY_SPLIT` groups the single case ``(p_G, L_G)``, which
dominates them all) and the accountant composes their convex-hull envelope (Zhu, Dong and
Wang, "Optimal accounting of differential privacy via characteristic function", AISTATS
2022), whose ``δ(ε)`` is the largest of the cases'; the stated ``δ`` is
``max_k [p_k + (1 − p_k)·max(H_ε(L_j), H_ε(L_j − ln(1 − p_k)))]`` (:func:`total_delta`).
The mass at ``+∞`` makes Rényi divergences infinite: there is no zCDP guarantee, only a PLD.
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
#: the PLD's losses up onto its grid and takes the convex-hull envelope of the cases' pairs
#: on that grid, which raises delta(eps) by up to a few per cent near a change of case
ACCOUNTANT_ROOM = 0.1
#: the most groups per person this construction accepts (the convolution's size)
MAX_GROUPS = 32
#: up to this many groups per person, every split into new and existing groups is its own
#: case (tighter); beyond, one case dominates them all (cheaper to convolve)
EVERY_SPLIT = 16


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


def _atoms(out: NDArray[np.float64], coords: int, K: int, sigma2: float, rows: int
           ) -> LossAtoms:
    """Loss atoms ``(j R² + 2 R t)/(2σ²)`` of the pmf ``out`` of ``T`` on ``[−jK, jK]``."""
    if coords == 0:
        return LossAtoms(np.array([0.0]), np.array([1.0]), np.array([0.0]))
    t = np.arange(-coords * K, coords * K + 1, dtype=np.float64)
    loss = (coords * rows * rows + 2.0 * rows * t) / (2.0 * sigma2)
    probs = out * (1 - 1e-9)  # the margin of the float convolution, moved to +inf
    outside = min(1.0, coords * 2 * tail(sigma2, K + 1) + 1e-9)
    keep = probs > 0
    err = 1e-12 * (1.0 + np.abs(loss[keep]))
    return LossAtoms(np.concatenate([loss[keep], [math.inf]]),
                     np.concatenate([probs[keep], [outside]]),
                     np.concatenate([err, [0.0]]))


@lru_cache(maxsize=64)
def fold_atoms(sigma2: float, groups: int, rows: int) -> tuple[LossAtoms, ...]:
    """The PLDs of ``(⊗N_ℤ(R, σ²), ⊗N_ℤ(0, σ²))`` over ``j`` coordinates: losses
    ``(j R² + 2 R t)/(2σ²)`` with the probabilities of ``T = t`` (the j-fold convolution of
    positive terms, relative error ~j·n·u, covered by a 1e-9 margin moved to ``+∞``, as is
    the mass outside the window, at most ``j·P(|Z| > K)``).  For ``G <=``
    :data:`EVERY_SPLIT` the tuple holds ``j = 0, ..., G`` (index j); beyond, ``j = G`` only."""
    if not 1 <= groups <= MAX_GROUPS:
        raise ParameterError(f"groups must be in [1, {MAX_GROUPS}] for the Gaussian "
                             f"threshold, got {groups}")
    K = _window(sigma2, rows)
    one = dga.pmf(np.arange(-K, K + 1), sigma2)
    if groups <= EVERY_SPLIT:
        outs = [np.array([1.0])]
        for _ in range(groups):
            outs.append(np.convolve(outs[-1], one))
        return tuple(_atoms(o, j, K, sigma2, rows) for j, o in enumerate(outs))
    out, base, g = np.array([1.0]), one, groups
    while g:  # binary powering of the convolution
        if g & 1:
            out = np.convolve(out, base)
        g >>= 1
        if g:
            base = np.convolve(base, base)
    return (_atoms(out, groups, K, sigma2, rows),)


def cases(sigma2: float, threshold: int, groups: int, rows: int
          ) -> list[tuple[LossAtoms, float]]:
    """``(PLD of the j existing groups' noise, p_k)`` for each split of the person's at most
    G groups into ``k`` of his own (new: released with probability ``p_k = 1 − (1 − P(Z >=
    τ − R))^k``) and ``j = G − k`` existing ones; more existing groups or more new ones only
    dominate, so these cases cover every neighbour.  Beyond :data:`EVERY_SPLIT` groups, the
    one case ``(j = G, p_G)`` that dominates them all."""
    atoms = fold_atoms(sigma2, groups, rows)
    if len(atoms) == 1:
        return [(atoms[0], new_group_mass(sigma2, threshold, groups, rows))]
    return [(atoms[groups - k], new_group_mass(sigma2, threshold, k, rows) if k else 0.0)
            for k in range(groups + 1)]


def hockey(atoms: LossAtoms, epsilon: float, shift: float = 0.0) -> float:
    """``H_{e^ε} = Σ P(y)·(1 − e^{ε − loss(y)})_+`` of atoms whose losses are moved up by
    ``shift`` (each loss rounded up by its error bound)."""
    loss = np.asarray(atoms.losses) + np.asarray(atoms.error) + shift
    with np.errstate(over="ignore", invalid="ignore"):
        gain = np.where(np.isinf(loss), 1.0, -np.expm1(np.minimum(0.0, epsilon - loss)))
    return min(1.0, float(np.sum(np.asarray(atoms.probs) * gain)) * (1 + 1e-12))


def total_delta(sigma2: float, threshold: int, groups: int, rows: int, epsilon: float
                ) -> float:
    """``δ(ε) = max_k [p_k + (1 − p_k)·max(H_ε(L_j), H_ε(L_j − ln(1 − p_k)))]`` over the
    cases of :func:`cases` (module docstring)."""
    worst = 0.0
    for atoms, p in cases(sigma2, threshold, groups, rows):
        if p >= 1:
            return 1.0
        h = max(hockey(atoms, epsilon), hockey(atoms, epsilon, -math.log1p(-p)))
        worst = max(worst, p + (1 - p) * h)
    return min(1.0, worst * (1 + 1e-12))


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
    is ``δ·(1 − 0.1)`` so that the accountant's grid-rounded PLD stays within ``δ``."""
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
