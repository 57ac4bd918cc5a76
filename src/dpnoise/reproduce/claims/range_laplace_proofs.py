"""Checks of the proofs of W. L. Croft, J.-R. Sack, W. Shi, "Differential privacy via a
truncated and normalized Laplace mechanism", Journal of Computer Science and Technology
37(2):369-388, 2022: the appendix formulas (A1)-(A7) and Theorem 2's proof (the reflected
gap-pair condition), register docs/claims/range_laplace.toml."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import special

from ...laws.range_laplace import log_mass, paper_boundary_scale, side_masses, sigma_metric
from . import Outcome
from .range_laplace_formulas import (
    F2,
    F2_CONSTRAINTS,
    INF,
    Pieces,
    agreement,
    formula,
    lemma1_bounds,
    log_density,
)


def gap_bound(pieces: Pieces, near: float, far: float, d: float, eps: float) -> float:
    """The smallest σ with (far − near)/σ + ln Z(near) − ln Z(far) <= ε(far − near)/ΔF (the
    gap-pair condition for the ordered pair), by bisection."""
    w = abs(far - near)

    def excess(s: float) -> float:
        return w / s + float(log_mass(pieces, np.array(near), s)
                             - log_mass(pieces, np.array(far), s)) - eps * w / d
    lo, hi = 1e-3, 2 * d / eps
    if excess(lo) <= 0:
        return lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if excess(mid) <= 0 else (mid, hi)
    return hi


def theorem2_proof_gap(quick: bool = False) -> Outcome:
    """Proof of Theorem 2: inverting the fraction of (37) decreases its left-hand side, so the
    reflected gap-pair condition is implied by Lemma 9's bound (3n + 2 bounds suffice)."""
    rows = []
    for a, b in F2_CONSTRAINTS:
        regular = gap_bound(F2, a, b, 1.0, 0.5)    # (37): D1 at the right end
        reflected = gap_bound(F2, b, a, 1.0, 0.5)  # the inverted fraction
        rows.append((a, b, regular, reflected))
    ok = all(rf <= rg + 1e-9 for *_, rg, rf in rows)
    return Outcome(ok, "F2 (ΔF = 1, ε = 0.5): " + "; ".join(
        f"gap ({a:g}, {b:g}): Lemma 9 bound {rg:.4f}, reflected {rf:.4f}"
        for a, b, rg, rf in rows))


# --------------------------------------------------------------- appendix (A1)-(A7)
def _ln25(s2: float, s1: float, i: float, dl1: float) -> float:
    """ln of the left-hand side of (25) (ΔF = 1)."""
    return math.log((s2 / s1) * (2 - math.exp(-(dl1 + i) / s2)) / (2 - math.exp(-dl1 / s1))
                    * math.exp((dl1 + i) / s2 - dl1 / s1))


def _appendix_general(i: float, eps: float, s1: float, dl1: float, branch: int) -> float:
    """(A6) (branch 0) and (A7) (branch −1) as printed, ΔF = 1."""
    g = 2 * math.exp(dl1 / s1) - 1
    expo = -(2 * i * eps * s1 * math.exp(dl1 / s1) + math.exp(-i * eps) * i - i * eps * s1
             + math.exp(-i * eps) * dl1) / (s1 * g)
    w = float(special.lambertw(-2 * (i + dl1) * math.exp(expo) / (s1 * g), branch).real)
    num = 2 * (math.exp(dl1 / s1) - 0.5) * math.exp(i * eps) * s1 * (i + dl1)
    den = -s1 * (math.exp(i * eps) - 2 * math.exp((i * eps * s1 + dl1) / s1)) * w + i + dl1
    return -num / den


def appendix(number: int, quick: bool = False) -> Outcome:
    """Appendix (A1)-(A7): (A1)/(A2) repeat (28)/(29); (A3)/(A4) are (30)/(31) rearranged;
    (A5) repeats (25); (A6)/(A7) are Lemma 1's bounds for any ΔL1 >= 0: (25) holds with
    equality at each."""
    if number in (1, 2):
        return formula(27 + number, quick)
    if number == 5:
        return formula(25, quick)
    rows = []
    w0 = float(special.lambertw(-1 / (2 * math.e), 0).real)
    # (A6)/(A7) only where the argument of W is >= −1/e (a real bound exists)
    cells = ((0.5, 1.0), (1.5, 0.4), (0.25, 2.0), (3.0, 0.3)) if number in (3, 4) else \
        ((0.5, 1.0), (0.25, 2.0))
    for i, eps in cells:
        if number in (3, 4):
            branch = 0 if number == 3 else -1
            c = w0 * i * eps * math.exp(-i * eps + 1)
            printed = i / (-float(special.lambertw(2 * w0 * i * eps * math.exp(c - i * eps + 1),
                                                   branch).real) + c)
            rows.append((f"i={i}, ε={eps}", printed, lemma1_bounds(
                i, eps, paper_boundary_scale(1.0, eps))[0 if number == 3 else 1]))
        else:
            for dl1, s1 in ((0.0, 2.0), (0.5, 2.0), (1.5, 3.0)):
                bound = _appendix_general(i, eps, s1, dl1, 0 if number == 6 else -1)
                rows.append((f"i={i}, ε={eps}, ΔL1={dl1}", _ln25(bound, s1, i, dl1), i * eps))
    return agreement(rows, 1e-9)


