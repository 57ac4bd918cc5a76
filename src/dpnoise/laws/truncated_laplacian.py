"""Truncated-Laplacian calibration, exact moments and the Geng et al. 2018 optimality bounds.

Implements Def. 3-4 and Theorems 1-7 of Geng et al. 2018 (full citation below).  Notation:

    c = expm1(ε)/(2δ),  L = ln(1 + c) = A/λ,  λ = Δ/ε,  A = λ·L,  B = (1+c)/(2λc).

Everything is evaluated in log space so that ε up to 1000 and δ down to 1e-300 never
overflow: ln c = ln expm1(ε) − ln 2δ and L = softplus(ln c).

Moments (Thm 2, Thm 3 = exact TLap moments, eqs. 5 and 7), stable forms:
    E|X|  = λ·g(L),   g(L) = 1 − L/expm1(L)
    E[X²] = 2λ²·h(L), h(L) = 1 − (L + L²/2)/expm1(L)
with Taylor series for L < 0.05 (the naive ``1 − L/c`` gives 2.55 instead of 2.5 at
ε = 1e-15, δ = 0.1).

Lower bounds (Thm 4 eq. 11, Thm 5 eq. 12) through gap identities derived here
(V1low = V1upp − μ1 and its square analogue), which are exact rewrites of (11)/(12) at
real n = L/ε and do not cancel
like the printed closed forms (those lose 12% at ε = 1e-6):
    V1low = V1upp − μ1,           μ1 = λ·g(ε)
    V2low = V2upp − 2·V1low·μ1 − μ2,  μ2 = 2λ²·h(ε)
The paper assumes n = A/Δ is an integer.  Off the integers (11)/(12) are heuristic; the
*rigorous* variant (derived here) uses n0 = ⌊A/Δ⌋ and δ' = expm1(ε)/(2·expm1(ε n0)) >= δ,
for which A(δ') = n0·Δ exactly, and V*(ε, δ) >= V*(ε, δ') >= Vlow(ε, δ').


References:
  * Q. Geng, W. Ding, R. Guo, S. Kumar, "Privacy and Utility Tradeoff in Approximate
    Differential Privacy", arXiv:1810.00877, 2018.

Errata of the paper, each explained: docs/papers.md#errata-truncated-laplacian.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ParameterError
from ..params import check_delta, check_epsilon, check_sensitivity

_SERIES_CUT = 0.05


def log_expm1(x: float) -> float:
    """ln(e^x − 1) for x > 0 without overflow."""
    if x < 30.0:
        return math.log(math.expm1(x))
    return x + math.log1p(-math.exp(-x))


def softplus(t: float) -> float:
    """ln(1 + e^t) without overflow."""
    if t < 35.0:
        return math.log1p(math.exp(t))
    return t + math.log1p(math.exp(-t))


def g_ratio(L: float) -> float:
    """g(L) = 1 − L/expm1(L) (stable; series below 0.05)."""
    if L < _SERIES_CUT:
        L2 = L * L
        return L / 2 - L2 / 12 + L2 * L2 / 720 - L2**3 / 30240 + L2**4 / 1209600
    return 1.0 - L * math.exp(-L) / -math.expm1(-L)


#: h(L) = Σ L^(i+2)/d_i below _SERIES_CUT (signed divisors d_i, eight terms)
_H_DIVISORS = (6, -24, 720, 1440, -30240, -60480, 1209600, 2419200)


def _h_series(L: float, power: int) -> float:
    """Σ L^(i + power)/d_i, summed in order: h(L) at power 2, h(L)/L² at power 0."""
    return sum(L ** (i + power) / d for i, d in enumerate(_H_DIVISORS))


def h_ratio(L: float) -> float:
    """h(L) = 1 − (L + L²/2)/expm1(L) (stable; series below 0.05)."""
    if L < _SERIES_CUT:
        return _h_series(L, 2)
    return 1.0 - (L + L * L / 2) * math.exp(-L) / -math.expm1(-L)


def _h_over_square(L: float) -> float:
    """h(L)/L² without underflow (the series of :func:`h_ratio` divided by L² below 0.05)."""
    if L < _SERIES_CUT:
        return _h_series(L, 0)
    return h_ratio(L) / (L * L)


@dataclass(frozen=True)
class TLapParams:
    """Calibrated truncated-Laplacian parameters."""

    epsilon: float
    delta: float
    sensitivity: float
    lam: float  # λ = Δ/ε
    L: float  # A/λ
    A: float  # truncation point
    log_B: float  # noqa: N815  (ln of the density constant B, paper notation)

    @property
    def log_c(self) -> float:
        return log_expm1(self.epsilon) - math.log(2 * self.delta)

    @property
    def mean_abs(self) -> float:
        """E|X| = V1upp (Thm 2, eq. 5)."""
        return self.lam * g_ratio(self.L)

    @property
    def second_moment(self) -> float:
        """E[X²] = Var X = V2upp (Thm 3, eq. 7)."""
        try:
            return 2.0 * self.lam**2 * h_ratio(self.L)
        except OverflowError:  # λ past ~1e154 (a tiny ε): 2λ²h(L) = 2A²·h(L)/L², A = λL
            return 2.0 * _square(self.A) * _h_over_square(self.L)

    @property
    def n(self) -> float:
        """n = A/Δ = L/ε (real; the paper assumes an integer)."""
        return self.L / self.epsilon


def tlap_params(epsilon: float, delta: float, sensitivity: float = 1.0) -> TLapParams:
    """λ, L, A, ln B for TLap(ε, δ, Δ); 0 < δ < 1/2 else ParameterError (§7).

    Parameters
    ----------
    epsilon : float
        ε.
    delta : float
        δ in (0, 1/2).
    sensitivity : float, default 1.0
        Δ.

    Returns
    -------
    TLapParams
        ``λ = Δ/ε``, ``L = ln(1 + (e^ε − 1)/(2δ))``, ``A = λ·L`` and ``ln B`` with
        ``B = 1/(2λ(1 − e^(−L)))`` (Geng et al. 2018, Definition 3), in overflow-safe form.

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, upper=0.5)
    sens = check_sensitivity(sensitivity)
    lam = sens / eps
    t = log_expm1(eps) - math.log(2.0 * dlt)
    L = softplus(t)
    if not math.isfinite(lam * L):
        raise ParameterError(
            f"sensitivity/epsilon = {sens:g}/{eps:g} is too large: the support half-width "
            f"A = (Δ/ε)·L overflows a float")
    m = -math.expm1(-L)
    log_B = -math.log(2.0 * lam) - math.log(m)
    return TLapParams(eps, dlt, sens, lam, L, lam * L, log_B)


