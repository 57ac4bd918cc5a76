"""Fast construction: the vectorised table builders give the SAME tables as the
reference Python-integer constructions, so every law, guarantee and seeded output is unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnoise.exact.alias import (
    TOTAL,
    AliasTable,
    _check_probabilities,
    _quantize_exact,
    _quantize_fast,
    quantize_weights,
)
from dpnoise.exact.staircase import _window_max_min


def _reference_table(w: list[int]) -> AliasTable:
    t = AliasTable.__new__(AliasTable)
    t._build_reference(list(w))
    return t


def _probability_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(2)
    cases = [np.exp2(-np.arange(5000) / 5000), np.ones(7), np.array([0.5, 0.25, 0.25, 0.0]),
             np.exp(-(np.arange(-40, 41) ** 2) / 300.0), np.exp(-np.arange(64) / 3.0)]
    for n in (2, 3, 5, 17, 100, 1000):
        cases.append(rng.uniform(0, 1, n))
        p = rng.uniform(0.01, 1, n)
        p[rng.integers(0, n, n // 2)] = 0.0
        p[0] = 1.0
        cases.append(p)
        cases.append(rng.integers(1, 4, n).astype(float))  # many ties
    return cases


@pytest.mark.parametrize("i", range(len(_probability_cases())))
def test_quantize_fast_equals_reference(i: int) -> None:
    p = _check_probabilities(_probability_cases()[i])
    ref = _quantize_exact(p)
    fast = _quantize_fast(p)
    if fast is not None:
        assert fast.tolist() == ref
    assert quantize_weights(p) == ref and sum(ref) == TOTAL


def test_quantize_fast_path_is_taken_where_it_should() -> None:
    assert _quantize_fast(np.exp2(-np.arange(1000) / 1000)) is not None
    assert _quantize_fast(np.array([1.0, 2.0**-20])) is None  # beyond 2^10: the reference
    assert _quantize_fast(np.array([1.0])) is None


@pytest.mark.parametrize("i", range(len(_probability_cases())))
def test_vectorised_alias_table_equals_reference(i: int) -> None:
    w = quantize_weights(_probability_cases()[i])
    fast = AliasTable(w)
    ref = _reference_table(w)
    np.testing.assert_array_equal(fast._thr, ref._thr)
    np.testing.assert_array_equal(fast._alias, ref._alias)
    assert fast.exact_weights() == w == ref._exact_weights_reference()
    assert np.array_equal(fast.exact_weights_float(), np.array([float(x) for x in w]))


@pytest.mark.parametrize("w", [[1 << 63, 1 << 63], [1 << 62] * 4, [TOTAL - 5, 5], [TOTAL],
                               [TOTAL, 0, 0], [0, TOTAL - 1, 1]])
def test_alias_edge_tables(w: list[int]) -> None:
    fast = AliasTable(w)
    assert fast.exact_weights() == w
    if len(w) > 1 and max(w) < TOTAL:
        ref = _reference_table(w)
        np.testing.assert_array_equal(fast._thr, ref._thr)
        np.testing.assert_array_equal(fast._alias, ref._alias)


def test_window_extremes_match_direct_computation() -> None:
    rng = np.random.default_rng(0)
    for n, w in ((50, 3), (999, 17), (1000, 1), (300, 300), (5000, 257)):
        x = rng.normal(size=n)
        hi, lo = _window_max_min(x, w)
        view = np.lib.stride_tricks.sliding_window_view(x, w)
        np.testing.assert_array_equal(hi, view.max(axis=1))
        np.testing.assert_array_equal(lo, view.min(axis=1))
    assert math.isinf(_window_max_min(np.array([-math.inf, 1.0]), 2)[1][0])


@pytest.mark.parametrize("sigma,grid,steps,eps", [(3.0, 2**-6, 64, 1.0), (100.0, 2**-3, 8, 0.3),
                                                  (37.3, 2**-4, 17, 0.01)])
def test_gaussian_search_sums_one_direction_of_the_mirror_symmetric_table(
        sigma: float, grid: float, steps: int, eps: float) -> None:
    from dpnoise.mechanisms.gaussian import _hockey, _ideal_logpmf

    lp = _ideal_logpmf(sigma, grid)[1]
    assert np.array_equal(lp, lp[::-1])
    assert _hockey(lp, steps, eps, symmetric=True) == _hockey(lp, steps, eps)
