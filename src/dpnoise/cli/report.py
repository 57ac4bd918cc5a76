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
    out = Path(args.out)
    _check_out(args.out)
    with Ledger(args.ledger, anchor=args.anchor) as led:
        unchecked = anchor_required(led, args.ledger, args)
        html = ledger_report(led, name=args.name)
    try:
        out.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"--out {args.out!r} could not be written: {exc.strerror}") \
            from None
    print(f"report written to {out.resolve()}")
    if unchecked:
        print(NOT_CHECKED)
        return 1
    return 0


#: how every report begins (lower-cased): an existing --out file that does not is kept
_REPORT_START = b"<!doctype html"


def _check_out(path: str) -> None:
    """--out must name a file in a directory that exists; an existing file is replaced
    only if it is empty or an HTML page (an earlier report) -- never the ledger, its
    anchor or a data file named by mistake."""
    import os
    from pathlib import Path

    from ..errors import ParameterError

    if not path or "\x00" in path or path.endswith(("/", os.sep)) or \
            Path(path).name in ("", ".", ".."):
        raise ParameterError(f"--out {path!r} must name a file, not a directory")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise ParameterError(f"--out {path!r} exists and is not a regular file")
    if os.path.isfile(path):
        with open(path, "rb") as fh:
            head = fh.read(len(_REPORT_START))
        if head and head.lower() != _REPORT_START:
            raise ParameterError(
                f"--out {path!r} exists and is not an HTML page: only an earlier report is "
                "replaced (never a ledger, an anchor or a data file); choose another name")
    parent = Path(path).parent
    if not parent.is_dir():
        raise ParameterError(f"--out {path!r}: directory {str(parent)!r} does not exist")
