"""``dpnoise compare``: utility of each applicable mechanism for one (ε, δ, Δ) budget."""

from __future__ import annotations

import argparse

from .command import subcommand
from .output import emit_json


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=float, default=0.0,
                   help="privacy parameter delta in [0, 1) (default 0: pure DP only)")
    p.add_argument("--sensitivity", type=float, default=1.0, help="sensitivity (default 1)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("compare", "compare the noise of every mechanism that fits a budget", _args)
def cmd_compare(args: argparse.Namespace) -> int:
    from ..compare import compare, format_table

    rows = compare(args.epsilon, args.delta, args.sensitivity)
    if args.json:
        emit_json({"epsilon": args.epsilon, "delta": args.delta,
                   "sensitivity": args.sensitivity, "rows": [r.as_dict() for r in rows]})
    else:
        print(format_table(rows, args.epsilon, args.delta, args.sensitivity))
    return 0
