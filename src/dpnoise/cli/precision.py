"""``dpnoise precision``: epsilon' of noise rounded to a grid on real floats (paper 003).

    dpnoise precision --epsilon 1 --lower -1000 --upper 1000 --grid 2^-20
    dpnoise precision --epsilon 1 --lower -1000 --upper 1000 --tolerance 1.0001
    dpnoise precision --epsilon 0.01 --lower -1000 --upper 1000 --grid 1 --dim 2
"""

from __future__ import annotations

import argparse
import math

from ..errors import ParameterError
from .command import parse_grid, subcommand
from .output import emit_json


# ------------------------------------------------------------------------ precision
def _precision_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="epsilon of the ideal noise")
    p.add_argument("--sensitivity", type=float, default=1.0, help="sensitivity Δ (default 1)")
    p.add_argument("--lower", type=float, required=True, help="lower end of the range M_r")
    p.add_argument("--upper", type=float, required=True, help="upper end of the range M_r")
    p.add_argument("--dim", type=int, default=1, choices=(1, 2),
                   help="1 (interval) or 2 (square [lower, upper]^2, Euclidean)")
    p.add_argument("--grid", type=parse_grid, default=None,
                   help="rounding grid step, a power of two such as 2^-20")
    p.add_argument("--tolerance", type=float, default=None,
                   help="find the finest grid with eps' <= TOLERANCE x epsilon (e.g. 1.0001)")
    p.add_argument("--sampler", choices=("recommended", "inverse-cdf", "polar"),
                   default="recommended",
                   help="noise sampler whose error delta_t is used (default: dpnoise's)")
    p.add_argument("--bits", type=int, default=53, help="uniform bits of the paper's samplers")
    p.add_argument("--delta-t", type=float, default=None, help="override delta_t")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _print_report(title: str, rep: object) -> None:
    d = rep.as_dict()  # type: ignore[attr-defined]
    print(title)
    print(f"  grid L                 {d['grid']!r}  (= 2^{math.log2(d['grid']):g})")
    print(f"  region diameter D      {d['diameter']:.10g}   max |coordinate| A {d['max_abs']:.6g}")
    print(f"  sampler error delta_t  {d['delta_t']:.4g}   ({d['sampler']})")
    print(f"  eps' corrected         {d['eps_prime']:.10g}   (eps' - eps = {d['overhead']:.4g}, "
          f"ratio {d['ratio']:.10g})")
    print(f"  eps' as printed (§5/6) {d['eps_prime_printed']:.10g}   (loose: >= eps + ln 2)")
    if d["mironov_eps_prime"] is not None:
        print(f"  Mironov snapping       {d['mironov_eps_prime']:.16g}   on its forced grid "
              f"Lambda = {d['mironov_grid']!r}")


@subcommand("precision", "epsilon' of noise rounded to a grid on real floats (paper 003)",
            _precision_args)
def cmd_precision(args: argparse.Namespace) -> int:
    from ..laws.finite_precision import analyse, grid_for_tolerance

    if args.grid is None and args.tolerance is None:
        raise ParameterError("give --grid (to evaluate eps') and/or --tolerance (to find a grid)")
    common = dict(epsilon=args.epsilon, sensitivity=args.sensitivity, lower=args.lower,
                  upper=args.upper, dim=args.dim, sampler=args.sampler, bits=args.bits)
    out: dict[str, object] = {}
    if args.grid is not None:
        out["at_grid"] = analyse(grid=args.grid, delta_t=args.delta_t, **common)
    if args.tolerance is not None:
        out["for_tolerance"] = grid_for_tolerance(tolerance=args.tolerance, **common)
    if args.json:
        emit_json({k: v.as_dict() for k, v in out.items()})  # type: ignore[attr-defined]
        return 0
    print(f"epsilon {args.epsilon:g}, sensitivity {args.sensitivity:g}, range "
          f"[{args.lower:g}, {args.upper:g}]{'^2' if args.dim == 2 else ''}")
    if "at_grid" in out:
        _print_report("at the given grid:", out["at_grid"])
    if "for_tolerance" in out:
        _print_report(f"finest grid with eps' <= {args.tolerance:g} x epsilon:",
                      out["for_tolerance"])
    return 0
