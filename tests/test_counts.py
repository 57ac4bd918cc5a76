"""CountNoise (paper 002): the paper's numbers, the spec's errata, exact δ, calibration."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from dpnoise import CountNoise, ParameterError, SeededRandom, verify
from dpnoise.exact.rational import exp_lower
from dpnoise.laws import count_noise as cf

# spec 002 §5: (eta, D, eps) -> (k, delta_tilde, HS(alpha*), LPhs, sigma2); None = Thm-3 "!"
GRID = [
    (0.1, 2, 0.5, 3, 0.123331, None, 0.285128, 1.63999),
    (0.1, 2, 1.1, 3, 0.0899251, 0.239508, 0.149583, 1.43955),
    (0.1, 4, 0.5, 5, 0.0238544, None, 0.0531261, 3.39473),
    (0.1, 4, 1.1, 5, 0.00773526, None, 0.0114806, 2.23233),
    (0.1, 4, 2.2, 5, 4.84354e-4, 0.00193742, 5.44418e-4, 1.25806),
    (0.1, 6, 1.1, 7, 8.24097e-4, None, 0.0012302, 2.56871),
    (0.1, 10, 0.5, 11, 8.00562e-4, None, 0.0020779, 7.69898),
    (0.1, 10, 2.2, 11, 8.95731e-10, 8.95731e-9, 1.00735e-9, 1.2644),
    (0.5, 2, 0.5, 2, 0.15004, 0.33782, 0.33782, 0.726433),
    (0.5, 4, 1.1, 5, 0.00429737, 0.0171895, 0.00622792, 1.24019),
    (0.5, 6, 2.2, 7, 3.30143e-6, 1.98086e-5, 3.71278e-6, 0.70233),
    (0.5, 10, 1.1, 11, 5.58341e-6, 5.58341e-5, 8.36839e-6, 1.49434),
    (0.9, 3, 0.5, 1, 0.817564, 0.867564, 0.867564, 0.1),
    (0.9, 5, 2.2, 1, 0.448749, 0.498749, 0.498749, 0.1),
]


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def test_figure1_walkthrough() -> None:
    m = CountNoise(epsilon=2.18, D=6, eta=0.8)
    E = float(m.E_lo)
    assert abs(E - 8.8463063) < 1e-6
    c = [float(x) for x in cf.paper_alpha(m.E_lo, m.eta, 6).crossovers]
    assert abs(c[1] - 8.1228981) < 1e-6 and abs(c[2] - 7.8867308) < 1e-6
    assert m.k_paper == 3 and m.k == 3
    assert rel(float(m.delta_tilde), 0.0049478216) < 1e-8
    a = [float(x) for x in m.alpha]
    ref = [0.89873915, 0.096001756, 0.0052590921]
    assert all(rel(x, y) < 1e-7 for x, y in zip(a, ref, strict=False))
    assert a[3:] == [0.0, 0.0, 0.0]
    pm = m.noise()
    assert rel(float(pm.pmf(1)), 0.089873915) < 1e-7
    assert rel(float(pm.pmf(-2)), 0.0096001756) < 1e-7
    assert rel(a[0] / a[1], 9.3616949) < 1e-7
    assert set(np.unique(m.release(np.full(20000, 50), rng=SeededRandom(1))) - 50) <= {
        -3, -2, -1, 0, 1, 2, 3}


@pytest.mark.parametrize("eta,D,eps,k,dt,hs,lphs,s2", GRID)
def test_spec_grid(eta, D, eps, k, dt, hs, lphs, s2) -> None:
    E = exp_lower(eps)
    e = Fraction(eta)
    sol = cf.paper_alpha(E, e, D, check=False)
    assert sol.k == k
    assert rel(float(sol.delta_tilde), dt) < 2e-5
    if hs is None:  # Theorem 3 fails here: the paper construction must be refused
        with pytest.raises(ParameterError, match="Theorem 3"):
            CountNoise(epsilon=eps, D=D, eta=eta)
    else:
        m = CountNoise(epsilon=eps, D=D, eta=eta)
        assert rel(float(m.delta_rational), hs) < 2e-5
        assert rel(float(m.variance), s2) < 2e-5
        assert m.guarantee.delta >= float(m.delta_exact)
    opt = CountNoise.optimal(epsilon=eps, D=D, eta=eta)
    assert float(opt.delta_rational) <= lphs * (1 + 1e-5)
    assert float(opt.delta_rational) >= lphs * (1 - 1e-4)


def test_remark2_failures_refused_and_fixed() -> None:
    """(.1, 8, .5) and (.1, 10, .5): the paper's (2D+1)δ* is false; dpnoise refuses α*."""
    for D, exact, paper in [(8, 0.0414505, 0.0387049), (10, 0.0250503, 0.0168118)]:
        E = exp_lower(0.5)
        e = Fraction(1, 10)
        a = cf.paper_alpha(E, e, D, check=False).alpha
        hs = float(cf.hockey_delta(cf.pmf_from_alpha(e, a), E))
        assert rel(hs, exact) < 1e-5 and hs > paper  # the erratum, reproduced
        with pytest.raises(ParameterError):
            CountNoise(epsilon=0.5, D=D, eta=0.1)
        fixed = CountNoise.optimal(epsilon=0.5, D=D, eta=0.1)
        rep = verify(fixed)
        assert rep.passed and rep.delta_at(0.5) < paper


