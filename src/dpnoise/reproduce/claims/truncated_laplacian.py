"""Checks of Q. Geng, W. Ding, R. Guo, S. Kumar, "Privacy and utility tradeoff in approximate
differential privacy", arXiv:1810.00877, 2018 (the truncated Laplacian mechanism; register:
docs/claims/truncated_laplacian.toml).  Each returns whether the statement holds as printed."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import integrate

from ...laws.gaussian import classic_gaussian_sigma
from ...laws.truncated_laplacian import (
    EQUAL_LIMIT_AMPLITUDE,
    lower_bounds,
    tightness,
    tightness_limits,
    tlap_params,
)
from ..truncated_laplacian import ratios
from . import Outcome

_CASES = [(e, d) for e in (0.1, 1.0, 5.0) for d in (1e-6, 1e-3, 0.05)]


def _density(eps: float, delta: float):  # type: ignore[no-untyped-def]
    p = tlap_params(eps, delta, 1.0)
    B = math.exp(p.log_B)
    return p, (lambda x: B * math.exp(-abs(x) / p.lam) if abs(x) <= p.A else 0.0)


def definition_and_fig1(quick: bool = False) -> Outcome:
    """Definition 3 (eq. 4) and Fig. 1: B = 1/(2λ(1 − e^−A/λ)) normalises the density
    B e^−|x|/λ on [−A, A], A = (Δ/ε) ln(1 + (e^ε − 1)/(2δ)), and the top cell [A − Δ, A]
    holds mass δ."""
    worst = 0.0
    for eps, delta in _CASES:
        p, f = _density(eps, delta)
        mass = 2 * integrate.quad(f, 0, p.A, limit=200)[0]
        top = integrate.quad(f, p.A - 1, p.A)[0]
        worst = max(worst, abs(mass - 1), abs(top / delta - 1))
    return Outcome(worst < 1e-8, f"largest error of the mass and of the top-cell mass / δ: "
                                 f"{worst:.1e}")


def theorem1(quick: bool = False) -> Outcome:
    """Theorem 1: the truncated Laplacian noise gives (ε, δ)-DP for sensitivity Δ (the
    hockey-stick divergence at e^ε, over shifts d in [0, Δ], is at most δ, and equals δ at
    d = Δ)."""
    worst, at_full = -math.inf, 0.0
    for eps, delta in _CASES:
        p, f = _density(eps, delta)
        for d in (0.25, 0.5, 0.9, 1.0):
            def excess(x: float, d: float = d, f=f, e: float = eps) -> float:  # type: ignore[no-untyped-def]
                return max(f(x) - math.exp(e) * f(x - d), 0.0)
            cuts = sorted({-p.A, d - p.A, 0.0, d, p.A, d + p.A})
            hs = sum(integrate.quad(excess, a, b, limit=200)[0]
                     for a, b in itertools.pairwise(cuts))
            worst = max(worst, hs / delta - 1)
            if d == 1.0:
                at_full = max(at_full, abs(hs / delta - 1))
    return Outcome(worst < 1e-7 and at_full < 1e-7,
                   f"largest δ(shift)/δ − 1: {worst:.1e}; at the full shift {at_full:.1e}")


def theorem2_3_moments(quick: bool = False) -> Outcome:
    """Theorems 2-3 (eqs. 5, 7): E|X| = λ − A/(e^A/λ − 1) and E[X²] = 2λ² − (A² + 2λA)/c,
    c = (e^ε − 1)/(2δ)."""
    worst = 0.0
    for eps, delta in _CASES:
        p, f = _density(eps, delta)
        c = math.expm1(eps) / (2 * delta)
        m1 = p.lam - p.A / math.expm1(p.A / p.lam)
        m2 = 2 * p.lam**2 - (p.A**2 + 2 * p.lam * p.A) / c
        q1 = 2 * integrate.quad(lambda x, f=f: x * f(x), 0, p.A, limit=200)[0]
        q2 = 2 * integrate.quad(lambda x, f=f: x * x * f(x), 0, p.A, limit=200)[0]
        worst = max(worst, abs(m1 / q1 - 1), abs(m2 / q2 - 1), abs(p.mean_abs / q1 - 1))
    return Outcome(worst < 1e-7, f"largest relative gap to quadrature: {worst:.1e}")


def limits_upper(quick: bool = False) -> Outcome:
    """Section 4: as ε → 0, E|X| → Δ/(4δ) and E[X²] → Δ²/(12δ²); as δ → 0 they tend to the
    Laplace values Δ/ε and 2Δ²/ε²."""
    p = tlap_params(1e-8, 0.05)
    q = tlap_params(0.5, 1e-30)
    ok = (abs(p.mean_abs / 5 - 1) < 1e-6 and abs(p.second_moment / (1 / (12 * 0.05**2)) - 1)
          < 1e-6 and abs(q.mean_abs * 0.5 - 1) < 1e-12 and abs(q.second_moment / 8 - 1) < 1e-12)
    return Outcome(ok, f"ε = 1e-8, δ = 0.05: {p.mean_abs:.7f}, {p.second_moment:.5f}; "
                       f"δ = 1e-30, ε = 0.5: {q.mean_abs:.12f}, {q.second_moment:.12f}")


def equation6(quick: bool = False) -> Outcome:
    """Eq. 6: with ε = δ → 0, E|X| ~ (1 − 2 ln 3/2)·Δ/ε; Theorem 7: E[X²] ~
    2(1 − 2 ln 3/2 − ln² 3/2)·Δ²/ε²."""
    p = tlap_params(1e-8, 1e-8)
    a = p.mean_abs * 1e-8
    b = p.second_moment * 1e-16 / 2
    want_b = 1 - 2 * math.log(1.5) - math.log(1.5) ** 2
    ok = abs(a - EQUAL_LIMIT_AMPLITUDE) < 1e-6 and abs(b - want_b) < 1e-6
    return Outcome(ok, f"ε·E|X| = {a:.9f} (1 − 2 ln 1.5 = {EQUAL_LIMIT_AMPLITUDE:.9f}); "
                       f"ε²E[X²]/2 = {b:.9f} ({want_b:.9f})")


def _sum_bounds(eps: float, n: int) -> tuple[float, float, float]:
    """(a, Σ_{k<n} k b^k, Σ_{k<n} k² b^k) at the δ that makes A/Δ = n an integer."""
    b = math.exp(-eps)
    delta = math.expm1(eps) / (2 * math.expm1(eps * n))
    a = (delta + math.expm1(eps) / 2) / math.exp(eps)
    k = np.arange(n)
    return a, float(np.sum(k * b**k)), float(np.sum(k * k * b**k))


def theorems4_5_lower_bounds(quick: bool = False) -> Outcome:
    """Theorems 4-5 (eqs. 11-12): V1low = 2aΔ Σ_{k<n} k b^k and V2low = 2aΔ² Σ k² b^k in
    closed form, at n = A/Δ an integer (where Lemma 2 applies); both are below the exact
    moments of the truncated Laplacian."""
    worst = 0.0
    for eps, n in ((0.1, 40), (1.0, 7), (2.0, 4), (5.0, 3)):
        a, s1, s2 = _sum_bounds(eps, n)
        delta = math.expm1(eps) / (2 * math.expm1(eps * n))
        v1, v2 = lower_bounds(eps, delta)
        p = tlap_params(eps, delta)
        worst = max(worst, abs(v1 / (2 * a * s1) - 1), abs(v2 / (2 * a * s2) - 1))
        if not (v1 <= p.mean_abs and v2 <= p.second_moment):
            return Outcome(False, f"ε = {eps}: a lower bound exceeds the upper bound")
    return Outcome(worst < 1e-9, f"closed forms against the sums: largest gap {worst:.1e}")


def theorem4_proof_sum(quick: bool = False) -> Outcome:
    """Proof of Theorem 4: Σ_{i=1}^{n−1} b^i = 1/(2a)."""
    eps, n = 1.0, 7
    a, _, _ = _sum_bounds(eps, n)
    b = math.exp(-eps)
    s = sum(b**i for i in range(1, n))
    return Outcome(abs(s - 1 / (2 * a)) < 1e-9,
                   f"ε = 1, n = 7: the sum is {s:.9f}, 1/(2a) = {1 / (2 * a):.9f}, "
                   f"1/(2a) − 1 = {1 / (2 * a) - 1:.9f}")


def theorems6_7_limits(quick: bool = False) -> Outcome:
    """Theorems 6-7: V1low/V1upp and V2low/V2upp tend to 1 − 2δ and (1 − δ)(1 − 2δ) as
    ε → 0, to ε/(e^ε − 1) and ε²(1 + e^ε)/(2(e^ε − 1)²) as δ → 0, and to 1 as ε = δ → 0."""
    worst = 0.0
    for got, want in ((tightness(1e-8, 0.05), tightness_limits("eps->0", delta=0.05)),
                      (tightness(1.0, 1e-30), tightness_limits("delta->0", epsilon=1.0)),
                      (tightness(0.1, 1e-30), tightness_limits("delta->0", epsilon=0.1)),
                      (tightness(1e-8, 1e-8), (1.0, 1.0))):
        worst = max(worst, abs(got[0] - want[0]), abs(got[1] - want[1]))
    return Outcome(worst < 1e-6, f"largest gap to the limits: {worst:.1e}")


def theorem6_proof_limit(quick: bool = False) -> Outcome:
    """Proof of Theorem 6, case 2: V1low → Δ/(ε^ε − 1) as δ → 0."""
    v1, _ = lower_bounds(1.0, 1e-30)
    printed = 1 / (1.0**1.0 - 1) if 1.0**1.0 != 1 else math.inf
    return Outcome(abs(v1 - printed) < 1e-9, f"ε = 1: V1low = {v1:.8f}; Δ/(e^ε − 1) = "
                   f"{1 / math.expm1(1.0):.8f}; as printed: {printed}")


def theorem7_proof_limit(quick: bool = False) -> Outcome:
    """Proof of Theorem 7, case 1: V2upp → Δ²/(12δ) as ε → 0."""
    p = tlap_params(1e-8, 0.05)
    return Outcome(abs(p.second_moment / (1 / (12 * 0.05)) - 1) < 1e-6,
                   f"δ = 0.05: E[X²] = {p.second_moment:.5f}; Δ²/(12δ) = {1 / 0.6:.5f}, "
                   f"Δ²/(12δ²) = {1 / (12 * 0.0025):.5f}")


def figures2_3(quick: bool = False) -> Outcome:
    """Figs. 2-3: over ε in [1e-4, 10] and δ in [1e-6, 0.1] the truncated Laplacian's
    amplitude and power are below the optimal (analytic) Gaussian's."""
    eps = np.logspace(-4, 1, 9 if quick else 31)
    dl = np.logspace(-6, -1, 7 if quick else 26)
    amp = [ratios(float(e), float(d)) for e in eps for d in dl]
    a, p = max(r[0] for r in amp), max(r[1] for r in amp)
    return Outcome(a < 1 and p < 1, f"largest amplitude ratio {a:.4f}, power ratio {p:.4f}")


def all_regimes(quick: bool = False) -> Outcome:
    """Abstract and Section 6: the truncated Laplacian reduces noise amplitude and power
    compared with the optimal Gaussian in all privacy regimes (the paper's domain
    0 < δ < 1/2)."""
    a, p, _ = ratios(1.585, 0.49)
    return Outcome(a < 1 and p < 1, f"ε = 1.585, δ = 0.49: amplitude ratio {a:.4f}, power "
                                    f"ratio {p:.4f}")


def classic_gaussian(quick: bool = False) -> Outcome:
    """Section 6: the classic Gaussian mechanism uses σ = √(2 ln(1.25/δ))·Δ/ε for ε < 1."""
    got = [classic_gaussian_sigma(e, d, 1.0) for e, d in ((0.1, 1e-6), (0.5, 1e-3), (0.5, 0.05))]
    want = [math.sqrt(2 * math.log(1.25 / d)) / e for e, d in ((0.1, 1e-6), (0.5, 1e-3),
                                                                 (0.5, 0.05))]
    ok = all(abs(g / w - 1) < 1e-12 for g, w in zip(got, want, strict=True)) and \
        round(got[0], 3) == 52.988
    return Outcome(ok, ", ".join(f"{g:.4f}" for g in got))
