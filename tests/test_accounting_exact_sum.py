"""Basic composition's part of every accountant is never below the exact sum of the claimed
guarantees (dpnoise.accounting.sums), and ledgers written before it still verify."""

from __future__ import annotations

import math
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpnoise as dp
from dpnoise import Budget, BudgetExceededError
from dpnoise.accounting import AccountingBudget, Charge, ReleaseSpec, State, get_accountant
from dpnoise.accounting.sums import compose_curves, legacy_bound
from dpnoise.accounting.zcdp import rho_of
from dpnoise.exact.rational import float_up
from dpnoise.ledger import verify_ledger
from dpnoise.session import Ledger, Session

DATA = Path(__file__).parent / "data"
KW = dict(query="q", canonical="q", query_key="k", dataset="d", mechanism="m",
          parameters={}, guarantee={})
ACCOUNTANTS = ("basic", "pld", "zcdp")
TENTH = Fraction(0.1)  # the double 0.1 = 0.1000000000000000055511...


@pytest.mark.parametrize("name", ACCOUNTANTS)
def test_ten_tenths_exceed_a_total_of_one_under_every_accountant(name: str) -> None:
    """Ten ε = 0.1 add up exactly to 1 + 5.6e-17: the tenth is refused, nine fit."""
    acc = get_accountant(name)
    charge = acc.charge_for(dp.Laplace(epsilon=0.1, sensitivity=1.0))
    total = AccountingBudget(1.0, 0.0)
    state = acc.empty()
    for _ in range(9):
        state = acc.compose(state, charge)
    assert acc.fits(state, total)
    tenth = acc.compose(state, charge)
    many = acc.compose_many(acc.empty(), charge, 10)
    for s in (tenth, many):
        assert s.sums is not None and s.sums[:2] == (10 * TENTH, 0)
        assert s.basic_epsilon == float_up(10 * TENTH) > 1.0
        assert not acc.fits(s, total) and acc.epsilon(s, 0.0) > 1.0
        assert State.from_bytes(s.to_bytes()).sums == s.sums
    # the ledger agrees: the same nine fit and the tenth is refused, whatever the accountant
    led = Ledger(None, budget=Budget(1.0, 0.0, accountant=name))
    for _ in range(9):
        led.reserve(epsilon=0.1, delta=0.0, accounting=None if name == "basic" else charge,
                    **KW)
    with pytest.raises(BudgetExceededError):
        led.reserve(epsilon=0.1, delta=0.0, accounting=None if name == "basic" else charge,
                    **KW)


def test_a_charge_rounds_its_claimed_sum_up() -> None:
    """k cells and several mechanisms: Σkε exactly, reported as the next double up."""
    m = dp.Laplace(epsilon=0.1, sensitivity=1.0)
    g = dp.Gaussian(epsilon=0.3, delta=1e-7, sensitivity=1.0)
    spec = ReleaseSpec.combine(ReleaseSpec.cells(m, 7), ReleaseSpec.cells(g, 3))
    want_e = 7 * TENTH + 3 * Fraction(g.guarantee.epsilon)
    want_d = 3 * Fraction(g.guarantee.delta)
    for name in ACCOUNTANTS:
        charge = get_accountant(name).charge_for(spec) if name != "zcdp" else \
            get_accountant(name).charge_for(ReleaseSpec.cells(m, 7))
        e, d = (want_e, want_d) if name != "zcdp" else (7 * TENTH, 0)
        assert charge.rounded_up and (charge.basic_epsilon, charge.basic_delta) == \
            (float_up(e), float_up(d))
        assert Charge.from_bytes(charge.to_bytes()).rounded_up


eps_lists = st.lists(st.floats(1e-300, 10.0), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(eps_lists, st.lists(st.floats(0.0, 1e-3), min_size=12, max_size=12),
       st.sampled_from(ACCOUNTANTS), st.integers(0, 1000))
def test_basic_part_is_never_below_the_exact_sum(eps: list[float], deltas: list[float],
                                                 name: str, n: int) -> None:
    """compose and compose_many: the reported basic (ε, δ) is the smallest double >= the
    exact sum of the charges' (ε, δ), so never below it."""
    acc = get_accountant(name)
    state = acc.empty()
    for e, d in zip(eps, deltas[:len(eps)], strict=True):
        state = acc.compose(state, Charge(name, e, d))
    exact_e = sum(map(Fraction, eps), Fraction(0))
    exact_d = min(Fraction(1), sum(map(Fraction, deltas[:len(eps)]), Fraction(0)))
    assert state.sums == (exact_e, exact_d, 0)
    assert Fraction(state.basic_epsilon) >= exact_e and Fraction(state.basic_delta) >= exact_d
    assert state.basic_epsilon == float_up(exact_e)
    many = acc.compose_many(state, Charge(name, eps[0], deltas[0]), n)
    want = exact_e + n * Fraction(eps[0])
    assert Fraction(many.basic_epsilon) >= want and many.basic_epsilon == float_up(want)
    assert Fraction(many.basic_delta) >= min(Fraction(1), exact_d + n * Fraction(deltas[0]))
    if math.isfinite(many.basic_epsilon):
        assert acc.epsilon(many, 1.0) <= many.basic_epsilon


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(1e-3, 50.0), min_size=1, max_size=8), st.sampled_from(("basic", "zcdp")),
       st.integers(2, 30))
