"""What custodians release beyond counts and sums -- two-dimensional bounding,
variance / standard deviation, DP quantiles, groups whose keys are not public (DP
partition selection) and error bars on every cell.

* privacy: partition selection's delta and the quantile's report-noisy-max checked by
  the verifier on exact laws over neighbouring data sets (the sensitivity property of
  each component is in test_custodian_property.py);
* accuracy against the true answer on generated data;
* coverage of the error bars over many seeded releases, for true values across the
  whole range INCLUDING its edges; for partition selection over all groups;
* an interval is a function of the output and public parameters only.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

import mpmath
import numpy as np
import pytest

from dpnoise import Budget, ParameterError, SeededRandom, Session
from dpnoise.session.adapter import Target, plan
from dpnoise.session.fixed_point import QuantileGrid
from dpnoise.session.intervals import component_interval, ratio_interval
from dpnoise.session.stats import RankPlan, SelectionPlan, geometric_tail
from dpnoise.verify import verify_neighbours

from .helpers import random_columns

SCHEMA = {"dataset": {"user_id": "pid", "max_contributions": 2, "max_groups": 2,
                      "max_rows_per_group": 2, "max_rows": 5000},
          "columns": {"x": {"lower": 0, "upper": 100},
                      "g": {"categories": ["u", "v", "w"]},
                      "city": {"text": True}}}


def _data(n: int = 3000, seed: int = 1) -> dict[str, np.ndarray]:
    cities = ["a", "b", "c"] + [f"rare{i}" for i in range(20)]
    p = np.array([0.3, 0.3, 0.3] + [0.1 / 20] * 20)
    return random_columns(
        seed, n,
        pid=lambda r, n: np.arange(n).astype(str),  # one row per person: truth is unbounded
        x=lambda r, n: r.normal(40, 15, n).clip(0, 100),
        g=lambda r, n: r.choice(["u", "v", "w"], n),
        city=lambda r, n: r.choice(cities, n, p=p))


# ------------------------------------------------------------------ accuracy
def test_statistics_are_accurate_on_generated_data() -> None:
    data = _data()
    x, g = data["x"], data["g"]
    with Session(data, Budget(100, 1e-3), schema=SCHEMA, rng=SeededRandom(7)) as s:
        var = s.release("variance x", epsilon=5).value
        assert var == pytest.approx(np.var(x, ddof=1), rel=0.05)
        assert s.true_answer("variance x") == pytest.approx(np.var(x, ddof=1), rel=1e-4)
        sd = s.release("SELECT g, STDDEV(x) FROM data GROUP BY g", epsilon=5).values
        want = [np.std(x[g == k], ddof=1) for k in ("u", "v", "w")]
        np.testing.assert_allclose(sd, want, rtol=0.05)
        med = s.release("median x", epsilon=5).value
        assert abs(np.mean(x <= med) - 0.5) < 0.03
        q9 = s.release("quantile 0.9 x by g", epsilon=5).values
        for k, v in zip(("u", "v", "w"), q9, strict=True):
            assert abs(np.mean(x[g == k] <= v) - 0.9) < 0.04
        r = s.release("count by city", epsilon=2, delta=1e-6)
        assert set(r.group_keys[0]) >= {"a", "b", "c"}
        assert not any(k.startswith("rare") for k in r.group_keys[0])  # ~5 persons each
        for k, v in zip(r.group_keys[0], r.values, strict=True):
            assert abs(v - np.sum(data["city"] == k)) < 40


def test_two_dimensional_bounding_keeps_the_documented_rows() -> None:
    """Each person keeps at most max_groups groups and max_rows_per_group rows in each,
    identically whatever the row order."""
    pid = np.array(["p"] * 9 + ["q"])
    g = np.array(["u", "u", "u", "v", "v", "v", "w", "w", "w", "u"])
    data = {"pid": pid, "x": np.arange(10.0), "g": g, "city": g}
    with Session(data, Budget(1), schema=SCHEMA) as s:
        counts = s.true_answer("count by g")
        assert counts.sum() == 2 * 2 + 1  # p: 2 groups x 2 rows; q: 1 row
        assert counts.max() <= 3
        perm = np.random.default_rng(3).permutation(10)
        with Session({k: v[perm] for k, v in data.items()}, Budget(1), schema=SCHEMA) as s2:
            np.testing.assert_array_equal(s2.true_answer("count by g"), counts)
            np.testing.assert_array_equal(s2.true_answer("sum x by g"),
                                          s.true_answer("sum x by g"))
        assert s.true_answer("count") == 3  # ungrouped: max_contributions = 2 rows of p


def test_calibration_formulas() -> None:
    with Session(_data(50), Budget(1, 1e-3), schema=SCHEMA) as s:
        (_, p), = s.plans("count by g", 1.0)
        assert p.spec.sensitivity == 1 and p.spec.epsilon == pytest.approx(1 / 4)  # G·R = 4
        (_, p), = s.plans("count", 1.0)
        assert p.spec.sensitivity == 2 and p.spec.epsilon == 1  # k = 2
        (_, p), = s.plans("count by g", 1.0, 1e-6, mechanism="discrete-gaussian")
        assert p.spec.sensitivity == 2 and p.spec.epsilon == 0.5  # R per cell, eps / G
        roles = dict(s.plans("variance x by g", 1.0))
        assert sorted(roles) == ["count", "power1", "power2"]
        assert roles["power2"].target.unit >= 50.0 ** 2  # ((hi - lo)/2)^2 per row
        roles = dict(s.plans("median x by g", 1.0))
        assert roles["rank"].delta_u == 2 and roles["rank"].cell_epsilon == pytest.approx(
            0.75 / 2)
        roles = dict(s.plans("count by city", 1.0, 1e-6))
        sel = roles["selection"]
        assert sel.groups == 2 and sel.delta_exact <= 1e-6
        # thresholded on the count's own noise: δ = G·P(Z >= τ − R), τ the smallest such
        R = sel.rows
        assert sel.delta_exact >= 2 * geometric_tail(sel.s, sel.t, sel.threshold - R)
        assert 2 * geometric_tail(sel.s, sel.t, sel.threshold - R - 1) > 1e-6  # smallest τ
        assert (sel.s, sel.t) == (roles["count"].mechanism.s, roles["count"].mechanism.t)
        sel = dict(s.plans("sum x by city", 1.0, 1e-6))["selection"]  # a separate selection
        assert sel.groups == 2 and sel.delta_exact <= 1e-6
        assert 2 * geometric_tail(sel.s, sel.t, sel.threshold - 2) > 1e-6  # smallest τ
        with pytest.raises(ParameterError, match="delta > 0"):
            s.plans("count by city", 1.0)
        with pytest.raises(ParameterError, match="one GROUP BY column"):
            s.plans("count by city, g", 1.0, 1e-6)
        with pytest.raises(ParameterError, match="level"):
            s.plans("quantile 1.5 x", 1.0)


# ------------------------------------------------------------- verifier checks
def _geometric_pmf(s: int, t: int, z: int) -> Any:
    r = mpmath.exp(-mpmath.mpf(s) / t)
    return (1 - r) / (1 + r) * r ** abs(z)


def test_partition_selection_delta_is_exact_and_verified() -> None:
    """Two groups (max_groups = 2), data sets = persons per group; the exact law of the
    release decisions, computed here from the geometric pmf (not from the plan's tail
    formula), on every neighbour pair: verified (epsilon, delta) within the claim, and
    the claimed delta is the exact probability a one-person group survives, x G."""
    sel = SelectionPlan(epsilon=1.0, delta=1e-4, groups=2)
    with mpmath.workdps(40):
        def survive(u: int) -> Any:
            if u == 0:
                return mpmath.mpf(0)
            need = sel.threshold - u  # P(Z >= need)
            return mpmath.nsum(lambda z: _geometric_pmf(sel.s, sel.t, int(z)),
                               [need, mpmath.inf])

        p1 = survive(1)
        assert float(2 * p1) <= sel.delta_exact <= float(2 * p1) * (1 + 1e-12)

        def law(d: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
            a, b = survive(d[0]), survive(d[1])
            outs, logs = [], []
            for ra in (0, 1):
                for rb in (0, 1):
                    pr = (a if ra else 1 - a) * (b if rb else 1 - b)
                    outs.append(f"{ra}{rb}")
                    logs.append(float(mpmath.log(pr)) if pr > 0 else -math.inf)
            return np.array(outs), np.array(logs)

        counts = range(0, sel.threshold + 4)
        pairs = [((u, v), (u - 1, v - 1)) for u in counts for v in counts if u and v]
        pairs += [((u, v), (u - 1, v)) for u in counts for v in counts if u]
        rep = verify_neighbours(law, pairs, epsilons=[sel.epsilon],
                                claimed_epsilon=sel.epsilon, claimed_delta=sel.delta_exact)
    assert rep.passed, rep.as_dict()
    assert rep.delta_at(sel.epsilon) >= 0.5 * sel.delta_exact  # the claim is tight


def test_quantile_report_noisy_max_is_verified() -> None:
    """Exact output law of report noisy max (first maximum) over 4 candidates on small
    data sets of bucket counts; every add/remove-one-row pair: loss <= cell epsilon."""
    grid = QuantileGrid(shift=0, size=4, lo_q=0, hi_q=3, scale_exp=0)
    rp = RankPlan(grid, 0.5, epsilon=1.0, cells=False, l1=1, per_cell=1, changed=1)
    K = int(80 / (rp.s / rp.t))
    zs = np.arange(-K, K + 1)
    a = rp.s / rp.t
    pz = np.exp(-a * np.abs(zs))
    pz /= pz.sum()

    def law(counts: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        u = rp.utilities(np.array([counts]))[0].astype(np.int64)
        lo, hi = int(u.min()) - K, int(u.max()) + K
        vals = np.arange(lo, hi + 1)
        pmfs = []
        for uj in u:
            p = np.zeros(vals.size)
            p[(zs + uj) - lo] = pz
            pmfs.append(p)
        cdf = [np.cumsum(p) for p in pmfs]
        out = []
        for i in range(len(u)):
            tot = pmfs[i].copy()
            for j in range(len(u)):
                if j < i:  # strictly below v
                    tot *= np.concatenate([[0.0], cdf[j][:-1]])
                elif j > i:
                    tot *= cdf[j]
            out.append(tot.sum())
        out = np.array(out)
        return np.arange(len(u)), np.log(out / out.sum())

    sets = [c for c in itertools.product(range(3), repeat=4) if sum(c) <= 5]
    pairs = []
    for c in sets:
        for j in range(4):
            if c[j]:
                d = list(c)
                d[j] -= 1
                pairs.append((c, tuple(d)))
    rep = verify_neighbours(law, pairs, epsilons=[rp.cell_epsilon],
                            claimed_epsilon=rp.cell_epsilon)
    assert rep.passed, rep.as_dict()
    assert rep.epsilon > 0.3 * rp.cell_epsilon  # not vacuous


# ------------------------------------------------------------------ coverage
def _coverage(p: Any, truths: list[float], draws: int, conf: float, seed: int) -> list[float]:
    rng = SeededRandom(seed)
    out = []
    for t in truths:
        y = p.release(np.full(draws, t), rng)
        lo, hi = component_interval(p, y, 1 - conf)
        out.append(float(np.mean((lo <= t) & (t <= hi))))
    return out


@pytest.mark.parametrize("kind,mech,lo,hi", [
    ("count", "geometric", 0.0, 20.0),
    ("count", "laplace", 0.0, 20.0),
    ("sum", "clamped-laplace", -10.0, 30.0),
    ("sum", "range-laplace", 0.0, 4.0),
])
def test_error_bars_cover_across_the_range_including_its_edges(kind: str, mech: str,
                                                               lo: float, hi: float) -> None:
    conf = 0.9
    t = Target(kind, 1.0, 1, False, lo, hi)  # type: ignore[arg-type]
    p = plan(t, epsilon=0.7, mechanism=mech)
    truths = [lo, lo + 1, (lo + hi) / 2, hi - 1, hi]
    draws = 40 if mech == "range-laplace" else 1500
    cov = _coverage(p, truths, draws, conf, seed=11)
    slack = 3 * math.sqrt(conf * (1 - conf) / draws)
    assert min(cov) >= conf - slack, (mech, cov)


def test_mean_error_bars_cover_by_union_bound() -> None:
    conf, draws, half = 0.9, 800, 5.0
    cnt = plan(Target("count", 1.0, 1, False, 0.0, 50.0), epsilon=0.5)
    sm = plan(Target("sum", half, 1, False, -50 * half, 50 * half), epsilon=0.5,
              mechanism="clamped-laplace")
    rng = SeededRandom(5)
    for n, mean in [(0, 0.0), (1, 5.0), (10, -5.0), (40, 2.0), (50, 5.0)]:
        s_true = n * mean
        c = cnt.release(np.full(draws, n), rng)
        s = sm.release(np.full(draws, s_true), rng)
        lo, hi = ratio_interval(component_interval(cnt, c, (1 - conf) / 2),
                                component_interval(sm, s, (1 - conf) / 2), -half, half)
        truth = mean if n else 0.0
        assert np.mean((lo <= truth) & (truth <= hi)) >= conf - 0.03


def test_session_error_bars_cover_every_statistic() -> None:
    """Releases through the session (seeded), small data, true answers at the edges."""
    conf = 0.8
    data = {"pid": np.arange(30).astype(str), "x": np.r_[np.zeros(20), np.full(10, 100.0)],
            "g": np.array(["u"] * 15 + ["v"] * 15), "city": np.array(["a"] * 30)}
    hits: dict[str, list[bool]] = {}
    with Session(data, Budget(1e9, 0.5), schema=SCHEMA, rng=SeededRandom(2)) as s:
        for q in ["count by g", "sum x by g", "mean x by g", "variance x", "stddev x"]:
            truth = np.asarray(s.true_answer(q), float).ravel()
            for _ in range(30):
                r = s.release(q, epsilon=0.3, confidence=conf)
                lo, hi = (np.asarray(a, float).ravel() for a in r.interval())
                hits.setdefault(q, []).extend(((lo <= truth + 1e-9)
                                               & (truth <= hi + 1e-9)).tolist())
        # quantile: the level interval holds the level at which the released value sits
        x = data["x"]
        for _ in range(40):
            r = s.release("median x", epsilon=0.3, confidence=conf)
            lo, hi = r.interval()
            v = r.value
            below, at_most = np.mean(x < v), np.mean(x <= v)
            hits.setdefault("median", []).append(bool(below <= hi and at_most >= lo))
    for q, h in hits.items():
        assert np.mean(h) >= conf - 0.1, (q, np.mean(h))


def test_partition_selection_coverage_over_all_groups() -> None:
    """Released groups: the count's interval holds the truth; groups NOT released: at
    most ``suppressed_bound`` persons -- over every group of the data, not only the
    released ones."""
    conf = 0.9
    sel = SelectionPlan(epsilon=1.0, delta=1e-5, groups=1)
    cnt = plan(Target("count", 1.0, 1, True, 0.0, math.inf), epsilon=1.0)
    persons = np.repeat(np.arange(0, 3 * sel.threshold), 20)
    rng = SeededRandom(9)
    keep = sel.release(persons, rng)
    y = cnt.release(persons[keep], rng)
    lo, hi = component_interval(cnt, y, 1 - conf)
    ok_released = (lo <= persons[keep]) & (persons[keep] <= hi)
    ok_hidden = persons[~keep] <= sel.suppressed_bound(1 - conf)
    assert (ok_released.sum() + ok_hidden.sum()) / persons.size >= conf - 0.02
    assert ok_hidden.mean() >= conf - 0.02


# ------------------------------------------------------------ output only
def test_interval_depends_only_on_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two data sets with different true answers; when the mechanisms happen to return
    the same outputs, the error bars are identical."""
    from dpnoise.session import adapter, interval_rank

    monkeypatch.setattr(adapter.Plan, "release",
                        lambda self, truth, rng: np.full(np.shape(truth), 7,
                                                         dtype=np.int64 if
                                                         self.target.integer else float))
    monkeypatch.setattr(interval_rank.IntervalRankPlan, "release",
                        lambda self, buckets, rng: np.full(buckets.shape, 42.0))
    out = []
    for seed in (1, 2):
        with Session(_data(200, seed), Budget(100, 1e-3), schema=SCHEMA) as s:
            row = []
            for q in ["count by g", "sum x", "mean x by g", "variance x", "median x by g"]:
                r = s.release(q, epsilon=1.0)
                row.append(r.interval(0.9))
            assert not np.array_equal(s.true_answer("sum x"), 0)
            out.append((row, s.true_answer("mean x by g")))
    (a, ta), (b, tb) = out
    assert not np.allclose(ta, tb)
    for (l1, h1), (l2, h2) in zip(a, b, strict=True):
        np.testing.assert_array_equal(l1, l2)
        np.testing.assert_array_equal(h1, h2)


