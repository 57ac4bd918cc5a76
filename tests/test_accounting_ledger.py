"""Integration: accountants as a choice of the ledger, the charge of a whole release,
planning, the CLI.  (The library itself: tests/test_accounting.py.)"""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

import dpnoise as dp
from dpnoise import Budget, BudgetExceededError, LedgerError, ParameterError
from dpnoise.accounting import AccountingBudget, ReleaseSpec, get_accountant
from dpnoise.accounting.sources import mechanism_pld, partitions, split_pld
from dpnoise.cli import main
from dpnoise.ledger import verify_ledger
from dpnoise.session import Ledger, Session
from dpnoise.session.planning import release_spec

from .helpers import random_columns

KW = dict(query="q", canonical="q", query_key="k", dataset="d", mechanism="m",
          parameters={}, guarantee={})
SCHEMA = {"columns": {"age": {"lower": 0, "upper": 100},
                      "g": {"integer": True, "lower": 0, "upper": 4}}}


def _data(n: int = 300) -> dict[str, np.ndarray]:
    return random_columns(3, n, age=lambda r, n: r.integers(0, 100, n).astype(float),
                          g=lambda r, n: r.integers(0, 5, n).astype(float))


def _fill(led: Ledger, mech: object, limit: int = 10_000) -> int:
    acc = get_accountant(led.accountant)
    charge = acc.charge_for(mech)
    g = mech.guarantee  # type: ignore[attr-defined]
    n = 0
    while n < limit:
        try:
            led.reserve(epsilon=g.epsilon, delta=g.delta, accounting=charge, **KW)
        except BudgetExceededError:
            break
        n += 1
    return n


# ------------------------------------------------------------------ the ledger
def test_budget_accountants_and_rho() -> None:
    assert Budget(1.0).accountant == "basic" and Budget(1.0) == Budget(1.0, 0.0, None, "basic")
    assert Budget(rho=0.5).accountant == "zcdp" and str(Budget(rho=0.5)) == "rho=0.5"
    for bad in (dict(rho=0.5, accountant="pld"), dict(epsilon=1.0, rho=0.5),
                dict(epsilon=1.0, accountant="rdp"), dict(rho=-1.0), dict()):
        with pytest.raises(ParameterError):
            Budget(**bad)  # type: ignore[arg-type]


def test_pld_ledger_composes_refuses_and_is_never_looser_than_basic() -> None:
    led = Ledger(None, budget=Budget(1.0, 1e-6, accountant="pld"))
    m = dp.Laplace(epsilon=0.05, sensitivity=1.0)
    n = _fill(led, m)
    assert n > 20  # basic: exactly 20 releases of 0.05 fit in 1
    rows = led.entries()
    assert len(rows) == n  # the refused one left no trace
    for a, b in itertools.pairwise(rows):
        assert b.composed_epsilon >= a.composed_epsilon  # monotone
    for r in rows:  # never looser than basic, never beyond the total
        assert r.composed_epsilon <= r.basic_epsilon + 1e-12
        assert r.composed_epsilon <= 1.0 or r.composed_delta <= 1e-6
    # the composed state agrees with an independent composition of the same charges
    acc = get_accountant("pld")
    state = acc.compose_many(acc.empty(), acc.charge_for(m), n)
    assert acc.epsilon(state, 1e-6) == pytest.approx(led.spent().epsilon, abs=n * 2**-16)
    assert led.spent_basic().epsilon == pytest.approx(0.05 * n)
    assert led.history_composed()[-1]["composed_epsilon"] == rows[-1].composed_epsilon
    # a plain (eps, delta) reservation without a charge is accounted by its claim
    with pytest.raises(BudgetExceededError, match="nothing spent"):
        led.reserve(epsilon=0.5, delta=0.0, **KW)
    assert len(led.entries()) == n


def test_zcdp_ledger_with_rho_budget_and_refusals(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "z.sqlite", budget=Budget(rho=0.1), create=True)
    dg = dp.DiscreteGaussian(epsilon=1.0, sigma2=100.0, upper=None,
                             sampler="cks")  # rho = 1/200
    assert _fill(led, dg) == 20
    assert led.spent().rho == pytest.approx(0.1) and led.spent().rho <= 0.1
    for refused in (dp.Gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0),
                    dp.TruncatedLaplace(epsilon=0.5, delta=1e-6, sensitivity=1.0)):
        with pytest.raises(ParameterError, match="finite-support"):
            led.charge_for(refused)
    with pytest.raises(ParameterError, match="delta > 0"):  # a claim with delta: no rho
        led.reserve(epsilon=0.1, delta=1e-9, **KW)
    led.close()
    with Ledger(tmp_path / "z.sqlite") as again:
        assert again.budget == Budget(rho=0.1) and len(again.entries()) == 20


