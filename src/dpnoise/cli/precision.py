"""Finite-precision commands (paper 003).

    dpnoise precision --epsilon 1 --lower -1000 --upper 1000 --grid 2^-20
    dpnoise precision --epsilon 1 --lower -1000 --upper 1000 --tolerance 1.0001
    dpnoise precision --epsilon 0.01 --lower -1000 --upper 1000 --grid 1 --dim 2
    dpnoise audit numpy --epsilon 1            (also dpnoise, diffprivlib, opendp, ...)
    dpnoise planar --epsilon 0.01 --grid 1 --domain 0 2000 0 2000 512 700
"""

from __future__ import annotations

import argparse
import math
import re

import numpy as np

from ..cli import emit_json, subcommand
from ..errors import ParameterError


def parse_grid(text: str) -> float:
    """A grid step: a number or ``2^k`` / ``2**k``."""
    m = re.fullmatch(r"\s*2\s*(?:\^|\*\*)\s*(-?\d+)\s*", text)
    if m:
        return 2.0 ** int(m.group(1))
    try:
        return float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a grid step: {text!r} (use e.g. 2^-20)") from exc


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
    from ..precision import analyse, grid_for_tolerance

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


# ------------------------------------------------------------------------ audit
def _audit_args(p: argparse.ArgumentParser) -> None:
    from ..audit_targets import TARGETS

    p.add_argument("target", nargs="+", choices=sorted(TARGETS), metavar="TARGET",
                   help="sampler(s) to audit: " + ", ".join(sorted(TARGETS)))
    p.add_argument("--epsilon", type=float, default=1.0, help="epsilon to configure (default 1)")
    p.add_argument("--sensitivity", type=float, default=1.0, help="sensitivity (default 1)")
    p.add_argument("--x", type=float, default=0.0, help="first input; the other is x + Δ")
    p.add_argument("--n", type=int, default=20_000, help="samples per input and phase")
    p.add_argument("--alpha", type=float, default=1e-3, help="1 - confidence (default 1e-3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the audited samplers")
    p.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("audit", "black-box audit of a noise sampler for leaks above its claim",
            _audit_args)
def cmd_audit(args: argparse.Namespace) -> int:
    from ..audit import audit
    from ..audit_targets import TargetUnavailableError, build_target

    results = {}
    status = 0
    for name in args.target:
        try:
            t = build_target(name, epsilon=args.epsilon, sensitivity=args.sensitivity,
                             seed=args.seed, x=args.x)
        except TargetUnavailableError as exc:
            results[name] = {"unavailable": str(exc)}
            if not args.json:
                print(f"== {name}: unavailable ({exc})\n")
            continue
        rep = audit(t.sampler, t.x, t.x_prime, claimed_epsilon=t.claimed_epsilon, n=args.n,
                    alpha=args.alpha, support=t.support)
        status |= 0 if rep.passed else 1
        results[name] = {"description": t.description, **rep.as_dict()}
        if not args.json:
            print(f"== {name}: {t.description}")
            print(rep.summary() + "\n")
    if args.json:
        emit_json(results)
    return status


# ------------------------------------------------------------------------ planar
def _planar_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True,
                   help="epsilon at distance --sensitivity (epsilon_g = epsilon/sensitivity)")
    p.add_argument("--sensitivity", type=float, default=1.0,
                   help="distance (in coordinate units, e.g. metres) for --epsilon")
    p.add_argument("--grid", type=parse_grid, required=True, help="output grid step (2^k)")
    p.add_argument("--domain", type=float, nargs=4, required=True,
                   metavar=("XMIN", "XMAX", "YMIN", "YMAX"),
                   help="rectangle of true points (projected coordinates, e.g. UTM metres)")
    p.add_argument("--exit-probability", type=float, default=1e-3,
                   help="margin of the region M_r: a true point exits with at most this "
                        "probability (default 1e-3)")
    p.add_argument("points", type=float, nargs="+", metavar="X Y",
                   help="true point(s) as x y pairs")
    p.add_argument("--seed", default=None, help="reproducible (NOT secure) randomness")
    p.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("planar", "geo-indistinguishable planar Laplace release of locations", _planar_args)
def cmd_planar(args: argparse.Namespace) -> int:
    from ..cli import _rng_from
    from ..mechanisms.planar import PlanarLaplace

    if len(args.points) % 2:
        raise ParameterError("points must be x y pairs (an even number of values)")
    xmin, xmax, ymin, ymax = args.domain
    m = PlanarLaplace.with_margin(epsilon=args.epsilon, sensitivity=args.sensitivity,
                                  grid=args.grid, domain=((xmin, xmax), (ymin, ymax)),
                                  exit_probability=args.exit_probability)
    pts = np.asarray(args.points, dtype=float).reshape(-1, 2)
    rel = m.release(pts, rng=_rng_from(args))
    g = m.guarantee
    if args.json:
        emit_json({"mechanism": repr(m), "guarantee": g.as_dict(),
                   "releases": [{"true": t.tolist(),
                                 "private": None if e else p.tolist(), "exception": bool(e)}
                                for t, p, e in zip(pts, rel.points, rel.exited, strict=True)]})
        return 0
    print(f"mechanism: {m!r}")
    print(f"guarantee: {g}  {g.note}")
    for t, p, e in zip(pts, rel.points, rel.exited, strict=True):
        shown = "EXCEPTION (left the region)" if e else f"({float(p[0])!r}, {float(p[1])!r})"
        print(f"({t[0]:.10g}, {t[1]:.10g}) -> {shown}")
    return 0