def test_range_laplace_family_is_stochastically_increasing() -> None:
    """The bisection in component_interval assumes P(Y <= y | t) decreases in t."""
    p = plan(Target("sum", 1.0, 1, False, 0.0, 4.0), epsilon=0.7, mechanism="range-laplace")
    ts = np.linspace(0, 4, 9)
    for y in (0.0, 1.3, 4.0):
        cdfs = [float(np.asarray(p.mechanism.noise(t).cdf(y)).reshape(-1)[0]) for t in ts]
        assert all(a >= b - 1e-12 for a, b in itertools.pairwise(cdfs))


# ------------------------------------------------- quantile error bars (rank bound)
def test_rank_error_is_the_noisy_max_utility_tail_and_tight() -> None:
    """The worst case of the bound: one candidate with u = 0, every other at
    u = -(E + 1) (e.g. a gap in the data).  Report noisy max with the exact sampler
    releases a candidate below -E with frequency <= beta; at u = -E (one step less) it
    exceeds beta -- so E is the smallest valid integer.  It is about half the earlier
    joint bound over all |Z_j|."""
    from dpnoise.exact.discrete_laplace import discrete_laplace
    from dpnoise.exact.words import WordStream
    from dpnoise.mechanisms.geometric import rational_below
    from dpnoise.session.stats import rank_error, tail_index

    s, t = rational_below(0.3)
    m, beta, n = 257, 0.1, 3000
    e = rank_error(s, t, m, beta)
    z = discrete_laplace(WordStream(SeededRandom(3)), s, t, n * m).reshape(n, m)
    sigma = math.sqrt(beta * (1 - beta) / n)
    fails = []
    for gap in (e + 1, e):
        u = np.full(m, -gap)
        u[m // 2] = 0
        fails.append(float(np.mean(np.argmax(u + z, axis=1) != m // 2)))
    assert fails[0] <= beta + 3 * sigma, fails
    assert fails[1] > beta - 3 * sigma, fails  # tight: one step less is not valid
    h = max(1, tail_index(s, t, beta / (2 * m)))
    assert e <= 0.6 * 2 * (h - 1)  # the old joint bound


def test_quantile_level_intervals_cover_across_the_range() -> None:
    """Medians and 0.9-quantiles released through the session on data at the low edge,
    the high edge and spread over the range: the released value is an empirical
    p-quantile of the data for some p in [level_low, level_high] at the stated rate."""
    conf = 0.8
    datasets = [np.zeros(40), np.full(40, 100.0), np.linspace(0, 100, 40),
                np.r_[np.zeros(25), np.full(15, 100.0)]]
    hits = []
    for i, x in enumerate(datasets):
        data = {"pid": np.arange(x.size).astype(str), "x": x,
                "g": np.array(["u"] * x.size), "city": np.array(["a"] * x.size)}
        with Session(data, Budget(1e9, 0.5), schema=SCHEMA, rng=SeededRandom(40 + i)) as s:
            for q in ("median x", "quantile 0.9 x"):
                for _ in range(10):
                    r = s.release(q, epsilon=0.4, confidence=conf)
                    lo, hi = r.interval()
                    v = r.value
                    # snapped up to the grid: v is a p-quantile iff #{x < v} <= p n
                    # <= #{x <= v}, with values compared on the grid (step 100/1024)
                    below = np.mean(x < v - 100 / 1024)
                    at_most = np.mean(x <= v)
                    hits.append(bool(below <= hi and at_most >= lo))
    assert np.mean(hits) >= conf - 0.07, np.mean(hits)


# ------------------------------------------- the ledger records the components
def _ledger_session(tmp_path: Any) -> Session:
    return Session(_data(300, 3), Budget(100, 1e-3), str(tmp_path / "l.ledger"),
                   schema=SCHEMA, create_ledger=True)


QUERIES = [("count by g", 0.5, 0.0), ("mean x by g", 0.5, 0.0),
           ("variance x", 0.5, 0.0), ("stddev x by g", 0.5, 0.0), ("median x", 0.5, 0.0),
           ("quantile 0.9 x by g", 0.5, 0.0), ("mean x by city", 1.0, 1e-6),
           ("median x by city", 1.0, 1e-6)]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Any], dict[int, Any]]:
    """One ledger file with a release of every statistic (shared: releases are slow)."""
    tmp = tmp_path_factory.mktemp("recorded")
    with _ledger_session(tmp) as s:
        live = [s.release(q, epsilon=e, delta=d) for q, e, d in QUERIES]
        entries = {e.id: e for e in s.history()}
    return str(tmp / "l.ledger"), live, entries


@pytest.mark.xdist_group("recorded")  # one worker builds the shared ledger
def test_past_releases_have_the_live_error_bars_and_keys(recorded: Any) -> None:
    """Every statistic: the error bars recomputed from the ledger (answer + recorded noisy
    components + public recipe) equal the live release's, and a partition-selected
    release's entry carries the released keys."""
    from dpnoise.session.answers import entry_cells, entry_interval

    _, live, entries = recorded
    for r in live:
        e = entries[r.ledger_id]
        for conf in (0.95, 0.8):
            lo, hi = entry_interval(e, conf)
            want = r.interval(conf)
            np.testing.assert_array_equal(lo, want[0])
            np.testing.assert_array_equal(hi, want[1])
        group_by, keys = entry_cells(e)
        assert group_by == r.group_by
        assert [tuple(str(v) for v in k) for k in keys] == \
            [tuple(str(v) for v in k) for k in r.group_keys]
        if "city" in r.group_by:
            assert e.released_keys == (tuple(r.group_keys[0]),)
        if r.stat in ("count", "sum"):
            assert e.components == {}  # the answer is the component: nothing duplicated
    mean = entries[live[1].ledger_id]
    assert set(mean.components) == {"count", "centred_sum"}
    assert set(entries[live[2].ledger_id].components) == {"count", "power1", "power2"}
    assert set(entries[live[4].ledger_id].components) == {"count", "rank"}


def test_record_is_in_the_hashed_complete_event(tmp_path: Any) -> None:
    """The components sit in the complete event's body: editing them breaks the chain."""
    import json
    import sqlite3

    from dpnoise.ledger import verify_ledger

    with _ledger_session(tmp_path) as s:
        s.release("mean x by city", epsilon=1.0, delta=1e-6)
    path = str(tmp_path / "l.ledger")
    con = sqlite3.connect(path)
    seq, body = con.execute("SELECT seq, body FROM events WHERE kind = 'complete'").fetchone()
    rec = json.loads(body)["record"]
    assert set(rec["components"]) == {"count", "centred_sum"} and rec["keys"]
    assert verify_ledger(path).ok
    rec["keys"] = [["forged"]]
    con.execute("DROP TRIGGER events_no_update")
    con.execute("UPDATE events SET body = ? WHERE seq = ?",
                (json.dumps({**json.loads(body), "record": rec}), seq))
    con.commit()
    con.close()
    rep = verify_ledger(path)
    assert not rep.ok and rep.seq == seq


@pytest.mark.xdist_group("recorded")  # one worker builds the shared ledger
def test_show_prints_error_bars_and_keys_for_every_statistic(
        recorded: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from dpnoise.cli import main

    path, live, _ = recorded
    for r in live:
        capsys.readouterr()
        assert main(["ledger", path, "--show", str(r.ledger_id), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["error_bars"] == "recomputed"
        lo, hi = r.interval()
        rows = out["rows"]
        assert [row[-2] for row in rows] == np.asarray(lo).ravel().tolist()
        assert [row[-1] for row in rows] == np.asarray(hi).ravel().tolist()
        if r.group_by:
            assert [row[0] for row in rows] == [str(v) for v in r.key_arrays()[r.group_by[0]]]
    assert main(["ledger", path, "--show", str(live[-2].ledger_id)]) == 0
    text = capsys.readouterr().out
    assert "partition selection" in text and "low" in text
    # every released key stands in the table as a cell of its own
    for k in live[-2].group_keys[0]:
        assert re.search(rf"(^|\s){re.escape(str(k))}(\s|$)", text, re.MULTILINE), k
    assert main(["ledger", path, "--show", str(live[4].ledger_id)]) == 0
    assert "level_low" in capsys.readouterr().out


def test_entry_without_components_says_so(tmp_path: Any,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A ledger written before components were recorded (complete event without them),
    and a table larger than RECORD_MAX_CELLS: no error bars, said plainly."""
    from dpnoise.cli import main
    from dpnoise.ledger import records as ledger_module
    from dpnoise.session.answers import entry_interval

    with _ledger_session(tmp_path) as s:
        r = s.release("mean x by g", epsilon=0.5)
        e = next(x for x in s.history() if x.id == r.ledger_id)
        rid = s.ledger.reserve(epsilon=0.5, delta=0.0, query=e.query, canonical=e.canonical,
                               query_key="k", dataset=e.dataset, mechanism=e.mechanism,
                               parameters=e.parameters, guarantee=e.guarantee)
        s.ledger.complete(rid, e.answer)  # as an older dpnoise did: no record
        monkeypatch.setattr(ledger_module, "RECORD_MAX_CELLS", 2)
        big = s.release("mean x by g", epsilon=0.5)  # 3 cells > 2
        old, large = (next(x for x in s.history() if x.id == i) for i in (rid, big.ledger_id))
    for entry, why in ((old, "recorded before"), (large, "3 cells")):
        assert entry.components is None and why in entry.record_note
        with pytest.raises(ParameterError, match="components not recorded"):
            entry_interval(entry)
    assert main(["ledger", str(tmp_path / "l.ledger"), "--show", str(rid)]) == 0
    out = capsys.readouterr().out
    assert "no error bars" in out and "components not recorded" in out
    assert out.splitlines()[2].split()[:2] == ["g", "answer"]  # cells still labelled


def test_replayed_release_keeps_its_error_bars() -> None:
    with Session(_data(200, 4), Budget(100, 1e-3), schema=SCHEMA, rng=SeededRandom(6),
                 replay=True) as s:
        first = s.release("median x by g", epsilon=1.0)
        again = s.release("median x by g", epsilon=1.0)
        assert again.replayed and s.spent.epsilon == 1.0
    for a, b in zip(first.interval(0.9), again.interval(0.9), strict=True):
        np.testing.assert_array_equal(a, b)
