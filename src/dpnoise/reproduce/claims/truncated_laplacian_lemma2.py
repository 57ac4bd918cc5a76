"""Checks of Lemma 2 (eqs. 9-10) of Q. Geng, W. Ding, R. Guo, S. Kumar, "Privacy and utility
tradeoff in approximate differential privacy", arXiv:1810.00877, 2018, as the proof of
Theorem 4 uses it (register: docs/claims/truncated_laplacian.toml).

Lemma 2 (Geng and Viswanath's Theorem 8) says: if a discrete noise P meets (8) with integer
sensitivity Δ̃ and a symmetric cost ℒ meets condition (9),
Σ_{i=1}^{n−1} b^i (2ℒ(iΔ̃) − ℒ(1 + (i−1)Δ̃) − ℒ(1 + iΔ̃)) >= ℒ(1), then (10) holds:
Σ_i ℒ(i)P(i) >= 2 Σ_{k<n} a b^k ℒ(1 + kΔ̃).  The proofs of Theorems 4-5 apply it to the
discretised costs ℒ̃_N(i) = Δ(2|i| − 1)/(2N) and its square, with Δ̃ = N.  Each check returns
whether the statement holds as printed."""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
from scipy import optimize, sparse

from . import Outcome

Cost = Callable[[int], float]


def lemma2_constants(eps: float, n: int) -> tuple[float, float, float]:
    """(a, b, δ) with a = (δ + (e^ε − 1)/2)/e^ε, b = e^−ε and δ the value that makes
    Σ_{k<n} a b^k = 1/2 (the paper's integer-n assumption)."""
    delta = math.expm1(eps) / (2 * math.expm1(eps * n))
    return (delta + math.expm1(eps) / 2) / math.exp(eps), math.exp(-eps), delta


def discretised_cost(N: int, power: int) -> Cost:
    """ℒ̃_N of the proofs of Theorems 4 (power 1) and 5 (power 2), with Δ = 1."""
    return lambda i: 0.0 if i == 0 else ((2 * abs(i) - 1) / (2 * N)) ** power


def condition9_margin(cost: Cost, b: float, n: int, dt: int) -> float:
    """Left side minus right side of (9) for ``cost`` at sensitivity Δ̃ = ``dt``."""
    return sum(b**i * (2 * cost(i * dt) - cost(1 + (i - 1) * dt) - cost(1 + i * dt))
               for i in range(1, n)) - cost(1)


def smallest_cost(cost: Cost, eps: float, delta: float, dt: int, K: int) -> float:
    """min Σ ℒ(i)P(i) over the noises P on {−K..K} meeting (8) with sensitivity Δ̃ = ``dt``
    (a linear programme: for each shift d, Σ_i max(P(i) − e^ε P(i + d), 0) <= δ)."""
    m = 2 * K + 1
    shifts = [d for d in range(-dt, dt + 1) if d]
    rows, cols, vals = [], [], []
    r = 0
    for j, d in enumerate(shifts):
        for p in range(m):  # P(p) − e^ε P(p + d) − t_{d,p} <= 0
            rows += [r, r]
            cols += [p, m * (j + 1) + p]
            vals += [1.0, -1.0]
            if 0 <= p + d < m:
                rows.append(r)
                cols.append(p + d)
                vals.append(-math.exp(eps))
            r += 1
    for j in range(len(shifts)):  # Σ_p t_{d,p} <= δ
        rows += [r] * m
        cols += list(range(m * (j + 1), m * (j + 2)))
        vals += [1.0] * m
        r += 1
    nv = m * (len(shifts) + 1)
    a_ub = sparse.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    b_ub = np.r_[np.zeros(r - len(shifts)), np.full(len(shifts), delta)]
    c = np.r_[[cost(i) for i in range(-K, K + 1)], np.zeros(nv - m)]
    a_eq = sparse.csr_matrix(np.r_[np.ones(m), np.zeros(nv - m)][None, :])
    res = optimize.linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=(0, None),
                           method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def equation9_l1(quick: bool = False) -> Outcome:
    """Proof of Theorem 4: the discretised cost ℒ̃_N meets condition (9) with Δ̃ = N "when
    N >= a + 2" (the bracket of (9) is 2N − 4 for every i).  Checked in 40-digit arithmetic:
    the bracket identity, and (9) at the smallest integer N >= a + 2 over ε and n."""
    mpmath.mp.dps = 40
    worst, bracket_err = None, mpmath.mpf(0)
    for eps in (0.1, 0.5, 1.0, 2.0, 5.0):
        for n in (2, 3, 7):
            a, _, _ = lemma2_constants(eps, n)
            N = math.ceil(a + 2)
            for i in range(1, n):  # 2(2iN − 1) − (2(1 + (i−1)N) − 1) − (2(1 + iN) − 1) = 2N − 4
                br = 2 * (2 * i * N - 1) - (2 * (1 + (i - 1) * N) - 1) - (2 * (1 + i * N) - 1)
                bracket_err = max(bracket_err, abs(mpmath.mpf(br - (2 * N - 4))))
            bm = mpmath.exp(-mpmath.mpf(eps))
            margin = (sum(bm**i for i in range(1, n)) * (2 * N - 4) - 1) / (2 * N)
            if worst is None or margin < worst[0]:
                worst = (margin, eps, n, N, a)
    assert worst is not None
    m, eps, n, N, a = worst
    need = 2 + a / (1 - 2 * a)
    return Outcome(bracket_err == 0 and m >= 0,
                   f"bracket 2N − 4 exact; smallest margin of (9) at N = ceil(a + 2): "
                   f"{float(m):.4f} (ε = {eps}, n = {n}, N = {N}, a = {a:.5f}; (9) needs "
                   f"N >= 2 + a/(1 − 2a) = {need:.3f})")


