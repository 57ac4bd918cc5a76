"""The custodian benchmark's generated table: 10^6 people, realistic columns and nulls.

    python benchmarks/table.py OUT.parquet [ROWS]

Columns: ``age`` (integer 18..95), ``income`` (lognormal, some above the declared bound,
2 % null), ``region`` (text key, 8 categories, 1 % null and 0.5 % undeclared spellings),
``city`` (text key whose values are not public: a Zipf tail), ``smoker`` (0/1, some text
noise), ``hours`` (float with NaN).  Deterministic (DuckDB's ``hash`` of the row number),
so every run measures the same bytes.  :data:`SCHEMA` declares it.
"""

from __future__ import annotations

import sys

SCHEMA = """[dataset]
name = "bench-people"
max_rows = 2000000

[columns.age]
integer = true
lower = 18
upper = 95

[columns.income]
lower = 0
upper = 250000

[columns.region]
categories = ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"]

[columns.city]
text = true

[columns.smoker]
integer = true
lower = 0
upper = 1

[columns.hours]
lower = 0
upper = 80
"""


def write_table(path: str, rows: int) -> None:
    """Write the table of ``rows`` rows to ``path`` (parquet)."""
    import duckdb

    con = duckdb.connect(":memory:")
    u = "((hash(i * 7 + {k}) % 1000003) / 1000003.0)"
    con.execute(f"""
        COPY (SELECT
            (18 + hash(i) % 78)::BIGINT AS age,
            CASE WHEN {u.format(k=1)} < 0.02 THEN NULL
                 ELSE round(exp(10.6 + 0.8 * sqrt(-2 * ln({u.format(k=2)} + 1e-9))
                                * cos(6.283185307179586 * {u.format(k=3)})), 2) END AS income,
            CASE WHEN {u.format(k=4)} < 0.01 THEN NULL
                 WHEN {u.format(k=4)} < 0.015 THEN 'North '
                 ELSE 'r' || (hash(i + 11) % 8)::VARCHAR END AS region,
            'c' || floor(1.0 / ({u.format(k=5)} + 0.00008))::BIGINT::VARCHAR AS city,
            CASE WHEN {u.format(k=6)} < 0.001 THEN 'yes'
                 ELSE (hash(i + 13) % 2)::VARCHAR END AS smoker,
            CASE WHEN {u.format(k=7)} < 0.03 THEN 'NaN'::DOUBLE
                 ELSE round(80 * {u.format(k=8)}, 1) END AS hours
        FROM range({rows}) t(i)) TO '{path}' (FORMAT PARQUET)""")
    con.close()


if __name__ == "__main__":
    write_table(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10**6)
