"""In-memory tables as sources: pandas and polars DataFrames, Arrow tables and
numpy record arrays go through the same typed view, missing-value rule and person-id
handling as files, so they give exactly the true answers of the same data written to
csv and parquet -- NULLs, NaNs, categorical dtypes and missing person ids included."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpnoise import Budget, ParameterError, Session
from tests.test_custodian_attacks import write

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

SCHEMA = {"dataset": {"user_id": "pid", "max_contributions": 2},
          "columns": {"x": {"lower": -5, "upper": 10},
                      "g": {"categories": ["a", "b"]},
                      "k": {"integer": True, "lower": 0, "upper": 2}}}

ROWS: list[list[Any]] = [
    [1, 1.5, "a", 0], [1, None, "b", 1], [1, 12.0, "a", 2], [2, math.nan, None, 1],
    [2, -7.25, "zzz", None], [None, 3.0, "a", 0], [3, 9.5, "b", 3], [3, 0.0, "b", 2],
    [4, -1.0, None, 1], [None, 4.0, "b", 1], [5, 2.5, "a", 0], [5, 2.5, "a", 0],
    [5, 2.5, "a", 0], [6, 1e6, "b", 2],
]

QUERIES = ["count", "count x", "count g", "sum x", "mean x", "histogram g", "histogram k",
           "count by g, k", "sum x by g", "mean x by k", "count where x > 2",
           "sum x where g = 'a' or k in (1, 2)", "mean x where not x between 0 and 4",
           "count where x is null", "count where g is null", "sum x by k where g <> 'zzz'",
           "SELECT g, AVG(x) FROM data WHERE k >= 1 GROUP BY g"]


def _pandas() -> Any:
    cols = list(zip(*ROWS, strict=True))
    return pd.DataFrame({
        "pid": pd.array([None if v is None else v for v in cols[0]], dtype="Int64"),
        "x": np.array([np.nan if v is None else v for v in cols[1]], dtype=float),
        "g": pd.Categorical(list(cols[2]), categories=["a", "b", "zzz"]),
        "k": pd.array(list(cols[3]), dtype="Int64"),
    })


def _answers(data: Any) -> dict[str, np.ndarray]:
    with Session(data, Budget(1.0), schema=SCHEMA) as s:
        return {q: s.true_answer(q) for q in QUERIES}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, np.ndarray]]:
    tmp = tmp_path_factory.mktemp("frames")
    rows = [[r[0], None if isinstance(r[1], float) and math.isnan(r[1]) else r[1], *r[2:]]
            for r in ROWS]
    out = {fmt: _answers(write(tmp, fmt, ["pid", "x", "g", "k"], rows))
           for fmt in ("csv", "parquet")}
    for q in QUERIES:  # csv and parquet agree with each other first
        np.testing.assert_array_equal(out["csv"][q], out["parquet"][q], err_msg=q)
    return out


FRAMES = {
    "pandas": _pandas,
    "pandas-object": lambda: _pandas().astype(object),
    "pandas-str": lambda: _pandas().astype({"g": "str"}),
    "polars": lambda: pl.from_pandas(_pandas()),
    "arrow": lambda: pa.Table.from_pandas(_pandas(), preserve_index=False),
    "arrow-batch": lambda: pa.RecordBatch.from_pandas(_pandas(), preserve_index=False),
    "records": lambda: _pandas().astype(object).to_records(index=False),
    # byte-swapped and long-double numbers were refused ("could not be read")
    "pandas-big-endian": lambda: _pandas().astype({"x": ">f8"}),
    "dict-big-endian": lambda: _columns(">f8"),
    "dict-long-double": lambda: _columns(np.longdouble),
}


def _columns(x_dtype: Any) -> dict[str, np.ndarray]:
    """The table as a dict of numpy columns, ``x`` in the given dtype."""
    df = _pandas()
    return {"pid": df["pid"].to_numpy(dtype=object), "g": np.array(ROWS, dtype=object)[:, 2],
            "x": df["x"].to_numpy().astype(x_dtype), "k": df["k"].to_numpy(dtype=object)}


@pytest.mark.parametrize("kind", sorted(FRAMES))
def test_frames_give_the_answers_of_files(reference: dict[str, dict[str, np.ndarray]],
                                          kind: str) -> None:
    got = _answers(FRAMES[kind]())
    for q in QUERIES:
        np.testing.assert_array_equal(got[q], reference["csv"][q], err_msg=f"{kind}: {q}")


def test_frame_missing_person_ids_dropped() -> None:
    """NaN, None and empty-string person ids are dropped from a DataFrame as from a file."""
    df = pd.DataFrame({"pid": [1, None, np.nan, "", " nan ", 2], "x": [1.0] * 6},
                      dtype=object)
    with Session(df, Budget(1.0), schema={"dataset": {"user_id": "pid"},
                                          "columns": {"x": {"lower": 0, "upper": 1}}}) as s:
        assert s.true_answer("count").item() == 2


def test_frame_headers_checked_and_pyspark_refused() -> None:
    df = pd.DataFrame({"x": [1.0]})
    with pytest.raises(ParameterError, match=r"absent from the pandas data"):
        Session(df, Budget(1.0), schema={"columns": {"y": {"lower": 0, "upper": 1}}})
    with pytest.raises(ParameterError, match="DataFrame"):
        Session(object(), Budget(1.0), schema={"columns": {"y": {"lower": 0, "upper": 1}}})


def test_frame_source_header_and_no_copy_of_undeclared_columns(tmp_path: Path) -> None:
    df = pd.DataFrame({"hours-per-week": [40, 50, None], "secret": ["s1", "s2", "s3"]})
    schema = {"columns": {"hours": {"source": "hours-per-week", "lower": 0, "upper": 99}}}
    with Session(df, Budget(1.0), schema=schema) as s:
        assert s.true_answer("sum hours").item() == 90.0
        cols = [r[0] for r in s.engine.con.execute("DESCRIBE __dp_view").fetchall()]
        assert cols == ["hours"]


def test_bytes_are_the_text_duckdb_gives_a_blob() -> None:
    """A numpy bytes column (or bytes in a pandas object column) was read as Python's
    ``b'a'``, so no declared category or id ever matched it, while the same values as an
    Arrow / parquet binary column did match; now both are the text DuckDB writes for a
    BLOB (printable ASCII as is, every other byte as ``\\xHH``)."""
    import duckdb

    from dpnoise.session.source import _text_array

    every = [bytes([b]) for b in range(256)] + [b"a\x00b", b"", b"x \\ \"q\" 's'"]
    con = duckdb.connect()
    want = [con.execute("SELECT CAST($1::BLOB AS VARCHAR)", [v]).fetchone()[0]  # type: ignore[index]
            for v in every]
    assert _text_array(np.array(every, dtype=object)).tolist() == want
    schema = {"columns": {"g": {"categories": ["a", "b\\x00"]}}}
    values = [b"a", b"b\x00", b"b\x00", b"c"]
    for data in ({"g": np.array(values, dtype=object)}, pd.DataFrame({"g": values}),
                 pa.table({"g": pa.array(values, pa.binary())})):
        with Session(data, Budget(1.0), schema=schema) as s:
            assert s.true_answer("histogram g").tolist() == [1, 2], type(data)


def test_a_masked_entry_is_missing() -> None:
    """A numpy masked array in a dict of columns was read through np.asarray, which keeps
    the value under the mask: a masked 2.0 was summed and a masked key counted."""
    schema = {"columns": {"x": {"lower": 0, "upper": 9}, "g": {"categories": ["a", "b"]}}}
    data = {"x": np.ma.masked_array([1.0, 2.0, 5.0], mask=[0, 1, 0]),
            "g": np.ma.masked_array(["a", "b", "b"], mask=[0, 0, 1])}
    with Session(data, Budget(1.0), schema=schema) as s:
        assert s.true_answer("sum x").item() == 6.0 and s.true_answer("count x").item() == 2
        assert s.true_answer("histogram g").tolist() == [1, 1]
