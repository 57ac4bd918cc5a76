"""``dpnoise release --data FILE --query "..."``: release a statistic of a data file.

This is the data form of ``dpnoise release``; the mechanism form
(``dpnoise release MECHANISM ... TRUE_VALUE``) is unchanged.  ``--data`` selects this
path.  Every release is charged to a durable ledger (``--ledger``, default
``dpnoise-ledger.sqlite`` in the current directory), created with ``--budget`` on first
use.

    dpnoise release --data people.csv --schema people.toml --budget 1 \\
        --query "count where age > 30" --epsilon 0.1
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_LEDGER = "dpnoise-ledger.sqlite"


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "data release (dpnoise release --data FILE --query QUERY ...)",
        "release a statistic of a data file within a ledgered privacy budget",
    )
    g.add_argument("--data", metavar="FILE", default=None,
                   help="data file (.csv, .parquet, .duckdb), read in place by DuckDB")
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
    g.add_argument("--ledger", metavar="FILE", default=None,
                   help=f"SQLite budget ledger (default ./{DEFAULT_LEDGER})")
    g.add_argument("--budget", metavar="EPS[,DELTA]", default=None,
                   help="total budget; required to create a new ledger")
    g.add_argument("--epsilon", dest="data_epsilon", type=float, default=None,
                   help="epsilon to spend on this release")
    g.add_argument("--delta", dest="data_delta", type=float, default=0.0,
                   help="delta to spend (approximate-DP mechanisms only; default 0)")
    g.add_argument("--mechanism", dest="data_mechanism", metavar="NAME", default=None,
                   help="mechanism (default: the range-adherent one for the statistic)")
    g.add_argument("--replay", action="store_true",
                   help="serve an identical earlier release from the ledger at no cost")
    g.add_argument("--limit", type=int, default=30, help="cells to print (default 30)")
    g.add_argument("--seed", default=None,
                   help="reproducible (NOT secure) randomness; default: OS-keyed CSPRNG")
    g.add_argument("--json", action="store_true", help="machine-readable output")


def _budget(text: str | None):  # type: ignore[no-untyped-def]
    from ..errors import ParameterError
    from ..session import Budget

    if text is None:
        return None
    eps, _, dl = text.partition(",")
    try:
        return Budget(float(eps), float(dl) if dl else 0.0)
    except ValueError as exc:
        raise ParameterError(f"--budget must be EPS or EPS,DELTA, got {text!r}") from exc


def run_data_release(args: argparse.Namespace) -> int:
    from ..errors import ParameterError
    from ..randomness import SeededRandom
    from ..session import Schema, Session
    from ..session.session import _resolve_schema
    from .output import emit_json

    if args.query is None:
        raise ParameterError("--data needs --query, e.g. --query \"count where age > 30\"")
    if args.data_epsilon is None:
        raise ParameterError("--data needs --epsilon (the budget to spend on this release)")
    base = _resolve_schema(args.schema, args.data) if (
        args.schema is not None or Path(args.data).with_suffix(".toml").is_file()) else None
    schema = Schema.from_flags(
        args.bounds, args.categories, args.keys, user_id=args.user_id,
        max_contributions=args.max_contributions, max_rows=args.max_rows, table=args.table,
        base=base,
    )
    rng = None if args.seed is None else SeededRandom(args.seed)
    ledger = args.ledger or DEFAULT_LEDGER
    with Session(args.data, _budget(args.budget), ledger, schema=schema, rng=rng,
                 replay=args.replay, rows_epsilon=args.release_rows) as s:
        r = s.release(args.query, epsilon=args.data_epsilon, delta=args.data_delta,
                      mechanism=args.data_mechanism)
        remaining = s.remaining
        if args.json:
            emit_json({
                "query": r.query, "canonical": r.canonical, "mechanism": r.mechanism,
                "epsilon": r.epsilon, "delta": r.delta, "guarantee": r.guarantee,
                "ledger": str(ledger), "ledger_id": r.ledger_id, "replayed": r.replayed,
                "remaining": {"epsilon": remaining.epsilon, "delta": remaining.delta},
                "columns": [*r.group_by, r.stat],
                "rows": r.rows(),
            })
            return 0
        print(f"query:      {r.canonical}")
        print(f"mechanism:  {r.mechanism}")
        print(f"guarantee:  {r.guarantee}")
        tag = " (replayed from the ledger, nothing spent)" if r.replayed else ""
        print(f"ledger:     {ledger} row {r.ledger_id}{tag}")
        print(f"remaining:  {remaining} of {s.budget}")
        print()
        print(r.table(limit=args.limit))
    return 0
