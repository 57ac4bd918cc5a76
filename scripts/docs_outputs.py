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
hidden ``setup`` commands first when it continues an earlier page's story.

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
        "s.remaining",
    ), setup=(INIT, _cmd(f"{RELEASE} --epsilon 0.4", '--query "mean income by region"'),
              _cmd(f"{RELEASE} --epsilon 0.4 --delta 1e-6", '--query "count by city"'))),
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
    ), setup=(INIT, FIRST)),
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
    with tempfile.TemporaryDirectory() as tmp, _reproducible(name):
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
