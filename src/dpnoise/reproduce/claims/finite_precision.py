"""Checks of I. Gazeau, D. Miller, C. Palamidessi, "Preserving differential privacy under
finite-precision semantics", QAPL 2013, EPTCS 117, 2013
(register: docs/claims/finite_precision.toml).  Each returns whether the statement holds as
printed."""

from __future__ import annotations

import math

import numpy as np

from ...laws.finite_precision import (
    aligned_interval,
    delta_t_inverse_cdf,
    eps_prime,
    eps_prime_printed,
    rounding_robustness,
)
from ..finite_precision import (
    common_outputs,
    enumerate_rounded,
    figure2,
    fixed_point_example,
    naive_planar_common,
    numpy_attack,
    rounded_attack,
)
from . import Outcome


def example11(quick: bool = False) -> Outcome:
    """Example 1.1 and Fig. 1: with x = z·2^-6 and b = 4, the outputs for r1 = 0 and
    r2 = 3·2^-4 + 2^-5 never coincide (residues mod 4 are {0} and {2})."""
    ex = fixed_point_example()
    ok = ex["common"] == 0 and ex["res1"] == [0] and ex["res2"] == [2]
    return Outcome(ok, f"common outputs {ex['common']}; residues {ex['res1']} vs {ex['res2']}")


def example11_difference(quick: bool = False) -> Outcome:
    """Example 1.1: the true answers are distinguished when they differ by 2^(n+k+h)/2^d."""
    n, k, h, d = 2, 3, 2, 6
    printed = fixed_point_example(d=d, n=n, r2_units=2 ** (n + k + h))
    meant = fixed_point_example(d=d, n=n, r2_units=(2**n) * k + h)
    return Outcome(printed["common"] == 0,
                   f"difference 2^(n+k+h) = {2 ** (n + k + h)} units: {printed['common']} common "
                   f"outputs; (2^n k + h) = {(2**n) * k + h} units: {meant['common']}")


def section2_inverse_cdf(quick: bool = False) -> Outcome:
    """Section 2 (A2): with u on a 2^-q grid, r + X for the inverse-CDF Laplace sampler has
    outputs that r + 1 + X can never produce: every output is a witness."""
    res = [common_outputs(q) for q in ((12, 16) if quick else (12, 16, 20))]
    return Outcome(all(c == 0 for c, _ in res),
                   "; ".join(f"{n} outputs, {c} shared" for c, n in res))


def figure2_ratio(quick: bool = False) -> Outcome:
    """Example 4.1 and Fig. 2: rounding a probability of 1.5/N to a multiple of 1/N gives a
    ratio of 2 at a point where the ideal ratio is 4/3."""
    f = figure2(q=14 if quick else 16)
    r = f["ratio"][np.isfinite(f["ratio"])]
    return Outcome(float(r.max()) >= 2.0 - 1e-12, f"largest observed ratio {float(r.max()):.3f}"
                                                   " against the ideal 4/3")


