"""``make demo`` / ``dpnoise demo``: a short release of several statistics of a bundled data set.

The data set (``data/survey.csv``) is synthetic and regenerated deterministically by
``scripts/make_demo_data.py``.  Each statistic is released with an exact-lattice
mechanism; the table shows the true and the private answer and the guarantee.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from .mechanisms.base import Mechanism
from .mechanisms.laplace import ClampedLaplace, Laplace


@dataclass(frozen=True)
class DemoRow:
    statistic: str
    true_value: float
    private_value: float
    mechanism: str
    guarantee: str


def load_survey() -> dict[str, np.ndarray]:
    """The bundled synthetic survey as numpy columns (region as strings)."""
    text = resources.files("dpnoise").joinpath("data/survey.csv").read_text()
    rows = list(csv.DictReader(text.splitlines()))
    cols: dict[str, np.ndarray] = {}
    for key in rows[0]:
        vals = [r[key] for r in rows]
        cols[key] = np.array(vals) if key == "region" else np.array(vals, dtype=np.float64)
    return cols


def demo_rows(rng: Any = None) -> list[DemoRow]:
    data = load_survey()
    n = data["age"].size
    stats: list[tuple[str, float, Mechanism]] = [
        ("respondents (count)", float(n), Laplace(epsilon=0.5, sensitivity=1.0)),
        ("smokers (count)", float(data["smoker"].sum()), Laplace(epsilon=0.5, sensitivity=1.0)),
        ("smokers (% of 3000, public n)", 100 * float(data["smoker"].mean()),
         ClampedLaplace(epsilon=0.5, sensitivity=100 / n, lower=0, upper=100)),
        ("sum of satisfaction (0-10)", float(data["satisfaction"].sum()),
         Laplace(epsilon=0.5, sensitivity=10.0)),
        ("mean age (ages in [18, 95], public n)", float(data["age"].mean()),
         ClampedLaplace(epsilon=0.5, sensitivity=77 / n, lower=18, upper=95)),
    ]
    out = []
    for name, true_value, mech in stats:
        private = float(mech.release(true_value, rng=rng))
        out.append(DemoRow(name, true_value, private, type(mech).__name__, str(mech.guarantee)))
    return out


def run_demo(rng: Any = None, as_json: bool = False) -> int:
    rows = demo_rows(rng)
    if as_json:
        print(json.dumps([r.__dict__ for r in rows], indent=2))
        return 0
    print("dpnoise demo: synthetic survey of 3000 people (src/dpnoise/data/survey.csv)\n")
    head = f"{'statistic':40s} {'true':>12s} {'private':>14s}  {'mechanism':16s} guarantee"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r.statistic:40s} {r.true_value:12.4f} {r.private_value:14.4f}  "
              f"{r.mechanism:16s} {r.guarantee}")
    total = sum(0.5 for _ in rows)
    print(f"\ntotal privacy spent (sequential composition): epsilon = {total:g}")
    return 0
