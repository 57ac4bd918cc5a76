"""Cold construction: the faster calibration steps give the SAME result as the reference
computation they replace, bit for bit, so every calibration, table and seeded output is
unchanged (the exact-law and verifier tests of each mechanism still run on top of this)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise.exact.alias import _largest_remainders, _quantize_exact, quantize_weights_array
from dpnoise.laws.bounded_minimum import bounded_minimum
from dpnoise.laws.staircase import level_weights, optimal_lambda

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
