"""Checks of J. Soria-Comas, J. Domingo-Ferrer, "Optimal data-independent noise for
differential privacy", Information Sciences 250:200-214, 2013 (register:
docs/claims/staircase.toml).  Each returns whether the statement holds as printed."""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...laws.staircase import (
    BoxStaircaseDensity,
    StaircaseDensity,
    laplace_interval_size,
    laplace_l1_region,
    laplace_variance,
    optimal_gamma,
)
from . import Outcome

_EPS = (0.1, 0.5, 1.0)


def _laplace_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    return np.where(x < 0, 0.5 * np.exp(x / scale), 1 - 0.5 * np.exp(-x / scale))


def laplace_not_optimal(quick: bool = False) -> Outcome:
    """Section 4, Fig. 1: the staircase built from Laplace(0, Δ/ε) by moving mass towards 0
    (plateau m = Δ(1 − e^−ε − εe^−ε)/(ε(1 − e^−ε))) is ε-DP and strictly smaller than
    Laplace: P(|Y| <= a) >= P(|Lap| <= a) for every a, with strict inequality somewhere."""
    worst, strict = 0.0, 0.0
    for eps in (0.5, 1.0, 2.0):
        m = (1 - math.exp(-eps) - eps * math.exp(-eps)) / (eps * -math.expm1(-eps))
        law = StaircaseDensity(epsilon=eps, gamma=m)
        a = np.linspace(0, 40 / eps, 2001 if quick else 20001)
        gap = (law.cdf(a) - law.cdf(-a)) - (_laplace_cdf(a, 1 / eps) - _laplace_cdf(-a, 1 / eps))
        worst, strict = min(worst, float(gap.min())), max(strict, float(gap.max()))
        if eps == 1.0:
            m1, var1 = m, law.var()
    holds = worst >= -1e-12 and strict > 1e-3 and abs(m1 - 0.418023) < 5e-7
    return Outcome(holds, f"ε = 1: m = {m1:.6f}, Var = {var1:.6f} (Laplace 2); smallest gap "
                          f"{worst:.2e}, largest {strict:.4f}")


def plateau_independent_of_interval(quick: bool = False) -> Outcome:
    """Section 4: the length m_i of the high part of interval [iΔ, (i+1)Δ] that keeps its
    Laplace mass does not depend on i."""
    eps, D = 1.0, 1.0
    ms = []
    for i in range(8):
        mass = math.exp(-i * eps) * -math.expm1(-eps) / 2
        hi, lo = eps * math.exp(-i * eps) / (2 * D), eps * math.exp(-(i + 1) * eps) / (2 * D)
        ms.append((mass - lo * D) / (hi - lo))  # hi·m + lo·(Δ − m) = mass
    spread = max(ms) - min(ms)
    return Outcome(spread < 1e-12, f"m_0..m_7 = {ms[0]:.12f} (spread {spread:.1e})")


def _integral_literal_theorem9(eps: float, d: float, D: float = 1.0) -> float:
    """Mass of Theorem 9's density read literally (M0 e^−iε on [d + iΔ, d + (i+1)Δ], i >= 0)
    with M0 from the paper's normalisation of d."""
    b = math.exp(-eps)
    M0 = -math.expm1(-eps) / (2 * (d * -math.expm1(-eps) + b * D))
    return 2 * M0 * d + 2 * M0 * D / -math.expm1(-eps)


def theorem9_as_printed(quick: bool = False) -> Outcome:
    """Theorem 9 (as printed): the density is M0 e^−iε on [d + iΔ, d + (i+1)Δ] for i in N,
    with M0 and d tied by d = (1 − e^−ε − 2M0 e^−ε Δ)/(2(1 − e^−ε) M0)."""
    total = _integral_literal_theorem9(1.0, 0.416737)
    return Outcome(abs(total - 1) < 1e-9, f"ε = Δ = 1, d = 0.416737: the literal density "
                                          f"integrates to {total:.6f}")


