"""A workload: several queries released in one pass over the data, all or nothing.

A custodian publishing a dozen tables names them in one TOML file::

    [workload]
    name = "survey-2026"
    epsilon = 1.0            # total, split over the queries by their `share`
    delta = 1e-6             # total delta, split the same way among queries that use one
    confidence = 0.95        # error bars (optional)
    format = "parquet"       # or "csv": the files `output` writes (optional)

    [queries.respondents]
    query = "count"
    share = 1

    [queries.mean_age_by_region]
    query = "mean age by region"
    share = 2

    [queries.median_income]
    query = "median income"
    epsilon = 0.1            # a fixed epsilon instead of a share (delta = 0 by default)
    mechanism = "geometric"  # optional, as for a single release

Accuracy first (:mod:`dpnoise.session.targets`): instead of an epsilon, a query may give the
precision its error bars must reach, and the planner finds its budget::

    [workload]
    delta = 1e-6
    group_size = 200         # declared public minimum persons per cell (means, quantiles)
    # epsilon = 1.0          # with a total: the split minimising the worst error/target

    [queries.respondents]
    query = "count by region"
    target = 25              # 95 % error bars of +-25 per cell

    [queries.mean_income]
    query = "mean income by region"
    relative_target = 0.05   # +-5 % of the reference, a public figure
    reference = 48000

Without ``[workload] epsilon`` each targeted query gets the smallest epsilon that meets its
target; with it, the split of that (composed) total that minimises the worst ratio of
error to target.  ``dpnoise release --workload FILE --dry-run`` shows the plan -- every
query's epsilon, expected error and target -- before anything is read or spent.

A workload runs with ``dpnoise release --workload FILE --data ... --ledger ... [--output DIR]``
or ``Session.run_workload(path_or_dict, output=DIR)``.  What that does, in order:

1. the file is parsed and every query parsed, type-checked and calibrated (public facts
   only; any error stops the workload before anything is read or spent);
2. with ``replay``, a query identical to an earlier release is served from the ledger;
3. the budget of every other query is reserved in ONE ledger transaction
   (:meth:`~dpnoise.session.Ledger.reserve_all`): refused as a whole, nothing spent, if
   the total does not fit; otherwise each query has its own ledger row from here on;
4. each query is then aggregated on the data the session opened (and fingerprinted)
   once, noised and recorded, and its table written to ``output/<name>.<format>``.  A
   query that fails here keeps its charge (ledger reason ``release_failed``, a fixed
   message) and the others still run; :attr:`WorkloadResult.failed` names it.

Every query is its own ledger release, so replay, ``dpnoise ledger --show`` and the report
work per query.  Shares: query ``i`` gets ``epsilon * share_i / sum(shares)``, rounded
down so that the shares never add up to more than the total; ``delta`` is split in
proportion to the shares of the queries that take one (``delta = true``: a query whose
mechanism needs delta, e.g. groups whose keys are not public).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import ParameterError
from ..params import check_delta, check_epsilon
from .accuracy_target import AccuracyTarget

#: a query's name: a file name on every platform
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
FORMATS = ("parquet", "csv")
_TOP = {"workload", "queries"}
_HEAD = {"name", "epsilon", "delta", "confidence", "format", "description", "group_size"}
_QUERY = {"query", "epsilon", "delta", "share", "mechanism", "target", "relative_target",
          "reference", "group_size"}


@dataclass(frozen=True)
class WorkloadQuery:
    """One query of a workload, with the (epsilon, delta) it is released at.

    ``epsilon`` is None for a query with a ``target`` until the planner
    (:func:`~dpnoise.session.targets.plan_targets`) chooses it; ``group_size``: the declared
    public minimum number of persons per cell its error is planned at.
    """

    name: str
    query: str
    epsilon: float | None
    delta: float
    mechanism: str | None = None
    target: AccuracyTarget | None = None
    group_size: int | None = None


@dataclass(frozen=True)
class Workload:
    """Named queries with their budgets (see the module docstring for the file).

    Parameters
    ----------
    queries : tuple of WorkloadQuery
        The named queries with their budgets.
    name : str, default "workload"
        The workload's name (used for output files).
    confidence : float, default 0.95
        The error bars' confidence.
    format : str, default "parquet"
        The output files' format (parquet or csv).
    epsilon_total : float or None, default None
        With targets: the composed total the planner splits (None: the cheapest budgets).
    planned : bool, default False
        Whether the targeted queries' epsilons were chosen by the planner.
    """

    queries: tuple[WorkloadQuery, ...]
    name: str = "workload"
    confidence: float = 0.95
    format: str = "parquet"
    epsilon_total: float | None = None
    planned: bool = False

    @property
    def needs_plan(self) -> bool:
        """Whether a query's epsilon is still to be chosen from its target."""
        return any(q.epsilon is None for q in self.queries)

    @property
    def epsilon(self) -> float:
        """The workload's total epsilon (the sum of its queries' chosen epsilons)."""
        return float(math.fsum(q.epsilon for q in self.queries if q.epsilon is not None))

    @property
    def delta(self) -> float:
        """The workload's total delta (the sum of its queries')."""
        return float(math.fsum(q.delta for q in self.queries))

    @classmethod
    def load(cls, source: Workload | str | Path | Mapping[str, Any]) -> Workload:
        """A workload from a TOML file path, a mapping of the same shape, or itself.

        Parameters
        ----------
        source : Workload, str, pathlib.Path or mapping
            A TOML file path, a mapping of the same shape, or a workload.

        Returns
        -------
        Workload
            The workload.

        Raises
        ------
        ParameterError
            If the file or mapping is not a valid workload.
        """
        if isinstance(source, Workload):
            return source
        if isinstance(source, (str, Path)):
            return cls.from_dict(_read_toml(Path(source)))
        if isinstance(source, Mapping):
            return cls.from_dict(source)
        raise ParameterError("workload must be a TOML path, a dict or a Workload, got "
                             f"{type(source).__name__}")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Workload:
        """A workload from a mapping shaped like the TOML file.

        Parameters
        ----------
        d : mapping
            ``[workload]`` and the ``[[query]]`` tables.

        Returns
        -------
        Workload
            The workload.

        Raises
        ------
        ParameterError
            If a key is unknown or a value is invalid.
        """
        _only(d, _TOP, "the workload")
        head = _table(d.get("workload", {}), "[workload]")
        _only(head, _HEAD, "[workload]")
        queries = _table(d.get("queries"), "[queries]")
        if not queries:
            raise ParameterError("workload: [queries] names no query (add e.g. "
                                 "[queries.respondents] query = \"count\" share = 1)")
        from ..laws.base import check_level

        confidence = check_level(head.get("confidence", 0.95))
        fmt = head.get("format", "parquet")
        if fmt not in FORMATS:
            raise ParameterError(f"workload format must be one of {', '.join(FORMATS)}, "
                                 f"got {fmt!r}")
        name = head.get("name", "workload")
        if not isinstance(name, str):
            raise ParameterError("workload name must be text")
        if any(_targeted(spec) for spec in queries.values() if isinstance(spec, Mapping)):
            rows, total = _targeted_budgets(queries, head)
            return cls(rows, name, confidence, fmt, epsilon_total=total)
        if "group_size" in head:
            raise ParameterError("workload: group_size is for queries with a target")
        return cls(_budgets(queries, head), name, confidence, fmt)


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    if not path.is_file():
        raise ParameterError(f"workload file {str(path)!r} does not exist or is not a file")
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ParameterError(f"workload file {str(path)!r} is not valid TOML: "
                             f"{str(exc)[:200]}") from None


