"""Exact rational mathematics of the count-query noise family (Sadeghi et al. 2020).

Implements P. Sadeghi, S. Asoodeh, F. du Pin Calmon, "Differentially Private Mechanisms for
Count Queries", arXiv:2007.09374, 2020 (eq. 14, Lemmas 1-2, Theorem 2, Definition 2).

The data-independent symmetric family (paper eq. 14) with D ∈ ℕ and η ∈ (0, 1)::

    p(0) = η,   p(±i) = α_i·h  (i ∈ [1:D]),   h = (1 − η)/2,   α_i >= 0,  Σ α_i = 1.

Everything here is exact ``fractions.Fraction`` arithmetic at a rational ``E`` (in the
library ``E = E_lo <= e^ε``, see :func:`dpnoise.exact.rational.exp_lower`).  Notation (the
paper's, plus the sums): ``B = 1/h``, ``C = η/h``, ``S_k = Σ_{j<=k} E^j``,
``T_k = Σ_{j<=k} (j+1)E^j``,
``W_k = Σ_{j<k} (k−j)E^j`` -- computed as sums, never with ``(E^{k+1}−1)/(E−1)``.

* :func:`paper_alpha` -- Theorem 2 / Definition 2 (eqs. 37–39): regime k, δ̃ (the paper's
  δ*, a *singular-event* quantity) and the α*.  Raises :class:`ThmThreeError` in the region
  where Theorem 3 is false (type II, D >= 2, C < S_{D−2}/W_D): there the pmf of
  Definition 2 violates the omitted constraint (19′) and is far from optimal.
* :func:`geometric_alpha` -- truncated geometric α_i ∝ E^{−(i−1)} (not in
  the paper).
* :func:`lp_alpha` -- the α minimising the exact hockey-stick δ over family (14) by a
  column-scaled HiGHS LP; the result is turned into exact rationals and the best of
  {LP, geometric, paper} (by exact δ) is returned, so a solver inaccuracy can only cost
  optimality, never correctness.
* :func:`hockey_delta` -- the exact DP δ of an additive integer pmf for neighbours at
  distance 1, both directions:  max over the two orders of
  Σ_z [p(z) − E p(z−1)]^+.  It equals the maximum over all output sets S.
* :func:`pointwise_delta` -- the paper's singular-event δ of a pmf (NOT a DP δ).

References:
  * P. Sadeghi, S. Asoodeh, F. du Pin Calmon, "Differentially Private Mechanisms for Count
    Queries", arXiv:2007.09374, 2020.

Errata of the paper, each explained: docs/papers.md#errata-count-noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import lcm

import numpy as np

from ..errors import ParameterError

Q = Fraction


class ThmThreeError(ParameterError):
    """The paper's α* (Definition 2) is invalid here: Theorem 3 fails."""


@dataclass(frozen=True)
class Sums:
    """S_k, T_k (k = 0..D) and W_k (k = 0..D) at E, exact."""

    E: Fraction
    S: tuple[Fraction, ...]
    T: tuple[Fraction, ...]
    W: tuple[Fraction, ...]

    def s(self, k: int) -> Fraction:
        """S_k with S_{-1} = 0."""
        return Q(0) if k < 0 else self.S[k]

    def t(self, k: int) -> Fraction:
        return Q(0) if k < 0 else self.T[k]


@lru_cache(maxsize=64)
def sums(E: Fraction, D: int) -> Sums:
    """S_k, T_k, W_k for k in [0:D] (exact; cached per process by the public (E, D): the
    calibration of η evaluates δ at ~11 values of η with the same E and D)."""
    return _sums(E, D)


def _sums(E: Fraction, D: int) -> Sums:
    powers = [Q(1)]
    for _ in range(D):
        powers.append(powers[-1] * E)
    S, T = [], []
    s = t = Q(0)
    for j in range(D + 1):
        s += powers[j]
        t += (j + 1) * powers[j]
        S.append(s)
        T.append(t)
    # W_k = Σ_{j<k} (k − j) E^j = Σ_{j<k} S_j  (each E^j counted k − j times)
    W = [Q(0)]
    for k in range(1, D + 1):
        W.append(W[-1] + S[k - 1])
    return Sums(E, tuple(S), tuple(T), tuple(W))


