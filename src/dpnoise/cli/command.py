"""What a ``dpnoise`` command is, and the argument types several commands share.

A command module defines one function decorated with :func:`subcommand`; the decorator
turns it into a :class:`Command` (name, help line, arguments, runner) and registers it
nowhere: :mod:`dpnoise.cli` lists the commands explicitly.  Command modules import this
module and :mod:`.output`, never the ``dpnoise.cli`` package itself, and import heavy
modules (mechanisms, scipy) inside the runner so that ``dpnoise --help`` stays fast.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Runner = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    """One top-level ``dpnoise`` command."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Runner

    def __call__(self, args: argparse.Namespace) -> int:
        return self.run(args)


def subcommand(name: str, help_text: str, add_arguments: Callable[[argparse.ArgumentParser], None]
               ) -> Callable[[Runner], Command]:
    """Make the decorated runner a :class:`Command` (list it in ``dpnoise.cli.COMMANDS``)."""

    def deco(fn: Runner) -> Command:
        return Command(name, help_text, add_arguments, fn)

    return deco


def rng_from(args: argparse.Namespace) -> Any:
    """``--seed S`` -> a reproducible (NOT secure) source; no seed -> None (OS CSPRNG)."""
    seed = getattr(args, "seed", None)
    if seed is None:
        return None
    from ..randomness import SeededRandom

    return SeededRandom(seed)


def parse_grid(text: str) -> float:
    """A grid step: a number or ``2^k`` / ``2**k``."""
    m = re.fullmatch(r"\s*2\s*(?:\^|\*\*)\s*(-?\d+)\s*", text)
    if m:
        return 2.0 ** int(m.group(1))
    try:
        return float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a grid step: {text!r} (use e.g. 2^-20)") from exc
