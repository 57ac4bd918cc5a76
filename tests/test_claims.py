"""The claims register (docs/claims/*.toml): every check runs (quick grids) and agrees with
its recorded verdict, so a change that breaks a paper's claim -- or a correction that no
longer holds -- fails the suite."""

from __future__ import annotations

import re
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


@pytest.mark.parametrize("paper, prefix, numbers", [
    ("range-laplace", "formula", range(1, 39)),
    ("range-laplace", "appendix", range(1, 71)),
    ("count-noise", "eq", range(1, 46)),
])
def test_every_numbered_formula_has_its_own_claim(paper: str, prefix: str,
                                                  numbers: list[int] | range) -> None:
    """One claim per numbered formula: its own ``PREFIX-N`` entry, or a claim whose ``where``
    names it (e.g. "formula 24"), never a range only."""
    found = claims.load(paper)
    ids = {c.id for c in found}
    wheres = " | ".join(c.where for c in found)
    word = {"formula": "formula", "appendix": "formula A", "eq": "eq."}[prefix]
    missing = [n for n in numbers if f"{prefix}-{n}" not in ids
               and re.search(rf"{re.escape(word)} ?{n}\b(?!-)", wheres) is None]
    assert missing == []


def test_a_corrected_formula_fails_as_printed() -> None:
    """The checks can fail: the Lambert W identity (26) as printed is false for x < −1, and
    the reflected gap-pair bound of Theorem 2's proof exceeds Lemma 9's."""
    from dpnoise.reproduce.claims import range_laplace_formulas, range_laplace_proofs

    assert not range_laplace_formulas.formula(26, quick=True).holds
    assert range_laplace_formulas.formula(28, quick=True).holds
    assert not range_laplace_proofs.theorem2_proof_gap(quick=True).holds


def test_lemma2_checks_can_fail() -> None:
    """Geng et al.'s Lemma 2: (9) fails at N = ceil(a + 2) for ε = 5 (the printed threshold),
    and without (9) the bound (10) is false -- the linear programme finds a noise below it
    (cost |i|, sensitivity 1) -- so the check of (10) is not vacuous."""
    from dpnoise.reproduce.claims import truncated_laplacian_lemma2 as lemma2

    assert not lemma2.equation9_l1(quick=True).holds
    a, b, delta = lemma2.lemma2_constants(1.0, 3)
    cost = lambda i: float(abs(i))  # noqa: E731
    assert lemma2.condition9_margin(cost, b, 3, 1) < 0
    bound = 2 * sum(a * b**k * cost(1 + k) for k in range(3))
    assert lemma2.smallest_cost(cost, 1.0, delta, 1, 15) < 0.5 * bound
    assert lemma2.equation10(quick=True).holds


def test_croft_proof_typos_fail_as_printed() -> None:
    """The typos of (A11), (A12), (A17) and the gaps of (A32), (A54), (A56) fail as printed;
    the neighbouring steps hold."""
    from dpnoise.reproduce.claims.range_laplace_lemma1 import appendix_lemma1
    from dpnoise.reproduce.claims.range_laplace_lemmas3_6 import appendix_lemmas3_6

    assert [appendix_lemma1(n).holds for n in (11, 12, 13, 17, 32)] == [False, False, True,
                                                                         False, False]
    assert [appendix_lemmas3_6(n, quick=True).holds for n in (54, 55, 56)] == [False, True,
                                                                               False]
