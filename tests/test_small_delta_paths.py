"""Session.plan, ``release --dry-run`` and the ledger are as tight at δ = 1e-12 as the accountant.

All three reach the "pld" accountant through the ledger's accountant object; this checks
that what each reports is never below the exact truth (tests/composition_truth.py) and
within the small-δ target (5 % at 1e-12, plus the grid term k·h), and that the dry run
and the plan report the same number.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dpnoise.accounting.pld import DEFAULT_H
from dpnoise.cli import main
from dpnoise.session import Session

from .composition_truth import Composition, epsilon

N, EPS, DELTA, TOTAL_DELTA = 20, 0.5, 1e-7, 1e-12
SCHEMA = {"columns": {"age": {"lower": 0, "upper": 100}}}


def _sigma2(components: dict) -> float:
    got = re.search(r"sigma2=([0-9.e+-]+)", components["count"]["repr"])
    assert got, components
    return float(got.group(1))


def _check(reported: float, sigma2: float) -> None:
    truth = epsilon(Composition().discrete_gaussian(sigma2, N), TOTAL_DELTA)
    assert reported >= truth, (reported, truth)
    assert reported <= truth * 1.05 + N * DEFAULT_H, (reported, truth)


def test_plan_dry_run_and_ledger_are_tight_at_delta_1e_12(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    led = str(tmp_path / "l.sqlite")
    csv = tmp_path / "p.csv"
    csv.write_text("age\n" + "\n".join(str(i % 90) for i in range(100)) + "\n")
    (tmp_path / "p.toml").write_text("[columns.age]\nlower = 0\nupper = 100\n")
    assert main(["ledger", "init", led, "--budget", f"20,{TOTAL_DELTA}",
                 "--accountant", "pld"]) == 0
    capsys.readouterr()
    args = ["--epsilon", str(EPS), "--delta", str(DELTA), "--mechanism", "discrete-gaussian"]
    # the dry run: nothing read, nothing spent
    assert main(["release", "--data", str(csv), "--schema", str(tmp_path / "p.toml"),
                 "--ledger", led,
                 "--query", "count", *args, "--dry-run", "--json",
                 "--reserve-for", str(N - 1)]) == 0
    dry = json.loads(capsys.readouterr().out)
    sigma2 = _sigma2(dry["components"])
    _check(dry["composed_after"]["epsilon"], sigma2)
    # Session.plan on the same ledger: the same accountant path, the same number
    with Session(None, None, led, schema=SCHEMA) as s:
        p = s.plan("count", epsilon=EPS, delta=DELTA, mechanism="discrete-gaussian",
                   reserve_for=N - 1)
    assert p.composed_after["epsilon"] == dry["composed_after"]["epsilon"]
    # the ledger composing the N releases one at a time (its own incremental path)
    data = {"age": (np.arange(100) % 90).astype(float)}
    with Session(data, None, led, schema=SCHEMA) as s:
        for _ in range(N):
            s.release("count", epsilon=EPS, delta=DELTA, mechanism="discrete-gaussian")
    assert main(["ledger", led, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert len(info["releases"]) == N
    spent = info["releases"][-1]["composed"]["epsilon"]
    _check(spent, sigma2)
    assert abs(spent - p.composed_after["epsilon"]) <= 1e-3 * spent
