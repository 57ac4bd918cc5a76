"""The arguments of ``dpnoise release --data`` and ``--workload``: data, schema, ledger,
budget and engine, and the two ledger constants they share."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_LEDGER = "dpnoise-ledger.sqlite"
MEMORY = ":memory:"
MEMORY_NOTICE = ("note: --ledger :memory: -- nothing is recorded: this release's budget is "
                 "forgotten when the command ends, so it protects nothing across runs")


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "data release (dpnoise release --data FILE --query QUERY ...)",
        "release a statistic of a data file within a ledgered privacy budget",
    )
    g.add_argument("--data", metavar="FILE", default=None,
                   help="data file (.csv, .parquet, .duckdb), read in place by DuckDB")
    g.add_argument("--workload", metavar="FILE", default=None,
                   help="a workload file (TOML) of named queries with their epsilon or "
                        "budget share: all released in one run, their budget reserved in "
                        "one ledger transaction; --output DIR gets one table per query")
    g.add_argument("--query", metavar="QUERY", default=None,
                   help='e.g. "count where age > 30", "mean income by region", or '
                        '"SELECT region, COUNT(*) FROM data GROUP BY region"')
    g.add_argument("--schema", metavar="FILE", default=None,
                   help="TOML file of public per-column bounds (default: FILE's stem + .toml)")
    g.add_argument("--bounds", metavar="COL=LO:HI", action="append", default=[],
                   help="declare/override a numeric column's public bounds (repeatable)")
    g.add_argument("--categories", metavar="COL=A,B,..", action="append", default=[],
                   help="declare a column's public categories (repeatable)")
    g.add_argument("--keys", metavar="COL=LO:HI", action="append", default=[],
                   help="declare a column's public integer keys LO..HI (repeatable)")
    g.add_argument("--user-id", default=None, help="column identifying an individual")
    g.add_argument("--max-contributions", type=int, default=1,
                   help="rows kept per individual (needs --user-id; default 1)")
    g.add_argument("--max-rows", type=int, default=None,
                   help="public upper bound on the number of rows")
    g.add_argument("--table", default=None, help="table inside a .duckdb file")
    g.add_argument("--release-rows", type=float, default=None, metavar="EPS",
                   help="without --max-rows: release the row count N once (at EPS, "
                        "ledgered) and use it as the public bound of counts and sums")
    add_ledger_arguments(g)
    g.add_argument("--epsilon", dest="data_epsilon", type=float, default=None,
                   help="epsilon to spend on this release")
    g.add_argument("--reserve-for", type=int, default=None, metavar="N",
                   help="instead of --epsilon: the largest epsilon that leaves budget for N "
                        "more releases like this one under the ledger's accountant")
    g.add_argument("--dry-run", action="store_true",
                   help="plan only: print the per-release parameters the accountant allows "
                        "and the expected error; reads no data, spends nothing")
    g.add_argument("--delta", dest="data_delta", type=float, default=None,
                   help="delta to spend (approximate-DP mechanisms only; default 0)")
    g.add_argument("--mechanism", dest="data_mechanism", metavar="NAME", default=None,
                   help="mechanism (default: the range-adherent one for the statistic)")
    g.add_argument("--replay", action="store_true",
                   help="serve an identical earlier release from the ledger at no cost")
    g.add_argument("--limit", type=int, default=30, help="cells to print (default 30)")
    g.add_argument("--seed", default=None,
                   help="reproducible (NOT secure) randomness, only with --ledger :memory:; "
                        "default: OS-keyed CSPRNG")
    g.add_argument("--json", action="store_true", help="machine-readable output")
    g.add_argument("--bar", choices=("level", "rank"), default=None,
                   help="a quantile's error bar: level (default; a quarter of epsilon to a "
                        "noisy count) or rank (all of it to the quantile, the bar in rows: "
                        "the same as ending the query with 'with rank bar')")
    g.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the error bars (low/high columns; default 0.95)")
    g.add_argument("--text", metavar="COL", action="append", default=[],
                   help="declare a text column whose keys are NOT public: grouping by it "
                        "releases only groups surviving DP partition selection (repeatable)")
    g.add_argument("--max-groups", type=int, default=None,
                   help="groups one individual may contribute to (with --max-rows-per-group)")
    g.add_argument("--max-rows-per-group", type=int, default=None,
                   help="rows one individual may contribute to one group")
    add_engine_arguments(p)


def add_ledger_arguments(g: Any) -> None:
    """``--ledger``, ``--budget`` and ``--anchor``: where a data release is charged."""
    g.add_argument("--ledger", metavar="FILE", default=None,
                   help=f"budget ledger made by `dpnoise ledger init` (default "
                        f"./{DEFAULT_LEDGER}); {MEMORY}: in memory, nothing recorded")
    g.add_argument("--budget", metavar="EPS[,DELTA]", default=None,
                   help="with a ledger file: a check that its total is this; with "
                        f"--ledger {MEMORY}: the throw-away total")
    g.add_argument("--anchor", metavar="FILE", default=None,
                   help="anchor file outside the ledger: compared on open, advanced after "
                        "the release")


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine (the same queries on Apache Spark)")
    g.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                   help="duckdb (embedded, default) or spark (--data: a parquet/csv path, "
                        "a partitioned parquet directory with --partitioned, or a catalog "
                        "table name)")
    g.add_argument("--spark-master", metavar="URL", default=None,
                   help="Spark master for --engine spark (default local[*])")
    g.add_argument("--spark-remote", metavar="URL", default=None,
                   help="Spark Connect URL for --engine spark, e.g. sc://host:15002")
    g.add_argument("--partitioned", action="store_true",
                   help="--data is a partitioned parquet directory, read as one data set")
    g.add_argument("--noise", choices=("auto", "driver", "executors"), default="auto",
                   help="--engine spark: where noise is added (auto: on the driver up to "
                        "10^7 cells, else on the executors)")
    g.add_argument("--output", metavar="PATH", default=None,
                   help="write the released table (with its low/high error-bar columns) to "
                        "PATH (.csv or .parquet) instead of printing it; with --engine spark "
                        "a release noised on the executors is written there (parquet)")


def engine_options(args: argparse.Namespace) -> tuple[str, dict[str, object]]:
    """The Session's engine and engine_options from the flags."""
    from ..errors import ParameterError

    engine = getattr(args, "engine", "duckdb")
    spark_flags = {"spark_master": args.spark_master, "spark_remote": args.spark_remote,
                   "partitioned": args.partitioned or None,
                   "noise": None if args.noise == "auto" else args.noise}
    given = {k: v for k, v in spark_flags.items() if v is not None}
    if engine != "spark":
        if given:
            raise ParameterError("--spark-master, --spark-remote, --partitioned and --noise "
                                 "need --engine spark")
        return engine, {}
    return engine, given


def parse_budget(text: str | None, accountant: str | None = None):  # type: ignore[no-untyped-def]
    from ..errors import ParameterError
    from ..session import Budget

    if text is None:
        return None
    eps, _, dl = text.partition(",")
    try:
        return Budget(float(eps), float(dl) if dl else 0.0, accountant=accountant)
    except ValueError as exc:
        raise ParameterError(f"--budget must be EPS or EPS,DELTA, got {text!r}") from exc
