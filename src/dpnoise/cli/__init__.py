"""The ``dpnoise`` command line.

    dpnoise release laplace --epsilon 1 --sensitivity 1 42
    dpnoise verify laplace --epsilon 1 --sensitivity 1
    dpnoise demo
    dpnoise reproduce NAME

Bad input prints ``error: ...`` (naming the parameter and its valid range) and exits
with status 2 before anything random happens.  ``--json`` prints machine-readable
output.  Long-running commands show a progress bar on a terminal only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import __version__
from .catalog import entries
from .errors import DpnoiseError, ParameterError
from .randomness import SeededRandom

Command = Callable[[argparse.Namespace], int]
_SUBCOMMANDS: list[tuple[str, str, Callable[[argparse.ArgumentParser], None], Command]] = []


def subcommand(name: str, help_text: str, add_arguments: Callable[[argparse.ArgumentParser], None]
               ) -> Callable[[Command], Command]:
    """Register a top-level command (used by this module and by command modules)."""

    def deco(fn: Command) -> Command:
        _SUBCOMMANDS.append((name, help_text, add_arguments, fn))
        return fn

    return deco


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    return str(o)


def emit_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=_json_default, allow_nan=True))


def _rng_from(args: argparse.Namespace) -> Any:
    seed = getattr(args, "seed", None)
    return None if seed is None else SeededRandom(seed)


# ----------------------------------------------------------------------- release
def _release_args(p: argparse.ArgumentParser) -> None:
    from .commands.release_data import add_data_arguments

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
    if getattr(args, "data", None) is not None:
        if args.mechanism is not None:
            raise ParameterError(
                "give either MECHANISM TRUE_VALUE... or --data FILE --query Q, not both "
                "(with --data, choose the mechanism with --mechanism NAME)"
            )
        from .commands.release_data import run_data_release

        return run_data_release(args)
    if args.mechanism is None:
        raise ParameterError(
            "release needs a MECHANISM (e.g. dpnoise release laplace --epsilon 1 42) "
            "or --data FILE --query QUERY"
        )
    mech = entries()[args.mechanism].build(args)
    values = np.asarray(args.values, dtype=np.float64)
    guarantee = mech.guarantee
    private = np.atleast_1d(np.asarray(mech.release(values, rng=_rng_from(args))))
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


# ------------------------------------------------------------------------ verify
def _verify_args(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="mechanism", metavar="MECHANISM", required=True)
    for e in entries().values():
        sp = sub.add_parser(e.name, help=e.summary, description=e.summary)
        e.add_arguments(sp)
        sp.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("verify", "numerically verify a mechanism's privacy claim", _verify_args)
def cmd_verify(args: argparse.Namespace) -> int:
    from .verify import verify

    mech = entries()[args.mechanism].build(args)
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


# -------------------------------------------------------------------------- demo
def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", default=None, help="reproducible (NOT secure) randomness")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--ledger", default=None,
                   help="keep the session's budget ledger in this SQLite file (default: temp)")


@subcommand("demo", "a short custodian session on a bundled data set", _demo_args)
def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(rng=_rng_from(args), as_json=args.json, ledger=args.ledger)


# --------------------------------------------------------------------- machinery
def _load_command_modules() -> None:
    """Import modules that register further commands (reproduce, compare, ...)."""
    import importlib

    for mod in ("dpnoise.commands",):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # pragma: no cover - optional during development
            if exc.name != mod:
                raise


def build_parser() -> argparse.ArgumentParser:
    _load_command_modules()
    parser = argparse.ArgumentParser(
        prog="dpnoise",
        description="Differential-privacy noise, calibrated tightly and safe on real floats.",
    )
    parser.add_argument("--version", action="version", version=f"dpnoise {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    seen: set[str] = set()
    for name, help_text, add_arguments, fn in _SUBCOMMANDS:
        if name in seen:
            continue
        seen.add(name)
        sp = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(sp)
        sp.set_defaults(func=fn)
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


if __name__ == "__main__":  # pragma: no cover
    # run through the package module so command modules register with the same registry
    from dpnoise.cli import main as _main

    sys.exit(_main())
