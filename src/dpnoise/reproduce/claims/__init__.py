"""The claims register: every checkable statement of the five papers, with a verdict.

One TOML file per paper under ``docs/claims/`` lists the paper's claims: where each one is
(section, equation, table or figure as the text gives it), the claim in one sentence, the
check that decides it (a function of this package, ``module.function``, with its arguments)
and a verdict:

* ``confirmed``: the check finds the statement true (to the stated tolerance);
* ``corrected``: the check finds the statement as printed false; ``correction`` says what
  is right and ``counterexample`` where the printed statement fails;
* ``unverifiable``: no numerical check can decide it; ``reason`` says why.

:func:`run` executes every check and compares its outcome with the recorded verdict: a
change of code that breaks a confirmed claim, or a claim whose correction no longer holds,
shows as a disagreement (``dpnoise reproduce claims`` exits 1; the test suite fails).
The explanations of the corrections are in docs/papers.md.
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ParameterError

VERDICTS = ("confirmed", "corrected", "unverifiable")

#: paper key (as ``dpnoise reproduce NAME``) -> its register file name
PAPERS: dict[str, str] = {
    "range-laplace": "range_laplace.toml",
    "truncated-laplacian": "truncated_laplacian.toml",
    "count-noise": "count_noise.toml",
    "finite-precision": "finite_precision.toml",
    "staircase": "staircase.toml",
}


@dataclass(frozen=True)
class Outcome:
    """What a check found: whether the paper's statement holds as printed, and the numbers."""

    holds: bool
    detail: str


@dataclass(frozen=True)
class Claim:
    """One statement of a paper and how it is decided (one ``[[claim]]`` table)."""

    paper: str
    id: str
    where: str
    claim: str
    verdict: str
    check: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    tolerance: str = ""
    correction: str = ""
    counterexample: str = ""
    reason: str = ""

    def function(self) -> Callable[..., Outcome]:
        """The check function ``dpnoise.reproduce.claims.<module>.<function>``."""
        assert self.check is not None
        module, _, name = self.check.rpartition(".")
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)


@dataclass(frozen=True)
class Result:
    """A claim, what its check found (None for an unverifiable claim) and whether the two
    agree with the recorded verdict."""

    claim: Claim
    outcome: Outcome | None

    @property
    def agrees(self) -> bool:
        if self.outcome is None:
            return self.claim.verdict == "unverifiable"
        return self.outcome.holds == (self.claim.verdict == "confirmed")


def register_dir() -> Path:
    """``docs/claims`` of the source tree this package was loaded from."""
    return Path(__file__).resolve().parents[4] / "docs" / "claims"


def load(paper: str, directory: Path | None = None) -> list[Claim]:
    """The claims of ``paper`` (a key of :data:`PAPERS`), validated."""
    if paper not in PAPERS:
        raise ParameterError(f"paper must be one of {sorted(PAPERS)}, got {paper!r}")
    path = (directory or register_dir()) / PAPERS[paper]
    if not path.is_file():
        raise ParameterError(f"no claims register at {path} (it lives in docs/claims of a "
                             "source checkout)")
    data = tomllib.loads(path.read_text())
    claims = []
    seen: set[str] = set()
    for raw in data.get("claim", []):
        c = Claim(paper=paper, **raw)
        if c.id in seen:
            raise ParameterError(f"{path.name}: claim id {c.id!r} appears twice")
        seen.add(c.id)
        if c.verdict not in VERDICTS:
            raise ParameterError(f"{path.name}: {c.id}: verdict must be one of {VERDICTS}")
        if (c.verdict == "unverifiable") != (c.check is None):
            raise ParameterError(f"{path.name}: {c.id}: a check is required exactly for "
                                 "confirmed and corrected claims")
        if c.verdict == "corrected" and not (c.correction and c.counterexample):
            raise ParameterError(f"{path.name}: {c.id}: a corrected claim needs its "
                                 "correction and counterexample")
        if c.verdict == "unverifiable" and not c.reason:
            raise ParameterError(f"{path.name}: {c.id}: an unverifiable claim needs a reason")
        claims.append(c)
    return claims


def run(papers: Iterable[str], *, quick: bool = False,
        directory: Path | None = None) -> list[Result]:
    """Run every check of ``papers``; quick grids when ``quick``."""
    results = []
    for paper in papers:
        for c in load(paper, directory):
            outcome = None
            if c.check is not None:
                outcome = c.function()(quick=quick, **c.args)
            results.append(Result(c, outcome))
    return results


def summary(results: list[Result]) -> str:
    """Markdown: per paper the counts of each verdict, then the corrected claims."""
    papers = list(dict.fromkeys(r.claim.paper for r in results))
    lines = ["| paper | claims | confirmed | corrected | unverifiable | disagreeing |",
             "|---|---:|---:|---:|---:|---:|"]
    for p in papers:
        mine = [r for r in results if r.claim.paper == p]
        counts = [sum(r.claim.verdict == v for r in mine) for v in VERDICTS]
        bad = sum(not r.agrees for r in mine)
        lines.append(f"| {p} | {len(mine)} | " + " | ".join(map(str, counts)) + f" | {bad} |")
    corrected = [r for r in results if r.claim.verdict == "corrected"]
    if corrected:
        lines += ["", "| paper | where | as printed | corrected |", "|---|---|---|---|"]
        for r in corrected:
            c = r.claim
            lines.append(f"| {c.paper} | {c.where} | {c.claim} | {c.correction} |")
    return "\n".join(lines) + "\n"


BEGIN, END = "<!-- BEGIN claims:summary -->", "<!-- END claims:summary -->"


def with_summary(text: str, results: list[Result]) -> str:
    """``text`` (docs/papers.md) with its generated summary block replaced by
    :func:`summary` of ``results``."""
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not (sep and sep2):
        raise ParameterError(f"no {BEGIN} ... {END} block to write")
    return f"{head}{BEGIN}\n{summary(results)}{END}{tail}"


def disagreements(results: list[Result]) -> list[str]:
    """One line per claim whose check no longer agrees with its verdict."""
    return [f"{r.claim.paper}: {r.claim.id} ({r.claim.where}): recorded {r.claim.verdict}, "
            f"check says {'holds' if r.outcome and r.outcome.holds else 'fails'}: "
            f"{r.outcome.detail if r.outcome else ''}" for r in results if not r.agrees]
