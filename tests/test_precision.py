"""Gazeau et al. 2013: the corrected ε' calculator, its reference values and its errata."""

from __future__ import annotations

import math

import pytest

from dpnoise import ParameterError, PrecisionError
from dpnoise.laws.finite_precision import (
    aligned_interval,
    analyse,
    delta_t_for,
    delta_t_inverse_cdf,
    delta_t_recommended,
    eps_prime,
    eps_prime_overhead,
    eps_prime_printed,
    grid_for_tolerance,
    mironov_eps_prime,
    mironov_grid,
    mironov_noise_epsilon,
    planar_polar_max_radius,
    rounding_robustness,
)
from dpnoise.reproduce.finite_precision import enumerate_rounded


def test_spec_headline_example() -> None:
    """Worked example: ε = 1 on [−1000, 1000] with L = 2^-20 gives ε' = 1.0000224."""
    rep = analyse(epsilon=1.0, sensitivity=1.0, lower=-1000, upper=1000, grid=2.0**-20)
    assert rep.eps_prime == pytest.approx(1.0000224, abs=5e-8)
    assert rep.delta_t == pytest.approx(2.0**-49 * 3001, rel=1e-6)


# (lower, upper, grid, sampler, bits, ref δt, ref corrected ε', ref printed ε')
ROWS_1D = [
    (-10, 10, 2.0**-10, "inverse-cdf", 53, 1.08e-7, 1.000442, 1.69386),
    (-10, 10, 2.0**-10, "recommended", 53, 5.5e-14, 1 + 2.3e-10, 1.69364),
    (-10, 10, 2.0**-20, "inverse-cdf", 53, 1.08e-7, 1.4598, 1.9492),
    (-5, 5, 2.0**-10, "inverse-cdf", 32, 1.03e-5, 1.0421, 1.7149),
]


@pytest.mark.parametrize(("lo", "hi", "L", "sampler", "bits", "dt", "cor", "pr"), ROWS_1D)
def test_spec_table_1d(lo, hi, L, sampler, bits, dt, cor, pr) -> None:
    rep = analyse(epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi, grid=L, sampler=sampler,
                  bits=bits)
    assert rep.delta_t == pytest.approx(dt, rel=0.02)
    if cor - 1 < 1e-6:
        assert rep.eps_prime - 1 == pytest.approx(cor - 1, rel=0.05)
    else:
        assert rep.eps_prime == pytest.approx(cor, abs=2e-4)
    assert rep.eps_prime_printed == pytest.approx(pr, abs=2e-4)


# 2-D rows use the unsnapped square: D = √2·side, A as in the reference.
ROWS_2D = [
    # eps_g, side, A, sampler, w_err, ref δt, ref corrected ε' (or overhead), printed
    (0.01, 2000.0, 1000.0, "polar", 0.0, 1.53e-3, 0.0224, 0.714),
    (0.01, 2000.0, 1000.0, "polar", 1.5e-4, 1.65e-2, 0.144, 0.777),
    (0.01, 2000.0, 1e6, "recommended", 0.0, 1.4e-8, 0.010000116, 0.708),
    (math.log(4) / 200, 20000.0, 5e6, "recommended", 0.0, 7.1e-8, None, None),
]


@pytest.mark.parametrize(("eg", "side", "A", "sampler", "w_err", "dt", "cor", "pr"), ROWS_2D)
def test_spec_table_2d(eg, side, A, sampler, w_err, dt, cor, pr) -> None:
    got_dt = delta_t_for(sampler, scale=1 / eg, diameter=math.sqrt(2) * side, max_abs=A, dim=2,
                         w_err=w_err)
    assert got_dt == pytest.approx(dt, rel=0.03)
    if cor is None:  # UTM row: ε_g + 5.8e-7 corrected, ε_g + 0.697 printed
        assert eps_prime(eg, 1.0, 1.0, got_dt, 2) - eg == pytest.approx(5.8e-7, rel=0.02)
        assert eps_prime_printed(eg, 1.0, 1.0, got_dt, 2) - eg == pytest.approx(0.697, abs=1e-3)
    else:
        assert eps_prime(eg, 1.0, 1.0, got_dt, 2) == pytest.approx(cor, rel=5e-3)
        assert eps_prime_printed(eg, 1.0, 1.0, got_dt, 2) == pytest.approx(pr, abs=1e-3)


def test_paper_planar_sampler_cannot_reach_20km() -> None:
    """§3.3 last row: max radius ≈ 40.46·b = 5.8 km < ⌀, so no finite ε'."""
    b = 200 / math.log(4)
    assert planar_polar_max_radius(1.0) == pytest.approx(40.46, abs=0.01)
    assert planar_polar_max_radius(b) == pytest.approx(5.8e3, rel=0.01)
    assert math.isinf(delta_t_for("polar", scale=b, diameter=math.sqrt(2) * 2e4, max_abs=5e6,
                                  dim=2))