def _rate(pieces: Pieces, s: float, reflected: bool) -> float:
    """The metric loss rate at σ = s from the paper's 3n + 2 bounds (local rates at every
    finite span end, Lemma 9's gap pairs), plus the reflected gap pairs when asked."""
    best = 1.0 / s
    for lo, hi in pieces:
        for t in (lo, hi):
            if math.isfinite(t):
                fl, fr = side_masses(pieces, t, s)
                best = max(best, 2 * fl / (s * (fl + fr)), 2 * fr / (s * (fl + fr)))
    for (_, r), (nxt, _) in itertools.pairwise(pieces):
        w = nxt - r
        g = log_mass(pieces, np.array([r, nxt]), s)
        best = max(best, (w / s + float(g[0] - g[1])) / w)
        if reflected:
            best = max(best, (w / s + float(g[1] - g[0])) / w)
    return best


def _smallest_scale(pieces: Pieces, eps: float, reflected: bool) -> float:
    lo, hi = 1.0 / eps, 2.0 / eps
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _rate(pieces, mid, reflected) <= eps else (mid, hi)
    return hi


def theorem2_random(quick: bool = False) -> Outcome:
    """Theorem 2's conclusion on random configurations (R minus 1-3 random gaps, ΔF = 1):
    the σ from the 3n + 2 bounds equals the σ with the reflected gap pairs added."""
    anchor = _smallest_scale(F2, 0.5, True) / sigma_metric(F2, 1.0, 0.5) - 1  # the same rates
    rng = np.random.default_rng(2)
    worst, n = abs(anchor), 30 if quick else 1000
    for _ in range(n):
        k = int(rng.integers(1, 4))
        edges = np.sort(rng.uniform(0, 6, 2 * k))
        pieces = [(-INF, float(edges[0]))] + [
            (float(edges[2 * j + 1]), float(edges[2 * j + 2])) for j in range(k - 1)] + \
            [(float(edges[-1]), INF)]
        eps = float(rng.uniform(0.2, 2.0))
        a, b = _smallest_scale(pieces, eps, False), _smallest_scale(pieces, eps, True)
        worst = max(worst, abs(b / a - 1))
    return Outcome(worst < 1e-9, f"{n} random configurations: largest relative difference "
                   f"{worst:.1e} between the 3n + 2 and 4n + 2 optima")


# --------------------------------------------------- appendix (A8)-(A10), (A26)-(A37)
def w_argument(i: float, eps: float, s1: float, dl1: float) -> float:
    """The argument of W in (A6)/(A7) as a function of i (ΔF = 1); at ΔL1 = 0 the argument
    of (28)/(29), −2i e^(−iε) e^(−i e^(−iε)/σ1)/σ1."""
    g = 2 * math.exp(dl1 / s1) - 1
    expo = -(2 * i * eps * s1 * math.exp(dl1 / s1) + math.exp(-i * eps) * i - i * eps * s1
             + math.exp(-i * eps) * dl1) / (s1 * g)
    return -2 * (i + dl1) * math.exp(expo) / (s1 * g)


def _d_di(i: float, eps: float, s1: float, dl1: float) -> float:
    h = 1e-6 * max(1.0, i)
    return (w_argument(i + h, eps, s1, dl1) - w_argument(i - h, eps, s1, dl1)) / (2 * h)


