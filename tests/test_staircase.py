"""Staircase (paper 004): spec reference numbers, exact lattice law, verifier, errata."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpnoise import ParameterError, SeededRandom, verify
from dpnoise.laws.staircase import StaircaseDensity, min_variance, optimal_gamma
from dpnoise.mechanisms.staircase import Staircase

# spec 004 §3 reference table (Δ = 1): ε -> (d_var, Var_min, d_abs, E|X|_min, d_CI95, CI95 size)
REF = {
    0.1: (0.491666667438, 199.916680561, 0.487502603516, 9.99583454829, 0.955248874559,
          59.9104977491),
    0.5: (0.458335691802, 7.91701721537, 0.437823499114, 1.97931758165, 0.989176710339,
          11.9783534207),
    1.0: (0.416737434929, 1.91810353124, 0.377540668798, 0.959517375667, 0.993262942356,
          5.98652588471),
    2.0: (0.335130029679, 0.422732849047, 0.26894142137, 0.42545906412, 0.267129547511,
          2.53425909502),
    5.0: (0.144482174864, 0.0297110241364, 0.0758581800212, 0.0826418349275, 0.12888944322,
          0.25777888644),
}


@pytest.mark.parametrize("eps", sorted(REF))
def test_reference_table(eps: float) -> None:
    dv, vmin, da, amin, dci, ci = REF[eps]
    assert optimal_gamma(eps, "variance") == pytest.approx(dv, rel=1e-9)
    assert StaircaseDensity(epsilon=eps, gamma=dv).var() == pytest.approx(vmin, rel=1e-9)
    assert min_variance(eps) == pytest.approx(vmin, rel=1e-9)
    assert optimal_gamma(eps, "mean_abs") == pytest.approx(da, rel=1e-9)
    assert StaircaseDensity(epsilon=eps, gamma=da).mean_abs() == pytest.approx(amin, rel=1e-9)
    assert optimal_gamma(eps, "interval", 0.95) == pytest.approx(dci, rel=1e-8)
    assert StaircaseDensity(epsilon=eps, gamma=dci).interval_size(0.95) == pytest.approx(
        ci, rel=1e-8)


def test_test_vectors_and_corrected_theorem9() -> None:
    s = StaircaseDensity(epsilon=1.0, gamma=optimal_gamma(1.0))
    assert pytest.approx(0.500643756881, rel=1e-10) == s.M0
    assert float(s.pdf(0.5)) == pytest.approx(0.184176545507, rel=1e-10)
    want = [0.600128751376, 0.723972006661, 0.912005928990, 0.0199084171936, 0.999977300035]
    np.testing.assert_allclose(s.cdf([0.2, 0.5, 1.7, -3.2, 10]), want, rtol=1e-10)
    np.testing.assert_allclose(s.ppf([0.75, 0.9]), [0.641320890061, 1.52280317769], rtol=1e-10)
    # corrected Thm 9: the first step outside the plateau is M0·e^-ε, not M0 (erratum)
    assert float(s.pdf(s.d + 0.01)) == pytest.approx(s.M0 * math.exp(-1.0))
    # γ = 0 and γ = 1 are the same law
    a, b = StaircaseDensity(epsilon=0.7, gamma=0.0), StaircaseDensity(epsilon=0.7, gamma=1.0)
    assert a.var() == pytest.approx(b.var()) and a.mean_abs() == pytest.approx(b.mean_abs())


def test_small_epsilon_series_is_continuous() -> None:
    lo, hi = optimal_gamma(0.1 - 1e-9), optimal_gamma(0.1)
    assert abs(lo - hi) < 1e-9
    assert optimal_gamma(1e-8) == pytest.approx(0.5, abs=1e-8)


def test_laplace_comparison_1d_gain_is_small() -> None:
    s = StaircaseDensity(epsilon=1.0, gamma=optimal_gamma(1.0))
    assert s.var() == pytest.approx(1.918104, abs=1e-6)  # vs Laplace 2
    x = np.linspace(0, 20, 4001)
    lap = 1 - np.exp(-x)  # P(|Lap(1)| <= x)
    stair = 1 - 2 * s.sf(x)
    assert np.all(stair >= lap - 1e-12)  # §2: mass only moves toward 0


@pytest.mark.parametrize("eps,crit", [(1.0, "variance"), (0.3, "mean_abs"), (2.0, "interval"),
                                      (5.0, "variance")])
def test_verifier_loss_within_guarantee(eps: float, crit: str) -> None:
    m = Staircase(epsilon=eps, sensitivity=1.0, criterion=crit, grid=2.0**-7)
    rep = verify(m, epsilons=[eps])
    assert rep.passed
    assert rep.epsilon <= eps
    assert rep.epsilon == pytest.approx(m.exact_loss, abs=1e-11)
    # calibration is tight: the budget is used up to 1e-4 relative
    assert rep.epsilon > eps * (1 - 1e-4)


def test_minimality_less_noise_breaks_epsilon() -> None:
    eps = 1.0
    steeper = Staircase(epsilon=eps * 1.001, sensitivity=1.0, grid=2.0**-7)
    assert verify(steeper.privacy_model(), epsilons=[eps]).epsilon > eps


def test_grid_rounding_accounted_for_non_dyadic_sensitivity() -> None:
    m = Staircase(epsilon=1.0, sensitivity=0.3, grid=2.0**-6)
    assert m.shift_steps == math.ceil(0.3 * 64)
    rep = verify(m, epsilons=[1.0])
    assert rep.passed
    # the same law with a shift one cell too small would be checked with fewer steps:
    # neighbours x, x + 0.3 really move the index by shift_steps cells
    idx = np.floor(np.array([0.0, 0.3]) / m.grid + 0.5)
    assert idx[1] - idx[0] <= m.shift_steps


def test_outputs_on_grid_and_chi_square() -> None:
    m = Staircase(epsilon=1.0, sensitivity=1.0, grid=2.0**-5)
    x = 3.14159
    y = np.asarray(m.release(np.full(40000, x), rng=SeededRandom(7)))
    law = m.noise(x)
    cells = (y - law.center) / m.grid
    assert np.all(np.floor(cells) + 0.5 == cells)  # half-offset grid around the rounded x
    edges = np.concatenate([[-np.inf], np.linspace(-4, 4, 33), [np.inf]])
    counts = np.histogram(y - law.center, bins=edges)[0]
    probs = np.diff(np.concatenate([[0.0], law.cdf(law.center + edges[1:-1]), [1.0]]))
    chi = stats.chisquare(counts, probs * counts.sum())
    assert chi.pvalue > 1e-4
    assert np.var(y) == pytest.approx(law.var(), rel=0.03)
    assert np.mean(np.abs(y - law.center)) == pytest.approx(law.mean_abs(), rel=0.02)


def test_lattice_law_close_to_ideal_and_consistent() -> None:
    m = Staircase(epsilon=1.0, sensitivity=1.0)
    law = m.noise()
    assert law.var() == pytest.approx(1.918104, rel=2e-4)
    q = np.array([0.01, 0.3, 0.5, 0.77, 0.999])
    y = law.ppf(q)
    assert np.all(law.cdf(y) >= q) and np.all(law.cdf(y - m.grid) < q)
    total = np.exp(law.logpmf((np.arange(-200000, 200000) + 0.5) * m.grid)).sum()
    assert total == pytest.approx(1.0, abs=1e-6)


def test_seeded_reproducible() -> None:
    m = Staircase(epsilon=0.5, sensitivity=2.0)
    a = m.release(np.arange(10.0), rng=SeededRandom(3))
    b = m.release(np.arange(10.0), rng=SeededRandom(3))
    np.testing.assert_array_equal(a, b)
    assert isinstance(m.release(1.0), float)


@pytest.mark.parametrize("kw", [
    {"epsilon": 0.0}, {"epsilon": -1.0}, {"epsilon": math.nan}, {"epsilon": math.inf},
    {"epsilon": 50.0}, {"epsilon": 1e-6}, {"sensitivity": 0.0}, {"sensitivity": math.nan},
    {"criterion": "median"}, {"level": 1.0}, {"level": 0.0}, {"grid": 0.3},
])
def test_bad_parameters(kw: dict) -> None:
    args = {"epsilon": 1.0, "sensitivity": 1.0, **kw}
    with pytest.raises(ParameterError):
        Staircase(**args)


def test_bad_true_value() -> None:
    m = Staircase(epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ParameterError):
        m.release([1.0, math.nan])
    with pytest.raises(ParameterError):
        StaircaseDensity(epsilon=1.0, gamma=1.5)


@pytest.mark.parametrize("joint", [False, True])
def test_both_samplers_exact_and_verified(joint: bool) -> None:
    """The 3-word (product) and 2-word (joint table) samplers: exact loss = verifier, KS."""
    from dpnoise.exact.ratio_geometric import RatioGeometric
    from dpnoise.exact.staircase import LatticeStaircase
    from dpnoise.mechanisms.staircase import LatticeStaircaseNoise
    from dpnoise.verify import AdditiveLattice

    law = LatticeStaircase(RatioGeometric(23, 16, 0.999), 48, 20, joint=joint)
    assert law.words_per_draw == (2 if joint else 3)
    model = AdditiveLattice(logpmf=lambda z: law.log_magnitude(np.where(z >= 0, z, -z - 1))
                            - math.log(2), max_shift=48, period=law.period)
    rep = verify(model, epsilons=[1.0])
    assert rep.epsilon == pytest.approx(law.exact_loss, abs=1e-11)
    assert rep.epsilon <= 1.0
    z = law.signed_odd(SeededRandom(11), 50000)
    assert np.all(z % 2 == 1)
    noise = LatticeStaircaseNoise(law, 1.0)
    y = z / 2.0
    edges = np.concatenate([[-np.inf], np.arange(-200, 201, 8.0), [np.inf]])
    counts = np.histogram(y, bins=edges)[0]
    probs = np.diff(np.concatenate([[0.0], noise.cdf(edges[1:-1]), [1.0]]))
    keep = probs * counts.sum() > 5
    chi = stats.chisquare(counts[keep], probs[keep] * counts.sum() / probs[keep].sum()
                          * counts[keep].sum() / counts.sum())
    assert chi.pvalue > 1e-4
    assert np.var(y) == pytest.approx(noise.var(), rel=0.03)


def test_default_uses_fast_joint_table_at_moderate_epsilon() -> None:
    for eps in (0.05, 0.3, 1.0, 5.0):
        for sens in (1.0, 1.01, 3.0):
            m = Staircase(epsilon=eps, sensitivity=sens)
            assert m.law.joint and m.law.words_per_draw == 2, (eps, sens)
    assert not Staircase(epsilon=0.001, sensitivity=1.0).law.joint  # 3-word tables


def test_block_table_offsets_are_uniform_inside_blocks() -> None:
    """Joint table: cells grouped in aligned blocks; the block's low word bits pick the
    cell.  The exact per-cell law is flat inside a block and sums to the block's weight."""
    from dpnoise.exact.ratio_geometric import RatioGeometric
    from dpnoise.exact.staircase import LatticeStaircase

    law = LatticeStaircase(RatioGeometric(23, 16, 0.999), 3000, 1234, joint=True)
    assert law.table_size < 16 * 40
    p = law.period_prob
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    z = law.signed_odd(SeededRandom(4), 400000)
    K = (np.abs(z) - 1) // 2
    inside = law.period > K
    o = K[inside]
    # cells 0..1233 (weight 1) vs 1234..2999 (weight e^-0.999) of step 0
    lo = np.mean((o >= 0) & (o < 1234)) / inside.mean()
    hi = np.mean((o >= 1234) & (o < 3000)) / inside.mean()
    assert lo == pytest.approx(p[:1234].sum() / p.sum(), abs=0.004)
    assert hi == pytest.approx(p[1234:3000].sum() / p.sum(), abs=0.004)
    # a block of 1024 cells [0, 1024): its two halves are equally likely
    a = np.mean(o < 512)
    b = np.mean((o >= 512) & (o < 1024))
    assert a == pytest.approx(b, abs=0.005)


@pytest.mark.parametrize("eps,sens", [(0.001, 1.01), (0.01, 1.01), (0.3, 1.01), (1.0, 3.0),
                                      (20.0, 1e-6), (2e-5, 1.0)])
def test_default_grid_keeps_released_law_close_to_ideal(eps: float, sens: float) -> None:
    """Grid rounding (ceil(Δ/L) cells per step) and the dyadic ratio cost < 0.4% variance."""
    m = Staircase(epsilon=eps, sensitivity=sens)
    assert m.exact_loss <= eps
    assert m.noise().var() / m.ideal.var() - 1 < 4e-3
