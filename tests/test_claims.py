"""The claims register (docs/claims/*.toml): every check runs (quick grids) and agrees with
its recorded verdict, so a change that breaks a paper's claim -- or a correction that no
longer holds -- fails the suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpnoise.cli import main
from dpnoise.errors import ParameterError
from dpnoise.reproduce import claims

REGISTERED = [p for p in claims.PAPERS if (claims.register_dir() / claims.PAPERS[p]).is_file()]


@pytest.mark.parametrize("paper", REGISTERED)
def test_every_check_agrees_with_its_verdict(paper: str) -> None:
    results = claims.run([paper], quick=True)
    assert results
    assert claims.disagreements(results) == []


def test_a_wrong_verdict_is_reported(tmp_path: Path) -> None:
    text = (claims.register_dir() / "staircase.toml").read_text()
    flipped = text.replace('check = "staircase.table1"\nverdict = "confirmed"',
                           'check = "staircase.table1"\nverdict = "corrected"\n'
                           'correction = "x"\ncounterexample = "y"')
    assert flipped != text
    (tmp_path / "staircase.toml").write_text(flipped)
    results = claims.run(["staircase"], quick=True, directory=tmp_path)
    assert [r.claim.id for r in results if not r.agrees] == ["table1"]


@pytest.mark.parametrize("entry, message", [
    ('id = "a"\nwhere = "w"\nclaim = "c"\nverdict = "maybe"\ncheck = "staircase.table1"',
     "verdict must be"),
    ('id = "a"\nwhere = "w"\nclaim = "c"\nverdict = "unverifiable"', "needs a reason"),
    ('id = "a"\nwhere = "w"\nclaim = "c"\nverdict = "corrected"\ncheck = "staircase.table1"',
     "correction and counterexample"),
    ('id = "a"\nwhere = "w"\nclaim = "c"\nverdict = "confirmed"', "check is required"),
])
def test_malformed_entries_are_refused(tmp_path: Path, entry: str, message: str) -> None:
    (tmp_path / "staircase.toml").write_text(f"[[claim]]\n{entry}\n")
    with pytest.raises(ParameterError, match=message):
        claims.load("staircase", tmp_path)


def test_cli_prints_counts_and_corrections(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "claims", "staircase", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "| staircase | " in out and "Theorem 13" in out


def test_the_papers_page_shows_the_current_summary() -> None:
    page = claims.register_dir().parent / "papers.md"
    results = claims.run(list(claims.PAPERS), quick=True)
    assert claims.with_summary(page.read_text(), results) == page.read_text()