def _square(x: float) -> float:
    """x**2, +inf past the float range (a float ``**`` raises OverflowError there)."""
    try:
        return x**2
    except OverflowError:
        return math.inf


# ------------------------------------------------------------------ lower bounds
def _gaps(epsilon: float, sensitivity: float) -> tuple[float, float]:
    """μ1 = Δ(1/ε − 1/expm1(ε)) and μ2 = (2Δ²/ε²)(1 − (ε²/2 + ε)/expm1(ε))."""
    lam = sensitivity / epsilon
    try:
        second = 2.0 * lam**2 * h_ratio(epsilon)
    except OverflowError:  # λ past ~1e154 (a tiny ε): 2λ²h(ε) = 2Δ²·h(ε)/ε²
        second = 2.0 * _square(sensitivity) * _h_over_square(epsilon)
    return lam * g_ratio(epsilon), second


def lower_bounds(epsilon: float, delta: float, sensitivity: float = 1.0) -> tuple[float, float]:
    """Paper value of (V1low, V2low) (Thm 4 eq. 11, Thm 5 eq. 12) at real n = A/Δ.

    Exact rewrite through the gap identity V1low = V1upp − μ1 (derived here).
    A proven bound only when A/Δ is an integer;
    see :func:`rigorous_lower_bounds` otherwise.

    Parameters
    ----------
    epsilon : float
        ε.
    delta : float
        δ in (0, 1/2).
    sensitivity : float, default 1.0
        Δ.

    Returns
    -------
    tuple of float
        ``(V1low, V2low)``: the paper's lower bounds on the smallest E|X| and E[X²] of any
        (ε, δ)-DP additive noise.

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    """
    p = tlap_params(epsilon, delta, sensitivity)
    mu1, mu2 = _gaps(p.epsilon, p.sensitivity)
    v1 = p.mean_abs - mu1
    v2 = p.second_moment - 2.0 * v1 * mu1 - mu2
    return max(v1, 0.0), max(v2, 0.0)


