"""``dpnoise verify``: numerically verify a named mechanism's privacy claim.

    dpnoise verify laplace --epsilon 1 --sensitivity 1
"""

from __future__ import annotations

import argparse
import math

from ..mechanisms.registry import entries
from .command import subcommand
from .output import emit_json


def _verify_args(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="mechanism", metavar="MECHANISM", required=True)
    for e in entries().values():
        sp = sub.add_parser(e.name, help=e.summary, description=e.summary)
        e.add_arguments(sp)
        sp.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("verify", "numerically verify a mechanism's privacy claim", _verify_args)
def cmd_verify(args: argparse.Namespace) -> int:
    from ..verify import verify

    mech = entries()[args.mechanism].build_from_args(args)
    report = verify(mech)
    if args.json:
        emit_json({"mechanism": repr(mech), **report.as_dict()})
    else:
        print(f"mechanism:          {mech!r}")
        print(f"claimed:            {mech.guarantee}")
        shown = "inf (unbounded)" if math.isinf(report.epsilon) else f"{report.epsilon:.12g}"
        print(f"verified max loss:  {shown}")
        print(f"method:             {report.method}")
        print("delta(eps'):        " + ", ".join(f"{e:g}: {d:.4g}" for e, d in report.delta_curve))
        print("result:             " + ("PASS" if report.passed else "FAIL"))
    return 0 if report.passed else 1
