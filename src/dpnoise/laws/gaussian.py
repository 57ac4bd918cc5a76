"""The Gaussian mechanism's calibration: the exact delta of a continuous Gaussian and the sigma
that meets a target delta (analytic: Balle and Wang, "Improving the Gaussian Mechanism for
Differential Privacy: Analytical Calibration and Optimal Denoising", ICML 2018, Theorem 8;
classic: Dwork and Roth, "The Algorithmic Foundations of Differential Privacy", Theorem A.1).
"""

from __future__ import annotations

import math

from scipy import optimize, special

from ..errors import ParameterError
from ..params import (
    check_delta,
    check_epsilon,
    check_finite,
    check_positive,
    check_sensitivity,
)


# ---------------------------------------------------------------- calibration math
def log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """ln δ_G(σ) (Balle & Wang Thm 8), never forming e^ε·Φ."""
    r = sigma / sensitivity
    u = 0.5 / r
    v = epsilon * r
    la = float(special.log_ndtr(u - v))
    lb = float(special.log_ndtr(-u - v))
    x = epsilon + lb - la
    if x >= 0.0:  # only by rounding when δ_G ≈ 0
        return -math.inf
    return la + math.log(-math.expm1(x))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """δ_G(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) (closed form, log-space evaluated).

    Parameters
    ----------
    sigma : float
        The Gaussian's standard deviation σ > 0.
    epsilon : float
        ε >= 0.
    sensitivity : float, default 1.0
        Δ.

    Returns
    -------
    float
        The exact δ of the continuous Gaussian mechanism at ε (Balle & Wang 2018, Theorem 8).

    Raises
    ------
    ParameterError
        If a parameter is out of range (σ and Δ finite and > 0, ε finite and >= 0).
    """
    sigma = check_positive("sigma", sigma)
    eps = check_finite("epsilon", epsilon)
    if eps < 0:
        raise ParameterError(f"epsilon must be >= 0, got {epsilon!r}")
    return math.exp(log_gaussian_delta(sigma, eps, check_sensitivity(sensitivity)))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ with δ_G(σ) <= δ (Balle & Wang 2018), relative error ~1e-12.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).
    sensitivity : float, default 1.0
        Δ.

    Returns
    -------
    float
        The smallest σ with ``δ_G(σ) <= δ`` (Balle & Wang 2018, Theorem 8).

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    sens = check_sensitivity(sensitivity)
    target = math.log(dlt)

    def f(s: float) -> float:
        return log_gaussian_delta(math.exp(s), eps, 1.0) - target

    lo, hi = -5.0, 5.0
    while f(lo) < 0:
        lo -= 5.0
    while f(hi) > 0:
        hi += 5.0
    s = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=200)
    return sens * math.exp(s)


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ·sqrt(2 ln(1.25/δ))/ε, valid for 0 < ε < 1 (Dwork & Roth Thm A.1).

    Parameters
    ----------
    epsilon : float
        ε in (0, 1).
    delta : float
        δ in (0, 1).
    sensitivity : float, default 1.0
        Δ.

    Returns
    -------
    float
        ``σ = Δ·sqrt(2 ln(1.25/δ))/ε``.

    Raises
    ------
    ParameterError
        If ε is not in (0, 1) or another parameter is out of range.
    """
    eps = check_epsilon(epsilon, upper=1.0)
    if eps >= 1.0:
        raise ParameterError(f"epsilon must be in (0, 1) for the classic Gaussian, got {eps!r}")
    dlt = check_delta(delta)
    sens = check_sensitivity(sensitivity)
    return sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps
