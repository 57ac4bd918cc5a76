"""Classic and analytic Gaussian (baselines of Geng et al. 2018): calibration, exact release."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import integrate, stats

from dpnoise import AnalyticGaussian, Gaussian, ParameterError, SeededRandom, verify
from dpnoise.laws.gaussian import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    log_gaussian_delta,
)
from dpnoise.mechanisms.gaussian import _hockey, _ideal_logpmf

from .helpers import CountingSource

# reference values: σ* (Balle–Wang) and the classic σ (ε < 1)
SIGMA_STAR = {
    (0.1, 1e-6): 36.30469, (0.1, 1e-3): 17.404396, (0.1, 0.05): 4.4873418,
    (0.5, 1e-6): 8.0576185, (0.5, 1e-3): 4.610128, (0.5, 0.05): 2.0332105,
    (1.0, 1e-6): 4.2246789, (1.0, 1e-3): 2.574657, (1.0, 0.05): 1.3327783,
    (2.0, 1e-6): 2.2304763, (2.0, 1e-3): 1.4452392, (2.0, 0.05): 0.85470404,
    (5.0, 1e-6): 0.980049, (5.0, 1e-3): 0.68984233, (5.0, 0.05): 0.47212946,
}
CLASSIC = {(0.1, 1e-6): 52.988, (0.1, 1e-3): 37.765, (0.1, 0.05): 25.373,
           (0.5, 1e-6): 10.598, (0.5, 1e-3): 7.5530, (0.5, 0.05): 5.0745}


@pytest.mark.parametrize(("eps", "delta"), sorted(SIGMA_STAR))
def test_sigma_star_matches_reference(eps: float, delta: float) -> None:
    s = analytic_gaussian_sigma(eps, delta, 1.0)
    assert s == pytest.approx(SIGMA_STAR[(eps, delta)], rel=2e-7)
    assert gaussian_delta(s, eps, 1.0) == pytest.approx(delta, rel=1e-9)
    assert gaussian_delta(s * 0.999, eps, 1.0) > delta  # smallest
    assert analytic_gaussian_sigma(eps, delta, 3.0) == pytest.approx(3 * s, rel=1e-12)


@pytest.mark.parametrize(("eps", "delta"), sorted(CLASSIC))
def test_classic_sigma(eps: float, delta: float) -> None:
    assert classic_gaussian_sigma(eps, delta) == pytest.approx(CLASSIC[(eps, delta)], rel=1e-4)


def test_log_space_extremes() -> None:
    assert analytic_gaussian_sigma(1e-8, 1e-6) == pytest.approx(3.97e5, rel=3e-3)
    assert analytic_gaussian_sigma(1000.0, 1e-6) == pytest.approx(0.0249, rel=3e-3)
    s = analytic_gaussian_sigma(1000.0, 1e-300)
    assert math.isfinite(s) and s > 0
    assert log_gaussian_delta(s, 1000.0) == pytest.approx(math.log(1e-300), rel=1e-10)


def test_closed_form_matches_quadrature() -> None:
    """δ_G = ∫ (φ(y) − e^ε φ(y − Δ))_+ dy, integrated over the exact super-level set."""
    eps, sigma = 1.0, 2.0
    # p/q > e^ε  <=>  y < Δ/2 − εσ²/Δ
    cut = 0.5 - eps * sigma**2
    val, _ = integrate.quad(lambda y: stats.norm.pdf(y, 0, sigma)
                            - math.exp(eps) * stats.norm.pdf(y, 1, sigma), -60, cut,
                            epsabs=0, epsrel=1e-13)
    assert gaussian_delta(sigma, eps) == pytest.approx(val, rel=1e-10)


@pytest.mark.parametrize(("eps", "delta", "sens"), [(1.0, 1e-5, 1.0), (0.5, 1e-3, 3.0),
                                                     (5.0, 1e-6, 1.0), (0.1, 0.05, 1.0)])
def test_analytic_lattice_delta_exact(eps: float, delta: float, sens: float) -> None:
    m = AnalyticGaussian(epsilon=eps, delta=delta, sensitivity=sens)
    rep = verify(m, epsilons=[eps / 2, eps])
    assert rep.passed
    d = rep.delta_at(eps)
    assert d == pytest.approx(m.exact_delta, rel=1e-9)
    assert delta * (1 - 1e-5) <= d <= delta  # tight
    # the sampled pmf agrees with the continuous closed form at the same σ and grid shift
    assert m.closed_form_delta() == pytest.approx(delta, rel=1e-4)
    assert abs(m.sigma_inflation) < 1e-5 if sens == 1.0 else m.sigma_inflation < 1 / 256
    # minimality: 0.999 σ on the same grid exceeds δ
    lp = _ideal_logpmf(m.sigma * 0.999, m.grid)[1]
    assert _hockey(lp, m.shift_steps, eps) > delta


def test_under_reported_gaussian_fails() -> None:
    m = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)

    class Fake:
        def privacy_model(self) -> Any:
            return m.privacy_model()

        guarantee = type(m.guarantee)(1.0, m.exact_delta * 0.99, "approximate")

    assert not verify(Fake()).passed


def test_classic_gaussian_release_and_claim() -> None:
    m = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0)
    rep = verify(m, epsilons=[0.5])
    assert rep.passed and rep.delta_at(0.5) < 1e-5  # conservative
    assert m.sigma == pytest.approx(classic_gaussian_sigma(0.5, 1e-5), rel=1e-12)
    with pytest.raises(ParameterError):
        Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)


def test_release_on_grid_and_statistics() -> None:
    m = AnalyticGaussian(epsilon=1.0, delta=1e-4, sensitivity=1.0)
    x = 0.37
    y = np.asarray(m.release(np.full(200_000, x), rng=SeededRandom(2)))
    c = math.floor(x / m.grid + 0.5) * m.grid
    assert np.all((y - c) / m.grid == np.round((y - c) / m.grid))
    law = m.noise(x)
    assert abs(y.mean() - c) < 5 * law.std() / math.sqrt(y.size)
    assert abs(np.var(y) - law.var()) < 0.02 * law.var()
    assert law.std() == pytest.approx(m.sigma, rel=1e-6)
    edges = law.ppf(np.linspace(0.02, 0.98, 25))
    counts = np.histogram(y, bins=np.concatenate([[-np.inf], edges + m.grid / 2, [np.inf]]))[0]
    expected = np.diff(np.concatenate([[0.0], law.cdf(edges), [1.0]])) * y.size
    assert stats.chisquare(counts, expected).pvalue > 1e-4


def test_one_word_per_draw() -> None:
    m = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    for x in (0.0, 1e8, -2.5):
        src = CountingSource(5)
        m.release(np.full(3000, x), rng=src)
        assert src.drawn == 3000


def test_seeded_reproducible() -> None:
    m = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    assert np.array_equal(m.release(np.zeros(20), rng=SeededRandom(1)),
                          m.release(np.zeros(20), rng=SeededRandom(1)))
    assert isinstance(m.release(1.0, rng=SeededRandom(1)), float)


@pytest.mark.parametrize("cls", [Gaussian, AnalyticGaussian])
@pytest.mark.parametrize("bad", [
    {"delta": 0.0}, {"delta": 1.0}, {"delta": math.nan}, {"delta": 1e-13},
    {"epsilon": 0.0}, {"epsilon": math.inf}, {"sensitivity": -1.0}, {"sensitivity": math.nan},
])
def test_invalid_parameters(cls: type, bad: dict[str, Any]) -> None:
    kw: dict[str, Any] = {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0, **bad}
    with pytest.raises(ParameterError):
        cls(**kw)
