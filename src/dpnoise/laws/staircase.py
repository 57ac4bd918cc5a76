"""The continuous optimal (staircase) noise law (Soria-Comas & Domingo-Ferrer 2013, §5, Thm 9).

The density of Theorem 9, corrected (the printed one is off by one step),
with b = e^(-ε), plateau half-width d = γΔ (0 <= γ <= 1) and M0 fixed by normalisation,
is

    f(x) = M0                 for |x| <= d,
    f(x) = M0 · b^(k+1)       for d + kΔ < |x| <= d + (k+1)Δ,   k = 0, 1, 2, ...

    M0 = (1 − b) / (2 (d (1 − b) + bΔ)).

It is the Geng–Viswanath staircase with γ = d/Δ.  γ = 0 and γ = 1 give the same law.
The free parameter is chosen by a criterion (derived here):

* ``variance``: γ* = −b/(1−b) + (b − 2b² + 2b⁴ − b⁵)^(1/3) / (2^(1/3) (1−b)²); for ε < 0.1
  the series γ* = 1/2 − ε/12 + ε⁵/12960 (the closed form cancels badly there).
* ``mean_abs``: γ* = 1/(1 + e^(ε/2)).
* ``interval`` at level p (α = 1 − p): K = ceil(ln(1/α)/ε), γ* = (e^(−Kε)/α − b)/(1 − b).

Closed forms (with S0 = 1/(1−b), S1 = b/(1−b)², S2 = b(1+b)/(1−b)³):

    Var  = 2M0 [ d³/3 + bΔ( (d² + dΔ + Δ²/3) S0 + (2d+Δ)Δ S1 + Δ² S2 ) ]
    E|X| = 2M0 [ d²/2 + bΔ( (d + Δ/2) S0 + Δ S1 ) ]
    P(X > x) = 1/2 − M0 x (x <= d);  M0 b^(k+1) (Δ/(1−b) − r), x = d + kΔ + r (x > d).

This module is the *ideal* real-valued law (paper tables, plots, utility), its multivariate
forms (§6), and, at the end, the lattice calibration that picks the block and grid of the
exact sampler (~540 lines: all of one family's maths, the one place it is calibrated).  What
:class:`dpnoise.Staircase` releases is its exact power-of-two-grid counterpart.

References:
  * J. Soria-Comas, J. Domingo-Ferrer, "Optimal data-independent noise for differential
    privacy", Information Sciences 250:200-214, 2013.
  * Q. Geng, P. Viswanath, "The Optimal Noise-Adding Mechanism in Differential Privacy",
    IEEE Transactions on Information Theory 62(2):925-951, 2016.

Errata of the paper, each explained: docs/papers.md#errata-staircase.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.ratio_geometric import MAX_SPAN_BITS, RatioGeometric, ratio_candidates
from ..exact.staircase import BLOCK_BITS, LatticeStaircase, aligned_blocks
from ..grid import grid_sensitivity, power_of_two_at_most
from ..params import LN2, check_epsilon, check_finite, check_sensitivity
from .base import Law
from .bounded_minimum import bounded_minimum

Criterion = Literal["variance", "mean_abs", "interval"]
CRITERIA: tuple[str, ...] = ("variance", "mean_abs", "interval")


def check_level(level: float, *, name: str = "level") -> float:
    x = check_finite(name, level)
    if not 0.0 < x < 1.0:
        raise ParameterError(f"{name} must be in (0, 1), got {x!r}")
    return x


def optimal_gamma(epsilon: float, criterion: str = "variance", level: float = 0.95) -> float:
    """γ = d/Δ minimising the criterion within the optimal family."""
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


class StaircaseDensity(Law):
    """Ideal continuous staircase law (corrected Thm 9), scipy.stats-like."""

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, gamma: float) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        g = check_finite("gamma", gamma)
        if not 0.0 <= g <= 1.0:
            raise ParameterError(f"gamma = d/sensitivity must be in [0, 1], got {g!r}")
        self.gamma = 1.0 if g == 0.0 else g  # γ = 0 and γ = 1 are the same law
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
        with np.errstate(under="ignore", invalid="ignore"):
            k = np.floor(np.maximum(a - d, 0.0) / D)
            r = a - d - k * D
            outer = self.M0 * np.exp(-self.epsilon * (k + 1)) * (D / self.one_minus_b - r)
        outer = np.where(np.isinf(a), 0.0, outer)  # inf - k·D is NaN: P(X > inf) = 0
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
        """Inverse cdf."""
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

    ``volume(i)`` gives vol(B_i) for an integer array i (nested-set form).
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
    """λ in [0, 1] minimising E[(λ+I)²] (the per-coordinate variance; box or L1 ball).

    Brent's bounded minimisation (:func:`~dpnoise.laws.bounded_minimum.bounded_minimum`, the
    same doubles as ``scipy.optimize.minimize_scalar(..., method="bounded")`` without its
    import), to x-tolerance 1e-9.
    """

    def second(lam: float) -> float:
        w = level_weights(epsilon, lambda i: (lam + i) ** dim)
        return float((w * (lam + np.arange(w.size)) ** 2).sum())

    return bounded_minimum(second, 0.0, 1.0, xatol=1e-9)


def laplace_l1_region(epsilon: float, sensitivity: float, level: float) -> float:
    """Radius α with P(‖Y‖_1 <= α) = level for two iid Laplace(Δ/ε) coordinates."""
    from scipy.optimize import brentq

    s = sensitivity / epsilon
    p = check_level(level)
    return brentq(lambda a: 1 - math.exp(-a / s) * (1 + a / s) - p, 0.0, 200 * s, xtol=1e-13)

# ---------------------------------------------------------------- lattice calibration
# The exact power-of-two-grid counterpart of the law above: which block (a, M) and which grid
# the released :class:`~dpnoise.exact.staircase.LatticeStaircase` uses.  This is the one part
# of this module that builds exact samplers' tables (to measure the exact quantised loss).
ROUNDING_ALLOWANCE = 1e-12
JOINT_MAX_OUTCOMES = 1 << 13  # one-word period table: <= 2^13 blocks (2 x 128 KiB, cached)
JOINT_TAIL_NATS = 10.0  # the block spans >= 10/ε steps: mass beyond its boundary <= e^-10
DEFAULT_GRID_BITS = 12
MAX_PERIOD_CELLS = 1 << 20  # M·S: keeps tables and the verifier's window small


def _blocks_per_step(S: int) -> int:
    """Upper bound on the aligned blocks of the two parts of one step (any plateau G)."""
    return min(S, 2 * S.bit_length() + S // (1 << BLOCK_BITS) + 1)


def _joint_fits(S: int, epsilon: float) -> bool:
    return (_blocks_per_step(S) * math.ceil(1.4 * JOINT_TAIL_NATS / epsilon)
            <= JOINT_MAX_OUTCOMES and S * math.ceil(JOINT_TAIL_NATS / epsilon)
            <= MAX_PERIOD_CELLS)


def staircase_grid(sensitivity: float, epsilon: float) -> float:
    """The staircase's default grid (not the shared lattice rule
    :func:`dpnoise.laws.block_calibration.default_grid`: it is chosen so the block tables fit).

    Power-of-two step L = 2^j <= Δ/2^k.

    Preferred: k = 12 if the fast one-word period table fits there (<= 2^13 blocks for a
    block of >= 14/ε steps), else the finest coarser k whose grid is exact for Δ
    (S·L = Δ to 1e-6: any dyadic Δ) and where the table fits.  Otherwise k = 12 (fewer
    bits for tiny ε so that M·S <= 2^20), sampled with the two-table (three-word) kernel.
    """
    base = power_of_two_at_most(sensitivity)
    for k in range(DEFAULT_GRID_BITS, 0, -1):
        L = base / 2.0**k
        S = grid_sensitivity(sensitivity, L)
        if _joint_fits(S, epsilon) and (k == DEFAULT_GRID_BITS or
                                        S * L / sensitivity - 1 <= 1e-6):
            return L
    k = DEFAULT_GRID_BITS
    while k > 2 and (2 << k) * max(1.0, 32 * LN2 / epsilon) > MAX_PERIOD_CELLS:
        k -= 1
    return base / 2.0**k


def _quantisation_estimate(epsilon: float, M: int, P: int) -> float:
    """Rough log-error of the smallest 64-bit weight of a table of P positions whose
    weights span e^(−(M−1)ε) (used only to skip hopeless candidates; the exact loss is
    always computed afterwards).  Plain float arithmetic (an overflow gives inf, never an
    error; math.exp's argument is capped at 700)."""
    return float(P * math.exp(min(700.0, (M - 1) * epsilon + epsilon)) / 2.0**64
                 / max(epsilon, 1e-300) * 4)


def _fit(epsilon: float, a: int, M: int, S: int, G: int, joint: bool) -> LatticeStaircase | None:
    """Steepest in-block decay for (a, M) whose exact loss is <= ε − 1e-12, or None.

    In-block steps decay at e_in, the block boundary at a·ln2 − (M−1)·e_in; with 64-bit
    quantisation error q both must stay <= ε, so e_in ∈ [(a ln2 − ε + 2q)/(M−1), ε − 2q].
    q is measured from a first build (exact loss minus the intended decay).
    """
    if joint:
        P = M * (len(aligned_blocks(0, G, 1 << BLOCK_BITS))
                 + len(aligned_blocks(G, S, 1 << BLOCK_BITS))) << BLOCK_BITS
    else:
        P = max(M, S)
    q = _quantisation_estimate(epsilon, M, P)
    deficit = M * epsilon - a * LN2
    if M > 1 and deficit < 0.5 * q * M:
        return None
    e0 = epsilon * (1 - 1e-12)
    if M > 1:
        e0 = min(e0, a * LN2 / (M - 1))
    try:
        law = LatticeStaircase(RatioGeometric(a, M, e0), S, G, joint=joint)
        excess = law.exact_loss + ROUNDING_ALLOWANCE - epsilon
    except ParameterError:
        excess = math.inf
    if excess <= 0:
        return law
    if math.isfinite(excess):
        for factor in (2.0, 8.0, 32.0, 128.0, 512.0):
            margin = factor * excess + 2 * ROUNDING_ALLOWANCE
            e_in = min(e0, epsilon - margin)
            if e_in <= 0 or (M > 1 and a * LN2 - (M - 1) * e_in > epsilon - margin):
                break
            try:
                law = LatticeStaircase(RatioGeometric(a, M, e_in), S, G, joint=joint)
            except ParameterError:
                break
            if law.exact_loss + ROUNDING_ALLOWANCE <= epsilon:
                return law
    if M > 1:  # last resort: a uniform ratio a·ln2/M (equal margin on every step)
        try:
            law = LatticeStaircase(RatioGeometric(a, M), S, G, joint=joint)
        except ParameterError:
            return None
        if law.exact_loss + ROUNDING_ALLOWANCE <= epsilon:
            return law
    return None


def _joint_candidates(epsilon: float, lo: int, hi: int, per_step: int) -> list[tuple[int, int]]:
    """The 8 best joint blocks (a, M), M in [lo, hi], by the variance-cost proxies: boundary
    deficit M·ε − a·ln2 (the boundary decays by ε − deficit) x the mass beyond it, plus the
    quantisation estimate; kept where a >= 1 and 3·q·M <= deficit <= 0.9·ε; sorted as the
    tuples (score, a, M).  Array arithmetic in the order of the scalar expressions (the same
    floats); the exponentials with ``math.exp`` as before."""
    if hi < lo:
        return []
    Ms = np.arange(lo, hi + 1, dtype=np.int64)
    a = np.floor(Ms * epsilon * (1 - 1e-12) / LN2).astype(np.int64)
    deficit = Ms * epsilon - a * LN2
    # _quantisation_estimate(ε, M, (M·per_step) << BLOCK_BITS), term by term
    grow = np.array([math.exp(min(700.0, x)) for x in ((Ms - 1) * epsilon + epsilon).tolist()])
    with np.errstate(over="ignore"):  # inf, as the scalar float arithmetic gives
        q = ((Ms * per_step) << BLOCK_BITS) * grow / 2.0**64 / max(epsilon, 1e-300) * 4
    keep = np.flatnonzero((a >= 1) & (3 * q * Ms <= deficit) & (deficit <= 0.9 * epsilon))
    if not keep.size:
        return []
    tail = np.array([math.exp(x) for x in (-Ms[keep] * epsilon).tolist()])
    score = deficit[keep] * tail + q[keep] / epsilon
    best = np.lexsort((Ms[keep], a[keep], score))[:8]
    return list(zip(a[keep][best].tolist(), Ms[keep][best].tolist(), strict=True))


def calibrate(epsilon: float, S: int, G: int, *, try_joint: bool = True) -> LatticeStaircase:
    """The sampled law: steepest block (a, M) with exact loss <= ε − 1e-12.

    In-block steps decay at ε (less the measured 64-bit quantisation excess), the
    block boundary at a·ln2 − (M−1)·ε.  If a joint one-word period table (<= 2^13
    blocks, M >= 10/ε steps) is as good (variance within 1e-5), it is used (2 words).
    """
    max_block = max(1, min(MAX_PERIOD_CELLS // S, 1 << 16))
    best = None
    for a, M in ratio_candidates(epsilon / LN2, max_block)[:200]:
        if (M - 1) * epsilon > MAX_SPAN_BITS * LN2:
            continue
        best = _fit(epsilon, a, M, S, G, False)
        if best is not None:
            break
    if best is None:
        raise ParameterError(f"could not calibrate the staircase for epsilon={epsilon!r}")
    if try_joint:
        # block length: >= 10/ε steps, table <= 2^13 blocks; best by the variance-cost
        # proxies below (boundary deficit M·ε − a·ln2 x mass beyond it; quantisation)
        per_step = len(aligned_blocks(0, G, 1 << BLOCK_BITS)) + len(
            aligned_blocks(G, S, 1 << BLOCK_BITS))
        lo = math.ceil(JOINT_TAIL_NATS / epsilon)
        hi = min(JOINT_MAX_OUTCOMES // per_step, MAX_PERIOD_CELLS // S)
        for aj, Mj in _joint_candidates(epsilon, max(1, lo), hi, per_step):
            joint = _fit(epsilon, aj, Mj, S, G, True)
            if joint is not None and joint.second_moment() <= best.second_moment() * (1 + 1e-5):
                return joint
    return best


def law_for_grid(epsilon: float, sensitivity: float, gamma: float, grid: float,
                  try_joint: bool = True) -> LatticeStaircase:
    S = grid_sensitivity(sensitivity, grid)
    if S > MAX_PERIOD_CELLS:
        raise ParameterError(f"grid={grid!r} is too fine: sensitivity/grid must be "
                             f"<= {MAX_PERIOD_CELLS}")
    # γ = 0 and γ = 1 are the same law; a tiny γ > 0 keeps one plateau cell
    G = S if gamma == 0 else min(S, max(1, round(gamma * S)))
    return calibrate(epsilon, S, G, try_joint=try_joint)


def auto_grid(epsilon: float, sensitivity: float, gamma: float, criterion: str = "variance"
               ) -> tuple[float, LatticeStaircase]:
    """Default grid and law.

    Fast path: :func:`staircase_grid`'s grid when it gives the two-word joint table and is
    exact for Δ (S·L = Δ to 1e-6) or the finest (Δ/4096).  Otherwise every grid Δ/2^k,
    k = 12, 10, 8, 6, 4, 2, is calibrated and, among those whose criterion (variance, or
    E|noise|) is within 1e-4 of the best, a joint-table law is preferred, then the finest
    grid (finer grids waste less on ceil(Δ/L); coarser ones allow longer blocks and so a
    closer dyadic ratio when ε is tiny).
    """
    base = power_of_two_at_most(sensitivity)
    first = staircase_grid(sensitivity, epsilon)
    law = law_for_grid(epsilon, sensitivity, gamma, first)
    exact = law.S * first / sensitivity - 1 <= 1e-6
    if law.joint and (exact or first == base / 2.0**DEFAULT_GRID_BITS):
        return first, law

    def metric(g: float, lw: LatticeStaircase) -> float:
        return g * lw.first_moment() if criterion == "mean_abs" else g**2 * lw.second_moment()

    found = [(metric(first, law), first, law)]
    for k in (12, 10, 8, 6, 4, 2):
        g = base / 2.0**k
        if g == first:
            continue
        S = grid_sensitivity(sensitivity, g)
        if (MAX_PERIOD_CELLS // S) * epsilon < LN2:  # no block can represent the ratio
            continue
        try:
            cand = law_for_grid(epsilon, sensitivity, gamma, g)
        except ParameterError:
            continue
        found.append((metric(g, cand), g, cand))
    best = min(v for v, _, _ in found)
    good = [t for t in found if t[0] <= best * (1 + 1e-4)]
    _, g, law = min(good, key=lambda t: (not t[2].joint, t[1]))
    return g, law