def _derivative_rows(number: int) -> list[tuple[str, float, float]]:
    """(A8)/(A29): the printed derivatives of the W argument in i against a central
    difference."""
    rows = []
    for i, eps, s1, dl1 in ((0.5, 1.0, 2.0, 0.0), (1.2, 0.6, 1.5, 0.7), (2.0, 2.0, 0.8, 0.3)):
        if number == 29:
            dl1 = 0.0
            e = math.exp(-i * eps)
            printed = -2 * e * math.exp(-i * e / s1) * (i * eps - 1) * (i * e - s1) / s1**2
        else:
            g = 2 * math.exp(dl1 / s1) - 1
            expo = -(2 * i * eps * s1 * math.exp(dl1 / s1) + math.exp(-i * eps) * i
                     - i * eps * s1 + math.exp(-i * eps) * dl1) / (s1 * g)
            printed = -2 * (i * eps + eps * dl1 - 1) * (
                -2 * s1 * math.exp(dl1 / s1) + (i + dl1) * math.exp(-i * eps) + s1) \
                * math.exp(expo) / (s1**2 * g**2)
        rows.append((f"i={i}, ε={eps}, σ1={s1}, ΔL1={dl1}", printed, _d_di(i, eps, s1, dl1)))
    return rows


def _zero_rows(number: int) -> list[tuple[str, float, float]]:
    """(A9)/(A10)/(A30)/(A31): the printed zeros of the derivative in i."""
    rows = []
    for eps, s1, dl1 in ((1.0, 0.3, 0.0), (0.5, 0.5, 0.0), (1.0, 0.25, 0.1), (2.0, 0.1, 0.05)):
        if number in (30, 31):
            dl1 = 0.0
        g = 2 * math.exp(dl1 / s1) - 1
        if number == 10:
            zeros = [(1 - eps * dl1) / eps]
        elif number == 31:
            zeros = [1 / eps]
        else:
            arg = -eps * s1 * (g if number == 9 else 1.0) * math.exp(-dl1 * eps)
            if arg < -1 / math.e:
                continue
            zeros = [-(dl1 * eps + float(special.lambertw(arg, z).real)) / eps for z in (0, -1)]
        for i0 in zeros:
            if i0 > 0:
                scale = abs(w_argument(i0, eps, s1, dl1)) / max(i0, 1e-3)
                rows.append((f"i={i0:.4g}, ε={eps}, σ1={s1}", _d_di(i0, eps, s1, dl1) / scale,
                             0.0))
    return rows


def _tight_rows(number: int) -> list[tuple[str, float, float]]:
    """(A33)/(A34): at σ1 = −ΔF/(W(−1/(2e)) e ε) (resp. W_−1) the minimum over i of the W
    argument is exactly −1/e, and just outside the span it falls below −1/e."""
    rows = []
    branch = 0 if number == 33 else -1
    for eps in (0.5, 1.0, 2.0):
        s1 = -1 / (float(special.lambertw(-1 / (2 * math.e), branch).real) * math.e * eps)
        grid = np.linspace(1e-4, 12 / eps, 60001)
        lowest = min(w_argument(float(i), eps, s1, 0.0) for i in grid[::50])
        fine = grid[np.abs(grid - 1 / eps) < 0.05 / eps]
        lowest = min(lowest, *(w_argument(float(i), eps, s1, 0.0) for i in fine))
        outside = s1 * (0.99 if number == 33 else 1.01)
        below = min(w_argument(float(i), eps, outside, 0.0) for i in fine) < -1 / math.e
        rows.append((f"ε={eps}", lowest, -1 / math.e))
        rows.append((f"ε={eps}, just outside", float(below), 1.0))
    return rows


def appendix_lemmas(number: int, quick: bool = False) -> Outcome:
    """Appendix (A8)-(A10) and (A26)-(A37), the proofs of Lemmas 1-2: the derivative of the
    W argument and its zeros, the repeated forms, and the span of σ1 (A33)/(A34)."""
    if number in (27, 28):
        return formula(number + 1, quick)
    if number in (35, 36):
        return appendix(number - 32, quick)
    if number == 37:
        a, b = formula(28, quick), formula(29, quick)
        return Outcome(a.holds and b.holds, a.detail + "; " + b.detail)
    if number == 26:
        rows = []
        for i, s1, s2 in ((1.0, 1.586, 1.3), (0.5, 2.0, 1.5), (2.0, 1.2, 1.1)):
            printed = math.log((s2 / s1) * (2 - math.exp(-i / s2)) * math.exp(i / s2))
            h = [(-INF, 0.0)]

            indep = float(log_density(h, np.array(0.0), 0.0, s1)
                          - log_density(h, np.array(0.0), -i, s2))
            rows.append((f"i={i}", printed, indep))
        return agreement(rows, 1e-11)
    if number in (8, 29):
        return agreement(_derivative_rows(number), 1e-5)
    if number in (9, 10, 30, 31):
        rows = _zero_rows(number)
        ok = bool(rows) and all(abs(p) < 1e-5 for _, p, _ in rows)
        return Outcome(ok, f"{len(rows)} zeros; largest relative derivative "
                       f"{max((abs(p) for _, p, _ in rows), default=math.nan):.1e}")
    return agreement(_tight_rows(number), 1e-6)