def _brute_force(p: list[Fraction], E: Fraction) -> Fraction:
    """max over all output sets S of P_n(S) − E P_{n+1}(S), both orders (exponential)."""
    n = len(p)
    P = [*p, Fraction(0)]
    Q = [Fraction(0), *p]
    best = Fraction(0)
    for r in range(n + 2):
        for S in itertools.combinations(range(n + 1), r):
            best = max(best, sum(P[i] - E * Q[i] for i in S), sum(Q[i] - E * P[i] for i in S))
    return best


@pytest.mark.parametrize("eps,D,eta", [(1.1, 3, 0.5), (0.5, 2, 0.3), (2.18, 4, 0.8)])
def test_hockey_equals_brute_force(eps, D, eta) -> None:
    m = CountNoise(epsilon=eps, D=D, eta=eta, method="geometric")
    assert cf.hockey_delta(m.pmf_rational, m.E_lo) == _brute_force(list(m.pmf_rational), m.E_lo)


@pytest.mark.parametrize("method", ["paper", "optimal", "geometric"])
@pytest.mark.parametrize("eps,D,eta", [(2.18, 6, 0.8), (1.1, 8, 0.5), (2.2, 10, 0.3),
                                       (0.5, 3, 0.6)])
def test_verifier_on_every_pmf(method, eps, D, eta) -> None:
    m = CountNoise(epsilon=eps, D=D, eta=eta, method=method, upper=40)
    rep = verify(m, epsilons=[eps, eps / 2])
    assert rep.passed
    # the claim is tight: reporting 1% less delta would FAIL the verifier
    assert rep.delta_at(eps) > 0.99 * m.guarantee.delta
    assert rep.delta_at(eps / 2) <= m.delta_at(eps / 2) * (1 + 1e-9) + 1e-14
    assert m.guarantee.delta - float(m.delta_exact) <= 1e-13


def test_paper_delta_is_not_a_dp_delta() -> None:
    """δ* (per outcome) under-reports: the verifier's δ is far above it."""
    m = CountNoise(epsilon=1.1, D=8, eta=0.5)
    assert verify(m).delta_at(1.1) > 5 * float(m.delta_tilde)


