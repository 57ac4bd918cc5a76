"""``dpnoise demo``: a short custodian session on a bundled data set."""

from __future__ import annotations

import argparse

from .command import rng_from, subcommand


def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", default=None, help="reproducible (NOT secure) randomness")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--ledger", default=None,
                   help="keep the session's budget ledger in this SQLite file (default: temp)")
    p.add_argument("--report", metavar="FILE", default=None,
                   help="also write the ledger's HTML release report to FILE")


@subcommand("demo", "a short custodian session on a bundled data set", _demo_args)
def cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    return run_demo(rng=rng_from(args), as_json=args.json, ledger=args.ledger,
                    report=args.report)
