"""The ``dpnoise`` command line.

    dpnoise release laplace --epsilon 1 --sensitivity 1 42
    dpnoise verify laplace --epsilon 1 --sensitivity 1
    dpnoise demo
    dpnoise reproduce NAME

Bad input prints ``error: ...`` (naming the parameter and its valid range) and exits
with status 2 before anything random happens.  ``--json`` prints machine-readable
output.  Long-running commands show a progress bar on a terminal only.

One module per command; :data:`COMMANDS` lists them explicitly, in the order of
``dpnoise --help``.  A new command is a module here with one function decorated by
:func:`.command.subcommand`, plus one line in :data:`COMMANDS`.  Command modules import
:mod:`.command` and :mod:`.output`, never this package, so there is no import circle; they
import mechanisms, scipy and the session inside their runners, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import DpnoiseError
from . import (
    audit,
    bounds,
    compare,
    demo,
    example,
    ledger,
    planar,
    precision,
    release,
    report,
    reproduce,
    verify,
)
from .command import Command

COMMANDS: tuple[Command, ...] = (
    release.cmd_release,
    bounds.cmd_bounds,
    verify.cmd_verify,
    demo.cmd_demo,
    example.cmd_example,
    compare.cmd_compare,
    ledger.cmd_ledger,
    report.cmd_report,
    precision.cmd_precision,
    audit.cmd_audit,
    planar.cmd_planar,
    reproduce.cmd_reproduce,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpnoise",
        description="Differential-privacy noise, calibrated tightly and safe on real floats.",
    )
    parser.add_argument("--version", action="version", version=f"dpnoise {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in COMMANDS:
        sp = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(sp)
        sp.set_defaults(func=cmd.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except DpnoiseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0
