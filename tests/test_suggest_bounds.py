"""Suggested bounds (``Session.suggest_bounds`` and ``dpnoise bounds``): charged to the
ledger like any release, a schema snippet naming the ledger event, a clamped-rows
statement from public facts that holds, and every bad input refused before any spend."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

import dpnoise as dp
from dpnoise import Budget, ParameterError, Session
from dpnoise.cli import main
from dpnoise.mechanisms.private_bounds import PrivateBounds
from dpnoise.session import Schema

SCHEMA = {"columns": {"income": {"lower": 0, "upper": 1}, "age": {"lower": 0, "upper": 150},
                      "region": {"categories": ["n", "s"]}}}


def _data(n: int = 20_000, seed: int = 5) -> dict[str, np.ndarray]:
    g = np.random.default_rng(seed)
    return {"income": g.lognormal(10, 1, n), "age": g.integers(18, 90, n).astype(float),
            "region": g.choice(np.array(["n", "s"], dtype=object), n)}


def test_suggestion_is_charged_recorded_replayed_and_a_schema_snippet(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Session(_data(), Budget(1.0), path, schema=SCHEMA, create_ledger=True) as s:
        b = s.suggest_bounds("age", epsilon=0.25)
        assert s.spent.epsilon == pytest.approx(0.25)
        e = s.history()[-1]
        assert e.mechanism == "private-bounds" and e.id == b.ledger_id
        assert list(np.asarray(e.answer)) == [b.low, b.high]
    # ties beyond the data: each step farther from 0 is about e^-2 as likely
    assert b.low in PrivateBounds(epsilon=1).grid and b.low <= 18 and 89 <= b.high <= 4096
    doc = tomllib.loads(str(b))
    schema = Schema.from_dict({"columns": doc["columns"]})
    assert schema.column("age").lower == b.lower < b.upper == schema.column("age").upper
    assert f"release {b.ledger_id}" in str(b) and str(path) in str(b)
    with Session(_data(), None, path, schema=SCHEMA, replay=True) as s:
        again = s.suggest_bounds("age", epsilon=0.25)
        assert again.replayed and (again.low, again.high) == (b.low, b.high)
        assert s.spent.epsilon == pytest.approx(0.25)  # nothing more spent


def test_the_suggestion_that_spent_the_remainder_is_replayed_too() -> None:
    """Charged the snapped remainder, it was keyed with it; the same request (nothing
    remains, nothing snapped) never found it again and was refused as over budget."""
    with Session(_data(200), Budget(1.0), schema=SCHEMA) as s:
        for i in range(9):
            s.release(f"count where age > {i}", epsilon=0.1)
        b = s.suggest_bounds("age", epsilon=0.1)
        assert b.epsilon < 0.1 and s.remaining.epsilon == 0
        again = s.suggest_bounds("age", epsilon=0.1, replay=True)
        assert again.replayed and (again.low, again.high) == (b.low, b.high)


def test_the_public_preference_resolves_ties_beyond_the_data_near_zero() -> None:
    """Every candidate above the ages ties; the preference picks the nearest to 0 (128)
    instead of a uniform choice up to 2^62."""
    m = PrivateBounds(epsilon=1.0, min_exponent=-10, max_exponent=62)
    x = _data()["age"]
    highs = [m.release(x, rng=dp.SeededRandom(i))[1] for i in range(40)]
    assert np.median(highs) == 128 and max(highs) <= 2048


@pytest.mark.parametrize("levels", [(0.01, 0.99), (0.1, 0.9)])
def test_clamped_rows_statement_holds_where_the_grid_is_coarse(levels: tuple[float, float]
                                                               ) -> None:
    """5 % of rows at 1.5 and 6 % at 3 put the candidate 4 above the 0.1-quantile with the
    best utility: rows below the released lower bound exceed q_lo·n + E/D, so a statement
    without the factor 2 would be false; the stated bound holds."""
    n = 100_000
    x = np.full(n, 100.0)
    x[: n // 20] = 1.5
    x[n // 20: n // 20 + 6 * n // 100] = 3.0
    m = PrivateBounds(epsilon=1.0, lower_level=levels[0], upper_level=levels[1])
    frac, rows = m.clamped_rows_bound(0.05)
    outside, below = [], []
    for i in range(60):
        low, high = m.release(x, rng=dp.SeededRandom(100 + i))
        outside.append(int(np.sum((x < low) | (x > high))))
        below.append(int(np.sum(x < low)))
    assert np.mean(np.array(outside) <= frac * n + rows) >= 0.95
    if levels == (0.1, 0.9):  # the naive lower-side bound q_lo·n + E_1/D_1 fails here
        e1, q1 = m.rank_error(0.05)[0], m.levels[0]
        assert np.median(below) > float(q1) * n + e1 / q1.denominator


def test_bad_requests_are_refused_before_any_spend(tmp_path: Path) -> None:
    with Session(_data(2000), Budget(1.0), tmp_path / "l.sqlite", schema=SCHEMA,
                 create_ledger=True) as s:
        for column, kw in [("region", {}), ("nope", {}), ("age", {"levels": (0.0, 0.9)}),
                           ("age", {"levels": (0.9, 0.1)}), ("age", {"levels": "x"}),
                           ("age", {"epsilon": -1.0}), ("age", {"epsilon": float("nan")}),
                           ("age", {"confidence": 1.5})]:
            with pytest.raises(ParameterError):
                s.suggest_bounds(column, **{"epsilon": 0.1, **kw})
        with pytest.raises(dp.BudgetExceededError):
            s.suggest_bounds("age", epsilon=2.0)
        assert s.spent.epsilon == 0 and s.history() == []


def test_an_empty_or_all_missing_column_releases_like_any_other(tmp_path: Path) -> None:
    """No error, message or path depends on the data: a column with no numbers releases."""
    d = _data(500)
    d["income"] = np.full(500, np.nan)
    with Session(d, Budget(1.0), schema=SCHEMA) as s:
        b = s.suggest_bounds("income", epsilon=0.5)
        assert b.lower < b.upper and s.spent.epsilon == pytest.approx(0.5)


def test_cli_prints_a_snippet_and_charges_the_ledger(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "d.csv"
    d = _data(3000)
    csv.write_text("income,age\n" + "\n".join(f"{a!r},{b!r}" for a, b in
                                              zip(d["income"], d["age"], strict=True)))
    led = tmp_path / "l.sqlite"
    assert main(["ledger", "init", str(led), "--budget", "1"]) == 0
    capsys.readouterr()
    base = ["bounds", "--data", str(csv), "--ledger", str(led)]
    assert main([*base, "--column", "income", "--epsilon", "0.2"]) == 0  # not declared
    out = capsys.readouterr().out
    doc = tomllib.loads(out)
    assert doc["columns"]["income"]["lower"] < doc["columns"]["income"]["upper"]
    assert "release 1" in out
    assert main([*base, "--column", "age", "--epsilon", "0.2", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["ledger_id"] == 2 and js["remaining"]["epsilon"] == pytest.approx(0.6)
    for bad in (["--column", "age", "--epsilon", "0"], ["--column", "age", "--epsilon", "5"],
                ["--column", "age", "--epsilon", "0.1", "--levels", "0.5"],
                ["--column", "age", "--epsilon", "0.1", "--seed", "1"],
                ["--column", "bad name", "--epsilon", "0.1"]):
        assert main([*base, *bad]) == 2, bad
        err = capsys.readouterr().err
        assert err.startswith("error:") and "Traceback" not in err
    assert main(["ledger", "verify", str(led)]) == 0
    assert main(["report", str(led), "--out", str(tmp_path / "r.html")]) == 0
    with Session(str(csv), None, led, schema={"columns": {"age": {"lower": 0, "upper": 1}}}) as s:
        assert s.spent.epsilon == pytest.approx(0.4)


def test_a_failure_after_the_reservation_keeps_the_charge_and_withholds_the_cause(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dpnoise.session.suggest as suggest

    def broken(*_a: object) -> None:
        raise ValueError("secret value 41234.5")

    monkeypatch.setattr(suggest, "bounded_values", broken)
    with Session(_data(500), Budget(1.0), tmp_path / "l.sqlite", schema=SCHEMA,
                 create_ledger=True) as s:
        with pytest.raises(dp.DpnoiseError) as err:
            s.suggest_bounds("age", epsilon=0.25)
        assert "41234" not in str(err.value) and "release_failed" in str(err.value)
        assert err.value.__cause__ is None and err.value.__suppress_context__
        assert s.spent.epsilon == pytest.approx(0.25)  # the charge is kept
