"""Every performance figure in the README and docs is a generated block (benchmarks/blocks.py)
that matches the committed benchmark output it was written from."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "blocks.py"
_spec = importlib.util.spec_from_file_location("bench_blocks", _PATH)
assert _spec is not None and _spec.loader is not None
blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(blocks)


def test_every_block_matches_its_committed_result() -> None:
    assert blocks.stale() == []


def test_the_performance_page_shows_the_targets_table() -> None:
    names = {n for doc in blocks.documents() for n, _ in blocks.blocks(doc.read_text())}
    assert "targets" in names
    assert all((blocks.RESULTS / f"{n}.md").is_file() for n in names)


def test_a_hand_edited_block_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "x.md").write_text("ratio 1.00x\n")
    begin, end = "<!-- BEGIN bench:x -->\n", "<!-- END bench:x -->\n"
    (tmp_path / "README.md").write_text(f"a\n{begin}ratio 1.00x\n{end}")
    (tmp_path / "docs" / "p.md").write_text(f"{begin}ratio 9.99x\n{end}")
    monkeypatch.setattr(blocks, "ROOT", tmp_path)
    monkeypatch.setattr(blocks, "RESULTS", tmp_path / "benchmarks" / "results")
    assert blocks.stale() == ["docs/p.md: x"]
    assert blocks.rewrite() == [tmp_path / "docs" / "p.md"]
    assert blocks.stale() == []


#: a performance figure: a duration in µs/ms, a rate per second, or a ratio to numpy / "faster"
_FIGURE = re.compile(
    r"\d[\d.,]*\s*(?:–\s*\d[\d.,]*\s*)?(?:µs|us\b|ms\b|(?:[kMG]\s*)?"
    r"(?:values|points|vectors|samples|draws|words)?\s*/\s*s\b|[x×]\s*(?:numpy|faster|slower|"
    r"the speed))|\d\s*[x×]\s*(?:10\^\d+\s*)?/s")
_OUTPUT = re.compile(r"<!-- BEGIN output:.*?<!-- END output:[^>]*-->", re.DOTALL)


def test_no_hand_typed_figures_in_the_mechanism_and_accounting_pages() -> None:
    """Outside generated blocks, docs/accounting.md and docs/mechanisms/*.md state no
    duration, rate or speed ratio: those come from `make bench`."""
    root = blocks.ROOT / "docs"
    typed = []
    for doc in [root / "accounting.md", *sorted((root / "mechanisms").glob("*.md"))]:
        text = _OUTPUT.sub("", blocks._BLOCK.sub("", doc.read_text()))
        typed += [f"{doc.name}: {line.strip()}" for line in text.splitlines()
                  if _FIGURE.search(line)]
    assert typed == []


def test_the_figure_pattern_catches_typed_figures() -> None:
    for line in ("runs at 0.75–0.88× the speed of numpy", "one scalar release(x) 5–9 µs",
                 "1.9–4.5 ×10^6 /s", "17.5 M points/s", "~14 ms", "1.07x numpy"):
        assert _FIGURE.search(line), line
    assert not _FIGURE.search("epsilon 0.5, sensitivity 2, 1e-6")
