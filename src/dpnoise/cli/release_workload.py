"""``dpnoise release --workload FILE --data DATA ...``: every query of a workload file in
one run -- the data opened and fingerprinted once, the whole budget reserved in one ledger
transaction (all or nothing), one table per query (``--output DIR``: ``DIR/<name>.parquet``
or ``.csv``, as the workload's ``format`` says).  See :mod:`dpnoise.session.workload`.

    dpnoise release --workload tables.toml --data people.csv --schema people.toml \\
        --ledger people.ledger --output releases/

The data flags (``--schema``, ``--bounds``, ``--ledger``, ``--anchor``, ``--engine``, ...)
are those of a single release; ``--query``, ``--epsilon``, ``--delta``, ``--mechanism``,
``--reserve-for`` belong to the workload file instead.  ``--dry-run`` prints the plan --
each query's epsilon (chosen from its target, see :mod:`dpnoise.session.targets`), its
expected error next to its target, and the composed charge under the ledger's accountant
-- without opening the data or spending anything.  Exit status 0 when every query was
released (or planned, with ``--dry-run``, and it fits), 1 when a query failed after its
reservation (its charge is kept; the others were released) or a dry run does not fit, 2
on an error before anything was spent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import ParameterError

#: single-release flags that the workload file replaces (dest, flag)
_PER_QUERY = (("query", "--query"), ("data_epsilon", "--epsilon"), ("data_delta", "--delta"),
              ("data_mechanism", "--mechanism"), ("reserve_for", "--reserve-for"))


def run_workload_release(args: argparse.Namespace) -> int:
    from ..randomness import SeededRandom
    from ..session import Schema, Session
    from ..session.opening import resolve_schema
    from ..session.workload import Workload
    from .data_args import DEFAULT_LEDGER, MEMORY, MEMORY_NOTICE, engine_options, parse_budget

    given = [flag for dest, flag in _PER_QUERY if getattr(args, dest, None) is not None]
    if given:
        raise ParameterError(f"{', '.join(given)}: with --workload each query, its epsilon, "
                             "delta, target and mechanism are in the workload file")
    workload = Workload.load(args.workload)  # a bad file is refused before the data opens
    engine, options = engine_options(args)
    base = resolve_schema(args.schema, args.data) if (
        args.schema is not None or Path(args.data).with_suffix(".toml").is_file()) else None
    schema = Schema.from_flags(
        args.bounds, args.categories, args.keys, user_id=args.user_id,
        max_contributions=args.max_contributions, max_rows=args.max_rows, table=args.table,
        base=base, texts=args.text, max_groups=args.max_groups,
        max_rows_per_group=args.max_rows_per_group)
    ledger = args.ledger or DEFAULT_LEDGER
    in_memory = ledger == MEMORY
    if args.seed is not None and not in_memory:
        raise ParameterError(f"--seed with ledger {ledger!r}: seeded randomness is never "
                             f"charged to a ledger file; use --ledger {MEMORY} with --seed")
    if in_memory:
        if args.budget is None:
            raise ParameterError(f"--ledger {MEMORY} needs --budget EPS[,DELTA] (its total)")
        if args.anchor is not None:
            raise ParameterError(f"--anchor needs a ledger file, not --ledger {MEMORY}")
        print(MEMORY_NOTICE, file=sys.stderr)
    rng = None if args.seed is None else SeededRandom(args.seed)
    if args.dry_run:  # no data is opened: the plan uses the schema and the ledger only
        with Session(None, parse_budget(args.budget), None if in_memory else ledger,
                     schema=schema, anchor=args.anchor) as s:
            plan = s.plan_workload(workload)
            if args.json:
                from .output import emit_json

                emit_json({"dry_run": True, "workload": workload.name, "mode": plan.mode,
                           "accountant": plan.accountant, "composed": plan.composed,
                           "fits": plan.fits, "queries": plan.rows()})
            else:
                print("dry run: nothing read, nothing spent")
                print(plan)
        return 0 if plan.fits else 1
    with Session(args.data, parse_budget(args.budget), None if in_memory else ledger,
                 schema=schema, rng=rng, replay=args.replay, rows_epsilon=args.release_rows,
                 anchor=args.anchor, engine=engine, engine_options=options) as s:
        result = s.run_workload(workload, output=args.output)
        if args.json:
            _emit(result, s, str(ledger), in_memory)
        else:
            _print(result, s, str(ledger), in_memory, args.limit)
    return 1 if result.failed else 0


def _emit(result: Any, s: Any, ledger: str, in_memory: bool) -> None:
    from ..session.table import release_columns
    from .output import Table, emit_json

    wl = result.workload
    remaining = s.remaining
    queries = []
    for q in wl.queries:
        r = result.releases.get(q.name)
        if r is None:
            queries.append({"name": q.name, "query": q.query, "status": "failed",
                            "error": result.failed[q.name]})
            continue
        written = "written" in r.details or q.name in result.outputs
        queries.append({
            "name": q.name, "query": r.query, "canonical": r.canonical,
            "status": "replayed" if r.replayed else "released", "mechanism": r.mechanism,
            "epsilon": r.epsilon, "delta": r.delta, "guarantee": r.guarantee,
            "ledger_id": r.ledger_id, "columns": r.columns(),
            "rows": [] if written else Table(release_columns(r).values()),
            **({"output": result.outputs[q.name]}
               if q.name in result.outputs else {}),
            **({"confidence": r.confidence, "error_bars": r.interval_note()}
               if r.has_intervals() else {})})
    emit_json({"workload": wl.name, "ledger": ledger, "recorded": not in_memory,
               **({"plan": result.plan.rows()} if result.plan is not None else {}),
               "ledger_head": {"event": s.ledger.head_seq, "hash": s.ledger.head},
               "remaining": {"epsilon": remaining.epsilon, "delta": remaining.delta},
               "queries": queries})


def _print(result: Any, s: Any, ledger: str, in_memory: bool, limit: int) -> None:
    wl = result.workload
    print(f"workload:   {wl.name} ({len(wl.queries)} queries, epsilon={wl.epsilon:.6g}"
          + (f", delta={wl.delta:.3g}" if wl.delta else "") + ")")
    print(f"ledger:     {ledger}" + ("  (in memory: NOT recorded)" if in_memory else ""))
    print(f"head:       event {s.ledger.head_seq} {s.ledger.head}")
    print(f"remaining:  {s.remaining} of {s.budget}")
    if result.plan is not None:
        print(result.plan)
    for q in wl.queries:
        print()
        r = result.releases.get(q.name)
        if r is None:
            print(f"[{q.name}] {q.query}\nFAILED: {result.failed[q.name]}")
            continue
        tag = "replayed from the ledger, nothing spent" if r.replayed else \
            f"ledger release {r.ledger_id}"
        print(f"[{q.name}] {r.canonical}  ({tag})")
        print(f"mechanism:  {r.mechanism}")
        print(f"guarantee:  {r.guarantee}")
        if q.name in result.outputs:
            print(f"written:    {result.outputs[q.name]} ({r.values.size} cells, "
                  f"columns {', '.join(r.columns())})")
        elif "written" in r.details:
            w = r.details["written"]
            print(f"written:    {w['output']} ({w['cells']} cells, noised on the executors)")
        else:
            print(r.table(limit=limit))
