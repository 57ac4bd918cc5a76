"""The mechanisms the command line knows: name -> arguments and constructor.

Each entry declares its own CLI arguments and builds a calibrated mechanism from the
parsed namespace.  ``dpnoise release NAME`` and ``dpnoise verify NAME`` use it.  A new
mechanism joins the CLI by adding one :class:`MechanismEntry` to ``ENTRIES``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from .mechanisms.base import Mechanism


@dataclass(frozen=True)
class MechanismEntry:
    name: str
    summary: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    build: Callable[[argparse.Namespace], Mechanism]


def _privacy_args(p: argparse.ArgumentParser, *, delta: bool = False) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--sensitivity", type=float, default=1.0,
                   help="largest change of the true answer between neighbours (default 1)")
    if delta:
        p.add_argument("--delta", type=float, required=True, help="privacy parameter delta")


def _laplace_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p)
    p.add_argument("--grid", type=float, default=None,
                   help="output grid step, a power of two (default: sensitivity/4096 or coarser)")


def _build_laplace(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.laplace import Laplace

    return Laplace(epsilon=a.epsilon, sensitivity=a.sensitivity, grid=a.grid)


def _clamped_args(p: argparse.ArgumentParser) -> None:
    _laplace_args(p)
    p.add_argument("--lower", type=float, required=True, help="lower end of the valid range")
    p.add_argument("--upper", type=float, required=True, help="upper end of the valid range")


def _build_clamped(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.laplace import ClampedLaplace

    return ClampedLaplace(epsilon=a.epsilon, sensitivity=a.sensitivity, lower=a.lower,
                          upper=a.upper, grid=a.grid)


def _staircase_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p)
    p.add_argument("--criterion", choices=["variance", "mean_abs", "interval"],
                   default="variance",
                   help="member of the optimal family: min variance (default), min E|noise|, "
                        "or shortest symmetric interval at --level")
    p.add_argument("--level", type=float, default=0.95,
                   help="coverage for --criterion interval (default 0.95)")
    p.add_argument("--grid", type=float, default=None,
                   help="output grid step, a power of two (default: sensitivity/4096)")


def _build_staircase(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.staircase import Staircase

    return Staircase(epsilon=a.epsilon, sensitivity=a.sensitivity, criterion=a.criterion,
                     level=a.level, grid=a.grid)


ENTRIES: list[MechanismEntry] = [
    MechanismEntry("laplace", "pure ε-DP Laplace, exact on a power-of-two grid",
                   _laplace_args, _build_laplace),
    MechanismEntry("clamped-laplace", "Laplace then clamp into [lower, upper] (baseline)",
                   _clamped_args, _build_clamped),
    MechanismEntry("staircase", "optimal data-independent pure ε-DP noise (paper 004), exact "
                   "on a power-of-two grid", _staircase_args, _build_staircase),
]


def entries() -> dict[str, MechanismEntry]:
    return {e.name: e for e in ENTRIES}
