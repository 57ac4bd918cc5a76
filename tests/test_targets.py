"""Accuracy first: workloads planned from the precision each query must reach."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpnoise import Budget, ParameterError, SeededRandom, Session
from dpnoise.cli import main
from dpnoise.ledger import Ledger
from dpnoise.session.targets import AccuracyTarget, apply_plan, expected_half_width
from dpnoise.session.workload import Workload

GROUPS, SIZE = 40, 150
SCHEMA = {"dataset": {"max_rows": 20_000},
          "columns": {"g": {"integer": True, "lower": 0, "upper": GROUPS - 1},
                      "x": {"lower": 0, "upper": 20}}}


def _data(seed: int = 0) -> dict[str, np.ndarray]:
    """GROUPS groups of exactly SIZE persons (the declared group size)."""
    rng = np.random.default_rng(seed)
    return {"g": np.repeat(np.arange(GROUPS), SIZE).astype(float),
            "x": rng.gamma(2.0, 3.0, GROUPS * SIZE).clip(0, 20)}


MIXED = {"workload": {"name": "targets", "group_size": SIZE},
         "queries": {"counts": {"query": "count by g", "target": 12},
                     "means": {"query": "mean x by g", "target": 1.0},
                     "medians": {"query": "median x by g", "target": 0.15},
                     "total": {"query": "sum x", "target": 400},
                     "overall": {"query": "mean x", "relative_target": 0.02,
                                 "reference": 6.0, "group_size": GROUPS * SIZE}}}


def _half_widths(release: Any) -> np.ndarray:
    lo, hi = release.interval()
    return (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)).ravel() / 2


@pytest.fixture(scope="module")
def planned() -> tuple[Any, Workload]:
    with Session(None, Budget(100.0), schema=SCHEMA) as s:
        plan = s.plan_workload(MIXED)
    return plan, apply_plan(Workload.load(MIXED), plan)


def test_the_plan_meets_every_target_and_is_the_cheapest(planned: tuple[Any, Workload]) -> None:
    plan, _wl = planned
    assert plan.mode == "cheapest" and plan.fits
    with Session(None, Budget(100.0), schema=SCHEMA) as s:
        for row in plan.queries:
            assert row.expected <= row.target.half_width  # met at the chosen epsilon ...
            q = s.parse(row.query)
            below, _ = expected_half_width(s, q, row.epsilon / 1.05, row.delta,
                                           group_size=row.group_size)
            assert below > row.target.half_width  # ... and not 5 % below it


def test_released_error_bars_meet_their_targets_in_95_percent(
        planned: tuple[Any, Workload]) -> None:
    """At the declared group size, at least 95 % of the released cells of every query have
    error bars no wider than the target (40 cells per grouped query, 12 runs)."""
    plan, wl = planned
    targets = {q.name: q.target.half_width for q in plan.queries}
    widths: dict[str, list[float]] = {name: [] for name in targets}
    for run in range(12):
        with Session(_data(run), Budget(100.0), schema=SCHEMA,
                     rng=SeededRandom(100 + run)) as s:
            result = s.run_workload(wl)
            assert result.ok
            for name, r in result.releases.items():
                widths[name].extend(_half_widths(r))
    for name, hw in widths.items():
        met = np.mean(np.asarray(hw) <= targets[name] * (1 + 1e-12))
        assert met >= 0.95, (name, met)


def test_a_split_of_a_total_beats_an_equal_split_on_the_worst_ratio() -> None:
    wl = {"workload": {"epsilon": 1.0, "group_size": SIZE},
          "queries": {"counts": {"query": "count by g", "target": 12},
                      "means": {"query": "mean x by g", "target": 1.0}}}
    with Session(None, Budget(10.0), schema=SCHEMA) as s:
        plan = s.plan_workload(wl)
        assert plan.mode == "balanced" and plan.fits
        assert math.fsum(q.epsilon for q in plan.queries) <= 1.0
        equal = max(expected_half_width(s, s.parse(q.query), 0.5, 0.0,
                                        group_size=SIZE)[0] / q.target.half_width
                    for q in plan.queries)
    assert plan.worst_ratio < equal
    ratios = [q.ratio for q in plan.queries]
    assert max(ratios) / min(ratios) < 1.15  # the errors are balanced against the targets


@pytest.mark.parametrize("accountant", ["basic", "pld"])
def test_the_ledger_records_the_planned_charges(tmp_path: Path, accountant: str) -> None:
    wl = {"workload": {"group_size": SIZE},
          "queries": {"counts": {"query": "count by g", "target": 12},
                      "total": {"query": "sum x", "target": 400}}}
    path = tmp_path / "l.sqlite"
    Ledger(path, budget=Budget(5.0, 1e-6, accountant=accountant), create=True).close()
    with Session(_data(), ledger=path, schema=SCHEMA) as s:
        plan = s.plan_workload(wl)
        result = s.run_workload(wl)
        assert [r.epsilon for r in result.releases.values()] == \
            [q.epsilon for q in plan.queries]
        after = s.ledger.summary_of(s.ledger.state())
        assert after["epsilon"] == pytest.approx(plan.composed["epsilon"], rel=1e-9)
        assert result.plan is not None


def test_planning_reads_no_data_and_spends_nothing() -> None:
    with Session(None, Budget(3.0), schema=SCHEMA) as s:  # no data at all
        plan = s.plan_workload(MIXED)
        assert s.spent.epsilon == 0 and not s.history()
    assert plan.composed["epsilon"] > 0


def test_a_plan_that_does_not_fit_is_refused_before_anything_is_spent() -> None:
    with Session(_data(), Budget(0.05), schema=SCHEMA) as s:
        assert not s.plan_workload(MIXED).fits
        with pytest.raises(Exception, match="nothing spent"):
            s.run_workload(MIXED)
        assert s.spent.epsilon == 0


@pytest.mark.parametrize("spec, match", [
    ({"query": "count", "target": 5, "epsilon": 0.1}, "target and an epsilon"),
    ({"query": "count", "relative_target": 0.1}, "reference"),
    ({"query": "count", "target": -1}, "positive"),
    ({"query": "count", "target": 5, "reference": 3.0}, "relative target"),
    ({"query": "count", "target": 5, "share": 1}, "share"),
    ({"query": "count", "target": 5, "group_size": 0}, "group_size"),
    ({"query": "variance x", "target": 1.0, "group_size": 10}, "targets are supported"),
    ({"query": "mean x", "target": 1.0}, "group_size"),
])
def test_bad_targets_are_clear_errors(spec: dict[str, Any], match: str) -> None:
    with Session(None, Budget(3.0), schema=SCHEMA) as s, pytest.raises(ParameterError,
                                                                        match=match):
        s.plan_workload({"queries": {"q": spec}})


def test_an_unreachable_target_names_the_query() -> None:
    with Session(None, Budget(3.0), schema=SCHEMA) as s, pytest.raises(ParameterError,
                                                                        match="no epsilon"):
        s.plan_workload({"queries": {"q": {"query": "mean x by g", "target": 1e-9,
                                           "group_size": 2}}})


def test_relative_target_is_a_fraction_of_the_stated_reference() -> None:
    assert AccuracyTarget(relative=0.02, reference=-50.0).half_width == pytest.approx(1.0)
    assert AccuracyTarget(absolute=3).half_width == 3.0


def test_cli_dry_run_plans_without_the_data(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "wl.toml").write_text(
        '[workload]\ngroup_size = 150\n[queries.counts]\nquery = "count by g"\ntarget = 12\n'
        '[queries.means]\nquery = "mean x by g"\ntarget = 1.0\n')
    (tmp_path / "d.toml").write_text(
        '[dataset]\nmax_rows = 20000\n[columns.g]\ninteger = true\nlower = 0\nupper = 39\n'
        '[columns.x]\nlower = 0\nupper = 20\n')
    missing = tmp_path / "d.csv"  # never opened by a dry run
    argv = ["release", "--workload", str(tmp_path / "wl.toml"), "--data", str(missing),
            "--schema", str(tmp_path / "d.toml"), "--ledger", ":memory:", "--budget", "5",
            "--dry-run"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "dry run: nothing read, nothing spent" in out and "target +-12" in out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mode"] == "cheapest" and doc["fits"] and len(doc["queries"]) == 2
    assert all(q["expected"] <= q["target"] for q in doc["queries"])
