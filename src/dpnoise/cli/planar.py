"""``dpnoise planar``: geo-indistinguishable planar Laplace release of locations.

    dpnoise planar --epsilon 0.01 --grid 1 --domain 0 2000 0 2000 512 700
"""

from __future__ import annotations

import argparse

from ..errors import ParameterError
from .command import parse_grid, rng_from, subcommand
from .output import emit_json


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
    import numpy as np

    from ..mechanisms.planar import PlanarLaplace

    if len(args.points) % 2:
        raise ParameterError("points must be x y pairs (an even number of values)")
    xmin, xmax, ymin, ymax = args.domain
    m = PlanarLaplace.with_margin(epsilon=args.epsilon, sensitivity=args.sensitivity,
                                  grid=args.grid, domain=((xmin, xmax), (ymin, ymax)),
                                  exit_probability=args.exit_probability)
    pts = np.asarray(args.points, dtype=float).reshape(-1, 2)
    rel = m.release(pts, rng=rng_from(args))
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
