"""Checks of P. Sadeghi, S. Asoodeh, F. du Pin Calmon, "Differentially private mechanisms for
count queries", arXiv:2007.09374, 2020 (register: docs/claims/count_noise.toml).  Exact
rational arithmetic throughout (``dpnoise.laws.count_noise``); each check returns whether
the statement holds as printed."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...exact.rational import exp_lower
from ...laws import count_noise as cf
from ...laws import discrete_gaussian as dga
from ..count_noise import dg_eps_for
from . import Outcome


def _solution(eps: float, eta: float, D: int) -> cf.PaperSolution:
    return cf.paper_alpha(exp_lower(eps), Fraction(eta), D, check=False)


def _paper_dp(eps: float, eta: float, D: int) -> float:
    """The paper's DP claim min(1, (2D + 1)δ̃) (Remark 2)."""
    return float(min(Fraction(1), (2 * D + 1) * _solution(eps, eta, D).delta_tilde))


def _exact(eps: float, eta: float, D: int) -> float:
    sol = _solution(eps, eta, D)
    return float(cf.hockey_delta(cf.pmf_from_alpha(Fraction(eta), sol.alpha), exp_lower(eps)))


def figure1_regime(quick: bool = False) -> Outcome:
    """Fig. 1 walkthrough (ε = 2.18, η = 0.8, D = 6): E = 8.8463, C_3 = 7.8867 < C = 8 <=
    C_2 = 8.1229, so δ̃ = δ_3 = 0.0049."""
    sol = _solution(2.18, 0.8, 6)
    E = float(exp_lower(2.18))
    c2, c3 = float(sol.crossovers[1]), float(sol.crossovers[2])
    ok = (round(E, 4) == 8.8463 and round(c2, 4) == 8.1229 and round(c3, 4) == 7.8867
          and sol.k == 3 and round(float(sol.delta_tilde), 4) == 0.0049)
    return Outcome(ok, f"E = {E:.7f}, C_2 = {c2:.7f}, C_3 = {c3:.7f}, k = {sol.k}, "
                       f"δ̃ = {float(sol.delta_tilde):.10f}")


def figure1_alpha(quick: bool = False) -> Outcome:
    """Fig. 1: only α1..α3 are non-zero; p(±1) = 0.08987, p(±2) = 0.00960, α1/α2 = 9.3617."""
    a = [float(x) for x in _solution(2.18, 0.8, 6).alpha]
    h = 0.1
    ok = (all(x == 0 for x in a[3:]) and all(x > 0 for x in a[:3])
          and round(a[0] * h, 5) == 0.08987 and round(a[1] * h, 5) == 0.00960
          and round(a[0] / a[1], 4) == 9.3617)
    return Outcome(ok, "α* = " + ", ".join(f"{x:.8g}" for x in a) + f"; α1/α2 = {a[0] / a[1]:.7f}")


def figure1_gaussian(quick: bool = False) -> Outcome:
    """Fig. 1: the discrete Gaussian of scale σ² = 0.2660156 (the count noise's variance) has
    p(±1) = 0.11685, p(±2) = 0.000416, a ratio of about 282, and needs ε ≈ 5.6 to reach the
    same per-outcome δ."""
    sol = _solution(2.18, 0.8, 6)
    s2 = float((1 - Fraction(0.8)) * sum(a * i * i for i, a in enumerate(sol.alpha, start=1)))
    p1, p2 = (float(v) for v in dga.pmf(np.array([1, 2]), s2))
    eps = dg_eps_for(s2, float(sol.delta_tilde), pointwise=True)
    ok = (round(s2, 7) == 0.2660156 and round(p1, 5) == 0.11685 and round(p2, 6) == 0.000416
          and abs(p1 / p2 / 282 - 1) < 0.01 and round(eps, 1) == 5.6)
    return Outcome(ok, f"σ² = {s2:.7f}, p(±1) = {p1:.8f}, p(±2) = {p2:.8g}, ratio "
                       f"{p1 / p2:.3f}, ε = {eps:.4f}")


