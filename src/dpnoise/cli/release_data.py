"""``dpnoise release --data FILE --query "..."``: release a statistic of a data file.

This is the data form of ``dpnoise release``; the mechanism form
(``dpnoise release MECHANISM ... TRUE_VALUE``) is unchanged.  ``--data`` selects this
path.  Every release is charged to a durable ledger (``--ledger``, default
``dpnoise-ledger.sqlite`` in the current directory) that must have been created first with
``dpnoise ledger init FILE --budget EPS[,DELTA]``: a release never creates a ledger.
``--budget`` is then only a check (it must equal the ledger's total), except with
``--ledger :memory:``, a throw-away ledger whose total it sets and which records nothing
(said on stderr every time).  ``--seed`` is refused with a ledger file.

    dpnoise ledger init people.ledger --budget 1
    dpnoise release --data people.csv --schema people.toml --ledger people.ledger \\
        --query "count where age > 30" --epsilon 0.1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .data_args import DEFAULT_LEDGER, MEMORY, MEMORY_NOTICE, engine_options, parse_budget


def run_data_release(args: argparse.Namespace) -> int:
    from ..errors import ParameterError
    from ..randomness import SeededRandom
    from ..session import Schema, Session
    from ..session.opening import resolve_schema

    if getattr(args, "workload", None) is not None:
        from .release_workload import run_workload_release

        if getattr(args, "bar", None) is not None:
            raise ParameterError("--bar applies to --query; in a workload write the clause "
                                 "in the query, e.g. query = \"median income with rank bar\"")

        return run_workload_release(args)
    if args.query is None:
        raise ParameterError("--data needs --query, e.g. --query \"count where age > 30\"")
    if getattr(args, "bar", None) is not None:  # before anything is opened or spent
        from ..session.query import parse_query
        from ..session.rank_bar import with_bar

        args.query = with_bar(parse_query(args.query), args.bar).text
    if args.data_epsilon is None and args.reserve_for is None:
        raise ParameterError("--data needs --epsilon (the budget to spend on this release) "
                             "or --reserve-for N")
    if args.data_epsilon is not None and args.reserve_for is not None and not args.dry_run:
        raise ParameterError("give --epsilon or --reserve-for N, not both")
    engine, options = engine_options(args)
    base = resolve_schema(args.schema, args.data) if (
        args.schema is not None or Path(args.data).with_suffix(".toml").is_file()) else None
    schema = Schema.from_flags(
        args.bounds, args.categories, args.keys, user_id=args.user_id,
        max_contributions=args.max_contributions, max_rows=args.max_rows, table=args.table,
        base=base, texts=args.text, max_groups=args.max_groups,
        max_rows_per_group=args.max_rows_per_group,
    )
    ledger = args.ledger or DEFAULT_LEDGER
    in_memory = ledger == MEMORY
    if args.seed is not None and not in_memory:
        raise ParameterError(
            f"--seed with ledger {ledger!r}: seeded randomness is for tests and reproductions "
            f"only and is never charged to a ledger file; use --ledger {MEMORY} (nothing "
            "recorded) with --seed, or drop --seed"
        )
    if in_memory:
        if args.budget is None:
            raise ParameterError(f"--ledger {MEMORY} needs --budget EPS[,DELTA] (its total)")
        if args.anchor is not None:
            raise ParameterError(f"--anchor needs a ledger file, not --ledger {MEMORY}")
        print(MEMORY_NOTICE, file=sys.stderr)
    rng = None if args.seed is None else SeededRandom(args.seed)
    if args.dry_run:  # no data is opened: the plan uses the schema and the ledger only
        return _dry_run(args, schema, None if in_memory else ledger)
    with Session(args.data, parse_budget(args.budget), None if in_memory else ledger,
                 schema=schema, rng=rng, replay=args.replay, rows_epsilon=args.release_rows,
                 anchor=args.anchor, engine=engine, engine_options=options) as s:
        r = s.release(args.query, epsilon=args.data_epsilon, delta=args.data_delta,
                      mechanism=args.data_mechanism, output=args.output,
                      confidence=args.confidence, reserve_for=args.reserve_for)
        _report(args, r, s, ledger, in_memory)
    return 0


def _dry_run(args: argparse.Namespace, schema: Any, ledger: str | None) -> int:
    """``--dry-run``: the plan from the schema and the ledger only (no data opened)."""
    from ..session import Session
    from .output import emit_json

    with Session(None, parse_budget(args.budget), ledger,
                 schema=schema, anchor=args.anchor) as s:
        p = s.plan(args.query, epsilon=args.data_epsilon, delta=args.data_delta,
                   mechanism=args.data_mechanism, reserve_for=args.reserve_for or 0)
        if args.json:
            emit_json({"dry_run": True, "query": p.query, "accountant": p.accountant,
                       "reserve_for": p.reserve_for, "epsilon": p.epsilon,
                       "delta": p.delta, "mechanism": p.mechanism, "fits": p.fits,
                       "basic_epsilon": p.basic_epsilon,
                       "composed_after": p.composed_after,
                       "components": p.components, "notes": list(p.notes)})
            return 0
        print("dry run: nothing read, nothing spent")
        print(p)
    return 0


def _report(args: argparse.Namespace, r: Any, s: Any, ledger: str, in_memory: bool) -> None:
    """Print a release (or its ``--json`` form) after it was recorded."""
    from ..session.table import release_columns
    from .output import Table, emit_json

    remaining = s.remaining
    if args.json:
        emit_json({
            "query": r.query, "canonical": r.canonical, "mechanism": r.mechanism,
            "epsilon": r.epsilon, "delta": r.delta, "guarantee": r.guarantee,
            "ledger": str(ledger), "ledger_id": r.ledger_id, "replayed": r.replayed,
            "ledger_head": {"event": s.ledger.head_seq, "hash": s.ledger.head},
            "recorded": not in_memory,
            "remaining": {"epsilon": remaining.epsilon, "delta": remaining.delta},
            "columns": r.columns(),
            "rows": [] if "written" in r.details or "output" in r.details
            else Table(release_columns(r).values()),
            **({"output": r.details["output"]} if "output" in r.details else {}),
            **({"confidence": r.confidence, "error_bars": r.interval_note()}
               if "written" not in r.details else {}),
            **({"written": r.details["written"]} if "written" in r.details else {}),
        })
        return
    print(f"query:      {r.canonical}")
    print(f"mechanism:  {r.mechanism}")
    print(f"guarantee:  {r.guarantee}")
    tag = " (replayed from the ledger, nothing spent)" if r.replayed else ""
    print(f"ledger:     {ledger} release {r.ledger_id}{tag}"
          + ("  (in memory: NOT recorded)" if in_memory else ""))
    print(f"head:       event {s.ledger.head_seq} {s.ledger.head}")
    print(f"remaining:  {remaining} of {s.budget}")
    print()
    if "output" in r.details:
        print(f"written:    {r.details['output']} ({r.values.size} cells, columns "
              f"{', '.join(r.columns())})")
    elif "written" in r.details:
        w = r.details["written"]
        print(f"written:    {w['output']} ({w['cells']} cells, noised on the executors "
              f"in {w['blocks']} blocks)")
    else:
        print(r.table(limit=args.limit))
