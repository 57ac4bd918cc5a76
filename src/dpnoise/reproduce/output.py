"""Output helpers shared by the ``dpnoise reproduce`` modules: CSV files, markdown tables, PNGs."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write ``header`` then ``rows`` to ``path`` as CSV; return ``path``."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]],
             fmt: Callable[[Any], str] = str) -> str:
    """A GitHub-markdown table; each cell is rendered by ``fmt``."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def save_figure(fig: Any, path: Path) -> Path:
    """Lay out ``fig``, save it to ``path`` as a 120-dpi PNG, close it; return ``path``."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
