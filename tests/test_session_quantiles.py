"""The custodian's quantiles at the data's resolution, one level or several in one release.

* the session releases through the registry mechanisms (interval-quantile, multi-quantile),
  on the public lattice the schema implies, never outside it;
* several levels: the query language, the SQL list form and the Python API agree; the
  output is sorted; every level's error bar holds at once at the stated rate; GROUP BY
  over public keys and over keys that are not public (after partition selection);
* bad level lists are refused before anything is spent;
* the ledger: the live error bars equal the ones recomputed from the entry, replays are
  free, and a ledger written by the earlier report-noisy-max quantile still verifies and
  still gives that code's error bars.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpnoise import Budget, ParameterError, SeededRandom, Session
from dpnoise.mechanisms.multi_quantile import MultiQuantile
from dpnoise.session.answers import entry_interval

DATA = Path(__file__).parent / "data"
SCHEMA = {"dataset": {"user_id": "pid", "max_contributions": 2, "max_groups": 2,
                      "max_rows_per_group": 2, "max_rows": 5000},
          "columns": {"x": {"lower": 0, "upper": 100},
                      "g": {"categories": ["u", "v", "w"]},
                      "city": {"text": True}}}


def _data(n: int, seed: int) -> dict[str, np.ndarray]:
    r = np.random.default_rng(seed)
    return {"pid": np.arange(n).astype(str), "x": r.lognormal(3, 0.8, n).clip(0, 100),
            "g": r.choice(["u", "v", "w"], n), "city": r.choice(["a", "b"], n)}


def _rank_ok(x: np.ndarray, v: float, lo: float, hi: float) -> bool:
    """``v`` is an empirical p-quantile of ``x`` (snapped up to a lattice finer than
    1e-6) for some p in [lo, hi]: #{x < v - 1e-6} <= hi·n and #{x <= v} >= lo·n."""
    return bool(np.mean(x < v - 1e-6) <= hi + 1e-12 and np.mean(x <= v) >= lo - 1e-12)


def test_one_level_releases_on_the_fine_lattice_through_the_registry() -> None:
    data = _data(3000, 1)
    with Session(data, Budget(10), schema=SCHEMA, rng=SeededRandom(3)) as s:
        r = s.release("median x", epsilon=2.0)
        rank = r.details["rank"]
        assert rank["mechanism"] == "interval-quantile" and rank["level"] == [1, 2]
        assert rank["lattice"]["points"] > 2 ** 20  # not a 1025-point grid
        lat = rank["lattice"]
        j = (r.value - lat["lower"]) / lat["step"]
        assert j == int(j) and 0 <= j < lat["points"]
        assert abs(np.mean(data["x"] <= r.value) - 0.5) < 0.02
        lo, hi = r.interval()
        assert _rank_ok(data["x"], r.value, float(lo), float(hi))
        truth = s.true_answer("median x")
        exact = np.quantile(data["x"], 0.5, method="inverted_cdf")
        assert 0 <= float(truth) - exact < lat["step"]  # the exact median snapped up


def test_several_levels_in_every_form_sorted_with_a_level_key() -> None:
    data = _data(2000, 2)
    forms = ["quantiles x at 0.9, 0.25, 0.5 by g",
             "SELECT g, QUANTILE_CONT(x, [0.25, 0.5, 0.9]) FROM data GROUP BY g"]
    with Session(data, Budget(10), schema=SCHEMA, rng=SeededRandom(4)) as s:
        canon = {s.parse(f).canonical() for f in forms}
        assert canon == {"quantile (0.25, 0.5, 0.9) x by g"}
        for f in forms:
            r = s.release(f, epsilon=1.0)
            assert r.details["rank"]["mechanism"] == "multi-quantile"
            assert r.group_by == ("g", "level")
            assert r.group_keys[1] == (0.25, 0.5, 0.9)
            assert r.values.shape == (3, 3)
            assert np.all(np.diff(r.values, axis=1) >= 0)  # sorted in every cell
            rows = r.rows()
            assert len(rows) == 9 and rows[0][:2] == ("u", 0.25)
        assert s.ledger.remaining().epsilon == pytest.approx(8.0)  # one charge each


