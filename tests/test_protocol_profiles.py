"""A mechanism must not vouch for itself: every registry mechanism's privacy profile (its
dominating PLD, its Rényi curve, its ρ) is checked against the verifier's independent
computation from the pmf it samples (``dpnoise.verify``, ``dpnoise.verify_renyi``), and the
test fails if a profile is ever below it.  Plus the refusals the profile drives: a release
that is not DP under every accountant, finite-support laws (the discrete Gaussian's alias
table among them) under zCDP.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpnoise as dp
from dpnoise.accounting import get_accountant, mechanism_pld
from dpnoise.mechanisms.registry import Request, build, entries
from dpnoise.verify import AdditiveLattice, verify
from dpnoise.verify_renyi import renyi_divergence

from .registry import CASES

EPSILONS = [0.0, 0.05, 0.25, 0.5, 1.0, 2.0, 4.0]
ALPHAS = np.array([1.25, 1.5, 2.0, 4.0, 8.0, 32.0])

#: one request per registry entry (every kind): the registry-wide sweep
REGISTRY_REQUESTS = {
    "laplace": Request(epsilon=1.0),
    "clamped-laplace": Request(epsilon=0.5, lower=0.0, upper=20.0),
    "range-laplace": Request(epsilon=1.0, lower=0.0, upper=4.0, grid=2.0**-5),
    "truncated-laplace": Request(epsilon=1.0, delta=1e-4),
    "gaussian": Request(epsilon=0.5, delta=1e-5),
    "analytic-gaussian": Request(epsilon=1.0, delta=1e-6),
    "count-noise": Request(epsilon=2.18, options={"D": 6, "eta": 0.8}),
    "geometric": Request(epsilon=1.0, sensitivity=2),
    "discrete-gaussian": Request(epsilon=1.0, delta=1e-6),
    "staircase": Request(epsilon=1.0, grid=2.0**-6),
    "noisy-max-quantile": Request(epsilon=1.0, sensitivity=2, options={"candidates": 3}),
    "partition-selection": Request(epsilon=1.0, delta=1e-4, options={"groups": 2}),
    # epsilon 2: the noise for L1 sensitivity G·R = 4 stays narrow enough for the verifier's
    # joint model of both groups' count vectors (~3x faster than at epsilon 1)
    "thresholded-count": Request(epsilon=2.0, delta=1e-4, options={"groups": 2, "rows": 2}),
    "optimal-selection": Request(epsilon=1.0, delta=1e-6),
    "gaussian-threshold": Request(epsilon=1.0, delta=1e-4, options={"groups": 2, "rows": 1}),
    "distinct-persons": Request(epsilon=2.0, delta=1e-4, options={"groups": 1}),
    "interval-quantile": Request(epsilon=1.0, lower=0.0, upper=8.0, grid=1.0,
                                 options={"level": 0.25}),
    "multi-quantile": Request(epsilon=1.0, lower=0.0, upper=8.0, grid=1.0,
                              options={"levels": (0.1, 0.5, 0.9)}),
    "private-bounds": Request(epsilon=1.0, options={"min_exponent": -1, "max_exponent": 2,
                                                "lower_level": 0.25, "upper_level": 0.75}),
}
NOT_DP = {"range-laplace-paper-unsafe": Request(epsilon=1.0)}


def _from_registry(name: str):
    return lambda: build(name, REGISTRY_REQUESTS[name])


def test_every_registry_entry_is_swept() -> None:
    assert set(REGISTRY_REQUESTS) | set(NOT_DP) == set(entries(None))
    assert set(entries("statistic")) == {"noisy-max-quantile", "partition-selection",
                                         "thresholded-count", "optimal-selection",
                                         "gaussian-threshold",
                                         "interval-quantile", "multi-quantile",
                                         "private-bounds", "distinct-persons"}
    assert not set(entries()) & set(entries("statistic"))  # release/compare/audit skip them


PROFILED = [(c.id, c.build) for c in CASES] + [
    (f"registry-{n}", _from_registry(n)) for n in REGISTRY_REQUESTS] + [
    ("discrete-gaussian-cks", lambda: dp.DiscreteGaussian(epsilon=1.0, sigma2=9.0,
                                                          upper=None, sampler="cks")),
    ("discrete-gaussian-table-issue", lambda: dp.DiscreteGaussian(epsilon=1.0, sigma2=25.0,
                                                                  upper=None)),
    ("geometric-group", lambda: dp.Geometric(epsilon=0.3, sensitivity=3, upper=None)),
    ("geometric-first-steps", lambda: dp.Geometric(epsilon=3.0, upper=None,
                                                   sampler="first-steps")),
    ("geometric-first-steps-sens2", lambda: dp.Geometric(epsilon=1.0, sensitivity=2,
                                                         upper=None, sampler="first-steps")),
]


def _tail_allowance(model, e: float, loss: float) -> float:
    """What the verifier ADDS for an additive lattice beyond its window: the mass of the
    window's edges times (1 − e^(e − loss)) (an upper bound of the outside's hockey stick).
    Taking it off leaves the exact hockey-stick sum over the window, a lower bound on δ(e)
    of the whole law -- what a dominating PLD must not be below."""
    if not isinstance(model, AdditiveLattice):
        return 0.0
    S = int(model.max_shift)
    W = model.window or (3 * (model.period or 0) + 2 * S + 16)
    lp = np.asarray(model.logpmf(np.arange(-W, W + 1)), dtype=np.float64)
    tail = float(np.exp(lp[: 2 * S]).sum() + np.exp(lp[-2 * S:]).sum())
    return tail * -math.expm1(min(0.0, e - loss)) if math.isfinite(loss) else tail


@pytest.mark.parametrize("name,builder", PROFILED, ids=[n for n, _ in PROFILED])
def test_profile_pld_is_never_below_the_verifier(name: str, builder) -> None:
    m = builder()
    profile = m.privacy_profile()
    assert profile.dp
    pld = mechanism_pld(m).pld
    model = m.privacy_model()
    report = verify(model, epsilons=EPSILONS)
    for e in EPSILONS:
        truth = report.delta_at(e) - _tail_allowance(model, e, report.epsilon)
        assert pld.delta(e) >= truth * (1 - 1e-9) - 1e-15, (name, e, pld.delta(e), truth)
    # and the profile's claim of (epsilon, delta) is the mechanism's guarantee
    g = m.guarantee
    assert (profile.epsilon, profile.delta) == (g.epsilon, g.delta)


@pytest.mark.parametrize("name,builder", PROFILED, ids=[n for n, _ in PROFILED])
def test_profile_renyi_curve_and_rho_are_never_below_the_verifier(name: str,
                                                                  builder) -> None:
    m = builder()
    profile = m.privacy_profile()
    if profile.renyi is None:  # no curve claimed: refused under zCDP, nothing to check
        assert profile.rho is None and profile.not_zcdp
        with pytest.raises(dp.ParameterError):
            get_accountant("zcdp").charge_for(m)
        return
    truth = renyi_divergence(m, ALPHAS)
    curve = np.asarray(profile.renyi(ALPHAS, 1))
    assert np.all(curve >= truth * (1 - 1e-9)), (name, curve, truth)
    if profile.rho is not None:
        assert np.all(ALPHAS * profile.rho >= truth * (1 - 1e-9)), (name, profile.rho, truth)


def test_finite_support_laws_have_infinite_renyi_divergence_so_no_curve() -> None:
    """The verifier finds D_α = ∞ for every finite table; their profiles say "none"."""
    for m in (dp.DiscreteGaussian(epsilon=1.0, sigma2=25.0, upper=None),
              dp.AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0),
              dp.TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0),
              dp.CountNoise(epsilon=2.18, D=6, eta=0.8)):
        assert np.all(np.isinf(renyi_divergence(m, ALPHAS))), m
        p = m.privacy_profile()
        assert p.renyi is None and p.rho is None and "finite-support" in p.not_zcdp


def test_the_issue_example_the_table_is_refused_and_the_exact_sampler_charged() -> None:
    """DiscreteGaussian(epsilon=1, sigma2=25): K = 45, P(Z = -45) ~ 2.2e-19, so its delta is
    >= 2.2e-19 at every epsilon -- no rho budget may be accepted over it."""
    table = dp.DiscreteGaussian(epsilon=1.0, sigma2=25.0, upper=None)
    assert table.sampler == "table" and table.table.K == 45
    assert table.table.probs[0] > 1e-19
    assert verify(table, epsilons=[50.0]).delta_at(50.0) >= table.table.probs[0] * 0.99
    with pytest.raises(dp.ParameterError, match="finite-support"):
        get_accountant("zcdp").charge_for(table)
    exact = dp.DiscreteGaussian(epsilon=1.0, sigma2=25.0, upper=None, sampler="cks")
    charge = get_accountant("zcdp").charge_for(exact)
    assert charge.rho == pytest.approx(1 / 50)


def test_not_dp_is_refused_by_every_accountant() -> None:
    unsafe = build("range-laplace-paper-unsafe", NOT_DP["range-laplace-paper-unsafe"])
    p = unsafe.privacy_profile()
    assert not p.dp and p.rho is None and p.renyi is None
    for name in ("basic", "pld", "zcdp"):
        with pytest.raises(dp.ParameterError, match="NOT differentially private"):
            get_accountant(name).charge_for(unsafe)


def test_group_shifts_of_the_profile_dominate_the_verifier() -> None:
    """pairs(d·S): a person moving the answer by d sensitivities (the group-privacy
    charge of a GROUP BY) -- checked against the verifier of the d-fold shift."""
    m = dp.Geometric(epsilon=0.4, upper=None, sampler="cks")
    for d in (2, 3):
        pld = mechanism_pld(m, shift=d).pld
        model = m.privacy_model()
        shifted = AdditiveLattice(model.logpmf, d * model.max_shift, model.period)
        rep = verify(shifted, epsilons=EPSILONS)
        for e in EPSILONS:
            truth = rep.delta_at(e) - _tail_allowance(shifted, e, rep.epsilon)
            assert pld.delta(e) >= truth * (1 - 1e-9) - 1e-15
        curve = m.privacy_profile().renyi(ALPHAS, d)
        assert np.all(curve >= renyi_divergence(shifted, ALPHAS) * (1 - 1e-9))
        assert math.isclose(float(curve[-1]), float(m.privacy_profile().renyi(ALPHAS[-1:], d)[0]))


def test_statistics_release_like_the_session_and_their_laws_sum_to_one() -> None:
    """The registry statistics: report noisy max picks the first maximum of u + Z, the exact
    law of its index sums to 1 and favours the best candidate; partition selection keeps a
    group with the exact probability its noise law gives."""
    q = build("noisy-max-quantile", REGISTRY_REQUESTS["noisy-max-quantile"])
    law = q.noise((0, -2, -8))
    assert math.isclose(math.fsum(law.probs.tolist()), 1.0, rel_tol=1e-12)
    assert law.probs[0] > law.probs[1] > law.probs[2]
    picks = q.release(np.tile([0, -2, -8], (4000, 1)), rng=dp.SeededRandom(3))
    assert abs(np.mean(picks == 0) - law.probs[0]) < 0.03
    sel = build("partition-selection", REGISTRY_REQUESTS["partition-selection"])
    assert sel.guarantee.delta <= 1e-4
    assert sel.keep_probability(1) * sel.groups <= sel.guarantee.delta * (1 + 1e-12)
    kept = sel.release(np.full(4000, sel.threshold), rng=dp.SeededRandom(4))
    assert abs(np.mean(kept) - sel.keep_probability(sel.threshold)) < 0.03


# ------------------------------------------------------------------ old zCDP ledgers
def _old_table_ledger(path):
    """A zCDP ledger as written before the table was refused: two releases charged
    rho = 1/(2 sigma2) for the session's discrete Gaussian with its alias table (the recorded
    plan says so), one for a Laplace."""
    from dpnoise.accounting import Charge
    from dpnoise.accounting.renyi import ALPHAS
    from dpnoise.session import Ledger
    from dpnoise.session.adapter import Target, plan

    led = Ledger(path, budget=dp.Budget(10.0, 1e-6, accountant="zcdp"), create=True)
    old = plan(Target("count", 1.0, 1, False, 0.0, math.inf), epsilon=1.0, delta=1e-6,
               mechanism="discrete-gaussian")
    table = old.mechanism
    assert table.sampler == "table"
    rho = 1 / (2 * float(table.sigma2))
    for i in range(2):
        plans = {"count": old.parameters()}
        rid = led.reserve(epsilon=1.0, delta=table.delta, query=f"q{i}", canonical=f"q{i}",
                          query_key=f"k{i}", dataset="d", mechanism="discrete-gaussian",
                          parameters={"plans": plans}, guarantee={},
                          accounting=Charge("zcdp", 1.0, table.delta, None, rho, (),
                                            tuple((ALPHAS * rho).tolist())))
        led.complete(rid, np.array([3, 4, 5]))
    lap = dp.Laplace(epsilon=0.1, sensitivity=1.0)
    led.reserve(epsilon=0.1, delta=0.0, query="s", canonical="s", query_key="s", dataset="d",
                mechanism="laplace", parameters={}, guarantee={},
                accounting=get_accountant("zcdp").charge_for(lap))
    return led


def test_old_zcdp_ledgers_with_table_charges_still_verify_compose_and_are_flagged(
        tmp_path, capsys) -> None:
    from dpnoise.cli import main
    from dpnoise.report import ledger_report
    from dpnoise.session import Ledger
    from dpnoise.session.adapter import Target, plan
    from dpnoise.session.table_charges import shown_spent, table_charges, table_total_variation

    p = tmp_path / "old.sqlite"
    led = _old_table_ledger(p)
    before = led.state()
    led.close()
    with Ledger(p) as again:  # composes identically: the stored charges are read as written
        assert again.state().content_hash() == before.content_hash()
        assert again.state().rho == pytest.approx(before.rho)
        found = table_charges(again)
        assert found is not None and found.releases == (1, 2) and found.draws == 6
        sigma2 = float(plan(Target("count", 1.0, 1, False, 0.0, math.inf), epsilon=1.0,
                            delta=1e-6, mechanism="discrete-gaussian").mechanism.sigma2)
        tau = table_total_variation(sigma2)
        assert 0 < tau < 1e-13 and found.tv >= 6 * tau * (1 - 1e-12)
        eps, delta = shown_spent(again, found)
        acc, state = again.accountant_object(), again.state()
        assert delta >= acc.delta(state, 10.0) + 2 * found.tv  # the allowance is added
        assert eps >= acc.epsilon(state, 1e-6)
        html = ledger_report(again)
        assert "ALIAS TABLE" in html
    assert main(["ledger", "verify", str(p)]) == 0
    out = capsys.readouterr().out
    assert "FLAGGED" in out and "ALIAS TABLE" in out and "result:   OK" in out


def test_session_under_zcdp_uses_the_exact_discrete_gaussian_sampler() -> None:
    data = {"x": np.arange(50.0)}
    schema = {"columns": {"x": {"lower": 0, "upper": 100}}}
    with dp.Session(data, dp.Budget(1.0, 1e-6, accountant="zcdp"), schema=schema,
                    rng=dp.SeededRandom(1)) as s:
        (_, plan), = s.plans("count", 0.5, 1e-7, mechanism="discrete-gaussian")
        assert plan.mechanism.sampler == "cks"
        s.release("count", epsilon=0.5, delta=1e-7, mechanism="discrete-gaussian")
        assert s.ledger.state().rho == pytest.approx(1 / (2 * float(plan.mechanism.sigma2)))
    with dp.Session(data, dp.Budget(1.0, 1e-6, accountant="pld"), schema=schema) as s:
        (_, plan), = s.plans("count", 0.5, 1e-7, mechanism="discrete-gaussian")
        assert plan.mechanism.sampler == "table"  # the fast table where it is accounted exactly


def test_the_first_steps_block_is_charged_from_its_own_pmf() -> None:
    """The first-steps block law is far from every uniform geometric law (a coin bound by
    one would be useless: infinite eps at delta = 1e-6); its profile envelopes the exact
    PLDs of its own pmf, so one release is charged within 1e-5 of its verified loss and 20
    compose no worse than 20 releases of the ideal two-sided geometric law at the same eps
    (8 at eps 3, where the composed PLD's support makes 20 cost seconds)."""
    acc = get_accountant("pld")
    for eps, n in ((0.5, 20), (3.0, 8)):
        m = dp.Geometric(epsilon=eps, upper=None, sampler="first-steps")
        one = mechanism_pld(m)
        assert one.method == "exact" and "first-steps" in one.note
        assert verify(m).epsilon - 1e-5 <= one.pld.epsilon(1e-6) <= eps
        ideal = dp.Geometric(epsilon=eps, upper=None, sampler="cks")
        got, ref = (acc.epsilon(acc.compose_many(acc.empty(), acc.charge_for(x), n), 1e-6)
                    for x in (m, ideal))
        assert got <= ref + 1e-3, (eps, got, ref)
