"""The Spark engine: the same plan, the same answers, the same hardening.

One local SparkSession serves the whole test session (the ``spark`` fixture in
conftest.py: local[2], ANSI mode on); tables are tiny so that the Spark tests stay well
under two minutes.  Without a JVM they are skipped -- and FAIL when CI=true.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import Budget, DpnoiseError, ParameterError, SeededRandom, Session
from dpnoise.cli import main
from dpnoise.session.aggregation import compile_query, encoding_parts, encoding_text
from dpnoise.session.query import parse_query
from dpnoise.session.schema import Schema
from tests import test_custodian_property as prop
from tests.test_custodian_attacks import TEXT_TO_NUMBER, write
from tests.test_custodian_frames import QUERIES, ROWS, SCHEMA

# one xdist worker runs every Spark test, so one local SparkSession serves them all
pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.xdist_group("spark")]


#: the two ways a client reaches Spark: a classic session in this process, and Spark
#: Connect (a gRPC client of the test JVM's Connect server, made from its sc:// URL)
VIA = ["classic", "connect"]


def _via(via: str) -> dict[str, Any]:
    """The engine options that reach Spark ``via`` classic or Spark Connect."""
    from tests.conftest import CONNECT, _no_spark

    if via == "classic":
        return {}
    if "url" not in CONNECT:
        _no_spark('the Spark Connect client is not installed (pip install "pyspark[connect]")')
    return {"spark_remote": CONNECT["url"]}


def _pair(path: Any, schema: dict[str, Any], **spark_opts: Any) -> tuple[Session, Session]:
    return (Session(path, Budget(1.0), schema=schema),
            Session(str(path), Budget(1.0), schema=schema, engine="spark",
                    engine_options=spark_opts or None))


def _same(a: np.ndarray, b: np.ndarray, query: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, query
    if a.dtype.kind in "iu":
        np.testing.assert_array_equal(a, b, err_msg=query)  # counts: exactly
    else:
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=0, err_msg=query)


# ------------------------------------------------------------- semantics owned by dpnoise
def test_sha256_of_the_encoding_agrees_across_engines(spark: Any) -> None:
    """Contribution bounding orders rows by SHA-256 of the canonical encoding: DuckDB's
    sha256(), Spark's sha2(_, 256) and hashlib agree bit for bit."""
    import duckdb
    from pyspark.sql import functions as F  # noqa: N812

    texts = [encoding_text(v) for v in [(), (0,), (None,), (3, -4503599627370496),
                                         (1, None, 2**52), (-1, 0)]]
    want = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    con = duckdb.connect()
    duck = [con.execute("SELECT sha256($t)", {"t": t}).fetchone()[0] for t in texts]
    rows = spark.createDataFrame([(t,) for t in texts], "t string") \
        .select(F.sha2("t", 256).alias("h")).collect()
    assert duck == want
    assert [r.h for r in rows] == want


def test_text_to_number_rule_in_spark(tmp_path: Path) -> None:
    """' 5', '1e400', 'NaN', 'Infinity', '', 'abc' ...: the documented rule, with ANSI
    mode on (no cast may fail), identical to the embedded engine."""
    rows = [[i, f'"{t}"' if t != t.strip() or "," in t else t]
            for i, (t, _) in enumerate(TEXT_TO_NUMBER)]
    path = write(tmp_path, "csv", ["i", "v"], rows)
    schema = {"dataset": {"max_rows": 1000},
              "columns": {"v": {"lower": -1e9, "upper": 1e9},
                          "i": {"integer": True, "lower": 0, "upper": len(rows) - 1}}}
    duck, spark_s = _pair(path, schema)
    with duck, spark_s:
        present = spark_s.true_answer("count v by i")
        got = spark_s.true_answer("sum v by i")
        np.testing.assert_array_equal(present, duck.true_answer("count v by i"))
        np.testing.assert_array_equal(got, duck.true_answer("sum v by i"))
    for i, (text, want) in enumerate(TEXT_TO_NUMBER):
        assert present[i] == (want is not None), text


