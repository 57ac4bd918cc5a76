"""``make demo`` / ``dpnoise demo``: a short custodian session on a bundled data set.

The data set (``data/survey.csv``, 3000 synthetic people) is regenerated deterministically
by ``scripts/make_demo_data.py``; its public bounds are declared in ``data/survey.toml``.
The demo opens a :class:`dpnoise.Session` with a total budget, answers a handful of
queries (counts, a sum, means, a histogram, a GROUP BY), and prints for each the true
answer (which only the custodian sees), the private answer, the mechanism and the budget
that remains.  It ends with a replayed query (no new spend) and a refused one (over
budget, costs nothing).  Every private answer carries its 95% error bar (computed from
the released output and public parameters only).  Two releases go beyond counts and
sums: a DP median (a quantile over the public range of income) and a mean per *area*
-- the region column declared as text whose keys are NOT public, so only the areas that
survive DP partition selection are released.  The ledger is created explicitly
(``Ledger(..., create=True)``): a temporary file, or the file ``--ledger`` names
(created if it does not exist yet, reused otherwise).  With a seed (``--seed``) the
ledger is in memory instead -- seeded randomness is never charged to a ledger file.
Last, the bundled workload file (``data/survey-workload.toml``: seven tables) runs in one
pass on a publication ledger of its own, its results shown as pandas DataFrames, and is
then refused as a whole when run again (nothing spent); and a workload that gives a
precision per table instead of an epsilon (``data/survey-targets.toml``) is planned --
the cheapest budgets that meet every target, public facts only -- and released.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .errors import BudgetExceededError, ParameterError
from .randomness import CryptoRandom
from .session import MECHANISMS, Budget, Ledger, Schema, Session
from .session.columns import Column

TOTAL = Budget(epsilon=3.0, delta=1e-5)
#: releases beyond counts and sums (printed with their own tables)
EXTRA: list[tuple[str, str, float, float]] = [
    ("median income (DP quantile)", "median income", 0.2, 0.0),
    ("income quartiles (one DP release)", "quantiles income at 0.25, 0.5, 0.75", 0.5, 0.0),
    ("mean age per area (keys not public)", "mean age by area", 0.1, 1e-6),
]
#: the epsilon of the demo's suggested bounds (``Session.suggest_bounds``)
BOUNDS_EPSILON = 0.2

# (label, query, epsilon); QUERIES_PICKED below choose their mechanism explicitly
QUERIES: list[tuple[str, str, float]] = [
    ("respondents", "count", 0.1),
    ("aged 65 or more", "count where age >= 65", 0.2),
    ("smokers under 30", "SELECT COUNT(*) FROM data WHERE smoker = 1 AND age < 30", 0.2),
    ("mean age", "mean age", 0.2),
    ("total satisfaction (0-10 each)", "sum satisfaction", 0.1),
    ("mean income of smokers", "mean income where smoker = 1", 0.2),
    ("respondents per region", "histogram region", 0.2),
    ("mean satisfaction per region", "SELECT region, AVG(satisfaction) FROM data GROUP BY region",
     0.4),
]
# the same statistic with a mechanism picked by hand (when that mechanism is installed)
QUERIES_PICKED: list[tuple[str, str, float, str]] = [
    ("total satisfaction, range-laplace", "sum satisfaction", 0.1, "range-laplace"),
]


@dataclass(frozen=True)
class DemoRow:
    statistic: str
    query: str
    cell: str
    true_value: float
    private_value: float
    mechanism: str
    epsilon: float
    remaining: float
    low: float = float("nan")
    high: float = float("nan")
    rules: str = ""  # the declared bounds and contribution cap, in words


def survey_paths() -> tuple[Path, Path]:
    base = resources.files("dpnoise").joinpath("data")
    return Path(str(base.joinpath("survey.csv"))), Path(str(base.joinpath("survey.toml")))


def workload_path() -> Path:
    """The bundled workload file: the survey's published tables in one run."""
    return Path(str(resources.files("dpnoise").joinpath("data", "survey-workload.toml")))


#: the publication ledger's total (the workload file spends all of it)
PUBLICATION_TOTAL = Budget(epsilon=1.0, delta=1e-6)


