"""Accuracy first: the budget each query of a workload needs for the precision asked of it.

A custodian states, per query, the **target**: the half-width of the released error bars
(at the workload's confidence, 0.95 by default) that every cell must reach -- absolute
(``target = 50``: counts to +-50), or relative to a reference value the custodian states
(``relative_target = 0.02`` with ``reference = 48000``: means to +-2 % of a published
figure, or of a value released earlier and charged; never a value computed from this
data).  From public facts only -- the schema's bounds and caps, the ledger's accountant
and, for statistics whose error depends on the size of a group (means, quantiles), a
declared public minimum group size ``group_size`` -- the planner finds

* **(a) the cheapest budgets** (:func:`plan_targets` without a total): for every query the
  smallest epsilon whose error bars meet its target; each is minimal on its own and the
  accountants' composition grows with each part, so together they give the smallest
  composed epsilon at the ledger's delta -- and whether it fits what remains;
* **(b) the best split of a total** (``[workload] epsilon``): the per-query epsilons that
  minimise the worst ratio of error to target, found by bisection on that ratio: every
  query is given the smallest epsilon meeting ``ratio x target``, and the smallest ratio
  whose composition fits the total is kept.

The expected error of a query at an epsilon is what its released error bars would be:
the planner calibrates the release (the same code as a release, nothing read), draws its
noise around public stand-in truths -- a count at the declared group size (or, for a count
or a sum, a value inside its range, where the bars are widest), a mean's centred sum at
seven points across its range (:data:`MEAN_POSITIONS`: the bars are clipped to the column's
range, so the widest lie inside it) -- and computes the error bars with the release's own interval
code (test inversion per component, union bound).  It keeps the 97.5th percentile of the
half-widths over :data:`DRAWS` draws (the widest case of the stand-ins), so that at least
95 % of released cells meet the target.  A quantile ``with rank bar``
(:mod:`dpnoise.session.rank_bar`) is planned without draws: its target is a half-width in
levels, met for every cell of at least ``group_size`` rows when ``rank_error/group_size +
level_slack`` (the worst level; public) is at most the target.  The draws use a fixed
seed: they are a public computation that decides nothing about the data and spend nothing
(the release itself draws from the OS-keyed source).

Running a planned workload is one all-or-nothing reservation (:func:`dpnoise.session.
workload.run_workload`); the ledger records exactly the planned charges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError
from ..randomness import SeededRandom
from .accuracy_target import AccuracyTarget
from .answers import column_range, interval_function
from .planning import release_spec
from .rank_bar import wants_rank_bar

if TYPE_CHECKING:
    from .workload import Workload, WorkloadQuery

#: simulated releases per evaluation of a query's error bars (a mean's or a quantile's,
#: whose bars move with the noise; a count's or a sum's have one width inside the range)
DRAWS = 1000
FIXED_WIDTH_DRAWS = 16
#: the percentile of the simulated half-widths the plan keeps (>= 95 % of cells meet it)
PERCENTILE = 97.5
#: the epsilons a query is searched between
EPSILON_RANGE = (0.01, 100.0)
#: relative precision of the epsilons found
REL_TOL = 2e-3
#: relative precision of the worst error/target ratio of a split (b)
RATIO_TOL = 1e-2
#: where a mean's stand-in centred sums lie, as fractions of their largest size
MEAN_POSITIONS = (-0.9, -0.6, -0.3, 0.0, 0.3, 0.6, 0.9)
#: statistics a target can be given for
TARGET_STATS = ("count", "sum", "mean", "quantile")
_SEED = 20260101


@dataclass(frozen=True)
class QueryPlan:
    """One query of a plan: the budget chosen and the error expected at it."""

    name: str
    query: str
    epsilon: float
    delta: float
    mechanism: str
    expected: float
    target: AccuracyTarget | None
    group_size: int | None

    @property
    def ratio(self) -> float:
        """Expected half-width over the target (<= 1: the target is met)."""
        return math.nan if self.target is None else self.expected / self.target.half_width


@dataclass(frozen=True)
class TargetPlan:
    """What :func:`plan_targets` found; nothing was read or spent.

    ``mode``: ``"cheapest"`` (a) or ``"balanced"`` (b); ``composed``: the ledger's composed
    guarantee after every planned release (``epsilon`` at the ledger's delta, ``delta``
    at its epsilon, or ``rho``); ``fits``: whether that is within the ledger's total.
    """

    mode: str
    queries: tuple[QueryPlan, ...]
    accountant: str
    composed: dict[str, float]
    fits: bool
    confidence: float

    @property
    def worst_ratio(self) -> float:
        """The largest expected-error/target ratio over the targeted queries."""
        ratios = [q.ratio for q in self.queries if q.target is not None]
        return max(ratios) if ratios else math.nan

    def rows(self) -> list[dict[str, Any]]:
        """One dict per query: name, query, epsilon, delta, mechanism, expected, target,
        ratio, group_size."""
        return [{"name": q.name, "query": q.query, "epsilon": q.epsilon, "delta": q.delta,
                 "mechanism": q.mechanism, "expected": q.expected,
                 "target": None if q.target is None else q.target.half_width,
                 "ratio": q.ratio, "group_size": q.group_size} for q in self.queries]

    def __str__(self) -> str:
        head = {"cheapest": "cheapest budgets that meet every target",
                "balanced": "the total split to minimise the worst error/target ratio",
                "fixed": "the workload's own budgets"}[self.mode]
        lines = [f"plan ({head}; expected = the {PERCENTILE:g}th percentile of the "
                 f"{100 * self.confidence:g}% error-bar half-width per cell, public facts "
                 "only, nothing read or spent):"]
        w = max(len(q.name) for q in self.queries)
        for q in self.queries:
            target = "-" if q.target is None else q.target.describe()
            ratio = "" if q.target is None else f"  ratio {q.ratio:.3f}"
            size = "" if q.group_size is None else f"  group size {q.group_size}"
            lines.append(f"  {q.name:<{w}}  epsilon={q.epsilon:.6g}"
                         + (f" delta={q.delta:.3g}" if q.delta else "")
                         + f"  expected +-{q.expected:.6g}  target {target}{ratio}{size}"
                         + f"  [{q.mechanism}]")
        c = self.composed
        delta = math.fsum(q.delta for q in self.queries)
        total = f"rho={c['rho']:.6g}" if not math.isfinite(c["epsilon"]) else \
            f"epsilon={c['epsilon']:.6g}" + (f" (delta {delta:.3g})" if delta else "")
        lines.append(f"composed under the {self.accountant} accountant: {total}; "
                     + ("fits the remaining budget" if self.fits else
                        "does NOT fit the remaining budget"))
        return "\n".join(lines)


# ------------------------------------------------------------------ expected error
def _stand_ins(session: Any, q: Any, plans: list[tuple[str, Any]], size: int | None
               ) -> list[dict[str, float]]:
    """Public stand-in truths of each noised role (several: the plan keeps the widest)."""
    base: dict[str, float] = {}
    for role, p in plans:
        if role in ("selection", "rank"):
            continue
        t = p.target
        if role == "count":
            if size is not None:
                base[role] = float(size)
            else:  # inside [0, N] where the bars are not cut by an end
                base[role] = t.upper / 2 if math.isfinite(t.upper) else 1e6
        elif math.isfinite(t.lower) and math.isfinite(t.upper):
            base[role] = (t.lower + t.upper) / 2
        else:
            end = t.lower if math.isfinite(t.lower) else t.upper if math.isfinite(t.upper) \
                else 0.0
            base[role] = end + (1e6 * t.unit if math.isfinite(t.lower) else -1e6 * t.unit
                                if math.isfinite(t.upper) else 0.0)
    if q.stat != "mean":
        return [base]
    col = session.schema.numeric(q.column)
    half = (float(col.upper) - float(col.lower)) / 2
    n = float(size)  # type: ignore[arg-type]
    # the bars are clipped to the column's range, so the widest are not at the extremes:
    # scan the centred sum across its range
    return [{**base, "centred_sum": float(f) * n * half} for f in MEAN_POSITIONS]


def expected_half_width(session: Any, q: Any, epsilon: float, delta: float, *,
                        group_size: int | None, confidence: float = 0.95,
                        mechanism: str | None = None) -> tuple[float, str]:
    """The :data:`PERCENTILE` percentile of a query's error-bar half-width per cell at
    (epsilon, delta), and the mechanism used -- public facts only (module docstring).

    Parameters
    ----------
    session : Session
        A session (its schema and ledger; its data is not read).
    q : Query
        A parsed query.
    epsilon, delta : float
        The query's budget.
    group_size : int or None
        The declared public minimum group size (required for means and quantiles).
    confidence : float, default 0.95
        The error bars' confidence.
    mechanism : str or None, default None
        A registry name instead of the default mechanism.

    Returns
    -------
    (float, str)
        The half-width and the mechanism's name.
    """
    plans = session.plans(q, epsilon, delta, mechanism)
    name = ", ".join(f"{r}={p.name}" for r, p in plans) if len(plans) > 1 else plans[0][1].name
    if wants_rank_bar(q):  # deterministic: rank_error/size + level_slack, the worst level
        if group_size is None:
            raise ParameterError(f"query {q.text!r}: a quantile 'with rank bar' is planned "
                                 "from the declared group_size (its levels |p - q| are at "
                                 "most rank_error/n + level_slack for n >= group_size)")
        fixed, slope = dict(plans)["rank"].rank_bar(1 - confidence)
        return float(np.max(np.asarray(fixed) / group_size + np.asarray(slope))), name
    noised = [(r, p) for r, p in plans if r not in ("selection", "rank")]
    col_range = column_range(session.schema, q)
    worst = 0.0
    draws = FIXED_WIDTH_DRAWS if q.stat in ("count", "sum") else DRAWS
    for truth in _stand_ins(session, q, plans, group_size):
        rng = SeededRandom(_SEED)
        noisy = {role: p.release(np.full(draws, truth[role]), rng) for role, p in noised}
        levels = q.quantile if isinstance(q.quantile, tuple) else ()  # a key column each
        shape = (draws, len(levels)) if levels else (draws,)
        lo, hi = interval_function(q.stat, col_range, plans, noisy, shape)(confidence)
        half = (np.asarray(hi, dtype=np.float64) - np.asarray(lo, dtype=np.float64)) / 2
        worst = max(worst, float(np.percentile(half, PERCENTILE)))
    return worst, name


def smallest_epsilon(session: Any, q: Any, half_width: float, delta: float, *,
                     group_size: int | None, confidence: float = 0.95,
                     mechanism: str | None = None, guess: float | None = None,
                     memo: dict[float, float] | None = None) -> float:
    """The smallest epsilon (within :data:`REL_TOL`, rounded up) whose expected
    half-width is at most ``half_width``; bisection in log(epsilon) within
    :data:`EPSILON_RANGE` (the half-width falls as epsilon grows), from a bracket around
    ``guess`` when one is given (widened until it brackets); ``memo``: the half-widths
    already computed for this query, by epsilon (filled here).

    Raises
    ------
    ParameterError
        If even the largest epsilon searched does not reach the target.
    """
    seen: dict[float, float] = {} if memo is None else memo
    step = math.log1p(REL_TOL)

    def eps_at(k: int) -> float:  # epsilons on a fixed log grid: searches share points
        return math.exp(k * step)

    def meets(k: int) -> bool:
        eps = eps_at(k)
        if eps not in seen:
            try:
                seen[eps] = expected_half_width(session, q, eps, delta, group_size=group_size,
                                                confidence=confidence, mechanism=mechanism)[0]
            except ParameterError:  # an epsilon outside a mechanism's supported range
                seen[eps] = math.inf
        return seen[eps] <= half_width

    low, high = (math.ceil(math.log(e) / step) for e in EPSILON_RANGE)
    lo, hi = low, high
    if guess is not None and EPSILON_RANGE[0] < guess < EPSILON_RANGE[1]:
        g = round(math.log(guess) / step)
        width = max(1, round(math.log(1.25) / step))
        lo, hi = max(low, g - width), min(high, g + width)
        while lo > low and meets(lo):
            hi, lo = lo, max(low, lo - 2 * (hi - lo))
        while hi < high and not meets(hi):
            lo, hi = hi, min(high, hi + 2 * (hi - lo))
    if lo == low and meets(lo):
        return eps_at(lo)
    if hi == high and not meets(hi):
        raise ParameterError(
            f"query {q.text!r}: no epsilon up to {EPSILON_RANGE[1]:g} reaches the target "
            f"half-width {half_width:g} (at group size {group_size}); relax the target or "
            "declare a larger group size")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if meets(mid):
            hi = mid
        else:
            lo = mid
    return eps_at(hi)


# ------------------------------------------------------------------ the plan
def _group_size(session: Any, q: Any, wq: WorkloadQuery) -> int | None:
    if wq.group_size is not None:
        return wq.group_size
    if q.stat in ("mean", "quantile"):
        if not q.group_by and session.row_bound_released:
            return int(session.row_bound())
        raise ParameterError(
            f"workload: [queries.{wq.name}] a target for a {q.stat} needs group_size = "
            "the declared public minimum number of persons per cell (its error depends on "
            "it)")
    return None


def _composed(session: Any, planned: list[tuple[Any, float, float, str | None]]
              ) -> tuple[dict[str, float], bool]:
    """The ledger's composed guarantee after releasing every planned query."""
    ledger = session.ledger
    acc = ledger.accountant_object()
    state = ledger.state()
    for q, eps, dl, mech in planned:
        plans = session.plans(q, eps, dl, mech)
        spec = release_spec(plans, session.n_cells(q), q.canonical())
        state = acc.compose(state, ledger.charge_for(spec))
    summary = ledger.summary_of(state)
    return summary, bool(ledger.fits_total(summary))


