"""Progress bars for long-running commands: shown on a terminal, silent when piped."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Wrap ``items`` in a tqdm bar on stderr when stderr is a TTY; plain iteration otherwise."""
    return iter(tqdm(items, total=total, desc=desc, disable=not sys.stderr.isatty(),
                     file=sys.stderr, leave=False))
