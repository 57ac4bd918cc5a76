"""Generated blocks: the benchmark output that the README and docs/ show.

A block in a markdown file is::

    <!-- BEGIN bench:NAME -->
    ...the exact text of benchmarks/results/NAME.md...
    <!-- END bench:NAME -->

``python benchmarks/run.py`` (``make bench``) runs the benchmark scripts, writes each one's
output with the machine's load to ``benchmarks/results/NAME.md`` and rewrites every block
from it; the test suite checks that every block matches its committed result, so no
performance figure in the documentation is typed by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
_BLOCK = re.compile(r"<!-- BEGIN bench:([a-z0-9_-]+) -->\n(.*?)<!-- END bench:\1 -->",
                    re.DOTALL)


def documents() -> list[Path]:
    """The markdown files that may hold generated blocks."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(text: str) -> list[tuple[str, str]]:
    """(name, body) of every generated block in ``text``."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(text)]


def result(name: str) -> str:
    """The committed output of benchmark ``name`` (what its blocks must hold)."""
    path = RESULTS / f"{name}.md"
    if not path.is_file():
        raise FileNotFoundError(f"no benchmark result {path.relative_to(ROOT)}")
    return path.read_text()


def render(text: str) -> str:
    """``text`` with every block's body replaced by its committed result."""
    return _BLOCK.sub(lambda m: f"<!-- BEGIN bench:{m.group(1)} -->\n{result(m.group(1))}"
                      f"<!-- END bench:{m.group(1)} -->", text)


def rewrite() -> list[Path]:
    """Rewrite every document's blocks from the results; returns the files that changed."""
    changed = []
    for doc in documents():
        old = doc.read_text()
        new = render(old)
        if new != old:
            doc.write_text(new)
            changed.append(doc)
    return changed


def stale() -> list[str]:
    """Blocks whose body differs from the committed result, as ``file: name`` lines."""
    out = []
    for doc in documents():
        for name, body in blocks(doc.read_text()):
            try:
                want = result(name)
            except FileNotFoundError as err:
                out.append(f"{doc.relative_to(ROOT)}: {name} ({err})")
                continue
            if body != want:
                out.append(f"{doc.relative_to(ROOT)}: {name}")
    return out