def run_workload_demo(rng: Any, tmp: str) -> dict[str, Any]:
    """The bundled workload on its own ledger (a file in ``tmp``, created explicitly; in
    memory when seeded), its tables written to ``tmp/tables``; then the same workload
    again, refused as a whole because the ledger cannot pay for all of it."""
    data, schema = survey_paths()
    seeded = rng is not None and not isinstance(rng, CryptoRandom)
    led = Ledger(None, budget=PUBLICATION_TOTAL) if seeded else \
        Ledger(Path(tmp) / "publication-ledger.sqlite", budget=PUBLICATION_TOTAL, create=True)
    with Session(data, None, led, schema=demo_schema(schema), rng=rng) as s:
        result = s.run_workload(workload_path(), output=Path(tmp) / "tables")
        spent_after = s.spent
        try:
            s.run_workload(workload_path())
            refused = ""
        except BudgetExceededError as exc:
            refused = str(exc)
        return {"result": result, "refused": refused, "spent": spent_after,
                "spent_after_refusal": s.spent, "releases": len(s.history())}


def targets_path() -> Path:
    """The bundled workload planned from targets: no epsilon, a precision per table."""
    return Path(str(resources.files("dpnoise").joinpath("data", "survey-targets.toml")))


def run_targets_demo(rng: Any) -> dict[str, Any]:
    """Plan the bundled targets workload (public facts only), then run it on a ledger of its
    own (in memory: the demo's other ledgers are not touched)."""
    data, schema = survey_paths()
    with Session(data, None, Ledger(None, budget=Budget(epsilon=10.0)),
                 schema=demo_schema(schema), rng=rng) as s:
        from .session.targets import apply_plan
        from .session.workload import Workload

        plan = s.plan_workload(targets_path())  # public facts only; then run what it chose
        result = s.run_workload(apply_plan(Workload.load(targets_path()), plan))
        return {"plan": plan, "result": result, "spent": s.spent}


def _print_targets(t: dict[str, Any]) -> None:
    print("\naccuracy first (src/dpnoise/data/survey-targets.toml): a precision per table, "
          "the budgets planned")
    print(t["plan"])
    r = t["result"]["mean_income_by_region"]
    print(f"released, spent {t['spent']}; mean income by region with its error bars:")
    print(r.table())


def _print_workload(w: dict[str, Any]) -> None:
    r = w["result"]
    print(f"\nworkload {r.workload.name!r} (src/dpnoise/data/survey-workload.toml): "
          f"{len(r.workload.queries)} queries in one run, their budget reserved in one "
          f"ledger transaction; spent {w['spent']} of {PUBLICATION_TOTAL}")
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas comes with the dev and spark extras
        print("(pandas is not installed: the DataFrames are skipped)")
        return
    with pd.option_context("display.width", 120, "display.max_columns", 20,
                           "display.max_colwidth", 40):
        print(r.summary()[["name", "status", "epsilon", "mechanism", "cells", "value"]]
              .to_string(index=False))
        df = r["mean_income_by_region"].to_pandas()
        print(f"\nmean_income_by_region as a DataFrame (df.attrs: confidence "
              f"{df.attrs['confidence']}, guarantee {df.attrs['guarantee'].split(' [')[0]}):")
        print(df.to_string(index=False))
    print(f"tables written: {', '.join(Path(p).name for p in r.outputs.values())}")
    print(f"the same workload again: {w['refused']}  (spent still {w['spent_after_refusal']})")


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) >= 1 else f"{x:,.3f}"


def run_session(session: Session) -> list[DemoRow]:
    rows: list[DemoRow] = []
    picked = [q for q in QUERIES_PICKED if q[3] in MECHANISMS]
    for label, query, eps, *mech in [*QUERIES, *picked]:
        true = np.asarray(session.true_answer(query)).ravel()
        r = session.release(query, epsilon=eps, mechanism=mech[0] if mech else None)
        left = session.remaining.epsilon
        keys = r.key_arrays()
        low, high = (np.asarray(a).ravel() for a in r.interval(0.95))
        for i, (t, p) in enumerate(zip(true, r.values.ravel(), strict=True)):
            cell = ", ".join(str(keys[g][i]) for g in r.group_by)
            rows.append(DemoRow(label, query, cell, float(t), float(p), r.mechanism, eps, left,
                                float(low[i]), float(high[i]), r.rules_text()))
    return rows