def lower_bounds_are_the_restricted_optimum(quick: bool = False) -> Outcome:
    """Lemmas 1-2, Theorems 1-2, Definition 2 (eqs. 23, 32, 34-44): δ̃ = max_k δ_k is the
    optimum of the paper's constraint set (17)-(19), attained by α*, which sums to 1."""
    from scipy.optimize import linprog

    worst = 0.0
    cells = [(1.1, 0.5, 4), (2.2, 0.8, 6), (0.5, 0.3, 3), (2.18, 0.8, 6), (1.5, 0.9, 5)]
    for eps, eta, D in cells[: 3 if quick else None]:
        E, h = math.exp(eps), (1 - eta) / 2
        # variables α_1..α_D, δ; minimise δ subject to (17)-(19), Σα = 1, α >= 0
        rows, rhs = [], []
        r = [0.0] * (D + 1)
        r[D - 1], r[D] = h, -1.0
        rows.append(r)
        rhs.append(0.0)  # (17) h α_D <= δ
        for i in range(D - 1):  # (18) h α_i − E h α_{i+1} <= δ
            r = [0.0] * (D + 1)
            r[i], r[i + 1], r[D] = h, -E * h, -1.0
            rows.append(r)
            rhs.append(0.0)
        r = [0.0] * (D + 1)
        r[0], r[D] = -E * h, -1.0
        rows.append(r)
        rhs.append(-eta)  # (19) η − E h α_1 <= δ
        lp = linprog([0.0] * D + [1.0], A_ub=rows, b_ub=rhs, A_eq=[[1.0] * D + [0.0]],
                     b_eq=[1.0], bounds=[(0, None)] * (D + 1), method="highs")
        sol = _solution(eps, eta, D)
        worst = max(worst, abs(lp.fun - float(sol.delta_tilde)) / float(sol.delta_tilde),
                    abs(float(sum(sol.alpha)) - 1))
    return Outcome(worst < 1e-6, f"largest relative gap LP optimum vs δ̃: {worst:.1e}")


def crossovers_decrease(quick: bool = False) -> Outcome:
    """Lemma 4 (eq. 36): C_k − C_{k+1} = T_k/(W_k W_{k+1}) > 0."""
    worst = math.inf
    for eps in (0.5, 1.1, 2.2):
        E = exp_lower(eps)
        sm = cf.sums(E, 10)
        ck = cf.crossovers(sm, 10)
        for k in range(1, 10):
            diff = ck[k - 1] - ck[k]
            if diff != sm.t(k) / (sm.W[k] * sm.W[k + 1]):
                return Outcome(False, f"ε = {eps}, k = {k}: eq. 36 fails")
            worst = min(worst, float(diff))
    return Outcome(worst > 0, f"identity (36) exact; smallest C_k − C_k+1 = {worst:.3g}")


def lemma3_last_display(quick: bool = False) -> Outcome:
    """Lemma 3's proof, last display: C_D = S_{D−1}/W_D."""
    E = exp_lower(1.1)
    sm = cf.sums(E, 4)
    printed, eq34 = float(sm.S[3] / sm.W[4]), float(cf.crossovers(sm, 4)[3])
    return Outcome(abs(printed - eq34) < 1e-12,
                   f"E = e^1.1, D = 4: S_3/W_4 = {printed:.6f}, C_4 of eq. 34 = {eq34:.6f}")


def theorem3(quick: bool = False) -> Outcome:
    """Theorem 3: with Definition 2's α*, the mechanism attains the singular-event δ = δ̃."""
    sol = _solution(0.5, 0.1, 10)
    E = exp_lower(0.5)
    got = float(cf.pointwise_delta(cf.pmf_from_alpha(Fraction(0.1), sol.alpha), E))
    return Outcome(abs(got / float(sol.delta_tilde) - 1) < 1e-9,
                   f"η = 0.1, D = 10, ε = 0.5: δ̃ = {float(sol.delta_tilde):.4g}, singular-event "
                   f"δ of α* = {got:.4g}")


