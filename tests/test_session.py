"""dpnoise.Session: honest sensitivity, outputs in range, the verifier on every plan,
DuckDB over csv / parquet / duckdb files, GROUP BY over public keys, CLI and demo."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from dpnoise import Budget, BudgetExceededError, ParameterError, SeededRandom, Session, verify
from dpnoise.cli import main
from dpnoise.demo import run_demo, survey_paths
from dpnoise.ledger import Ledger
from dpnoise.session.adapter import MECHANISMS, Target, plan

from .helpers import assert_removal_within_plan

DATA, SCHEMA = survey_paths()


def _survey() -> dict[str, np.ndarray]:
    with DATA.open() as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([r[k] for r in rows]) if k == "region" else
            np.array([float(r[k]) for r in rows]) for k in rows[0]}


def test_true_answers_are_clamped_statistics() -> None:
    d = _survey()
    with Session(DATA, Budget(1.0)) as s:  # schema found next to the data (survey.toml)
        assert s.true_answer("count").item() == d["age"].size
        assert s.true_answer("count where age > 30 and smoker = 1").item() == \
            int(np.sum((d["age"] > 30) & (d["smoker"] == 1)))
        inc = np.clip(d["income"], 0, 250_000)
        assert s.true_answer("sum income").item() == pytest.approx(inc.sum())
        assert d["income"].max() > 250_000  # so the clamp is really exercised
        assert s.true_answer("mean income where region = 'east'").item() == \
            pytest.approx(inc[d["region"] == "east"].mean())
        hist = s.true_answer("histogram region")
        assert hist.tolist() == [int(np.sum(d["region"] == r))
                                 for r in ("north", "south", "east", "west")]


@pytest.mark.parametrize("seed", range(4))
def test_outputs_stay_in_their_valid_range(seed: int) -> None:
    with Session(DATA, Budget(10.0), rng=SeededRandom(seed)) as s:
        c = s.release("count where age > 90", epsilon=0.01).value  # tiny count, huge noise
        assert isinstance(c, int) and 0 <= c <= 5000
        h = s.release("histogram household_size", epsilon=0.01).values
        assert h.dtype == np.int64 and h.shape == (8,) and h.min() >= 0 and h.max() <= 5000
        t = s.release("sum satisfaction where age > 90", epsilon=0.01).value
        assert 0 <= t <= 5000 * 10
        m = s.release("mean age by region, smoker", epsilon=0.05).values
        assert m.shape == (4, 2) and m.min() >= 18 and m.max() <= 95


def test_accurate_at_large_epsilon() -> None:
    with Session(DATA, Budget(1000.0), rng=SeededRandom(1)) as s:
        for q in ("count", "mean age", "sum income by region", "mean satisfaction by smoker"):
            true = s.true_answer(q)
            got = s.release(q, epsilon=100.0).values
            assert np.allclose(got, true, rtol=1e-3, atol=5), q


def _people() -> dict[str, np.ndarray]:
    """Individuals 0..9; individual 3 owns 6 rows, individual 7 owns 3 extreme rows."""
    uid = np.array([0, 1, 2, 3, 3, 3, 3, 3, 3, 4, 5, 6, 7, 7, 7, 8, 9])
    x = np.array([5, 1, 9, 10, 10, 10, 10, 0, 10, 3, 4, 2, -20, 50, 50, 7, 8], float)
    g = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 1, 2, 0, 0])
    return {"uid": uid, "x": x, "g": g}


SCHEMA_K = {"dataset": {"user_id": "uid", "max_contributions": 2},
            "columns": {"x": {"lower": -5, "upper": 10},
                        "g": {"integer": True, "lower": 0, "upper": 2}}}


@pytest.mark.parametrize("query", ["count", "count where x > 4", "sum x", "mean x",
                                   "histogram g", "sum x by g", "mean x by g"])
def test_sensitivity_is_honest_for_removing_any_individual(query: str) -> None:
    """Removing one individual moves every primitive by no more than the calibrated bound
    (L1 over cells in units of the per-cell sensitivity, i.e. the loss the triangle
    inequality charges).  Fails if contribution bounding or clamping were skipped."""
    data = _people()
    s = Session(data, Budget(1.0), schema=SCHEMA_K)
    q = s.parse(query)
    plans = dict(s._plans(q, 1.0, 0.0, None))
    full = s.true_components(q)
    for who in np.unique(data["uid"]):
        keep = data["uid"] != who
        assert_removal_within_plan(q, plans, full, data, keep, SCHEMA_K, (query, who))


def test_sensitivity_test_would_catch_unbounded_contributions() -> None:
    data = _people()
    unbounded = {"columns": SCHEMA_K["columns"]}  # forgetting user_id: 1 row = 1 person
    s = Session(data, Budget(1.0), schema=unbounded)
    q = s.parse("count")
    full = s.true_components(q)["count"]
    keep = data["uid"] != 3
    s2 = Session({k: v[keep] for k, v in data.items()}, Budget(1.0), schema=unbounded)
    part = s2.true_components(q)["count"]
    assert full - part == 6 > dict(s._plans(q, 1.0, 0.0, None))["count"].spec.sensitivity


def test_contribution_bounding_keeps_k_rows_per_individual() -> None:
    with Session(_people(), Budget(1.0), schema=SCHEMA_K) as s:
        assert s.true_answer("count").item() == 8 + 2 + 2  # 3 and 7 keep 2 rows each
        assert s.true_answer("histogram g").sum() == 12


@pytest.mark.parametrize("query", ["count", "sum x", "mean x by g", "histogram g",
                                   "count where x > 1"])
def test_every_plan_passes_the_verifier(query: str) -> None:
    with Session(_people(), Budget(1.0), schema=SCHEMA_K) as s:
        q = s.parse(query)
        plans = s._plans(q, 0.5, 0.0, None)
        assert sum(p.epsilon for _, p in plans) <= 0.5
        for _, p in plans:
            model = getattr(p.mechanism, "laplace", p.mechanism)  # clamping: post-processing
            report = verify(model)
            assert report.passed and report.epsilon <= p.spec.epsilon
            k = p.target.rows
            cells_factor = k if p.target.cells else 1
            assert p.spec.epsilon * cells_factor <= p.epsilon * (1 + 1e-12)
            if not p.target.cells:
                assert p.spec.sensitivity == k * p.target.unit


SCHEMA_1 = {"dataset": {"max_rows": 40},
            "columns": {"x": {"lower": -5, "upper": 10},
                        "g": {"integer": True, "lower": 0, "upper": 2}}}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_the_adapter_offers_is_verified(name: str) -> None:
    """Each adapter mechanism, as calibrated for real queries, passes the independent
    verifier, and its verified claim is within what the ledger charges."""
    info = MECHANISMS[name]
    delta = 1e-6 if info.needs_delta else 0.0
    checked = 0
    for schema in (SCHEMA_1, SCHEMA_K):
        with Session(_people(), Budget(1.0, 1e-5), schema=schema) as s:
            # "mean x by g" covers a count and a sum, in cells; keep slow calibrations few
            queries = ("count", "histogram g") if info.needs_delta else ("count", "mean x by g")
            for query in queries:
                q = s.parse(query)
                try:
                    plans = s._plans(q, 0.5, delta, name)
                except ParameterError:
                    continue  # e.g. an integer mechanism asked for a sum: refused, not used
                assert sum(p.epsilon for _, p in plans) <= 0.5
                assert sum(p.delta for _, p in plans) <= delta
                for _, p in plans:
                    model = getattr(p.mechanism, "laplace", p.mechanism)
                    report = verify(model, epsilons=[p.spec.epsilon])
                    assert report.passed, (name, query)
                    g = p.mechanism.guarantee
                    assert g.epsilon <= p.spec.epsilon and g.delta <= p.spec.delta
                    # (1 + 1e-12): the verifier's own float rounding, far below any real bug
                    if not info.needs_delta:
                        assert report.epsilon <= p.spec.epsilon * (1 + 1e-12)
                    else:
                        assert report.delta_at(p.spec.epsilon) <= p.spec.delta * (1 + 1e-9)
                    checked += 1
    assert checked >= 2


def test_adapter_refusals() -> None:
    t = Target("sum", 10.0, 1, False, 0.0, 100.0)
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        plan(t, epsilon=1.0, mechanism="gaussian-please")
    with pytest.raises(ParameterError, match="epsilon"):
        plan(t, epsilon=0.0)
    with pytest.raises(ParameterError, match="pure"):
        plan(t, epsilon=1.0, delta=1e-6, mechanism="laplace")
    assert set(MECHANISMS) >= {"laplace", "clamped-laplace"}


def test_group_by_releases_exactly_the_public_cells() -> None:
    data = {"k": np.array(["a", "a", "zzz", "c"]), "x": np.array([1.0, 2.0, 3.0, 4.0])}
    schema = {"columns": {"k": {"categories": ["a", "b", "c"]}, "x": {"lower": 0, "upper": 5}}}
    with Session(data, Budget(10.0), schema=schema, rng=SeededRandom(0)) as s:
        assert s.true_answer("histogram k").tolist() == [2, 0, 1]  # 'zzz' is not public
        r = s.release("histogram k", epsilon=1.0)
        assert r.values.shape == (3,) and [row[0] for row in r.rows()] == ["a", "b", "c"]


def _write_formats(tmp: Path) -> list[Path]:
    import duckdb

    src = tmp / "p.csv"
    src.write_text("age,region\n" + "\n".join(f"{20 + i % 60},{'ns'[i % 2]}"
                                              for i in range(500)) + "\n")
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_csv_auto('{src}')) TO '{tmp / 'p.parquet'}' "
                "(FORMAT PARQUET)")
    con.execute(f"ATTACH '{tmp / 'p.duckdb'}' AS d")
    con.execute(f"CREATE TABLE d.people AS SELECT * FROM read_csv_auto('{src}')")
    con.close()
    return [src, tmp / "p.parquet", tmp / "p.duckdb"]


def test_csv_parquet_duckdb_give_the_same_answers(tmp_path: Path) -> None:
    schema = {"columns": {"age": {"lower": 0, "upper": 100},
                          "region": {"categories": ["n", "s"]}}}
    answers = []
    for path in _write_formats(tmp_path):
        with Session(path, Budget(1.0), schema=schema, rng=SeededRandom(4)) as s:
            answers.append((s.true_answer("mean age by region").tolist(),
                            s.release("count where age >= 50", epsilon=0.5).value))
    assert answers[0] == answers[1] == answers[2]


def test_duckdb_table_is_named_in_sql(tmp_path: Path) -> None:
    path = _write_formats(tmp_path)[2]
    schema = {"dataset": {"table": "people"}, "columns": {"age": {"lower": 0, "upper": 100}}}
    with Session(path, Budget(1.0), schema=schema) as s:
        assert s.true_answer("SELECT COUNT(*) FROM people").item() == 500
        with pytest.raises(ParameterError, match="data set is called"):
            s.release("SELECT COUNT(*) FROM secrets", epsilon=0.1)


def test_missing_column_in_data_costs_nothing(tmp_path: Path) -> None:
    """A declared column absent from the file's header is refused when the session opens
    (the header is metadata, checked before any query), so nothing can be spent."""
    schema = {"columns": {"height": {"lower": 0, "upper": 3}}}
    led = tmp_path / "l.sqlite"
    Ledger(led, budget=Budget(1.0), create=True).close()
    for path in _write_formats(tmp_path):
        with pytest.raises(ParameterError, match=r"\['height'\] are declared in the schema "
                                                 "but absent"):
            Session(path, None, led, schema=schema)
    assert Session(path, None, led, schema={"columns": {}}).spent.epsilon == 0


def test_seeded_sessions_reproduce() -> None:
    outs = []
    for _ in range(2):
        with Session(DATA, Budget(1.0), rng=SeededRandom(9)) as s:
            outs.append(s.release("mean income by region", epsilon=0.5).values)
    assert np.array_equal(outs[0], outs[1])


def test_many_groups_vectorised() -> None:
    n_keys = 100_000
    g = np.random.default_rng(0)
    data = {"k": g.integers(0, n_keys, 300_000), "x": g.random(300_000)}
    schema = {"columns": {"k": {"integer": True, "lower": 0, "upper": n_keys - 1},
                          "x": {"lower": 0, "upper": 1}}}
    with Session(data, Budget(2.0), schema=schema, rng=SeededRandom(0)) as s:
        r = s.release("mean x by k", epsilon=1.0)
        assert r.values.shape == (n_keys,) and r.values.min() >= 0 and r.values.max() <= 1
        c = s.release("histogram k", epsilon=1.0)
        assert c.values.shape == (n_keys,) and c.values.dtype == np.int64
        assert abs(int(c.values.sum()) - 300_000) < 20_000


# ----------------------------------------------------------------------------- CLI
def test_cli_mechanism_form_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "laplace", "--epsilon", "1", "--seed", "2", "42"]) == 0
    assert "42 ->" in capsys.readouterr().out


def test_cli_data_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    base = ["release", "--data", str(DATA)]
    assert main([*base, "--query", "count", "--epsilon", "0.1"]) == 2  # no ledger yet
    assert "dpnoise ledger init dpnoise-ledger.sqlite" in capsys.readouterr().err
    assert not Path("dpnoise-ledger.sqlite").exists()  # never created implicitly
    assert main(["ledger", "init", "dpnoise-ledger.sqlite", "--budget", "1"]) == 0
    capsys.readouterr()
    assert main([*base, "--query", "histogram region", "--epsilon", "0.25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["columns"] == ["region", "count", "low", "high"] and len(out["rows"]) == 4
    assert all(r[2] <= r[1] <= r[3] for r in out["rows"])  # error bars
    assert out["remaining"]["epsilon"] == 0.75
    assert main([*base, "--query", "mean income by region", "--epsilon", "0.5",
                 "--bounds", "income=0:100000"]) == 0
    text = capsys.readouterr().out
    assert "remaining:  epsilon=0.25" in text and "north" in text
    assert main([*base, "--query", "SELECT age FROM data", "--epsilon", "0.1"]) == 2
    assert "non-aggregate" in capsys.readouterr().err
    assert main([*base, "--query", "count", "--epsilon", "0.5"]) == 2
    assert "refused, nothing spent" in capsys.readouterr().err
    assert main([*base, "--query", "count", "--epsilon", "0.1",
                 "laplace", "--epsilon", "1", "3"]) == 2
    assert "not both" in capsys.readouterr().err


def test_cli_needs_one_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release"]) == 2
    assert "MECHANISM" in capsys.readouterr().err


def test_demo_session(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_demo(rng=SeededRandom(1)) == 0
    out = capsys.readouterr().out
    for word in ("respondents", "private", "remaining budget", "refused", "served from the "
                 "ledger", "north"):
        assert word in out


# ------------------------------------------- integer counts and range-adherent sums
def test_counts_default_to_exact_integer_noise() -> None:
    with Session(DATA, Budget(2.0), rng=SeededRandom(3)) as s, \
            pytest.raises(BudgetExceededError, match="delta=0"):
        s.release("count", epsilon=0.5, delta=1e-6, mechanism="discrete-gaussian")
    with Session(DATA, Budget(2.0, 1e-5), rng=SeededRandom(3)) as s:
        r = s.release("histogram region", epsilon=0.5)
        assert r.mechanism == "geometric" and r.values.dtype == np.int64
        with pytest.raises(ParameterError, match="needs delta"):
            s.release("count", epsilon=0.5, mechanism="discrete-gaussian")
        r = s.release("count", epsilon=0.5, delta=1e-6, mechanism="discrete-gaussian")
        assert r.delta == 1e-6 and s.spent.delta == 1e-6
        with pytest.raises(ParameterError, match="integers"):
            s.release("sum income", epsilon=0.5, mechanism="geometric")
        assert s.spent.epsilon == 1.0  # the refusals cost nothing


def test_count_noise_refuses_sensitivity_above_one() -> None:
    with Session(_people(), Budget(1.0, 1e-5), schema=SCHEMA_K) as s:
        with pytest.raises(ParameterError, match="sensitivity 1 only"):
            s.release("count", epsilon=0.5, delta=1e-6, mechanism="count-noise")
        assert s.spent.epsilon == 0


def test_sums_default_to_range_laplace_only_where_it_is_more_accurate() -> None:
    with Session(DATA, Budget(2.0), rng=SeededRandom(3)) as s:
        # [0, 5000 * 250000] is wide against the noise: clamping has about half the error
        assert s.release("sum income", epsilon=0.5).mechanism == "clamped-laplace"
        r = s.release("sum income", epsilon=0.5, mechanism="range-laplace")
        assert r.mechanism == "range-laplace" and 0 <= r.value <= 5000 * 250_000
    small = {"x": np.array([0.2, 0.9, 0.4, 1.0, 0.0, 0.7, 0.5, 0.5, 0.1, 0.3])}
    schema = {"dataset": {"max_rows": 10}, "columns": {"x": {"lower": 0, "upper": 1}}}
    with Session(small, Budget(2.0), schema=schema, rng=SeededRandom(3)) as s:
        r = s.release("sum x", epsilon=0.2)  # width 10 <= 2 * 1 / 0.2
        assert r.mechanism == "range-laplace" and 0 <= r.value <= 10
        assert "centred_sum=range-laplace" in s.release("mean x", epsilon=0.2).mechanism
        assert s.release("sum x", epsilon=1.0).mechanism == "clamped-laplace"


def test_range_laplace_serves_many_cells() -> None:
    """One vectorised sampler serves every cell: a narrow range uses range-laplace at any
    number of cells, each output inside its cell's range."""
    data = {"k": np.arange(1000) % 500, "x": np.ones(1000)}
    schema = {"dataset": {"max_rows": 2},
              "columns": {"k": {"integer": True, "lower": 0, "upper": 499},
                          "x": {"lower": 0, "upper": 1}}}
    with Session(data, Budget(1.0), schema=schema) as s:
        r = s.release("sum x by k", epsilon=0.5)
        assert r.mechanism == "range-laplace" and r.values.size == 500
        assert np.all((r.values >= 0) & (r.values <= 2))
        assert s.spent.epsilon == 0.5