def test_quantised_pmf_is_what_is_sampled() -> None:
    m = CountNoise(epsilon=2.18, D=6, eta=0.8)
    assert sum(m.weights) == 1 << 64
    assert m.weights == tuple(m.table.exact_weights())
    assert list(m.weights) == list(reversed(m.weights))
    assert abs(m.delta_exact - m.delta_rational) < Fraction(100, 1 << 64)
    x = m.release(np.full(200_000, 1000), rng=SeededRandom(7)) - 1000
    obs = np.bincount(x + 6, minlength=13)
    exp = np.array(m.weights, dtype=float) / 2.0**64 * x.size
    keep = exp > 0
    assert np.all(obs[~keep] == 0)
    chi2 = float(((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum())
    assert chi2 < 25  # df = 6


@pytest.mark.parametrize("eps,D,delta,eta_exact", [
    (1.1, 8, 1e-3, 0.50101969), (2.2, 8, 5e-7, 0.80049912), (2.2, 4, 1e-3, 0.80069852)])
def test_from_delta_reference(eps, D, delta, eta_exact) -> None:
    m = CountNoise.from_delta(epsilon=eps, delta=delta, D=D)
    assert abs(float(m.eta) - eta_exact) < 2e-8
    assert m.delta_exact <= Fraction(delta)
    bigger = CountNoise(epsilon=eps, D=D, eta=m.eta + Fraction(1, 1 << 30))
    assert bigger.delta_exact > Fraction(delta)  # largest eta, to the grid


@pytest.mark.parametrize("eps,D,delta", [(1.1, 6, 1e-3), (1.1, 4, 1e-3), (1.5, 6, 1e-6)])
def test_from_delta_infeasible(eps, D, delta) -> None:
    with pytest.raises(ParameterError, match="infeasible"):
        CountNoise.from_delta(epsilon=eps, delta=delta, D=D)


def test_optimal_calibration_dominates() -> None:
    p = CountNoise.from_delta(epsilon=0.5, delta=0.05, D=10, method="paper")
    o = CountNoise.from_delta(epsilon=0.5, delta=0.05, D=10, method="optimal")
    assert o.eta >= p.eta and o.delta_exact <= Fraction(0.05)


def test_smallest_support_and_from_eta() -> None:
    m = CountNoise.smallest_support(epsilon=1.1, delta=1e-3)
    assert m.D == 8 and m.delta_exact <= Fraction(1, 1000)
    with pytest.raises(ParameterError):
        CountNoise.from_delta(epsilon=1.1, delta=1e-3, D=7)
    f = CountNoise.from_eta(epsilon=2.18, eta=0.8)  # above the knee: saturates at k* = 3
    assert f.D == 3 and f.delta_exact == CountNoise(epsilon=2.18, D=9, eta=0.8).delta_exact
    with pytest.raises(ParameterError, match="tanh"):
        CountNoise.from_eta(epsilon=1.1, eta=0.5)
    g = CountNoise.from_eta(epsilon=1.1, eta=0.5, delta=1e-4)
    assert g.delta_exact <= Fraction(1, 10_000)
    assert CountNoise(epsilon=1.1, D=g.D - 1, eta=0.5).delta_exact > Fraction(1, 10_000)


def test_knee_bound() -> None:
    """Any symmetric noise with P(Z=0)=η has δ >= η − (E−1)(1−η)/2 (spec §2 fact 1)."""
    for eta in (0.55, 0.7, 0.9):
        m = CountNoise.optimal(epsilon=1.1, D=6, eta=eta)
        E = m.E_lo
        assert m.delta_exact >= m.eta - (E - 1) * (1 - m.eta) / 2 - Fraction(1, 1 << 60)


def test_boundary_modes() -> None:
    rng = SeededRandom(3)
    m = CountNoise(epsilon=2.18, D=6, eta=0.8, lower=0, upper=10)
    y = m.release(np.array([0, 1, 10, 9] * 5000), rng=rng)
    assert y.dtype == np.int64 and y.min() >= 0 and y.max() <= 10
    c = CountNoise(epsilon=2.18, D=6, eta=0.8, lower=0, upper=10, boundary="clip")
    y = c.release(np.array([0, 1, 10] * 5000), rng=rng)
    assert y.min() >= 0 and y.max() <= 10
    assert verify(c).passed and verify(m).passed
    raw = CountNoise(epsilon=2.18, D=6, eta=0.8, boundary="none")
    assert raw.release(np.zeros(5000, dtype=int), rng=rng).min() < 0
    with pytest.raises(ParameterError, match="clip"):
        CountNoise(epsilon=2.18, D=6, eta=0.8, upper=4, boundary="clip")
    assert m.noise(0).pmf(0) > 0.8 and abs(m.noise(5).mean() - 5) < 1e-12


@pytest.mark.parametrize("kw", [
    {"epsilon": 0.0}, {"epsilon": float("nan")}, {"epsilon": -1}, {"D": 0}, {"D": 2.0},
    {"D": True}, {"eta": 0}, {"eta": 1}, {"eta": float("nan")}, {"method": "x"},
    {"boundary": "wrap"}, {"lower": 5, "upper": 3}])
def test_invalid_parameters(kw) -> None:
    base = {"epsilon": 1.0, "D": 3, "eta": 0.5}
    with pytest.raises(ParameterError):
        CountNoise(**{**base, **kw})


def test_invalid_counts_raise_before_randomness() -> None:
    m = CountNoise(epsilon=1.0, D=3, eta=0.5, upper=100)
    for bad in ([-1], [101], [1.5], [float("nan")], [True]):
        with pytest.raises(ParameterError):
            m.release(np.array(bad))


def test_seeded_reproducible_and_scalar() -> None:
    m = CountNoise(epsilon=1.0, D=3, eta=0.5)
    a = m.release(np.arange(100), rng=SeededRandom(1))
    b = m.release(np.arange(100), rng=SeededRandom(1))
    assert np.array_equal(a, b)
    assert isinstance(m.release(5), int)
