"""Workloads: several queries in one pass, their budget reserved in ONE ledger transaction
before anything reads the data -- all or nothing -- a query that fails after the
reservation keeps its charge, one table per query, replay per query, the CLI form."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpnoise import (
    Budget,
    BudgetExceededError,
    Ledger,
    LedgerError,
    ParameterError,
    SeededRandom,
    Session,
    Workload,
)
from dpnoise.cli import main

from .helpers import random_columns

pd = pytest.importorskip("pandas")

SCHEMA = {"dataset": {"max_rows": 1000},
          "columns": {"x": {"lower": 0, "upper": 10}, "g": {"categories": ["a", "b", "c"]},
                      "city": {"text": True}}}
WORKLOAD = {
    "workload": {"name": "t", "epsilon": 0.6, "delta": 1e-6},
    "queries": {"n": {"query": "count", "share": 1},
                "mean_by_g": {"query": "mean x by g", "share": 2},
                "by_city": {"query": "count by city", "share": 1, "delta": True},
                "sum": {"query": "sum x", "epsilon": 0.1}}}


def _data(n: int = 400) -> dict[str, Any]:
    return random_columns(2, n, x=lambda r, n: r.uniform(0, 10, n),
                          g=lambda r, n: r.choice(["a", "b", "c"], n),
                          city=lambda r, n: r.choice(["big", "small"], n))


def _ledger(tmp: Path, total: Budget) -> str:
    path = tmp / "l.sqlite"
    Ledger(path, budget=total, create=True).close()
    return str(path)


# --------------------------------------------------------------------- the file
def test_budgets_from_shares_and_fixed_epsilons() -> None:
    wl = Workload.load(WORKLOAD)
    eps = {q.name: q.epsilon for q in wl.queries}
    assert [q.name for q in wl.queries] == ["n", "mean_by_g", "by_city", "sum"]
    assert eps == pytest.approx({"n": 0.15, "mean_by_g": 0.3, "by_city": 0.15, "sum": 0.1})
    assert {q.name: q.delta for q in wl.queries} == {"n": 0, "mean_by_g": 0, "by_city": 1e-6,
                                                     "sum": 0}


@given(total=st.floats(1e-3, 10.0), shares=st.lists(st.floats(1e-3, 1e3), min_size=1,
                                                     max_size=12))
def test_shares_never_add_up_to_more_than_the_total(total: float, shares: list[float]) -> None:
    wl = Workload.load({"workload": {"epsilon": total},
                        "queries": {f"q{i}": {"query": "count", "share": s}
                                    for i, s in enumerate(shares)}})
    got = sum((Fraction(q.epsilon) for q in wl.queries), Fraction(0))
    assert got <= Fraction(total)
    assert float(got) == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize("bad, needle", [
    ({"queries": {}}, "names no query"),
    ({"queries": {"a": {"query": "count"}}}, "exactly one of epsilon or share"),
    ({"queries": {"a": {"query": "count", "epsilon": 1, "share": 1}}}, "exactly one"),
    ({"queries": {"a": {"query": "count", "share": 1}}}, "need the total"),
    ({"queries": {"a/b": {"query": "count", "epsilon": 1}}}, "name"),
    ({"queries": {"a": {"query": "count", "epsilon": 1, "eps": 2}}}, "unknown key"),
    ({"queries": {"a": {"query": "count", "epsilon": -1}}}, "epsilon"),
    ({"queries": {"a": {"query": "count", "epsilon": "1"}}}, "number"),
    ({"queries": {"a": {"epsilon": 1}}}, "needs query"),
    ({"workload": {"epsilon": 1, "delta": 1e-6},
      "queries": {"a": {"query": "count", "share": 1}}}, "no query takes it"),
    ({"workload": {"format": "xlsx"}, "queries": {"a": {"query": "count", "epsilon": 1}}},
     "format"),
    ({"queries": 5}, "must be a table"),
    ({"plan": {}}, "unknown key"),
])
def test_bad_workloads_are_refused_before_anything(bad: dict[str, Any], needle: str,
                                                   tmp_path: Path) -> None:
    led = _ledger(tmp_path, Budget(5.0, 1e-5))
    with Session(_data(), None, led, schema=SCHEMA) as s:
        with pytest.raises(ParameterError, match=needle):
            s.run_workload(bad, output=tmp_path / "out")
        assert s.history() == [] and not (tmp_path / "out").exists()


def test_a_bad_query_is_named_and_nothing_is_spent(tmp_path: Path) -> None:
    led = _ledger(tmp_path, Budget(5.0, 1e-5))
    wl = {"queries": {"fine": {"query": "count", "epsilon": 0.1},
                      "typo": {"query": "mean nosuch", "epsilon": 0.1},
                      "no_delta": {"query": "count by city", "epsilon": 0.1}}}
    with Session(_data(), None, led, schema=SCHEMA) as s:
        with pytest.raises(ParameterError, match="workload query 'typo'"):
            s.run_workload(wl)
        del wl["queries"]["typo"]
        with pytest.raises(ParameterError, match="workload query 'no_delta'"):
            s.run_workload(wl)
        assert s.history() == []


def test_bad_toml_file(tmp_path: Path) -> None:
    p = tmp_path / "w.toml"
    p.write_text("[workload\n")
    with pytest.raises(ParameterError, match="not valid TOML"):
        Workload.load(p)
    with pytest.raises(ParameterError, match="does not exist"):
        Workload.load(tmp_path / "missing.toml")


# ----------------------------------------------------------- one pass, all or nothing
def test_workload_releases_each_query_with_its_own_ledger_row(tmp_path: Path) -> None:
    led = _ledger(tmp_path, Budget(1.0, 1e-5))
    with Session(_data(), None, led, schema=SCHEMA) as s:
        result = s.run_workload(WORKLOAD, output=tmp_path / "out")
        assert result.ok and list(result) == ["n", "mean_by_g", "by_city", "sum"]
        hist = s.history()
        assert [e.status for e in hist] == ["released"] * 4
        assert [e.query for e in hist] == [q["query"] for q in WORKLOAD["queries"].values()]
        assert s.spent.epsilon == pytest.approx(0.7) and s.spent.delta == pytest.approx(1e-6)
        for name, r in result.releases.items():
            path = tmp_path / "out" / f"{name}.parquet"
            assert result.outputs[name] == str(path)
            pd.testing.assert_frame_equal(pd.read_parquet(path), r.to_pandas(),
                                          check_dtype=False)
        summary = result.summary()
        assert summary["name"].tolist() == list(result) and \
            set(summary["status"]) == {"released"}


def test_the_whole_budget_is_reserved_before_any_data_is_read(tmp_path: Path) -> None:
    """Every reservation exists (one per query, in order) when the first aggregate runs."""
    led = _ledger(tmp_path, Budget(1.0, 1e-5))
    with Session(_data(), None, led, schema=SCHEMA) as s:
        seen: list[list[str]] = []
        inner = s.engine.aggregate

        def spy(q: Any) -> Any:
            seen.append([e.status for e in s.ledger.entries()])
            return inner(q)

        s.engine.aggregate = spy
        s.run_workload(WORKLOAD)
        assert seen[0] == ["reserved"] * 4
        assert seen[1] == ["released"] + ["reserved"] * 3


@pytest.mark.parametrize("accountant", ["basic", "pld", "zcdp"])
def test_a_workload_over_the_remaining_budget_spends_nothing(tmp_path: Path,
                                                              accountant: str) -> None:
    total = Budget(0.5, 1e-5, accountant=accountant) if accountant != "zcdp" else \
        Budget(rho=0.05)
    wl = {"queries": {"a": {"query": "count", "epsilon": 0.2},
                      "b": {"query": "sum x", "epsilon": 0.2},
                      "c": {"query": "count by g", "epsilon": 0.2}}}
    led = _ledger(tmp_path, total)
    with Session(_data(), None, led, schema=SCHEMA) as s:
        with pytest.raises(BudgetExceededError, match="workload refused, nothing spent"):
            s.run_workload(wl, output=tmp_path / "out")
        assert s.history() == [] and s.ledger.spent_basic().epsilon == 0
        assert not (tmp_path / "out").exists()
        # the same queries one by one: the first ones fit (the refusal was all-or-nothing)
        s.release("count", epsilon=0.2)
        assert len(s.history()) == 1


def test_reserve_all_refuses_inside_the_transaction(tmp_path: Path) -> None:
    """The ledger itself re-checks the total (another process may have spent meanwhile)."""
    led = Ledger(tmp_path / "l.sqlite", budget=Budget(1.0), create=True)
    other = Ledger(tmp_path / "l.sqlite")
    fields = {"delta": 0.0, "query": "q", "canonical": "q", "query_key": "k", "dataset": "d",
              "mechanism": "m", "parameters": {}, "guarantee": {}}
    other.reserve(epsilon=0.5, **fields)
    with pytest.raises(BudgetExceededError, match="nothing spent"):
        led.reserve_all([{"epsilon": 0.3, **fields}, {"epsilon": 0.3, **fields}])
    assert led.spent().epsilon == 0.5
    assert led.reserve_all([{"epsilon": 0.25, **fields}, {"epsilon": 0.25, **fields}]) == [2, 3]
    assert led.spent().epsilon == 1.0 and other.spent().epsilon == 1.0


def test_an_anchored_ledger_opened_without_its_anchor_refuses_a_workload(
        tmp_path: Path) -> None:
    """As a single release: without its anchor a restored older copy would hand spent
    budget back, so the workload's reservation is refused and nothing is spent."""
    path = tmp_path / "l.sqlite"
    Ledger(path, budget=Budget(1.0), create=True, anchor=tmp_path / "l.anchor").close()
    with Session(_data(), None, Ledger(path), schema=SCHEMA) as s:
        with pytest.raises(LedgerError, match="anchored"):
            s.run_workload({"queries": {"a": {"query": "count", "epsilon": 0.1}}})
        assert s.history() == []
    with Session(_data(), None, Ledger(path, anchor=tmp_path / "l.anchor"),
                 schema=SCHEMA) as s:
        assert list(s.run_workload({"queries": {"a": {"query": "count", "epsilon": 0.1}}}))
        assert [e.status for e in s.history()] == ["released"]


