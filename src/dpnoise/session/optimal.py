"""Partition selection for ONE group per person in the session: the optimal selection.

A ``sum`` or a quantile grouped by a column whose keys are not public first chooses the
groups with its own share of the budget (a count thresholds its own noise instead:
:mod:`dpnoise.session.threshold`).  When every person is in at most one group
(``max_groups = 1``; or ``max_contributions = 1`` without them) that selection is
:class:`~dpnoise.mechanisms.optimal_selection.OptimalSelection` (Desfontaines, Voss, Gipson
and Mandayam, "Differentially private partition selection", PoPETs 2022, Thm. 1): among all
selections that keep a group of ``n`` distinct persons with a probability depending on ``n``
only, it keeps every group most often at the same ``(ε, δ)`` -- in particular at least as
often as the geometric person-count threshold
(:class:`~dpnoise.mechanisms.statistics.PartitionSelection`), which is one of them.  Its
keep-probabilities are dyadic rationals whose ``(ε, δ)`` recursion is checked in exact
rational arithmetic.  With more groups per person, or where its recursion cannot reach 1
(a very small ``ε``; a public fact of the parameters), the geometric threshold is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..mechanisms.base import Guarantee
from ..mechanisms.registry import Request, build


class OptimalSelectionPlan:
    """The ``selection`` role of a release over keys that are not public, one group per
    person: keep a group of ``n`` persons with probability ``p(n)``."""

    name = "optimal-selection"
    charge_cells = 1

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon, self.delta_requested = float(epsilon), float(delta)
        self.mechanism = build("optimal-selection", Request(epsilon=self.epsilon,
                                                            delta=self.delta_requested))
        if not self.mechanism.check_exact():  # pragma: no cover - the recursion's own proof
            raise ParameterError("optimal selection: the exact (epsilon, delta) check failed")
        self.delta_exact = self.delta = float(self.mechanism.delta)
        table = self.mechanism.table
        #: the fewest persons a group needs to be kept with probability >= 1/2
        self.threshold = next(n for n, p in enumerate(table) if 2 * p >= 1)

    @property
    def guarantee(self) -> Guarantee:
        return self.mechanism.guarantee

    def release(self, persons: NDArray[np.int64], rng: Any) -> NDArray[np.bool_]:
        return np.asarray(self.mechanism.release(persons, rng), dtype=bool)

    def suppressed_bound(self, alpha: float) -> int:
        """With probability ``>= 1 − alpha`` a group NOT released has at most this many
        persons: a group of ``n`` persons is dropped with probability ``1 − p(n)``, which is
        ``<= alpha`` for every ``n`` above the bound."""
        table = self.mechanism.table
        first = next(n for n, p in enumerate(table) if 1 - p <= alpha)
        return max(0, first - 1)

    def parameters(self) -> dict[str, Any]:
        return {"mechanism": self.name, "kind": "selection", "epsilon": self.epsilon,
                "delta": self.delta, "delta_exact": self.delta_exact,
                "threshold": self.threshold, "max_groups": 1,
                "steps": len(self.mechanism.table) - 1, "bits": 64}


def person_selection(epsilon: float, delta: float, groups: int) -> Any:
    """The selection of a sum's or a quantile's groups: the optimal one for one group per
    person where its recursion reaches 1, else the geometric person-count threshold."""
    from .stats import SelectionPlan

    if groups == 1 and delta > 0:
        try:
            return OptimalSelectionPlan(epsilon, delta)
        except ParameterError:
            pass  # e.g. too small an epsilon for 65536 steps: public parameters only
    return SelectionPlan(epsilon, delta, groups)
