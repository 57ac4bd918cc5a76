"""Exact envelope PLDs: the staircase over all lattice shifts, and GROUP BY
charges of (epsilon, delta) mechanisms over sub-sensitivity splits."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpnoise as dp
from dpnoise.accounting import DEFAULT_H, PLD, ReleaseSpec, get_accountant, mechanism_pld
from dpnoise.accounting.envelopes import periodic_additive_envelope
from dpnoise.accounting.sources import lattice_steps

H = DEFAULT_H


@pytest.mark.parametrize("kw", [{"epsilon": 3.0, "sensitivity": 2.0, "criterion": "mean_abs"}])
def test_staircase_pld_is_exact_envelope_above_verify_and_below_fallback(kw) -> None:
    m = dp.Staircase(**kw)
    src = mechanism_pld(m)
    assert src.method == "exact"
    eps = m.epsilon
    es = [0.0, 0.2 * eps, 0.5 * eps, 0.9 * eps]
    rep = dp.verify(m, epsilons=es)  # worst pair over every shift, exact sums
    rr = PLD.randomized_response(eps)
    for e in es:
        d = src.pld.delta(e)
        assert d >= rep.delta_at(e) * (1 - 1e-9), e
        assert d <= rr.delta(e) + 1e-12, e  # never looser than the claimed-epsilon fallback
    assert abs(src.pld.total_mass - 1) < 1e-9


def test_periodic_envelope_brute_force_on_a_small_law() -> None:
    """A non-log-concave periodic law: the critical-shift reduction equals the envelope of
    brute-force PLDs over EVERY shift (computed directly on a wide window)."""
    P, S = 6, 4
    base = np.log(np.array([4.0, 4.0, 1.0, 3.0, 3.0, 2.0]))
    r = math.log(0.5)

    lnorm = math.log(2 * np.exp(base).sum() / (1 - math.exp(r)))

    def logpmf(z):
        k = np.where(z >= 0, z, -z - 1)
        q, o = np.divmod(k, P)
        return base[o] + q * r - lnorm

    pld, _ = periodic_additive_envelope(logpmf, P, S, H)
    z = np.arange(-400, 400)
    norm = 0.0
    plds = []
    for s in range(1, S + 1):
        for sg in (1, -1):
            lp, lq = logpmf(z) - norm, logpmf(z - sg * s) - norm
            plds.append(PLD.from_losses(lp - lq, np.exp(lp), h=H, error=1e-12))
    for e in (0.0, 0.3, 0.7, 1.0, 1.3):
        worst = max(p.delta(e) for p in plds)  # the exact max of the hockey-stick curves
        assert pld.delta(e) >= worst - 1e-12
        assert pld.delta(e) <= worst + 1e-6  # the hull interpolates it on the fine grid
        assert pld.delta(e) <= PLD.envelope(plds).delta(e) + 1e-12  # tighter than tails


def test_lattice_steps_fraction() -> None:
    m = dp.Laplace(epsilon=0.5, sensitivity=4.0)
    full = m.shift_steps
    assert lattice_steps(m, 1) == full
    assert lattice_steps(m, 0.25) == math.ceil(full / 4)


def test_grouped_eps_delta_charge_never_looser_and_one_cell_for_gaussian() -> None:
    m = dp.DiscreteGaussian(epsilon=0.5, delta=1e-7, sensitivity=4)
    acc = get_accountant("pld")
    new = acc.charge_for(ReleaseSpec.fraction_split(m, 4, 10))
    old = acc.charge_for(ReleaseSpec.cells(m, 4))
    one = acc.charge_for(ReleaseSpec.cells(m, 1))
    assert (new.basic_epsilon, new.basic_delta) == (old.basic_epsilon, old.basic_delta)
    for e in (0.0, 0.3, 0.6, 1.0):
        assert new.pld.delta(e) <= old.pld.delta(e) + 1e-12
        assert new.pld.delta(e) >= one.pld.delta(e) - 1e-12  # it contains the one-cell split
    for e in (0.0, 0.3, 0.6):  # Gaussian: l2 norm <= k, one cell is the worst split
        assert new.pld.delta(e) <= one.pld.delta(e) + 1e-9