def test_a_query_failing_after_the_reservation_stays_charged(tmp_path: Path) -> None:
    led = _ledger(tmp_path, Budget(1.0, 1e-5))
    with Session(_data(), None, led, schema=SCHEMA) as s:
        inner = s.engine.aggregate

        def fail_on_mean(q: Any) -> Any:
            if q.stat == "mean":
                raise RuntimeError("secret value 42.17 in the data")
            return inner(q)

        s.engine.aggregate = fail_on_mean
        result = s.run_workload(WORKLOAD)
        assert not result.ok and list(result.failed) == ["mean_by_g"]
        assert "charge is kept" in result.failed["mean_by_g"]
        assert "42.17" not in result.failed["mean_by_g"]
        assert list(result) == ["n", "by_city", "sum"]
        assert [e.status for e in s.history()] == ["released", "aborted", "released",
                                                   "released"]
        assert s.spent.epsilon == pytest.approx(0.7)  # the failed query's share included
        assert result.summary().set_index("name").loc["mean_by_g", "status"] == "failed"


def test_replay_stays_per_query(tmp_path: Path) -> None:
    led = _ledger(tmp_path, Budget(1.0, 1e-5))
    wl = {"queries": {"a": {"query": "count", "epsilon": 0.2},
                      "b": {"query": "mean x by g", "epsilon": 0.2}}}
    with Session(_data(), None, led, schema=SCHEMA, replay=True) as s:
        first = s.run_workload(wl)
        s.release("mean x by g", epsilon=0.2)  # replayed by the single-release path too
        more = {"queries": {**wl["queries"], "c": {"query": "sum x", "epsilon": 0.1}}}
        second = s.run_workload(more)
        assert [second[n].replayed for n in second] == [True, True, False]
        np.testing.assert_array_equal(second["b"].values, first["b"].values)
        assert len(s.history()) == 3 and s.spent.epsilon == pytest.approx(0.5)


