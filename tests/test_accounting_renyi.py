"""Rényi curves under the "zcdp" accountant (accounting/renyi.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpnoise as dp
from dpnoise.accounting import get_accountant
from dpnoise.accounting.accountant import Charge, State
from dpnoise.accounting.pld import DEFAULT_H
from dpnoise.accounting.renyi import ALPHAS, curve_of, randomized_response_curve
from dpnoise.accounting.zcdp import epsilon_from_rho


def _renyi_of_sampled_laplace(m: dp.Laplace, alpha: float) -> float:
    """D_α(noise(0) ‖ noise(Δ)) from the exact lattice pmfs, over ±50 scales (the rest of
    the sum is < e^-40 relative, far below the gap to the curve checked)."""
    half = 50 * m.scale
    y = (np.arange(-math.ceil(half / m.grid), math.ceil((half + 1.0) / m.grid)) + 0.5) * m.grid
    lp = np.asarray(m.noise(0.0).logpmf(y))
    lq = np.asarray(m.noise(m.sensitivity).logpmf(y))
    terms = alpha * lp + (1 - alpha) * lq
    top = float(np.max(terms))
    return (top + math.log(float(np.sum(np.exp(terms - top))))) / (alpha - 1)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_randomized_response_curve_bounds_the_sampled_laplace_and_beats_zcdp(
        epsilon: float) -> None:
    m = dp.Laplace(epsilon=epsilon, sensitivity=1.0)
    tau = curve_of(m)
    assert np.all(tau <= ALPHAS * epsilon**2 / 2 + 1e-15)  # never looser than ρ = ε²/2
    assert np.all(tau <= epsilon * (1 + 1e-9))
    for i in (0, 4, 12, 30):  # α = 1.125, 1.4, 2.19, 6.66 ...
        a = float(ALPHAS[i])
        assert _renyi_of_sampled_laplace(m, a) <= tau[i]  # an upper bound for the law sampled


def test_randomized_response_curve_matches_the_direct_formula() -> None:
    e = 0.7
    p = math.exp(e) / (1 + math.exp(e))
    q = 1 - p
    direct = [math.log(p**a * q**(1 - a) + q**a * p**(1 - a)) / (a - 1) for a in ALPHAS[:20]]
    np.testing.assert_allclose(randomized_response_curve(e)[:20], direct, rtol=1e-10)


def test_curves_tighten_zcdp_composition_and_stay_above_the_pld_truth() -> None:
    acc, pld = get_accountant("zcdp"), get_accountant("pld")
    m = dp.Laplace(epsilon=0.05, sensitivity=1.0)
    st = acc.compose_many(acc.empty(), acc.charge_for(m), 50)
    with_curves = acc.epsilon(st, 1e-6)
    rho_only = epsilon_from_rho(st.rho, 1e-6)
    assert with_curves < 0.97 * rho_only  # measured 1.586 vs 1.660
    sp = pld.compose_many(pld.empty(), pld.charge_for(m), 50)
    # the PLD is tight up to 50 grid steps: an RDP bound below it would be wrong
    assert with_curves >= pld.epsilon(sp, 1e-6) - 50 * DEFAULT_H


def test_discrete_gaussian_curve_is_alpha_rho_and_splits_scale_it() -> None:
    m = dp.DiscreteGaussian(epsilon=1.0, sigma2=9.0, upper=None, sampler="cks")
    np.testing.assert_allclose(curve_of(m), ALPHAS / 18.0)
    np.testing.assert_allclose(curve_of(m, shift=3), ALPHAS * 9 / 18.0)
    assert np.all(curve_of(dp.Geometric(epsilon=0.2), shift=4)
                  == randomized_response_curve(0.8))


def test_charges_and_states_without_curves_still_load_and_compose() -> None:
    """Ledgers written before the curves: no "rdp" in the serialised head -> α·ρ."""
    acc = get_accountant("zcdp")
    old = Charge("zcdp", 0.1, 0.0, None, 0.005)
    old_state = acc.compose(acc.empty(), Charge.from_bytes(old.to_bytes()))
    assert old_state.rdp is None and State.from_bytes(old_state.to_bytes()) == old_state
    new = acc.charge_for(dp.Laplace(epsilon=0.1, sensitivity=1.0))
    assert Charge.from_bytes(new.to_bytes()) == new
    both = acc.compose(old_state, new)
    np.testing.assert_allclose(both.rdp, ALPHAS * 0.005 + np.array(new.rdp))
    assert acc.epsilon(both, 1e-6) <= epsilon_from_rho(both.rho, 1e-6)


@pytest.mark.parametrize("epsilon", [4.4e-8, 1e-5, 1.5e-4, 0.01, 1.0, 20.0])
def test_randomized_response_curve_is_never_below_its_exact_value(epsilon: float) -> None:
    """D_α of the randomized-response pair, against the same formula in 60-digit arithmetic:
    at a small ε the stable form is a difference of terms of order α·ln 2 whose rounding
    exceeded the curve's slack (7 % below the truth at ε = 4.4e-8, 6.5e-10 relative below
    at 1.5e-4); it is rounded up by its terms' sizes now, and never more than the
    (ε²/2)-zCDP bound α·ε²/2 (plus the 1e-15 slack)."""
    import mpmath as mp

    from dpnoise.accounting.renyi import ALPHAS
    from dpnoise.profile import renyi_randomized_response

    got = renyi_randomized_response(ALPHAS, epsilon)
    with mp.workdps(60):
        e = mp.mpf(epsilon)
        p = mp.e**e / (1 + mp.e**e)
        q = 1 - p
        for a, g in zip(ALPHAS, got, strict=True):
            A = mp.mpf(float(a))
            truth = mp.log(p**A * q ** (1 - A) + q**A * p ** (1 - A)) / (A - 1)
            assert mp.mpf(float(g)) >= truth, (a, g, float(truth))
            assert g <= float(a) * epsilon**2 / 2 * (1 + 1e-12) + 1e-15
