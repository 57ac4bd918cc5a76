"""The continuous optimal (staircase) noise law of paper 004, §5, with the corrected Thm 9.

Spec 004 §3: the density printed in Theorem 9 is off by one step.  The correct form,
with b = e^(-ε), plateau half-width d = γΔ (0 <= γ <= 1) and M0 fixed by normalisation,
is

    f(x) = M0                 for |x| <= d,
    f(x) = M0 · b^(k+1)       for d + kΔ < |x| <= d + (k+1)Δ,   k = 0, 1, 2, ...

    M0 = (1 − b) / (2 (d (1 − b) + bΔ)).

It is the Geng–Viswanath staircase with γ = d/Δ.  γ = 0 and γ = 1 give the same law.
The free parameter is chosen by a criterion (spec §3 "Choosing d"):

* ``variance``: γ* = −b/(1−b) + (b − 2b² + 2b⁴ − b⁵)^(1/3) / (2^(1/3) (1−b)²); for ε < 0.1
  the series γ* = 1/2 − ε/12 + ε⁵/12960 (the closed form cancels badly there).
* ``mean_abs``: γ* = 1/(1 + e^(ε/2)).
* ``interval`` at level p (α = 1 − p): K = ceil(ln(1/α)/ε), γ* = (e^(−Kε)/α − b)/(1 − b).

Closed forms (spec §3, with S0 = 1/(1−b), S1 = b/(1−b)², S2 = b(1+b)/(1−b)³):

    Var  = 2M0 [ d³/3 + bΔ( (d² + dΔ + Δ²/3) S0 + (2d+Δ)Δ S1 + Δ² S2 ) ]
    E|X| = 2M0 [ d²/2 + bΔ( (d + Δ/2) S0 + Δ S1 ) ]
    P(X > x) = 1/2 − M0 x (x <= d);  M0 b^(k+1) (Δ/(1−b) − r), x = d + kΔ + r (x > d).

This module is the *ideal* real-valued law (paper tables, plots, utility).  What
:class:`dpnoise.Staircase` releases is its exact power-of-two-grid counterpart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..params import check_epsilon, check_finite, check_sensitivity

Criterion = Literal["variance", "mean_abs", "interval"]
CRITERIA: tuple[str, ...] = ("variance", "mean_abs", "interval")


def check_level(level: float, *, name: str = "level") -> float:
    x = check_finite(name, level)
    if not 0.0 < x < 1.0:
        raise ParameterError(f"{name} must be in (0, 1), got {x!r}")
    return x


def optimal_gamma(epsilon: float, criterion: str = "variance", level: float = 0.95) -> float:
    """γ = d/Δ minimising the criterion within the optimal family (spec 004 §3)."""
    eps = check_epsilon(epsilon)
    if criterion == "variance":
        if eps < 0.1:
            return 0.5 - eps / 12 + eps**5 / 12960
        b = math.exp(-eps)
        omb = -math.expm1(-eps)
        root = (b - 2 * b**2 + 2 * b**4 - b**5) ** (1 / 3)
        return -b / omb + root / (2 ** (1 / 3) * omb**2)
    if criterion == "mean_abs":
        return 1.0 / (1.0 + math.exp(eps / 2))
    if criterion == "interval":
        alpha = 1.0 - check_level(level)
        K = math.ceil(math.log(1 / alpha) / eps - 1e-12)
        K = max(K, 1)
        b = math.exp(-eps)
        g = (math.exp(-K * eps) / alpha - b) / -math.expm1(-eps)
        return min(1.0, max(0.0, g))
    raise ParameterError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")


def _root_from_zero(mass: Callable[[float], float]) -> float:
    """Root t > 0 of an increasing ``mass`` with mass(0) <= 0: bracket [0, 2^k], then Brent."""
    from scipy.optimize import brentq

    hi = 1.0
    while mass(hi) < 0:
        hi *= 2
    return brentq(mass, 0.0, hi, xtol=1e-14, rtol=1e-14)


class StaircaseDensity:
    """Ideal continuous staircase law (corrected Thm 9), scipy.stats-like."""

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, gamma: float) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        g = check_finite("gamma", gamma)
        if not 0.0 <= g <= 1.0:
            raise ParameterError(f"gamma = d/sensitivity must be in [0, 1], got {g!r}")
        self.gamma = 1.0 if g == 0.0 else g  # γ = 0 and γ = 1 are the same law (spec §3)
        self.d = self.gamma * self.sensitivity
        self.b = math.exp(-self.epsilon)
        self.one_minus_b = -math.expm1(-self.epsilon)
        D = self.sensitivity
        self.M0 = self.one_minus_b / (2 * (self.d * self.one_minus_b + self.b * D))
        self.T0 = 0.5 - self.M0 * self.d  # P(X > d)

    # ------------------------------------------------------------- density
    def level(self, x: ArrayLike) -> NDArray[np.float64]:
        """L(x) = 0 on the plateau |x| <= d, else ceil((|x| − d)/Δ) (right-closed steps)."""
        a = np.abs(np.asarray(x, dtype=np.float64))
        lev = np.ceil((a - self.d) / self.sensitivity)
        return np.where(a <= self.d, 0.0, np.maximum(lev, 1.0))

    def logpdf(self, x: ArrayLike) -> NDArray[np.float64]:
        return math.log(self.M0) - self.epsilon * self.level(x)

    def pdf(self, x: ArrayLike) -> NDArray[np.float64]:
        return np.exp(self.logpdf(x))

    def _sf_pos(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(X > a) for a >= 0."""
        D, d = self.sensitivity, self.d
        k = np.floor(np.maximum(a - d, 0.0) / D)
        r = a - d - k * D
        with np.errstate(under="ignore"):
            outer = self.M0 * np.exp(-self.epsilon * (k + 1)) * (D / self.one_minus_b - r)
        return np.where(a <= d, 0.5 - self.M0 * a, outer)

    def sf(self, x: ArrayLike) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float64)
        s = self._sf_pos(np.abs(x))
        return np.where(x >= 0, s, 1.0 - s)

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float64)
        s = self._sf_pos(np.abs(x))
        return np.where(x >= 0, 1.0 - s, s)

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        """Inverse cdf (spec §5 step 4)."""
        u = np.asarray(q, dtype=np.float64)
        if np.any((u < 0) | (u > 1)) or np.any(np.isnan(u)):
            raise ParameterError("q must be in [0, 1]")
        t = np.minimum(u, 1.0 - u)
        D, d = self.sensitivity, self.d
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = (0.5 - t) / self.M0
            k = np.floor(np.log(t / self.T0) / -self.epsilon) if self.T0 > 0 else np.zeros_like(t)
            k = np.maximum(np.nan_to_num(k, nan=0.0, posinf=0.0), 0.0)
            r = D / self.one_minus_b - t / (self.M0 * np.exp(-self.epsilon * (k + 1)))
            outer = d + k * D + np.clip(r, 0.0, D)
        mag = np.where(t >= self.T0, inner, outer)
        mag = np.where(t == 0, np.inf, mag)
        return np.where(u >= 0.5, mag, -mag)

    # ------------------------------------------------------------- moments
    def _sums(self) -> tuple[float, float, float]:
        omb, b = self.one_minus_b, self.b
        return 1 / omb, b / omb**2, b * (1 + b) / omb**3

    def var(self) -> float:
        D, d, b = self.sensitivity, self.d, self.b
        S0, S1, S2 = self._sums()
        steps = (d * d + d * D + D * D / 3) * S0 + (2 * d + D) * D * S1 + D * D * S2
        return 2 * self.M0 * (d**3 / 3 + b * D * steps)

    def std(self) -> float:
        return math.sqrt(self.var())

    def mean(self) -> float:
        return 0.0

    def mean_abs(self) -> float:
        D, d, b = self.sensitivity, self.d, self.b
        S0, S1, _ = self._sums()
        return 2 * self.M0 * (d * d / 2 + b * D * ((d + D / 2) * S0 + D * S1))

    def interval_halfwidth(self, level: float) -> float:
        """c with P(|X| <= c) = level (the symmetric confidence interval is [−c, c])."""
        p = check_level(level)
        return float(self.ppf(0.5 + p / 2))

    def interval_size(self, level: float) -> float:
        return 2 * self.interval_halfwidth(level)