def test_claimed_guarantees_of_mechanisms_sum_up(eps: list[float], name: str, n: int) -> None:
    """From the mechanisms: the basic epsilon after composing their charges one by one, and
    after n more of the last, is the smallest double >= the exact sum of their claims."""
    acc = get_accountant(name)
    mechs = [dp.Laplace(epsilon=e, sensitivity=1.0) for e in eps]
    state = acc.empty()
    for m in mechs:
        state = acc.compose(state, acc.charge_for(m))
    claimed = [Fraction(m.guarantee.epsilon) for m in mechs]
    assert state.basic_epsilon == float_up(sum(claimed, Fraction(0)))
    many = acc.compose_many(state, acc.charge_for(mechs[-1]), n)
    assert many.basic_epsilon == float_up(sum(claimed, Fraction(0)) + n * claimed[-1])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 5.0), min_size=1, max_size=6), st.integers(1, 40))
def test_zcdp_rho_is_never_below_the_exact_sum(eps: list[float], n: int) -> None:
    """Σρ of pure ε-DP releases (ρ = ε²/2 each): a charge's ρ, a composed and an n-fold
    state's ρ are the smallest doubles >= the exact sums; a ρ total equal to the float
    sum rounded to nearest (below the exact one) is not met."""
    acc = get_accountant("zcdp")
    mechs = [dp.Laplace(epsilon=e, sensitivity=1.0) for e in eps]
    rhos = [Fraction(rho_of(m)) for m in mechs]
    charge = acc.charge_for(ReleaseSpec.combine(*(ReleaseSpec.cells(m, 3) for m in mechs)))
    assert charge.rho == float_up(3 * sum(rhos))
    state = acc.compose_many(acc.compose(acc.empty(), charge), charge, n)
    want = (n + 1) * Fraction(charge.rho)
    assert state.sums is not None and state.sums[2] == want and state.rho == float_up(want)
    nearest = 0.0
    for _ in range(n + 1):
        nearest += charge.rho
    assert acc.fits(state, AccountingBudget(rho=nearest)) == (Fraction(nearest) >= want)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 50), st.floats(1e-300, 10.0)), min_size=1,
                max_size=20))
def test_legacy_bound_covers_the_old_rounded_to_nearest_sums(terms: list[tuple[int, float]]
                                                             ) -> None:
    """What the code before the exact sums stored (k·ε and running sums rounded to
    nearest) is below its exact sum at times; legacy_bound never is."""
    old = 0.0
    for k, e in terms:
        old += k * e
    exact = sum((k * Fraction(e) for k, e in terms), Fraction(0))
    assert legacy_bound(old, 1) >= exact and legacy_bound(old, len(terms)) >= exact
    assert legacy_bound(old, len(terms)) <= Fraction(old) * (1 + Fraction(1, 1 << 30)) + \
        Fraction(1, 1 << 900)


def test_charges_and_states_written_before_the_exact_sums_compose_as_they_did() -> None:
    """Without the exact sums on both sides: rounded to nearest, as when they were written
    (their hashes are in old ledgers), reported as an upper bound; a current charge joining
    them starts the exact sums from that upper bound."""
    acc = get_accountant("zcdp")
    rho = 0.005000000000000001  # Laplace(0.1)'s rho: seven add up to 0.035 < 7 * rho
    old = Charge.from_bytes(Charge("zcdp", 0.1, 0.0, None, rho, rounded_up=False).to_bytes())
    assert not old.rounded_up and b"sums" not in old.to_bytes()
    state = acc.empty()
    for i in range(10):
        state = acc.compose(state, old)
        if i == 6:
            assert state.rho == 0.035 < 7 * Fraction(rho)
            assert state.reported()[2] > 7 * Fraction(rho)
            assert not acc.fits(state, AccountingBudget(rho=0.035))
    assert state.sums is None and state.basic_epsilon == 0.9999999999999999
    assert b"sums" not in state.to_bytes()
    assert acc.epsilon(state, 0.0) > 1.0 and not acc.fits(state, AccountingBudget(1.0))
    joined = acc.compose(state, acc.charge_for(dp.Laplace(epsilon=0.1, sensitivity=1.0)))
    assert joined.sums is not None
    assert joined.sums[0] >= 11 * TENTH and joined.sums[0] == \
        legacy_bound(0.9999999999999999, 10) + TENTH
    assert joined.sums[2] >= 11 * Fraction(rho)


