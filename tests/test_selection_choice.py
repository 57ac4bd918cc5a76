"""The session's partition selection for a sum or a quantile over keys that are not public:
the optimal selection for one group per person (it keeps every group at least as often as
the geometric person-count threshold at the same budget), the geometric one otherwise."""

from __future__ import annotations

import numpy as np

from dpnoise import Budget, SeededRandom, Session
from dpnoise.session.optimal import OptimalSelectionPlan, person_selection
from dpnoise.session.stats import SelectionPlan


def _schema(groups: int) -> dict:
    return {"dataset": {"user_id": "pid", "max_groups": groups, "max_rows_per_group": 1,
                        "max_rows": 10**6},
            "columns": {"city": {"text": True}, "x": {"lower": 0, "upper": 10}}}


def _data(sizes: list[int]) -> dict[str, np.ndarray]:
    city = np.repeat([f"c{i}" for i in range(len(sizes))], sizes)
    return {"pid": np.arange(city.size).astype(str), "city": city,
            "x": np.full(city.size, 5.0)}


def test_optimal_selection_keeps_every_group_at_least_as_often() -> None:
    for eps, delta in ((0.5, 1e-6), (0.05, 1e-8), (2.0, 1e-4)):
        opt, geo = OptimalSelectionPlan(eps, delta), SelectionPlan(eps, delta, 1)
        assert opt.mechanism.check_exact() and opt.delta <= delta
        for n in range(1, 3 * geo.threshold):
            assert opt.mechanism.keep_probability(n) >= geo.mechanism.keep_probability(n)
        assert opt.threshold <= geo.threshold
        assert opt.suppressed_bound(0.05) <= geo.suppressed_bound(0.05)


def test_the_session_uses_it_for_one_group_per_person_only() -> None:
    assert isinstance(person_selection(0.5, 1e-6, 1), OptimalSelectionPlan)
    assert isinstance(person_selection(0.5, 1e-6, 2), SelectionPlan)
    assert isinstance(person_selection(1e-5, 1e-6, 1), SelectionPlan)  # recursion too long
    sizes = [40] * 20 + [1] * 20
    with Session(_data(sizes), Budget(10, 1e-5), schema=_schema(1),
                 rng=SeededRandom(1)) as s:
        assert dict(s.plans("sum x by city", 1.0, 1e-6))["selection"].name == \
            "optimal-selection"
        r = s.release("sum x by city", epsilon=1.0, delta=1e-6)
        assert r.details["selection"]["on"] == "persons"
        shown = set(r.group_keys[0])
        assert len(shown & {f"c{i}" for i in range(20)}) >= 18 and len(shown) <= 21
        r = s.release("median x by city", epsilon=1.0, delta=1e-6)
        assert len(r.values) == len(r.group_keys[0])
    with Session(_data(sizes), Budget(10, 1e-5), schema=_schema(2)) as s:
        assert dict(s.plans("sum x by city", 1.0, 1e-6))["selection"].name == \
            "partition-selection"