def _table(v: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise ParameterError(f"workload: {where} must be a table")
    return v


def _only(d: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(str(k) for k in d if k not in allowed)
    if extra:
        raise ParameterError(f"workload: unknown key(s) {extra} in {where} (allowed: "
                             f"{', '.join(sorted(allowed))})")


def _number(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ParameterError(f"workload: {what} must be a number, got {v!r}")
    return float(v)


def _budgets(queries: Mapping[str, Any], head: Mapping[str, Any]) -> tuple[WorkloadQuery, ...]:
    """Each query's (epsilon, delta): fixed, or its share of the workload's total."""
    rows = []
    for name, spec in queries.items():
        where = f"[queries.{name}]"
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ParameterError(f"workload: query name {name!r} must be 1-100 letters, "
                                 "digits, '_', '.', '-' (it names the output file)")
        spec = _table(spec, where)
        _only(spec, _QUERY, where)
        if not isinstance(spec.get("query"), str):
            raise ParameterError(f"workload: {where} needs query = \"...\"")
        if ("epsilon" in spec) == ("share" in spec):
            raise ParameterError(f"workload: {where} needs exactly one of epsilon or share")
        mech = spec.get("mechanism")
        if mech is not None and not isinstance(mech, str):
            raise ParameterError(f"workload: {where} mechanism must be a name")
        rows.append((name, spec, mech))
    shared = [(n, s) for n, s, _ in rows if "share" in s]
    eps_total = head.get("epsilon")
    if shared and eps_total is None:
        raise ParameterError("workload: queries with a share need the total "
                             "[workload] epsilon = ...")
    if eps_total is not None and not shared:
        raise ParameterError("workload: [workload] epsilon is split by shares, but no "
                             "query has a share (give each query epsilon or share)")
    shares = {n: _number(s["share"], f"[queries.{n}] share") for n, s in shared}
    if any(not (0 < v < math.inf) for v in shares.values()):
        raise ParameterError("workload: every share must be a positive finite number")
    eps_shares = _split(check_epsilon(eps_total, name="workload epsilon"), shares) \
        if shared else {}
    dl_total = head.get("delta", 0.0)
    dl_total = check_delta(_number(dl_total, "[workload] delta"), allow_zero=True)
    takers = {n: shares.get(n, 1.0) for n, s, _ in rows if s.get("delta") is True}
    if takers and not dl_total:
        raise ParameterError("workload: delta = true needs the total [workload] delta")
    dl_shares = _split(dl_total, takers) if takers else {}
    out = []
    for name, spec, mech in rows:
        eps = eps_shares[name] if name in eps_shares else check_epsilon(
            _number(spec["epsilon"], f"[queries.{name}] epsilon"),
            name=f"[queries.{name}] epsilon")
        dl = spec.get("delta", 0.0)
        if dl is True:
            dl = dl_shares[name]
        elif dl is False:
            dl = 0.0
        else:
            dl = check_delta(_number(dl, f"[queries.{name}] delta"), allow_zero=True)
        out.append(WorkloadQuery(name, spec["query"], eps, dl, mech))
    if dl_total and not takers and not any(q.delta for q in out):
        raise ParameterError("workload: [workload] delta is given but no query takes it "
                             "(mark those that need one with delta = true)")
    return tuple(out)


def _targeted(spec: Mapping[str, Any]) -> bool:
    return "target" in spec or "relative_target" in spec


def _group_size_of(v: Any, where: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ParameterError(f"workload: {where} group_size must be a whole number >= 1 (the "
                             f"declared public minimum persons per cell), got {v!r}")
    return int(v)


def _targeted_budgets(queries: Mapping[str, Any], head: Mapping[str, Any]
                      ) -> tuple[tuple[WorkloadQuery, ...], float | None]:
    """A workload with targets: each targeted query's epsilon is left to the planner;
    the others need a fixed epsilon; ``[workload] epsilon`` is the total to split."""
    size = _group_size_of(head.get("group_size"), "[workload]")
    total = head.get("epsilon")
    if total is not None:
        total = check_epsilon(_number(total, "[workload] epsilon"), name="workload epsilon")
    dl_total = check_delta(_number(head.get("delta", 0.0), "[workload] delta"),
                           allow_zero=True)
    takers = [n for n, s in queries.items() if isinstance(s, Mapping) and s.get("delta") is True]
    if takers and not dl_total:
        raise ParameterError("workload: delta = true needs the total [workload] delta")
    dl_shares = _split(dl_total, {n: 1.0 for n in takers}) if takers else {}
    out = []
    for name, spec in queries.items():
        where = f"[queries.{name}]"
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ParameterError(f"workload: query name {name!r} must be 1-100 letters, "
                                 "digits, '_', '.', '-' (it names the output file)")
        spec = _table(spec, where)
        _only(spec, _QUERY, where)
        if not isinstance(spec.get("query"), str):
            raise ParameterError(f"workload: {where} needs query = \"...\"")
        if "share" in spec:
            raise ParameterError(f"workload: {where} share: with targets the planner splits "
                                 "the budget (give a target, or a fixed epsilon)")
        mech = spec.get("mechanism")
        if mech is not None and not isinstance(mech, str):
            raise ParameterError(f"workload: {where} mechanism must be a name")
        dl = spec.get("delta", 0.0)
        dl = dl_shares[name] if dl is True else 0.0 if dl is False else check_delta(
            _number(dl, f"{where} delta"), allow_zero=True)
        target = None
        if _targeted(spec):
            if "epsilon" in spec:
                raise ParameterError(f"workload: {where} gives a target and an epsilon; "
                                     "the planner chooses the epsilon of a targeted query")
            target = AccuracyTarget(absolute=spec.get("target"),
                                    relative=spec.get("relative_target"),
                                    reference=spec.get("reference"))
            eps = None
        elif "epsilon" in spec:
            eps = check_epsilon(_number(spec["epsilon"], f"{where} epsilon"),
                                name=f"{where} epsilon")
        else:
            raise ParameterError(f"workload: {where} needs a target or a fixed epsilon")
        q_size = _group_size_of(spec.get("group_size"), where)
        out.append(WorkloadQuery(name, spec["query"], eps, dl, mech, target,
                                 q_size if q_size is not None else size))
    return tuple(out), total


def _split(total: float, shares: Mapping[str, float]) -> dict[str, float]:
    """``total * share / sum(shares)`` per name, each rounded DOWN to a double, so the
    parts add up (exactly) to at most ``total``."""
    whole = sum((Fraction(v) for v in shares.values()), Fraction(0))
    out = {}
    for name, v in shares.items():
        exact = Fraction(total) * Fraction(v) / whole
        x = float(exact)
        if Fraction(x) > exact:
            x = math.nextafter(x, 0.0)
        out[name] = x
    return out
