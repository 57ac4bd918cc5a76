"""Statistics over keys that are not public, with groups chosen by thresholding the released
count's own noise (no separate selection count).

A query with a count component (``count``, ``mean``, ``variance``, ``stddev``) grouped by a
column whose keys are not public is released as: every component calibrated pure at its
share of the WHOLE epsilon, the count's noise the exact two-sided geometric law
(:class:`~dpnoise.mechanisms.geometric.Geometric`, ``sampler="cks"``, decay ``a = s/t``);
then a group is released, with every component, iff its noisy count is ``>= τ`` (or ``τ − 1``
and a dyadic coin: :class:`~dpnoise.mechanisms.thresholded.KeepRule`).  The
sensitivity argument is :class:`~dpnoise.mechanisms.thresholded.ThresholdedCount`'s: on the
groups present in both neighbours the components are pure-ε (composed over the roles and the
person's split of rows, as every grouped release is charged), and the groups that exist only
because of the person -- at most ``G`` (``max_groups``), each with at most ``R`` rows
(``max_rows_per_group``; else ``max_contributions``) -- are released only inside the event
"some of their noisy counts cleared ``τ``", of probability ``<= δ = G·P(Z >= τ − R)``, computed
for the sampled law in 50-digit arithmetic (:func:`~dpnoise.mechanisms.thresholded.
rule_for`).  The sums released in such a group are released only inside that event, so
they add nothing: the selection is reused soundly by every component of the same release.
(A ``sum`` has no count to threshold and a quantile's rank needs the kept set before its
noise, so they keep the separate person-count selection of :class:`~dpnoise.session.stats.
SelectionPlan`.)

Error bars: each released cell's interval is the count law's unconditional one, ``P(cell
released AND its interval misses the truth) <= α``; conditioned on having been released a
group near ``τ`` is biased upward and its coverage can be lower (stated in the release note).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..mechanisms.base import Guarantee
from ..mechanisms.geometric import Geometric
from ..mechanisms.statistics import tail_index
from ..mechanisms.thresholded import NewGroupRelease, rule_for
from .adapter import Plan, Spec, Target, plan

#: statistics whose groups are chosen by thresholding their noisy count
THRESHOLDED_STATS = ("count", "mean", "variance", "stddev", "distinct")


class ThresholdPlan:
    """The ``(0, δ)`` part of a thresholded release: its charge (a
    :class:`~dpnoise.mechanisms.thresholded.NewGroupRelease`) and the keep rule."""

    name = "thresholded-count"
    on_count = True  # the keep decision is made on the released count
    charge_cells = 1
    target = None

    def __init__(self, count: Plan, delta: float, groups: int, rows: int) -> None:
        mech = count.mechanism
        self.s, self.t = int(mech.s), int(mech.t)
        self.groups, self.rows = int(groups), int(rows)
        self.delta_requested = float(delta)
        self.rule, self.delta_exact = rule_for(self.s, self.t, self.delta_requested,
                                               self.groups, self.rows)
        self.threshold = self.rule.threshold
        self.mechanism = NewGroupRelease(rule=self.rule, groups=self.groups, rows=self.rows)
        self.epsilon = 0.0
        self.delta = self.delta_exact
        self.spec = Spec(0.0, self.delta_exact, float(self.rows), 0.0, math.inf, True)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=0.0, delta=self.delta_exact, notion="approximate",
                         note=f"groups kept iff noisy count >= {self.threshold}")

    def keep(self, noisy_count: NDArray[Any], rng: Any) -> NDArray[np.bool_]:
        """The groups released: noisy count ``>= τ``, or ``= τ − 1`` and the boundary coin."""
        return self.rule.keep(np.asarray(noisy_count), rng)

    def suppressed_bound(self, alpha: float) -> int:
        """With probability ``>= 1 - alpha`` a group NOT released has a true count of at most
        this: not released means ``u + Z <= τ − 1``, and ``P(Z <= −m) <= alpha``."""
        m = max(1, tail_index(self.s, self.t, alpha))
        return self.threshold - 1 + (m - 1)

    def parameters(self) -> dict[str, Any]:
        return {"mechanism": self.name, "kind": "selection", "epsilon": 0.0,
                "delta": self.delta, "delta_exact": self.delta_exact,
                "threshold": self.threshold, "max_groups": self.groups,
                "rows_per_group": self.rows, "decay": [self.s, self.t],
                "boundary": [self.rule.boundary, 64],
                "on": "count"}


def count_plan(target: Target, epsilon: float) -> Plan:
    """The count component: exact two-sided geometric noise of decay ``<= ε/L1`` per cell
    (the same calibration as :func:`~dpnoise.session.adapter.plan`'s pure cells), with the
    exact CKS sampler so the threshold's tail is the sampled law's."""
    k = int(target.rows)
    upper = None if not math.isfinite(target.upper) else int(target.upper)
    mech = Geometric(epsilon=epsilon / k, sensitivity=1, lower=0, upper=upper, sampler="cks")
    spec = Spec(epsilon / k, 0.0, target.unit, target.lower, target.upper, True, True)
    return Plan(target, "geometric", mech, epsilon, 0.0, spec)


def thresholded_plans(targets: list[tuple[str, Target]], epsilon: float, delta: float,
                      mechanism: str | None, exact: bool, rows: int, groups: int
                      ) -> list[tuple[str, Any]]:
    """The plans of a thresholded release at total ``(epsilon, delta)``: the components at
    equal shares of epsilon (pure), then the ``selection`` role (all of delta)."""
    share = len(targets)
    out: list[tuple[str, Any]] = []
    for role, t in targets:
        if role == "count":
            out.append((role, count_plan(t, epsilon / share)))
        else:
            out.append((role, plan(t, epsilon=epsilon / share, delta=0.0, mechanism=mechanism,
                                   exact_sampler=exact)))
    out.append(("selection", ThresholdPlan(dict(out)["count"], delta, groups, rows)))
    return out


def select_on_count(plans: list[tuple[str, Any]], truth: dict[str, NDArray[Any]], rng: Any
                    ) -> tuple[NDArray[np.bool_], dict[str, NDArray[Any]],
                               dict[str, NDArray[Any]]]:
    """Release the count of every group present, keep those at or above ``τ``: the keep
    mask, the truth of the kept groups and the released count of the kept groups."""
    pl = dict(plans)
    noisy_count = pl["count"].release(truth["count"], rng)
    keep = pl["selection"].keep(noisy_count, rng)
    kept = {r: np.asarray(v)[keep] for r, v in truth.items()}
    return keep, kept, {"count": np.asarray(noisy_count)[keep]}
