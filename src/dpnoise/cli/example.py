"""``dpnoise example DIR``: copy the example data set and its schema into a directory."""

from __future__ import annotations

import argparse

from .command import subcommand


def _example_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", nargs="?", default=".",
                   help="where to write people.csv and people.toml (default: here)")
    p.add_argument("--force", action="store_true", help="replace files that exist")


@subcommand("example", "write the example data people.csv, its schema people.toml and "
            "a workload targets.toml", _example_args)
def cmd_example(args: argparse.Namespace) -> int:
    from ..examples import copy_to

    for p in copy_to(args.directory, overwrite=args.force):
        print(f"wrote {p}")
    return 0
