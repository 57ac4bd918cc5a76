"""Side-by-side utility of every mechanism that fits a privacy budget (``dpnoise compare``).

For a budget (ε, δ, Δ) each *candidate* builds its calibrated mechanism and the exact
law of the noise it releases (``mechanism.noise()``) gives

* E|noise|            (``mean_abs``),
* standard deviation  (``std``),
* 95% error bound b   (the 0.975 quantile of the symmetric noise: P(|noise| <= b) >= 0.95).

Values are those of the lattice laws dpnoise actually samples, not of idealised
continuous noise.  The best value of each column is marked.

The candidates are entries of the one mechanism registry
(:mod:`dpnoise.mechanisms.registry`); comparing one more is one line in :data:`CANDIDATES`::

    Candidate("staircase", "pure ε-DP staircase (paper 004)",
              applies=lambda e, d: None, build=from_registry("staircase"))

``applies(epsilon, delta)`` returns None when the candidate can be used, else the reason
it is skipped; ``build`` may also raise ParameterError (the row is then skipped with that
message), so a candidate never needs to duplicate its own validation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import ParameterError
from .mechanisms import registry
from .mechanisms.base import Mechanism
from .params import check_delta, check_epsilon, check_sensitivity


@dataclass(frozen=True)
class Candidate:
    name: str
    summary: str
    applies: Callable[[float, float], str | None]
    build: Callable[[float, float, float], Mechanism]


@dataclass
class Row:
    name: str
    summary: str
    guarantee: str = ""
    mean_abs: float = math.nan
    std: float = math.nan
    bound95: float = math.nan
    skipped: str | None = None
    best: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "summary": self.summary, "guarantee": self.guarantee,
                "mean_abs": self.mean_abs, "std": self.std, "bound95": self.bound95,
                "skipped": self.skipped, "best": self.best}


def from_registry(name: str) -> Callable[[float, float, float], Mechanism]:
    """The builder of registry entry ``name`` at (ε, δ, Δ), every other setting default."""

    def build(e: float, d: float, s: float) -> Mechanism:
        return registry.build(name, registry.Request(epsilon=e, delta=d, sensitivity=s))

    return build


def _needs_delta(e: float, d: float) -> str | None:
    return None if d > 0 else "needs delta > 0"


CANDIDATES: list[Candidate] = [
    Candidate("laplace", "pure ε-DP Laplace (uses no δ)", lambda e, d: None,
              from_registry("laplace")),
    Candidate("staircase", "pure ε-DP optimal staircase, min variance (paper 004; no δ)",
              lambda e, d: None, from_registry("staircase")),
    Candidate("truncated-laplace", "truncated Laplacian (paper 001)",
              lambda e, d: None if 0 < d < 0.5 else "needs 0 < delta < 1/2",
              from_registry("truncated-laplace")),
    Candidate("gaussian", "classic Gaussian",
              lambda e, d: (None if e < 1 else "classic bound needs epsilon < 1")
              if d > 0 else "needs delta > 0", from_registry("gaussian")),
    Candidate("analytic-gaussian", "analytic Gaussian (Balle & Wang)", _needs_delta,
              from_registry("analytic-gaussian")),
]


def compare(epsilon: float, delta: float, sensitivity: float = 1.0,
            candidates: Sequence[Candidate] | None = None) -> list[Row]:
    """One row per candidate (skipped ones carry the reason); best values are marked."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=True)
    sens = check_sensitivity(sensitivity)
    rows: list[Row] = []
    for cand in CANDIDATES if candidates is None else candidates:
        row = Row(cand.name, cand.summary)
        reason = cand.applies(eps, dlt)
        if reason is not None:
            row.skipped = reason
            rows.append(row)
            continue
        try:
            mech = cand.build(eps, dlt, sens)
        except ParameterError as exc:
            row.skipped = str(exc)
            rows.append(row)
            continue
        law = mech.noise()
        row.guarantee = str(mech.guarantee)
        row.mean_abs = float(law.mean_abs())
        row.std = float(law.std())
        row.bound95 = float(law.ppf(0.975)) - float(law.mean())
        rows.append(row)
    for col in ("mean_abs", "std", "bound95"):
        live = [r for r in rows if r.skipped is None]
        if live:
            best = min(getattr(r, col) for r in live)
            for r in live:
                if getattr(r, col) <= best * (1 + 1e-12):
                    r.best.append(col)
    return rows


def format_table(rows: Sequence[Row], epsilon: float, delta: float, sensitivity: float) -> str:
    head = (f"budget: epsilon={epsilon:g} delta={delta:g} sensitivity={sensitivity:g}  "
            "(exact laws of the released lattice noise; * = best)")
    lines = [head, f"{'mechanism':<20}{'guarantee':<18}{'E|noise|':>14}{'std':>14}"
             f"{'95% bound':>14}"]
    for r in rows:
        if r.skipped is not None:
            lines.append(f"{r.name:<20}skipped: {r.skipped}")
            continue
        cells = [f"{getattr(r, c):.6g}{'*' if c in r.best else ' '}"
                 for c in ("mean_abs", "std", "bound95")]
        lines.append(f"{r.name:<20}{r.guarantee:<18}" + "".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)