def min_variance(epsilon: float, sensitivity: float = 1.0) -> float:
    """V_min = Δ² (2^(-2/3) b^(2/3) (1+b)^(2/3) + b) / (1−b)² (Geng–Viswanath)."""
    b = math.exp(-epsilon)
    return sensitivity**2 * (2 ** (-2 / 3) * b ** (2 / 3) * (1 + b) ** (2 / 3) + b) / math.expm1(
        -epsilon
    ) ** 2


def laplace_variance(epsilon: float, sensitivity: float = 1.0) -> float:
    return 2 * (sensitivity / epsilon) ** 2


def laplace_interval_size(epsilon: float, sensitivity: float, level: float) -> float:
    """Length of the symmetric interval of Laplace(Δ/ε) with coverage ``level``: 2Δ ln(1/α)/ε."""
    return 2 * sensitivity * math.log(1 / (1 - level)) / epsilon


# ---------------------------------------------------------------- multivariate (§6)
def level_weights(epsilon: float, volume, *, tail: float = 1e-18) -> NDArray[np.float64]:
    """w_i ∝ b^i vol(B_i), normalised, truncated where the remaining mass < ``tail``.

    ``volume(i)`` gives vol(B_i) for an integer array i (nested-set form, spec §6).
    """
    b = math.exp(-epsilon)
    n = 64
    while True:
        i = np.arange(n, dtype=np.float64)
        with np.errstate(under="ignore"):
            w = np.exp(-epsilon * i) * volume(i)
        tot = w.sum()
        if w[-1] * n / max(tot, 1e-300) < tail * (1 - b) or n > 1 << 22:
            return w / tot
        n *= 2