def plan_targets(session: Any, workload: Workload) -> TargetPlan:
    """Plan a workload whose queries carry targets (see the module docstring).

    Parameters
    ----------
    session : Session
        The session (schema and ledger; its data is not read).
    workload : Workload
        A workload with a target on every query without a fixed epsilon; with
        ``epsilon_total`` set, the split (b), else the cheapest budgets (a).

    Returns
    -------
    TargetPlan
        The per-query budgets, expected errors and the composed guarantee.

    Raises
    ------
    ParameterError
        If a target is invalid, a group size is missing, or a target is out of reach.
    """
    parsed = []
    for wq in workload.queries:
        q = session.parse(wq.query)
        if wq.target is not None and q.stat not in TARGET_STATS:
            raise ParameterError(f"workload: [queries.{wq.name}] targets are supported for "
                                 f"{', '.join(TARGET_STATS)}; {q.stat} takes a fixed epsilon")
        size = _group_size(session, q, wq) if wq.target is not None else wq.group_size
        parsed.append((wq, q, size))
    conf = workload.confidence

    first: list[float | None] = [None] * len(parsed)
    memos: list[dict[float, float]] = [{} for _ in parsed]

    def eps_for(scale: float) -> list[float]:
        """Each query's smallest epsilon meeting ``scale`` x its target; the search starts
        near eps(1)/scale (the error of additive noise falls about like 1/epsilon)."""
        out = []
        for i, (wq, q, size) in enumerate(parsed):
            if wq.target is None:
                out.append(wq.epsilon)
                continue
            guess = None if first[i] is None else first[i] / scale  # type: ignore[operator]
            eps = smallest_epsilon(session, q, scale * wq.target.half_width, wq.delta,
                                   group_size=size, confidence=conf, mechanism=wq.mechanism,
                                   guess=guess, memo=memos[i])
            if scale == 1.0:
                first[i] = eps
            out.append(eps)
        return out

    if not any(wq.target is not None for wq in workload.queries):
        mode, epsilons = "fixed", eps_for(1.0)
    elif workload.epsilon_total is None:
        mode, epsilons = "cheapest", eps_for(1.0)
    else:
        eps_for(1.0)  # the starting points of every later search
        mode, epsilons = "balanced", _balanced(session, parsed, workload.epsilon_total, eps_for)
    planned = [(q, eps, wq.delta, wq.mechanism) for (wq, q, _s), eps in zip(parsed, epsilons,
                                                                            strict=True)]
    composed, fits = _composed(session, planned)
    if mode == "balanced":
        fits = fits and composed.get("epsilon", math.inf) <= workload.epsilon_total * (1 + 1e-9)
    rows = []
    for (wq, q, size), eps in zip(parsed, epsilons, strict=True):
        if size is None and q.stat in ("mean", "quantile"):  # no declared size: no estimate
            expected = math.nan
            mech = session.plans(q, eps, wq.delta, wq.mechanism)[0][1].name
        else:
            expected, mech = expected_half_width(session, q, eps, wq.delta, group_size=size,
                                                 confidence=conf, mechanism=wq.mechanism)
        rows.append(QueryPlan(wq.name, wq.query, eps, wq.delta, mech, expected, wq.target,
                              size))
    return TargetPlan(mode, tuple(rows), session.ledger.accountant, composed, fits, conf)