def crossovers(sm: Sums, D: int) -> list[Fraction]:
    """C_k = S_k / W_k for k ∈ [1:D] (eq. 34), strictly decreasing (eq. 36)."""
    return [sm.S[k] / sm.W[k] for k in range(1, D + 1)]


@lru_cache(maxsize=64)
def _crossovers(E: Fraction, D: int) -> tuple[Fraction, ...]:
    """:func:`crossovers` of ``sums(E, D)``, cached per process like :func:`sums`."""
    return tuple(crossovers(sums(E, D), D))


@dataclass(frozen=True)
class PaperSolution:
    """Definition 2: regime k (D+1 = type II), δ̃ = max_k δ_k, and α*_1..α*_D."""

    k: int
    delta_tilde: Fraction
    alpha: tuple[Fraction, ...]
    crossovers: tuple[Fraction, ...]
    eta_bad: Fraction  # Theorem 3 fails for η below this (type II only); 0 if D < 2


def eta_from_c(C: Fraction) -> Fraction:
    """Invert C = 2η/(1 − η):  η = C/(2 + C)."""
    return C / (2 + C)


def eta_bad(E: Fraction, D: int) -> Fraction:
    """η_bad = c/(2 + c), c = S_{D−2}/W_D (Theorem 3 status); 0 for D < 2."""
    if D < 2:
        return Q(0)
    sm = sums(E, D)
    return eta_from_c(sm.S[D - 2] / sm.W[D])


def paper_alpha(E: Fraction, eta: Fraction, D: int, *, check: bool = True) -> PaperSolution:
    """Theorem 2 + Definition 2 in exact arithmetic, with the validity gate."""
    h = (1 - eta) / 2
    B = 1 / h
    C = eta / h
    sm = sums(E, D)
    ck = _crossovers(E, D)
    k = next((i + 1 for i, c in enumerate(ck) if c < C), D + 1)
    bad = eta_from_c(sm.S[D - 2] / sm.W[D]) if D >= 2 else Q(0)
    if k == D + 1:
        dt = h / sm.W[D]
        alpha = [sm.S[D - j] / sm.W[D] for j in range(1, D + 1)]
        if check and D >= 2 and alpha[1] > C:
            raise ThmThreeError(
                f"eta={float(eta):.6g} is below eta_bad={float(bad):.6g} for D={D} at this "
                "epsilon: the paper's Definition-2 noise is invalid there (Theorem 3 fails, "
                "the paper's Prop. 4 omits constraint (19'); its exact delta is far above the "
                "paper's bound). Use "
                "CountNoise.optimal(...) / method='optimal' or 'geometric', or a larger eta"
            )
    else:
        Ek = E**k
        dt = (eta * sm.s(k - 1) - h * Ek) / sm.t(k - 1)
        alpha = []
        Ej = Q(1)
        for j in range(1, D + 1):
            Ej *= E
            alpha.append((C - B * dt * sm.s(j - 1)) / Ej if j <= k else Q(0))
    if any(a < 0 for a in alpha) or exact_sum(alpha) != 1:
        raise AssertionError("Definition 2 produced an invalid alpha")  # pragma: no cover
    return PaperSolution(k, dt, tuple(alpha), tuple(ck), bad)


def geometric_alpha(E: Fraction, D: int) -> tuple[Fraction, ...]:
    """Truncated geometric α_i = E^{−(i−1)}(1 − 1/E)/(1 − E^{−D}) (exact; uniform if E = 1)."""
    w = [Q(1)]
    for _ in range(D - 1):
        w.append(w[-1] / E)
    s = sum(w)
    return tuple(x / s for x in w)


