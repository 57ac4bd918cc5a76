"""``dpnoise reproduce truncated-laplacian --quick`` writes the figures, CSVs and summary."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dpnoise.cli import main
from dpnoise.reproduce.truncated_laplacian import crossover, ratios


@pytest.mark.slow  # regenerates tables/figures: no privacy check here
def test_quick_reproduction(tmp_path: Path) -> None:
    assert main(["reproduce", "truncated-laplacian", "--quick", "--out", str(tmp_path)]) == 0
    out = tmp_path / "truncated-laplacian"
    for name in ("fig2_amplitude_ratio.png", "fig3_power_ratio.png", "fig2_fig3_ratios.csv",
                 "reference_table.csv", "crossover.csv", "summary.md"):
        assert (out / name).stat().st_size > 0
    with (out / "fig2_fig3_ratios.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    amp = [float(r["amplitude_ratio"]) for r in rows]
    pw = [float(r["power_ratio"]) for r in rows]
    assert max(amp) < 1 and max(pw) < 1  # the paper's claim on its grid
    assert min(amp) == pytest.approx(0.2316, abs=2e-4)  # (ε=10, δ=1e-6)
    assert min(pw) == pytest.approx(0.0683, abs=2e-4)
    with (out / "reference_table.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 15
    assert max(float(r["max_rel_dev_vs_spec"]) for r in table) < 1e-5
    verified = [float(r["verified_delta/delta"]) for r in table
                if r["verified_delta/delta"] != "nan"]
    assert verified and all(0.999 < v <= 1.0 for v in verified)


def test_spec_selected_ratios_and_crossover() -> None:
    """Spec §3 selected ratios, the π/4, π/6 corner and the δ ≈ 0.39 crossover."""
    assert ratios(1.0, 1e-2)[:2] == pytest.approx((0.633, 0.472), abs=1e-3)
    assert ratios(1e-4, 1e-6)[:2] == pytest.approx((0.670, 0.516), abs=1e-3)
    assert ratios(10.0, 0.1)[:2] == pytest.approx((0.445, 0.252), abs=1e-3)
    assert ratios(1.585, 0.49)[:2] == pytest.approx((1.048, 1.072), abs=1e-3)
    import numpy as np

    eps = np.logspace(-2, 1.2, 161)
    assert crossover(0, eps) == pytest.approx(0.395, abs=2e-3)
    assert crossover(1, eps) == pytest.approx(0.402, abs=2e-3)
