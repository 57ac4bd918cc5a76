"""The typed view's direct path for typed numeric columns is the text -> number
rule: the same double (bit for bit) or missing, for every value."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from dpnoise.session.schema import Schema
from dpnoise.session.source import (
    DIRECT_NUMBER,
    VIEW,
    Source,
    direct_number_sql,
    number_sql,
    text_sql,
)

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 0.1, 1 / 3, 1e-5, 1e15,
           1e16, 1e21, 1e22, 1e23, 9007199254740993.0, 1.7976931348623157e308, np.nan,
           np.inf, -np.inf, 123456789012345678.0]

RANGES = {"BIGINT": (-2**63, 2**63 - 1), "INTEGER": (-2**31, 2**31 - 1),
          "SMALLINT": (-2**15, 2**15 - 1), "TINYINT": (-128, 127),
          "UINTEGER": (0, 2**32 - 1), "USMALLINT": (0, 2**16 - 1), "UTINYINT": (0, 255)}


def _both(con: duckdb.DuckDBPyConnection, sql_type: str) -> tuple[np.ndarray, np.ndarray]:
    slow = number_sql(text_sql("v"))
    fast = direct_number_sql("v", sql_type)
    r = con.execute(f"SELECT {slow} AS s, {fast} AS q FROM (SELECT CAST(v AS {sql_type}) "
                    "AS v FROM t)").fetchnumpy()
    return r["s"], r["q"]


def _same(s: np.ndarray, q: np.ndarray) -> None:
    sm, qm = np.ma.getmaskarray(s), np.ma.getmaskarray(q)
    assert np.array_equal(sm, qm)
    sd, qd = np.ma.getdata(s)[~sm], np.ma.getdata(q)[~qm]
    assert np.array_equal(sd.astype(np.float64).view(np.int64),
                          qd.astype(np.float64).view(np.int64))


def test_double_direct_equals_text_rule() -> None:
    g = np.random.default_rng(11)
    bits = g.integers(-2**63, 2**63 - 1, 60_000, dtype=np.int64).view(np.float64)
    v = np.concatenate([bits, SPECIAL, g.uniform(-1e6, 1e6, 20_000),
                        np.round(g.uniform(-1e4, 1e4, 20_000), 2)])
    con = duckdb.connect()
    con.register("t", {"v": v})
    s, q = _both(con, "DOUBLE")
    assert np.ma.getmaskarray(s).sum() >= 3  # nan, inf, -inf (and random NaN patterns)
    _same(s, q)


@pytest.mark.parametrize("sql_type", sorted(RANGES))
def test_integers_direct_equal_text_rule(sql_type: str) -> None:
    lo, hi = RANGES[sql_type]
    g = np.random.default_rng(12)
    v = [lo, hi, 0, -1 if lo < 0 else 1, 2**53 + 1, 2**54 + 2, 2**54 + 6, 2**62 + 2**9 + 1]
    v = [x for x in v if lo <= x <= hi]
    vals = np.concatenate([g.integers(lo, hi, 40_000, endpoint=True, dtype=np.int64)
                           if hi < 2**63 else g.integers(lo, hi, 40_000, dtype=np.int64),
                           np.asarray(v, dtype=np.int64)])
    con = duckdb.connect()
    con.register("t", {"v": vals})
    _same(*_both(con, sql_type))


def test_direct_types_listed() -> None:
    assert {"DOUBLE", *RANGES} == DIRECT_NUMBER


def _view(data: dict[str, np.ndarray], schema: dict) -> list[tuple]:  # type: ignore[type-arg]
    con = duckdb.connect(":memory:")
    Source(con, data, Schema.from_dict(schema))
    return con.execute(f"SELECT * FROM {VIEW}").fetchall()


def test_typed_columns_give_the_view_their_text_gives() -> None:
    """The same values as typed numpy columns (direct path) and as text (object columns:
    the text path) give the same typed view -- numbers, integer keys, categories, ids."""
    g = np.random.default_rng(13)
    x = np.concatenate([g.uniform(-5, 5, 300), [np.nan, np.inf, -np.inf, 1e300, -0.0]])
    n = x.size
    k = g.integers(-3, 12, n)
    cat = g.choice([1.5, 2.0, 7.0], n)
    uid = g.integers(0, 50, n).astype(np.float64)
    uid[::17] = np.nan
    schema = {"dataset": {"user_id": "uid", "max_contributions": 2},
              "columns": {"x": {"lower": -1, "upper": 1},
                          "k": {"integer": True, "lower": 0, "upper": 9},
                          "c": {"categories": [1.5, 7], "source": "cat"},
                          "s": {"categories": ["1.5", "2.0"], "source": "cat"}}}
    typed = {"x": x, "k": k, "cat": cat, "uid": uid}
    text = {name: np.array([repr(v) if isinstance(v, float) else str(v)
                            for v in a.tolist()], dtype=object) for name, a in typed.items()}
    text["x"][np.isnan(x)] = None  # a NaN as a Python None: missing either way
    a, b = _view(typed, schema), _view(text, schema)
    assert len(a) == len(b) == n - np.isnan(uid).sum()
    assert sorted(a, key=repr) == sorted(b, key=repr)
    assert any(r[2] is not None for r in a) and any(r[2] is None for r in a)
