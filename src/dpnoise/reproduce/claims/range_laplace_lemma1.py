"""Checks of the proof of Lemma 1 in the appendix of W. L. Croft, J.-R. Sack, W. Shi,
"Differential privacy via a truncated and normalized Laplace mechanism", Journal of Computer
Science and Technology 37(2), 2022: formulas (A11)-(A25) (register:
docs/claims/range_laplace.toml), and (A32), its ΔL1 = 0 case in the proof of Lemma 2.

The proof studies the argument of W in (A6)/(A7) as a function of the distance i (ΔF = 1
here, as in the other appendix checks), g = 2e^(ΔL1/σ1) − 1:
arg(i) = −2(i + ΔL1) e^(−iε) e^(−x)/(σ1 g) with x = e^(−iε)(i + ΔL1)/(σ1 g), i.e. −2x e^(−x).
Each printed step is evaluated on both sides at parameter points (ε, σ1, ΔL1) where the zeros
(A9) are real; each check returns whether the step holds as printed."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from . import Outcome
from .range_laplace_formulas import agreement
from .range_laplace_proofs import _d_di, w_argument

#: (ε, σ1, ΔL1) with both zeros (A9) real (their W argument is >= −1/e)
_POINTS = ((1.0, 0.1, 0.05), (2.0, 0.05, 0.02), (0.5, 0.2, 0.1), (1.5, 0.08, 0.01))
_W_HALF = float(special.lambertw(-1 / (2 * math.e)).real)  # W(−1/(2e))


def _g(s1: float, dl1: float) -> float:
    return 2 * math.exp(dl1 / s1) - 1


def _zeros(eps: float, s1: float, dl1: float) -> tuple[float, float, float, float]:
    """(i, j, a, b): the zeros (A9) on the branches 0 and −1 and their W values a, b."""
    u = -eps * s1 * _g(s1, dl1) * math.exp(-dl1 * eps)
    assert u >= -1 / math.e, "both zeros real"
    a, b = (float(special.lambertw(u, z).real) for z in (0, -1))
    return -(dl1 * eps + a) / eps, -(dl1 * eps + b) / eps, a, b


def _a11_side(k: float, i_in_exponent: float, eps: float, s1: float, dl1: float) -> float:
    """One side of (A11) as printed: the e^(−kε)·(·)ΔF term of the exponent carries
    ``i_in_exponent`` (the printed right-hand side has i there, not j)."""
    g = _g(s1, dl1)
    expo = -(2 * k * eps * s1 * math.exp(dl1 / s1) + math.exp(-k * eps) * i_in_exponent
             - k * eps * s1 + math.exp(-k * eps) * dl1) / (s1 * g)
    return -2 * (k + dl1) * math.exp(expo) / (s1 * g)


def _x(k: float, eps: float, s1: float, dl1: float) -> float:
    return math.exp(-k * eps) * (k + dl1) / (s1 * _g(s1, dl1))


def _rows_11_17(number: int) -> list[tuple[str, float, float]]:
    """(A11)-(A17): the equalities between the two zeros i, j of (A9), as printed."""
    rows = []
    for eps, s1, dl1 in _POINTS:
        i, j, a, b = _zeros(eps, s1, dl1)
        g, tag = _g(s1, dl1), f"ε={eps}, σ1={s1}, ΔL1={dl1}"
        if number == 11:
            left, right = _a11_side(i, i, eps, s1, dl1), _a11_side(j, i, eps, s1, dl1)
        elif number == 12:
            left = -_x(i, eps, s1, dl1) * math.exp(-_x(i, eps, s1, dl1))
            right = -(j + dl1) * math.exp(-_x(j, eps, s1, dl1)) / (s1 * g)
        elif number == 13:
            left, right = -_x(i, eps, s1, dl1), -_x(j, eps, s1, dl1)
        elif number == 14:
            left, right = math.exp(-i * eps) * (i + dl1), math.exp(-j * eps) * (j + dl1)
        elif number == 15:
            def side(w: float, eps: float = eps, dl1: float = dl1) -> float:
                return math.exp((dl1 * eps + w) / eps * eps) * (-(dl1 * eps + w) / eps + dl1)
            left, right = side(a), side(b)
        elif number == 16:
            left, right = a * math.exp(a), b * math.exp(b)
        else:  # (A17): ΔF (= 1) in terms of the zero i, and the argument there is −2/e
            printed = (-math.exp(i * eps) * s1 + 2 * s1 * math.exp((i * eps * s1 + dl1) / dl1)
                       - dl1) / i
            rows.append((tag + ", argument", w_argument(i, eps, s1, dl1), -2 / math.e))
            left, right = printed, 1.0
        rows.append((tag, left, right))
    return rows


def _a18(eps: float, s1: float, dl1: float) -> float:
    t = -2 + math.exp(-dl1 / s1)
    return (2 * ((dl1 + s1) * math.exp(-dl1 / s1) - 2 * s1) * math.exp(2 * dl1 / (s1 * t))
            * (-dl1 * eps + 1) / (s1**2 * t**2))


def _rows_18_20(number: int) -> list[tuple[str, float, float]]:
    rows = []
    for eps, s1, dl1 in (*_POINTS, (1.0, 2.0, 1.5)):
        tag = f"ε={eps}, σ1={s1}, ΔL1={dl1}"
        if number == 18:  # the derivative (A8) at i = 0
            rows.append((tag, _a18(eps, s1, dl1), _d_di(0.0, eps, s1, dl1)))
        elif number == 19:  # (ΔL1 + σ1)e^(−ΔL1/σ1) <= 2σ1: record max(lhs/2σ1, 1) against 1
            lhs = max((d + s1) * math.exp(-d / s1) for d in np.linspace(0, 20 * s1, 401))
            rows.append((tag, max(lhs / (2 * s1), 1.0), 1.0))
        else:  # d/dΔL1 of (ΔL1 + σ1)e^(−ΔL1/σ1) = −e^(−ΔL1/σ1) ΔL1/σ1
            h = 1e-6

            def f(d: float, s1: float = s1) -> float:
                return (d + s1) * math.exp(-d / s1)
            rows.append((tag, -math.exp(-dl1 / s1) * dl1 / s1,
                         (f(dl1 + h) - f(dl1 - h)) / (2 * h)))
    return rows


def _a21(eps: float, s1: float, dl1: float) -> tuple[float, float]:
    """(smallest argument over i >= 0 on a grid, argument at the zero (A10))."""
    i0 = (1 - eps * dl1) / eps
    grid = np.linspace(0, 20 / eps, 4001)
    low = min(w_argument(float(k), eps, s1, dl1) for k in grid)
    return low, w_argument(max(i0, 0.0), eps, s1, dl1)


def _sigma_bound(number: int, i: float, eps: float, dl1: float) -> float:
    """σ1 of (A22)/(A23) at distance i, or of (A24)/(A25) (i replaced by the zero (A10))."""
    if number in (24, 25):
        c = math.exp(-(dl1 * eps - 1))
        inner = 2 * dl1 * _W_HALF * eps * math.exp(dl1 * _W_HALF * eps * c - dl1 * eps + 1)
        w = special.lambertw(inner, 0 if number == 24 else -1)
        return -dl1 / (float(w.real) - dl1 * _W_HALF * eps * c)
    s = i + dl1
    inner = 2 * dl1 * _W_HALF * math.exp((dl1 * _W_HALF * math.exp(i * eps) + i * eps * s) / s) / s
    w = special.lambertw(inner, 0 if number == 22 else -1)
    return -dl1 * s / (s * float(w.real) - dl1 * _W_HALF * math.exp(i * eps))


def _rows_22_25(number: int) -> list[tuple[str, float, float]]:
    """At the printed σ1 bound the argument is −1/e (at i, or at the zero (A10) of i), and
    it is >= −1/e on the printed side of the bound (1 % away) and below on the other side
    (recorded as 1 = as printed).  Points where the W of the bound is real and positive;
    elsewhere (e.g. ε = 2, ΔL1 = 0.2, i = 1) no σ1 is excluded."""
    rows = []
    for eps, dl1 in ((1.0, 0.1), (0.5, 0.4), (2.0, 0.2)):
        for i in ((0.5, 1.0, 3.0) if number in (22, 23) else ((1 - eps * dl1) / eps,)):
            if (eps, dl1) == (2.0, 0.2) and i >= 1:
                continue  # the W argument of (A22) is < −1/e or the bound negative
            s1 = _sigma_bound(number, i, eps, dl1)
            tag = f"ε={eps}, ΔL1={dl1}, i={i:.4g}: σ1={s1:.6g}"
            rows.append((tag, w_argument(i, eps, s1, dl1), -1 / math.e))
            above = 1.01 if number in (22, 24) else 0.99  # the printed side
            sides = (w_argument(i, eps, s1 * above, dl1) >= -1 / math.e,
                     w_argument(i, eps, s1 / above, dl1) < -1 / math.e)
            rows.append((tag + ", sides", float(all(sides)), 1.0))
    return rows


def appendix_lemma1(number: int, quick: bool = False) -> Outcome:
    """Appendix (A11)-(A25), the proof of Lemma 1: the equal W arguments at the two zeros
    (A9) (A11)-(A17), the derivative at i = 0 and the sign of its factors (A18)-(A20), the
    minimum at the zero (A10) (A21) and the σ1 bounds that keep the argument >= −1/e
    (A22)-(A25); and (A32) of the proof of Lemma 2, the same minimum at ΔL1 = 0."""
    if number <= 17:
        return agreement(_rows_11_17(number), 1e-9)
    if number <= 20:
        return agreement(_rows_18_20(number), 1e-6)
    if number == 32:  # at ΔL1 = 0 the minimum, at i = 1/ε, is −2ΔF e^(−1 − ΔF/(εeσ1))/(εσ1)
        rows = []
        for eps, s1 in ((1.0, 0.5), (0.5, 2.0), (1.0, 1.586), (2.0, 0.05)):
            printed = -2 * math.exp(-1 - 1 / (eps * math.e * s1)) / (eps * s1)
            grid = np.linspace(1e-6, 20 / eps, 4001)
            low = min(w_argument(float(k), eps, s1, 0.0) for k in grid)
            rows.append((f"ε={eps}, σ1={s1}", printed, w_argument(1 / eps, eps, s1, 0.0)))
            rows.append((f"ε={eps}, σ1={s1}, grid minimum", printed, min(low, printed)))
        return agreement(rows, 1e-9)
    if number == 21:
        rows = []
        for eps, s1, dl1 in ((1.0, 0.5, 0.1), (0.5, 1.0, 0.4), (2.0, 0.3, 0.2)):
            low, at_zero = _a21(eps, s1, dl1)
            rows.append((f"ε={eps}, σ1={s1}, ΔL1={dl1}", at_zero, low))
        return agreement(rows, 1e-6)
    return agreement(_rows_22_25(number), 1e-9)