class BoxStaircaseDensity:
    """Ideal Theorem 13 noise for S_f = Π[−s_k, s_k], S_0 = Π[−z_k, z_k] (0 <= z_k <= s_k).

    B_i = Π[−(z_k + i s_k), z_k + i s_k]; f = Σ_i w_i Uniform(B_i), w_i ∝ b^i vol(B_i);
    density M b^L(x) with L(x) = max(0, max_k ceil((|x_k| − z_k)/s_k)).
    """

    def __init__(self, *, epsilon: float, sensitivities, plateau) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.s = np.array([check_sensitivity(v, name="sensitivities") for v in sensitivities])
        self.z = np.array([check_finite("plateau", v) for v in plateau], dtype=np.float64)
        if self.s.size < 1 or self.z.shape != self.s.shape:
            raise ParameterError("plateau must have one entry per sensitivity")
        if np.any(self.z < 0) or np.any(self.z > self.s):
            raise ParameterError("plateau half-widths must satisfy 0 <= z_k <= s_k")
        self.dim = self.s.size
        self.weights = level_weights(self.epsilon, self.volume)
        i = np.arange(self.weights.size)
        b = math.exp(-self.epsilon)
        # M from w_i = M (1−b) b^i vol(B_i)
        norm = float(np.sum(np.exp(-self.epsilon * i) * self.volume(i)))
        self.M = 1.0 / ((1 - b) * norm)

    def half_widths(self, i: ArrayLike) -> NDArray[np.float64]:
        i = np.asarray(i, dtype=np.float64)
        return self.z[None, :] + i.reshape(-1, 1) * self.s[None, :]

    def volume(self, i: ArrayLike) -> NDArray[np.float64]:
        return np.prod(2 * self.half_widths(i), axis=1)

    def level(self, x: ArrayLike) -> NDArray[np.float64]:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        per = np.ceil((np.abs(x) - self.z) / self.s)
        return np.maximum(per.max(axis=1), 0.0)

    def logpdf(self, x: ArrayLike) -> NDArray[np.float64]:
        return math.log(self.M) - self.epsilon * self.level(x)

    def var(self) -> NDArray[np.float64]:
        """Per-coordinate variance Σ_i w_i (z_k + i s_k)²/3."""
        h = self.half_widths(np.arange(self.weights.size))
        return (self.weights[:, None] * h**2 / 3).sum(axis=0)

    def region_scale(self, level: float) -> float:
        """t such that the box t·S_f holds ``level`` (for z = λ s it is the minimal region)."""
        p = check_level(level)
        h = self.half_widths(np.arange(self.weights.size))

        def mass(t: float) -> float:
            frac = np.minimum(1.0, t * self.s[None, :] / h).prod(axis=1)
            return float((self.weights * frac).sum()) - p

        return _root_from_zero(mass)

    def region_size(self, level: float) -> float:
        """Volume of the box t·S_f holding ``level``: (2t)^d Π s_k."""
        t = self.region_scale(level)
        return float(np.prod(2 * t * self.s))


