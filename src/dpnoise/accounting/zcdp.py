"""Zero-concentrated DP (zCDP) and Rényi curves of the sampled laws, and conversions to (ε, δ).

ρ-zCDP (Bun and Steinke, "Concentrated differential privacy: simplifications, extensions, and
lower bounds", TCC 2016, Def. 1.1): D_α(M(x) ‖ M(x')) <= ρα for every α > 1 and neighbours.
Composition adds ρ (ibid. Lemma 2.3).  What dpnoise charges per mechanism:

* ``DiscreteGaussian``: ρ = Δ²/(2σ²) *exactly for the law sampled* (the exact CKS sampler draws
  N_ℤ(0, σ²)); Canonne, Kamath, Steinke, "The discrete Gaussian for differential privacy",
  NeurIPS 2020, Prop. 5 (Rényi divergence of shifted discrete Gaussians <= αΔ²/(2σ²)).
* pure ε-DP mechanisms (Laplace, ClampedLaplace, Geometric, Staircase, RangeLaplace, and the
  planar/multivariate ones by their claimed ε): ρ = ε²/2 (Bun and Steinke, Prop. 1.4).
* ``Gaussian`` / ``AnalyticGaussian``: dpnoise samples a *finite* 64-bit table on ±9.6σ, not
  N(0, σ²); two shifted finite-support laws have D_α = ∞ (some outputs are possible under one
  only).  Likewise ``TruncatedLaplace`` and ``CountNoise``.  **Refused** under "zcdp" with a
  ParameterError (decision: an approximate-zCDP charge would need a proof for the quantised
  table's tails that is not written yet; use the "pld" accountant, which accounts for these
  laws exactly, or DiscreteGaussian).

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

REFUSED = ("Gaussian", "AnalyticGaussian", "TruncatedLaplace", "CountNoise")


def rho_of(mechanism: Any) -> float:
    """The zCDP parameter ρ of one release of ``mechanism`` (see the module docstring)."""
    name = type(mechanism).__name__
    if name == "DiscreteGaussian":
        return float(mechanism.sensitivity) ** 2 / (2 * float(mechanism.sigma2))
    if name in REFUSED:
        raise ParameterError(
            f"{name} samples a finite-support law, whose Renyi divergence between neighbours "
            "is infinite: it has no zCDP guarantee. Use the 'pld' accountant (exact for this "
            "law) or DiscreteGaussian under 'zcdp'.")
    g = getattr(mechanism, "guarantee", None)
    if g is None:
        raise ParameterError(f"cannot account for {name}: it has no guarantee")
    if g.delta and g.delta > 0:
        raise ParameterError(f"{name} is (eps, delta)-DP with delta > 0: no zCDP guarantee")
    return float(g.epsilon) ** 2 / 2


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
        return _log_delta_at(1 + math.exp(t), rho, epsilon)

    guess = math.log(max(1e-9, (epsilon + rho) / (2 * rho)))
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