def test_inverse_cdf_cannot_reach_wide_ranges() -> None:
    """Pitfall 13: the symmetric inverse CDF caps |X| at 52·ln2·b = 36.04·b."""
    assert math.isinf(delta_t_inverse_cdf(1.0, 40.0, 20.0, 53))
    rep = analyse(epsilon=1.0, sensitivity=1.0, lower=-1000, upper=1000, grid=1.0,
                  sampler="inverse-cdf")
    assert math.isinf(rep.eps_prime)


def test_robustness_formulas() -> None:
    L, dt = 1.0, 0.01
    assert rounding_robustness(L, dt, 1) == pytest.approx(((L + 2 * dt) - (L - 2 * dt))
                                                          / (L - 2 * dt))
    assert rounding_robustness(L, dt, 2) == pytest.approx(((L + 2 * dt) ** 2 - (L - 2 * dt) ** 2)
                                                          / (L - 2 * dt) ** 2)
    # erratum 2: the printed R is 1 + R(eq. 5) in 1-D
    printed_R = (L + 2 * dt) / (L - 2 * dt)
    assert printed_R == pytest.approx(1 + rounding_robustness(L, dt, 1))


def test_printed_form_has_ln2_floor_and_corrected_tends_to_eps() -> None:
    for eps in (0.1, 1.0, 3.0):
        for dt in (1e-30, 1e-12, 1e-6):
            assert eps_prime_printed(eps, 1.0, 1e-3, dt) >= eps + math.log(2)
        assert eps_prime(eps, 1.0, 1e-3, 1e-30) == pytest.approx(eps, abs=1e-20)
        assert eps_prime(eps, 1.0, 1e-3, 1e-12) > eps


def test_exponent_carries_epsilon() -> None:
    """Erratum 1: the exponent is ε(ℓ+δt)/Δ; without ε the bound is too small for ε > 1."""
    eps, L, dt = 4.0, 0.5, 1e-3
    R = rounding_robustness(L, dt, 1)
    as_printed_thm45 = eps + math.log1p(R * math.exp((L + dt) / 1.0))
    assert eps_prime(eps, 1.0, L, dt) > as_printed_thm45
    assert eps_prime(eps, 1.0, L, dt) == pytest.approx(
        eps + math.log1p(R * math.exp(eps * (L + dt))))


def test_2d_uses_cell_diameter() -> None:
    """Erratum 3: 2-D exponent uses √2·L."""
    eps, L, dt = 1.0, 0.5, 1e-4
    R = 8 * L * dt / (L - 2 * dt) ** 2
    assert eps_prime_overhead(eps, 1.0, L, dt, 2) == pytest.approx(
        math.log1p(R * math.exp(eps * (math.sqrt(2) * L + dt))))


def test_grid_must_exceed_twice_delta_t() -> None:
    with pytest.raises(PrecisionError):
        eps_prime(1.0, 1.0, 1e-3, 6e-4)
    with pytest.raises(PrecisionError):
        rounding_robustness(1e-3, 5e-4)


def test_aligned_interval_is_a_union_of_cells() -> None:
    L = 2.0**-4
    m, M = aligned_interval(-1.0, 2.03, L)
    assert m <= -1.0 and M > 2.03
    for v in (m, M):
        assert (v / L - 0.5) == math.floor(v / L - 0.5)  # boundaries (j ± 1/2)·L
    assert M - 2.03 <= L and -1.0 - m <= L
    with pytest.raises(ParameterError):
        aligned_interval(0.0, 2.0**60, 2.0**-10)


def test_grid_for_tolerance_is_finest() -> None:
    rep = grid_for_tolerance(epsilon=1.0, sensitivity=1.0, lower=-1000, upper=1000,
                             tolerance=1.0001)
    assert rep.eps_prime <= 1.0001
    finer = analyse(epsilon=1.0, sensitivity=1.0, lower=-1000, upper=1000, grid=rep.grid / 2)
    assert finer.eps_prime > 1.0001
    assert rep.grid >= 2**10 * rep.delta_t
    with pytest.raises(PrecisionError):
        grid_for_tolerance(epsilon=1.0, sensitivity=1.0, lower=-15, upper=15, tolerance=1.01,
                           sampler="inverse-cdf")


