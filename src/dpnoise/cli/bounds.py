"""``dpnoise bounds``: suggest a column's bounds with differential privacy, charged to the
ledger, printed as a schema snippet naming the ledger event.

    dpnoise ledger init people.ledger --budget 1
    dpnoise bounds --data people.csv --ledger people.ledger --column income --epsilon 0.1

The column need not be declared in the schema (its declared bounds, if any, are not used:
the candidates are the public grid ``0, ±2^k``); see :mod:`dpnoise.session.suggest`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .command import subcommand
from .data_args import DEFAULT_LEDGER, MEMORY, MEMORY_NOTICE, add_ledger_arguments, parse_budget


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", metavar="FILE", required=True,
                   help="data file (.csv, .parquet, .duckdb)")
    p.add_argument("--column", required=True, help="the numeric column to bound")
    p.add_argument("--epsilon", type=float, required=True,
                   help="epsilon to spend (half on each bound)")
    p.add_argument("--schema", metavar="FILE", default=None,
                   help="TOML schema (default: FILE's stem + .toml if it exists); the "
                        "column's declared bounds are not used")
    add_ledger_arguments(p)
    p.add_argument("--levels", metavar="LO,HI", default="0.01,0.99",
                   help="the quantile levels of the two bounds (default 0.01,0.99)")
    p.add_argument("--user-id", default=None, help="column identifying an individual")
    p.add_argument("--max-contributions", type=int, default=1,
                   help="rows kept per individual (needs --user-id; default 1)")
    p.add_argument("--table", default=None, help="table inside a .duckdb file")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the clamped-rows statement (default 0.95)")
    p.add_argument("--replay", action="store_true",
                   help="serve an identical earlier suggestion from the ledger at no cost")
    p.add_argument("--seed", default=None,
                   help=f"reproducible (NOT secure) randomness, only with --ledger {MEMORY}")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _levels(text: str) -> tuple[float, float]:
    from ..errors import ParameterError

    parts = text.split(",")
    try:
        lo, hi = (float(v) for v in parts)
    except ValueError:
        raise ParameterError(f"--levels must be LO,HI with 0 < LO < HI < 1, got {text!r}"
                             ) from None
    return lo, hi


@subcommand("bounds", "suggest a numeric column's bounds with differential privacy "
            "(charged to the ledger; prints a schema snippet)", _args)
def cmd_bounds(args: argparse.Namespace) -> int:
    from ..errors import ParameterError
    from ..randomness import SeededRandom
    from ..session import Schema, Session
    from ..session.opening import resolve_schema
    from ..session.suggest import bounds_mechanism, placeholder_schema
    from .output import emit_json

    levels = _levels(args.levels)
    base = resolve_schema(args.schema, args.data) if (
        args.schema is not None or Path(args.data).with_suffix(".toml").is_file()) else None
    schema = Schema.from_flags(user_id=args.user_id, max_contributions=args.max_contributions,
                               table=args.table, base=base)
    schema = placeholder_schema(schema, args.column)
    bounds_mechanism(schema, args.column, args.epsilon, levels)  # every check, nothing read
    ledger = args.ledger or DEFAULT_LEDGER
    in_memory = ledger == MEMORY
    if args.seed is not None and not in_memory:
        raise ParameterError(f"--seed is only for --ledger {MEMORY} (nothing recorded); "
                             "seeded randomness is never charged to a ledger file")
    if in_memory:
        if args.budget is None:
            raise ParameterError(f"--ledger {MEMORY} needs --budget EPS[,DELTA] (its total)")
        print(MEMORY_NOTICE, file=sys.stderr)
    rng = None if args.seed is None else SeededRandom(args.seed)
    with Session(args.data, parse_budget(args.budget), None if in_memory else ledger,
                 schema=schema, rng=rng, replay=args.replay, anchor=args.anchor) as s:
        b = s.suggest_bounds(args.column, epsilon=args.epsilon, levels=levels,
                             confidence=args.confidence)
        remaining = s.remaining
    if args.json:
        emit_json({**b.as_dict(), "remaining": {"epsilon": remaining.epsilon,
                                                "delta": remaining.delta}})
        return 0
    tag = " (replayed from the ledger, nothing spent)" if b.replayed else ""
    print(f"# remaining after this suggestion: {remaining}{tag}")
    print(b.snippet())
    return 0
