"""Groups over keys that are not public: the count thresholded on its own noise
(ThresholdedCount, the session's thresholded plans) and the optimal selection for one group
per person (OptimalSelection).

* privacy: delta from the SAMPLED law (the verifier on the exact laws of neighbouring count
  vectors) within the claim, and the threshold the smallest that meets the asked delta;
* the optimal selection's (epsilon, delta) recursion holds in exact rational arithmetic;
* the custodian path: one mechanism, the whole (epsilon, delta), unconditional coverage of
  the released cells' error bars, and the 25-person target.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpnoise import Budget, ParameterError, SeededRandom, Session
from dpnoise.mechanisms.optimal_selection import OptimalSelection, exp_below
from dpnoise.mechanisms.statistics import geometric_tail
from dpnoise.mechanisms.thresholded import SUPPRESSED, NewGroupRelease, ThresholdedCount
from dpnoise.session.intervals import component_interval
from dpnoise.verify import verify


@settings(max_examples=12, deadline=None)
@given(eps=st.sampled_from([0.5, 1.0, 2.0]), delta=st.sampled_from([1e-3, 1e-5]),
       groups=st.integers(1, 2), rows=st.integers(1, 2))
def test_thresholded_count_delta_from_the_sampled_law(eps: float, delta: float, groups: int,
                                                      rows: int) -> None:
    # the verifier's exact model grows fast as the noise widens: the widest cases (small
    # epsilon with several groups and rows, ~10-50 s each) are left out of the quick suite
    assume(groups * rows <= 2 * eps)
    m = ThresholdedCount(epsilon=eps, delta=delta, groups=groups, rows=rows)
    assert delta * (1 - 1e-6) <= m.delta <= delta  # the boundary coin uses all of delta
    # the smallest threshold: one lower would exceed the asked delta
    assert groups * geometric_tail(m.s, m.t, m.threshold - rows - 1) > delta
    report = verify(m.privacy_model(), epsilons=[eps])
    assert report.delta_at(eps) <= m.delta * (1 + 1e-9)
    # and the delta is not far looser than the truth (a group of R rows alone)
    single = ThresholdedCount(epsilon=eps, delta=delta, groups=1, rows=rows)
    one = verify(single.privacy_model(), epsilons=[eps]).delta_at(eps)
    assert one >= single.delta / 2


def test_thresholded_count_release_and_refusals() -> None:
    m = ThresholdedCount(epsilon=1.0, delta=1e-6)
    y = m.release(np.array([0, 1, 1000]), rng=SeededRandom(1))
    assert y[0] == SUPPRESSED and y[1] == SUPPRESSED and abs(y[2] - 1000) < 30
    assert m.in_output_set(y).all()
    for bad in ({"groups": 0}, {"rows": 1.5}, {"l1": 5}):
        with pytest.raises(ParameterError):
            ThresholdedCount(epsilon=1.0, delta=1e-6, **bad)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-6), (0.1, 1e-9), (3.0, 1e-3), (0.5, 2e-10)])
def test_optimal_selection_recursion_is_exact(eps: float, delta: float) -> None:
    m = OptimalSelection(epsilon=eps, delta=delta)
    assert m.check_exact()
    E = exp_below(eps)
    with mpmath.workdps(80):
        assert mpmath.mpf(E.numerator) / E.denominator < mpmath.exp(mpmath.mpf(eps))
    assert all(k < 2**64 or k == 2**64 for k in m.numerators)
    # the verifier's float sums over probabilities near 1/2 carry ~1e-16 absolute error
    report = verify(m.privacy_model(), epsilons=[eps])
    assert report.delta_at(eps) <= delta * (1 + 1e-9) + 1e-15
    # independently, every neighbour pair's hockey stick in 80-digit arithmetic with e^eps
    with mpmath.workdps(80):
        e, d = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(delta)
        p = [mpmath.mpf(x.numerator) / x.denominator for x in m.table]
        for a, b in itertools.pairwise(p):
            assert max(b - e * a, (1 - a) - e * (1 - b)) <= d
    # optimal: it keeps small groups more often than the thresholded count at the same budget
    t = ThresholdedCount(epsilon=eps, delta=delta)
    n = t.threshold
    assert m.keep_probability(n) >= t.keep_probability(n)


def test_a_broken_table_fails_the_exact_check() -> None:
    m = OptimalSelection(epsilon=1.0, delta=1e-6)
    table = list(m.table)
    object.__setattr__(m, "table", [table[0], table[1] * 3, *table[2:]])
    assert not m.check_exact()


SCHEMA = {"dataset": {"user_id": "pid", "max_groups": 1, "max_rows_per_group": 1,
                      "max_rows": 10**6},
          "columns": {"city": {"text": True}}}


def _one_row_each(sizes: list[int]) -> dict[str, np.ndarray]:
    city = np.repeat([f"c{i}" for i in range(len(sizes))], sizes)
    return {"pid": np.arange(city.size).astype(str), "city": city}


def test_the_whole_budget_goes_to_one_thresholded_count() -> None:
    with Session(_one_row_each([30]), Budget(1, 1e-6), schema=SCHEMA) as s:
        roles = dict(s.plans("count by city", 1.0, 1e-6))
        assert sorted(roles) == ["count", "selection"]
        assert roles["count"].epsilon == 1.0 and roles["count"].delta == 0.0
        sel = roles["selection"]
        assert sel.epsilon == 0.0 and sel.delta_exact <= 1e-6
        assert (sel.s, sel.t) == (roles["count"].mechanism.s, roles["count"].mechanism.t)
        with pytest.raises(ParameterError, match="delta > 0"):
            s.plans("count by city", 1.0)


@settings(max_examples=6, deadline=None)
@given(eps=st.sampled_from([0.5, 1.0, 2.0]), delta=st.sampled_from([1e-6, 1e-7, 3e-6]),
       groups=st.integers(1, 8), rows=st.integers(1, 3))
def test_the_charged_delta_is_never_above_the_asked_one(eps: float, delta: float,
                                                          groups: int, rows: int) -> None:
    """The rule's delta and the charged mechanism's stated delta are one number, at most
    the asked delta (a one-ulp excess once made a release of the exact remaining budget
    fail the ledger's strict check under the pld accountant)."""
    m = ThresholdedCount(epsilon=eps, delta=delta, groups=groups, rows=rows)
    assert m.delta <= delta
    assert NewGroupRelease(rule=m.rule, groups=groups, rows=rows).delta == m.delta


@pytest.mark.parametrize("accountant", ["basic", "pld"])
def test_a_thresholded_count_may_spend_exactly_what_remains(accountant: str) -> None:
    with Session(_one_row_each([30, 2]), Budget(1, 1e-6, accountant=accountant),
                 schema=SCHEMA, rng=SeededRandom(1)) as s:
        s.release("count by city", epsilon=1.0, delta=1e-6)
        assert s.ledger.remaining().epsilon <= 1e-9


def test_a_release_over_keys_that_are_not_public_is_replayed_with_its_groups(
        tmp_path: Path) -> None:
    ledger = str(tmp_path / "l.db")
    data = _one_row_each([30, 40, 1])
    with Session(data, Budget(3, 1e-5), ledger=ledger, create_ledger=True, schema=SCHEMA,
                 replay=True) as s:
        first = s.release("count by city", epsilon=1.0, delta=1e-6)
        left = s.ledger.remaining()
    with Session(data, Budget(3, 1e-5), ledger=ledger, schema=SCHEMA, replay=True) as s:
        again = s.release("count by city", epsilon=1.0, delta=1e-6)
        assert again.replayed and s.ledger.remaining() == left  # nothing spent twice
        assert again.group_keys == first.group_keys and again.group_by == ("city",)
        np.testing.assert_array_equal(again.values, first.values)


def test_a_released_key_cannot_break_the_printed_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A key read from the data with a line break (or NUL) was printed as is, by the release
    and by ``dpnoise ledger --show``: the text table got extra lines, and a key like
    "x\\n north 999" could forge a row."""
    from dpnoise.cli import main

    keys = ["a\n north  999  0  2000", "n\x00ul", "plain"]
    city = np.repeat(keys, 40)
    ledger = str(tmp_path / "l.db")
    with Session({"pid": np.arange(city.size).astype(str), "city": city},
                 Budget(10, 1e-5), ledger=ledger, create_ledger=True, schema=SCHEMA) as s:
        r = s.release("count\nby city", epsilon=1.0, delta=1e-6)  # a line break: query too
    assert sorted(r.group_keys[0]) == sorted(keys)  # the keys themselves are kept
    lines = r.table().splitlines()
    assert len(lines) == 1 + 3 + 2  # header, three cells, the note and the rules
    capsys.readouterr()
    assert main(["ledger", ledger, "--show", "1"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert main(["ledger", ledger]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert not any(x.startswith("by city") for x in shown + listing)
    for out in (lines, shown):  # no line starts inside a key; each key on its own line
        assert not any(x.lstrip().startswith("north") for x in out), out
        assert sum("a\\n north" in x for x in out) == sum("n\\x00ul" in x for x in out) == 1


def test_groups_of_25_persons_appear_in_90_percent_of_releases() -> None:
    sizes = [25] * 40 + [1] * 40
    with Session(_one_row_each(sizes), Budget(10, 1e-5), schema=SCHEMA,
                 rng=SeededRandom(3)) as s:
        r = s.release("count by city", epsilon=1.0, delta=1e-6)
    shown = set(r.group_keys[0])
    big = {f"c{i}" for i in range(40)}
    assert len(shown & big) / len(big) >= 0.9
    assert not shown - big  # a one-person group would need noise >= 14: P ~ 1e-6


def test_released_cells_have_unconditional_coverage() -> None:
    """P(cell released AND its interval misses the truth) <= 1 - confidence, per cell,
    over groups near the threshold (where conditioning would matter)."""
    conf = 0.9
    sizes = list(range(8, 26)) * 30
    truth = dict(zip([f"c{i}" for i in range(len(sizes))], sizes, strict=True))
    with Session(_one_row_each(sizes), Budget(10, 1e-5), schema=SCHEMA,
                 rng=SeededRandom(5)) as s:
        r = s.release("count by city", epsilon=1.0, delta=1e-6)
        plan = dict(s.plans("count by city", 1.0, 1e-6))["count"]
    lo, hi = component_interval(plan, np.asarray(r.values), 1 - conf)
    t = np.array([truth[k] for k in r.group_keys[0]])
    missed = int(np.sum((t < lo) | (t > hi)))
    assert missed / len(sizes) <= (1 - conf) + 0.03
    assert "unconditional" in r.interval_note()
