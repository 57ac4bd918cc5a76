"""``dpnoise compare``: rows, best marks, applicability, extension by one candidate entry."""

from __future__ import annotations

import json

import pytest

from dpnoise import ParameterError
from dpnoise.cli import main
from dpnoise.compare import CANDIDATES, Candidate, compare, format_table
from dpnoise.mechanisms.laplace import Laplace


def _by_name(rows):  # type: ignore[no-untyped-def]
    return {r.name: r for r in rows}


def test_small_delta_truncated_laplace_wins() -> None:
    # among the Laplace/Gaussian families (the staircase row is checked separately below)
    rows = _by_name(compare(1.0, 1e-5, 1.0, [c for c in CANDIDATES if c.name != "staircase"]))
    assert set(rows) == {"laplace", "truncated-laplace", "gaussian", "analytic-gaussian"}
    assert rows["gaussian"].skipped  # classic needs ε < 1
    tl, ag = rows["truncated-laplace"], rows["analytic-gaussian"]
    assert "mean_abs" in tl.best and "std" in tl.best
    assert tl.mean_abs < ag.mean_abs / 2
    # Laplace's 95% bound λ ln 20 ≈ 2.996; the truncated one is not larger
    assert rows["laplace"].bound95 == pytest.approx(2.9957, rel=2e-3)
    assert tl.bound95 <= rows["laplace"].bound95


def test_large_delta_gaussian_beats_truncated() -> None:
    """Beyond δ ≈ 0.39 the optimal Gaussian can win (not in the paper)."""
    rows = _by_name(compare(1.585, 0.49, 1.0))
    assert rows["analytic-gaussian"].mean_abs < rows["truncated-laplace"].mean_abs
    assert "mean_abs" in rows["analytic-gaussian"].best


def test_applicability() -> None:
    rows = _by_name(compare(0.5, 0.0, 1.0))
    assert rows["laplace"].skipped is None
    assert all(rows[n].skipped for n in ("truncated-laplace", "gaussian", "analytic-gaussian"))
    rows = _by_name(compare(0.5, 0.6, 1.0))
    assert rows["truncated-laplace"].skipped and rows["analytic-gaussian"].skipped is None
    with pytest.raises(ParameterError):
        compare(-1.0, 1e-3, 1.0)
    with pytest.raises(ParameterError):
        compare(1.0, 1.5, 1.0)


def test_one_entry_adds_a_candidate() -> None:
    extra = Candidate("laplace-x2", "Laplace at ε/2", lambda e, d: None,
                      lambda e, d, s: Laplace(epsilon=e / 2, sensitivity=s))
    rows = _by_name(compare(1.0, 1e-3, 1.0, [*CANDIDATES, extra]))
    assert rows["laplace-x2"].mean_abs == pytest.approx(2 * rows["laplace"].mean_abs, rel=1e-3)
    text = format_table(list(rows.values()), 1.0, 1e-3, 1.0)
    assert "laplace-x2" in text and "*" in text


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--epsilon", "0.5", "--delta", "1e-5", "--sensitivity", "2"]) == 0
    out = capsys.readouterr().out
    assert "truncated-laplace" in out and "analytic-gaussian" in out and "*" in out
    assert main(["compare", "--epsilon", "0.5", "--delta", "1e-5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in data["rows"]} >= {"laplace", "truncated-laplace"}
    assert main(["compare", "--epsilon", "0", "--delta", "1e-5"]) == 2


def test_staircase_row_beats_laplace_everywhere() -> None:
    rows = _by_name(compare(1.0, 1e-5, 1.0))
    assert set(rows) == {"laplace", "staircase", "truncated-laplace", "gaussian",
                         "analytic-gaussian"}
    st, lap = rows["staircase"], rows["laplace"]
    assert st.skipped is None and st.guarantee == "1-DP"
    assert st.std == pytest.approx(1.918104**0.5, rel=1e-4)  # Soria-Comas et al. Table 1
    assert st.mean_abs < lap.mean_abs and st.std < lap.std and st.bound95 <= lap.bound95
    assert "std" in st.best
