"""Composed ε at small δ: dpnoise's "pld" accountant before and after the tilted tails.

    python benchmarks/small_delta.py [--before-src PATH] [--no-write]

For mixed compositions (discrete Gaussian, geometric, Gaussian, lattice Laplace, GROUP BY
charges; up to 1000 releases, sensitivity 1) it prints ε at δ = 1e-6, 1e-9 and 1e-12:

* **after**: this tree's accountant (``compose_many`` of each release's charge: the path of
  the ledger, ``Session.plan`` and ``--dry-run``), the time taken;
* **before**: the same script run by the code at ``--before-src`` (a checkout of the code
  before the change, e.g. ``/work/main/src``) in a subprocess; its numbers are stored in
  ``benchmarks/small_delta_before.json`` and reused when ``--before-src`` is not given;
* **truth**: ``tests/composition_truth.py`` (Gaussian closed form, exact convolutions of
  the discrete laws sampled; "-" where no exact truth is computed);
* **dp-accounting**: Google's PLD accountant on the ideal laws (cross-check; its default
  pessimistic discretisation 1e-4).

The markdown table is written into docs/accounting.md between the markers
``<!-- BEGIN small-delta -->`` and ``<!-- END small-delta -->`` (unless ``--no-write``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DELTAS = (1e-6, 1e-9, 1e-12)
BEFORE_JSON = ROOT / "benchmarks" / "small_delta_before.json"
#: the truth and dp-accounting do not depend on dpnoise's accountant: computed once, stored
REFERENCES_JSON = ROOT / "benchmarks" / "small_delta_references.json"
DOC = ROOT / "docs" / "accounting.md"
BEGIN, END = "<!-- BEGIN small-delta -->", "<!-- END small-delta -->"


# --------------------------------------------------------------------------- the rows
def rows() -> list[tuple[str, Callable[[], list[tuple[Any, int]]]]]:
    """(label, builder of [(mechanism or ReleaseSpec, count)]) -- public API only, so that
    the code before the change can run it too."""
    import dpnoise as dp
    from dpnoise.accounting import ReleaseSpec

    def dg(s2: float) -> Any:
        return dp.DiscreteGaussian(epsilon=1.0, sigma2=s2, upper=None)

    def ag(e: float, d: float, sens: float = 1.0) -> Any:
        return dp.AnalyticGaussian(epsilon=e, delta=d, sensitivity=sens)

    def geo(e: float) -> Any:
        return dp.Geometric(epsilon=e)

    def group_by() -> Any:
        return ReleaseSpec.fraction_split(ag(0.5, 1e-7, 4.0), 4, 10)

    return [
        ("100 DiscreteGaussian(sigma2=100)", lambda: [(dg(100), 100)]),
        ("200 Geometric(epsilon=0.05)", lambda: [(geo(0.05), 200)]),
        ("1000 AnalyticGaussian(0.2, 1e-6)", lambda: [(ag(0.2, 1e-6), 1000)]),
        ("12 DG(sigma2=25) + 100 Geometric(0.1) + 50 AnalyticGaussian(0.25, 1e-7)",
         lambda: [(dg(25), 12), (geo(0.1), 100), (ag(0.25, 1e-7), 50)]),
        ("30 GROUP BY (AnalyticGaussian(0.5, 1e-7), 4 rows/person, 10 cells) "
         "+ 200 AnalyticGaussian(0.3, 1e-7)",
         lambda: [(group_by(), 30), (ag(0.3, 1e-7), 200)]),
        ("500 Geometric(0.02) + 500 DG(sigma2=400)", lambda: [(geo(0.02), 500), (dg(400), 500)]),
        ("10 GROUP BY cells (12 x DG(sigma2=64)) + 50 Geometric(0.1)",
         lambda: [(ReleaseSpec.cells(dg(64), 12), 10), (geo(0.1), 50)]),
        ("400 AnalyticGaussian(0.1, 1e-8) + 300 Geometric(0.03) + 300 DG(sigma2=1000)",
         lambda: [(ag(0.1, 1e-8), 400), (geo(0.03), 300), (dg(1000), 300)]),
        ("37 Laplace(scale 3) + 12 DG(sigma2=25)",
         lambda: [(dp.Laplace(epsilon=1 / 3, sensitivity=1.0), 37), (dg(25), 12)]),
    ]


def dpnoise_epsilons() -> list[dict[str, Any]]:
    """ε at every δ of every row under the "pld" accountant of the code imported."""
    from dpnoise.accounting import get_accountant

    acc = get_accountant("pld")
    out = []
    for label, build in rows():
        t = time.perf_counter()
        state = acc.empty()
        for what, n in build():
            state = acc.compose_many(state, acc.charge_for(what), n)
        eps = [acc.epsilon(state, d) for d in DELTAS]
        out.append({"label": label, "eps": eps, "seconds": time.perf_counter() - t})
        print(f"dpnoise: {label[:50]} {eps} {out[-1]['seconds']:.1f} s", file=sys.stderr,
              flush=True)
    return out


# --------------------------------------------------------------------------- references
def _laws(what: Any) -> list[tuple[str, Any, int]]:
    """(family, mechanism, count) of one release, for the truth and dp-accounting."""
    from dpnoise.accounting import ReleaseSpec

    if not isinstance(what, ReleaseSpec):
        return [(type(what).__name__, what, 1)]
    out = [(type(m).__name__, m, k) for m, k in what.parts]
    # a GROUP BY of a Gaussian: the worst split is one cell moved by the full sensitivity
    out += [(type(m).__name__, m, 1) for m, _, _ in what.fractions]
    if what.splits:
        raise ValueError("splits are not in the benchmark")
    return out


def _decay(m: Any) -> float:
    """The decay of the geometric law actually sampled (ln p(0)/p(1))."""
    law = m.noise()
    return math.log(float(law.pmf(0)) / float(law.pmf(1)))


def truth(build: Callable[[], list[tuple[Any, int]]]) -> list[float] | None:
    sys.path.insert(0, str(ROOT))
    from tests.composition_truth import Composition, epsilon

    comp = Composition()
    for what, n in build():
        for fam, m, k in _laws(what):
            if fam == "DiscreteGaussian":
                comp.discrete_gaussian(float(m.sigma2), n * k)
            elif fam == "Geometric":
                comp.geometric(_decay(m), n * k)
            elif fam in ("AnalyticGaussian", "Gaussian"):
                comp.gaussian(float(m.sigma), float(m.sensitivity), n * k)
            elif fam == "Laplace":  # the ideal lattice law (the table is within 1e-13)
                comp.lattice_laplace(math.log(2.0) / int(m.block.M), int(m.shift_steps), n * k)
            else:
                return None
    return [epsilon(comp, d) for d in DELTAS]


def dp_accounting(build: Callable[[], list[tuple[Any, int]]]) -> list[float] | None:
    try:
        from dp_accounting.pld import privacy_loss_distribution as pl
    except ImportError:
        return None
    total = None
    for what, n in build():
        for fam, m, k in _laws(what):
            if fam == "DiscreteGaussian":
                one = pl.from_discrete_gaussian_mechanism(math.sqrt(float(m.sigma2)))
            elif fam == "Geometric":
                one = pl.from_discrete_laplace_mechanism(_decay(m))
            elif fam in ("AnalyticGaussian", "Gaussian"):
                one = pl.from_gaussian_mechanism(float(m.sigma),
                                                 sensitivity=float(m.sensitivity))
            elif fam == "Laplace":
                one = pl.from_laplace_mechanism(float(m.scale))
            else:
                return None
            part = one.self_compose(n * k)
            total = part if total is None else total.compose(part)
    return [float(total.get_epsilon_for_delta(d)) for d in DELTAS]


def references(refresh: bool, stored_only: bool = False
               ) -> tuple[list[list[float] | None], list[list[float] | None]]:
    """Truth and dp-accounting per row, from REFERENCES_JSON where stored (by label)."""
    stored = {} if refresh or not REFERENCES_JSON.exists() else \
        json.loads(REFERENCES_JSON.read_text())
    truths, peers = [], []
    for label, build in rows():
        got = stored.get(label)
        if stored_only and got is None:
            got = {"truth": None, "dp_accounting": None}
        elif got is None or got["truth"] is None or got["dp_accounting"] is None:
            t = time.perf_counter()
            got = {"truth": truth(build), "dp_accounting": dp_accounting(build),
                   "seconds": time.perf_counter() - t}
            stored[label] = got
            REFERENCES_JSON.write_text(json.dumps(stored, indent=1) + "\n")
        truths.append(got["truth"])
        peers.append(got["dp_accounting"])
        print(f"references: {label[:50]} {truths[-1]} {peers[-1]}", file=sys.stderr,
              flush=True)
    return truths, peers


# --------------------------------------------------------------------------- output
def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if not math.isfinite(x) else f"{x:.4f}"


def table(after: list[dict[str, Any]], before: dict[str, list[float]],
          truths: list[list[float] | None], peers: list[list[float] | None]) -> str:
    lines = ["| composition (sensitivity 1) | δ | dpnoise before | **dpnoise after** | truth "
             "| after / truth − 1 | dp-accounting |", "|---|---|---|---|---|---|---|"]
    for row, tr, pe in zip(after, truths, peers, strict=True):
        old = before.get(row["label"])
        for i, d in enumerate(DELTAS):
            t = None if tr is None else tr[i]
            gap = "-" if t is None else f"{100 * (row['eps'][i] / t - 1):+.2f} %"
            lines.append(f"| {row['label'] if i == 0 else ''} | {d:.0e} | "
                         f"{_fmt(None if old is None else old[i])} | "
                         f"**{_fmt(row['eps'][i])}** | {_fmt(t)} | {gap} | "
                         f"{_fmt(None if pe is None else pe[i])} |")
    return "\n".join(lines)


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(doc)


def run_before(src: str) -> dict[str, list[float]]:
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, __file__, "--dpnoise-only"], env=env, check=True,
                         capture_output=True, text=True).stdout
    res = json.loads(out.strip().splitlines()[-1])
    before = {r["label"]: r["eps"] for r in res}
    BEFORE_JSON.write_text(json.dumps({"source": src, "rows": before}, indent=1) + "\n")
    return before


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before-src", help="src/ of the code before the change (subprocess)")
    ap.add_argument("--dpnoise-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true", help="do not update docs/accounting.md")
    ap.add_argument("--refresh-references", action="store_true",
                    help=f"recompute the truth and dp-accounting (else {REFERENCES_JSON.name})")
    ap.add_argument("--after-from", metavar="FILE",
                    help="the 'after' results printed by --dpnoise-only (instead of computing)")
    ap.add_argument("--stored-references", action="store_true",
                    help="do not compute references missing from the stored file ('-')")
    ap.add_argument("--references-only", action="store_true",
                    help="only compute the missing references and store them")
    args = ap.parse_args()
    if args.dpnoise_only:
        print(json.dumps(dpnoise_epsilons(), allow_nan=True))
        return
    load = os.getloadavg()
    if args.before_src:
        before = run_before(args.before_src)
        how = f"computed now by the code at {args.before_src}"
    elif BEFORE_JSON.exists():
        stored = json.loads(BEFORE_JSON.read_text())
        before = stored["rows"]
        how = f"stored in {BEFORE_JSON.name} (run of {stored['source']})"
    else:
        before, how = {}, "not available"
    if args.after_from:  # the JSON printed by --dpnoise-only (this tree), e.g. run earlier
        after = json.loads(Path(args.after_from).read_text().strip().splitlines()[-1])
    else:
        after = [] if args.references_only else dpnoise_epsilons()
    truths, peers = references(args.refresh_references, args.stored_references)
    if args.references_only:
        return
    text = table(after, before, truths, peers)
    worst = max(r["seconds"] for r in after)
    end = os.getloadavg()
    note = (f"\nMachine load (1, 5, 15 min) at the start: {load[0]:.2f}, {load[1]:.2f}, "
            f"{load[2]:.2f}, at the end: {end[0]:.2f}, {end[1]:.2f}, {end[2]:.2f} (2 cores); "
            f"slowest composition {worst:.1f} s. \"before\": {how}. \"truth\" and "
            f"dp-accounting: {REFERENCES_JSON.name} (computed once; \"-\": not computed). "
            "Produced by `benchmarks/small_delta.py`"
            + (f" (\"after\" from {Path(args.after_from).name}, written by its --dpnoise-only "
               "run of this tree)." if args.after_from else "."))
    print(text + "\n" + note)
    for r in after:
        print(f"{r['label'][:60]:60s} {r['seconds']:6.2f} s")
    if not args.no_write:
        write_doc(text + "\n" + note)


if __name__ == "__main__":
    main()