def test_cli_ledger_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    led = tmp_path / "l.sqlite"
    assert main(["ledger", "init", str(led), "--budget", "1"]) == 0
    assert main(["release", "--data", str(DATA), "--ledger", str(led), "--budget", "1",
                 "--query", "count", "--epsilon", "0.25"]) == 0
    capsys.readouterr()
    assert main(["ledger", str(led), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spent"]["epsilon"] == 0.25 and out["releases"][0]["query"] == "count"
    assert main(["ledger", str(tmp_path / "missing.sqlite")]) == 2
    (tmp_path / "junk.sqlite").write_bytes(b"junk" * 1000)
    assert main(["ledger", str(tmp_path / "junk.sqlite")]) == 2
    assert "LedgerError" not in capsys.readouterr().err  # a clear message, not a traceback


def test_row_bound_released_once_and_reused(tmp_path: Path) -> None:
    data = {"x": np.linspace(0, 1, 400)}
    schema = {"columns": {"x": {"lower": 0, "upper": 1}}}  # no public max_rows
    led = tmp_path / "l.sqlite"
    with Session(data, Budget(1.0), led, schema=schema, rows_epsilon=0.125,
                 create_ledger=True) as s:
        with pytest.raises(BudgetExceededError, match="row bound"):
            s.release("count", epsilon=0.95)
        assert s.spent.epsilon == 0  # N is not released in vain
        c = s.release("count where x > 0.5", epsilon=0.25)
        n = s.row_bound()
        assert n is not None and abs(n - 400) < 100 and 0 <= c.value <= n
        assert s.spent.epsilon == 0.375 and len(s.history()) == 2
        assert s.history()[0].canonical == "count"
        t = s.release("sum x", epsilon=0.25)
        assert 0 <= t.value <= n
    with Session(data, None, led, schema=schema, rows_epsilon=0.125) as s:
        assert s.row_bound() == n and s.spent.epsilon == 0.625  # replayed, not re-spent


def test_cli_flags_mechanism_and_user_bound(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    led = str(tmp_path / "l.sqlite")
    assert main(["ledger", "init", led, "--budget", "2"]) == 0
    capsys.readouterr()
    args = ["release", "--data", str(DATA), "--ledger", led, "--budget", "2",
            "--user-id", "region", "--max-contributions", "5", "--json"]
    assert main([*args, "--query", "count", "--epsilon", "0.5", "--mechanism", "laplace"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mechanism"] == "laplace"
    assert 0 <= out["rows"][0][0] <= 5000  # 4 "individuals" x 5 rows = 20 true rows
    assert main([*args, "--query", "count", "--epsilon", "0.5", "--mechanism", "nope"]) == 2
    assert "mechanism must be one of" in capsys.readouterr().err
    led2 = Session(DATA, None, led).ledger
    assert [e.parameters["plans"]["count"]["sensitivity"] for e in led2.entries()] == [5.0]