# ------------------------------------------------------------------------ equivalence
@pytest.mark.parametrize("via", VIA)
def test_every_query_form_equals_duckdb(tmp_path: Path, via: str) -> None:
    """Every query form, on typed parquet (DOUBLE columns: the typed fast path) with
    NULLs, NaN, infinities, repeated person ids and values outside the bounds: Spark's
    true answers equal DuckDB's -- in this process and through Spark Connect."""
    rows = [list(r) for r in ROWS] + [[7, math.inf, "a", 1], [7, -math.inf, "b", 1]]
    path = write(tmp_path, "parquet", ["pid", "x", "g", "k"], rows)
    duck, spark_s = _pair(path, SCHEMA, **_via(via))
    assert spark_s.engine.remote == (via == "connect")
    with duck, spark_s:
        for q in QUERIES:
            _same(duck.true_answer(q), spark_s.true_answer(q), q)


_RANDOM_TABLES = given(rows=st.lists(prop.row, min_size=0, max_size=8),
                       queries=st.lists(st.sampled_from(prop.QUERIES[:20]), min_size=2,
                                        max_size=2, unique=True),
                       per_person=st.booleans())


@settings(max_examples=8, deadline=None, derandomize=True)  # Spark is slow on 2 cores
@_RANDOM_TABLES
def test_random_tables_equal_duckdb(tmp_path_factory: pytest.TempPathFactory,
                                    rows: list[tuple[Any, ...]], queries: list[str],
                                    per_person: bool) -> None:
    """Random small csv tables full of NULLs, NaNs, text in numeric columns, undeclared
    categories and missing or repeated person ids: the same true answers."""
    _random_tables_equal(tmp_path_factory, "classic", rows, queries, per_person)


@settings(max_examples=4, deadline=None, derandomize=True)  # Spark is slow on 2 cores
@_RANDOM_TABLES
def test_random_tables_equal_duckdb_through_spark_connect(
        tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[Any, ...]],
        queries: list[str], per_person: bool) -> None:
    """The same, through Spark Connect (fewer examples: every query form is compared
    on fixed tables by test_every_query_form_equals_duckdb[connect])."""
    _random_tables_equal(tmp_path_factory, "connect", rows, queries, per_person)


def _random_tables_equal(tmp_path_factory: pytest.TempPathFactory, via: str,
                         rows: list[tuple[Any, ...]], queries: list[str],
                         per_person: bool) -> None:
    path = prop._csv(tmp_path_factory.mktemp("eq"))(rows)
    schema = prop.SCHEMA_UID if per_person else prop.SCHEMA_ROWS
    duck, spark_s = _pair(path, schema, **_via(via))
    with duck, spark_s:
        for q in queries:
            a, b = duck.true_components(q), spark_s.true_components(q)
            assert a.keys() == b.keys()
            for role in a:
                _same(a[role], b[role], f"{q} [{role}]")


def test_dataframe_source(spark: Any) -> None:
    """A pyspark DataFrame (what custodians hold) is a source like a file."""
    import pandas as pd

    from tests.test_custodian_frames import _pandas

    pdf = _pandas().astype({"pid": "float64", "k": "float64", "g": "object"})
    sdf = spark.createDataFrame(pdf)
    with Session(_pandas(), Budget(1.0), schema=SCHEMA) as duck, \
            Session(sdf, Budget(1.0), schema=SCHEMA, engine="spark") as s:
        for q in ("mean x by g", "count by k", "sum x where k >= 1"):
            _same(duck.true_answer(q), s.true_answer(q), q)
    assert isinstance(pdf, pd.DataFrame)


