"""``dpnoise reproduce staircase --quick``: Tables 1-4 beside the paper, with the errata."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dpnoise.cli import main


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open()))


@pytest.mark.slow  # regenerates tables/figures: no privacy check here
def test_reproduce_staircase_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "staircase", "--quick", "--out", str(tmp_path)]) == 0
    out = tmp_path / "staircase"
    for name in ("table1_variance.csv", "table2_interval.csv", "table3_laplace_region.csv",
                 "table4_staircase_region.csv", "densities.png", "densities.csv",
                 "example2_marginal.png", "staircase.md"):
        assert (out / name).stat().st_size > 0
    t1 = _rows(out / "table1_variance.csv")
    assert [round(float(r["optimal_ideal"]), 2) for r in t1] == [199.92, 7.92, 1.92]
    for r in t1:  # the released (lattice) law is within 1e-4 of the ideal optimum
        assert float(r["dpnoise_lattice"]) == pytest.approx(float(r["optimal_ideal"]), rel=1e-4)
    t2 = _rows(out / "table2_interval.csv")
    ideal = [float(r["optimal_ideal"]) for r in t2]
    assert [int(x * 100) / 100 for x in ideal] == [59.91, 11.97, 5.98]  # truncated (erratum)
    assert [round(x, 2) for x in ideal] == [59.91, 11.98, 5.99]  # rounding would differ
    t4 = _rows(out / "table4_staircase_region.csv")
    t = [float(r["t"]) for r in t4]
    assert t[0] == pytest.approx(6.688548, abs=1e-6)  # printed 6.99 is a typo
    sizes = [float(r["size"]) for r in t4]
    paper = [float(r["paper_size"]) for r in t4]
    assert all(0 < abs(p - s) / s < 4.2e-4 for p, s in zip(paper, sizes, strict=True))
    md = (out / "staircase.md").read_text()
    assert "truncated" in md and "6.69" in md