def test_an_old_zcdp_ledger_verifies_and_refuses_what_it_wrongly_accepted(tmp_path) -> None:
    """tests/data/ledger_zcdp_ten_tenths.sqlite was written by the code before the exact
    sums: ten Laplace(epsilon=0.1) under "zcdp" within a total epsilon of 1, all accepted
    (its float sum was 0.9999999999999999).  Its states still hash to what it recorded, and
    it now refuses any further release."""
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "ledger_zcdp_ten_tenths.sqlite", path)
    assert verify_ledger(path).ok
    acc = get_accountant("zcdp")
    charge = acc.charge_for(dp.Laplace(epsilon=1e-5, sensitivity=1.0))
    with Ledger(path) as led:
        state = led.state()
        assert state.count == 10 and state.sums is None
        assert acc.epsilon(state, 0.0) > 1.0
        with pytest.raises(BudgetExceededError):
            led.reserve(epsilon=1e-5, delta=0.0, accounting=charge, **KW)
    assert verify_ledger(path).ok


@pytest.mark.parametrize("name", ACCOUNTANTS)
def test_a_session_spends_ten_tenths_alike_under_every_accountant(name: str) -> None:
    """Through a Session: the tenth release at epsilon = 0.1 is calibrated at (and charged)
    the remainder under every accountant, so ten fit and the composed total stays <= 1; the
    plan of the tenth says so (it said "does not fit")."""
    data = {"x": np.arange(10.0)}
    schema = {"columns": {"x": {"lower": 0, "upper": 10}}}
    with Session(data, Budget(1.0, 0.0, accountant=name), schema=schema) as s:
        got = [s.release(f"count where x > {i}", epsilon=0.1) for i in range(9)]
        plan = s.plan("count where x > 9", epsilon=0.1)  # says what release() will do
        assert plan.fits and plan.epsilon < 0.1 and "snapped" in plan.notes[0]
        got.append(s.release("count where x > 9", epsilon=0.1))
        assert got[-1].epsilon == plan.epsilon and all(r.epsilon == 0.1 for r in got[:-1])
        state = s.ledger.state()
        assert state.sums is not None and state.sums[0] <= 1
        assert get_accountant(name).fits(state, AccountingBudget(1.0, 0.0))
        with pytest.raises(BudgetExceededError):
            s.release("count", epsilon=0.01)


_CURVE = st.lists(st.floats(0, 1e6, allow_subnormal=True), min_size=3, max_size=3)


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.tuples(_CURVE, st.integers(0, 1000)), min_size=1, max_size=12))
def test_composed_renyi_curves_are_never_below_their_exact_sum(
        steps: list[tuple[list[float], int]]) -> None:
    """A chain of compositions of Rényi curves (n copies of a curve at a time) stays at or
    above the exact sum, entry by entry; the legacy arithmetic is the plain float sum."""
    total, exact = np.zeros(3), [Fraction(0)] * 3
    for curve, n in steps:
        new = np.array(curve)
        assert np.array_equal(compose_curves(total, new, n, legacy=True), total + n * new)
        total = compose_curves(total, new, n, legacy=False)
        exact = [e + n * Fraction(c) for e, c in zip(exact, curve, strict=True)]
        assert all(Fraction(t) >= e for t, e in zip(total.tolist(), exact, strict=True))


def test_a_thousand_releases_curves_are_at_least_their_exact_sum() -> None:
    """A thousand Laplace(0.1) releases composed one at a time: the state's Rényi curve is
    at or above 1000 times one release's curve, exactly (a float sum drifts below it)."""
    acc = get_accountant("zcdp")  # the "pld" accountant composes its curves the same way
    charge = acc.charge_for(dp.Laplace(epsilon=0.1, sensitivity=1.0))
    assert charge.rdp is not None
    state = acc.empty()
    for _ in range(1000):
        state = acc.compose(state, charge)
    assert state.rdp is not None
    assert all(Fraction(t) >= 1000 * Fraction(c)
               for t, c in zip(state.rdp, charge.rdp, strict=True))
    many = acc.compose_many(acc.empty(), charge, 1000)
    assert all(Fraction(t) >= 1000 * Fraction(c) for t, c in zip(many.rdp, charge.rdp,
                                                                   strict=True))
