"""``dpnoise ledger FILE``: show a budget ledger -- total, spent, remaining, every release."""

from __future__ import annotations

import argparse

import numpy as np

from .command import subcommand
from .output import emit_json


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("ledger", help="the SQLite ledger file")
    p.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("ledger", "show a privacy-budget ledger: total, spent, remaining, releases", _args)
def cmd_ledger(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import LedgerError
    from ..session import Ledger

    if not Path(args.ledger).is_file():
        raise LedgerError(f"ledger {args.ledger!r} does not exist")
    with Ledger(args.ledger) as led:
        rows = led.entries()
        spent, left = led.spent(), led.remaining()
        if args.json:
            emit_json({
                "total": {"epsilon": led.budget.epsilon, "delta": led.budget.delta},
                "spent": {"epsilon": spent.epsilon, "delta": spent.delta},
                "remaining": {"epsilon": left.epsilon, "delta": left.delta},
                "releases": [{
                    "id": e.id, "time": e.created_at, "status": e.status, "query": e.query,
                    "mechanism": e.mechanism, "epsilon": e.epsilon, "delta": e.delta,
                    "answer": None if e.answer is None else e.answer.ravel()[:20].tolist(),
                } for e in rows],
            })
            return 0
        print(f"ledger:    {args.ledger}")
        print(f"total:     {led.budget}")
        print(f"spent:     {spent}  ({len(rows)} releases, basic sequential composition)")
        print(f"remaining: {left}\n")
        for e in rows:
            ans = "" if e.answer is None else np.array2string(
                e.answer.ravel()[:6], precision=6, separator=", ")
            print(f"{e.id:>5d}  {e.created_at[:20]}  {e.status:8s}  eps={e.epsilon:<8.4g} "
                  f"{e.query}  ->  {ans}")
    return 0
