"""Releases as DataFrames: pandas, polars and Arrow carry exactly the released cells (key
columns, value, error bars) and the release's public facts as metadata; a group that
partition selection suppressed never appears; ``rows()`` and ``columns()`` agree; the
custodian-only true answer is its own type, which the table writer and the report refuse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpnoise
from dpnoise import Budget, ParameterError, SeededRandom, Session

from .helpers import random_columns

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

SCHEMA = {"dataset": {"max_rows": 1000},
          "columns": {"x": {"lower": 0, "upper": 10}, "g": {"categories": ["a", "b", "c"]},
                      "k": {"integer": True, "lower": 1, "upper": 3},
                      "city": {"text": True}}}


def _data(n: int = 300, seed: int = 0) -> dict[str, np.ndarray]:
    return random_columns(seed, n, x=lambda r, n: r.uniform(0, 10, n),
                          g=lambda r, n: r.choice(["a", "b", "c"], n),
                          k=lambda r, n: r.integers(1, 4, n).astype(float),
                          city=lambda r, n: r.choice(["big"] * 50 + ["tiny"], n))


QUERIES = ["count", "mean x", "count by g", "sum x by g, k", "median x by g", "variance x by k",
           "count by city", "mean x by city"]


def _check(r: Any) -> None:
    cols = r.columns()
    rows = r.rows()
    want = pd.DataFrame(rows, columns=cols)  # the one-liner works
    df = r.to_pandas()
    assert list(df.columns) == cols and len(df) == r.values.size
    pd.testing.assert_frame_equal(df, want, check_dtype=False)
    np.testing.assert_array_equal(df[r.stat].to_numpy(), r.values.ravel())
    lo, hi = r.interval()
    ends = ["level_low", "level_high"] if r.stat == "quantile" else ["low", "high"]
    np.testing.assert_array_equal(df[ends[0]].to_numpy(), np.ravel(lo))
    np.testing.assert_array_equal(df[ends[1]].to_numpy(), np.ravel(hi))
    for g, keys in r.key_arrays().items():
        assert df[g].tolist() == keys.tolist()
    assert df.attrs["confidence"] == r.confidence and df.attrs["guarantee"] == r.guarantee
    assert df.attrs["epsilon"] == r.epsilon and df.attrs["ledger_id"] == r.ledger_id
    table = r.to_arrow()
    assert table.column_names == cols
    assert table.to_pandas().equals(df.astype({c: table.to_pandas()[c].dtype for c in cols}))
    meta = table.schema.metadata
    assert float(meta[b"confidence"]) == r.confidence
    assert meta[b"guarantee"].decode() == r.guarantee and meta[b"private"] == b"true"
    pframe = r.to_polars()
    assert pframe.columns == cols and pframe.height == len(df)
    assert pframe.attrs["guarantee"] == r.guarantee
    for c in cols:
        assert pframe[c].to_list() == df[c].tolist()


@pytest.mark.parametrize("query", QUERIES)
def test_every_statistic_converts_with_keys_values_and_error_bars(query: str) -> None:
    with Session(_data(), Budget(50.0, 1e-3), schema=SCHEMA, rng=SeededRandom(1)) as s:
        r = s.release(query, epsilon=2.0, delta=1e-5 if "city" in query else 0.0)
        _check(r)
        if r.group_by and r.group_by[0] == "g":
            assert sorted(set(r.to_pandas()["g"])) == ["a", "b", "c"]


def test_suppressed_groups_never_appear() -> None:
    """'tiny' has ~6 persons: partition selection at this epsilon suppresses it (with
    overwhelming probability at this seed), and the frames have no row for it at all --
    not a row of missing values."""
    with Session(_data(), Budget(50.0, 1e-3), schema=SCHEMA, rng=SeededRandom(3)) as s:
        truth = s.true_table("count by city").to_pandas()
        assert sorted(truth["city"]) == ["big", "tiny"]  # the custodian sees both
        r = s.release("count by city", epsilon=0.5, delta=1e-6)
        assert r.group_keys == (("big",),)
        for df in (r.to_pandas(), r.to_polars().to_pandas(), r.to_arrow().to_pandas()):
            assert df["city"].tolist() == ["big"] and not df.isna().any().any()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), eps=st.floats(0.05, 3.0))
def test_selected_keys_are_exactly_the_released_ones(seed: int, eps: float) -> None:
    with Session(_data(200, seed % 7), Budget(100.0, 1e-2), schema=SCHEMA,
                 rng=SeededRandom(seed)) as s:
        r = s.release("mean x by city", epsilon=eps, delta=1e-4)
        df = r.to_pandas()
        assert df["city"].tolist() == list(r.group_keys[0])
        assert len(df) == r.values.size == len(r.rows())


def test_executor_written_and_replayed_releases(tmp_path: Path) -> None:
    led = tmp_path / "l.sqlite"
    dpnoise.Ledger(led, budget=Budget(2.0), create=True).close()
    with Session(_data(), None, str(led), schema=SCHEMA, replay=True) as s:
        r1 = s.release("count by g", epsilon=0.5)
        r2 = s.release("count by g", epsilon=0.5)
        assert r2.replayed and r2.has_intervals()
        pd.testing.assert_frame_equal(r1.to_pandas(), r2.to_pandas())
        assert r2.to_pandas().attrs["replayed"] is True
    fake = dpnoise.Release("q", "q", "count", (), (), np.zeros(0), "m", 1.0, 0.0, "g", 1,
                           details={"written": {"output": "/x"}})
    with pytest.raises(ParameterError, match="executors"):
        fake.to_pandas()


def test_true_answer_is_a_distinct_type_refused_by_output_and_report(tmp_path: Path) -> None:
    from dpnoise.report import release_html
    from dpnoise.session.table import write_table

    with Session(_data(), Budget(5.0), schema=SCHEMA) as s:
        t = s.true_table("mean x by g")
        np.testing.assert_array_equal(t.true_values, s.true_answer("mean x by g"))
        assert isinstance(t, dpnoise.TrueAnswer) and not isinstance(t, dpnoise.Release)
        df = t.to_pandas()
        assert list(df.columns) == ["g", "true_value"] and df.attrs["private"] is False
        assert t.to_arrow().schema.metadata[b"private"] == b"false"
        assert t.to_polars().columns == ["g", "true_value"]
        assert t.rows() == list(zip(["a", "b", "c"], df["true_value"].tolist(), strict=True))
        with pytest.raises(ParameterError, match="TRUE answer"):
            write_table(t, str(tmp_path / "t.csv"))
        with pytest.raises(ParameterError, match="TRUE answer"):
            release_html(t)
        with pytest.raises(ParameterError, match="no error bars"):
            t.interval()
        assert not (tmp_path / "t.csv").exists() and s.spent.epsilon == 0


def test_public_names_import_from_dpnoise() -> None:
    from dpnoise import Ledger, Release, Schema, TrueAnswer, Workload, WorkloadResult

    assert Ledger is dpnoise.session.Ledger and Schema is dpnoise.session.Schema
    for name in ("Ledger", "Release", "Schema", "TrueAnswer", "Workload", "WorkloadResult"):
        assert name in dpnoise.__all__
    assert Release and TrueAnswer and Workload and WorkloadResult


def test_a_release_that_selected_no_group_is_an_empty_table() -> None:
    """Every group below the selection threshold (one tiny city): zero rows, the columns
    and the metadata still there."""
    data = {"x": np.array([1.0, 2.0]), "g": np.array(["a", "b"]), "k": np.array([1.0, 2.0]),
            "city": np.array(["tiny", "tiny"])}
    with Session(data, Budget(5.0, 1e-3), schema=SCHEMA, rng=SeededRandom(1)) as s:
        r = s.release("mean x by city", epsilon=0.5, delta=1e-6)
        assert r.values.size == 0 and r.group_keys == ((),)
        df = r.to_pandas()
        assert list(df.columns) == ["city", "mean", "low", "high"] and len(df) == 0
        assert r.to_arrow().num_rows == 0 and r.to_polars().height == 0
        assert df.attrs["guarantee"] == r.guarantee