def equation9_l2(quick: bool = False) -> Outcome:
    """Proof of Theorem 5: for the squared cost the bracket of (9) is
    Δ²((8i − 4)N² − 16iN + 4N)/(4N²), and (9) holds for N large enough.  Checked: the
    bracket identity in integers, and (9) itself from the smallest N found on up to N = 400."""
    worst_n, bracket_ok = 0, True
    for eps in (0.1, 1.0, 5.0):
        for n in (2, 3, 7):
            _, b, _ = lemma2_constants(eps, n)
            for N in (1, 2, 5, 17):
                for i in range(1, n):
                    br = (2 * (2 * i * N - 1) ** 2 - (2 * (1 + (i - 1) * N) - 1) ** 2
                          - (2 * (1 + i * N) - 1) ** 2)
                    bracket_ok &= br == (8 * i - 4) * N * N - 16 * i * N + 4 * N
            ok = [condition9_margin(discretised_cost(N, 2), b, n, N) >= 0
                  for N in range(1, 401)]
            first = ok.index(True) + 1 if True in ok else math.inf
            if not all(ok[int(first) - 1:]):
                return Outcome(False, f"ε = {eps}, n = {n}: (9) fails again above N = {first}")
            worst_n = max(worst_n, first)
    return Outcome(bracket_ok and worst_n < 400,
                   f"bracket identity {'exact' if bracket_ok else 'wrong'}; (9) holds for all "
                   f"N >= {worst_n} at every (ε, n) of the grid")


_LP_POINTS = ((1.0, 3, 4), (0.5, 4, 3), (2.0, 2, 8), (1.0, 2, 6))


def equation10(quick: bool = False) -> Outcome:
    """Lemma 2, eq. 10: every noise P meeting (8) with Δ̃ = N, under a cost meeting (9), has
    Σ ℒ(i)P(i) >= 2 Σ_{k<n} a b^k ℒ(1 + kN).  Checked for the discretised costs of Theorems
    4-5 (where (9) holds) by the linear programme over all noises on {−(n+2)N..(n+2)N}."""
    points = _LP_POINTS[:2] if quick else _LP_POINTS
    lo = math.inf
    for eps, n, N in points:
        a, b, delta = lemma2_constants(eps, n)
        for power in (1, 2):
            cost = discretised_cost(N, power)
            if condition9_margin(cost, b, n, N) < 0:
                return Outcome(False, f"ε = {eps}, n = {n}, N = {N}: (9) fails; bad point")
            bound = 2 * sum(a * b**k * cost(1 + k * N) for k in range(n))
            lo = min(lo, smallest_cost(cost, eps, delta, N, (n + 2) * N) / bound)
    return Outcome(lo >= 1 - 1e-9, f"smallest ratio of the LP minimum to the bound (10): "
                                   f"{lo:.4f} over {len(points)} (ε, n, N) points, both costs")