# ------------------------------------------------------------- the privacy property
@pytest.mark.parametrize("query", ["mean x by g", "sum x where k > 0", "histogram k"])
def test_removing_one_person_stays_within_the_calibration_on_spark(
        tmp_path: Path, query: str) -> None:
    """tests/test_custodian_property.py's check, on the Spark engine (a fixed table of
    adversarial cells; every neighbour is a new csv file)."""
    rows = [(1, "abc", "a", 1), (1, 10, "b", "2"), (None, -5, "a", 0), ("", 1e6, "zzz", 1),
            (2, "NaN", " a", 1.5), (2, 7, "b", 2), (2, 9, "b", 2), (3, "1e400", None, 3)]
    prop.check(rows, query, True, to_data=prop._csv(tmp_path),
               session_kw={"engine": "spark"})


@settings(max_examples=3, deadline=None, derandomize=True)
@given(rows=st.lists(prop.row, min_size=1, max_size=4),
       query=st.sampled_from(prop.QUERIES), per_person=st.booleans())
def test_property_random_on_spark(tmp_path_factory: pytest.TempPathFactory,
                                  rows: list[tuple[Any, ...]], query: str,
                                  per_person: bool) -> None:
    prop.check(rows, query, per_person, to_data=prop._csv(tmp_path_factory.mktemp("p")),
               session_kw={"engine": "spark"})


# --------------------------------------------------------------------- hardening
def test_glob_characters_views_directories_refused(spark: Any, tmp_path: Path) -> None:
    schema = {"columns": {"x": {"lower": 0, "upper": 1}}}
    for name in ("data[1].parquet", "a*.csv", "q?.parquet", "{a,b}.csv", "a\\b.csv"):
        with pytest.raises(ParameterError, match="glob"):
            Session(str(tmp_path / name), Budget(1.0), schema=schema, engine="spark")
    d = tmp_path / "dir.parquet"
    d.mkdir()
    with pytest.raises(ParameterError, match="partitioned=True"):
        Session(str(d), Budget(1.0), schema=schema, engine="spark")
    spark.createDataFrame([(1.0,)], "x double").createOrReplaceTempView("dp_view")
    with pytest.raises(ParameterError, match="view"):
        Session("dp_view", Budget(1.0), schema=schema, engine="spark")
    with pytest.raises(ParameterError, match="engine must be"):
        Session(str(d), Budget(1.0), schema=schema, engine="sparkle")
    with pytest.raises(ParameterError, match="engine_options"):
        Session(str(d), Budget(1.0), schema=schema, engine_options={"noise": "driver"})


def test_csv_schema_is_given_not_inferred(tmp_path: Path) -> None:
    """The header is parsed by dpnoise; every cell is text for Spark (no inference job),
    ragged rows are padded with missing values, and a declared column absent from the
    header is refused when the session opens."""
    p = tmp_path / "r.csv"
    p.write_text("x,y\n1,2\n3\n4,5,6\n\"7\",8\n")
    schema = {"columns": {"x": {"lower": 0, "upper": 10}, "y": {"lower": 0, "upper": 10}}}
    with Session(str(p), Budget(1.0), schema=schema, engine="spark") as s:
        assert s.true_answer("sum x").item() == 15.0
        assert s.true_answer("count y").item() == 3
        assert [f.dataType.simpleString() for f in s.engine.view.schema.fields] == \
            ["double", "double"]
    with pytest.raises(ParameterError, match="absent"):
        Session(str(p), Budget(1.0), schema={"columns": {"z": {"lower": 0, "upper": 1}}},
                engine="spark")


def test_failed_job_keeps_its_charge(tmp_path: Path) -> None:
    """The reservation precedes every Spark job on the data; a job that fails (here: the
    output cannot be written) keeps its charge and says nothing data-dependent.  A local
    output path that cannot be written is refused before anything is reserved, so the job
    is made to fail through a URI, which only the job itself resolves."""
    path = write(tmp_path, "parquet", ["x"], [[1.0], [2.0]])
    blocker = tmp_path / "file"
    blocker.write_text("")
    with Session(str(path), Budget(1.0), schema={"columns": {"x": {"lower": 0, "upper": 5}}},
                 engine="spark", engine_options={"noise": "executors"}) as s:
        with pytest.raises(ParameterError, match="output is required"):
            s.release("sum x", epsilon=0.25)  # refused before any spend
        assert s.spent.epsilon == 0
        with pytest.raises(ParameterError, match="does not exist"):
            s.release("sum x", epsilon=0.25, output=str(blocker / "out"))
        assert s.spent.epsilon == 0
        with pytest.raises(DpnoiseError, match="charge is kept"):
            s.release("sum x", epsilon=0.25, output=(blocker / "out").as_uri())
        assert s.spent.epsilon == 0.25


