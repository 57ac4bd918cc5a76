"""Cold construction: the faster calibration steps give the SAME result as the reference
computation they replace, bit for bit, so every calibration, table and seeded output is
unchanged (the exact-law and verifier tests of each mechanism still run on top of this)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise.exact import staircase as exact_staircase
from dpnoise.exact.alias import _largest_remainders, _quantize_exact, quantize_weights_array
from dpnoise.exact.crossing import last_at_most
from dpnoise.exact.run_spread import run_spread
from dpnoise.exact.staircase import LatticeStaircase
from dpnoise.laws.bounded_minimum import bounded_minimum
from dpnoise.laws.staircase import auto_grid, level_weights, optimal_lambda
from dpnoise.mechanisms.count_noise import _delta_for, _max_eta, exp_lower

scipy_optimize = pytest.importorskip("scipy.optimize")


def _scipy_lambda(epsilon: float, dim: int) -> float:
    def second(lam: float) -> float:
        w = level_weights(epsilon, lambda i: (lam + i) ** dim)
        return float((w * (lam + np.arange(w.size)) ** 2).sum())

    return float(scipy_optimize.minimize_scalar(second, bounds=(0.0, 1.0), method="bounded",
                                                options={"xatol": 1e-9}).x)


@pytest.mark.parametrize("epsilon", [0.003, 0.01, 0.1, 0.5, 1.0, 5.0, 20.0])
@pytest.mark.parametrize("dim", [1, 2, 3, 5])
def test_optimal_lambda_is_scipys_bounded_minimiser(epsilon: float, dim: int) -> None:
    assert optimal_lambda(epsilon, dim) == _scipy_lambda(epsilon, dim)


@settings(max_examples=200, deadline=None)
@given(centre=st.floats(-5, 5), curvature=st.floats(0.01, 10), wiggle=st.floats(0, 3),
       lower=st.floats(-10, 10), width=st.floats(0, 20),
       xatol=st.sampled_from([1e-3, 1e-5, 1e-9, 1e-12]))
def test_bounded_minimum_is_scipys_bounded_minimiser(centre: float, curvature: float,
                                                     wiggle: float, lower: float, width: float,
                                                     xatol: float) -> None:
    def f(x: float) -> float:
        return curvature * (x - centre) ** 2 + wiggle * math.sin(3 * x)

    upper = lower + width
    want = scipy_optimize.minimize_scalar(f, bounds=(lower, upper), method="bounded",
                                          options={"xatol": xatol}).x
    assert bounded_minimum(f, lower, upper, xatol=xatol) == float(want)


def test_bounded_minimum_refuses_bad_bounds() -> None:
    with pytest.raises(ValueError):
        bounded_minimum(abs, 1.0, 0.0)
    with pytest.raises(ValueError):
        bounded_minimum(abs, 0.0, math.inf)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_largest_remainders_are_the_first_of_a_full_sort(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 80))
    k = data.draw(st.integers(1, n))
    hi_top = data.draw(st.sampled_from([1, 2, 4, 1 << 29]))
    lo_top = data.draw(st.sampled_from([1, 3, (1 << 64) - 1]))
    hi = np.array(data.draw(st.lists(st.integers(0, hi_top - 1), min_size=n, max_size=n)),
                  dtype=np.uint64)
    lo = np.array(data.draw(st.lists(st.integers(0, lo_top - 1), min_size=n, max_size=n)),
                  dtype=np.uint64)
    full = np.lexsort((np.arange(n), ~lo, ~hi))  # remainder descending, index ascending
    assert sorted(_largest_remainders(lo, hi, k).tolist()) == sorted(full[:k].tolist())


@pytest.mark.parametrize("M", [3, 64, 1000, 4097, 30011])
def test_block_geometric_weights_equal_the_integer_reference(M: int) -> None:
    """The Laplace family's in-block table 2^(-r/M): the vectorised quantisation (linear-time
    hand-out of the missing units) equals the Python-integer reference."""
    p = np.exp2(-np.arange(M, dtype=np.float64) / M)
    assert np.asarray(quantize_weights_array(p)).tolist() == _quantize_exact(p)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_run_spread_is_the_pointwise_window_spread(data: st.DataObject) -> None:
    widths = data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=30))
    values = data.draw(st.lists(st.floats(-50, 50), min_size=len(widths),
                                max_size=len(widths)))
    reach = data.draw(st.integers(1, 25))
    ends = np.cumsum(widths)
    starts = ends - np.array(widths)
    points = np.repeat(np.array(values), widths)
    want = max(abs(points[i] - points[j]) for i in range(points.size)
               for j in range(i, min(points.size, i + reach + 1)))
    got = run_spread(starts.astype(np.int64), ends.astype(np.int64), np.array(values), reach)
    assert got == want


@pytest.mark.parametrize(("epsilon", "sensitivity", "gamma"),
                         [(0.1, 1.0, 0.5), (1.0, 1.0, 0.5), (1.0, 10.0, 0.0), (5.0, 3.0, 0.5),
                          (2.0, 1000.0, 0.25)])
def test_staircase_joint_loss_by_runs_equals_the_cell_by_cell_reference(
        epsilon: float, sensitivity: float, gamma: float,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every joint-table law a calibration builds: the exact loss over runs of equal
    log-pmf is the cell-by-cell sliding-window loss, bit for bit."""
    built: list[LatticeStaircase] = []
    init = LatticeStaircase.__init__

    def spy(self: LatticeStaircase, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(LatticeStaircase, "__init__", spy)
    auto_grid(epsilon, sensitivity, gamma)
    joint = [law for law in built if law.joint and np.all(np.isfinite(law.period_log))]
    assert joint
    for law in joint:
        assert law._joint_loss() == law._joint_loss_by_cells()


@pytest.mark.parametrize(("epsilon", "sensitivity", "gamma"),
                         [(0.1, 1.0, 0.5), (1.0, 10.0, 0.5), (1.0, 3.0, 0.0), (5.0, 1000.0, 0.5)])
def test_staircase_moments_without_blas_choose_the_same_law(
        epsilon: float, sensitivity: float, gamma: float,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The law's moments are summed pairwise (not by BLAS ``np.dot``): within 1e-13 of the
    dot products, and the calibration picks the same grid, block and decay with either."""
    grid, law = auto_grid(epsilon, sensitivity, gamma)
    monkeypatch.setattr(exact_staircase, "_weighted_sum",
                        lambda p, v: float(np.dot(p, v)))
    grid_dot, law_dot = auto_grid(epsilon, sensitivity, gamma)
    assert (grid, law.joint, law.S, law.G, law.geo.a, law.geo.M, law.geo.inner) == (
        grid_dot, law_dot.joint, law_dot.S, law_dot.G, law_dot.geo.a, law_dot.geo.M,
        law_dot.geo.inner)
    assert law.exact_loss == law_dot.exact_loss
    assert law.second_moment() == pytest.approx(law_dot.second_moment(), rel=1e-13)
    assert law.first_moment() == pytest.approx(law_dot.first_moment(), rel=1e-13)


def _bisect_last_at_most(f: Callable[[int], Fraction], target: Fraction, lo: int,
                         hi: int) -> int:
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_last_at_most_is_bisections_answer(data: st.DataObject) -> None:
    """Any nondecreasing f (steps, plateaus, jumps over orders of magnitude)."""
    hi = data.draw(st.integers(2, 1 << 40))
    knots = sorted(data.draw(st.lists(st.integers(0, hi), min_size=1, max_size=8)))
    scales = data.draw(st.lists(st.integers(0, 30), min_size=len(knots), max_size=len(knots)))
    levels = np.cumsum(scales).tolist()

    def f(j: int) -> Fraction:  # piecewise linear between exponentially spaced levels
        i = int(np.searchsorted(knots, j, side="right"))
        base = Fraction(1, 1 << 100) * (Fraction(2) ** levels[i - 1] if i else 1)
        return base + Fraction(j, 1 << 60)

    lo = data.draw(st.integers(0, hi - 1))
    target = f(data.draw(st.integers(lo, hi - 1))) + data.draw(
        st.sampled_from([Fraction(0), Fraction(1, 1 << 70)]))
    if f(lo) > target or f(hi) <= target:
        return
    assert last_at_most(f, target, lo, hi, f(lo), f(hi)) == _bisect_last_at_most(
        f, target, lo, hi)


@pytest.mark.parametrize(("epsilon", "D", "delta", "method"),
                         [(1.0, 16, "1/1000000", "paper"), (5.0, 4, "1/1000000", "paper"),
                          (0.1, 64, "1/1000", "paper"), (2.0, 16, "1/10000000000", "paper")])
def test_count_noise_eta_is_the_bisection_eta(epsilon: float, D: int, delta: str,
                                               method: str) -> None:
    """CountNoise's calibrated η (largest on the 2^-40 grid with exact δ <= target) is the
    one the plain bisection over the grid finds."""
    target = Fraction(delta)
    got = _max_eta(epsilon, target, D, method)
    assert got is not None
    E, res = exp_lower(epsilon), 1 << 40
    j = _bisect_last_at_most(lambda i: _delta_for(E, Fraction(i, res), D, method), target,
                             got.numerator * (res // got.denominator), res)
    assert got == Fraction(j, res)