def pmf_from_alpha(eta: Fraction, alpha: Sequence[Fraction]) -> list[Fraction]:
    """p(z) for z = −D..D (list index z + D)."""
    h = (1 - eta) / 2
    side = [a * h for a in alpha]
    pmf = [*side[::-1], eta, *side]
    if exact_sum(pmf) != 1:
        raise AssertionError("pmf does not sum to 1")  # pragma: no cover
    return pmf


def exact_sum(values: Sequence[Fraction]) -> Fraction:
    """Σ values, exactly: over one common denominator, normalised once (the same Fraction as
    ``sum(values)``, which normalises after every addition)."""
    den = lcm(*(v.denominator for v in values)) if values else 1
    return Q(sum(v.numerator * (den // v.denominator) for v in values), den)


def _one_way(p: Sequence[int], e_num: int, e_den: int, shift: int) -> int:
    """Σ_y [e_den·p(y) − e_num·p(y − shift)]^+ for integer numerators p on consecutive
    integers (index y): the one-way hockey-stick sum times e_den and p's denominator."""
    n = len(p)
    tot = 0
    for y in range(min(0, shift), n + max(0, shift)):
        a = p[y] if 0 <= y < n else 0
        j = y - shift
        b = p[j] if 0 <= j < n else 0
        d = e_den * a - e_num * b
        if d > 0:
            tot += d
    return tot


def hockey_delta(p: Sequence[Fraction | int], E: Fraction, denominator: int = 1) -> Fraction:
    """Exact DP δ at E for neighbours n, n±1 of the additive noise p (both directions).

    ``p`` holds the pmf on consecutive integers (any offset); with ``denominator`` the
    entries are numerators (e.g. 64-bit weights over 2^64).  Computed in integers over
    one common denominator D (p(y) = N_y/D, E = e/f): Σ [p(y) − E p(y∓1)]^+ is
    Σ [f N_y − e N_{y∓1}]^+ / (f D) exactly -- the same Fraction as in rational arithmetic.
    """
    pf = [Q(x) for x in p]
    den = lcm(*(v.denominator for v in pf)) * denominator if pf else denominator
    nums = [v.numerator * (den // (v.denominator * denominator)) for v in pf]
    E = Q(E)
    e_num, e_den = E.numerator, E.denominator
    best = max(_one_way(nums, e_num, e_den, 1), _one_way(nums, e_num, e_den, -1))
    return Q(best, e_den * den)


def pointwise_delta(p: Sequence[Fraction], E: Fraction) -> Fraction:
    """The paper's singular-event δ: max_y [p(y) − E p(y∓1)]^+ (not a DP δ)."""
    n = len(p)
    best = Q(0)
    for y in range(-1, n + 1):
        a = p[y] if 0 <= y < n else 0
        for j in (y - 1, y + 1):
            b = p[j] if 0 <= j < n else 0
            best = max(best, a - E * b)
    return best


def hockey_geometric(E: Fraction, eta: Fraction, D: int) -> Fraction:
    """Closed form of the truncated geometric's δ, for cross-checks."""
    h = (1 - eta) / 2
    a = geometric_alpha(E, D)
    return h * a[-1] + max(Q(0), eta - E * h * a[0]) + max(Q(0), h * a[0] - E * eta)


# --------------------------------------------------------------------- the LP
def _lp_float(E: float, eta: float, D: int, target: float | None = None) -> np.ndarray | None:
    """HiGHS LP over family (14).

    Without ``target``: minimise δ_HS over α (variables γ_i = α_i E^{i−1}, i.e. columns
    scaled).  With ``target``: maximise η subject to δ_HS <= target
    over (η, β_i = p(i)) -- returns [η, β_1..β_D].

    Long on purpose: the two linear programs share one constraint builder and differ only in
    their objective and variables; splitting them would duplicate the builder.
    """
    from scipy.optimize import linprog

    if target is None:
        h = (1 - eta) / 2
        # α_i = γ_i s_i with s_i = E^{-(i-1)}; p(i) = h s_i γ_i
        s = E ** -np.arange(D, dtype=float)
        nv = D + (2 * D + 1)
        rows, rhs = [], []

        def term(coef: dict[int, float], const: float, tix: int) -> None:
            # t_tix >= Σ coef·γ + const  ->  Σ coef·γ − t <= −const
            r = np.zeros(nv)
            for i, c in coef.items():
                r[i] += c
            r[D + tix] = -1.0
            rows.append(r)
            rhs.append(-const)

        ti = 0
        term({D - 1: h * s[D - 1]}, 0.0, ti)  # z = −D (and D + 1 the other way)
        ti += 1
        for i in range(D - 1):  # h α_i − E h α_{i+1} and h α_{i+1} − E h α_i
            term({i: h * s[i], i + 1: -E * h * s[i + 1]}, 0.0, ti)
            ti += 1
            term({i + 1: h * s[i + 1], i: -E * h * s[i]}, 0.0, ti)
            ti += 1
        term({0: -E * h * s[0]}, eta, ti)  # η − E h α_1
        ti += 1
        term({0: h * s[0]}, -E * eta, ti)  # h α_1 − E η
        ti += 1
        c = np.concatenate([np.zeros(D), np.ones(2 * D + 1)])
        a_eq = np.concatenate([s, np.zeros(2 * D + 1)])[None, :]
        opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
        res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), A_eq=a_eq, b_eq=[1.0],
                      bounds=[(0, None)] * nv, method="highs", options=opts)
        if not res.success:
            return None
        return np.maximum(res.x[:D], 0.0) * s
    # maximise η: variables [η, β_1..β_D, t_0..t_2D]
    nv = 1 + D + 2 * D + 1
    rows, rhs = [], []

    def term2(coef: dict[int, float], tix: int) -> None:
        r = np.zeros(nv)
        for i, cval in coef.items():
            r[i] += cval
        r[1 + D + tix] = -1.0
        rows.append(r)
        rhs.append(0.0)

    ti = 0
    term2({D: 1.0}, ti)
    ti += 1
    for i in range(1, D):
        term2({i: 1.0, i + 1: -E}, ti)
        ti += 1
        term2({i + 1: 1.0, i: -E}, ti)
        ti += 1
    term2({0: 1.0, 1: -E}, ti)
    ti += 1
    term2({1: 1.0, 0: -E}, ti)
    r = np.zeros(nv)
    r[1 + D :] = 1.0
    rows.append(r)
    rhs.append(target)
    c = np.zeros(nv)
    c[0] = -1.0
    a_eq = np.zeros((1, nv))
    a_eq[0, 0] = 1.0
    a_eq[0, 1 : 1 + D] = 2.0
    opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), A_eq=a_eq, b_eq=[1.0],
                  bounds=[(0, 1)] * (1 + D) + [(0, None)] * (2 * D + 1), method="highs",
                  options=opts)
    if not res.success:
        return None
    return res.x[: 1 + D]


def exact_alpha_from_float(x: Sequence[float]) -> tuple[Fraction, ...] | None:
    """Exact rationals from solver output: clip at 0, take binary values, renormalise."""
    vals = [Q(max(0.0, float(v))) for v in x]
    s = sum(vals)
    if s <= 0:
        return None
    return tuple(v / s for v in vals)


def lp_alpha(E: Fraction, eta: Fraction, D: int) -> tuple[tuple[Fraction, ...], str]:
    """α minimising the exact δ_HS over family (14): best (exact) of LP, geometric, paper."""
    cands: list[tuple[Fraction, tuple[Fraction, ...], str]] = []
    geo = geometric_alpha(E, D)
    cands.append((hockey_delta(pmf_from_alpha(eta, geo), E), geo, "geometric"))
    try:
        pa = paper_alpha(E, eta, D).alpha
        cands.append((hockey_delta(pmf_from_alpha(eta, pa), E), pa, "paper"))
    except ThmThreeError:
        pass
    x = _lp_float(float(E), float(eta), D)
    if x is not None:
        lp = exact_alpha_from_float(x)
        if lp is not None:
            cands.append((hockey_delta(pmf_from_alpha(eta, lp), E), lp, "lp"))
    best = min(cands, key=lambda c: c[0])
    return best[1], best[2]
