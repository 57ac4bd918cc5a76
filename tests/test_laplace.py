"""What is special about the lattice Laplace: exact calibration, grid rounding, the float leak."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpnoise import ClampedLaplace, Laplace, ParameterError, PrecisionError, SeededRandom, verify
from dpnoise.exact.geometric import BlockGeometric
from dpnoise.grid import grid_sensitivity
from dpnoise.mechanisms.laplace import naive_float_laplace
from dpnoise.params import LN2


@given(eps=st.floats(0.05, 20.0), sens=st.floats(1e-3, 1e3))
def test_calibration_is_exact_and_minimal(eps: float, sens: float) -> None:
    m = Laplace(epsilon=eps, sensitivity=sens)
    assert m.exact_loss <= eps - 1e-12 + 1e-15
    # one block shorter would exceed epsilon: the calibration is the tightest of its family
    assert BlockGeometric(m.block.M - 1).step_loss(m.shift_steps) + 1e-12 > eps
    assert 0 <= m.scale_inflation < 2e-3
    assert m.guarantee.epsilon == eps and m.guarantee.delta == 0


@pytest.mark.parametrize(("eps", "sens"), [(1.0, 1.0), (0.3, 2.5), (5.0, 0.01)])
def test_verifier_recomputes_the_loss_from_the_sampled_table(eps: float, sens: float) -> None:
    m = Laplace(epsilon=eps, sensitivity=sens)
    report = verify(m)
    assert report.passed
    assert report.epsilon == pytest.approx(m.exact_loss, abs=1e-12)


def test_grid_rounding_sensitivity_is_honest() -> None:
    # Δ/L an integer: rounding half up commutes with integer shifts -> exactly Δ/L cells
    assert grid_sensitivity(1.0, 2.0**-12) == 4096
    assert grid_sensitivity(3.0, 2.0**-10) == 3072
    assert grid_sensitivity(0.3, 2.0**-4) == math.ceil(0.3 * 16)
    m = Laplace(epsilon=1.0, sensitivity=1.0, grid=2.0**-12)
    x = np.array([0.5 * 2.0**-12, 1.0 + 0.5 * 2.0**-12, 0.123, 1.123])
    idx = np.floor(x / m.grid + 0.5)
    assert idx[1] - idx[0] == 4096 and idx[3] - idx[2] <= 4096


def test_naive_float_laplace_leaks_but_dpnoise_does_not() -> None:
    """Reproduction A3: numpy's x + laplace() outputs from x=0 are often impossible from x=1."""
    gen = np.random.default_rng(20130101)
    replica_gen = np.random.default_rng(20130101)
    outputs = naive_float_laplace(np.zeros(400), 1.0, gen)
    uniforms = replica_gen.random(400)  # numpy's laplace consumes one next_double per draw

    def numpy_laplace(u: float, loc: float) -> float:  # numpy's C code, bit for bit
        if u >= 0.5:
            return loc - math.log(2.0 - u - u)
        return loc + math.log(u + u)

    replica = [numpy_laplace(u, 0.0) for u in uniforms]
    assert replica == outputs.tolist()  # the replica is exact, so reachability can be decided

    def reachable_from(y: float, loc: float) -> bool:
        lo, hi = 1, (1 << 53) - 1  # U = z·2^-53, output increasing in z
        while lo < hi:
            mid = (lo + hi) // 2
            if numpy_laplace(mid * 2.0**-53, loc) < y:
                lo = mid + 1
            else:
                hi = mid
        return any(numpy_laplace(z * 2.0**-53, loc) == y for z in (lo - 1, lo, lo + 1))

    impossible = sum(not reachable_from(y, 1.0) for y in outputs)
    assert impossible / outputs.size > 0.6  # reference: 81.4% on 20,000 draws

    # dpnoise: every output from x = 0 has positive probability under x = 1
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    y = m.release(np.zeros(20_000), rng=SeededRandom(1))
    assert np.all(np.isfinite(m.noise(1.0).logpmf(y)))
    assert np.all(np.isfinite(m.noise(0.0).logpmf(y)))


def test_release_lies_on_half_offset_grid_and_is_exact() -> None:
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    x = np.array([0.0, 1e6, -123.456, 2.0**30])
    y = m.release(x, rng=SeededRandom(2))
    assert np.all(m.in_output_set(y))
    half = y / (m.grid / 2)
    assert np.all(half == np.round(half))


def test_too_large_true_value_is_refused() -> None:
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    source = SeededRandom(1)
    before = source.words(1)
    with pytest.raises(PrecisionError, match="grid"):
        m.release([0.0, 1e300], rng=source)
    assert SeededRandom(1).words(2)[1] == source.words(1)[0] != before[0]  # nothing drawn


def test_tiny_epsilon_uses_coarser_grid_or_refuses() -> None:
    m = Laplace(epsilon=1e-3, sensitivity=1.0)
    assert m.block.M <= 1 << 20 and m.exact_loss <= 1e-3
    with pytest.raises(ParameterError, match="grid"):
        Laplace(epsilon=1e-3, sensitivity=1.0, grid=2.0**-20)


def test_noise_law_moments_match_continuous_laplace_closely() -> None:
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    law = m.noise()
    assert law.var() == pytest.approx(2 * m.scale**2, rel=1e-6)
    assert law.mean_abs() == pytest.approx(m.scale, rel=1e-6)
    lo, hi = law.interval(0.95)
    assert hi == pytest.approx(-lo) and hi == pytest.approx(m.scale * math.log(20), rel=1e-3)


def test_clamped_laplace_stays_in_range_and_piles_on_ends() -> None:
    m = ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    y = m.release(np.zeros(10_000), rng=SeededRandom(5))
    assert y.min() == 0.0 and y.max() <= 10.0
    law = m.noise(0.0)
    assert np.mean(y == 0.0) == pytest.approx(float(law.pmf(0.0)), abs=0.02)
    assert law.pmf(0.0) == pytest.approx(0.5, abs=1e-3)
    assert m.mean_abs_error(0.0) == pytest.approx(law.mean_abs_error(0.0))
    assert verify(m).passed


def test_clamped_upper_end_mass_is_exact_in_the_far_tail() -> None:
    """P(Y >= upper) was 1 - cdf: at epsilon 6.8464, sensitivity 2 on [0, 12] the end's
    mass from x = 0 (~1e-18) came out 0, so ``dpnoise verify`` reported an infinite loss and
    FAIL for a mechanism whose real loss (6.825) is below its claim (on [0, 10] with the
    default grid: a loss of 6.870 from float noise)."""
    m = ClampedLaplace(epsilon=6.8464, sensitivity=2.0, lower=0.0, upper=12.0, grid=2.0**-6)
    law = m.laplace.noise(0.0)
    for y in (1.0, 5.0, 9.9):  # the law is symmetric about its centre: P(Y > y) = P(Y < -y)
        below = float(law.cdf(np.nextafter(-y, -np.inf)))
        assert math.isclose(float(law.sf(y)), below, rel_tol=1e-9), y
    report = verify(m, epsilons=[m.guarantee.epsilon])
    assert report.passed and report.epsilon <= m.guarantee.epsilon


def test_constant_block_ratio() -> None:
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    k = np.arange(0, 3 * m.block.M)
    np.testing.assert_allclose(m.block.logpmf(k + m.block.M), m.block.logpmf(k) - LN2, atol=1e-12)
