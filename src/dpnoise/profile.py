"""The privacy profile: what ONE release of a mechanism answers for, from the law it samples.

Every mechanism implements ``privacy_profile() -> PrivacyProfile``
(:meth:`dpnoise.mechanisms.base.Mechanism.privacy_profile`).  The accountants, the planner
and the error-bar code read only this object; none of them knows a mechanism by its class.
It states, for neighbours whose true values differ by at most the sensitivity Δ:

* **whether the release is DP at all** (``dp``; a non-private reproduction answers False and
  every accountant refuses it);
* **a dominating pair** (``pairs``): ``pairs(t)`` describes privacy-loss distributions of
  ordered pairs (:class:`DominatingPairs`) whose envelope, mixed with a revealed coin,
  dominates every ordered pair of the SAMPLED law whose centres differ by at most t lattice
  cells; ``shift_cells`` is the number of cells one sensitivity moves the centre.  None: the
  accountant falls back to the randomized-response pair of the claimed (ε, δ) (Kairouz, Oh
  and Viswanath, "The composition theorem for differential privacy", ICML 2015, Thm. 2.1);
* **its Rényi curve** (``renyi(alpha, k)``: an upper bound on D_α between the output laws of
  neighbours k sensitivities apart) or None ("none": e.g. a finite-support law, whose Rényi
  divergence between shifted neighbours is infinite);
* **its zCDP parameter** ``rho`` (Bun and Steinke, "Concentrated differential privacy:
  simplifications, extensions, and lower bounds", TCC 2016, Def. 1.1) or None with the
  reason in ``not_zcdp``;
* **what interval code needs**: whether the release is ``c(x) + Z`` clamped into a range
  (``shift_invariant``, with ``noise_law()`` the law of Z and ``snap`` the grid the true value
  is snapped to), whether its outputs are integers (``integer_output``), whether it is
  range-adherent (``range_adherent``: its law depends on where the true value lies in the
  range) and its law at a true value (``noise_at``).

This module is the ground floor: data types and closed forms only, no mechanism, law,
sampler or accountant is imported, so :mod:`dpnoise.verify` and :mod:`dpnoise.accounting`
can both use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

#: unit roundoff of float64
U = 2.0**-53


@dataclass(frozen=True)
class LossAtoms:
    """The privacy-loss distribution of one ordered pair (P, Q) as atoms.

    ``losses[i] = ln(P(y_i)/Q(y_i))`` (+inf where Q(y_i) = 0), ``probs[i] = P(y_i)``, and
    ``error`` an absolute bound on the float error of each loss (added before the loss is
    rounded up onto the accountant's grid)."""

    losses: NDArray[np.float64]
    probs: NDArray[np.float64]
    error: NDArray[np.float64] | float = 0.0


@dataclass(frozen=True)
class DominatingPairs:
    """PLDs of ordered pairs whose envelope dominates every neighbouring pair of a law.

    The dominating PLD is ``coin·envelope(pairs) + (1 − coin)·(+∞)`` ("a revealed coin":
    the sampled pmf is a mixture ``coin·G + (1 − coin)·R`` and publishing the coin is
    post-processed away).  ``coin=None``: no mixture.  ``envelope``: "tail" (the upper
    envelope of the loss tails) or "hull" (the convex-hull envelope of Zhu, Dong and Wang,
    "Optimal accounting of differential privacy via characteristic function", AISTATS
    2022); one pair is its own envelope."""

    pairs: tuple[LossAtoms, ...]
    coin: float | None = None
    envelope: Literal["tail", "hull"] = "tail"
    note: str = ""


@dataclass(frozen=True)
class PrivacyProfile:
    """What one release of a mechanism answers for (see the module docstring)."""

    dp: bool
    epsilon: float
    delta: float
    note: str = ""
    # ---- dominating pair
    pairs: Callable[[int], DominatingPairs] | None = None
    shift_cells: int = 1
    sub_shifts: bool = True  # pairs(t) is valid for every t >= 1 (else only shift_cells)
    cache_key: Hashable | None = None  # public parameters: an accountant may cache pairs' PLDs
    # ---- Rényi / zCDP
    renyi: Callable[[NDArray[np.float64], int], NDArray[np.float64]] | None = None
    rho: float | None = None
    # ρ of a move by t of the law's own shift of S lattice cells is at most (t/S)²·ρ
    # (Gaussian-type laws, whose D_α grows with the square of the shift); else a move by
    # less than the sensitivity is only known to cost at most the full ρ
    rho_quadratic: bool = False
    not_zcdp: str = ""
    # ---- what interval and planning code needs
    noise_at: Callable[[float | None], Any] | None = None
    shift_invariant: bool = False
    noise_law: Callable[[], Any] | None = None
    snap: float = 0.0
    integer_output: bool = False
    range_adherent: bool = False

    def __post_init__(self) -> None:
        if self.rho is not None and self.renyi is None:
            raise ValueError("a profile with rho must state its Renyi curve")


def renyi_randomized_response(alpha: NDArray[np.float64], epsilon: float
                              ) -> NDArray[np.float64]:
    """D_α of the randomized-response pair of ε at every α (> 1), rounded up.

    The RR pair dominates every ε-DP pair in the trade-off order (Kairouz, Oh, Viswanath,
    ICML 2015, Thm. 2.1), and Rényi divergence cannot increase under post-processing, so
    this bounds every pair of an ε-DP mechanism.  With p = e^ε/(1 + e^ε), q = 1 − p:
    D_α = ln(p^α q^(1−α) + q^α p^(1−α))/(α − 1) = [α ln p + (1 − α) ln q +
    ln(1 + e^(−(2α − 1)ε))]/(α − 1) (a stable form), capped by ε.
    """
    e = float(epsilon)
    a = np.asarray(alpha, dtype=np.float64)
    if e <= 0:
        return np.zeros(a.size)
    ln_p = -math.log1p(math.exp(-e))
    ln_q = -e - math.log1p(math.exp(-e))
    last = np.log1p(np.exp(-(2 * a - 1) * e))
    log_sum = a * ln_p + (1 - a) * ln_q + last
    # log_sum is a small difference of terms of order α·ln 2 (about α·ε²/2 for a small ε):
    # each term and sum carries a relative rounding error of a few ulp, which the division
    # by α − 1 (exact) keeps -- so the rounded-up value adds 16 ulp of the terms' sizes
    size = np.abs(a * ln_p) + np.abs((1 - a) * ln_q) + np.abs(last)
    tau = (log_sum + 16 * np.finfo(np.float64).eps * size) / (a - 1)
    # pure ε-DP is (ε²/2)-zCDP (Bun and Steinke, "Concentrated differential privacy:
    # simplifications, extensions, and lower bounds", TCC 2016, Prop. 3.3): D_α <= α·ε²/2,
    # the tight bound where the cancellation above loses the most
    return np.minimum(np.minimum(tau, a * (e * e / 2)), e) * (1 + 1e-12) + 1e-15


def renyi_gaussian(rho: float) -> Callable[[NDArray[np.float64], int], NDArray[np.float64]]:
    """The curve α·k²·ρ of a ρ-zCDP Gaussian-type law whose neighbours move k sensitivities
    (D_α(N(0, σ²) ‖ N(kΔ, σ²)) = αk²Δ²/(2σ²); also for the discrete Gaussian: Canonne,
    Kamath and Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020,
    Prop. 5)."""
    def curve(alpha: NDArray[np.float64], k: int = 1) -> NDArray[np.float64]:
        return np.asarray(alpha, dtype=np.float64) * (k * k * rho)

    return curve


def pure_renyi(epsilon: float) -> Callable[[NDArray[np.float64], int], NDArray[np.float64]]:
    """The curve of an ε-DP release moved by k sensitivities: RR of kε (group privacy)."""
    def curve(alpha: NDArray[np.float64], k: int = 1) -> NDArray[np.float64]:
        return renyi_randomized_response(alpha, k * float(epsilon))

    return curve


def claimed_profile(epsilon: float, delta: float, *, note: str = "",
                    **facts: Any) -> PrivacyProfile:
    """The profile of a mechanism known only by its claimed (ε, δ): the randomized-response
    pair as dominating pair; for δ = 0 the RR Rényi curve and ρ = ε²/2 (Bun and Steinke
    2016, Prop. 1.4); for δ > 0 no Rényi curve (an (ε, δ) guarantee bounds no D_α)."""
    e, d = float(epsilon), float(delta)
    if d > 0:
        return PrivacyProfile(True, e, d, note, rho=None,
                              not_zcdp=("an (eps, delta) guarantee with delta > 0 bounds no "
                                        "Renyi divergence: no zCDP guarantee; use the "
                                        "'pld' or 'basic' accountant"),
                              **facts)
    return PrivacyProfile(True, e, 0.0, note, renyi=pure_renyi(e), rho=e * e / 2, **facts)


def not_dp_profile(epsilon: float, note: str, **facts: Any) -> PrivacyProfile:
    """A release that is NOT differentially private: every accountant refuses it."""
    return PrivacyProfile(False, float(epsilon), 1.0, note, not_zcdp=note, **facts)
