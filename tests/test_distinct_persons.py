"""``count distinct persons``: parsing (small language, SQL, Python), refusals before any
spending, the sensitivity under the contribution caps (L-infinity 1, L1 G), the laws
verified, the ledger charge / verify / report, and the error bars' coverage.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import Budget, ParameterError, SeededRandom, Session
from dpnoise.ledger import verify_ledger
from dpnoise.mechanisms.distinct import DistinctPersonsCount
from dpnoise.mechanisms.registry import Request, build
from dpnoise.mechanisms.statistics import geometric_tail
from dpnoise.report import ledger_report
from dpnoise.session.answers import entry_interval
from dpnoise.session.distinct import DistinctQuery, count_distinct_persons
from dpnoise.session.intervals import component_interval
from dpnoise.session.query import parse_query
from dpnoise.verify import verify

SCHEMA = {"dataset": {"user_id": "pid", "max_groups": 2, "max_rows_per_group": 3,
                      "max_rows": 10**6},
          "columns": {"city": {"text": True}, "region": {"categories": ["n", "s", "e"]},
                      "age": {"lower": 0, "upper": 100}}}
NO_USER = {"dataset": {"max_rows": 10**6}, "columns": SCHEMA["columns"]}


def _data(n: int = 600, persons: int = 120, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"pid": rng.integers(0, persons, n).astype(str),
            "city": np.array([f"c{i}" for i in rng.integers(0, 4, n)]),
            "region": rng.choice(["n", "s", "e"], n),
            "age": rng.integers(0, 100, n).astype(float)}


def test_the_three_spellings_parse_to_one_query() -> None:
    small = parse_query("count distinct persons by region where age > 30")
    sql = parse_query("SELECT region, COUNT(DISTINCT pid) FROM data WHERE age > 30 "
                      "GROUP BY region")
    py = count_distinct_persons(by="region", where="age > 30")
    for q in (small, sql, py):
        assert isinstance(q, DistinctQuery) and q.stat == "distinct" and q.column is None
        assert q.canonical() == "count distinct persons by region where age > 30"
        assert parse_query(q.canonical()).canonical() == q.canonical()  # ledger replay
    assert sql.person == "pid" and small.person is None
    assert parse_query("COUNT DISTINCT PERSONS").canonical() == "count distinct persons"
    # other queries are untouched, "distinct" stays an ordinary identifier elsewhere
    assert parse_query("count distinct").column == "distinct"
    assert parse_query("SELECT COUNT(*) FROM data").stat == "count"


@pytest.mark.parametrize("text,match", [
    ("count distinct persons age", "persons only"),
    ("SELECT COUNT(DISTINCT *) FROM data", "user_id"),
    ("SELECT COUNT(DISTINCT pid, age) FROM data", "user_id"),
    ("SELECT COUNT(DISTINCT age) FROM data", "only the declared user_id"),
])
def test_bad_forms_are_refused_before_spending(text: str, match: str) -> None:
    with Session(_data(), Budget(1.0), schema=SCHEMA) as s:
        with pytest.raises(ParameterError, match=match):
            s.release(text, epsilon=0.5)
        assert s.spent.epsilon == 0 and not s.history()


def test_without_a_user_id_it_is_refused_before_spending() -> None:
    with Session(_data(), Budget(1.0, 1e-5), schema=NO_USER) as s:
        for text in ("count distinct persons", "count distinct persons by city"):
            with pytest.raises(ParameterError, match="needs a declared user_id"):
                s.release(text, epsilon=0.5, delta=1e-6)
        with pytest.raises(ParameterError, match="needs a declared user_id"):
            s.plans("count distinct persons by region", 0.5)
        assert s.spent.epsilon == 0 and s.spent.delta == 0


def test_calibrated_for_one_per_person_per_group_not_the_row_caps() -> None:
    with Session(_data(), Budget(10.0, 1e-5), schema=SCHEMA) as s:
        scalar = dict(s.plans("count distinct persons", 1.0))["count"].mechanism
        grouped = dict(s.plans("count distinct persons by region", 1.0))["count"].mechanism
        rows = dict(s.plans("count by region", 1.0))["count"].mechanism
        private = dict(s.plans("count distinct persons by city", 1.0, 1e-6))
    # ungrouped: one person is one; grouped: G = 2 cells, each by one (R = 3 plays no part)
    assert scalar.s / scalar.t <= 1.0 and scalar.s / scalar.t > 0.999
    assert grouped.s / grouped.t <= 0.5 and grouped.s / grouped.t > 0.4995
    assert rows.s / rows.t <= 1 / 6  # a row count pays G·R = 6
    sel = private["selection"]
    assert (sel.groups, sel.rows) == (2, 1)
    # the session's thresholded release is the registry mechanism's law
    reg = build("distinct-persons", Request(epsilon=1.0, delta=1e-6, options={"groups": 2}))
    assert isinstance(reg, DistinctPersonsCount)
    assert (reg.s, reg.t, reg.threshold, reg.delta) == \
        (sel.s, sel.t, sel.threshold, sel.delta_exact)
    assert reg.delta == pytest.approx(2 * (geometric_tail(reg.s, reg.t, reg.threshold - 1)
                                           + reg.rule.boundary / 2**64
                                           * (reg.rule.pmf(reg.threshold - 2))), rel=1e-9)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**6), who=st.integers(0, 29))
def test_removing_a_person_moves_at_most_g_cells_by_one(seed: int, who: int) -> None:
    """The sensitivity claim on the real aggregation path, under the caps: the true
    distinct counts with and without one person differ by 0 or 1 in at most G cells."""
    data = _data(n=150, persons=30, seed=seed)
    keep = data["pid"] != str(who)
    without = {k: v[keep] for k, v in data.items()}
    q = "count distinct persons by region"
    with Session(data, Budget(1.0), schema=SCHEMA) as s:
        a = np.asarray(s.true_answer(q))
        total = int(s.true_answer("count distinct persons"))
    with Session(without, Budget(1.0), schema=SCHEMA) as s:
        b = np.asarray(s.true_answer(q))
        total_b = int(s.true_answer("count distinct persons"))
    diff = a - b
    assert set(diff.tolist()) <= {0, 1} and int(diff.sum()) <= SCHEMA["dataset"]["max_groups"]
    assert total - total_b == int(keep.size != keep.sum())


@pytest.mark.parametrize("eps,delta,groups", [(2.0, 1e-3, 1), (2.0, 1e-3, 2)])
def test_the_thresholded_law_is_verified_independently(eps: float, delta: float,
                                                       groups: int) -> None:
    m = DistinctPersonsCount(epsilon=eps, delta=delta, groups=groups)
    assert m.rows == 1 and m.l1 == groups
    report = verify(m.privacy_model(), epsilons=[eps])
    assert report.delta_at(eps) <= m.delta * (1 + 1e-9)
    # with R = 1 the threshold is lower than a row count's with R = 3 at the same budget
    from dpnoise.mechanisms.thresholded import ThresholdedCount
    rows = ThresholdedCount(epsilon=eps, delta=delta, groups=groups, rows=3)
    assert m.keep_probability(10) > rows.keep_probability(10)
    public = build("distinct-persons", Request(epsilon=eps, options={"groups": groups}))
    assert verify(public.privacy_model(), epsilons=[eps]).delta_at(eps) <= 1e-12


def test_charged_once_in_the_ledger_and_verified_and_reported(tmp_path: Path) -> None:
    led = tmp_path / "l.sqlite"
    with Session(_data(), Budget(2.0, 1e-5, accountant="pld"), led, schema=SCHEMA,
                 create_ledger=True) as s:
        r = s.release("count distinct persons by city", epsilon=0.5, delta=1e-6)
        g = s.release("SELECT region, COUNT(DISTINCT pid) FROM data GROUP BY region",
                      epsilon=0.5)
        assert r.values.dtype.kind == "i" and g.values.dtype.kind == "i"
        assert len(s.history()) == 2
        assert s.spent.epsilon <= 1.0 + 1e-9 and s.spent.delta <= 1e-6 * (1 + 1e-9)
        entry = s.history()[1]
        assert entry.canonical == "count distinct persons by region"
        lo, hi = entry_interval(entry, 0.9)  # from the ledger alone
        assert np.array_equal(lo, g.interval(0.9)[0]) and np.array_equal(hi, g.interval(0.9)[1])
        again = s.release("count distinct persons by region", epsilon=0.5, replay=True)
        assert again.replayed and np.array_equal(again.values, g.values)
        html = ledger_report(s.ledger)
        assert "COUNT(DISTINCT pid)" in html and "count distinct persons by city" in html
    report = verify_ledger(led)
    assert report.ok and report.releases == 2, report.problem


def test_error_bars_cover_at_the_stated_rate() -> None:
    """Public keys: one release of 300 cells, each interval at 0.9; non-public keys:
    unconditional coverage of the released cells (as for row counts)."""
    conf = 0.9
    rng = np.random.default_rng(7)
    schema = {"dataset": {"user_id": "pid", "max_groups": 1, "max_rows_per_group": 2,
                          "max_rows": 10**6},
              "columns": {"k": {"integer": True, "lower": 0, "upper": 299},
                          "city": {"text": True}}}
    persons = np.repeat(np.arange(6000), 2)  # two rows each, in one cell
    k = np.repeat(rng.integers(0, 300, 6000), 2)
    data = {"pid": persons.astype(str), "k": k.astype(float),
            "city": np.array([f"c{i}" for i in k])}
    with Session(data, Budget(10, 1e-5), schema=schema, rng=SeededRandom(11)) as s:
        truth = np.asarray(s.true_answer("count distinct persons by k"))
        r = s.release("count distinct persons by k", epsilon=0.5)
        lo, hi = r.interval(conf)
        t = s.release("count distinct persons by city", epsilon=0.5, delta=1e-6)
        plan = dict(s.plans("count distinct persons by city", 0.5, 1e-6))["count"]
    missed = np.mean((truth < lo) | (truth > hi))
    assert missed <= (1 - conf) + 0.04  # binomial sd ~ 0.017 over 300 cells
    assert missed >= 0.01  # the bars are not vacuously wide
    tlo, thi = component_interval(plan, np.asarray(t.values), 1 - conf)
    by_city = dict(zip([f"c{i}" for i in range(300)], truth.tolist(), strict=True))
    tt = np.array([by_city[c] for c in t.group_keys[0]])
    assert np.sum((tt < tlo) | (tt > thi)) / 300 <= (1 - conf) + 0.04


# ------------------------------------------------------------------ the other row
OTHER_SCHEMA = {"dataset": {"user_id": "pid", "max_groups": 2, "max_rows_per_group": 1,
                            "max_rows": 10**6},
                "columns": {"city": {"text": True}, "region": {"categories": ["n", "s"]}}}


def _joint_law(sel, count, other, u: tuple[int, ...]):
    """The exact law of (every group's released value or SUPPRESSED, the other row) for
    true counts ``u``: the other row is ``Σ_{suppressed} u_g + Z2``, ``Z2`` the other
    plan's geometric law (its tails beyond ±W lumped at the window's fixed ends)."""
    from dpnoise.mechanisms.thresholded import ThresholdedCount
    m = ThresholdedCount.__new__(ThresholdedCount)  # the session's keep rule and decay
    object.__setattr__(m, "s", count.s)
    object.__setattr__(m, "t", count.t)
    object.__setattr__(m, "rule", sel.rule)
    object.__setattr__(m, "threshold", sel.threshold)
    a2 = other.s / other.t
    top = sel.threshold + 4 + int(np.ceil(25 * count.t / count.s))
    w = int(np.ceil(25 / a2))
    lo, hi = -w, 2 * sel.threshold + 8 + w  # fixed ends, the same for every input
    o = np.arange(lo, hi + 1)
    r = np.exp(-a2)
    laws = [m._group_law(int(c), top) for c in u]  # index 0: SUPPRESSED
    outs, lps = [], []
    for pattern in itertools.product((True, False), repeat=len(u)):  # suppressed or not
        code, lp = np.zeros(1, dtype=np.int64), np.zeros(1)
        for (vals, lg), off in zip(laws, pattern, strict=True):
            part = slice(0, 1) if off else slice(1, None)
            code = (code[:, None] * (top + 2) + vals[part][None, :] + 1).reshape(-1)
            lp = (lp[:, None] + lg[part][None, :]).reshape(-1)
        c = sum(x for x, off in zip(u, pattern, strict=True) if off)
        z = o - c
        p = (1 - r) / (1 + r) * np.exp(-a2 * np.abs(z))
        p[0] = r ** (c - lo) / (1 + r)  # P(Z <= lo - c)
        p[-1] = r ** (hi - c) / (1 + r)  # P(Z >= hi - c)
        with np.errstate(divide="ignore"):
            outs.append((code[:, None] * (hi - lo + 1) + (o - lo)[None, :]).reshape(-1))
            lps.append((lp[:, None] + np.log(p)[None, :]).reshape(-1))
    return np.concatenate(outs), np.concatenate(lps)


def test_the_other_row_composes_adaptively_at_its_stated_budget() -> None:
    """The exact joint law of the released groups and the other row, over neighbouring
    count vectors (a person adds <= R to each of <= G groups): delta at the release's
    epsilon within the stated delta.  Calibrating the other row at the per-group cap
    (sensitivity 1 instead of L1 = 2) instead is caught."""
    from dpnoise import Geometric
    from dpnoise.verify import DiscreteFamily

    eps, delta = 3.0, 1e-3
    with Session(_data(), Budget(10, 1e-2), schema=OTHER_SCHEMA) as s:
        plans = dict(s.plans("count distinct persons by city with other", eps, delta))
        rows = dict(s.plans("count by city with other", eps, delta))
    # R = 1 here: the row count's release is the same law
    assert rows["other"].mechanism.sensitivity == plans["other"].mechanism.sensitivity
    sel, count, other = plans["selection"], plans["count"].mechanism, plans["other"].mechanism
    assert other.sensitivity == 2  # L1 = G·R = 2 (rows) or G = 2 (persons)
    tau = sel.threshold
    pairs = []
    for x in [(0, 0), (tau - 1, 0), (tau - 1, tau - 1)]:
        for mv in [(1, 0), (1, 1)]:
            y = tuple(a + b for a, b in zip(x, mv, strict=True))
            pairs += [(x, y), (y, x)]
    total = plans["count"].epsilon + plans["other"].epsilon
    assert total == pytest.approx(eps)

    def report(oth):
        law = functools.lru_cache(maxsize=None)(lambda u: _joint_law(sel, count, oth, u))
        fam = DiscreteFamily(inputs=[], sensitivity=2.0, pairs=pairs, law=law)
        return verify(fam, epsilons=[total]).delta_at(total)

    assert report(other) <= sel.delta_exact * (1 + 1e-6) + 1e-12
    cheat = Geometric(epsilon=plans["other"].epsilon, sensitivity=1, lower=0, upper=None)
    assert report(cheat) > 10 * sel.delta_exact


def test_the_other_row_is_its_own_noisy_count_in_one_reservation(tmp_path: Path) -> None:
    sizes = [40] * 6 + [2] * 150
    city = np.repeat([f"c{i}" for i in range(len(sizes))], sizes)
    data = {"pid": np.arange(city.size).astype(str), "city": city,
            "region": np.array(["n"] * city.size)}
    with Session(data, Budget(10, 1e-5), schema=OTHER_SCHEMA, rng=SeededRandom(4)) as s:
        r = s.release("count distinct persons by city with other", epsilon=2.0, delta=1e-6)
        assert len(s.history()) == 1 and s.spent.epsilon == 2.0 and s.spent.delta <= 1e-6
        row = r.details["other_row"]
        truth = sum(n for k, n in zip([f"c{i}" for i in range(len(sizes))], sizes,
                                      strict=True) if k not in set(r.group_keys[0]))
        assert row["low"] <= truth <= row["high"]
        assert s.history()[0].components["other"] == row["value"]  # in the ledger
        assert s.history()[0].canonical == "count distinct persons by city with other"
        for bad in ("count by region with other", "sum pid by city with other"):
            with pytest.raises(ParameterError):
                s.release(bad, epsilon=0.5, delta=1e-6)
        assert len(s.history()) == 1
    led = tmp_path / "l.sqlite"
    with Session(data, Budget(10, 1e-5), led, schema=OTHER_SCHEMA, create_ledger=True) as s:
        r = s.release("count by city with other", epsilon=2.0, delta=1e-6)
        assert s.history()[0].components["other"] == r.details["other_row"]["value"]
        assert s.spent.epsilon == 2.0
        again = s.release("count by city with other", epsilon=2.0, delta=1e-6, replay=True)
        assert again.replayed and s.spent.epsilon == 2.0  # groups and other row, no spend
        assert again.group_keys == r.group_keys
        assert again.details["other_row"] == r.details["other_row"]
    assert verify_ledger(led).ok
