"""Checks of the proofs of Lemmas 3-5 and of Theorem 1 in the appendix of W. L. Croft,
J.-R. Sack, W. Shi, "Differential privacy via a truncated and normalized Laplace mechanism",
Journal of Computer Science and Technology 37(2), 2022: formulas (A38)-(A56) (register:
docs/claims/range_laplace.toml).

The object is σ2(i) of (A37) on a half-line (ΔF = 1, ΔL1 = 0),
σ2 = −i e^(iε) σ1/(W_Z(arg(i)) e^(iε) σ1 + i), arg(i) = −2i e^(−iε) e^(−i e^(−iε)/σ1)/σ1,
mostly at the chosen σ1* = −1/(W(−1/(2e)) e ε) of (A33).  Each printed step is evaluated on
both sides at several (ε, σ1, i); each check returns whether the step holds as printed."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from . import Outcome
from .range_laplace_formulas import INF, agreement, log_density
from .range_laplace_proofs import _d_di, appendix_lemmas, w_argument

_W_HALF = float(special.lambertw(-1 / (2 * math.e)).real)  # W(−1/(2e))
_EPS = (0.5, 1.0, 2.0)


def sigma1_star(eps: float) -> float:
    """σ1 of (A33): −ΔF/(W(−1/(2e)) e ε), ΔF = 1."""
    return -1 / (_W_HALF * math.e * eps)


def _w(i: float, eps: float, s1: float, z: int) -> float:
    arg = max(w_argument(i, eps, s1, 0.0), -1 / math.e)  # rounding at the mode i = 1/ε
    return float(special.lambertw(arg, z).real)


def sigma2(i: float, eps: float, s1: float, z: int) -> float:
    """(A37) on branch ``z``."""
    return -i * math.exp(i * eps) * s1 / (_w(i, eps, s1, z) * math.exp(i * eps) * s1 + i)


def _branch_points(eps: float) -> list[tuple[float, int]]:
    """(i, Z): the principal branch before the mode 1/ε, the −1 branch after (Theorem 1)."""
    return [(f / eps, 0) for f in (0.2, 0.6, 0.9)] + [(f / eps, -1) for f in (1.2, 2.0, 4.0)]


def _rows_38_45(number: int) -> list[tuple[str, float, float]]:
    rows = []
    for eps in _EPS:
        for s1 in (sigma1_star(eps), 3.0 / eps):
            for i, z in (*_branch_points(eps), *((i, -1 - z) for i, z in _branch_points(eps))):
                w, tag = _w(i, eps, s1, z), f"ε={eps}, σ1={s1:.4g}, i={i:.4g}, Z={z}"
                if abs(w + 1) < 1e-3:
                    continue  # at the mode both branches meet; the derivative is singular
                e = math.exp(i * eps)
                if number == 38:
                    h = 1e-6 * i
                    num = (sigma2(i + h, eps, s1, z) - sigma2(i - h, eps, s1, z)) / (2 * h)
                    rows.append((tag, -(w + i * eps) * e * s1 / ((w * e * s1 + i) * (w + 1)),
                                 num))
                elif number in (39, 40, 43, 44):  # the inequalities, recorded as 1 = holds
                    rhs43 = float(special.lambertw(-i / (e * s1) * math.exp(-i / (e * s1))).real)
                    holds = {39: w * e * s1 < -i, 40: w < -i / (e * s1), 43: w < rhs43,
                             44: w_argument(i, eps, s1, 0.0) < w_argument(i, eps, s1, 0.0) / 2}
                    rows.append((tag, float(holds[number]), 1.0))
                else:  # (A45): W_Z + 1 is positive on the principal branch, negative on −1
                    rows.append((tag, float((w + 1 > 0) == (z == 0)), 1.0))
    return rows


def _rows_41_42(number: int) -> list[tuple[str, float, float]]:
    rows = []
    for eps in _EPS:
        for i in (0.3 / eps, 1 / eps, 2.5 / eps):
            def f41(k: float, eps: float = eps) -> float:
                return k * eps * math.exp(-k * eps + 1) * _W_HALF
            if number == 41:  # the right side of (A40) at σ1*
                rows.append((f"ε={eps}, i={i:.4g}", f41(i),
                             -i * math.exp(-i * eps) / sigma1_star(eps)))
            else:
                h = 1e-6
                rows.append((f"ε={eps}, i={i:.4g}",
                             eps * math.exp(-i * eps + 1) * _W_HALF * (1 - i * eps),
                             (f41(i + h) - f41(i - h)) / (2 * h)))
        grid = np.linspace(0, 20 / eps, 2001)
        rows.append((f"ε={eps}, minimum", float(max(grid * eps * np.exp(1 - grid * eps)))
                     * _W_HALF, _W_HALF))
    return rows


def _rows_46_48(number: int) -> list[tuple[str, float, float]]:
    rows = []
    for eps in _EPS:
        for s1 in (sigma1_star(eps), 1.8 / eps, 0.1 / eps):
            for z in (0, -1):
                u = math.log(eps * s1 / 2) * eps * s1
                if u < -1 / math.e or (z == -1 and u >= 0):
                    continue  # W_Z(u) is not real
                i = -float(special.lambertw(u, z).real) / eps
                if i <= 0:
                    continue
                tag = f"ε={eps}, σ1={s1:.4g}, Z={z}, i={i:.4g}"
                if number == 46:  # the printed form of the W input is (A49)'s
                    printed = 2 * i * math.exp(-i / (s1 * math.exp(i * eps))) / (
                        -s1 * math.exp(i * eps))
                    rows.append((tag, printed, w_argument(i, eps, s1, 0.0)))
                elif number == 47:
                    rows.append((tag, w_argument(i, eps, s1, 0.0), -i * eps * math.exp(-i * eps)))
                else:  # (A48): i_Z zeroes (A46) on the same branch Z
                    rows.append((tag, _w(i, eps, s1, z) + i * eps, 0.0))
                    if s1 == sigma1_star(eps):
                        rows.append((tag + ", at σ1*", i, 1 / eps))
    return rows


def _rows_49_53(number: int) -> list[tuple[str, float, float]]:
    rows = []
    for eps in _EPS:
        s1 = sigma1_star(eps)
        if number == 49:  # <= 0, 0 at i = 0, decreasing there
            grid = np.linspace(0, 20 / eps, 401)
            top = max(w_argument(float(k), eps, s1, 0.0) for k in grid)
            rows.append((f"ε={eps}, largest", top, 0.0))
            rows.append((f"ε={eps}, slope at 0", _d_di(0.0, eps, s1, 0.0), -2 / s1))
        else:  # (A52)/(A53): σ1 = i e^(−iε) zeroes (A50) and gives the input −2/e
            for i in (0.3 / eps, 2.0 / eps):
                s = i * math.exp(-i * eps)
                tag = f"ε={eps}, i={i:.4g}, σ1={s:.4g}"
                if number == 52:
                    rows.append((tag, _d_di(i, eps, s, 0.0) * s, 0.0))
                else:
                    rows.append((tag, w_argument(i, eps, s, 0.0), -2 / math.e))
    return rows


def _theorem1_rows(number: int, quick: bool) -> list[tuple[str, float, float]]:
    """(A54)-(A56) on the half-line (−∞, 0]: D1 at the end (σ1*), D2 at −i (σ2 of (A37))."""
    rows = []
    h = [(-INF, 0.0)]
    for eps in (0.5, 1.0):
        s1 = sigma1_star(eps)
        for i, z in ((0.5 / eps, 0), (2.0 / eps, -1)):
            s2 = sigma2(i, eps, s1, z)
            x = np.r_[0.0, -i / 2, -i, -3 * i, np.linspace(-20 * i, 0, 41 if quick else 401)]
            lp1 = log_density(h, x, 0.0, s1)
            lp2 = log_density(h, x, -i, s2)
            for xv, a, b in zip(x, lp1, lp2, strict=True):
                tag = f"ε={eps}, i={i:.3g}, x={xv:.3g}"
                if number == 54:
                    rows.append((tag, float(a - b), i * eps))
                elif number == 55:
                    rows.append((tag, float(b - a <= i * eps + 1e-12), 1.0))
                else:
                    rows.append((tag, float(b <= a + 1e-12), 1.0))
    return rows


def appendix_lemmas3_6(number: int, quick: bool = False) -> Outcome:
    """Appendix (A38)-(A56): Lemma 3 (the derivative of σ2 and the signs of its denominator,
    (A38)-(A45)), Lemma 4 (its zeros, (A46)-(A48)), Lemma 5 (the W input, (A49)-(A53)) and
    Theorem 1's symmetric form (A54)-(A56)."""
    if number in (50, 51):
        return appendix_lemmas(number - 21, quick)
    if number in (41, 42):
        rows = _rows_41_42(number)
    elif number <= 45:
        rows = _rows_38_45(number)
    elif number <= 48:
        rows = _rows_46_48(number)
    elif number <= 53:
        rows = _rows_49_53(number)
    else:
        rows = _theorem1_rows(number, quick)
    return agreement(rows, 1e-6)