def theorem9_normalisation(quick: bool = False) -> Outcome:
    """Theorem 9: d = (1 − e^−ε − 2M0 e^−ε Δ)/(2(1 − e^−ε)M0) normalises the (corrected)
    staircase density; checked by numerical integration of the density."""
    d_err = mass_err = 0.0
    for eps in (0.1, 1.0, 3.0):
        for d in (0.05, 0.4, 0.9):
            law = StaircaseDensity(epsilon=eps, gamma=d)
            b = math.exp(-eps)
            d_paper = (1 - b - 2 * law.M0 * b) / (2 * (1 - b) * law.M0)
            # the density is constant on the plateau and on each step: midpoint sums are exact
            k = np.arange(int(80 / eps) + 10)
            mass = 2 * d * float(law.pdf(d / 2)) + 2 * float(np.sum(law.pdf(d + k + 0.5)))
            d_err, mass_err = max(d_err, abs(d_paper - d)), max(mass_err, abs(mass - 1))
    return Outcome(d_err < 1e-12 and mass_err < 1e-12,
                   f"largest |d_paper − d| {d_err:.1e}; largest mass error {mass_err:.1e}")


def corollary8_geometric_steps(quick: bool = False) -> Outcome:
    """Lemma 7 / Corollary 8: an optimal symmetric noise has f(x + Δ) = e^−ε f(x) for x >= 0,
    hence interval masses P([iΔ, (i+1)Δ]) = e^−iε (1 − e^−ε)/2."""
    worst = 0.0
    for eps in (*_EPS, 3.0):
        law = StaircaseDensity(epsilon=eps, gamma=optimal_gamma(eps))
        x = np.linspace(0.013, 7.013, 977)
        worst = max(worst, float(np.max(np.abs(law.logpdf(x + 1) - law.logpdf(x) + eps))))
        i = np.arange(6)
        masses = law.sf(i * 1.0) - law.sf((i + 1) * 1.0)
        want = np.exp(-i * eps) * -math.expm1(-eps) / 2
        worst = max(worst, float(np.max(np.abs(masses / want - 1))))
    return Outcome(worst < 1e-9, f"largest deviation {worst:.1e}")


def theorem10_dp(quick: bool = False) -> Outcome:
    """Theorem 10 (its DP part): every density of Theorem 9's (corrected) form gives
    ε-DP: sup over x and |δ| <= Δ of ln f(x)/f(x + δ) = ε, attained."""
    worst = 0.0
    for eps in (0.1, 1.0, 5.0):
        for g in (1e-3, 0.3, 1.0):
            law = StaircaseDensity(epsilon=eps, gamma=g)
            x = np.linspace(-6.0, 6.0, 2401 if quick else 12001) + 1e-7
            shifts = np.linspace(-1, 1, 81)
            lp = law.logpdf(x)
            for s in shifts:
                worst = max(worst, float(np.max(lp - law.logpdf(x + s))) - eps)
    return Outcome(worst <= 1e-12, f"largest excess of the log ratio over ε: {worst:.1e}")


def variance_optimal_d(quick: bool = False) -> Outcome:
    """Section 5 (Fig. 2): at ε = Δ = 1 the variance is minimal at d = 0.416737, where it
    is 1.9181."""
    g = optimal_gamma(1.0, "variance")
    grid = np.linspace(0.3, 0.5, 2001)
    v = [StaircaseDensity(epsilon=1.0, gamma=float(t)).var() for t in grid]
    best = float(grid[int(np.argmin(v))])
    var = StaircaseDensity(epsilon=1.0, gamma=g).var()
    return Outcome(abs(g - 0.416737) < 5e-7 and abs(best - g) < 2e-4 and round(var, 4) == 1.9181,
                   f"d* = {g:.6f} (grid minimum {best:.4f}), Var = {var:.6f}")


def interval_optimal_d(quick: bool = False) -> Outcome:
    """Section 5 (Fig. 3): at ε = Δ = 1 the 95 % symmetric interval is shortest at
    d = 0.993, approximately."""
    g = optimal_gamma(1.0, "interval", 0.95)
    grid = np.linspace(0.9, 1.0, 1001)
    size = [StaircaseDensity(epsilon=1.0, gamma=float(t)).interval_size(0.95) for t in grid]
    best = float(grid[int(np.argmin(size))])
    return Outcome(round(g, 3) == 0.993 and abs(best - g) < 2e-4,
                   f"d* = {g:.6f} (grid minimum {best:.4f})")


