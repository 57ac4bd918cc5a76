"""Checks of W. L. Croft, J.-R. Sack, W. Shi, "Differential privacy via a truncated and
normalized Laplace mechanism", Journal of Computer Science and Technology 37(2):369-388,
2022 (register: docs/claims/range_laplace.toml).  Each returns whether the statement holds
as printed."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...laws.range_laplace import (
    eps_metric,
    eps_std_union,
    paper_boundary_scale,
    paper_half_line_scale_unsafe,
    sigma_metric,
    sigma_std,
)
from ..range_laplace import SIGMA_T, SPEC_TABLE, motivating_rows, v1_rows
from . import Outcome

INF = math.inf


def motivating_example(quick: bool = False) -> Outcome:
    """Section 3.6 (formulas 22-24): with the usual scale σ = ΔF/ε on a half-line, a true
    value on the border against one i·ΔF away needs 2e^(iε) − 1 <= e^(iε), which fails for
    every i > 0: the naive truncated, normalised Laplace is not ε-DP."""
    rows = motivating_rows()
    ok = all(r[-1] and r[6] > r[7] for r in rows)
    return Outcome(ok, "; ".join(f"ε = {r[0]}, i = {r[1]}: loss {r[6]:.6f} > {r[7]}"
                                 for r in rows[:3]))


def theorem1(quick: bool = False) -> Outcome:
    """Section 4.1, Theorem 1: the data-dependent scale of Lemma 2 (formulas 32-33) optimally
    satisfies the privacy guarantee for a single infinite constraint."""
    rows = v1_rows()
    worst = max(r[2] for r in rows)
    return Outcome(worst <= 1.0 + 1e-9, "ε = ΔF = 1; worst loss over outputs in [−M, 0]: "
                   + ", ".join(f"M = {r[0]}: {r[2]:.3f}" for r in rows[::2]))


def table2_sigma1(quick: bool = False) -> Outcome:
    """Table 2 and formula 32: σ1 ≈ 1.586 ΔF/ε for a value on the border."""
    s = paper_boundary_scale(1, 1)
    return Outcome(round(s, 3) == 1.586, f"σ1 = {s:.12f} ΔF/ε")


def table2_sigma2(quick: bool = False) -> Outcome:
    """Table 2, formula 33 and Lemmas 3-6: σ2 < 1.586 ΔF/ε away from the border, decreasing
    with the distance to it (towards ΔF/ε)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = np.array([0.01, *[x for x, _ in SIGMA_T[1:]]])
        s = np.asarray(paper_half_line_scale_unsafe(list(t), 1, 1), dtype=float)
    ok = bool(np.all(s < 1.586) and np.all(np.diff(s) < 0) and s[-1] > 1.0)
    return Outcome(ok, "σ(t) at t = " + ", ".join(f"{a:g}: {b:.6f}" for a, b in zip(t, s,
                                                                                   strict=True)))


def theorem2_metric(quick: bool = False) -> Outcome:
    """Theorem 2 (Section 4.2): the maximum of the 3n + 2 lower bounds is the smallest uniform
    σ meeting the generalized guarantee (13) for finite constraints."""
    rows = []
    for case, S, d, eps, *_ in SPEC_TABLE:
        if case.startswith("F"):
            m = sigma_metric(S, d, eps)
            rows.append((case, eps, eps_metric(S, d, m), eps_metric(S, d, 0.999 * m)))
    ok = all(abs(at - e) < 1e-6 and below > e for _, e, at, below in rows)
    return Outcome(ok, "; ".join(f"{c}: loss {a:.6f} at σ, {b:.6f} at 0.999σ (ε = {e})"
                                 for c, e, a, b in rows))


def optimal_for_dp(quick: bool = False) -> Outcome:
    """Abstract, Sections 4.2-4.4: the σ found is the optimal (smallest) scale that gives the
    differential privacy guarantee."""
    gaps = []
    for case, S, d, eps, *_ in SPEC_TABLE:
        gaps.append((case, sigma_std(S, d, eps), sigma_metric(S, d, eps)))
    smaller = [(c, a, b) for c, a, b in gaps if a < b * (1 - 1e-3)]
    worst = min(gaps, key=lambda g: g[1] / g[2])
    return Outcome(not smaller, f"{len(smaller)} of {len(gaps)} cases have a smaller ε-DP "
                   f"scale; e.g. {worst[0]}: {worst[1]:.4f} vs {worst[2]:.4f}")


def lemma10_bound(quick: bool = False) -> Outcome:
    """Lemma 10 and Table 2: every lower bound, hence σ, is below 2ΔF/ε (at most 2ΔF/ε with
    infinite constraints)."""
    rows = [(case, sigma_metric(S, d, eps) * eps / d) for case, S, d, eps, *_ in SPEC_TABLE]
    ok = all(r <= 2 + 1e-12 for _, r in rows)
    return Outcome(ok, "σ·ε/ΔF: " + ", ".join(f"{c} {r:.4f}" for c, r in rows[:8]))


def uniform_scale_is_dp(quick: bool = False) -> Outcome:
    """Section 4.3 and Table 2: the uniform σ found for arbitrary constraints (intervals,
    half-lines, unions) gives ε-DP."""
    rows = []
    for case, S, d, eps, *_ in SPEC_TABLE:
        if case[0] in "IHU":
            rows.append((case, eps, eps_std_union(S, d, sigma_metric(S, d, eps))))
    ok = all(loss <= e + 1e-9 for _, e, loss in rows)
    return Outcome(ok, "; ".join(f"{c}: {loss:.5f} <= {e}" for c, e, loss in rows[:6]))
