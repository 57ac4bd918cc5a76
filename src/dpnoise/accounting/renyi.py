"""Rényi-DP curves of one release, for the "zcdp" accountant, and their conversion to (ε, δ).

A curve is the vector τ_α >= sup over neighbours of D_α(M(x) ‖ M(x')) on the fixed grid
:data:`ALPHAS`; composition adds curves (Mironov, "Rényi differential privacy", CSF 2017,
Prop. 1), and every ρ-zCDP charge has the curve αρ, so a state's curve is always <= α·Σρ.
Per release, each
mechanism states its curve in its privacy profile (``privacy_profile().renyi(alpha, k)``,
:mod:`dpnoise.profile`), for a person who moves it by k sensitivities:

* **pure ε-DP**: the curve of randomized response,
  D_α(RR_ε) = ln(p^α q^(1−α) + q^α p^(1−α))/(α − 1), p = e^ε/(1 + e^ε), q = 1 − p.  The RR
  pair dominates every ε-DP pair in the trade-off order (Kairouz, Oh, Viswanath, ICML 2015,
  Thm. 2.1), i.e. every ε-DP pair is a post-processing of it, and Rényi divergence cannot
  increase under post-processing -- so this bounds every neighbouring pair.  It is below the
  zCDP bound αε²/2 at every α (ε = 1, α = 2: 0.735 vs 1.0) and below ε.  A release whose
  person moves one cell by k sensitivities is kε-DP (group privacy): RR_{kε}.
* **the discrete Gaussian's exact sampler**: αk²Δ²/(2σ²), the Canonne–Kamath–Steinke bound
  for the law sampled (NeurIPS 2020, Prop. 5).
* a profile without a curve (a finite-support law, an (ε, δ) guarantee): refused.

Conversion (Canonne, Kamath, Steinke 2020, Prop. 12; the same formula the ρ conversion of
:mod:`.zcdp` uses with τ_α = αρ): (α, τ)-RDP implies (ε, δ)-DP with

    ln δ = (α − 1)(τ − ε) − ln(α − 1) + α ln(1 − 1/α),

valid at every α > 1, so the minimum over the grid is a valid (and conservative) bound.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..profile import renyi_randomized_response
from .sources import profile_of
from .zcdp import rho_of

# α = 1 + 2^(k/4), k = -12..40: 53 orders from 1.125 to 1025, 19 % apart in α − 1 (the
# conversion's optimum is flat in α, so this loses < 1e-3 relative in ε against a continuum)
ALPHAS = 1.0 + np.exp2(np.arange(-12, 41) / 4.0)


def randomized_response_curve(epsilon: float) -> NDArray[np.float64]:
    """D_α of the randomized-response pair of ε at every α of :data:`ALPHAS`, rounded up
    (:func:`dpnoise.profile.renyi_randomized_response`)."""
    return renyi_randomized_response(ALPHAS, epsilon)


def curve_of(mechanism: Any, shift: int = 1) -> NDArray[np.float64]:
    """The Rényi curve on :data:`ALPHAS` of one release of ``mechanism`` whose person moves
    it by ``shift`` sensitivities, from its privacy profile; raises like
    :func:`.zcdp.rho_of` for laws with no Rényi guarantee."""
    rho_of(mechanism)  # refuses what is not DP and laws without a curve
    curve = profile_of(mechanism).renyi
    assert curve is not None  # a profile with rho has a curve (PrivacyProfile checks it)
    return np.asarray(curve(ALPHAS, int(shift)), dtype=np.float64)


def delta_from_curve(tau: NDArray[np.float64], epsilon: float) -> float:
    """Smallest δ over the grid of the RDP-to-(ε, δ) conversion (an upper bound)."""
    a = ALPHAS
    log_d = (a - 1) * (tau - epsilon) - np.log(a - 1) + a * np.log1p(-1 / a)
    return float(min(1.0, math.exp(min(0.0, float(np.min(log_d)))) * (1 + 1e-12)))


def epsilon_from_curve(tau: NDArray[np.float64], delta: float) -> float:
    """Smallest ε over the grid with the conversion's δ <= ``delta`` (an upper bound)."""
    a = ALPHAS
    eps = tau + (a * np.log1p(-1 / a) - np.log(a - 1) - math.log(delta)) / (a - 1)
    return max(0.0, float(np.min(eps)) * (1 + 1e-12))
