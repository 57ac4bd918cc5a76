"""The discrete Gaussian builds faster with the same calibration: the wide-range exact
quantisation gives the pure-Python reference's integers, and δ computed into reused
buffers is the same float as δ on fresh arrays."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import kernels
from dpnoise.exact import alias
from dpnoise.exact import quantize_wide as quantize_wide_module
from dpnoise.exact.discrete_gaussian import grid_sigma2
from dpnoise.exact.quantize_wide import quantize_wide
from dpnoise.float_sum import fsum_array
from dpnoise.laws import discrete_gaussian as dg
from dpnoise.laws import discrete_gaussian_search as dgs


def _cases() -> list[np.ndarray]:
    g = np.random.default_rng(1)
    out = []
    for n in (2, 3, 10, 1000):
        for spread in (12, 64, 90, 300, 1000):
            p = np.exp2(-spread * g.random(n))
            out.append(p)
            tied = p.copy()
            tied[::3] = tied[0]  # equal remainders: lowest index first
            out.append(tied)
            holes = p.copy()
            holes[1::4] = 0.0
            out.append(holes)
    for s2 in (3.7, 100.0, 5000.0):  # discrete Gaussian tables: symmetric, 2^-64 tails
        k = int(np.ceil(np.sqrt(2 * s2 * (64 * np.log(2) + 2)))) + 1
        z = np.arange(-k, k + 1.0)
        out.append(np.exp(-(z * z) / (2 * s2)))
    out += [np.array([1.0, 5e-324]), np.array([1.0, 0.0, 1e-300, 1e-300]),
            np.array([0.5, 0.5, 2.0**-80, 2.0**-80, 2.0**-79])]
    return out


@pytest.mark.parametrize("p", _cases(), ids=lambda p: f"n{p.size}")
def test_wide_quantisation_equals_the_reference(p: np.ndarray) -> None:
    want = alias._quantize_exact(p)
    got = quantize_wide(p)
    if got is None:  # one entry takes (almost) all 2^64: left to the reference
        assert max(want) >= 2**64 - 1
    else:
        assert got.tolist() == want
    assert alias.quantize_weights(p) == want


@pytest.mark.parametrize("p", _cases(), ids=lambda p: f"n{p.size}")
def test_compiled_wide_shares_equal_the_big_integer_path(p: np.ndarray,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """kernels/quantize_wide.c gives the packed big-integer computation's weights."""
    if not kernels.available():
        pytest.skip("compiled kernels off")
    compiled = quantize_wide(p)
    monkeypatch.setattr(quantize_wide_module, "_compiled_shares", lambda *a: None)
    reference = quantize_wide(p)
    assert (compiled is None) == (reference is None)
    if compiled is not None:
        assert np.array_equal(compiled, reference)


def test_compiled_wide_shares_on_hard_remainders() -> None:
    """Shares whose estimate is furthest off (T's top bits all ones, remainders near T) and
    small totals (t <= 64: exact division at once) against Python integers."""
    if not kernels.available():
        pytest.skip("compiled kernels off")
    g = np.random.default_rng(7)
    for total_bits, n in ((40, 50), (64, 50), (65, 50), (130, 200), (250, 200)):
        for _ in range(5):
            m = g.integers(0, 1 << 53, n, dtype=np.uint64)
            m[:3] = (1 << 53) - 1
            s = g.integers(0, max(1, total_bits - 60), n).astype(np.int64)
            if _ == 0:  # T = 2^total_bits − 1 (all ones: the estimate's worst case)
                starts = list(range(0, total_bits, 30))
                m = np.array([(1 << min(30, total_bits - a)) - 1 for a in starts],
                             dtype=np.uint64)
                s, n = np.array(starts, dtype=np.int64), len(starts)
            total = sum(int(a) << int(b) for a, b in zip(m.tolist(), s.tolist(), strict=True))
            assert quantize_wide_module._compiled_total(m, s) == total
            got = quantize_wide_module._compiled_shares(m, s, total, total.bit_length())
            assert got is not None
            q, rem, key = got
            low = max(0, total.bit_length() - 63)
            for i in range(n):
                want_q, want_r = divmod((int(m[i]) << int(s[i])) << 64, total)
                assert int(q[i]) == want_q
                assert int.from_bytes(rem[i].tobytes(), "little") == want_r
                assert int(key[i]) == (want_r >> low) & (2**64 - 1)


def test_delta_into_reused_buffers_is_the_same_float() -> None:
    g = np.random.default_rng(4)
    work = dg.DeltaBuffers()
    sigma2s = [*np.exp(g.uniform(np.log(0.01), np.log(1e8), 12)), 1.0, 7.2e7, 3.0]
    for s2 in sigma2s:  # growing, shrinking and regrowing the buffers
        for eps, d in ((0.01, 16), (1.0, 1), (5.0, 2)):
            assert dg.delta(s2, eps, d, work) == dg.delta(s2, eps, d)


@pytest.mark.parametrize(("epsilon", "delta", "d"), [
    (0.01, 1e-6, 16), (0.013, 1e-6, 17), (0.1, 1e-10, 3), (0.37, 1e-3, 40), (1.0, 1e-6, 1),
    (5.0, 1e-12, 2), (0.05, 3e-7, 100)])
def test_quick_search_lands_in_the_bisections_grid_cell(epsilon: float, delta: float,
                                                        d: int) -> None:
    quick = dgs.calibrate_sigma2_on_grid.__wrapped__(epsilon, delta, d)
    assert grid_sigma2(Fraction(quick)) == grid_sigma2(
        Fraction(dg.calibrate_sigma2.__wrapped__(epsilon, delta, d)))


def test_quick_search_falls_back_when_a_grid_point_is_close(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When the grid cannot be shown to agree, the answer is the bisection's own."""
    monkeypatch.setattr(dgs, "grid_sigma2", lambda s: s)  # every σ² its own grid point
    got = dgs.calibrate_sigma2_on_grid.__wrapped__(0.1, 1e-6, 16)
    assert got == dg.calibrate_sigma2.__wrapped__(0.1, 1e-6, 16)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=0,
                max_size=300), st.integers(0, 3))
def test_fsum_array_is_math_fsum(values: list[float], spread: int) -> None:
    x = np.array(values, dtype=np.float64)
    if spread and x.size:  # many terms per binade, wide and subnormal ranges
        x = np.concatenate([x, x * 2.0**-600, x * 2.0**-1070, -x[::2]] * spread)
    with np.errstate(over="ignore", under="ignore"):
        try:
            want = math.fsum(x.tolist())
        except OverflowError:
            return
        got = fsum_array(x)
    assert got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def test_fsum_array_on_discrete_gaussian_moments() -> None:
    z = np.arange(-60_000, 60_001, dtype=np.float64)
    p = dg.pmf(z, 2.2e6)
    for v in (p * z * z, p * np.abs(z), p):
        assert fsum_array(v) == math.fsum(v.tolist())


@pytest.mark.parametrize("n", [1, 65_535, 65_536, 65_537, 300_001])
def test_exact_sum_by_runs_is_the_integer_sum(n: int) -> None:
    g = np.random.default_rng(n)
    v = g.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    v[:3] = 2**64 - 1
    assert alias.exact_sum(v) == sum(v.tolist())
