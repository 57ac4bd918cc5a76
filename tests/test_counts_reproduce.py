"""``dpnoise reproduce count-noise --quick`` writes the paper's numbers (CSV + PNG + markdown)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dpnoise.cli import main


@pytest.mark.slow  # regenerates tables/figures: no privacy check here
def test_reproduce_count_noise_quick(tmp_path: Path, capsys) -> None:
    assert main(["reproduce", "count-noise", "--quick", "--out", str(tmp_path)]) == 0
    out = tmp_path / "count-noise"
    for name in ("figure1.csv", "figure2.png", "figure3.png", "figure4.png",
                 "side_by_side.csv", "count_noise.md"):
        assert (out / name).stat().st_size > 0
    rows = {r["quantity"]: float(r["dpnoise"]) for r in csv.DictReader(
        (out / "figure1.csv").open())}
    assert abs(rows["E = e^eps"] - 8.8463063) < 1e-6
    assert abs(rows["delta* (paper, per outcome)"] - 0.0049478216) < 1e-9
    assert abs(rows["p(+-1)"] - 0.089873915) < 1e-8
    assert abs(rows["DG p(+-1) at scale sigma^2"] - 0.11685073) < 1e-7
    assert abs(rows["DG eps with per-outcome delta = delta*"] - 5.5955) < 1e-3
    assert rows["exact DP delta (dpnoise)"] < rows["paper DP delta (2D+1)delta*"]
    sbs = list(csv.DictReader((out / "side_by_side.csv").open()))
    for r in sbs:  # CountNoise (LP-optimal) beats the DG at matched error probability here
        assert float(r["count_noise_exact_delta_optimal"]) < float(
            r["dg_delta_matched_error_prob"])


def test_cli_count_noise_release_and_verify(capsys) -> None:
    assert main(["release", "count-noise", "--epsilon", "2.18", "--D", "6", "--eta", "0.8",
                 "--upper", "10", "--seed", "1", "0", "10", "5"]) == 0
    assert main(["verify", "count-noise", "--epsilon", "1.1", "--delta", "1e-3",
                 "--D", "8"]) == 0
    assert main(["verify", "discrete-gaussian", "--epsilon", "1", "--delta", "1e-6"]) == 0
    assert main(["verify", "geometric", "--epsilon", "0.5"]) == 0
    assert main(["release", "count-noise", "--epsilon", "0.5", "--D", "8", "--eta", "0.1",
                 "3"]) == 2  # Theorem-3 failure region: refused
    err = capsys.readouterr().err
    assert "Theorem 3" in err