def rigorous_delta(epsilon: float, delta: float, sensitivity: float = 1.0) -> float | None:
    """δ' >= δ with A(δ') = ⌊A/Δ⌋·Δ (None when ⌊A/Δ⌋ = 0)."""
    p = tlap_params(epsilon, delta, sensitivity)
    n0 = math.floor(p.n * (1 + 1e-15))  # guard an exact integer against rounding below
    if n0 < 1:
        return None
    # δ' = expm1(ε)/(2 expm1(ε n0)) in log space
    return math.exp(log_expm1(p.epsilon) - math.log(2.0) - log_expm1(p.epsilon * n0))


def rigorous_lower_bounds(epsilon: float, delta: float, sensitivity: float = 1.0
                          ) -> tuple[float, float]:
    """Proven (V1low, V2low): eqs. (11)/(12) at integer n0 = ⌊A/Δ⌋ via δ' (derived here).

    With n0 = 1 (e.g. ε = 5, δ = 0.05) the bound is 0: Lemma 2's sums are empty.

    Parameters
    ----------
    epsilon : float
        ε.
    delta : float
        δ in (0, 1/2).
    sensitivity : float, default 1.0
        Δ.

    Returns
    -------
    tuple of float
        Proven ``(V1low, V2low)``.

    Raises
    ------
    ParameterError
        If a parameter is out of range.
    """
    d2 = rigorous_delta(epsilon, delta, sensitivity)
    if d2 is None or d2 >= 0.5 * (1 - 1e-12):
        return 0.0, 0.0
    return lower_bounds(epsilon, d2, sensitivity)


def tightness(epsilon: float, delta: float) -> tuple[float, float]:
    """(V1low/V1upp, V2low/V2upp) at real n (Thms 6, 7); independent of Δ."""
    p = tlap_params(epsilon, delta, 1.0)
    v1, v2 = lower_bounds(epsilon, delta, 1.0)
    return v1 / p.mean_abs, v2 / p.second_moment


def tightness_limits(regime: str, *, epsilon: float | None = None, delta: float | None = None
                     ) -> tuple[float, float]:
    """The limits of Thms 6/7.

    ``regime``: "eps->0" (needs delta): (1 − 2δ, (1−δ)(1−2δ));
    "delta->0" (needs epsilon): (ε/expm1(ε), ε²(1+e^ε)/(2 expm1(ε)²));
    "eps=delta->0": (1, 1).
    """
    if regime == "eps->0":
        d = check_delta(delta, upper=0.5)
        return 1 - 2 * d, (1 - d) * (1 - 2 * d)
    if regime == "delta->0":
        e = check_epsilon(epsilon)
        em1 = math.expm1(e)
        if e > 700:
            return e * math.exp(-e), 0.0
        return e / em1, e * e * (1 + math.exp(e)) / (2 * em1 * em1)
    if regime == "eps=delta->0":
        return 1.0, 1.0
    raise ValueError(f"unknown regime {regime!r}")


#: ε = δ → 0 constants (eq. 6 and Thm 7): E|X| ~ C1·Δ/ε, E[X²] ~ C2·Δ²/ε²
EQUAL_LIMIT_AMPLITUDE = 1 - 2 * math.log(1.5)
EQUAL_LIMIT_POWER = 2 * (1 - 2 * math.log(1.5) - math.log(1.5) ** 2)
