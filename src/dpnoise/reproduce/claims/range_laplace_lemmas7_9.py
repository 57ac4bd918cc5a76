"""Checks of the proofs of Lemmas 7-9 in the appendix of W. L. Croft, J.-R. Sack, W. Shi,
"Differential privacy via a truncated and normalized Laplace mechanism", Journal of Computer
Science and Technology 37(2), 2022: formulas (A57)-(A70) (register:
docs/claims/range_laplace.toml).

For finite constraints, L1 and R1 are the Laplace(f(D1), σ) masses of the constraints left
and right of f(D1) (formulas 4-5), and f(D2) = f(D1) − iΔF (ΔF = 1).  The printed sides are
compared with the library's truncated, normalised densities on the reference case F2
(R minus (0, 1) and (3, 3.5)) and with central differences; each check returns whether the
step holds as printed."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from . import Outcome
from .range_laplace_formulas import F2, F2_CONSTRAINTS, agreement, constraint_sums, log_density

#: (L1, R1, σ, ε) for the algebraic steps: L1, R1 in [0, 0.5) as the proof assumes
_ABSTRACT = ((0.1, 0.2, 1.5, 1.0), (0.3, 0.05, 0.8, 2.0), (0.0, 0.4, 3.0, 0.5),
             (0.45, 0.45, 2.0, 1.0))


def _lhs57(i: float, L1: float, R1: float, s: float) -> float:
    """The left side of (A57) without its factor e^(iΔF/σ)."""
    return (1 - (L1 * math.exp(i / s) + R1 * math.exp(-i / s))) / (1 - (L1 + R1))


def _c(L1: float, R1: float, s: float) -> float:
    """ΔF(L1 − R1)/(σ(L1 + R1 − 1))."""
    return (L1 - R1) / (s * (L1 + R1 - 1))


def _density_rows(number: int) -> list[tuple[str, float, float]]:
    """(A57)/(A70)/(A69): the printed ratio against the largest log density ratio over x on
    F2 (f(D1) and f(D2) in one span for (A57), on the two ends of the gap (0, 1) for
    (A69)/(A70))."""
    rows = []
    for s in (0.6, 1.5, 4.0):
        cases = ((2.5, 1.0), (2.9, 0.4)) if number == 57 else ((1.0, 1.0),)
        for mu, i in cases:
            L1, R1 = constraint_sums(F2_CONSTRAINTS, mu, s)
            x = np.r_[np.linspace(-8.0, 0.0, 81), np.linspace(1.0, 3.0, 81), np.linspace(3.5,
                                                                                         12, 86)]
            worst = float(np.max(log_density(F2, x, mu, s) - log_density(F2, x, mu - i, s)))
            tag = f"σ={s}, f(D1)={mu}, i={i}"
            if number == 57:
                rows.append((tag, math.log(_lhs57(i, L1, R1, s)) + i / s, worst))
            else:
                S = (1 - math.exp(-i / s)) / 2
                if number == 69:  # the Laplace(f(D1), σ) mass of the separating gap (0, 1)
                    gap = stats.laplace(loc=mu, scale=s)
                    rows.append((tag, S, float(gap.cdf(1.0) - gap.cdf(0.0))))
                    continue
                printed = (1 - (math.exp(i / s) * (L1 - S) + R1 * math.exp(-i / s) + S)) / (
                    1 - (L1 + R1)) * math.exp(i / s)
                rows.append((tag, math.log(printed), worst))
    return rows


def _derivative_rows(number: int) -> list[tuple[str, float, float]]:
    """(A58)/(A59)/(A65)/(A66): printed derivatives in i against central differences."""
    rows = []
    for L1, R1, s, eps in _ABSTRACT:
        c = _c(L1, R1, s)
        for i in (0.0, 0.7, 2.0):
            h = 1e-4
            tag = f"L1={L1}, R1={R1}, σ={s}, ε={eps}, i={i}"
            if number == 58:
                def f(k: float, L1: float = L1, R1: float = R1, s: float = s) -> float:
                    return _lhs57(k, L1, R1, s) * math.exp(k / s)
                printed = math.exp(i / s) * (2 * L1 * math.exp(i / s) - 1) / (s * (L1 + R1 - 1))
                rows.append((tag, printed, (f(i + h) - f(i - h)) / (2 * h)))
            elif number == 59:
                rows.append((tag, eps * math.exp(i * eps),
                             (math.exp((i + h) * eps) - math.exp((i - h) * eps)) / (2 * h)))
            elif number == 65:
                printed = (L1 * math.exp(i / s) + R1 * math.exp(-i / s)) / (s**2 * (L1 + R1 - 1))
                g = [_lhs57(i + k * h, L1, R1, s) for k in (-1, 0, 1)]
                rows.append((tag, printed, (g[0] - 2 * g[1] + g[2]) / h**2))
            else:
                printed = (L1 - R1) ** 2 / (s**2 * (L1 + R1 - 1) ** 2) * math.exp(i * c)
                g = [math.exp((i + k * h) * c) for k in (-1, 0, 1)]
                rows.append((tag, printed, (g[0] - 2 * g[1] + g[2]) / h**2))
    return rows


def _algebra_rows(number: int) -> list[tuple[str, float, float]]:
    """(A60)-(A64), (A67)-(A68): the rearrangements, on both sides, and Lemma 7's and 8's
    inequalities on i in [0, 10] (recorded as 1 = holds)."""
    rows = []
    for L1, R1, s, eps in _ABSTRACT:
        c, tag = _c(L1, R1, s), f"L1={L1}, R1={R1}, σ={s}, ε={eps}"
        if number == 60:  # (A58) at i = 0
            rows.append((tag, (2 * L1 - 1) / (s * (L1 + R1 - 1)),
                         math.exp(0) * (2 * L1 - 1) / (s * (L1 + R1 - 1))))
        elif number == 61:  # (A60) iff (A61), over a grid of ε (denominator positive)
            agree = all(((2 * L1 - 1) / (s * (L1 + R1 - 1)) <= e)
                        == (e - c > 0 and s >= 1 / (e - c))
                        for e in np.linspace(0.05, 5, 100))
            rows.append((tag, float(agree), 1.0))
        elif number in (62, 63):  # e^(iΔF/σ') with σ' = ΔF/(ε − c) is e^(iε − ic)
            for i in (0.5, 2.0):
                rows.append((f"{tag}, i={i}", math.exp(i / (1 / (eps - c))),
                             math.exp(i * eps - i * c)))
        elif number in (64, 68):  # (A64)/(A68) hold for every i (α = 0 / α > 0)
            alpha = 0.0 if number == 64 else 0.3 * (eps - c)
            i = np.linspace(0, 10, 1001)
            lhs = (1 - (L1 * np.exp(i / s) + R1 * np.exp(-i / s))) / (1 - (L1 + R1))
            rows.append((tag, float(np.all(lhs <= np.exp(i * c + i * alpha) * (1 + 1e-12))),
                         1.0))
        else:  # (A67): subtracting 0 < α < ε − c from the denominator raises σ
            base = 1 / (eps - c)
            rows.append((tag, float(all(1 / (eps - c - a) > base
                                        for a in np.linspace(0.01, 0.99, 9) * (eps - c))), 1.0))
    return rows


def appendix_lemmas7_9(number: int, quick: bool = False) -> Outcome:
    """Appendix (A57)-(A70): Lemma 7's guarantee within a span and its derivatives
    (A57)-(A66), Lemma 8's larger σ (A67)-(A68), Lemma 9's separating constraint
    (A69)-(A70)."""
    if number in (57, 69, 70):
        return agreement(_density_rows(number), 1e-9)
    if number in (58, 59, 65, 66):
        return agreement(_derivative_rows(number), 1e-6)
    return agreement(_algebra_rows(number), 1e-12)
