"""``dpnoise report LEDGER [--out report.html]``: the publishable HTML release report.

One self-contained file (inline CSS and SVG, a no-fetch Content-Security-Policy) built
from the ledger's public fields only: see :mod:`dpnoise.report`.
"""

from __future__ import annotations

import argparse

from .command import subcommand


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("ledger", help="the ledger file")
    p.add_argument("--out", metavar="FILE", default="report.html",
                   help="where to write the HTML report (default: report.html)")
    p.add_argument("--anchor", metavar="FILE", default=None,
                   help="the ledger's anchor file: a restored older copy is refused")
    p.add_argument("--no-anchor", action="store_true",
                   help="report an anchored ledger without its anchor (prints 'rollback not "
                        "checked', status 1)")
    p.add_argument("--name", default=None,
                   help="the data set's name as the custodian declares it (shown as the title)")


@subcommand("report", "write a self-contained HTML release report from a ledger", _args)
def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import LedgerError, ParameterError
    from ..report import ledger_report
    from ..session import Ledger
    from .ledger import NOT_CHECKED, anchor_required

    if args.no_anchor and args.anchor is not None:
        raise ParameterError("give --anchor FILE or --no-anchor, not both")
    if not Path(args.ledger).is_file():
        raise LedgerError(f"ledger {args.ledger!r} does not exist")
    with Ledger(args.ledger, anchor=args.anchor) as led:
        unchecked = anchor_required(led, args.ledger, args)
        html = ledger_report(led, name=args.name)
    out = Path(args.out)
    out.write_text(html, encoding="utf-8")
    print(f"report written to {out.resolve()}")
    if unchecked:
        print(NOT_CHECKED)
        return 1
    return 0
