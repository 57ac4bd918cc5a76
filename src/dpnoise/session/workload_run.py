"""Running a workload: every query prepared from public facts, all reserved in ONE ledger
transaction (all or nothing), then each aggregated, noised, recorded and written -- see
:mod:`dpnoise.session.workload` for the file and the steps.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import BudgetExceededError, DpnoiseError, ParameterError
from .execution import execute_release, prepare_release, replayed_release
from .opening import data_engine
from .workload import Workload, WorkloadQuery


@dataclass
class WorkloadResult:
    """The releases of a workload, by query name, in the workload's order.

    Parameters
    ----------
    workload : Workload
        The workload that was run.
    releases : dict of str to Release, default {}
        The releases by query name.
    failed : dict of str to str, default {}
        Query name -> the fixed message of a query that failed after its reservation.
    outputs : dict of str to str, default {}
        Query name -> the file its table was written to.
    plan : TargetPlan or None, default None
        The plan of a workload with targets (the budgets it chose and the errors expected).
    """

    workload: Workload
    releases: dict[str, Any] = field(default_factory=dict)
    #: query name -> the fixed message of a query that failed after its reservation
    failed: dict[str, str] = field(default_factory=dict)
    #: query name -> the file its table was written to
    outputs: dict[str, str] = field(default_factory=dict)
    #: the :class:`~dpnoise.session.targets.TargetPlan` of a workload with targets
    plan: Any = None

    def __getitem__(self, name: str) -> Any:
        return self.releases[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.releases)

    def __len__(self) -> int:
        return len(self.releases)

    @property
    def ok(self) -> bool:
        """Whether every query was released."""
        return not self.failed

    def summary(self) -> Any:
        """A ``pandas.DataFrame``, one row per query: name, query, status, epsilon, delta,
        mechanism, cells, ledger row and (ungrouped queries) the released value.

        Returns
        -------
        pandas.DataFrame
            One row per query.
        """
        import pandas as pd

        rows = []
        for q in self.workload.queries:
            r = self.releases.get(q.name)
            status = "failed" if q.name in self.failed else \
                "replayed" if r is not None and r.replayed else "released"
            rows.append({
                "name": q.name, "query": q.query, "status": status,
                "epsilon": r.epsilon if r is not None else q.epsilon,
                "delta": r.delta if r is not None else q.delta,
                "mechanism": r.mechanism if r is not None else None,
                "cells": int(r.values.size) if r is not None else 0,
                "ledger_id": r.ledger_id if r is not None else None,
                "value": r.values.item() if r is not None and r.values.ndim == 0 else None,
                "output": self.outputs.get(q.name)})
        df = pd.DataFrame(rows)
        df.attrs.update(workload=self.workload.name, confidence=self.workload.confidence)
        return df

    def to_pandas(self) -> dict[str, Any]:
        """Each released query's table (:meth:`Release.to_pandas`), by name.

        Returns
        -------
        dict of str to pandas.DataFrame
            The tables by query name.
        """
        return {n: r.to_pandas() for n, r in self.releases.items()}


def run_workload(session: Any, source: Workload | str | Path | Mapping[str, Any], *,
                 output: str | Path | None = None, replay: bool | None = None
                 ) -> WorkloadResult:
    """Release every query of ``source`` on ``session`` (see the module docstring); a
    workload with targets is planned first (public facts only) and refused, nothing spent,
    if the plan does not fit what remains."""
    wl = Workload.load(source)
    data_engine(session.engine)  # refuses a planning-only session
    plan = None
    if wl.needs_plan:
        from .targets import apply_plan, plan_targets

        plan = plan_targets(session, wl)
        if not plan.fits:
            raise BudgetExceededError(
                "workload refused, nothing spent: the budgets that meet its targets do not "
                f"fit the remaining budget ({session.remaining} left)\n{plan}")
        wl = apply_plan(wl, plan)
    paths = _output_paths(wl, output)
    # the directory exists before the queries are prepared (each output file is checked
    # like a single release's: a new file in an existing, writable directory); made here,
    # it is removed again if nothing gets reserved
    made = bool(paths) and not Path(output).exists()  # type: ignore[arg-type]
    if made:
        Path(output).mkdir()  # type: ignore[arg-type]
    try:
        todo, result = _prepared(session, wl, paths, replay)
        result.plan = plan
        if not todo:
            if made:
                Path(output).rmdir()  # type: ignore[arg-type]
            return result
        _check_total(session, todo)
        rng = session.release_rng()
        # ONE transaction for the whole workload, before anything data-dependent runs
        rids = session.ledger.reserve_all([p.reservation for _, p in todo])
    except BaseException:
        if made:
            Path(output).rmdir()  # type: ignore[arg-type]
        raise
    for i, ((q, p), rid) in enumerate(zip(todo, rids, strict=True)):
        try:
            r = execute_release(session, p, rid, rng)
        except DpnoiseError as exc:  # the fixed message of a failed release; charge kept
            result.failed[q.name] = str(exc)
            continue
        except BaseException:
            for _, later in zip(todo[i + 1:], rids[i + 1:], strict=True):
                session.ledger.abort(later, "interrupted")  # reserved: stays charged
            raise
        result.releases[q.name] = r
        if p.output is not None:
            result.outputs[q.name] = str(p.output)
    return result


def _prepared(session: Any, wl: Workload, paths: dict[str, str], replay: bool | None
              ) -> tuple[list[tuple[WorkloadQuery, Any]], WorkloadResult]:
    """Every query prepared from public facts (nothing read or spent); those an identical
    earlier release answers (opt-in replay) are served from the ledger, the rest returned
    to be reserved."""
    _row_bound_first(session, wl)
    pending = []
    for q in wl.queries:
        try:
            pending.append(prepare_release(session, session.parse(q.query), q.epsilon,
                                           q.delta, q.mechanism, True, paths.get(q.name),
                                           wl.confidence))
        except ParameterError as exc:  # public facts only: name the query
            raise ParameterError(f"workload query {q.name!r}: {exc}") from None
    result = WorkloadResult(wl)
    use_replay = session.replay if replay is None else bool(replay)
    todo = []
    for q, p in zip(wl.queries, pending, strict=True):
        hit = replayed_release(session, p) if use_replay else None
        if hit is not None:
            result.releases[q.name] = hit
        else:
            todo.append((q, p))
    return todo, result


def _output_paths(wl: Workload, output: str | Path | None) -> dict[str, str]:
    """``output/<name>.<format>`` per query; the directory may exist (no file of the
    workload in it may) or be created in an existing parent.  Checked before any spend."""
    if output is None:
        return {}
    out = Path(output)
    if not str(output) or (out.exists() and not out.is_dir()):
        raise ParameterError(f"output {str(output)!r} must be a directory (one file per "
                             "query is written into it)")
    if not out.exists() and not out.resolve().parent.is_dir():
        raise ParameterError(f"output {str(output)!r}: its parent directory does not exist")
    if out.exists() and not os.access(out, os.W_OK):
        raise ParameterError(f"output {str(output)!r} is not writable")
    names = {q.name.lower() for q in wl.queries}
    if len(names) != len(wl.queries):
        raise ParameterError("workload: query names differ only by case (they name files)")
    return {q.name: str(out / f"{q.name}.{wl.format}") for q in wl.queries}


def _row_bound_first(session: Any, wl: Workload) -> None:
    """With ``rows_epsilon`` and no released N yet, N is released first -- its own
    ledger release, as for a single release -- and only if the workload fits after it."""
    if session.schema.max_rows is not None or not session.rows_epsilon or \
            session.row_bound_released:
        return
    if session.ledger.accountant == "basic":
        left = session.ledger.remaining()
        if session.rows_epsilon + wl.epsilon > left.epsilon:
            raise BudgetExceededError(
                f"workload refused, nothing spent: releasing the row bound N (epsilon="
                f"{session.rows_epsilon:g}, once) and the workload (epsilon="
                f"{wl.epsilon:g}) needs more than the remaining {left}")
    session.row_bound()


def _check_total(session: Any, todo: list[tuple[WorkloadQuery, Any]]) -> None:
    """Early refusal under basic composition (the reservation re-checks exactly)."""
    if session.ledger.accountant != "basic":
        return
    left = session.ledger.remaining()
    eps = sum((Fraction(p.eps) for _, p in todo), Fraction(0))
    dl = sum((Fraction(p.dl) for _, p in todo), Fraction(0))
    if eps > Fraction(left.epsilon) or dl > Fraction(left.delta):
        raise BudgetExceededError(
            f"workload refused, nothing spent: its {len(todo)} releases need epsilon="
            f"{float(eps):.6g}" + (f", delta={float(dl):.3g}" if dl else "")
            + f" but only {left} of the total {session.budget} remains")
