"""Truncated Laplacian (paper 001): calibration, exact law, lattice release, privacy, bounds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpnoise import ParameterError, SeededRandom, TruncatedLaplace, verify
from dpnoise.exact.folded import FoldedBlockGeometric
from dpnoise.laws.truncated_laplacian import (
    EQUAL_LIMIT_AMPLITUDE,
    EQUAL_LIMIT_POWER,
    lower_bounds,
    rigorous_lower_bounds,
    tightness,
    tightness_limits,
    tlap_params,
)
from dpnoise.mechanisms.truncated import TLapDistribution
from dpnoise.reproduce.truncated_laplacian import CASES, SPEC_REFERENCE, case_values
from dpnoise.verify import ContinuousFamily, FiniteLattice

from .helpers import CountingSource


# ------------------------------------------------------------------ paper numbers
@pytest.mark.parametrize(("eps", "delta"), CASES)
def test_spec_table_a(eps: float, delta: float) -> None:
    """A, E|X|, E[X²], paper and rigorous lower bounds vs spec §5 Table A (5-8 digits)."""
    got = case_values(eps, delta)[:7]
    ref = SPEC_REFERENCE[(eps, delta)][:7]
    for g, r in zip(got, ref, strict=True):
        assert g == pytest.approx(r, rel=1e-5, abs=1e-12)


def test_stable_forms_and_limits() -> None:
    # naive 1 − L/c gives 2.5535 here (spec §7); the limit ε → 0 is Δ/(4δ) = 2.5
    assert tlap_params(1e-15, 0.1).mean_abs == pytest.approx(2.5, rel=1e-12)
    p = tlap_params(1e-8, 0.05)
    assert p.mean_abs == pytest.approx(5.0, rel=1e-6)
    assert p.second_moment == pytest.approx(100 / 3, rel=1e-6)
    assert 0.1 * tlap_params(0.1, 1e-30).mean_abs == pytest.approx(1.0, rel=1e-12)
    # ε = δ → 0 constants (eq. 6, Thm 7)
    e = 1e-7
    q = tlap_params(e, e)
    assert q.mean_abs * e == pytest.approx(EQUAL_LIMIT_AMPLITUDE, rel=1e-5)
    assert q.second_moment * e * e == pytest.approx(EQUAL_LIMIT_POWER, rel=1e-5)
    assert abs(EQUAL_LIMIT_AMPLITUDE - 0.189069784) < 1e-9


def test_overflow_safe_extremes() -> None:
    p = tlap_params(1000.0, 1e-300)
    half_width = p.A
    assert half_width == pytest.approx(1 + math.log(0.5e300) / 1000, rel=1e-12)
    assert math.isfinite(p.log_B) and p.mean_abs == pytest.approx(1e-3, rel=1e-9)
    p = tlap_params(1e-9, 1e-300)
    assert math.isfinite(p.A) and p.mean_abs > 0


def test_tightness_values_and_limits() -> None:
    """Spec §2.3 script values (Thms 6, 7 with real n) and the limit formulas."""
    assert tightness(1e-8, 0.05) == pytest.approx((0.89999999, 0.85499999), rel=1e-7)
    assert tightness(0.1, 1e-30) == pytest.approx((0.95083319, 0.95162542), rel=1e-7)
    assert tightness(1.0, 1e-30) == pytest.approx((0.58197671, 0.62968524), rel=1e-7)
    assert tightness(1e-8, 1e-8) == pytest.approx((0.99999997, 0.99999996), rel=1e-7)
    assert tightness_limits("eps->0", delta=0.05) == pytest.approx((0.9, 0.855))
    assert tightness_limits("delta->0", epsilon=0.1) == pytest.approx(
        tightness(0.1, 1e-300), rel=1e-9)


def test_lower_bound_ordering() -> None:
    for eps, delta in CASES:
        p = tlap_params(eps, delta)
        v1, v2 = lower_bounds(eps, delta)
        r1, r2 = rigorous_lower_bounds(eps, delta)
        assert 0 <= r1 <= v1 <= p.mean_abs and 0 <= r2 <= v2 <= p.second_moment
    # the printed closed forms lose 12% at ε = 1e-6; the gap identity keeps full accuracy
    # (limits as ε → 0: the error shrinks linearly in ε, no cancellation floor)
    for e in (1e-6, 1e-9):
        v1, v2 = lower_bounds(e, 0.05)
        assert v1 == pytest.approx(1 / (4 * 0.05) - 0.5, rel=20 * e)
        assert v2 == pytest.approx((1 / 12) * (1 / 0.05 - 1) * (1 / 0.05 - 2), rel=20 * e)


# ------------------------------------------------------------------ continuous law
def test_continuous_law() -> None:
    law = TLapDistribution(1.0, 1e-3)
    q = np.linspace(0, 1, 101)
    assert np.allclose(law.cdf(law.ppf(q)), q, atol=1e-13)
    A = law.A
    assert law.ppf(0.0) == -A and law.ppf(1.0) == A and law.ppf(0.5) == 0
    assert law.cdf(A) - law.cdf(A - 1.0) == pytest.approx(1e-3, rel=1e-12)  # P([A−Δ, A]) = δ
    assert law.delta_profile([1.0, 3.0])[0] == pytest.approx(1e-3)
    assert law.delta_profile([0.0])[0] > 0.39


def test_continuous_ideal_verified_exactly() -> None:
    """The ideal TLap density, verified by the continuous verifier: δ(ε) = δ, both directions."""
    law = TLapDistribution(1.0, 1e-3)
    A = law.A
    model = ContinuousFamily(
        pairs=[(0.0, 1.0), (0.0, -1.0)],
        logpdf=lambda y, x: law.logpdf(np.asarray(y) - x),
        breakpoints=lambda x: [x - A, x, x + A, x - A + 1, x + A - 1],
        scale=1.0,
        cdf=lambda y, x: float(law.cdf(y - x)),
    )
    rep = verify(model, epsilons=[0.5, 1.0, 1.5])
    assert rep.delta_at(1.0) == pytest.approx(1e-3, rel=1e-9)
    assert rep.delta_at(1.5) == pytest.approx(1e-3, rel=1e-9)
    assert rep.delta_at(0.5) == pytest.approx(float(law.delta_profile([0.5])[0]), rel=1e-7)


# ------------------------------------------------------------------ lattice mechanism
@pytest.mark.parametrize(("eps", "delta", "sens"), [
    (1.0, 1e-3, 1.0), (0.1, 0.05, 1.0), (5.0, 1e-6, 1.0), (1e-3, 0.3, 1.0), (2.0, 1e-4, 0.3),
])
def test_verifier_confirms_exact_delta(eps: float, delta: float, sens: float) -> None:
    m = TruncatedLaplace(epsilon=eps, delta=delta, sensitivity=sens)
    rep = verify(m, epsilons=[eps / 2, eps, 2 * eps])
    assert rep.passed
    d = rep.delta_at(eps)
    assert d == pytest.approx(m.exact_delta, rel=1e-9)
    assert d <= delta
    # tight: within one cell, d/dn ln δ(n) = (ln2/M)/(1 − 2^(−n/M))
    cell = math.log(2) / m.block.M / -math.expm1(-m.law.n / m.block.M * math.log(2))
    assert d >= delta * (1 - 1.01 * cell)
    assert rep.delta_at(2 * eps) == pytest.approx(d, rel=1e-12)  # flat profile for ε' >= ε
    assert rep.delta_at(eps / 2) > d  # below ε the profile rises (tight in ε too)
    assert rep.worst["common_support_loss"] <= eps
    assert math.isinf(rep.epsilon)  # distinguishing events: no pure-DP loss bound


class _UnderReported:
    """The same pmf with a claim of 0.99·δ: the verifier must reject it."""

    def __init__(self, m: TruncatedLaplace) -> None:
        self.m = m

    def privacy_model(self) -> Any:
        return self.m.privacy_model()

    @property
    def guarantee(self) -> Any:
        g = self.m.guarantee
        return type(g)(g.epsilon, g.details["exact_delta"] * 0.99, g.notion)


def test_under_reported_delta_fails() -> None:
    m = TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0)
    assert verify(m).passed
    assert not verify(_UnderReported(m)).passed


def test_support_is_minimal() -> None:
    """One cell less of support would exceed δ: the edge mass is what the calibration pays."""
    m = TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0)
    smaller = FoldedBlockGeometric(m.block, m.law.n - 1)
    model = FiniteLattice(
        logpmf=lambda z: smaller.logpmf(np.where(z >= 0, z, -z - 1)) - math.log(2),
        max_shift=m.shift_steps, lo=-smaller.n, hi=smaller.n - 1)
    assert verify(model, epsilons=[1.0]).delta_at(1.0) > 1e-3
    # and the block: M − 1 would give an S-step loss above ε
    worse = FoldedBlockGeometric(type(m.block)(m.block.M - 1), m.law.n)
    assert worse.step_loss(m.shift_steps) > 1.0


def test_support_edge_distinguishing_event() -> None:
    """Outputs reachable from x but not from x + Δ occur with probability exactly δ_sampled."""
    m = TruncatedLaplace(epsilon=1.0, delta=0.2, sensitivity=1.0)
    L, n, S = m.grid, m.law.n, m.shift_steps
    y = np.asarray(m.release(np.zeros(100_000), rng=SeededRandom(7)))
    cells = y / L - 0.5
    assert np.all(cells == np.floor(cells))  # every output on the half-offset grid
    assert np.all(np.abs(y) <= (n - 0.5) * L)
    # impossible from x' = Δ (index S): y − S·L < −(n − 1/2)L
    only_x = y - S * L < -(n - 0.5) * L
    k = int(only_x.sum())
    p = m.exact_delta
    assert abs(k - p * y.size) < 5 * math.sqrt(y.size * p * (1 - p))
    # the noise law assigns those outputs zero probability from x' = Δ
    law_x2 = m.noise(1.0)
    assert np.all(law_x2.pmf(np.unique(y[only_x])) == 0)


def test_release_rounds_true_value_to_grid() -> None:
    m = TruncatedLaplace(epsilon=1.0, delta=0.1, sensitivity=1.0)
    L = m.grid
    x = np.array([0.3 * L, 1e6 + 0.7 * L, -5.49 * L])
    y = np.asarray(m.release(np.repeat(x, 1000), rng=SeededRandom(1))).reshape(3, 1000)
    c = np.floor(x / L + 0.5) * L
    assert np.all(np.abs(y - c[:, None]) <= m.support_half_width)
    assert np.all(((y - c[:, None]) / L - 0.5) % 1 == 0)


def test_statistics_match_exact_law() -> None:
    m = TruncatedLaplace(epsilon=1.0, delta=0.05, sensitivity=1.0)
    y = np.asarray(m.release(np.zeros(200_000), rng=SeededRandom(3)))
    law = m.noise()
    assert abs(np.abs(y).mean() - law.mean_abs()) < 5 * law.std() / math.sqrt(y.size)
    assert abs((y * y).mean() - law.var()) < 5 * np.std(y * y) / math.sqrt(y.size)
    edges = law.ppf(np.linspace(0.02, 0.98, 25))
    counts = np.histogram(y, bins=np.concatenate([[-np.inf], edges, [np.inf]]))[0]
    cdf = np.concatenate([[0.0], law.cdf(edges - m.grid / 4), [1.0]])
    expected = np.diff(cdf) * y.size
    assert stats.chisquare(counts, expected).pvalue > 1e-4
    # the lattice law is close to the continuous one
    assert law.mean_abs() == pytest.approx(m.continuous().mean_abs(), rel=2e-3)
    q = np.array([0.01, 0.3, 0.5, 0.9, 0.999])
    assert np.all(law.cdf(law.ppf(q)) >= q)


def test_fixed_word_count_no_value_dependent_loop() -> None:
    """Two words per draw whatever the true value (no rejection loop)."""

    m = TruncatedLaplace(epsilon=0.5, delta=1e-4, sensitivity=2.0)
    for x in (0.0, 1e9, -3.25):
        src = CountingSource(5)
        m.release(np.full(5000, x), rng=src)
        assert src.drawn == 10_000


def test_seeded_reproducible_and_default_fresh() -> None:
    m = TruncatedLaplace(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    a = m.release(np.zeros(50), rng=SeededRandom(11))
    b = m.release(np.zeros(50), rng=SeededRandom(11))
    assert np.array_equal(a, b)
    assert not np.array_equal(m.release(np.zeros(50)), m.release(np.zeros(50)))
    assert isinstance(m.release(2.0, rng=SeededRandom(1)), float)


def test_extreme_parameters_calibrate() -> None:
    m = TruncatedLaplace(epsilon=1000.0, delta=1e-300, sensitivity=1.0)
    assert 0 < m.exact_delta <= 1e-300
    assert m.support_half_width == pytest.approx(m.ideal.A, rel=1e-3)
    m = TruncatedLaplace(epsilon=1e-4, delta=0.1, sensitivity=1.0)
    assert m.exact_delta <= 0.1 and m.exact_loss <= 1e-4


@pytest.mark.parametrize("bad", [
    {"delta": 0.0}, {"delta": 0.5}, {"delta": 0.6}, {"delta": 1.0}, {"delta": -1e-3},
    {"delta": math.nan}, {"delta": math.inf}, {"delta": True},
    {"epsilon": 0.0}, {"epsilon": -1.0}, {"epsilon": math.nan}, {"epsilon": math.inf},
    {"sensitivity": 0.0}, {"sensitivity": -2.0}, {"sensitivity": math.nan},
    {"grid": 0.3}, {"grid": -0.25},
])
def test_invalid_parameters(bad: dict[str, Any]) -> None:
    kw: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-3, "sensitivity": 1.0, **bad}
    with pytest.raises(ParameterError):
        TruncatedLaplace(**kw)


def test_invalid_true_values() -> None:
    m = TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0)
    for bad in (math.nan, math.inf, [1.0, math.nan]):
        with pytest.raises(ParameterError):
            m.release(bad, rng=SeededRandom(0))


def test_huge_true_value_raises_precision_error() -> None:
    from dpnoise import PrecisionError

    m = TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0)
    with pytest.raises(PrecisionError):
        m.release(2.0**51 * m.grid, rng=SeededRandom(0))
    assert abs(m.release(2.0**50 * m.grid, rng=SeededRandom(0)) - 2.0**50 * m.grid) < 10


def test_immutable() -> None:
    m = TruncatedLaplace(epsilon=1.0, delta=1e-3, sensitivity=1.0)
    with pytest.raises(AttributeError):
        m.epsilon = 2.0


def test_geometric_count_extension_folds_exactly() -> None:
    """The 2^-63 path: Q >= 63 extends on fresh words, Q >= 128 bypasses the fold table."""
    from dpnoise.exact.geometric import BlockGeometric

    law = FoldedBlockGeometric(BlockGeometric(7), 23)
    b0 = np.uint64(0x9E3779B97F4A7C15)

    class Rigged:
        def __init__(self, extension: list[int]) -> None:
            self.calls, self.extension = 0, extension

        def words(self, n: int) -> np.ndarray:
            self.calls += 1
            if self.calls == 1:  # a = 0 (sign +, low 63 bits zero), b = b0
                return np.array([0, b0], dtype=np.uint64)
            return np.array([self.extension.pop(0)], dtype=np.uint64)

    R = int(law.block.table.sample_words(np.array([b0]))[0])
    for ext, q in (([0b1000], 63 + 3), ([0, 0b100], 63 + 63 + 2)):
        v = int(law.signed_odd(Rigged(list(ext)), 1)[0])
        assert v > 0 and (v - 1) // 2 == (q * 7 + R) % 23


@given(log_eps=st.floats(-6, 3), log_delta=st.floats(-300, math.log10(0.49)))
def test_calibration_properties(log_eps: float, log_delta: float) -> None:
    """Overflow-free calibration; moments and bounds ordered; edge mass = δ (spec §1)."""
    eps, delta = 10.0**log_eps, 10.0**log_delta
    p = tlap_params(eps, delta)
    assert math.isfinite(p.A) and p.A > 1.0 and math.isfinite(p.log_B)
    assert 0 < p.mean_abs <= p.lam * (1 + 1e-12)
    assert 0 < p.second_moment <= 2 * p.lam**2 * (1 + 1e-12)
    v1, v2 = lower_bounds(eps, delta)
    assert v1 <= p.mean_abs * (1 + 1e-12) and v2 <= p.second_moment * (1 + 1e-12)
    if delta > 1e-250 and eps < 300:
        law = TLapDistribution(eps, delta)
        assert float(law.sf(p.A - 1.0)) == pytest.approx(delta, rel=1e-9)
