"""`dpnoise precision`, `dpnoise audit`, `dpnoise planar` and the finite-precision reproduction."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpnoise.cli import main
from dpnoise.reproduce import finite_precision as fp


def test_precision_prints_both_forms_and_the_grid(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["precision", "--epsilon", "1", "--lower", "-1000", "--upper", "1000",
            "--grid", "2^-20", "--tolerance", "1.0001"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "1.000022359" in out and "as printed" in out and "Mironov" in out
    assert "(= 2^-22)" in out


def test_precision_json_2d(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["precision", "--epsilon", "0.01", "--lower", "-1000", "--upper", "1000", "--grid",
            "1", "--dim", "2", "--json"]
    assert main(args) == 0
    rep = json.loads(capsys.readouterr().out)["at_grid"]
    assert rep["dim"] == 2 and 0 < rep["overhead"] < 1e-9


def test_precision_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["precision", "--epsilon", "-1", "--lower", "0", "--upper", "1",
                 "--grid", "1"]) == 2
    assert "epsilon" in capsys.readouterr().err
    assert main(["precision", "--epsilon", "1", "--lower", "0", "--upper", "1"]) == 2
    assert main(["precision", "--epsilon", "1", "--lower", "-15", "--upper", "15",
                 "--tolerance", "1.01", "--sampler", "inverse-cdf"]) == 2


def test_audit_command_flags_numpy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "numpy", "dpnoise", "--n", "2000", "--json"]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["numpy"]["passed"] is False and res["dpnoise"]["passed"] is True
    assert main(["audit", "dpnoise", "--n", "2000"]) == 0
    assert "PASS" in capsys.readouterr().out


def test_planar_command(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["planar", "--epsilon", "0.01", "--grid", "1", "--domain", "0", "2000", "0", "2000",
            "--seed", "3", "--json", "512", "700", "3", "4"]
    assert main(args) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["guarantee"]["notion"] == "metric"
    assert len(res["releases"]) == 2
    for r in res["releases"]:
        assert r["exception"] or all(float(v).is_integer() for v in r["private"])
    assert main(["planar", "--epsilon", "0.01", "--grid", "1", "--domain", "0", "1", "0", "1",
                 "5", "5"]) == 2
    assert main(["planar", "--epsilon", "0.01", "--grid", "1", "--domain", "0", "1", "0", "1",
                 "0.5"]) == 2


# ------------------------------------------------------------------ reproduction pieces
def test_example_1_1_residues() -> None:
    a1 = fp.fixed_point_example()
    assert a1["res1"] == [0] and a1["res2"] == [2] and a1["res66"] == [2]
    assert a1["common"] == 0


def test_inverse_cdf_supports_are_disjoint() -> None:
    for q in (12, 16):
        common, total = fp.common_outputs(q)
        assert common == 0 and total == (1 << q) - 1


def test_figure_2_ratio_two() -> None:
    f2 = fp.figure2()
    assert len(f2["bins"]) == 70
    assert int(np.count_nonzero(np.isclose(f2["ratio"], 2.0))) == 20
    assert np.all(np.abs(f2["ideal2"] / f2["ideal1"] - 4 / 3) < 1e-12)


def test_naive_planar_has_no_common_outputs() -> None:
    common, total = fp.naive_planar_common(bits=8)
    assert common == 0 and total == 255**2
    assert fp.naive_planar_common(bits=6, shift=0.0) == (63**2, 63**2)  # the check can fail


def test_spec_table_rows_are_close() -> None:
    for row in fp.spec_table()[:5]:
        assert math.isfinite(row[6])


@pytest.mark.slow  # regenerates tables/figures: no privacy check here
def test_reproduce_quick(tmp_path) -> None:
    paths = fp.run(tmp_path, quick=True)
    names = {p.name for p in paths}
    assert {"fig1_fixed_point.png", "fig2_ratio.png", "finite-precision.md"} <= names
    text = (tmp_path / "finite-precision.md").read_text()
    assert "0 of 500 rounded outputs impossible" in text