def demo_schema(path: Path) -> Schema:
    """The survey's schema plus ``area``: the region column read as text whose keys are
    NOT declared (grouping by it goes through DP partition selection)."""
    from dataclasses import replace

    base = Schema.from_toml(path)
    cols = {**base.columns, "area": Column("area", text=True, source="region")}
    return replace(base, columns=cols)


def run_extra(session: Session) -> list[tuple[str, str]]:
    """The releases beyond counts and sums, as (label, table) -- skipped (with a note)
    when the ledger cannot pay for them."""
    out = []
    for label, query, eps, delta in EXTRA:
        try:
            r = session.release(query, epsilon=eps, delta=delta)
        except BudgetExceededError as exc:
            out.append((label, f"(not released: {exc})"))
            continue
        out.append((label, f"{r.mechanism}; {r.guarantee.split(' [')[0]}\n{r.table()}"))
    try:  # a column's range learnt privately, charged like any release
        b = session.suggest_bounds("income", epsilon=BOUNDS_EPSILON)
        out.append(("suggested bounds for income (DP, for a schema)", str(b)))
    except BudgetExceededError as exc:
        out.append(("suggested bounds for income", f"(not released: {exc})"))
    return out


def _open_ledger(rng: Any, ledger: str | None, tmp: str) -> tuple[Ledger, str]:
    """The demo's ledger, created explicitly; in memory when the randomness is seeded."""
    if rng is not None and not isinstance(rng, CryptoRandom):
        if ledger:
            raise ParameterError("dpnoise demo: --seed cannot be combined with --ledger "
                                 "(seeded randomness is never charged to a ledger file)")
        return Ledger(None, budget=TOTAL), "in memory (seeded demo: nothing recorded)"
    path = Path(ledger) if ledger else Path(tmp) / "survey-ledger.sqlite"
    if path.exists():
        return Ledger(path), f"{path} (existing ledger)"
    return Ledger(path, budget=TOTAL, create=True), f"{path} (created: total {TOTAL})"


PLD_TOTAL = Budget(epsilon=1.0, delta=1e-6, accountant="pld")
PLD_QUERIES = ["count where age >= 65", "count where smoker = 1", "count where age < 30",
               "histogram region"]
PLD_EPSILON = 0.05  # per release: basic composition fits 20 of them in epsilon = 1


def run_pld_session(rng: Any = None, limit: int = 40) -> list[dict[str, Any]]:
    """Releases at PLD_EPSILON each until the PLD ledger refuses one: per release the
    composed epsilon (at the total's delta) and what basic composition would have charged."""
    data, schema = survey_paths()
    out: list[dict[str, Any]] = []
    with Session(data, PLD_TOTAL, None, schema=schema, rng=rng) as s:
        for i in range(limit):
            try:
                s.release(PLD_QUERIES[i % len(PLD_QUERIES)], epsilon=PLD_EPSILON)
            except BudgetExceededError:
                break
            e = s.history()[-1]
            out.append({"release": e.id, "query": e.query, "epsilon": e.epsilon,
                        "pld_epsilon": e.composed_epsilon, "basic_epsilon": e.basic_epsilon})
    return out


def _print_pld(steps: list[dict[str, Any]]) -> None:
    print(f"\nunder the PLD accountant (in memory, total {PLD_TOTAL}): releases at "
          f"epsilon={PLD_EPSILON:g} each (counts; a histogram is one release)")
    print(f"{'release':>7s}  {'spent (pld)':>11s}  {'left (pld)':>10s}  "
          f"{'basic would have spent':>22s}  {'left (basic)':>12s}")
    for st in steps:
        if st["release"] % 5 and st is not steps[-1]:
            continue
        b_left = PLD_TOTAL.epsilon - st["basic_epsilon"]  # type: ignore[operator]
        print(f"{st['release']:>7d}  {st['pld_epsilon']:>11.4f}  "
              f"{1 - st['pld_epsilon']:>10.4f}  {st['basic_epsilon']:>22.4f}  "
              f"{max(0.0, b_left) if b_left >= -1e-12 else float('nan'):>12.4f}")
    basic_n = int(PLD_TOTAL.epsilon / PLD_EPSILON + 1e-9)  # type: ignore[operator]
    print(f"basic composition refuses after release {basic_n}; the PLD ledger allowed "
          f"{len(steps)} (nan: basic would have refused it)")


