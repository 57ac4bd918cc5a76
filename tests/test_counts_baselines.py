"""Geometric and DiscreteGaussian baselines: exact δ formula, calibration, verifier, boundaries."""

from __future__ import annotations

import numpy as np
import pytest

from dpnoise import DiscreteGaussian, Geometric, ParameterError, SeededRandom, verify
from dpnoise.laws import discrete_gaussian as dga


def test_dg_delta_reference_values() -> None:
    # reference grid (DGp, DGη columns) and DG scales
    assert abs(dga.delta(1.49434, 1.1) / 0.0501452 - 1) < 1e-5
    assert abs(dga.sigma2_for_zero_mass(0.5) - 0.63661089) < 1e-7
    assert abs(dga.sigma2_for_zero_mass(0.1) - 15.915494) < 1e-5
    assert abs(dga.delta(dga.sigma2_for_zero_mass(0.1), 2.2) / 8.01418e-20 - 1) < 1e-5
    p = dga.pmf(np.array([1, 2]), 0.2660156)
    assert abs(p[0] - 0.11685073) < 1e-8 and abs(p[1] - 0.00041566745) < 1e-10


def test_dg_formula_equals_hockey_stick() -> None:
    for s2, eps in [(0.7, 1.0), (4.0, 0.5), (25.0, 0.2)]:
        K = dga.window(s2)
        z = np.arange(-K, K + 2)
        p = dga.pmf(z, s2)
        q = dga.pmf(z - 1, s2)
        hs = float(np.maximum(p - np.exp(eps) * q, 0).sum())
        assert abs(dga.delta(s2, eps) - hs) <= 1e-12 + 1e-8 * hs


def test_dg_calibration_and_verifier() -> None:
    m = DiscreteGaussian(epsilon=1.0, delta=1e-6, upper=1000)
    assert m.guarantee.delta <= 1e-6
    rep = verify(m)
    assert rep.passed and rep.delta_at(1.0) > 0.99 * m.guarantee.delta
    smaller = DiscreteGaussian(epsilon=1.0, sigma2=float(m.sigma2) * 0.99)
    assert smaller.delta_at(1.0) > 1e-6  # minimal scale


def test_dg_release_boundaries_and_moments() -> None:
    m = DiscreteGaussian(epsilon=1.0, sigma2=4.0, upper=50)
    y = m.release(np.array([0, 50, 25] * 20000), rng=SeededRandom(1))
    assert y.dtype == np.int64 and y.min() >= 0 and y.max() <= 50
    mid = y[2::3] - 25
    assert abs(mid.var() - m.noise().var()) < 0.1


def test_geometric() -> None:
    g = Geometric(epsilon=0.7, upper=100, sampler="cks")
    rep = verify(g)
    assert rep.passed and rep.epsilon <= 0.7 and rep.epsilon > 0.7 * (1 - 1e-6)
    # the default block sampler: its decay is a rational multiple of ln 2 (here ln 2 itself)
    gb = Geometric(epsilon=0.7, upper=100)
    rep = verify(gb)
    assert rep.passed and rep.epsilon <= 0.7 and rep.epsilon > 0.7 * 0.975
    assert abs(rep.epsilon - gb.guarantee.details["epsilon_exact"]) < 1e-11
    y = g.release(np.array([0, 100, 50] * 20000), rng=SeededRandom(2))
    assert y.min() >= 0 and y.max() <= 100
    mid = y[2::3] - 50
    assert abs(mid.var() - g.noise().var()) < 0.15
    g2 = Geometric(epsilon=2.0, sensitivity=3, boundary="none", lower=None)
    assert verify(g2).epsilon <= 2.0
    assert g2.release(np.zeros(20000, dtype=int), rng=SeededRandom(3)).min() < 0


@pytest.mark.parametrize("cls,kw", [
    (Geometric, {"epsilon": 0}), (Geometric, {"epsilon": 1, "sensitivity": 0.5}),
    (Geometric, {"epsilon": 1, "boundary": "clip"}),
    (DiscreteGaussian, {"epsilon": 1}), (DiscreteGaussian, {"epsilon": 1, "delta": 1.5}),
    (DiscreteGaussian, {"epsilon": 1, "sigma2": -1}),
    (DiscreteGaussian, {"epsilon": 1, "sigma2": 1, "delta": 1e-5})])
def test_invalid(cls, kw) -> None:
    with pytest.raises(ParameterError):
        cls(**kw)