def table1(quick: bool = False) -> Outcome:
    """Table 1: variances 200.00 / 8.00 / 2.00 (Laplace) and 199.92 / 7.92 / 1.92 (optimal)
    at ε = 0.1, 0.5, 1, Δ = 1 (rounded to two decimals)."""
    lap = [laplace_variance(e) for e in _EPS]
    opt = [StaircaseDensity(epsilon=e, gamma=optimal_gamma(e)).var() for e in _EPS]
    ok = [round(v, 2) for v in lap] == [200.0, 8.0, 2.0] and \
        [round(v, 2) for v in opt] == [199.92, 7.92, 1.92]
    return Outcome(ok, "Laplace " + ", ".join(f"{v:.6f}" for v in lap) + "; optimal "
                   + ", ".join(f"{v:.6f}" for v in opt))


def table2_laplace(quick: bool = False) -> Outcome:
    """Table 2, Laplace row: symmetric 95 % intervals 59.91 / 11.98 / 5.99."""
    lap = [laplace_interval_size(e, 1.0, 0.95) for e in _EPS]
    return Outcome([round(v, 2) for v in lap] == [59.91, 11.98, 5.99],
                   ", ".join(f"{v:.6f}" for v in lap))


def table2_optimal(quick: bool = False) -> Outcome:
    """Table 2, optimal row: shortest symmetric 95 % intervals 59.91 / 11.97 / 5.98."""
    opt = [StaircaseDensity(epsilon=e, gamma=optimal_gamma(e, "interval", 0.95))
           .interval_size(0.95) for e in _EPS]
    return Outcome([round(v, 2) for v in opt] == [59.91, 11.97, 5.98],
                   ", ".join(f"{v:.6f}" for v in opt) + " (rounded: "
                   + ", ".join(f"{round(v, 2):.2f}" for v in opt) + ")")


def table3_alpha(quick: bool = False) -> Outcome:
    """Table 3: the L1 radius α of the smallest region of two Laplace(11) coordinates at
    levels 0.99 / 0.95 / 0.90 is 73.02 / 52.18 / 42.79."""
    a = [laplace_l1_region(1.0, 11.0, p) for p in (0.99, 0.95, 0.90)]
    return Outcome([round(v, 2) for v in a] == [73.02, 52.18, 42.79],
                   ", ".join(f"{v:.6f}" for v in a))


def table3_size(quick: bool = False) -> Outcome:
    """Table 3: the region sizes 2α² are 10663 / 5445 / 3662."""
    s = [2 * laplace_l1_region(1.0, 11.0, p) ** 2 for p in (0.99, 0.95, 0.90)]
    return Outcome([round(v) for v in s] == [10663, 5445, 3662],
                   ", ".join(f"{v:.2f}" for v in s))


def _example2() -> BoxStaircaseDensity:
    return BoxStaircaseDensity(epsilon=1.0, sensitivities=(1, 10), plateau=(0.1, 1))


def example2(quick: bool = False) -> Outcome:
    """Example 2: S_f = [−1, 1]×[−10, 10], ε = 1, S_0 = [−0.1, 0.1]×[−1, 1]: M = 0.018040566,
    Var(Y1) = 4.0338, Var(Y2) = 403.38, against 242 per coordinate for Laplace(11)."""
    law = _example2()
    v = law.var()
    ok = (abs(law.M - 0.018040566) < 5e-10 and round(float(v[0]), 4) == 4.0338
          and round(float(v[1]), 2) == 403.38 and laplace_variance(1.0, 11.0) == 242.0)
    return Outcome(ok, f"M = {law.M:.9f}, Var = {v[0]:.6f}, {v[1]:.4f}")


def table4_beta(quick: bool = False) -> Outcome:
    """Table 4: β = 6.99 / 4.79 / 3.90 at levels 0.99 / 0.95 / 0.90, the region being
    [−z1 − βs1, z1 + βs1]×[−z2 − βs2, z2 + βs2]."""
    law = _example2()
    t = [law.region_scale(p) for p in (0.99, 0.95, 0.90)]
    # the printed form with the plateau added: solve for β at the same coverage
    return Outcome([round(v, 2) for v in t] == [6.99, 4.79, 3.90],
                   "scale t of the box t·S_f: " + ", ".join(f"{v:.6f}" for v in t))


def table4_size(quick: bool = False) -> Outcome:
    """Table 4: minimal region sizes 1790.2 / 916.6 / 611.2."""
    law = _example2()
    s = [law.region_size(p) for p in (0.99, 0.95, 0.90)]
    return Outcome([round(v, 1) for v in s] == [1790.2, 916.6, 611.2],
                   ", ".join(f"{v:.3f}" for v in s))


