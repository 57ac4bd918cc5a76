"""Multivariate staircase (Soria-Comas & Domingo-Ferrer 2013 §6, Thm 13): cells, verifier."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnoise import ParameterError, PrecisionError, SeededRandom, verify
from dpnoise.exact.nested_levels import NestedLevels
from dpnoise.exact.ratio_geometric import RatioGeometric
from dpnoise.exact.words import index_probability, mulhi64
from dpnoise.laws.staircase import (
    BoxStaircaseDensity,
    L1StaircaseDensity,
    laplace_l1_region,
    optimal_lambda,
)
from dpnoise.mechanisms.staircase_l1 import L1Staircase
from dpnoise.mechanisms.staircase_multivariate import MultivariateStaircase


def test_example2_reference_values() -> None:
    b = BoxStaircaseDensity(epsilon=1.0, sensitivities=(1, 10), plateau=(0.1, 1))
    assert pytest.approx(0.018040566, rel=1e-7) == b.M
    np.testing.assert_allclose(b.var(), [4.033805, 403.380480], rtol=1e-6)
    # Table 4 recomputed (the printed β = 6.99 is a typo for 6.69; sizes are 40 t²)
    for p, t, size in [(0.99, 6.688548, 1789.467), (0.95, 4.787717, 916.890),
                       (0.90, 3.908395, 611.022)]:
        assert b.region_scale(p) == pytest.approx(t, abs=2e-6)
        assert b.region_size(p) == pytest.approx(size, abs=2e-3)
    # Table 3 (two Laplace(11) coordinates): α and 2α²
    for p, a in [(0.99, 73.021873), (0.95, 52.182510), (0.90, 42.786922)]:
        assert laplace_l1_region(1.0, 11.0, p) == pytest.approx(a, abs=2e-6)


def test_variance_optimal_lambda_and_l1_gain_is_tiny() -> None:
    lam = optimal_lambda(1.0, 2)
    assert lam == pytest.approx(0.697533, abs=2e-6)
    box = BoxStaircaseDensity(epsilon=1.0, sensitivities=(1, 1), plateau=(lam, lam))
    assert box.var()[0] == pytest.approx(3.9708, abs=1e-4)
    l1 = L1StaircaseDensity(epsilon=1.0, sensitivity=11.0, dim=2, lam=lam)
    assert l1.var() == pytest.approx(240.24, abs=0.01)  # vs 242 for Laplace(11)


def test_mulhi_and_index_probability_exact() -> None:
    rng = np.random.default_rng(0)
    w = rng.integers(0, 2**64 - 1, size=1000, dtype=np.uint64, endpoint=True)
    n = rng.integers(1, 2**48, size=1000, dtype=np.uint64)
    got = mulhi64(w, n)
    want = [(int(a) * int(b)) >> 64 for a, b in zip(w, n, strict=True)]
    assert [int(x) for x in got] == want
    n = 7
    probs = index_probability(np.arange(n), np.full(n, n))
    assert probs.sum() == pytest.approx(1.0, abs=1e-15)
    assert probs.max() / probs.min() - 1 <= n / 2.0**63


def test_nested_levels_pmf_matches_ideal() -> None:
    geo = RatioGeometric(49, 34)
    poly = [(1 + 4 * i) * (2 + 8 * i) for i in range(3)]
    lv = NestedLevels(poly, geo)
    r = 2.0 ** (-49 / 34)
    i = np.arange(200)
    ideal = r**i * (1 + 4 * i) * (2 + 8 * i)
    ideal /= ideal.sum()
    got = lv.pmf(200)
    keep = ideal > 1e-250
    # the sampled pmf deviates from the ideal by at most the bound η used in calibration
    assert np.max(np.abs(np.log(got[keep] / ideal[keep]))) <= lv.eta + 1e-12
    assert lv.eta < 1e-5
    s = lv.sample(SeededRandom(2), 100000)
    assert s.mean() == pytest.approx((i * ideal).sum(), rel=0.01)


def test_negative_h_coefficients_rejected() -> None:
    with pytest.raises(ParameterError):
        NestedLevels([5, 6, 7], RatioGeometric(1, 1))  # plateau larger than a step


@pytest.mark.parametrize("mech", [
    MultivariateStaircase(epsilon=1.0, sensitivities=(1, 2), lam=0.3, grid_bits=2),
    MultivariateStaircase(epsilon=0.5, sensitivities=(0.75, 3), grid_bits=2),
    L1Staircase(epsilon=1.0, sensitivity=1.0, grid_bits=2),
    L1Staircase(epsilon=2.0, sensitivity=3.0, lam=0.0, grid_bits=1),
], ids=["box", "box-optlam", "l1", "l1-lam0"])
def test_verifier_on_cells(mech) -> None:
    rep = verify(mech, epsilons=[mech.epsilon])
    assert rep.passed
    assert rep.epsilon <= mech.loss_bound + 1e-12 <= mech.epsilon
    assert rep.epsilon > mech.epsilon * 0.99  # the budget is used


def test_l1_cells_with_box_shifts_would_fail() -> None:
    """The verifier is not vacuous: the L1 law is NOT ε-DP for box-shaped neighbours."""
    from dpnoise.verify import AdditiveGrid

    m = L1Staircase(epsilon=1.0, sensitivity=1.0, grid_bits=2)
    S = m.S1
    a = np.arange(-S, S + 1)
    box = np.stack(np.meshgrid(a, a, indexing="ij"), axis=-1).reshape(-1, 2)
    model = AdditiveGrid(logpmf=m.cell_logpmf, shifts=box, window=m.window(3))
    assert verify(model, epsilons=[1.0]).epsilon > 1.5


def test_box_release_moments_and_grid() -> None:
    m = MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10), lam=0.1)
    x = np.array([3.3, -7.1])
    y = m.release(np.tile(x, (100000, 1)), rng=SeededRandom(5))
    law = m.noise(x)
    cells = (y - law.center) / m.grids - 0.5
    assert np.all(np.floor(cells) == cells)
    np.testing.assert_allclose(y.var(axis=0), law.var(), rtol=0.03)
    np.testing.assert_allclose(law.var(), m.ideal().var(), rtol=5e-3)
    # every sampled cell has positive exact probability
    assert np.all(np.isfinite(law.logpmf(y[:200])))


def test_l1_release_moments() -> None:
    m = L1Staircase(epsilon=1.0, sensitivity=11.0)
    y = m.release(np.zeros((100000, 2)), rng=SeededRandom(6))
    np.testing.assert_allclose(y.var(axis=0), m.var(), rtol=0.03)
    assert m.var()[0] == pytest.approx(240.24, rel=5e-3)
    # empirical L1 cell distribution: P(level 0) matches the exact pmf sum
    cells = (y / m.grids - 0.5).astype(np.int64)
    lev = m.cell_level(cells)
    lv = m.levels.pmf(400)
    n = m.Z0 + np.arange(400) * m.S1
    p0 = float((lv * np.where(n > 0, m.Z0 * (m.Z0 + 1) / (n * (n + 1.0)), 0)).sum())
    assert np.mean(lev == 0) == pytest.approx(p0, abs=0.006)


@pytest.mark.parametrize("kw", [
    {"epsilon": 0.0}, {"epsilon": math.nan}, {"sensitivities": (1, 0)},
    {"sensitivities": (1, math.inf)}, {"sensitivities": ()}, {"lam": 1.5}, {"lam": -0.1},
    {"grid_bits": 0}, {"grid_bits": True}, {"grid_bits": 2.5}, {"grid_bits": "4"},
])
def test_bad_parameters(kw: dict) -> None:
    args = {"epsilon": 1.0, "sensitivities": (1, 2), **kw}
    with pytest.raises(ParameterError):
        MultivariateStaircase(**args)
    if "grid_bits" in kw:  # the 2-D L1 staircase checks it the same way
        with pytest.raises(ParameterError, match="grid_bits"):
            L1Staircase(epsilon=1.0, sensitivity=1.0, **kw)


def test_a_numpy_integer_grid_bits_is_an_integer() -> None:
    a = MultivariateStaircase(epsilon=1.0, sensitivities=(1, 2), grid_bits=np.int64(3))
    b = MultivariateStaircase(epsilon=1.0, sensitivities=(1, 2), grid_bits=3)
    assert np.array_equal(a.grids, b.grids)
    assert L1Staircase(epsilon=1.0, sensitivity=1.0, grid_bits=np.int8(3)).grids[0] == \
        L1Staircase(epsilon=1.0, sensitivity=1.0, grid_bits=3).grids[0]


def test_bad_inputs() -> None:
    with pytest.raises(ParameterError):
        L1Staircase(epsilon=1.0, sensitivity=1.0, dim=3)
    m = MultivariateStaircase(epsilon=1.0, sensitivities=(1, 2))
    with pytest.raises(ParameterError):
        m.release([1.0, 2.0, 3.0])
    with pytest.raises(ParameterError):
        m.release([1.0, math.nan])
    assert issubclass(PrecisionError, Exception)


def test_region_sizes_consistent_with_samples() -> None:
    box = MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10), lam=0.1)
    y = box.release(np.zeros((50000, 2)), rng=SeededRandom(8))
    t = box.ideal().region_scale(0.9)
    inside = np.all(np.abs(y) <= t * box.sensitivities, axis=1)
    assert inside.mean() == pytest.approx(0.9, abs=0.006)
    assert box.region_size(0.9) == pytest.approx(611.022, abs=2e-3)
    l1 = L1Staircase(epsilon=1.0, sensitivity=11.0)
    y = l1.release(np.zeros((50000, 2)), rng=SeededRandom(9))
    t = l1.ideal().region_scale(0.95)
    assert np.mean(np.abs(y).sum(axis=1) <= t * 11.0) == pytest.approx(0.95, abs=0.005)
    assert l1.region_size(0.95) == pytest.approx(2 * (t * 11.0) ** 2, rel=1e-12)
    assert l1.region_size(0.95) < 2 * 52.18250970229636**2  # Laplace(11) needs 5446
    assert np.all(box.in_output_set(box.release(np.ones((10, 2)), rng=SeededRandom(1))))


def test_less_noise_breaks_the_claim_on_cells() -> None:
    """Calibrated for a 2% larger ε (steeper levels), the exact cell law exceeds ε."""
    eps = 1.0
    for steeper in (MultivariateStaircase(epsilon=eps * 1.02, sensitivities=(1, 2), lam=0.3,
                                          grid_bits=2),
                    L1Staircase(epsilon=eps * 1.02, sensitivity=1.0, grid_bits=2)):
        assert verify(steeper.privacy_model(), epsilons=[eps]).epsilon > eps


def _reference_release(m, x: np.ndarray, seed: int) -> np.ndarray:
    """The release written with the reference samplers (levels.sample, then _uniform)."""
    from dpnoise.grid import to_index

    rng = SeededRandom(seed)
    c = np.stack([to_index(x[:, k], float(m.grids[k])) for k in range(m.dim)], axis=1)
    out = np.empty(x.shape)
    for s in range(0, x.shape[0], 1 << 13):
        e = min(s + (1 << 13), x.shape[0])
        I = m.levels.sample(rng, e - s)
        out[s:e] = (2 * (c[s:e] + m._uniform(rng, I)) + 1) * (m.grids / 2)[None, :]
    return out


@pytest.mark.parametrize("mech", [
    MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10), lam=0.1),
    MultivariateStaircase(epsilon=0.3, sensitivities=(1, 2, 3)),
    L1Staircase(epsilon=1.0, sensitivity=1.0),
])
def test_fused_kernel_equals_reference_samplers(mech) -> None:
    """The fused array kernel reads the same words and returns the same vectors as the
    reference samplers (NestedLevels.sample, _uniform), across chunk boundaries."""
    x = np.random.default_rng(2).uniform(-50, 50, ((1 << 13) + 77, mech.dim))
    np.testing.assert_array_equal(mech.release(x, rng=SeededRandom(8)),
                                  _reference_release(mech, x, 8))
    w = SeededRandom(1).words(mech.levels.words_per_draw * 1000 + 8)
    I = mech.levels.sample_words(SeededRandom(2), w, 1000)
    np.testing.assert_array_equal(I, mech.levels.sample(SeededRandom(1), 1000))