def test_all_levels_within_their_bars_at_once() -> None:
    """Over seeded releases, ALL levels of a release are inside their error bars together
    at >= the stated rate (within sampling error); and the bars are those of the
    mechanism's per-level bound at the lower end of the noisy count."""
    x = np.r_[np.zeros(100), np.linspace(0, 100, 1000), np.full(100, 100.0)]
    data = {"pid": np.arange(x.size).astype(str), "x": x, "g": np.array(["u"] * x.size),
            "city": np.array(["a"] * x.size)}
    conf, hits = 0.7, []
    with Session(data, Budget(1e9), schema=SCHEMA, rng=SeededRandom(5)) as s:
        for _ in range(40):
            r = s.release("quantiles x at 0.1, 0.5, 0.9", epsilon=8.0, confidence=conf)
            lo, hi = r.interval()
            assert np.all(hi - lo < 0.2)  # narrow enough to be wrong
            hits.append(all(_rank_ok(x, v, a, b)
                            for v, a, b in zip(r.values, lo, hi, strict=True)))
    assert np.mean(hits) >= conf - 0.1, np.mean(hits)


def test_joint_bound_per_level_holds_and_is_tighter_than_the_worst_denominator() -> None:
    m = MultiQuantile(epsilon=1.0, levels=(0.1, 0.5, 0.9), lower=0.0, upper=1.0,
                      grid=2.0 ** -10)
    per = m.rank_errors(1000, 0.05)
    assert per[1] < per[0] and per[0] == pytest.approx(per[2])  # the middle is one step
    rng = np.random.default_rng(6)
    x = rng.random(1000)
    xs = np.sort(np.clip(np.rint(x * 1024) / 1024, 0, 1))
    for seed in range(5):
        out = m.release(xs, rng=SeededRandom(seed))
        for y, q, e in zip(out, (0.1, 0.5, 0.9), per, strict=True):
            a, b = np.searchsorted(xs, y, "left"), np.searchsorted(xs, y, "right")
            assert max(0.0, a - q * xs.size, q * xs.size - b) <= e


def test_keys_that_are_not_public_select_groups_first() -> None:
    data = _data(1500, 7)
    with Session(data, Budget(10, 1e-3), schema=SCHEMA, rng=SeededRandom(8)) as s:
        r = s.release("quantiles x at 0.25, 0.75 by city", epsilon=2.0, delta=1e-6)
        assert r.group_by == ("city", "level")
        assert set(r.group_keys[0]) <= {"a", "b"} and r.group_keys[1] == (0.25, 0.75)
        assert r.values.shape == (len(r.group_keys[0]), 2)
        assert np.all(r.values[:, 0] <= r.values[:, 1])
        left = s.ledger.remaining()
        again = s.release("quantiles x at 0.25, 0.75 by city", epsilon=2.0, delta=1e-6,
                          replay=True)  # served with its selected groups and levels
        assert again.replayed and s.ledger.remaining() == left
        assert again.group_by == r.group_by and again.group_keys == r.group_keys
        np.testing.assert_array_equal(again.values, r.values)


@pytest.mark.parametrize("query,match", [
    ("quantiles x at 0.5, 0.5", "distinct"),
    ("quantiles x at 0.5, 1.5", "level"),
    ("quantiles x 0.5", "AT"),
    ("quantiles 0.5 x", "column"),
    ("SELECT QUANTILE_CONT(x, [0.1, 0.1]) FROM data", "distinct"),
    ("SELECT QUANTILE_CONT(x, [0.1, ]) FROM data", "level"),
    ("quantiles x at " + ", ".join(str(i / 100) for i in range(1, 70)), "at most 64"),
    # distinct levels in (0, 1) that the 1/1024 rounding merges or moves to 0: the message
    # said they were not distinct numbers in (0, 1)
    ("quantiles x at 0.00000001, 0.5", "denominator <= 1024"),
    ("quantiles x at 0.5, 0.5001", "denominator <= 1024"),
])
def test_bad_levels_are_refused_before_any_spend(query: str, match: str, tmp_path: Any) -> None:
    with Session(_data(50, 9), Budget(1), str(tmp_path / "l.ledger"), schema=SCHEMA,
                 create_ledger=True) as s:
        with pytest.raises(ParameterError, match=match):
            s.release(query, epsilon=0.5)
        assert s.history() == []