def theorem13_as_printed(quick: bool = False) -> Outcome:
    """Theorem 13 (as printed): S_{i+1} = (S_i + S_f) minus the union of S_0..S_{i−1}
    defines disjoint level sets (a density)."""
    # one dimension, on a fine grid: S_0 = [−0.1, 0.1], S_f = [−1, 1]
    x = np.round(np.linspace(-5, 5, 10001), 6)
    step = x[1] - x[0]

    def minkowski(mask: np.ndarray) -> np.ndarray:
        k = round(1 / step)
        out = mask.copy()
        for s in range(1, k + 1):
            out[s:] |= mask[:-s]
            out[:-s] |= mask[s:]
        return out

    levels = [np.abs(x) <= 0.1]
    for i in range(3):
        union_before = np.zeros_like(levels[0])
        for j in range(i):  # the printed union runs to i − 1
            union_before |= levels[j]
        levels.append(minkowski(levels[i]) & ~union_before)
    overlap = int((levels[1] & levels[2]).sum())
    return Outcome(overlap == 0, f"S_1 and S_2 share {overlap} grid points of {x.size}")


def univariate_gain_small(quick: bool = False) -> Outcome:
    """Sections 5 and 8: in one dimension Laplace is close to optimal for small ε (the
    variance ratio tends to 1), the gain grows with ε."""
    r = [StaircaseDensity(epsilon=e, gamma=optimal_gamma(e)).var() / laplace_variance(e)
         for e in (0.01, 0.1, 1.0, 5.0)]
    ok = r[0] > 0.99999 and all(a > b for a, b in itertools.pairwise(r))
    return Outcome(ok, "Var ratio at ε = 0.01, 0.1, 1, 5: " + ", ".join(f"{v:.6f}" for v in r))


def figures4_5_overprotection(quick: bool = False) -> Outcome:
    """Figs. 4-5: independent Laplace noise of scale Δf/ε keeps the density within e^−ε of
    f(0) on the whole L1 ball of radius Δf, which over-protects the ball minus S_f; the
    over-protected share grows when S_f is elongated ([−1, 1]×[−10, 10] against [−1, 1]²)."""
    ratios = []
    for s1, s2 in ((1.0, 1.0), (1.0, 10.0)):
        ball = 2 * (s1 + s2) ** 2  # area of the L1 ball of radius Δf = s1 + s2
        box = 4 * s1 * s2
        ratios.append((ball - box) / box)
    return Outcome(ratios[1] > ratios[0] > 0, "over-protected area / area of S_f: "
                   + ", ".join(f"{r:.2f}" for r in ratios))


def figure6_mass_near_zero(quick: bool = False) -> Outcome:
    """Fig. 6: the piecewise constant noise of Example 2 has much more probability
    concentrated around zero than Laplace(11) per coordinate (density at 0, and mass of a
    small box around 0)."""
    law = _example2()
    lap0 = (1 / 22) ** 2
    box = 0.1 * 1.0 * 4  # [−0.1, 0.1]×[−1, 1] lies in the plateau S_0
    return Outcome(5 * lap0 < law.M, f"density at 0: {law.M:.6f} vs Laplace {lap0:.6f}; mass "
                   f"of S_0: {law.M * box:.5f} vs at most {lap0 * box:.5f}")


def figure7_marginals(quick: bool = False) -> Outcome:
    """Fig. 7 and the marginal density of Section 6: f_Y1(x) = 2M e^(−i1 ε)(z2 + s2·i1 +
    s2/(e^ε − 1)), i1 = floor((|x| − z1)/s1 + 1), integrates to 1 and gives Var(Y1)."""
    law, eps, z1, z2, s1, s2 = _example2(), 1.0, 0.1, 1.0, 1.0, 10.0
    x = np.linspace(-40, 40, 800001 if not quick else 160001)
    i1 = np.floor((np.abs(x) - z1) / s1 + 1)
    i1 = np.maximum(i1, 0)
    f = 2 * law.M * np.exp(-i1 * eps) * (z2 + s2 * i1 + s2 / math.expm1(eps))
    mass = float(np.trapezoid(f, x))
    var = float(np.trapezoid(f * x * x, x))
    ok = abs(mass - 1) < 1e-3 and abs(var - float(law.var()[0])) < 5e-3
    return Outcome(ok, f"mass {mass:.5f}, Var {var:.4f} (Example 2: {law.var()[0]:.4f})")