def test_session_under_zcdp_refuses_finite_support_laws_before_spending() -> None:
    s = Session(_data(), Budget(1.0, 1e-6, accountant="zcdp"), schema=SCHEMA)
    with pytest.raises(ParameterError, match="finite-support"):
        s.release("sum age", epsilon=0.5, delta=1e-7, mechanism="truncated-laplace")
    assert s.history() == []


def test_cache_tamper_is_detected_and_a_missing_cache_is_rebuilt(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    led = Ledger(p, budget=Budget(1.0, 1e-6, accountant="pld"), create=True)
    m = dp.Laplace(epsilon=0.1, sensitivity=1.0)
    _fill(led, m, limit=3)
    spent = led.spent()
    head_state = led.state().content_hash()
    led.close()
    # a missing cache is rebuilt from the charges (deterministic: the same state hash)
    con = sqlite3.connect(p)
    con.execute("DELETE FROM composed")
    con.commit()
    con.close()
    assert verify_ledger(p).ok
    with Ledger(p) as led:
        assert led.state().content_hash() == head_state
        _fill(led, m, limit=1)
        assert len(led.entries()) == 4 and led.spent().epsilon > spent.epsilon
    # a replaced cache (another state) is detected on open and by verify
    con = sqlite3.connect(p)
    acc = get_accountant("pld")
    forged = acc.compose(acc.empty(), acc.charge_for(m)).to_bytes()
    con.execute("UPDATE composed SET state = ?", (forged,))
    con.commit()
    con.close()
    assert "cached composed state" in str(verify_ledger(p).problem)
    with pytest.raises(LedgerError, match="cached composed state"):
        Ledger(p)


def test_basic_ledgers_are_unchanged_and_carry_running_sums(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "b.sqlite", budget=Budget(1.0), create=True)
    for _ in range(8):
        led.reserve(epsilon=0.125, delta=0.0, **KW)
    with pytest.raises(BudgetExceededError):
        led.reserve(epsilon=0.125, delta=0.0, **KW)
    assert led.accountant == "basic" and led.remaining().epsilon == 0
    e = led.entries()
    assert e[-1].composed_epsilon == e[-1].basic_epsilon == 1.0


def test_composing_1000_and_reserving_one_more_is_fast() -> None:
    """Benchmark target < 50 ms (benchmarks/accounting.py); a loose sanity bound here."""
    led = Ledger(None, budget=Budget(20.0, 1e-6, accountant="pld"))
    acc = get_accountant("pld")
    charge = acc.charge_for(dp.Laplace(epsilon=1 / 96, sensitivity=1.0))
    state = acc.compose_many(acc.empty(), charge, 1000)
    nxt = acc.compose(state, charge)
    t = time.perf_counter()
    nxt = acc.compose(state, charge)
    assert acc.fits(nxt, AccountingBudget(20.0, 1e-6))
    assert time.perf_counter() - t < 0.5
    assert led.accountant == "pld"


# ------------------------------------------------------------------ the charge of a release
def test_partitions() -> None:
    assert partitions(4, 10) == [(4,), (3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1)]
    assert partitions(4, 2) == [(4,), (3, 1), (2, 2)]


@pytest.mark.parametrize("mech", [dp.Laplace(epsilon=0.25, sensitivity=1.0),
                                  dp.Geometric(epsilon=0.25)])
def test_split_covers_every_split_of_one_persons_influence(mech: object) -> None:
    k = 3
    env = split_pld(mech, k, 5).pld
    base = {d: mechanism_pld(mech, shift=d).pld for d in (1, 2, 3)}
    for split in partitions(k, 5):
        pld = base[split[0]]
        for d in split[1:]:
            pld = pld.compose(base[d])
        for eps in (0.0, 0.2, 0.5, 0.7):
            assert env.delta(eps) >= pld.delta(eps) - 1e-12
    # and it is never looser than the pure (k*eps) bound of the triangle inequality
    assert env.delta(k * 0.25 + 1e-3) <= 1e-9


def test_gaussian_cells_one_cell_moved_k_times_is_the_worst_split() -> None:
    dg = dp.DiscreteGaussian(epsilon=1.0, sigma2=25.0, upper=None)
    one = mechanism_pld(dg, shift=2).pld
    spread = mechanism_pld(dg).pld.self_compose(2)
    assert one.delta(0.5) > spread.delta(0.5)
    env = split_pld(dg, 2, 4).pld
    assert env.delta(0.5) >= one.delta(0.5) - 1e-12


@pytest.mark.parametrize("query", ["count", "sum age", "mean age", "count by g",
                                   "mean age by g"])
def test_release_charge_per_release_type(query: str) -> None:
    """The ledger's charge of each release type covers its worst case and is never looser
    than basic composition of its per-cell guarantees."""
    schema = {"dataset": {"user_id": "uid", "max_contributions": 2},
              "columns": {**SCHEMA["columns"], "uid": {"integer": True, "lower": 0, "upper": 1000}}}
    data = _data()
    data["uid"] = np.arange(data["age"].size, dtype=float) // 2
    s = Session(data, Budget(5.0, 1e-6, accountant="pld"), schema=schema)
    r = s.release(query, epsilon=0.5)
    entry = s.history()[-1]
    assert entry.composed_epsilon <= entry.basic_epsilon + 1e-12
    assert entry.epsilon == r.epsilon
    # the worst split: a grouped release charges the envelope of its splits (k = 2)
    q = s.parse(query)
    plans = s._plans(q, 0.5, 0.0, None)
    acc = get_accountant("pld")
    spec = release_spec(plans, s.n_cells(q))
    charge = acc.charge_for(spec)
    worst = None
    for _role, p in plans:
        if p.target.cells:
            part = mechanism_pld(p.mechanism, shift=2).pld
        else:
            part = mechanism_pld(p.mechanism).pld
        worst = part if worst is None else worst.compose(part)
    for eps in (0.1, 0.3):
        assert charge.pld.delta(eps) >= worst.delta(eps) - 1e-12
    assert isinstance(spec, ReleaseSpec)


# ------------------------------------------------------------------ planning
def test_plan_spends_nothing_and_reserve_for_leaves_room() -> None:
    s = Session(_data(), Budget(1.0, 1e-6, accountant="pld"), schema=SCHEMA)
    p = s.plan("count", reserve_for=3)
    assert s.history() == [] and p.fits and p.reserve_for == 3
    assert p.epsilon >= p.basic_epsilon * 0.99  # never worse than basic
    assert p.components["count"]["error"]["mean_abs"] > 0
    for _ in range(4):
        s.release("count", epsilon=p.epsilon)
    assert len(s.history()) == 4
    with pytest.raises(BudgetExceededError):
        s.release("count", epsilon=p.epsilon)
    with pytest.raises(ParameterError, match="not both"):
        s.release("count", epsilon=0.1, reserve_for=2)


def test_release_reserve_for_under_pld_beats_basic() -> None:
    s = Session(_data(), Budget(1.0, 1e-6, accountant="pld"), schema=SCHEMA)
    r = s.release("count", reserve_for=29, mechanism="laplace")
    assert r.epsilon > 1.0 / 30  # PLD: more than the basic share
    p = s.plan("count", epsilon=r.epsilon, reserve_for=28, mechanism="laplace")
    assert p.fits  # room for 29 more like it (within the bisection's tolerance)


def test_range_adherent_error_is_the_worst_over_the_range() -> None:
    s = Session(_data(), Budget(1.0), schema={**SCHEMA, "dataset": {"max_rows": 1000}})
    p = s.plan("mean age", epsilon=0.5, mechanism="range-laplace")
    err = p.components["centred_sum"]["error"]
    assert "worst of 9 points" in err["at"]


def test_planning_only_session_reads_no_data() -> None:
    s = Session(None, Budget(1.0, accountant="pld"), schema=SCHEMA)
    assert s.plan("count by g", epsilon=0.5).fits
    with pytest.raises(ParameterError, match="planning only"):
        s.release("count", epsilon=0.5)
    for exact in (s.true_answer, s.true_table, s.true_components):  # not an AttributeError
        with pytest.raises(ParameterError, match="planning only"):
            exact("count")


# ------------------------------------------------------------------ CLI
def test_cli_init_show_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.toml").write_text("[columns.age]\nlower = 0\nupper = 100\n")
    (tmp_path / "p.csv").write_text("age\n" + "\n".join(str(i % 90) for i in range(100)) + "\n")
    led = str(tmp_path / "l.sqlite")
    assert main(["ledger", "init", led, "--budget", "1,1e-6", "--accountant", "pld"]) == 0
    capsys.readouterr()
    base = ["release", "--data", str(tmp_path / "p.csv"), "--ledger", led, "--query", "count"]
    assert main([*base, "--epsilon", "0.3"]) == 0
    assert main([*base, "--dry-run", "--reserve-for", "5"]) == 0
    out = capsys.readouterr().out
    assert "dry run: nothing read, nothing spent" in out and "E|err|" in out
    assert main(["ledger", led]) == 0
    out = capsys.readouterr().out
    assert "accountant pld" in out and "basic:     would have charged" in out
    assert main(["ledger", led, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["accountant"] == "pld" and len(info["releases"]) == 1
    # one release: the composed epsilon is that of the law sampled (the block geometric's
    # decay is rounded down onto j·ln2/M, so at most the nominal 0.3 and within 1 % of it)
    assert 0.297 <= info["releases"][0]["composed"]["epsilon"] <= 0.3 + 1e-9
    z = str(tmp_path / "z.sqlite")
    assert main(["ledger", "init", z, "--rho", "0.2"]) == 0
    assert "rho=0.2" in capsys.readouterr().out
    assert main(["ledger", "init", str(tmp_path / "x.sqlite"), "--budget", "1", "--rho",
                 "1"]) != 0
    assert "not both" in capsys.readouterr().err