# ------------------------------------------------------------------ executor noise
def _partitioned(tmp_path: Path, keys: int) -> tuple[Path, np.ndarray]:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    truth = 40 + (np.arange(keys) % 7)
    k = np.repeat(np.arange(keys), truth)
    df = pd.DataFrame({"pid": np.arange(k.size).astype(str), "k": k.astype(float),
                       "part": k % 3})
    root = tmp_path / "ds"
    pq.write_to_dataset(pa.Table.from_pandas(df, preserve_index=False), str(root),
                        partition_cols=["part"])
    return root, truth


def test_executor_noise_follows_the_law_and_reproduces(spark: Any, tmp_path: Path) -> None:
    """A release of a partitioned parquet data set noised on the executors: written to a
    path, the noise follows the two-sided geometric law (chi-square at a fixed driver
    key), blocks use distinct HKDF keys, and a re-run of a block with the same driver key
    reproduces its noise exactly (what a retried or speculative task does)."""
    import pandas as pd
    from scipy import stats

    from dpnoise.session.spark_noise import block_key, noise_block

    keys, eps = 640, 1.0
    root, truth = _partitioned(tmp_path, keys)
    schema = {"dataset": {"user_id": "pid"},
              "columns": {"k": {"integer": True, "lower": 0, "upper": keys - 1}}}
    out = tmp_path / "release"
    with Session(str(root), Budget(10.0), schema=schema, rng=SeededRandom(7),
                 engine="spark", engine_options={"partitioned": True, "noise": "executors",
                                                 "block_cells": 128}) as s:
        np.testing.assert_array_equal(s.true_answer("histogram k"), truth)
        r = s.release("histogram k", epsilon=eps, output=str(out))
        plans = s.plans("histogram k", eps)
    assert r.details["written"]["blocks"] == 5 and r.values.size == 0
    got = pd.read_parquet(out).sort_values("k")
    assert list(got.columns) == ["k", "count", "low", "high"] and len(got) == keys
    assert ((got["low"] <= got["count"]) & (got["count"] <= got["high"])).all()
    noise = got["count"].to_numpy() - truth
    # two-sided geometric: P(z) = (1 - a) / (1 + a) a^|z|, a = e^-eps
    a = math.exp(-eps)
    edges = [-math.inf, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, math.inf]

    def cdf(x: float) -> float:
        if x == math.inf:
            return 1.0
        if x == -math.inf:
            return 0.0
        z = math.floor(x)
        return a ** (-z) / (1 + a) if z < 0 else 1 - a ** (z + 1) / (1 + a)

    expected = np.diff([cdf(e) for e in edges]) * keys
    observed = np.histogram(noise, bins=edges)[0]
    assert stats.chisquare(observed, expected).pvalue > 1e-3, (observed, expected)
    driver = SeededRandom(7).words(4).tobytes()  # the release's first draw
    ks = {block_key(driver, b) for b in range(5)}
    assert len(ks) == 5
    # re-run block 2 (cells 256..383) with the same driver key: the same noise
    cells = slice(256, 384)
    again = noise_block(2, {"count": truth[cells]}, plans, driver, "count", None, None)
    np.testing.assert_array_equal(again, got["count"].to_numpy()[cells])
    other = noise_block(3, {"count": truth[cells]}, plans, driver, "count", None, None)
    assert not np.array_equal(other, again)  # another block, another key


