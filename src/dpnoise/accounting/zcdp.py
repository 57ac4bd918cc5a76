"""Zero-concentrated DP (zCDP) and Rényi curves of the sampled laws, and conversions to (ε, δ).

ρ-zCDP (Bun and Steinke, "Concentrated differential privacy: simplifications, extensions, and
lower bounds", TCC 2016, Def. 1.1): D_α(M(x) ‖ M(x')) <= ρα for every α > 1 and neighbours.
Composition adds ρ (ibid. Lemma 2.3).  Each mechanism states its own ρ in its privacy
profile (``privacy_profile().rho``, :mod:`dpnoise.profile`), from the law it samples:

* the discrete Gaussian's exact CKS sampler (``sampler="cks"``) draws N_ℤ(0, σ²):
  ρ = Δ²/(2σ²) (Canonne, Kamath, Steinke, "The discrete Gaussian for differential
  privacy", NeurIPS 2020, Prop. 5);
* pure ε-DP mechanisms: ρ = ε²/2 (Bun and Steinke, Prop. 1.4);
* a finite-support law (the discrete Gaussian's alias table, the lattice Gaussians'
  tables, the truncated Laplacian, count noise) has D_α = ∞ between shifted neighbours
  (some outputs are possible under one only): ρ is None and the zCDP accountant
  **refuses** it with the profile's reason (``not_zcdp``);
* (ε, δ) guarantees with δ > 0 and releases that are not DP: refused.

Conversions to (ε, δ): the tight one of Canonne, Kamath and Steinke (NeurIPS 2020, Sec. 2.3,
Prop. 12 / Cor. 13 of arXiv:2004.00010v3): ρ-zCDP implies (ε, δ)-DP with

    δ = inf_{α > 1} exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α,

minimised numerically over α and rounded up (the value at ANY α is a valid bound, so an
inexact minimiser only loosens it); and the classical ε = ρ + 2√(ρ ln(1/δ)) (Bun–Steinke
Prop. 1.3), of which the smaller is reported.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ParameterError


def rho_of(mechanism: Any) -> float:
    """The zCDP parameter ρ of one release of ``mechanism``, from its privacy profile;
    ParameterError when it has none (see the module docstring)."""
    from .sources import profile_of

    profile = profile_of(mechanism)  # refuses what is not DP
    if profile.rho is None:
        raise ParameterError(f"{profile.not_zcdp or 'no zCDP guarantee'} ({mechanism!r})")
    return float(profile.rho)


def renyi_gaussian(alpha: float | np.ndarray, sigma: float, sensitivity: float = 1.0) -> Any:
    """D_α of N(0,σ²) vs N(Δ,σ²) = αΔ²/(2σ²) (also an upper bound for N_ℤ: CKS Prop. 5)."""
    return np.asarray(alpha) * sensitivity**2 / (2 * sigma**2)


def _log_delta_at(alpha: float, rho: float, eps: float) -> float:
    return ((alpha - 1) * (alpha * rho - eps) - math.log(alpha - 1)
            + alpha * math.log1p(-1 / alpha))


def delta_from_rho(rho: float, epsilon: float) -> float:
    """Smallest δ of the CKS conversion (upper bound; 0 only for ρ = 0)."""
    if rho < 0 or epsilon < 0 or math.isnan(rho) or math.isnan(epsilon):
        raise ParameterError("rho and epsilon must be >= 0")
    if rho == 0:
        return 0.0
    # the minimiser is near α* = (ε + ρ)/(2ρ) + 1; search on ln(α − 1)
    def f(t: float) -> float:
        # every α > 1 gives a valid bound; where α − 1 leaves the double range (the search
        # wanders towards α = 1 when ρ is large and δ is near 1), log δ = 0 (δ <= 1) is
        # the trivially valid value
        if not -700.0 < t < 700.0:
            return 0.0
        alpha = 1 + math.exp(t)
        return 0.0 if alpha == 1.0 else _log_delta_at(alpha, rho, epsilon)

    guess = min(690.0, math.log(max(1e-9, (epsilon + rho) / (2 * rho))))
    from scipy import optimize  # lazily: importing scipy.optimize costs ~1 s

    res = optimize.minimize_scalar(f, bracket=(guess - 1, guess + 1), tol=1e-12)
    best = min(float(res.fun), f(guess))
    return min(1.0, math.exp(best) * (1 + 1e-12))


def epsilon_from_rho(rho: float, delta: float) -> float:
    """Smallest ε with δ(ε) <= delta (bisection on the CKS bound, rounded up), capped by the
    classical ρ + 2√(ρ ln(1/δ))."""
    if not 0 < delta <= 1:
        raise ParameterError(f"delta must be in (0, 1], got {delta!r}")
    if rho == 0:
        return 0.0
    classic = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    lo, hi = 0.0, classic
    if delta_from_rho(rho, 0.0) <= delta:
        return 0.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if delta_from_rho(rho, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return min(classic, hi * (1 + 1e-12))


def rho_for_budget(epsilon: float, delta: float) -> float:
    """Largest ρ whose CKS conversion meets (ε, δ) (bisection, rounded down)."""
    lo, hi = 0.0, max(1.0, epsilon)
    while delta_from_rho(hi, epsilon) <= delta:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if delta_from_rho(mid, epsilon) <= delta:
            lo = mid
        else:
            hi = mid
    return lo
