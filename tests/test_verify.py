"""The verifier itself: exact answers on known mechanisms, and it catches broken ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import laplace, norm

from dpnoise import ParameterError, verify
from dpnoise.verify import AdditiveLattice, ContinuousFamily, DiscreteFamily, discrete_pair


def laplace_family(eps: float, sens: float = 1.0) -> ContinuousFamily:
    b = sens / eps
    return ContinuousFamily(
        pairs=[(0.0, sens)],
        logpdf=lambda y, x: -np.abs(np.asarray(y) - x) / b - math.log(2 * b),  # stable in tails
        breakpoints=lambda x: [x],
        scale=b,
        cdf=lambda y, x: laplace.cdf(y, loc=x, scale=b),
    )


@settings(max_examples=10)  # each verify() integrates the whole density ratio (~0.4 s)
@given(st.floats(0.05, 5.0), st.floats(0.1, 10.0))
def test_continuous_laplace_loss_is_exactly_epsilon(eps: float, sens: float) -> None:
    report = verify(laplace_family(eps, sens), epsilons=[eps])
    assert report.epsilon == pytest.approx(eps, rel=1e-9)
    assert report.delta_at(eps) < 1e-12


def gaussian_delta(eps: float, sigma: float, sens: float) -> float:
    a = sens / (2 * sigma)
    b = eps * sigma / sens
    return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b)


@given(st.floats(0.3, 5.0), st.floats(0.05, 3.0))
def test_gaussian_delta_matches_closed_form(sigma: float, eps: float) -> None:
    sens = 1.0
    model = ContinuousFamily(
        pairs=[(0.0, sens)],
        logpdf=lambda y, x: norm.logpdf(y, loc=x, scale=sigma),
        breakpoints=lambda x: [],
        scale=sigma,
        cdf=lambda y, x: norm.cdf(y, loc=x, scale=sigma),
    )
    report = verify(model, epsilons=[eps])
    expected = gaussian_delta(eps, sigma, sens)
    assert report.delta_at(eps) == pytest.approx(expected, rel=1e-6, abs=1e-14)
    assert report.epsilon > 50  # the Gaussian has no finite pure-DP loss


def naive_truncated_laplace(eps: float, lo: float = 0.0, hi: float = 10.0) -> ContinuousFamily:
    """The deliberately broken mechanism: truncate + renormalise with scale Δ/ε (Δ = 1)."""
    b = 1.0 / eps

    def logpdf(y: np.ndarray, x: float) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        z = laplace.cdf(hi, loc=x, scale=b) - laplace.cdf(lo, loc=x, scale=b)
        inside = (y >= lo) & (y <= hi)
        return np.where(inside, laplace.logpdf(y, loc=x, scale=b) - math.log(z), -np.inf)

    pairs = [(float(a), float(a) + 1.0) for a in np.linspace(lo, hi - 1.0, 19)]
    return ContinuousFamily(pairs=pairs, logpdf=logpdf, breakpoints=lambda x: [lo, x, hi],
                            scale=b)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_verifier_catches_naive_truncation(eps: float) -> None:
    report = verify(naive_truncated_laplace(eps), epsilons=[eps])
    # exact loss on [0, 10] at x = 0 vs 1: ε + ln((2 − e^{−ε} − e^{−9ε}) / (1 − e^{−10ε}))
    exact = eps + math.log((2 - math.exp(-eps) - math.exp(-9 * eps)) / (1 - math.exp(-10 * eps)))
    assert report.epsilon == pytest.approx(exact, rel=1e-6)
    assert report.epsilon > eps + 0.2
    assert abs(report.epsilon - math.log(2 * math.exp(eps) - 1)) < 0.02  # the paper's ln(2e^ε − 1)
    assert report.delta_at(eps) > 0


def test_support_mismatch_is_infinite_loss() -> None:
    lp = np.array([math.log(0.5), math.log(0.5), -math.inf])
    lq = np.array([-math.inf, math.log(0.5), math.log(0.5)])
    loss, deltas = discrete_pair(lp, lq, [0.0, 1.0])
    assert loss == math.inf
    assert deltas == [pytest.approx(0.5), pytest.approx(0.5)]


def test_discrete_family_randomised_response() -> None:
    eps = 1.3
    p = math.exp(eps) / (1 + math.exp(eps))

    def law(x: float) -> tuple[np.ndarray, np.ndarray]:
        probs = np.array([p, 1 - p]) if x == 0 else np.array([1 - p, p])
        return np.array([0, 1]), np.log(probs)

    report = verify(DiscreteFamily(inputs=[0.0, 1.0], sensitivity=1.0, law=law),
                    epsilons=[0.0, eps, 0.5])
    assert report.epsilon == pytest.approx(eps, rel=1e-12)
    assert report.delta_at(eps) == pytest.approx(0.0, abs=1e-15)
    assert report.delta_at(0.0) == pytest.approx(2 * p - 1, rel=1e-12)  # total variation
    assert report.delta_at(0.5) == pytest.approx(p - math.exp(0.5) * (1 - p), rel=1e-12)


def test_lattice_model_geometric_exact() -> None:
    eps = 0.7

    def logpmf(z: np.ndarray) -> np.ndarray:
        return np.log(math.tanh(eps / 2)) - eps * np.abs(z)

    report = verify(AdditiveLattice(logpmf=logpmf, max_shift=2, period=1), epsilons=[eps])
    assert report.epsilon == pytest.approx(2 * eps, rel=1e-12)


def test_lattice_model_rejects_false_period() -> None:
    def logpmf(z: np.ndarray) -> np.ndarray:
        return -0.5 * np.abs(z) - 0.01 * (np.abs(z) % 3 == 0)

    with pytest.raises(ParameterError, match="period"):
        verify(AdditiveLattice(logpmf=logpmf, max_shift=1, period=2))


def test_verify_rejects_objects_without_model() -> None:
    with pytest.raises(ParameterError):
        verify(object())


def test_verify_refuses_a_mechanism_class_and_bad_epsilons() -> None:
    """A class (TypeError: privacy_model() missing self), a lone number (not iterable), a
    string entry (numpy UFuncTypeError), a bool or NaN entry were not ParameterErrors."""
    from dpnoise import Geometric

    with pytest.raises(ParameterError, match="class"):
        verify(Geometric)
    m = Geometric(epsilon=0.5)
    for bad in (5, "0.5", ["a"], [True], [math.nan], np.float64(0.5)):
        with pytest.raises(ParameterError, match="epsilons"):
            verify(m, epsilons=bad)
    report = verify(m, epsilons=np.array([0.25]))
    assert [e for e, _ in report.delta_curve] == [0.25, 0.5]


def test_lattice_model_with_finite_support_reports_infinite_loss_and_true_delta() -> None:
    # uniform noise on {-1, 0, 1}: a shift by 1 makes one outcome impossible
    def logpmf(z: np.ndarray) -> np.ndarray:
        return np.where(np.abs(z) <= 1, math.log(1 / 3), -np.inf)

    report = verify(AdditiveLattice(logpmf=logpmf, max_shift=1, window=8), epsilons=[0.0, 1.0])
    assert report.epsilon == math.inf
    assert report.delta_at(1.0) == pytest.approx(1 / 3)
    assert report.delta_at(0.0) == pytest.approx(1 / 3)
