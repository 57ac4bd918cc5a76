"""``dpnoise release``: release private answers with a named mechanism, or a statistic of a
data file (``--data``, see :mod:`.release_data`).

    dpnoise release laplace --epsilon 1 --sensitivity 1 42
"""

from __future__ import annotations

import argparse

from ..errors import ParameterError
from ..mechanisms.registry import entries
from .command import rng_from, subcommand
from .data_args import add_data_arguments
from .output import emit_json


def _release_args(p: argparse.ArgumentParser) -> None:
    # Two forms: ``release MECHANISM ... TRUE_VALUE`` and ``release --data FILE --query Q``.
    # The mechanism subcommand is therefore optional here; cmd_release insists on one form.
    add_data_arguments(p)
    sub = p.add_subparsers(dest="mechanism", metavar="MECHANISM", required=False)
    for e in entries().values():
        sp = sub.add_parser(e.name, help=e.summary, description=e.summary)
        e.add_arguments(sp)
        sp.add_argument("values", nargs="+", type=float, metavar="TRUE_VALUE",
                        help="true answer(s) to release")
        sp.add_argument("--seed", default=None,
                        help="reproducible (NOT secure) randomness; default: OS-keyed CSPRNG")
        sp.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("release", "release private answers with a mechanism, or statistics of a data "
            "file (--data)", _release_args)
def cmd_release(args: argparse.Namespace) -> int:
    import numpy as np

    if getattr(args, "data", None) is not None:
        if args.mechanism is not None:
            raise ParameterError(
                "give either MECHANISM TRUE_VALUE... or --data FILE --query Q, not both "
                "(with --data, choose the mechanism with --mechanism NAME)"
            )
        from .release_data import run_data_release

        return run_data_release(args)
    if args.mechanism is None:
        raise ParameterError(
            "release needs a MECHANISM (e.g. dpnoise release laplace --epsilon 1 42) "
            "or --data FILE --query QUERY (or --data FILE --workload FILE)"
        )
    mech = entries()[args.mechanism].build_from_args(args)
    values = np.asarray(args.values, dtype=np.float64)
    guarantee = mech.guarantee
    private = np.atleast_1d(np.asarray(mech.release(values, rng=rng_from(args))))
    if args.json:
        emit_json({
            "mechanism": repr(mech),
            "guarantee": guarantee.as_dict(),
            "releases": [{"true": float(t), "private": p.item() if hasattr(p, "item") else p}
                         for t, p in zip(values, private, strict=True)],
        })
    else:
        print(f"mechanism: {mech!r}")
        print(f"guarantee: {guarantee}  {guarantee.note}".rstrip())
        for t, p in zip(values, private, strict=True):
            print(f"{t:>16.10g} -> {p.item()!r}")
    return 0
