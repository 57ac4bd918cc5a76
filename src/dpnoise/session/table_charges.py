"""zCDP ledgers written before the discrete Gaussian's alias table was refused under zCDP.

Such a ledger may hold releases charged ρ = Δ²/(2σ²) for ``DiscreteGaussian`` with its
default ``sampler="table"``: an alias table of dyadic-rounded probabilities on ±K, not the
infinite law N_ℤ(0, σ²).  A finite-support law has infinite Rényi divergence between
shifted neighbours, so the ρ recorded is not a zCDP guarantee for these releases.  What
still holds, and what ``dpnoise ledger verify`` and the report show for them:

**Total-variation argument.**  Let τ >= TV(table, N_ℤ(0, σ²)) (computed below).  Replace
the n table draws of the whole ledger one at a time by draws of the infinite law (a hybrid
argument: each swap changes the law of the joint output by at most τ in total variation),
so the joint output laws P̃_x of the ledger and P_x of the same releases with the infinite
law satisfy TV(P̃_x, P_x) <= T = n·τ for every data set x.  The recorded composition
(ρ and Rényi curves, which ARE valid for P) gives P_x(A) <= e^ε P_x'(A) + δ_zCDP(ε), so

    P̃_x(A) <= P_x(A) + T <= e^ε P_x'(A) + δ_zCDP(ε) + T <= e^ε P̃_x'(A) + δ_zCDP(ε) + (1 + e^ε)T:

the ledger is (ε, δ_zCDP(ε) + (1 + e^ε)·T)-DP at every ε.  τ is a few 2^-53 (the table is
the largest-remainder rounding of the pmf to 2^-64, cut where the rounded weights fall
below 4·2^-64).

Table charges are recognised from the plans the custodian session records with every
release (mechanism "discrete-gaussian" without ``sampler='cks'`` in its ``repr``);
charges reserved directly through :meth:`Ledger.reserve` record no plan and cannot be
recognised.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

U = 2.0**-53
_SIGMA2 = re.compile(r"sigma2=([0-9.eE+-]+)")


@lru_cache(maxsize=64)
def table_total_variation(sigma2: float) -> float:
    """τ >= TV(alias table, N_ℤ(0, σ²)), rounded up: Σ_{|z| <= K} |p̃(z) − p(z)| (float64,
    each term's error <= 4u(p̃ + p), so 16u in all) plus the ideal mass beyond ±K (a
    geometric bound: for |z| > K the ratio of consecutive terms is <= e^{−(K+1)/σ²})."""
    from ..exact.dg_table import dg_table
    from ..laws.discrete_gaussian import pmf

    table = dg_table(float(sigma2))
    z = np.arange(-table.K, table.K + 1, dtype=np.int64)
    ideal = np.asarray(pmf(z, float(sigma2)), dtype=np.float64)
    inside = math.fsum(np.abs(table.probs - ideal).tolist())
    p0 = float(np.asarray(pmf(np.array([0]), float(sigma2)))[0])
    K1 = table.K + 1
    beyond = 2 * p0 * math.exp(-K1 * K1 / (2 * sigma2)) / (-math.expm1(-K1 / sigma2))
    return min(1.0, (inside + beyond + 16 * U) * (1 + 1e-9))


@dataclass(frozen=True)
class TableCharges:
    """The table-sampled discrete Gaussian releases of a zCDP ledger and their allowance."""

    releases: tuple[int, ...]  # ledger ids
    draws: int                 # table draws among them (released cells)
    tv: float                  # T >= TV of the ledger's joint output from the infinite law

    def delta_at(self, epsilon: float) -> float:
        """The δ the recorded ρ does not cover: (1 + e^ε)·T (see the module docstring)."""
        return min(1.0, (1.0 + math.exp(min(float(epsilon), 700.0))) * self.tv)

    def message(self) -> str:
        ids = ", ".join(str(i) for i in self.releases[:10]) + (
            ", ..." if len(self.releases) > 10 else "")
        return (f"{len(self.releases)} zCDP release(s) ({ids}) were charged rho for a discrete "
                "Gaussian ALIAS TABLE (finite support: no Renyi curve, so that rho is not a "
                "zCDP guarantee); with their total-variation allowance T = "
                f"{self.tv:.3g} ({self.draws} table draws) the ledger is "
                "(eps, delta_zCDP(eps) + (1 + e^eps)*T)-DP")


def _draws(entry: Any) -> int:
    answer = getattr(entry, "answer", None)
    if answer is not None:
        return max(1, int(np.size(answer)))
    keys = ((entry.parameters or {}).get("cells") or {}).get("keys") or []
    n = 1
    for k in keys:
        n *= (k["range"][1] - k["range"][0] + 1) if isinstance(k, dict) else max(1, len(k))
    return max(1, n)


def table_charges(ledger: Any) -> TableCharges | None:
    """The table charges of a zCDP ``ledger`` (None if it is not zCDP or has none)."""
    if getattr(ledger, "accountant", None) != "zcdp":
        return None
    ids, draws, tv = [], 0, 0.0
    for e in ledger.entries():
        plans = ((e.parameters or {}).get("plans") or {}).values()
        found = False
        for p in plans:
            rep = str(p.get("repr", "")) if isinstance(p, dict) else ""
            if p.get("mechanism") != "discrete-gaussian" or "sampler='cks'" in rep:
                continue
            m = _SIGMA2.search(rep)
            if m is None:
                continue
            n = _draws(e)
            draws += n
            tv += n * table_total_variation(float(m.group(1)))
            found = True
        if found:
            ids.append(int(e.id))
    if not ids:
        return None
    return TableCharges(tuple(ids), draws, min(1.0, tv))


def shown_spent(ledger: Any, charges: TableCharges) -> tuple[float, float]:
    """(ε at the total's δ, δ at the total's ε) of the ledger WITH the table allowance, for
    an (ε, δ) total; for a ρ total (no ε, δ to meet) (inf, 1): the ρ is not a guarantee."""
    total, acc, state = ledger.budget, ledger.accountant_object(), ledger.state()
    if total.rho is not None:
        return math.inf, 1.0
    delta = float(acc.delta(state, total.epsilon)) + charges.delta_at(total.epsilon)
    eps = float(acc.epsilon(state, total.delta))
    for _ in range(50):  # ε' with δ_zCDP(ε') + (1 + e^ε')T <= δ: ε' = ε(δ − (1 + e^(ε+1/2))T)
        left = total.delta - charges.delta_at(eps + 0.5)
        if left <= 0:
            return math.inf, min(1.0, delta)
        nxt = float(acc.epsilon(state, left))
        if nxt <= eps + 0.5:
            return nxt, min(1.0, delta)
        eps = nxt
    return math.inf, min(1.0, delta)
