"""Budget planning under the ledger's accountant: ``Session.plan`` and
``Session.release(query, reserve_for=N)``, ``dpnoise release --dry-run``.

Everything here is computed from PUBLIC facts only -- the query, the schema, the ledger's
total and its composed state -- and never reads the data or spends budget:

* :func:`release_spec` maps a calibrated release (its plans per role: ``count``, ``sum``,
  ``centred_sum``) to one ledger charge, a :class:`~dpnoise.accounting.ReleaseSpec`
  (composition over the roles; see the function for the cells);
* :func:`plan_release` finds the largest per-release epsilon such that this release and
  ``reserve_for`` more like it fit the remaining budget under the accountant
  (:func:`dpnoise.accounting.largest_share` from the ledger's current state), or checks a
  given epsilon;
* :func:`expected_error` is the expected absolute error and RMSE of each component from
  its exact law at a public point: for additive laws the noise law itself (the same at
  every true value; the clamp into the valid range only shrinks the error), for the
  range-adherent laws (``privacy_profile().range_adherent``: RangeLaplace, ClampedLaplace)
  the worst of 9 evenly spaced public
  points of the range, both ends included -- never the law at the true value; for a
  ClampedLaplace range wider than 2^20 grid cells, the unclamped law (an upper bound at every
  true value in the range: its exact clamped laws would be tables of 10^7+ cells).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError

if TYPE_CHECKING:  # pragma: no cover
    from .adapter import Plan

ERROR_POINTS = 9
MAX_LAW_CELLS = 2**20  # wider clamped ranges: the unclamped law's error (an upper bound)
SHRINK = 1e-9  # the plan aims this far (relatively) inside the total: the ledger is strict


def release_spec(plans: list[tuple[str, Plan]], n_cells: int, label: str = "") -> Any:
    """The ledger charge of one release: the composition over its roles of

    * a scalar (no GROUP BY): one cell whose mechanism is calibrated at sensitivity k·unit:
      ``ReleaseSpec.cells(m, 1)``;
    * cells, pure-epsilon mechanism (calibrated per cell at sensitivity = unit, epsilon/k,
      by the triangle inequality): one person's k rows move at most min(k, cells) cells by
      d_i units, Σd_i <= k, in any split -- ``ReleaseSpec.split(m, k, cells)``, the
      envelope over every split (:func:`dpnoise.accounting.sources.split_pld`);
    * cells, (epsilon, delta) mechanism (calibrated per cell at sensitivity k·unit): one
      person's k rows move cell i by d_i units = d_i/k of the calibrated sensitivity,
      Σd_i <= k over at most min(k, cells) cells -- ``ReleaseSpec.fraction_split(m, k,
      cells)``, the envelope over every split at those sub-sensitivity lattice shifts
      (:func:`dpnoise.accounting.sources.fractional_split_pld`; basic composition still
      charges min(k, cells) cells).  For a Gaussian it equals one full-sensitivity cell.

    A mean's count and centred sum are both moved by the same rows; composing the two
    roles' charges dominates every joint split (composition preserves domination).  A
    statistic's plan (a quantile's rank, partition selection) is charged its registry
    mechanism over the cells one person can change: ``ReleaseSpec.cells(m,
    p.charge_cells)``.
    """
    from ..accounting import ReleaseSpec

    specs = []
    for role, p in plans:
        if getattr(p, "charged_with", None):  # its noise is inside another role's charge
            continue
        if getattr(p, "target", None) is None:  # a statistic (quantile rank, selection)
            specs.append(ReleaseSpec.cells(p.mechanism, p.charge_cells, role))
            continue
        t, m = p.target, p.mechanism
        k = int(t.rows)
        if not t.cells:
            specs.append(ReleaseSpec.cells(m, 1, role))
        elif p.spec.delta > 0:
            specs.append(ReleaseSpec.fraction_split(m, k, max(1, min(k, n_cells)), role))
        else:
            specs.append(ReleaseSpec.split(m, k, max(1, min(k, n_cells)), role))
    return ReleaseSpec.combine(*specs, label=label)


def expected_error(p: Plan) -> dict[str, Any]:
    """E|error| and RMSE of one component per cell, from its exact law at public points."""
    m = p.mechanism
    profile = m.privacy_profile()
    t = p.target
    if profile.range_adherent and profile.shift_invariant and math.isfinite(t.lower) and \
            math.isfinite(t.upper) and profile.snap > 0 and \
            (t.upper - t.lower) / float(profile.snap) > MAX_LAW_CELLS:
        # the exact clamped law is a table over the whole range (10^7+ cells, GBs at 9
        # points): use the unclamped law, an upper bound at every true value in the range
        law = profile.noise_law()
        return {"mean_abs": float(law.mean_abs()),
                "rmse": float(law.std()),
                "at": f"unclamped noise law: an upper bound at every point of [{t.lower:g}, "
                      f"{t.upper:g}] (clamping towards a true value inside the range only "
                      "shrinks the error)"}
    if profile.range_adherent and math.isfinite(t.lower) and math.isfinite(t.upper):
        worst_abs = worst_rmse = 0.0
        for x in np.linspace(t.lower, t.upper, ERROR_POINTS).tolist():
            law = m.noise(x)
            worst_abs = max(worst_abs, float(law.mean_abs(about=x)))
            worst_rmse = max(worst_rmse, math.hypot(float(law.std()), float(law.mean()) - x))
        return {"mean_abs": worst_abs, "rmse": worst_rmse,
                "at": f"worst of {ERROR_POINTS} points of [{t.lower:g}, {t.upper:g}]"}
    law = m.noise()
    mean = float(law.mean())
    return {"mean_abs": float(law.mean_abs()) + abs(mean),
            "rmse": math.hypot(float(law.std()), mean),
            "at": "noise law (any true value; clamping into the range only reduces it)"}


@dataclass(frozen=True)
class ReleasePlan:
    """What ``Session.plan`` returns: the per-release parameters the accountant allows."""

    query: str
    accountant: str
    reserve_for: int
    epsilon: float  # per release: pass it to release(..., epsilon=)
    delta: float
    mechanism: str
    fits: bool
    components: dict[str, dict[str, Any]] = field(default_factory=dict)
    composed_after: dict[str, float] = field(default_factory=dict)  # this + reserve_for more
    basic_epsilon: float | None = None  # what basic composition would allow per release
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        lines = [f"plan:       {self.query} under the {self.accountant} accountant, leaving "
                 f"budget for {self.reserve_for} more like it",
                 f"per release: epsilon={self.epsilon:.6g}" + (f", delta={self.delta:.3g}"
                                                             if self.delta else "")
                 + ("" if self.fits else "  (DOES NOT FIT)"),
                 f"mechanism:  {self.mechanism}"]
        if self.basic_epsilon is not None:
            lines.append(f"basic composition would allow epsilon={self.basic_epsilon:.6g} "
                         "per release")
        for role, c in self.components.items():
            e = c["error"]
            lines.append(f"  {role}: {c['repr']}  " + (
                "(no additive noise law: its error shows in the release's error bars)"
                if e is None else f"E|err| = {e['mean_abs']:.4g}, RMSE = {e['rmse']:.4g} "
                f"per cell ({e['at']})"))
        ca = self.composed_after
        if ca:
            lines.append("composed after all: " + ", ".join(
                f"{k}={v:.6g}" for k, v in ca.items() if v is not None and math.isfinite(v)))
        return "\n".join(lines)


def _largest_epsilon(session: Any, acc: Any, budget: Any, family: Any, n: int, state: Any,
                     reserve_for: int) -> float:
    """The largest per-release epsilon (within a relative 5e-3, rounded toward fitting) such
    that this release and ``reserve_for`` more fit: a safeguarded secant search.

    Each trial builds the release's mechanisms, its charge and the (n-fold) composition, so
    trials are what planning costs.  The composed epsilon (at the total's delta; the
    composed rho for a rho total) grows smoothly with the per-release epsilon, so the root
    of log(composed / total) in log(epsilon) is found by regula falsi (Illinois variant)
    from the basic share, which always fits, usually in 3-5 trials; bisection steps are
    taken when the interpolation stalls or the value is infinite.  Only a trial that FITS
    (``acc.fits``, the ledger's own test) is ever returned.

    Long on purpose: one safeguarded root search whose bracket (``lo``, ``hi``, the Illinois
    ``side``) is updated in three phases that must be read together.
    """
    total = session.ledger.budget
    if total.rho is not None:
        top = math.sqrt(2 * total.rho) * 1.01 + 1e-12
        share = math.sqrt(2 * max(0.0, total.rho - float(state.rho)) / n)
    else:
        top = max(float(total.epsilon), 1e-12)
        share = (float(total.epsilon) - float(state.basic_epsilon)) / n
    if acc.name == "basic":  # additive: the share itself (the session snaps the last ulp)
        if share <= 0:
            raise ParameterError("no epsilon left under the basic accountant")
        return share
    rel_tol = 5e-3

    def trial(eps: float) -> tuple[bool, float]:
        """(fits, log of composed/total) after this release and reserve_for more."""
        after = acc.compose_many(state, acc.charge_for(family(eps)), n)
        if budget.rho is not None:
            ratio = float(after.rho) / budget.rho if budget.rho > 0 else math.inf
        else:
            ratio = acc.epsilon(after, budget.delta) / max(budget.epsilon, 1e-300)
        g = math.log(ratio) if 0 < ratio < math.inf else (math.inf if ratio > 0 else -50.0)
        return bool(acc.fits(after, budget)), g

    def fail(why: str) -> ParameterError:
        return ParameterError(f"no epsilon lets this release and {reserve_for} more like it "
                              f"fit the remaining budget under the {acc.name} accountant "
                              f"({why})")

    try:
        lo = min(share, top) if share > top * 1e-6 else top * 1e-3 / n
        ok, g_lo = trial(lo)
        while not ok:
            lo /= 4
            if lo < top * 1e-7 / n:
                raise fail("even a tiny epsilon does not fit")
            ok, g_lo = trial(lo)
        # extrapolate up from the fitting point until a trial does not fit
        hi, g_hi = lo, g_lo
        for _ in range(8):
            if hi >= top:
                return top
            step = 2.0 if not math.isfinite(g_hi) or g_hi >= -1e-3 else \
                min(4.0, max(1.0 + rel_tol, math.exp(-g_hi) * (1 + rel_tol)))
            cand = min(top, hi * step)
            ok, g = trial(cand)
            if ok:
                lo, g_lo = cand, g
                hi, g_hi = cand, g
                continue
            hi, g_hi = cand, g
            break
        else:
            return lo
        if hi == lo:
            return lo
        side = 0
        while hi / lo - 1 > rel_tol:
            x0, x1 = math.log(lo), math.log(hi)
            if math.isfinite(g_hi) and g_hi > g_lo:
                x = x0 + (0 - g_lo) * (x1 - x0) / (g_hi - g_lo)
                x = min(max(x, x0 + 0.1 * (x1 - x0)), x1 - 0.1 * (x1 - x0)) \
                    if not (x0 < x < x1) else x
            else:
                x = 0.5 * (x0 + x1)
            # aim just below the root so that the fitting side moves close to it
            x = max(x0 + 0.5 * (x1 - x0) * rel_tol, min(x, x1 - (x1 - x0) * 0.01))
            cand = math.exp(x)
            ok, g = trial(cand)
            if ok:
                lo, g_lo = cand, g
                if side == 1:
                    g_hi /= 2  # Illinois: halve the stale end's value
                side = 1
            else:
                hi, g_hi = cand, g
                if side == -1:
                    g_lo /= 2
                side = -1
    except ParameterError as exc:
        if str(exc).startswith("no epsilon lets"):
            raise
        raise fail(str(exc)) from None
    return float(lo)


def plan_release(session: Any, q: Any, *, epsilon: float | None, delta: float | None,
                 mechanism: str | None, reserve_for: int) -> ReleasePlan:
    """See :meth:`dpnoise.session.Session.plan`."""
    from ..accounting import AccountingBudget

    if int(reserve_for) != reserve_for or reserve_for < 0:
        raise ParameterError(f"reserve_for must be an integer >= 0, got {reserve_for!r}")
    n = int(reserve_for) + 1
    ledger = session.ledger
    total = ledger.budget
    acc = ledger.accountant_object()
    state = ledger.state()
    if total.rho is not None:
        budget = AccountingBudget(rho=total.rho * (1 - SHRINK))
    else:
        budget = AccountingBudget(total.epsilon * (1 - SHRINK), total.delta * (1 - SHRINK))
    from .adapter import MECHANISMS

    info = MECHANISMS.get(mechanism) if mechanism else None
    if delta is None:
        needs = info is not None and info.needs_delta
        base = total.delta if total.rho is None else 1e-6
        delta = (base * (1 - SHRINK) / n if total.accountant == "basic" else base / n) \
            if needs else 0.0
    n_cells = session.n_cells(q)

    def family(eps: float) -> Any:
        return release_spec(session.plans(q, eps, delta, mechanism), n_cells, q.canonical())

    notes: tuple[str, ...] = ()
    if epsilon is None:
        epsilon = _largest_epsilon(session, acc, budget, family, n, state, reserve_for)
    elif reserve_for == 0:  # as release() will: a request past the remainder by rounding only
        asked = (float(epsilon), float(delta))
        epsilon, delta = snap_to_remaining(ledger, *asked)
        if (epsilon, delta) != asked:
            notes = (f"snapped to the remaining budget (asked epsilon={asked[0]!r}, "
                     f"delta={asked[1]!r}): release() calibrates and charges the same",)
    plans = session.plans(q, float(epsilon), float(delta), mechanism)
    charge = acc.charge_for(release_spec(plans, n_cells, q.canonical()))
    after = acc.compose_many(state, charge, n)
    strict = ledger.summary_of(after)
    fits = ledger.fits_total(strict)
    basic = None
    if total.rho is None:
        spent_basic = ledger.spent_basic()
        basic = max(0.0, (float(total.epsilon) - spent_basic.epsilon) / n)
    comps = {role: {"repr": f"{p.name}(epsilon={p.epsilon:.6g}"
                    + (f", delta={p.delta:.3g})" if p.delta else ")"), **p.parameters(),
                    "error": expected_error(p) if hasattr(p, "target") else None}
             for role, p in plans}
    return ReleasePlan(q.canonical(), acc.name, int(reserve_for), float(epsilon), float(delta),
                       mechanism_name(plans), fits, comps, strict, basic,
                       notes + tuple(charge.notes))


def snap_to_remaining(ledger: Any, epsilon: float, delta: float) -> tuple[float, float]:
    """Spend the exact remainder when a request exceeds it by binary rounding only.

    Ten releases at epsilon = 0.1 add up (exactly, in binary) to slightly more than
    1.0, so the tenth would be refused.  If a request exceeds what remains by less than
    one part in 10^9, the release is calibrated at -- and charged -- the remainder
    instead: a (negligibly) smaller epsilon, so the guarantee is still honest.  Under
    ``pld``/``zcdp`` the remainder is the total minus the composed guarantee (an indication:
    the reservation still composes the release and refuses it if it does not fit).
    """
    left = ledger.remaining()
    eps = float(epsilon)
    dl = float(delta)
    if left.epsilon is None:  # a rho total: nothing to snap to
        return eps, dl
    if 0 < left.epsilon < eps <= left.epsilon * (1 + 1e-9):
        eps = left.epsilon
    if 0 < left.delta < dl <= left.delta * (1 + 1e-9):
        dl = left.delta
    return eps, dl


def mechanism_name(plans: list[tuple[str, Any]]) -> str:
    """A release's mechanism as recorded: ``role=name, ...`` for several components."""
    return ", ".join(f"{role}={p.name}" for role, p in plans) if len(plans) > 1 \
        else plans[0][1].name
