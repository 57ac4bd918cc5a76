"""``dpnoise reproduce NAME``: regenerate a paper's tables and figures (CSV + PNG + markdown);
``dpnoise reproduce claims [NAME]``: run the claims register and print its verdicts."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from ..errors import ParameterError
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
    p.add_argument("name", choices=[*sorted(REPRODUCTIONS), "claims"],
                   help="which paper's results to regenerate, or 'claims' (the register)")
    p.add_argument("paper", nargs="?", choices=sorted(REPRODUCTIONS),
                   help="with 'claims': one paper only (default: all five)")
    p.add_argument("--out", type=Path, default=Path("out"), help="output directory (default out/)")
    p.add_argument("--quick", action="store_true", help="smaller grids, for a fast check")
    p.add_argument("--write", type=Path, metavar="MARKDOWN",
                   help="with 'claims': also rewrite the summary block of this file "
                        "(docs/papers.md)")


def _claims(args: argparse.Namespace) -> int:
    from ..reproduce import claims

    results = claims.run([args.paper] if args.paper else list(claims.PAPERS), quick=args.quick)
    print(claims.summary(results), end="")
    if args.write is not None:
        args.write.write_text(claims.with_summary(args.write.read_text(), results))
    bad = claims.disagreements(results)
    for line in bad:
        print(f"DISAGREES: {line}")
    return 1 if bad else 0


@subcommand("reproduce", "regenerate a paper's tables and figures, or check its claims", _args)
def cmd_reproduce(args: argparse.Namespace) -> int:
    if args.name == "claims":
        return _claims(args)
    if args.paper is not None:
        raise ParameterError("a second name is taken only by 'dpnoise reproduce claims'")
    module = importlib.import_module(f"dpnoise.reproduce.{REPRODUCTIONS[args.name]}")
    out_dir = args.out / args.name
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in module.run(out_dir, quick=args.quick):
        print(path)
    return 0