def test_mironov() -> None:
    eta = 2.0**-53
    assert mironov_eps_prime(1.0, 1.0, 1000.0) == 1.0 * (1 + 12 * eta * 1000) + 2 * eta
    assert mironov_noise_epsilon(mironov_eps_prime(0.5, 2.0, 10.0), 2.0, 10.0) == (
        pytest.approx(0.5, rel=1e-15))
    assert mironov_grid(1.0, 1.0) == 1.0
    assert mironov_grid(3.0, 1.0) == 0.5
    assert mironov_grid(0.1, 1.0) == 16.0


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_invalid_parameters(bad: float) -> None:
    with pytest.raises(ParameterError):
        eps_prime(bad, 1.0, 1e-3, 1e-9)
    with pytest.raises(ParameterError):
        eps_prime(1.0, bad, 1e-3, 1e-9)
    with pytest.raises(ParameterError):
        analyse(epsilon=1.0, sensitivity=1.0, lower=0, upper=bad if bad != 0 else -1,
                grid=2.0**-4)


def test_invalid_grid_and_dim() -> None:
    with pytest.raises(ParameterError):
        analyse(epsilon=1.0, sensitivity=1.0, lower=0, upper=1, grid=0.3)
    with pytest.raises(ParameterError):
        analyse(epsilon=1.0, sensitivity=1.0, lower=0, upper=1, grid=0.25, dim=3)
    with pytest.raises(ParameterError):
        grid_for_tolerance(epsilon=1.0, sensitivity=1.0, lower=0, upper=1, tolerance=0.99)
    with pytest.raises(ParameterError):
        eps_prime(1.0, 1.0, 0.25, -1e-9)


def test_recommended_delta_t_is_relative() -> None:
    assert delta_t_recommended(1.0, 20.0, 10.0, 1) == 2.0**-49 * 31
    assert delta_t_recommended(1.0, 20.0, 10.0, 2) == 2.0**-46 * 31


def test_enumeration_respects_the_corrected_bound() -> None:
    """Check B2 (numerical check of Thm 4.5 as corrected): exact enumeration of the
    rounded, truncated inverse-CDF mechanism with 20-bit uniforms.

    empirical worst loss <= corrected ε' <= printed ε'; without rounding it is infinite.
    """
    L = 1 / 16
    m, M = aligned_interval(-4.0, 5.0, L)
    dt = delta_t_inverse_cdf(1.0, M - m, max(-m, M), 20)
    emp = enumerate_rounded(20, L, m, M)
    cor = eps_prime(1.0, 1.0, L, dt)
    assert 1.0 < emp <= cor <= eps_prime_printed(1.0, 1.0, L, dt)
    assert emp == pytest.approx(1.00224, abs=1e-4)
    assert math.isinf(enumerate_rounded(16, L, m, M, rounding=False))


def test_enumeration_degrades_when_grid_below_two_delta_t() -> None:
    """Check B2: q = 16, L = 1/64 (L < 2δt, no guarantee): the true loss 1.204 exceeds ε."""
    L = 1 / 64
    m, M = aligned_interval(-4.0, 5.0, L)
    assert 2 * delta_t_inverse_cdf(1.0, M - m, max(-m, M), 16) > L
    assert enumerate_rounded(16, L, m, M) == pytest.approx(1.204, abs=1e-3)


def test_planar_enumeration_respects_the_corrected_2d_bound() -> None:
    """2-D analogue of B2: the paper's polar sampler with 10-bit angles and 14-bit radii
    (every pair enumerated), rounded to unit squares in [−2.5, 2.5)^2, ε_g = 1, d = 1."""
    from dpnoise.reproduce.finite_precision import b3_rows

    [[_qa, _qr, L, _m, _M, dt, emp, cor, pr]] = b3_rows(quick=True)
    assert 2 * dt < L
    assert 0.9 < emp <= cor <= pr


@pytest.mark.parametrize("kw", [{"grid": "1"}, {"grid": None}, {"grid": True},
                                {"grid": 10**400}, {"delta_t": 10**400}, {"dim": True}])
def test_eps_prime_refuses_bad_parameters(kw) -> None:
    """They raised TypeError or OverflowError, or (grid=True, dim=True) were taken as 1."""
    args = {"epsilon": 1.0, "sensitivity": 1.0, "grid": 2.0**-10, "delta_t": 1e-9, **kw}
    with pytest.raises(ParameterError):
        eps_prime(**args)


def test_eps_prime_past_the_float_range_is_infinite_not_an_overflow() -> None:
    assert eps_prime(1.0, 1e-300, 2.0**-10, 1e-9) == math.inf  # e^(eps·(L+dt)/Δ) overflows
    assert eps_prime(1.0, 1e-300, 2.0**-10, 0.0) == 1.0  # no rounding error: no overhead


@pytest.mark.parametrize("tolerance", ["1.001", None, True, 10**400])
def test_grid_for_tolerance_refuses_a_bad_tolerance(tolerance) -> None:
    with pytest.raises(ParameterError, match="tolerance"):
        grid_for_tolerance(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=100.0,
                           tolerance=tolerance)
