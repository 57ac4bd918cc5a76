"""Regenerate every sample output shown in README.md and docs/*.md.

    python scripts/docs_outputs.py            # rewrite the blocks in place
    python scripts/docs_outputs.py --check    # exit 1 if any block differs (the tests run this)

A block in a markdown file looks like::

    <!-- BEGIN output:NAME -->
    ```console
    $ dpnoise ...
    ...
    ```
    <!-- END output:NAME -->

and NAME is a key of :data:`SNIPPETS`: the commands (``dpnoise ...`` argument lists, run
in-process through ``dpnoise.cli.main``) or Python lines (run one at a time, as at the
``>>>`` prompt) that the block shows, followed by what they print.  Every snippet runs in a
fresh temporary directory holding a copy of the example data (``dpnoise example``), with
hidden ``setup`` commands first when it continues an earlier page's story (then it also
continues that snippet's random stream, so the replayed releases show the same numbers).

So that the outputs are reproducible, a snippet runs with the operating system's random
bytes replaced by a SHA-256 counter stream (the CSPRNG is keyed from it), the clock stopped
at 2026-01-01T00:00:00Z and the process id fixed: the ledger files are real, in the
temporary directory, and thrown away.  Your own runs draw fresh randomness, so their noisy
numbers (and the ledger's hashes and times) differ; everything else is as shown.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import hashlib
import io
import os
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"(<!-- BEGIN output:([\w.-]+) -->\n)(.*?)(<!-- END output:\2 -->)", re.S)
FIXED_TIME = 1767225600.0  # 2026-01-01T00:00:00Z
FIXED_PID = 4242


@dataclass(frozen=True)
class Snippet:
    """What one block shows: ``console`` commands or ``python`` lines, after hidden setup."""

    kind: str  # "console", "python" or "file" (a file shipped in dpnoise.examples)
    lines: tuple[str, ...]
    setup: tuple[str, ...] = field(default=())
    # the snippet whose random stream this one continues: its setup replays that snippet's
    # commands, which then draw the same noise (the same released numbers on both pages)
    continues: str = ""


def _cmd(*parts: str) -> str:
    """One shell command shown on several lines (continued with a backslash)."""
    return " \\\n    ".join(parts)


RELEASE = "dpnoise release --data people.csv --ledger people.ledger"
INIT = "dpnoise ledger init people.ledger --budget 2,1e-5"
FIRST = _cmd(f"{RELEASE} --epsilon 0.2", '--query "count where age > 30"')
SNIPPETS: dict[str, Snippet] = {
    # README: a first library release
    "readme-library": Snippet("python", (
        "import dpnoise",
        "m = dpnoise.Laplace(epsilon=1.0, sensitivity=1.0)",
        "m.release(42.0)",
        "m.guarantee",
        "m.noise(42.0).interval(0.95)",
    )),
    "readme-error": Snippet("python", (
        "import dpnoise",
        "dpnoise.Laplace(epsilon=0, sensitivity=1)",
    )),
    # README: a first custodian release
    "readme-custodian": Snippet("console", (
        "dpnoise example .",
        INIT,
        _cmd(f"{RELEASE} --epsilon 0.4", '--query "mean income by region"'),
        _cmd(f"{RELEASE} --epsilon 0.4 --delta 1e-6", '--query "count by city"'),
    )),
    # README: the same in Python, on the ledger the commands above created
    "readme-python": Snippet("python", (
        "from dpnoise import Session",
        's = Session(data="people.csv", schema="people.toml", ledger="people.ledger")',
        'r = s.release("histogram region", epsilon=0.2)',
        "print(r.table())",
        "print(s.remaining)",
    ), setup=(INIT, _cmd(f"{RELEASE} --epsilon 0.4", '--query "mean income by region"'),
              _cmd(f"{RELEASE} --epsilon 0.4 --delta 1e-6", '--query "count by city"')),
        continues="readme-custodian"),
    # docs/custodian.md section 1: the example schema, as shipped
    "people-toml": Snippet("file", ("people.toml",)),
    # docs/custodian.md section 2
    "custodian-first": Snippet("console", ("dpnoise example .", INIT, FIRST)),
    # docs/custodian.md section 3
    "custodian-table": Snippet("console", (
        _cmd(f"{RELEASE} --epsilon 0.4",
             '--query "SELECT region, AVG(income) FROM data WHERE smoker = 1 GROUP BY region"'),
        _cmd(f"{RELEASE} --epsilon 0.2", '--query "histogram region"'),
        "dpnoise ledger people.ledger",
        _cmd(f"{RELEASE} --epsilon 1.5", '--query "sum income"'),
    ), setup=(INIT, FIRST), continues="custodian-first"),
    "custodian-city": Snippet("console", (
        _cmd(f"{RELEASE} --epsilon 0.4 --delta 1e-6", '--query "mean income by city"'),
        "dpnoise ledger people.ledger --show 1",
    ), setup=(INIT,)),
    "custodian-refused": Snippet("console", (
        _cmd(f"{RELEASE} --epsilon 0.2", '--query "SELECT MAX(income) FROM data"'),
    ), setup=(INIT,)),
    # docs/mechanisms/truncated-laplace.md: choosing a mechanism for a budget
    "compare": Snippet("console", ("dpnoise compare --epsilon 1 --delta 1e-5",)),
    # docs/cli.md: the finite-precision calculator
    "precision": Snippet("console", (
        "dpnoise precision --epsilon 1 --sensitivity 1 --lower -1000 --upper 1000 --grid 2^-20",
    )),
    # docs/custodian.md section 4
    "custodian-python": Snippet("python", (
        "from dpnoise import Budget, Session",
        's = Session(data="people.csv", schema="people.toml", ledger="people.ledger", '
        'budget=Budget(epsilon=2.0, delta=1e-5), create_ledger=True)',
        'r = s.release("mean age by region", epsilon=0.2)',
        "print(r.table())",
        "r.values",
        "r.interval(0.95)",
        "r.mechanism",
        "s.remaining",
        's.true_answer("mean age by region")',
        "s.close()",
    )),
    # docs/custodian.md section 17: a workload planned from targets
    "targets-file": Snippet("file", ("targets.toml",)),
    "custodian-targets": Snippet("console", (
        "dpnoise ledger init people.ledger --budget 10",
        "dpnoise release --workload targets.toml --data people.csv --ledger people.ledger "
        "--dry-run",
        "dpnoise release --workload targets.toml --data people.csv --ledger people.ledger",
    )),
    # docs/mechanisms/count-noise.md
    "count-noise-usage": Snippet("python", (
        "from dpnoise import CountNoise, Geometric, DiscreteGaussian",
        "m = CountNoise(epsilon=2.18, D=6, eta=0.8, lower=0, upper=1000)",
        "m.guarantee",
        "m.release([12, 0, 1000])",
        "m.noise(12).pmf(12)",
        "CountNoise.from_delta(epsilon=1.1, delta=1e-3, D=8)",
        "CountNoise.smallest_support(epsilon=1.1, delta=1e-3)",
        "CountNoise.from_eta(epsilon=2.18, eta=0.8)",
        "CountNoise.from_eta(epsilon=1.1, eta=0.5, delta=1e-4)",
        "CountNoise.optimal(epsilon=0.5, D=8, eta=0.1)",
        "Geometric(epsilon=1.0, upper=1000)",
        "DiscreteGaussian(epsilon=1.0, delta=1e-6)",
        "DiscreteGaussian(epsilon=1.0, sigma2=9.0).guarantee",
    )),
    # docs/mechanisms/laplace.md
    "laplace-usage": Snippet("python", (
        "import dpnoise",
        "m = dpnoise.Laplace(epsilon=1.0, sensitivity=1.0)",
        "m.release(42.0)",
        "m.scale_inflation",
        "dpnoise.verify(m).epsilon",
        "c = dpnoise.ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0, upper=100)",
        "c.release([0.0, 42.0, 100.0])",
    )),
    # docs/mechanisms/finite-precision.md section 1
    "finite-precision-analyse": Snippet("python", (
        "from dpnoise.laws.finite_precision import analyse, grid_for_tolerance",
        "rep = analyse(epsilon=1, sensitivity=1, lower=-1000, upper=1000, grid=2**-20)",
        "rep.eps_prime",
        "rep.eps_prime_printed",
        "rep.mironov_eps_prime",
        "grid_for_tolerance(epsilon=1, sensitivity=1, lower=-1000, upper=1000, "
        "tolerance=1.0001).grid == 2**-22",
    )),
    # docs/mechanisms/finite-precision.md section 2
    "finite-precision-planar": Snippet("python", (
        "import numpy as np",
        "from dpnoise import PlanarLaplace",
        "m = PlanarLaplace.with_margin(epsilon=1.386, sensitivity=200.0, grid=1.0, "
        "domain=((-1000, 1000), (-1000, 1000)), exit_probability=1e-3)",
        "rel = m.release(np.array([[10.0, 20.0], [-300.0, 450.0], [990.0, -990.0]]))",
        "rel.points",
        "rel.exited",
        "m.guarantee.epsilon",
        "m.release((10.0, 20.0)).point()",
    )),
    # docs/mechanisms/finite-precision.md section 3
    "finite-precision-audit": Snippet("python", (
        "import numpy as np",
        "from dpnoise import audit",
        "gen = np.random.default_rng(1)",
        "rep = audit(lambda x, n: x + gen.laplace(0, 1, n), 0.0, 1.0, claimed_epsilon=1.0)",
        "print(rep.summary())",
    )),
    # docs/mechanisms/range-laplace.md
    "range-laplace-usage": Snippet("python", (
        "import numpy as np",
        "from dpnoise import RangeLaplace, HalfLine, Union, verify",
        "m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 100))",
        "m.release(42.0)",
        "m.release(np.full(1_000_000, 42.0)).min() >= 0",
        "m.guarantee.epsilon, m.guarantee.delta",
        "m.continuous_scale, m.scale",
        "law = m.noise(42.0)",
        "law.mean_abs_error()",
        "m.tail_probabilities(42.0, 50.125)",
        "verify(m).epsilon",
        "RangeLaplace(epsilon=0.5, sensitivity=2, domain=HalfLine(lower=0)).release(3.0)",
        "RangeLaplace(epsilon=1, sensitivity=1, domain=Union((0, 8), (12, 24))).release(14.0)",
        "RangeLaplace(epsilon=1, sensitivity=1, domain=(0, 100), mode=\"metric\").guarantee.notion",
    )),
    # docs/mechanisms/staircase.md
    "staircase-usage": Snippet("python", (
        "import numpy as np",
        "import dpnoise",
        "m = dpnoise.Staircase(epsilon=1.0, sensitivity=1.0)",
        "m.release(42.0)",
        "m.release(np.array([3.0, 7.5, 10.0]))",
        "m.noise().var(), m.noise().mean_abs(), m.noise().interval(0.95)",
        "m.ideal.var()",
        "dpnoise.verify(m).epsilon",
        "dpnoise.Staircase(epsilon=1, sensitivity=1, criterion=\"mean_abs\").noise().mean_abs()",
        "dpnoise.Staircase(epsilon=1, sensitivity=1, criterion=\"interval\", level=0.9)"
        ".noise().interval(0.9)",
        "box = dpnoise.MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10))",
        "box.release(np.array([[3.0, 250.0], [4.0, 180.0]]))",
        "box.var()",
        "dpnoise.L1Staircase(epsilon=1.0, sensitivity=11.0).release([5.0, 6.0])",
    )),
    # docs/mechanisms/truncated-laplace.md
    "truncated-usage": Snippet("python", (
        "import numpy as np",
        "import dpnoise",
        "m = dpnoise.TruncatedLaplace(epsilon=1.0, delta=1e-5, sensitivity=1.0)",
        "m.release(42.0)",
        "m.release(np.array([3.0, 7.5, 10.0]))",
        "m.guarantee.epsilon, m.guarantee.delta",
        "m.noise().mean_abs(), m.noise().std()",
        "m.continuous().cdf(0.3)",
        "dpnoise.verify(m).delta_at(1.0)",
        "dpnoise.AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0).sigma",
        "dpnoise.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0).sigma",
        "dpnoise.analytic_gaussian_sigma(1.0, 1e-5)",
        "dpnoise.lower_bounds(1.0, 1e-3)",
        "dpnoise.rigorous_lower_bounds(1.0, 1e-3)",
    )),
    # docs/accounting.md
    "accounting-usage": Snippet("python", (
        "import dpnoise as dp",
        "from dpnoise.accounting import AccountingBudget, ReleaseSpec, get_accountant, "
        "largest_share",
        "acc = get_accountant(\"pld\")",
        "state = acc.empty()",
        "charge = acc.charge_for(dp.Laplace(epsilon=1/96, sensitivity=1.0))",
        "state = acc.compose(state, charge)",
        "acc.epsilon(state, 1e-6), acc.delta(state, 1.0)",
        "acc.fits(state, AccountingBudget(epsilon=1.0, delta=1e-6))",
        "cells = acc.charge_for(ReleaseSpec.cells(dp.Geometric(epsilon=0.5), 12))",
        "acc.epsilon(acc.compose(acc.empty(), cells), 1e-6)",
        "sigma, m = largest_share(\"pld\", AccountingBudget(1.0, 1e-6), lambda s: "
        "dp.DiscreteGaussian(epsilon=1.0, sigma2=s * s, upper=None), 50, bounds=(5.0, 400.0))",
        "round(sigma, 1)",
    )),
}


class _Counter:
    """Deterministic stand-in for ``os.urandom``: SHA-256 of (snippet name, counter)."""

    def __init__(self, name: str) -> None:
        self.name, self.i = name, 0

    def __call__(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            out += hashlib.sha256(f"{self.name}/{self.i}".encode()).digest()
            self.i += 1
        return out[:n]


@contextlib.contextmanager
def _reproducible(name: str):
    """Fixed random bytes, clock and process id while a snippet runs (see module doc)."""
    saved = os.urandom, time.time, time.gmtime, os.getpid
    real_gmtime = time.gmtime
    os.urandom = _Counter(name)
    time.time = lambda: FIXED_TIME
    time.gmtime = lambda secs=None: real_gmtime(FIXED_TIME if secs is None else secs)
    os.getpid = lambda: FIXED_PID
    _forget_default_source()  # rng=None: a source keyed from the stream above
    try:
        yield
    finally:
        os.urandom, time.time, time.gmtime, os.getpid = saved
        _forget_default_source()  # never keep a source keyed from the fixed stream


def _forget_default_source() -> None:
    """Drop the thread's cached default CSPRNG so that the next ``rng=None`` keys a new one."""
    from dpnoise import randomness

    forget = getattr(randomness, "_forget_default_sources", None)
    if forget is not None:
        forget()


