"""``make bench``: run the benchmarks, record their output, regenerate the docs' blocks.

    python benchmarks/run.py [--only NAME ...] [--full]

Each benchmark script runs in its own process (``--quick`` unless ``--full``); its output is
written, under a line giving the command, the date and the machine's load average before
and after it, to ``benchmarks/results/NAME.md``, and every ``<!-- BEGIN bench:NAME -->``
block in README.md and docs/ is rewritten from it (:mod:`blocks`).  At the end it prints how
many target rows passed and every one that failed, with the load average of its row.  A
script's output is shown as it is printed; markdown tables stay tables, anything else is
fenced as text.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import blocks

#: name -> (script, its arguments in a quick run, whether its output is markdown)
BENCHMARKS: dict[str, tuple[str, list[str], bool]] = {
    "summary": ("summary.py", [], True),
    "targets": ("targets.py", ["--quick"], True),
    "cold": ("cold.py", ["--repeats", "2"], True),
    "throughput": ("throughput.py", ["--quick"], False),
    "truncated_laplace": ("truncated_laplace.py", ["--quick"], False),
    "staircase": ("staircase.py", ["--quick"], False),
    "range_laplace": ("range_laplace.py", ["--quick"], False),
    "counts": ("counts.py", ["--quick"], False),
    "planar": ("planar.py", ["--quick"], False),
    "accounting": ("accounting.py", ["--quick"], False),
    "session": ("session.py", ["--quick"], False),
    "partition": ("partition.py", ["--runs", "5", "--peer-runs", "5"], False),
    "opendp_threshold_delta": ("opendp_threshold_delta.py", [], False),
}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (5-minute {five:.2f})"


def run(name: str, full: bool) -> str:
    script, quick_args, markdown = BENCHMARKS[name]
    args = [] if full else quick_args
    here = Path(__file__).resolve().parent
    before, t0 = load(), time.perf_counter()
    proc = subprocess.run([sys.executable, str(here / script), *args], capture_output=True,
                          text=True, cwd=here.parent)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"benchmarks/{script} failed (exit {proc.returncode})")
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (f"`python benchmarks/{' '.join([script, *args])}` -- {when}, "
            f"{os.cpu_count()} cores, load average {before} before, {load()} after, "
            f"{took:.0f} s\n\n")
    body = proc.stdout.strip("\n") + "\n"
    return head + (body if markdown else f"```text\n{body}```\n")


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def verdicts(names: list[str]) -> None:
    """Every target row that failed, and the count of passed and failed targets, from the
    results just written (rows ending ``| PASS | load |`` or ``| FAIL | load |``)."""
    passed, failed = 0, []
    for name in names:
        for line in (blocks.RESULTS / f"{name}.md").read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 5 and cells[-2] in ("PASS", "FAIL") and _number(cells[-1]):
                if cells[-2] == "PASS":
                    passed += 1
                else:
                    failed.append(f"  FAIL {cells[0]}: {cells[1]} (target {cells[2]}, load "
                                  f"average {cells[-1]})")
    if passed or failed:
        print(f"targets: {passed} PASS, {len(failed)} FAIL (load average now {load()})")
        print("\n".join(failed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), help="these only")
    ap.add_argument("--full", action="store_true", help="without --quick (much longer)")
    args = ap.parse_args()
    blocks.RESULTS.mkdir(exist_ok=True)
    for name in args.only or list(BENCHMARKS):
        print(f"== {name} (load average {load()})", flush=True)
        text = run(name, args.full)
        print(text, flush=True)
        (blocks.RESULTS / f"{name}.md").write_text(text)
    verdicts(args.only or list(BENCHMARKS))
    for doc in blocks.rewrite():
        print(f"rewrote the generated blocks of {doc.relative_to(blocks.ROOT)}")
    for line in blocks.stale():
        print(f"stale: {line}")


if __name__ == "__main__":
    main()