def run_demo(rng: Any = None, as_json: bool = False, ledger: str | None = None,
             report: str | None = None) -> int:
    """Run the demo session; ``report``: also write the ledger's HTML release report there."""
    data, schema = survey_paths()
    with tempfile.TemporaryDirectory() as tmp:
        led, where = _open_ledger(rng, ledger, tmp)
        with Session(data, None, led, schema=demo_schema(schema), rng=rng) as s:
            rows = run_session(s)
            extra = run_extra(s)
            replay = s.release(QUERIES[1][1], epsilon=QUERIES[1][2], replay=True)
            try:
                s.release("mean income by region", epsilon=1.0)
                refused = ""
            except BudgetExceededError as exc:
                refused = str(exc)
            remaining = s.remaining
            report_path = _write_report(s, report) if report else None
            workload = run_workload_demo(rng, tmp)
            targets = run_targets_demo(rng)
            if as_json:
                print(json.dumps({
                    "releases": [asdict(r) for r in rows],
                    "beyond_counts": [{"statistic": a, "table": b} for a, b in extra],
                    "replayed": {"query": replay.query, "value": replay.value,
                                 "replayed": replay.replayed},
                    "refused": refused,
                    "budget": {"total": TOTAL.epsilon, "remaining": remaining.epsilon},
                    **({"report": str(report_path)} if report_path else {}),
                    "pld_session": run_pld_session(rng),
                    "workload": {"summary": workload["result"].summary()
                                 .to_dict(orient="records"),
                                 "refused_again": workload["refused"]},
                    "targets": {"plan": targets["plan"].rows(),
                                "composed": targets["plan"].composed},
                }, indent=2, default=str))
                return 0
            _print(rows, replay.value, replay.replayed, refused, remaining, s, where)
            for label, table in extra:
                print(f"\n{label}:\n{table}")
            _print_workload(workload)
            _print_targets(targets)
    _print_pld(run_pld_session(rng))
    if report_path is not None:
        print(f"\nrelease report (HTML, publishable: no true values): {report_path}")
    return 0


def _write_report(s: Session, path: str) -> Path:
    """The ledger's HTML release report (:mod:`dpnoise.report`), written to ``path``."""
    from .report import ledger_report

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(ledger_report(s.ledger, name="survey (synthetic demo data)"), encoding="utf-8")
    return out.resolve()


def _print(rows: list[DemoRow], replay_value: Any, replayed: bool, refused: str,
           remaining: Budget, s: Session, where: str) -> None:
    n = int(rows[0].true_value)
    print(f"dpnoise demo: a custodian session on a synthetic survey of {n} people")
    print("  data:   src/dpnoise/data/survey.csv (read in place by DuckDB)")
    print("  schema: src/dpnoise/data/survey.toml (public bounds; values are clamped to them)")
    print(f"  ledger: {where}, total budget {s.budget}")
    if s.ledger.durable:
        print(f"          head event {s.ledger.head_seq} {s.ledger.head}")
    print()
    head = (f"{'statistic':32s} {'cell':6s} {'true':>12s} {'private':>12s} "
            f"{'95% error bar':>25s}  {'eps':>4s}  {'left':>4s}  mechanism")
    print(head)
    print("-" * len(head))
    last = None
    for r in rows:
        first = r.statistic != last
        last = r.statistic
        name = r.statistic if first else ""
        eps = f"{r.epsilon:4g}" if first else ""
        left = f"{r.remaining:4g}" if first else ""
        mech = r.mechanism if first else ""
        bar = f"[{_fmt(r.low)}, {_fmt(r.high)}]"
        print(f"{name:32s} {r.cell:6s} {_fmt(r.true_value):>12s} {_fmt(r.private_value):>12s} "
              f"{bar:>25s}  {eps:>4s}  {left:>4s}  {mech}")
    print()
    print(f"replay of {QUERIES[1][1]!r}: {replay_value} "
          f"({'served from the ledger, nothing spent' if replayed else 'new release'})")
    if refused:
        print(f"over-budget query 'mean income by region' at epsilon 1: {refused}")
    print(f"\nremaining budget: {remaining} of {s.budget} "
          "(basic sequential composition, recorded in the ledger)")
    print("counts are integers in [0, max_rows]; sums and means stay inside their derived range")
    print("the rules behind these numbers (declared in the schema, applied before the noise):")
    said: set[str] = set()
    for r in rows:
        if r.rules not in said:
            said.add(r.rules)
            print(f"  {r.statistic}: {r.rules}")