def test_seeded_workloads_equal_single_releases() -> None:
    """The workload path draws what the single-release path draws, query by query."""
    wl = {"queries": {"a": {"query": "count by g", "epsilon": 0.3},
                      "b": {"query": "median x", "epsilon": 0.3}}}
    with Session(_data(), Budget(1.0), schema=SCHEMA, rng=SeededRandom(9)) as s:
        res = s.run_workload(wl)
    with Session(_data(), Budget(1.0), schema=SCHEMA, rng=SeededRandom(9)) as s:
        one = [s.release("count by g", epsilon=0.3), s.release("median x", epsilon=0.3)]
    for name, r in zip("ab", one, strict=True):
        np.testing.assert_array_equal(res[name].values, r.values)


# -------------------------------------------------------------------------------- CLI
def _files(tmp: Path) -> tuple[Path, Path]:
    data = tmp / "d.csv"
    d = _data(100)
    data.write_text("x,g,city\n" + "".join(f"{x},{g},{c}\n" for x, g, c in
                                          zip(d["x"], d["g"], d["city"], strict=True)))
    wl = tmp / "w.toml"
    wl.write_text('[workload]\nname = "cli"\nepsilon = 0.4\nformat = "csv"\n'
                  '[queries.total]\nquery = "count"\nshare = 1\n'
                  '[queries.per_group]\nquery = "mean x by g"\nshare = 3\n')
    return data, wl


def test_cli_workload_opens_the_data_once_and_writes_one_table_per_query(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    import dpnoise.session.opening as session_module

    opened: list[Any] = []
    real = session_module.DuckDBEngine

    def counting(*a: Any, **k: Any) -> Any:
        opened.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(session_module, "DuckDBEngine", counting)
    data, wl = _files(tmp_path)
    led = _ledger(tmp_path, Budget(1.0))
    schema = tmp_path / "d.toml"
    schema.write_text('[columns.x]\nlower = 0\nupper = 10\n'
                      '[columns.g]\ncategories = ["a", "b", "c"]\n')
    args = ["release", "--workload", str(wl), "--data", str(data), "--ledger", led,
            "--output", str(tmp_path / "out")]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(opened) == 1
    assert [q["name"] for q in out["queries"]] == ["total", "per_group"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["per_group.csv",
                                                                     "total.csv"]
    assert out["remaining"]["epsilon"] == pytest.approx(0.6)
    # run again: the files exist, refused before any spend
    assert main(args) == 2
    assert "exists already" in capsys.readouterr().err
    with Ledger(led) as check:
        assert len(check.entries()) == 2
    # single-release flags belong to the workload file
    assert main([*args[:-2], "--epsilon", "0.1"]) == 2
    assert "--epsilon" in capsys.readouterr().err


def test_cli_workload_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, wl = _files(tmp_path)
    code = main(["release", "--workload", str(wl), "--data", str(data), "--bounds", "x=0:10",
                 "--categories", "g=a,b,c", "--ledger", ":memory:", "--budget", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "[total] count" in out and "[per_group] mean x by g" in out and "remaining" in out
