"""Checks of the numbered equations (4), (14) and (17)-(45) of P. Sadeghi, S. Asoodeh,
F. du Pin Calmon, "Differentially Private Mechanisms for Count Queries", arXiv:2007.09374, 2020
(register: docs/claims/count_noise.toml).

Everything is exact rational arithmetic (``fractions.Fraction``) at rational E standing for
e^ε, so "equal" means equal.  Each equation is evaluated as printed and compared with an
independent meaning of it: the singular-event δ of the pmf (a maximum over outputs), the
chain of (20)-(22) held with equality, the regime of Theorem 2, the solution of
:func:`dpnoise.laws.count_noise.paper_alpha`, a direct hockey-stick sum.  :func:`equation`
dispatches on the number.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from fractions import Fraction as Q

import numpy as np

from ...laws import count_noise as cf
from ...laws import discrete_gaussian as dga
from . import Outcome

#: (E, η, D) cells: rational E, both regimes of Theorem 2
CELLS = [(Q(3), Q(1, 2), 4), (Q(5, 2), Q(4, 5), 6), (Q(2), Q(1, 10), 5), (Q(9), Q(4, 5), 6),
         (Q(3, 2), Q(3, 10), 3), (Q(88463, 10000), Q(4, 5), 6), (Q(3), Q(9, 10), 5),
         (Q(2), Q(3, 5), 4), (Q(3, 2), Q(9, 10), 6)]


def _bc(eta: Q) -> tuple[Q, Q, Q]:
    h = (1 - eta) / 2
    return h, 1 / h, eta / h


def _random_alpha(rng: random.Random, D: int) -> list[Q]:
    w = [Q(rng.randint(0, 50)) for _ in range(D)]
    w[0] += 1
    return [x / sum(w) for x in w]


def chain(E: Q, eta: Q, D: int, k: int, delta: Q) -> list[Q]:
    """(22) and (21) held with equality for j <= k, zero after: α1 = (C − Bδ)/E,
    α_j = (α_{j−1} − Bδ)/E."""
    _, B, C = _bc(eta)
    a = [(C - B * delta) / E]
    for _ in range(1, k):
        a.append((a[-1] - B * delta) / E)
    return a + [Q(0)] * (D - k)


def delta_k(E: Q, eta: Q, k: int) -> Q:
    """(23) as printed: (C Σ_{j<k} E^j − E^k)/(B Σ_{j<k} E^j (j + 1))."""
    _, B, C = _bc(eta)
    return (C * sum(E**j for j in range(k)) - E**k) / (B * sum(E**j * (j + 1) for j in range(k)))


def _result(failures: list[str], n: int, what: str) -> Outcome:
    return Outcome(not failures, f"{n} cases exact; {what}" if not failures
                   else "; ".join(failures[:3]))


def eq4(quick: bool) -> Outcome:
    """(4): with η = 1/2, (2) gives p^(−1,1)(·|1) = (1/4, 1/2, 1/4) and
    p^(−1,2)(·|1) = (1/3 at −1, 1/2 at 0, 1/6 at 2); each has mean 0."""
    def p2(i1: int, i2: int, eta: Q) -> dict[int, Q]:
        nb = 1 - eta
        return {i1: nb * i2 / (i2 + abs(i1)), 0: eta, i2: nb * abs(i1) / (i2 + abs(i1))}
    a, b = p2(-1, 1, Q(1, 2)), p2(-1, 2, Q(1, 2))
    ok = (a == {-1: Q(1, 4), 0: Q(1, 2), 1: Q(1, 4)}
          and b == {-1: Q(1, 3), 0: Q(1, 2), 2: Q(1, 6)}
          and all(sum(z * p for z, p in d.items()) == 0 and sum(d.values()) == 1
                  for d in (a, b)))
    return Outcome(ok, f"p(−1,1) = {a}, p(−1,2) = {b}")


def eq14(quick: bool) -> Outcome:
    """(14): p(±i) = α_i η̄/2, p(0) = η is a pmf for every α on the simplex."""
    rng = random.Random(14)
    bad = []
    for _, eta, D in CELLS:
        alpha = _random_alpha(rng, D)
        p = cf.pmf_from_alpha(eta, alpha)
        if sum(p) != 1 or p[D] != eta or p[D + 1] != alpha[0] * (1 - eta) / 2:
            bad.append(f"η = {eta}, D = {D}")
    return _result(bad, len(CELLS), "Σ p = 1")


def eq17_19(number: int, quick: bool) -> Outcome:
    """(17)/(18)/(19): each is a necessary condition on the singular-event δ* of pmf (14):
    it holds with δ* = max_y [p(y) − E p(y ∓ 1)]^+ for random α."""
    rng = random.Random(number)
    bad = []
    n = 0
    for E, eta, D in CELLS:
        h, _, _ = _bc(eta)
        for _ in range(3 if quick else 20):
            a = _random_alpha(rng, D)
            d = cf.pointwise_delta(cf.pmf_from_alpha(eta, a), E)
            checks = {17: [h * a[D - 1] <= d],
                      18: [h * a[i] <= E * h * a[i + 1] + d for i in range(D - 1)],
                      19: [eta <= E * h * a[0] + d]}[number]
            n += 1
            if not all(checks):
                bad.append(f"E = {E}, η = {eta}, α = {a}")
    return _result(bad, n, "the printed inequality holds at the singular-event δ")


def eq20_22(number: int, quick: bool) -> Outcome:
    """(20)/(21)/(22) are (17)/(18)/(19) divided by h = η̄/2 (B = 1/h, C = η/h): the two
    sides agree on random (α, δ)."""
    rng = random.Random(number)
    bad, n = [], 0
    for E, eta, D in CELLS:
        h, B, C = _bc(eta)
        for _ in range(5 if quick else 40):
            a = _random_alpha(rng, D)
            d = Q(rng.randint(0, 40), 400)
            if number == 20:
                pairs = [(h * a[D - 1] <= d, a[D - 1] <= B * d)]
            elif number == 21:
                pairs = [(h * a[i] <= E * h * a[i + 1] + d, a[i + 1] >= (a[i] - B * d) / E)
                         for i in range(D - 1)]
            else:
                pairs = [(eta <= E * h * a[0] + d, a[0] >= (C - B * d) / E)]
            n += 1
            if any(x != y for x, y in pairs):
                bad.append(f"E = {E}, η = {eta}, δ = {d}")
    return _result(bad, n, "the two forms agree")


def eq23_31(number: int, quick: bool) -> Outcome:
    """(23)-(31), Lemmas 1-2: the chain of (21)-(22) held with equality up to k sums to 1
    exactly at δ = δ_k of (23) (δ_1 for (24), δ_2 for (25)-(26)); the intermediate
    inequalities (28)-(31) hold with equality on that chain."""
    bad, n = [], 0
    for E, eta, D in CELLS:
        _, B, C = _bc(eta)
        for k in range(1, D + 1):
            if (number in (24,) and k != 1) or (number in (25, 26) and k != 2):
                continue
            if number in (27, 28, 29, 30, 31) and k < 3:
                continue
            d = delta_k(E, eta, k)
            a = chain(E, eta, D, k, d)
            s = sum(E**j for j in range(k))
            t2 = sum(E**j * (j + 1) for j in range(k - 1))
            ok = {23: sum(a) == 1,
                  24: d == (C - E) / B and sum(a) == 1,
                  25: sum(a) == 1 and a[1] == (a[0] - B * d) / E,
                  26: (C - B * d) / E * (1 + E) - E == B * d,
                  27: a[k - 1] == 1 - sum(a[: k - 1]),
                  28: a[k - 2] * (1 + E) + E * sum(a[: k - 2]) - E == B * d,
                  29: a[k - 3] * (1 + E + E**2) + E**2 * sum(a[: k - 3]) - E**2
                  == B * (1 + 2 * E) * d,
                  30: a[0] * s - E ** (k - 1) == B * d * t2,
                  31: (C - B * d) / E * s - E ** (k - 1) == B * d * t2}[number]
            n += 1
            if not ok:
                bad.append(f"E = {E}, η = {eta}, k = {k}")
    return _result(bad, n, "equality on the chain at δ_k")


def eq32_33(number: int, quick: bool) -> Outcome:
    """(32)-(33): with α_D = Bδ and (21) held with equality upwards, α_{D−k} = Bδ S_k and
    the α sum to 1 exactly at δ_{D+1} = 1/(B Σ_{j<D} E^j (D − j))."""
    bad, n = [], 0
    for E, eta, D in CELLS:
        _, B, _ = _bc(eta)
        d = 1 / (B * sum(E**j * (D - j) for j in range(D)))
        a = [B * d * sum(E**j for j in range(k + 1)) for k in range(D)]  # α_D, α_{D−1}, ...
        ok = sum(a) == 1 if number == 32 else all(
            a[k + 1] == E * a[k] + B * d for k in range(D - 1))
        n += 1
        if not ok:
            bad.append(f"E = {E}, D = {D}")
    return _result(bad, n, "Σα = 1 at δ_{D+1}" if number == 32 else "(21) tight upwards")


def eq34_35(number: int, quick: bool) -> Outcome:
    """(34): C_k = S_k/W_k is where δ_k = δ_{k+1} (the regime boundary of Theorem 2);
    (35): δ_1 >= δ_2 exactly when C >= C_1 = 1 + E."""
    bad, n = [], 0
    for E, _, D in CELLS:
        sm = cf.sums(E, D)
        for k in range(1, D):
            ck = sm.S[k] / sm.W[k]
            eta = cf.eta_from_c(ck)
            if number == 34:
                ok = delta_k(E, eta, k) == delta_k(E, eta, k + 1)
            else:
                ok = all((delta_k(E, cf.eta_from_c(c), 1) >= delta_k(E, cf.eta_from_c(c), 2))
                         == (c >= 1 + E) for c in (E, 1 + E, 2 + E, E / 2, 3 * E))
            n += 1
            if not ok:
                bad.append(f"E = {E}, k = {k}")
    return _result(bad, n, "δ_k = δ_{k+1} at C_k" if number == 34 else "sign agrees")


def eq37_44(number: int, quick: bool) -> Outcome:
    """(37)-(44), Definition 2 and Theorem 2's proof: the closed forms of α* as printed equal
    :func:`~dpnoise.laws.count_noise.paper_alpha` and satisfy the stated signs and sum."""
    bad, n = [], 0
    for E, eta, D in CELLS:
        sol = cf.paper_alpha(E, eta, D, check=False)
        _, B, C = _bc(eta)
        sm = cf.sums(E, D)
        a, k, dt = list(sol.alpha), sol.k, sol.delta_tilde
        type2 = k == D + 1
        if (number in (37, 38) and not type2) or (number in (39, 40, 41, 42, 43) and type2):
            continue
        if number == 37:
            ok = a[D - 1] == B * dt == 1 / sm.W[D]
        elif number == 38:
            ok = all(a[j - 1] == E * a[j] + B * dt == sm.S[D - j] / sm.W[D] for j in range(1, D))
        elif number == 39:
            ok = a[0] == (C - B * dt) / E and all(a[j] == (a[j - 1] - B * dt) / E
                                                  for j in range(1, k))
        elif number == 40:
            ok = a[0] == (C * sm.t(k - 2) + E ** (k - 1)) / sm.T[k - 1] and a[0] > 0
        elif number in (41, 42):
            ok = a[k - 1] == (sm.S[k - 1] - C * sm.W[k - 1]) / sm.T[k - 1]
        elif number == 43:
            ok = a[k - 1] >= 0 and (k < 2 or sm.S[k - 1] / sm.W[k - 1] >= C)
        else:
            ok = sum(a[:k] if not type2 else a) == 1
        n += 1
        if not ok:
            bad.append(f"E = {E}, η = {eta}, D = {D} (k = {k})")
    return _result(bad, n, "closed forms equal Definition 2's α*")


def eq45(quick: bool) -> Outcome:
    """(45), from Canonne, Kamath, Steinke (Theorem 7): the discrete Gaussian's δ at ε is
    P(Z > εσ² − 1/2) − e^ε P(Z > εσ² + 1/2); compared with the hockey-stick sum of its pmf."""
    rows = []
    for s2, eps in ((0.2660156, 2.18), (1.0, 1.0), (4.0, 0.5), (0.5, 3.0)):
        z = np.arange(-60, 61)
        p = np.asarray(dga.pmf(z, s2), dtype=float)
        direct = float(np.sum(np.maximum(p[1:] - math.exp(eps) * p[:-1], 0.0)))
        printed = float(p[z > eps * s2 - 0.5].sum()) \
            - math.exp(eps) * float(p[z > eps * s2 + 0.5].sum())
        rows.append((s2, eps, printed, direct))
    ok = all(abs(a - b) <= 1e-12 + 1e-9 * b for *_, a, b in rows)
    return Outcome(ok, "; ".join(f"σ² = {s}, ε = {e}: {a:.6g} vs {b:.6g}" for s, e, a, b in rows))


_SINGLE: dict[int, Callable[[bool], Outcome]] = {4: eq4, 14: eq14, 45: eq45}
_GROUPS: list[tuple[range, Callable[[int, bool], Outcome]]] = [
    (range(17, 20), eq17_19), (range(20, 23), eq20_22), (range(23, 32), eq23_31),
    (range(32, 34), eq32_33), (range(34, 36), eq34_35), (range(37, 45), eq37_44)]


def equation(number: int, quick: bool = False) -> Outcome:
    """The check of equation ``number`` of the paper."""
    if number in _SINGLE:
        return _SINGLE[number](quick)
    for span, fn in _GROUPS:
        if number in span:
            return fn(number, quick)
    raise KeyError(f"no check for equation ({number})")