def _run_command(line: str) -> str:
    from dpnoise.cli import main

    argv = shlex.split(line.replace("\\\n", " "))
    assert argv[0] == "dpnoise", line
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(argv[1:])
    return out.getvalue() + err.getvalue()


def _run_python(line: str, namespace: dict) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(line, "<docs>", "single"), namespace)
        except Exception as exc:  # shown as the interpreter shows the last line of it
            print(f"{type(exc).__name__}: {exc}")
    return out.getvalue()


def render(name: str) -> str:
    """The text of block ``name``: its fenced code, commands and outputs."""
    snip = SNIPPETS[name]
    if snip.kind == "file":
        from dpnoise.examples import path

        return f"```toml\n{path(snip.lines[0]).read_text()}```\n"
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp, _reproducible(snip.continues or name):
        os.chdir(tmp)
        try:
            from dpnoise.examples import copy_to

            if not any(s.startswith("dpnoise example") for s in snip.lines):
                copy_to(tmp)
            for line in snip.setup:
                _run_command(line)
            chunks, namespace = [], {"__name__": "__docs__"}
            for line in snip.lines:
                if snip.kind == "console":
                    chunks.append(f"$ {line}\n{_run_command(line)}")
                else:
                    chunks.append(f">>> {line}\n{_run_python(line, namespace)}")
        finally:
            os.chdir(cwd)
    lang = "console" if snip.kind == "console" else "pycon"
    body = "".join(c if c.endswith("\n") else c + "\n" for c in chunks)
    return f"```{lang}\n{body}```\n"


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def regenerate(text: str, cache: dict[str, str]) -> str:
    def sub(m: re.Match) -> str:
        name = m.group(2)
        if name not in SNIPPETS:
            raise SystemExit(f"unknown output block {name!r} (not in scripts/docs_outputs.py)")
        if name not in cache:
            cache[name] = render(name)
        return m.group(1) + cache[name] + m.group(4)

    return BLOCK.sub(sub, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    cache: dict[str, str] = {}
    stale = []
    for path in markdown_files():
        old = path.read_text()
        new = regenerate(old, cache)
        if new == old:
            continue
        rel = path.relative_to(ROOT)
        if args.check:
            stale.append(rel)
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), f"{rel} (in the file)",
                f"{rel} (what the code prints now)", n=1))
        else:
            path.write_text(new)
            print(f"updated {rel}")
    unused = set(SNIPPETS) - set(cache)
    if unused:
        print(f"snippets shown nowhere: {', '.join(sorted(unused))}")
        return 1
    if stale:
        print(f"\nsample outputs out of date in: {', '.join(map(str, stale))}\n"
              "regenerate them with: python scripts/docs_outputs.py")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