def remark2(quick: bool = False) -> Outcome:
    """Remark 2: the mechanism is (ε, min(1, (2D + 1)δ*))-DP."""
    cells = [(0.5, 0.1, 8), (0.5, 0.1, 10)]
    worst = max(_exact(e, n, D) / _paper_dp(e, n, D) for e, n, D in cells)
    return Outcome(worst <= 1 + 1e-12, "exact δ / claimed δ at (ε, η, D) = (0.5, 0.1, 8), "
                   f"(0.5, 0.1, 10): largest {worst:.3f} (exact {_exact(0.5, 0.1, 8):.5f} vs "
                   f"{_paper_dp(0.5, 0.1, 8):.5f})")


def figure2_text(quick: bool = False) -> Outcome:
    """Section IV, Fig. 2: with η = 0.5 and D = 8, ε > 1.1 gives (2D + 1)δ* <= 1e-3, and at
    ε = 1.5 P(|Y − n| <= 3) = 0.9945."""
    at11 = _paper_dp(1.1, 0.5, 8)
    later = max(_paper_dp(e, 0.5, 8) for e in (1.15, 1.5, 2.0))
    sol = _solution(1.5, 0.5, 8)
    pmf = cf.pmf_from_alpha(Fraction(0.5), sol.alpha)
    within3 = float(sum(pmf[8 - 3 : 8 + 4]))
    ok = at11 <= 1e-3 and later <= 1e-3 and round(within3, 4) == 0.9945
    return Outcome(ok, f"(2D+1)δ* at ε = 1.1: {at11:.4g}; P(|Y − n| <= 3) = {within3:.5f}")


def figure3_text(quick: bool = False) -> Outcome:
    """Section IV, Fig. 3: D = 8 gives (1.1, 1e-3)-DP at η = 0.5 and (2.2, 5e-7)-DP at
    η = 0.8 (in the paper's metric)."""
    a, b = _paper_dp(1.1, 0.5, 8), _paper_dp(2.2, 0.8, 8)
    return Outcome(a <= 1e-3 and b <= 5e-7, f"{a:.5g}, {b:.5g}")


def figure3_knee(quick: bool = False) -> Outcome:
    """Section IV, Fig. 3: the curves have a knee slightly above η = 0.5 (ε = 1.1) and 0.8
    (ε = 2.2): η_min(D) = C_D/(2 + C_D) lies just above, and tends to, tanh(ε/2)."""
    out = []
    for eps in (1.1, 2.2):
        E = exp_lower(eps)
        ck = cf.crossovers(cf.sums(E, 8), 8)[-1]
        out.append((float(cf.eta_from_c(ck)), math.tanh(eps / 2)))
    ok = all(t < m < t + 0.002 for m, t in out) and out[0][0] > 0.5 and out[1][0] > 0.8
    return Outcome(ok, "η_min(8) vs tanh(ε/2): " + "; ".join(f"{m:.6f} vs {t:.6f}"
                                                             for m, t in out))


def intro_support(quick: bool = False) -> Outcome:
    """Introduction: enlarging the support from 9 to 13 values gives a much smaller δ."""
    pairs = [(_paper_dp(e, 0.5, 4), _paper_dp(e, 0.5, 6)) for e in (1.1, 2.2)]
    ok = all(b < a / 5 for a, b in pairs)
    return Outcome(ok, "; ".join(f"D = 4: {a:.4g} -> D = 6: {b:.4g}" for a, b in pairs))


def figure4(quick: bool = False) -> Outcome:
    """Fig. 4: for ε >= 1.1 the count noise (η = 0.5, D = 6) needs a smaller δ than the
    discrete Gaussian of the same variance; both are poor below."""
    rows = []
    for eps in (1.1, 1.5, 2.0, 3.0):
        sol = _solution(eps, 0.5, 6)
        s2 = float((1 - Fraction(0.5)) * sum(a * i * i for i, a in enumerate(sol.alpha, 1)))
        rows.append((eps, _paper_dp(eps, 0.5, 6), dga.delta(s2, eps)))
    ok = all(ours < dg for _, ours, dg in rows)
    return Outcome(ok, "; ".join(f"ε = {e}: {o:.3g} vs DG {g:.3g}" for e, o, g in rows))