class L1StaircaseDensity:
    """Ideal Theorem 13 noise for S_f = {‖δ‖_1 <= Δ} in m dimensions, S_0 = λ S_f.

    Y = (λ + I)·U, U ~ Uniform(S_f), P(I = i) ∝ b^i (λ + i)^m;
    Var(Y_k) = E[(λ+I)²] · 2Δ²/((m+1)(m+2)).
    """

    def __init__(self, *, epsilon: float, sensitivity: float, dim: int, lam: float) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        if not (isinstance(dim, int) and dim >= 1):
            raise ParameterError(f"dim must be an integer >= 1, got {dim!r}")
        self.dim = dim
        lam = check_finite("lam", lam)
        if not 0 <= lam <= 1:
            raise ParameterError(f"lam must be in [0, 1], got {lam!r}")
        self.lam = lam
        self.weights = level_weights(self.epsilon, lambda i: (lam + i) ** dim)

    def region_scale(self, level: float) -> float:
        """t such that the ball t·S_f (a union of levels, the minimal region) holds ``level``:
        Σ_i w_i min(1, (t/(λ+i))^m) = level."""
        p = check_level(level)
        r = self.lam + np.arange(self.weights.size)
        r = np.where(r > 0, r, 1e-300)

        def mass(t: float) -> float:
            return float((self.weights * np.minimum(1.0, (t / r) ** self.dim)).sum()) - p

        return _root_from_zero(mass)

    def region_size(self, level: float) -> float:
        """Volume of t·S_f: (2tΔ)^m / m!."""
        t = self.region_scale(level)
        return float((2 * t * self.sensitivity) ** self.dim / math.factorial(self.dim))

    def var(self) -> float:
        i = np.arange(self.weights.size)
        m = self.dim
        return float((self.weights * (self.lam + i) ** 2).sum()) * 2 * self.sensitivity**2 / (
            (m + 1) * (m + 2))


def optimal_lambda(epsilon: float, dim: int) -> float:
    """λ in [0, 1] minimising E[(λ+I)²] (the per-coordinate variance; box or L1 ball)."""
    from scipy.optimize import minimize_scalar

    def second(lam: float) -> float:
        w = level_weights(epsilon, lambda i: (lam + i) ** dim)
        return float((w * (lam + np.arange(w.size)) ** 2).sum())

    res = minimize_scalar(second, bounds=(0.0, 1.0), method="bounded",
                          options={"xatol": 1e-9})
    return float(res.x)


def laplace_l1_region(epsilon: float, sensitivity: float, level: float) -> float:
    """Radius α with P(‖Y‖_1 <= α) = level for two iid Laplace(Δ/ε) coordinates."""
    from scipy.optimize import brentq

    s = sensitivity / epsilon
    p = check_level(level)
    return brentq(lambda a: 1 - math.exp(-a / s) * (1 + a / s) - p, 0.0, 200 * s, xtol=1e-13)
