"""The generic harness every mechanism in ``registry.CASES`` passes (the scipy.stats pattern)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpnoise
from dpnoise import ParameterError, SeededRandom, verify

from .helpers import CountingSource, law_chi_square_pvalue
from .registry import CASES, Case

N_SAMPLES = 20_000
ids = [c.id for c in CASES]


@pytest.fixture(params=CASES, ids=ids)
def case(request: pytest.FixtureRequest) -> Case:
    return request.param


def _samples(case: Case, seed: int = 1, n: int = N_SAMPLES) -> np.ndarray:
    mech = case.build()
    return np.asarray(mech.release(np.full(n, case.true_value), rng=SeededRandom(seed)))


def test_outputs_in_declared_output_set(case: Case) -> None:
    mech = case.build()
    y = _samples(case, n=5000)
    assert np.all(mech.in_output_set(y))


def test_samples_follow_the_exact_law(case: Case) -> None:
    mech = case.build()
    law = mech.noise(case.true_value)
    y = _samples(case)
    if case.discrete:
        assert law_chi_square_pvalue(y, law) > 1e-3
    else:
        res = stats.kstest(y, law.cdf)
        assert res.pvalue > 1e-3, res


def test_sample_moments(case: Case) -> None:
    if not case.moments:
        pytest.skip("moments not comparable (post-processed output)")
    law = case.build().noise(case.true_value)
    y = _samples(case, seed=2)
    sd = math.sqrt(law.var())
    assert abs(y.mean() - law.mean()) < 5 * sd / math.sqrt(y.size)
    assert abs(y.var() / law.var() - 1) < 0.08
    assert abs(np.abs(y - law.mean()).mean() / law.mean_abs() - 1) < 0.05


def test_cdf_inverts_ppf(case: Case) -> None:
    law = case.build().noise(case.true_value)
    q = np.array([1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 1 - 1e-6])
    x = law.ppf(q)
    assert np.all(law.cdf(x) >= q - 1e-12)
    if case.discrete:  # the previous lattice point is below q
        below = x - 1e-9 * (1 + np.abs(x))  # a step far below any grid we use
        assert np.all(law.cdf(below) < q + 1e-12)


def test_verifier_confirms_the_guarantee(case: Case) -> None:
    mech = case.build()
    report = verify(mech)
    g = mech.guarantee
    assert report.passed, report
    if g.delta == 0:
        assert report.epsilon <= g.epsilon


def test_calibration_is_minimal(case: Case) -> None:
    if case.less_noisy is None:
        pytest.skip("no minimality claim")
    g = case.build().guarantee
    report = verify(case.less_noisy(), epsilons=[g.epsilon])
    if g.delta == 0:
        assert report.epsilon > g.epsilon
    else:
        assert report.delta_at(g.epsilon) > g.delta


def test_invalid_parameters_raise_before_randomness(case: Case) -> None:
    for override in case.invalid:
        with pytest.raises(ParameterError) as info:
            case.factory(**{**case.valid, **override})
        assert any(k in str(info.value) for k in (*override, "range", "grid")), str(info.value)
    mech = case.build()
    for bad in case.bad_values:
        source = CountingSource()
        with pytest.raises(ParameterError):
            mech.release(bad, rng=source)
        with pytest.raises(ParameterError):
            mech.release([case.true_value, bad], rng=source)
        assert source.drawn == 0


def test_seeded_source_reproduces_and_default_does_not(case: Case) -> None:
    mech = case.build()
    x = np.full(64, case.true_value)
    a = mech.release(x, rng=SeededRandom(11))
    b = mech.release(x, rng=SeededRandom(11))
    np.testing.assert_array_equal(a, b)
    c = mech.release(x)
    d = mech.release(x)
    assert not np.array_equal(c, d)


def test_scalar_in_scalar_out(case: Case) -> None:
    mech = case.build()
    out = mech.release(case.true_value, rng=SeededRandom(3))
    assert np.ndim(out) == 0
    arr = mech.release(np.full((2, 3), case.true_value), rng=SeededRandom(3))
    assert np.shape(arr) == (2, 3)


def test_mechanism_is_immutable(case: Case) -> None:
    mech = case.build()
    with pytest.raises(AttributeError):
        mech.epsilon = 123.0


def test_guarantee_is_exposed(case: Case) -> None:
    g = case.build().guarantee
    assert isinstance(g, dpnoise.Guarantee)
    assert g.epsilon > 0 and 0 <= g.delta < 1
