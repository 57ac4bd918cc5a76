"""Exact samplers: the alias table's sampled pmf is the pmf it reports; geometric tails."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpnoise import ParameterError, SeededRandom
from dpnoise.exact import AliasTable, BlockGeometric, quantize_weights
from dpnoise.exact.alias import TOTAL
from dpnoise.exact.geometric import geometric_half


@given(st.lists(st.floats(0.0, 100.0), min_size=1, max_size=40).filter(lambda p: sum(p) > 0))
def test_quantized_weights_sum_exactly(p: list[float]) -> None:
    w = quantize_weights(p)
    assert sum(w) == TOTAL
    assert all(x >= 0 for x in w)
    # each weight is within one unit of its exact share
    exact = [Fraction(x) for x in p]
    s = sum(exact)
    for pi, wi in zip(exact, w, strict=True):
        assert abs(wi - pi / s * TOTAL) < 1


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=50).filter(lambda p: sum(p) > 0))
def test_alias_table_preserves_weights_exactly(p: list[int]) -> None:
    w = quantize_weights(p)
    table = AliasTable(w)
    assert table.exact_weights() == w


def test_alias_samples_match_weights() -> None:
    p = np.array([0.5, 0.25, 0.125, 0.0625, 0.0625, 0.0])
    table = AliasTable(quantize_weights(p))
    x = table.sample(SeededRandom(1), 100_000)
    counts = np.bincount(x, minlength=p.size)
    assert counts[5] == 0
    assert stats.chisquare(counts[:5], p[:5] * x.size).pvalue > 1e-3


def test_alias_rejects_bad_weights() -> None:
    with pytest.raises(ParameterError):
        AliasTable([1, 2, 3])
    with pytest.raises(ParameterError):
        quantize_weights([-1.0, 2.0])
    with pytest.raises(ParameterError):
        quantize_weights([0.0, 0.0])


def test_geometric_half_is_exact_including_extension() -> None:
    rng = SeededRandom(4)
    words = rng.words(200_000)
    q, negative = geometric_half(rng, words)
    counts = np.bincount(q)[:12]
    expected = 200_000 * 0.5 ** np.arange(1, 13)
    assert stats.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue > 1e-3
    assert abs(negative.mean() - 0.5) < 0.01
    # a word whose low 63 bits are zero continues the count on fresh words
    special = np.array([1 << 63, 0], dtype=np.uint64)
    q2, neg2 = geometric_half(SeededRandom(1), special)
    assert q2.min() >= 63 and neg2.tolist() == [True, False]


def test_block_geometric_law() -> None:
    block = BlockGeometric(37)
    k = block.sample(SeededRandom(2), 200_000)
    # p(k + M) = p(k) / 2 exactly
    assert np.allclose(block.logpmf(np.arange(50) + 37), block.logpmf(np.arange(50)) - math.log(2))
    edges = np.arange(0, 200, 7)
    expected = -np.diff(np.concatenate([block.sf(edges), [0.0]]))
    observed = np.bincount(np.searchsorted(edges, k, side="right") - 1, minlength=edges.size)
    assert stats.chisquare(observed, expected * k.size / expected.sum()).pvalue > 1e-3
    assert abs(k.mean() / block.mean() - 1) < 0.01
    # total probability is one
    total = math.fsum(np.exp(block.logpmf(np.arange(0, 37 * 80))).tolist())
    assert abs(total - 1) < 1e-12


def test_block_step_loss_equals_direct_maximum() -> None:
    block = BlockGeometric(23)
    k = np.arange(0, 23 * 6)
    for steps in (1, 5, 23, 30, 70):
        direct = np.max(block.logpmf(k) - block.logpmf(k + steps))
        assert math.isclose(block.step_loss(steps), direct, rel_tol=1e-13)


def test_float_log_weights_agree_with_high_precision() -> None:
    import mpmath

    block = BlockGeometric(1000)
    with mpmath.workdps(40):
        for k in (0, 1, 499, 999, 1000, 5321):
            exact = block.logpmf_mp(k)
            assert abs(float(block.logpmf(np.array([k]))[0]) - float(exact)) < 1e-13