def _balanced(session: Any, parsed: list[Any], total: float, eps_for: Any) -> list[float]:
    """(b): the smallest ratio r (bisection in log r) such that giving every query the
    smallest epsilon meeting r x its target composes to at most ``total`` under the
    ledger's accountant (at the ledger's delta)."""
    def fits(eps: list[float]) -> bool:
        planned = [(q, e, wq.delta, wq.mechanism)
                   for (wq, q, _s), e in zip(parsed, eps, strict=True)]
        c, _ = _composed(session, planned)
        return c.get("epsilon", math.inf) <= total

    def try_ratio(r: float) -> list[float] | None:
        try:
            eps = eps_for(r)
        except ParameterError:
            return None
        return eps if fits(eps) else None

    # the errors of additive noise fall about like 1/epsilon: start from the ratio at which
    # the cheapest budgets, scaled down together, would add up to the total
    cheapest = eps_for(1.0)
    r0 = max(1e-6, sum(cheapest) / total)
    lo, hi = r0 / 1.2, r0 * 1.2
    best = try_ratio(hi)
    while best is None:
        lo, hi = hi, hi * 2
        if hi > 1e6:
            raise ParameterError(f"workload: epsilon={total:g} cannot serve these queries "
                                 "(even errors a million times their targets do not fit)")
        best = try_ratio(hi)
    while (got := try_ratio(lo)) is not None:
        hi, best, lo = lo, got, lo / 2
    while hi / lo - 1 > RATIO_TOL:
        mid = math.sqrt(lo * hi)
        got = try_ratio(mid)
        if got is None:
            lo = mid
        else:
            hi, best = mid, got
    return best


def apply_plan(workload: Workload, plan: TargetPlan) -> Workload:
    """The workload with every query's epsilon set as ``plan`` chose."""
    chosen = {q.name: q.epsilon for q in plan.queries}
    return replace(workload, queries=tuple(replace(wq, epsilon=chosen[wq.name])
                                           for wq in workload.queries), epsilon_total=None,
                   planned=True)
