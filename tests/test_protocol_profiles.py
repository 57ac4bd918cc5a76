"""A mechanism must not vouch for itself: every registry mechanism's privacy profile (its
dominating PLD, its Rényi curve, its ρ) is checked against the verifier's independent
computation from the pmf it samples (``dpnoise.verify``, ``dpnoise.verify_renyi``), and the
test fails if a profile is ever below it.  Plus the refusals the profile drives: a release
that is not DP under every accountant, finite-support laws (the discrete Gaussian's alias
table among them) under zCDP.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import dpnoise as dp
from dpnoise.accounting import get_accountant, mechanism_pld
from dpnoise.mechanisms.registry import Request, build
from dpnoise.verify import AdditiveLattice, verify
from dpnoise.verify_renyi import renyi_divergence

from .registry import CASES

EPSILONS = [0.0, 0.05, 0.25, 0.5, 1.0, 2.0, 4.0]
ALPHAS = np.array([1.25, 1.5, 2.0, 4.0, 8.0, 32.0])

PROFILED = [(c.id, c.build) for c in CASES] + [
    ("discrete-gaussian-cks", lambda: dp.DiscreteGaussian(epsilon=1.0, sigma2=9.0,
                                                          upper=None, sampler="cks")),
    ("discrete-gaussian-table-issue", lambda: dp.DiscreteGaussian(epsilon=1.0, sigma2=25.0,
                                                                  upper=None)),
    ("geometric-group", lambda: dp.Geometric(epsilon=0.3, sensitivity=3, upper=None)),
]


def _exact_model(m):
    """The verifier's model, with an additive lattice's window widened to 64 periods: its
    delta adds the mass beyond the window as if at the largest loss (an upper bound), which
    must be negligible when the profile is compared with it."""
    model = m.privacy_model()
    if isinstance(model, AdditiveLattice) and model.period:
        w = 64 * model.period + 2 * model.max_shift + 16
        model = dataclasses.replace(model, window=max(model.window or 0, w))
    return model


@pytest.mark.parametrize("name,builder", PROFILED, ids=[n for n, _ in PROFILED])
def test_profile_pld_is_never_below_the_verifier(name: str, builder) -> None:
    m = builder()
    profile = m.privacy_profile()
    assert profile.dp
    pld = mechanism_pld(m).pld
    report = verify(_exact_model(m), epsilons=EPSILONS)
    for e in EPSILONS:
        truth = report.delta_at(e)
        assert pld.delta(e) >= truth * (1 - 1e-9) - 1e-15, (name, e, pld.delta(e), truth)
    # and the profile's claim of (epsilon, delta) is the mechanism's guarantee
    g = m.guarantee
    assert (profile.epsilon, profile.delta) == (g.epsilon, g.delta)


@pytest.mark.parametrize("name,builder", PROFILED, ids=[n for n, _ in PROFILED])
def test_profile_renyi_curve_and_rho_are_never_below_the_verifier(name: str,
                                                                  builder) -> None:
    m = builder()
    profile = m.privacy_profile()
    truth = renyi_divergence(m, ALPHAS)
    if profile.renyi is None:
        assert profile.rho is None and profile.not_zcdp
        with pytest.raises(dp.ParameterError):
            get_accountant("zcdp").charge_for(m)
        return
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
    unsafe = build("range-laplace-paper-unsafe", Request(epsilon=1.0))
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
        shifted = AdditiveLattice(model.logpmf, d * model.max_shift, model.period, window=400)
        rep = verify(shifted, epsilons=EPSILONS)
        for e in EPSILONS:
            assert pld.delta(e) >= rep.delta_at(e) * (1 - 1e-9) - 1e-15
        curve = m.privacy_profile().renyi(ALPHAS, d)
        assert np.all(curve >= renyi_divergence(shifted, ALPHAS) * (1 - 1e-9))
        assert math.isclose(float(curve[-1]), float(m.privacy_profile().renyi(ALPHAS[-1:], d)[0]))