def test_the_key_is_in_no_plan_or_configuration(spark: Any, tmp_path: Path) -> None:
    """The driver key travels only inside the pickled noise closure: not in the logical
    or physical plan, nor in the Spark configuration."""
    from dpnoise.session.spark_noise import make_noise_function, noise_input, output_schema

    path = write(tmp_path, "parquet", ["k"], [[0.0], [1.0]])
    schema = {"columns": {"k": {"integer": True, "lower": 0, "upper": 3}}}
    key = bytes(range(32))
    with Session(str(path), Budget(1.0), schema=schema, engine="spark") as s:
        q = s.parse("histogram k")
        plan = compile_query(q, s.schema)
        df, _ = noise_input(s.engine, plan)
        fn = make_noise_function(q, s.schema, plan, s.plans(q, 1.0), key, 4)
        out = df.mapInPandas(fn, schema=output_schema(q, s.schema))
        text = out._jdf.queryExecution().toString()
        conf = repr(spark.sparkContext.getConf().getAll())
        assert out.count() == 4
    for needle in (key.hex(), repr(key), key.hex().upper(), str(list(key))):
        assert needle not in text and needle not in conf
    assert "dpnoise_executor_noise" in text  # the function is named, its closure is not


def test_cli_engine_spark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "parquet", ["x"], [[1.0], [2.0], [3.0]])
    code = main(["release", "--engine", "spark", "--data", str(path), "--bounds", "x=0:5",
                 "--query", "count", "--epsilon", "0.5", "--budget", "1",
                 "--ledger", ":memory:", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"count"' in out


def test_plan_encoding_parts() -> None:
    schema = Schema.from_dict(SCHEMA)
    plan = compile_query(parse_query("mean x by g, k").validate(schema), schema)
    assert encoding_parts(plan) == ("k0", "k1", "tok")
    assert plan.shape == (2, 3) and plan.strides == (3, 1)


# ---------------------------------------------------------------- statistics
@pytest.mark.parametrize("via", VIA)
def test_new_statistics_and_bounding_agree_with_duckdb(tmp_path: Path, via: str) -> None:
    """Two-dimensional bounding (SHA-256 group choice), variance sums, quantile buckets
    and private keys with distinct persons: the same true components on both engines."""
    rng = np.random.default_rng(4)
    rows = [[int(rng.integers(0, 8)), round(float(rng.normal(5, 3)), 3),
             str(rng.choice(["u", "v", "w"])), str(rng.choice(["a", "b", "c|1", "é"]))]
            for _ in range(60)]
    rows += [[99, "abc", "u", ""], [98, None, "v", "a"]]
    path = write(tmp_path, "parquet", ["pid", "x", "g", "city"], rows)
    schema = {"dataset": {"user_id": "pid", "max_contributions": 3, "max_groups": 2,
                          "max_rows_per_group": 2},
              "columns": {"x": {"lower": -2, "upper": 12}, "g": {"categories": ["u", "v", "w"]},
                          "city": {"text": True}}}
    duck, spark_s = _pair(path, schema, **_via(via))
    with duck, spark_s:
        for q in ["count by g", "variance x by g", "median x by g", "count by city",
                  "stddev x by city", "quantile 0.9 x by city", "sum x"]:
            a, b = duck.true_components(q), spark_s.true_components(q)
            assert sorted(a) == sorted(b), q
            for role in a:
                if role == "labels":
                    assert a[role].tolist() == b[role].tolist(), q
                else:
                    _same(a[role], b[role], f"{q}: {role}")


def test_new_statistics_run_on_spark_with_duckdb_law_and_charge(tmp_path: Path) -> None:
    """noise="executors": a variance is noised on the executors -- exactly the function
    of the (DuckDB) true components that the driver path applies, block by block --
    while quantiles and partition-selected groups are noised on the driver from the
    collected aggregates, drawing exactly what DuckDB draws.  The ledger charge (epsilon,
    delta, mechanism, plans) is the same on both engines."""
    import pandas as pd

    from dpnoise.session.spark_noise import noise_block

    rng = np.random.default_rng(8)
    rows = [[int(i), round(float(rng.uniform(-1, 13)), 3), str(rng.choice(["u", "v", "w"])),
             str(rng.choice(["a", "b"]))] for i in range(80)]
    path = write(tmp_path, "parquet", ["pid", "x", "g", "city"], rows)
    schema = {"dataset": {"user_id": "pid", "max_rows": 100},
              "columns": {"x": {"lower": 0, "upper": 12}, "g": {"categories": ["u", "v", "w"]},
                          "city": {"text": True}}}
    duck = Session(path, Budget(50.0, 1e-3), schema=schema, rng=SeededRandom(5))
    spk = Session(str(path), Budget(50.0, 1e-3), schema=schema, rng=SeededRandom(5),
                  engine="spark", engine_options={"noise": "executors", "block_cells": 2})
    with duck, spk:
        q, out = "variance x by g", tmp_path / "var"
        r = spk.release(q, epsilon=1.0, output=str(out))
        assert r.details["noise"] == "executors" and r.details["written"]["blocks"] == 2
        got = pd.read_parquet(out).sort_values("g", key=lambda c: c.map("uvw".index))
        truth = duck.true_components(q)
        plans = duck.plans(q, 1.0)
        key = SeededRandom(5).words(4).tobytes()  # the release's first draw
        want = [noise_block(b, {k: v[cells] for k, v in truth.items()}, plans, key,
                            "variance", 0.0, 12.0, 0.95)
                for b, cells in ((0, slice(0, 2)), (1, slice(2, 3)))]
        for i, col in enumerate(("variance", "low", "high")):
            np.testing.assert_array_equal(got[col].to_numpy(),
                                          np.concatenate([w[i] for w in want]))
        releases = [(q, 1.0, 0.0)]
        duck.release(q, epsilon=1.0)
        for i, (q, eps, dl) in enumerate([("median x by g", 1.0, 0.0),
                                          ("mean x by city", 2.0, 1e-4),
                                          ("quantile 0.9 x by city", 2.0, 1e-4)]):
            duck.rng, spk.rng = SeededRandom(20 + i), SeededRandom(20 + i)
            a, b = duck.release(q, epsilon=eps, delta=dl), spk.release(q, epsilon=eps,
                                                                         delta=dl)
            assert b.details["noise"] == "driver", q
            np.testing.assert_array_equal(a.values, b.values, err_msg=q)
            assert a.group_keys == b.group_keys, q
            for x, y in zip(a.interval(), b.interval(), strict=True):
                np.testing.assert_array_equal(x, y, err_msg=q)
            releases.append((q, eps, dl))
        for ea, eb in zip(duck.history(), spk.history(), strict=True):
            assert (ea.query, ea.epsilon, ea.delta, ea.mechanism) == \
                (eb.query, eb.epsilon, eb.delta, eb.mechanism)
            assert ea.parameters["plans"] == eb.parameters["plans"], ea.query
        assert [e.query for e in spk.history()] == [r[0] for r in releases]


# ------------------------------------------------------------------- Spark Connect
def test_spark_connect_noises_on_the_client_with_duckdb_law(tmp_path: Path) -> None:
    """Through Spark Connect the aggregates come back and the noise is added in this
    process -- the executors' key never crosses the client-server channel: with the same
    seed every release equals DuckDB's bit for bit, noise="executors" is refused before
    anything is spent, and a release above driver_cells is still noised here and written
    by this process."""
    import pandas as pd

    opts = _via("connect")
    rng = np.random.default_rng(3)
    rows = [[int(i), round(float(rng.uniform(-1, 13)), 3), str(rng.choice(["u", "v", "w"])),
             str(rng.choice(["a", "b"]))] for i in range(60)]
    path = write(tmp_path, "csv", ["pid", "x", "g", "city"], rows)
    schema = {"dataset": {"user_id": "pid", "max_rows": 100},
              "columns": {"x": {"lower": 0, "upper": 12}, "g": {"categories": ["u", "v", "w"]},
                          "city": {"text": True}}}
    with pytest.raises(ParameterError, match="Spark Connect"):
        Session(str(path), Budget(1.0), schema=schema, engine="spark",
                engine_options={**opts, "noise": "executors"})
    duck = Session(path, Budget(50.0, 1e-3), schema=schema)
    spk = Session(str(path), Budget(50.0, 1e-3), schema=schema, engine="spark",
                  engine_options={**opts, "driver_cells": 1})
    with duck, spk:
        assert spk.engine.remote and not spk.engine.noise_on_executors(spk.parse("count by g"))
        for i, (q, eps, dl) in enumerate([("count by g", 1.0, 0.0), ("variance x by g", 1.0, 0.0),
                                          ("median x", 1.0, 0.0),
                                          ("mean x by city", 2.0, 1e-4)]):
            duck.rng, spk.rng = SeededRandom(40 + i), SeededRandom(40 + i)
            out = tmp_path / f"r{i}.parquet"
            a = duck.release(q, epsilon=eps, delta=dl)
            b = spk.release(q, epsilon=eps, delta=dl, output=str(out))
            assert b.details["noise"] == "driver", q
            np.testing.assert_array_equal(a.values, b.values, err_msg=q)
            assert a.group_keys == b.group_keys, q
            pd.testing.assert_frame_equal(pd.read_parquet(out), a.to_pandas(),
                                          check_dtype=False)
        assert [e.status for e in spk.history()] == ["released"] * 4


def test_cli_spark_remote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--spark-remote sc://...`: the CLI's Spark Connect path gives the embedded
    engine's answer (same seed)."""
    url = _via("connect")["spark_remote"]
    path = write(tmp_path, "csv", ["x", "g"], [[1.0, "a"], [2.0, "b"], [3.0, "a"]])
    args = ["--data", str(path), "--bounds", "x=0:5", "--categories", "g=a,b",
            "--query", "sum x by g", "--epsilon", "0.5", "--budget", "1",
            "--ledger", ":memory:", "--seed", "4", "--json"]
    assert main(["release", "--engine", "spark", "--spark-remote", url, *args]) == 0
    remote = capsys.readouterr()
    assert main(["release", *args]) == 0
    local = capsys.readouterr()
    assert json.loads(remote.out)["rows"] == json.loads(local.out)["rows"]


@pytest.mark.slow  # a fresh JVM and a local Spark Connect server in a subprocess
def test_cli_local_spark_connect_server_prints_no_pyspark_notices(tmp_path: Path) -> None:
    """`--spark-remote local[1]`: PySpark starts a local Spark Connect server itself; the
    release equals the embedded engine's (same seed), and stderr -- Spark's own log at
    its default WARN level in a fresh process -- has neither the CSV header-mismatch
    message nor PySpark's pandas-version notice."""
    import os
    import subprocess
    import sys

    path = write(tmp_path, "csv", ["x", "g"], [[1.0, "a"], [2.0, "b"], [3.0, "a"]])
    args = ["--data", str(path), "--bounds", "x=0:5", "--categories", "g=a,b",
            "--query", "mean x by g", "--epsilon", "0.5", "--budget", "1",
            "--ledger", ":memory:", "--seed", "4", "--json"]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    env.pop("SPARK_REMOTE", None)

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dpnoise", "release", *extra, *args],
                              capture_output=True, text=True, env=env, timeout=600,
                              cwd=tmp_path)

    remote = run("--engine", "spark", "--spark-remote", "local[1]")
    assert remote.returncode == 0, remote.stderr[-2000:]
    local = run()
    assert json.loads(remote.stdout)["rows"] == json.loads(local.stdout)["rows"]
    assert "Spark" in remote.stderr  # the JVM did log (the check below is not vacuous)
    assert "CSV header does not conform" not in remote.stderr
    assert "does not yet fully support pandas" not in remote.stderr