def test_ledger_entry_bars_equal_live_and_replay_is_free(tmp_path: Any) -> None:
    path = str(tmp_path / "l.ledger")
    with Session(_data(800, 10), Budget(10), path, schema=SCHEMA, create_ledger=True) as s:
        live = [s.release(q, epsilon=1.0) for q in
                ("median x by g", "quantiles x at 0.1, 0.5, 0.9")]
        again = s.release("quantiles x at 0.1, 0.5, 0.9", epsilon=1.0, replay=True)
        assert again.replayed and np.array_equal(again.values, live[1].values)
        entries = {e.id: e for e in s.history()}
        for r in live:
            for conf in (0.95, 0.8):
                got = entry_interval(entries[r.ledger_id], conf)
                want = r.interval(conf)
                np.testing.assert_array_equal(got[0], want[0])
                np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(again.interval(0.8)[0], live[1].interval(0.8)[0])
    from dpnoise.ledger import verify_ledger

    assert verify_ledger(path).ok


def test_a_ledger_of_report_noisy_max_quantiles_still_verifies(tmp_path: Any) -> None:
    """tests/data/ledger_noisy_max_quantile.sqlite was written by the earlier quantile
    (report noisy max over 1025 public candidates): a median and a 0.9-quantile by g.  It
    verifies, and its entries' error bars are the ones that code printed then."""
    from dpnoise.ledger import Ledger, verify_ledger

    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "ledger_noisy_max_quantile.sqlite", path)
    assert verify_ledger(path).ok
    printed = {1: [[0.3940520446096654, 0.6059479553903345],
                   [0.41428571428571426, 0.5857142857142857]],
               2: [[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
                   [[0.08000000000000007, 0.0, 0.0], [1.0, 1.0, 1.0]]]}
    with Ledger(path) as led:
        entries = {e.id: e for e in led.entries()}
    for rid, bars in printed.items():
        assert entries[rid].parameters["plans"]["rank"]["mechanism"] == "noisy-max-quantile"
        for conf, want in zip((0.95, 0.8), bars, strict=True):
            got = entry_interval(entries[rid], conf)
            np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=0, atol=1e-15)


def test_sparse_buckets_merge_clamp_and_select() -> None:
    from dpnoise.session.buckets import SparseBuckets

    b = SparseBuckets.build((3,), [2, 0, 2, 0, 1], [5, 9, 5, 1, 3], [1, 2, 3, 0, 4], top=7)
    assert b.cell.tolist() == [0, 1, 2] and b.index.tolist() == [7, 3, 5]  # 9 -> 7
    assert b.count.tolist() == [2, 4, 4] and b.rows().tolist() == [2, 4, 4]
    kept = b[np.array([True, False, True])]
    assert kept.shape == (2,) and [c[0].tolist() for c in kept.cells()] == [[7], [5]]


@pytest.mark.parametrize("query", ["median x", "quantiles x at 0.2, 0.5, 0.7"])
def test_the_plan_draws_what_the_registry_mechanism_draws(query: str) -> None:
    """Wiring: a cell's rows per lattice index give the very draw the registry mechanism
    makes on the rows themselves (same words), so the verified law is the released one."""
    from dpnoise.session.buckets import SparseBuckets

    with Session(_data(10, 1), Budget(10), schema=SCHEMA) as s:
        rank = dict(s.plans(query, 1.0))["rank"]
    idx = np.random.default_rng(3).integers(0, rank.top + 1, 400)
    idx[:100] = idx[0]  # ties
    uniq, counts = np.unique(idx, return_counts=True)
    buckets = SparseBuckets.build((1,), np.zeros(uniq.size), uniq, counts, rank.top)
    for seed in range(3):
        got = rank.record(rank.release(buckets, SeededRandom(seed))).ravel().tolist()
        rows = rank.lower + idx.astype(float) * rank.step
        m = rank.mechanism
        want = m.release_indices(rows, SeededRandom(seed)) if rank.multi else \
            [m.release_index(rows, SeededRandom(seed))]
        assert got == list(want)