def section1_numpy(quick: bool = False) -> Outcome:
    """Section 1.1: floating-point samplers (numpy's Laplace here) release outputs that are
    impossible for a neighbouring true value; after rounding to a grid and truncating, none."""
    n = 20_000 if quick else 100_000
    y, reachable = numpy_attack(n)
    impossible = 1 - float(np.mean(reachable))
    after = rounded_attack(y[: n // 10], 2.0**-10, -50.0, 50.0)
    return Outcome(impossible > 0.5 and after == 0,
                   f"{impossible:.1%} of numpy's outputs impossible under the neighbour; "
                   f"after rounding: {after}")


def section6_naive_planar(quick: bool = False) -> Outcome:
    """Section 6: the planar Laplace sampler in floating point (polar, Lambert W radius) has
    no output in common between two neighbouring points."""
    common, distinct = naive_planar_common(bits=8 if quick else 10)
    return Outcome(common == 0, f"{common} common of {distinct} distinct outputs")


def section5_lipschitz(quick: bool = False) -> Outcome:
    """Section 5: on the truncated range |n(u)| <= D the inverse CDF n(u) = −b sgn(u − ½)
    ln(1 − 2|u − ½|) has Lipschitz constant dn_max = (2Δ/ε) e^(εD/Δ)."""
    eps, delta, D = 1.3, 1.0, 4.0
    b = delta / eps
    u_edge = 0.5 + 0.5 * (1 - math.exp(-D / b))
    h = 1e-9
    slope = (-b * math.log(1 - 2 * (u_edge - 0.5)) + b * math.log(1 - 2 * (u_edge - h - 0.5))) / h
    want = 2 * delta / eps * math.exp(eps * D / delta)
    return Outcome(abs(slope / want - 1) < 1e-5, f"slope {slope:.6f}, formula {want:.6f}")


def theorem45_corrected(quick: bool = False) -> Outcome:
    """Theorem 4.5 with the proof's factor ε in the exponent: the exactly enumerated loss of
    the rounded, truncated inverse-CDF mechanism stays below ε + ln(1 + R e^(ε(L + δt)/Δ))."""
    configs = [(20, 1 / 16, -4.0, 5.0)] if quick else [(20, 1 / 16, -4.0, 5.0),
                                                       (22, 1 / 32, -4.0, 5.0)]
    rows = []
    for q, L, lo, hi in configs:
        m, M = aligned_interval(lo, hi, L)
        dt = delta_t_inverse_cdf(1.0, M - m, max(abs(m), abs(M)), q)
        rows.append((enumerate_rounded(q, L, m, M), eps_prime(1.0, 1.0, L, dt, 1)))
    return Outcome(all(e <= c for e, c in rows),
                   "; ".join(f"loss {e:.5f} <= bound {c:.5f}" for e, c in rows))


def theorem45_printed(quick: bool = False) -> Outcome:
    """Theorem 4.5 and its proof (Appendix B), as printed: the density of the noise grows by
    at most e^((Δ + L + δt)/Δ) over a distance Δ + L + δt, hence the exponent (L + δt)/Δ."""
    eps, delta, L, dt = 2.0, 1.0, 1 / 16, 1e-6
    dist = delta + L + dt
    actual = math.exp(eps * dist / delta)  # Laplace(Δ/ε) density ratio over that distance
    printed = math.exp(dist / delta)
    return Outcome(actual <= printed, f"ε = 2: density ratio {actual:.3f} over Δ + L + δt, "
                                      f"printed bound {printed:.3f}")


def section5_robustness(quick: bool = False) -> Outcome:
    """Section 5: the rounding robustness is R = (L + 2δt)/(L − 2δt) (outer over inner)."""
    L, dt = 2.0**-10, 1.08e-7
    printed = (L + 2 * dt) / (L - 2 * dt)
    eq5 = rounding_robustness(L, dt, 1)
    over = eps_prime_printed(1.0, 1.0, L, dt, 1) - 1.0
    return Outcome(abs(printed - eq5) < 1e-12,
                   f"L = 2^-10, δt = 1.08e-7: printed R = {printed:.6f}, eq. 5 R = {eq5:.3e}; "
                   f"printed ε' − ε = {over:.4f} (>= ln 2), corrected "
                   f"{eps_prime(1.0, 1.0, L, dt, 1) - 1:.2e}")


def section6_cell_diameter(quick: bool = False) -> Outcome:
    """Section 6: the exponent uses the grid step L as the size of a square cell."""
    L = 1.0
    return Outcome(math.isclose(L, math.hypot(L, L)),
                   f"the Euclidean diameter of a square cell of side {L} is {math.hypot(L, L):.4f}")


def section6_lipschitz(quick: bool = False) -> Outcome:
    """Section 6: the inverse of the radius cdf C(r) = 1 − (1 + εr)e^(−εr) is Lipschitz on
    [0, C(⌀)] (with constant K_C)."""
    eps = 1.0
    slopes = []
    for u in (1e-4, 1e-8, 1e-12):
        # C^{-1}(u) ≈ √(2u)/ε near 0: the slope C^{-1}(u)/u grows without bound
        r = math.sqrt(2 * u) / eps
        for _ in range(50):  # Newton on C(r) = u
            c = -math.expm1(-eps * r) - eps * r * math.exp(-eps * r)
            r -= (c - u) / (eps * eps * r * math.exp(-eps * r))
        slopes.append(r / u)
    return Outcome(slopes[-1] < 10 * slopes[0], "C^-1(u)/u at u = 1e-4, 1e-8, 1e-12: "
                   + ", ".join(f"{s:.3g}" for s in slopes))


def section6_exception(quick: bool = False) -> Outcome:
    """Section 6: when the true point lies on the boundary of the region M_r, the exception
    (an output outside M_r) has probability above 1/2."""
    # the ideal planar Laplace law: radius Gamma(2, 1/ε), uniform angle; true point at the
    # middle of the right edge of the square [−s/2, s/2]²; midpoint rule in (r, θ)
    eps, side = 0.01, 400.0
    nr, nt = (800, 720) if quick else (4000, 3600)
    r = (np.arange(nr) + 0.5) * (40 / eps / nr)
    t = (np.arange(nt) + 0.5) * (2 * math.pi / nt) - math.pi
    w = eps * eps * r * np.exp(-eps * r) * (40 / eps / nr) / nt  # density × cell (θ uniform)
    x = side / 2 + r[:, None] * np.cos(t)[None, :]
    y = r[:, None] * np.sin(t)[None, :]
    outside = (np.abs(x) > side / 2) | (np.abs(y) > side / 2)
    p = float((w[:, None] * outside).sum())
    return Outcome(p > 0.5, f"P(exception) = {p:.4f} (ε = 0.01/m, a 400 m square)")
