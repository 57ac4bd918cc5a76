"""``dpnoise reproduce NAME``: regenerate a paper's tables and figures (CSV + PNG + markdown)."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from .command import subcommand

# name -> module under dpnoise.reproduce exposing run(out_dir: Path, quick: bool) -> list[Path]
REPRODUCTIONS: dict[str, str] = {
    "range-laplace": "range_laplace",
    "truncated-laplacian": "truncated_laplacian",
    "count-noise": "count_noise",
    "finite-precision": "finite_precision",
    "staircase": "staircase",
}


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", choices=sorted(REPRODUCTIONS) or ["(none yet)"],
                   help="which paper's results to regenerate")
    p.add_argument("--out", type=Path, default=Path("out"), help="output directory (default out/)")
    p.add_argument("--quick", action="store_true", help="smaller grids, for a fast check")


@subcommand("reproduce", "regenerate a paper's tables and figures", _args)
def cmd_reproduce(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"dpnoise.reproduce.{REPRODUCTIONS[args.name]}")
    out_dir = args.out / args.name
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in module.run(out_dir, quick=args.quick):
        print(path)
    return 0
