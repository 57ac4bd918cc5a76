"""The staircase builds faster with the same calibration: the candidate block ratios found
with array operations are the loop's list, in the same order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnoise import Staircase
from dpnoise.exact import ratio_geometric as rg
from dpnoise.exact.pairwise import pairwise_sum, repeated_segment
from dpnoise.laws import staircase as st


def _loop(target: float, max_block: int) -> list[tuple[int, int]]:
    seen: dict[tuple[int, int], tuple[int, int]] = {}
    for M in range(1, max(1, max_block) + 1):
        a = math.floor(M * target)
        if a < 1:
            continue
        if a * (M - 1) > rg.MAX_SPAN_BITS * M:
            break
        g = math.gcd(a, M)
        seen.setdefault((a // g, M // g), (a // g, M // g))
    return sorted(seen.values(), key=lambda am: (-am[0] / am[1], am[1]))


@pytest.mark.parametrize("epsilon", [2e-5, 0.01, 0.1, 0.7, 1.0, 5.0, 20.0])
@pytest.mark.parametrize("max_block", [1, 7, 4096, 65536])
def test_ratio_candidates_are_the_loops_list(epsilon: float, max_block: int) -> None:
    target = epsilon / math.log(2)
    want = _loop(target, max_block)
    if not want:
        with pytest.raises(rg.ParameterError):
            rg.ratio_candidates(target, max_block)
        return
    assert rg.ratio_candidates(target, max_block) == want


def _scored_loop(epsilon: float, lo: int, hi: int, per_step: int) -> list[tuple[int, int]]:
    scored = []
    for Mj in range(lo, hi + 1):
        aj = math.floor(Mj * epsilon * (1 - 1e-12) / st.LN2)
        deficit = Mj * epsilon - aj * st.LN2
        q = st._quantisation_estimate(epsilon, Mj, (Mj * per_step) << st.BLOCK_BITS)
        if aj >= 1 and 3 * q * Mj <= deficit <= 0.9 * epsilon:
            scored.append((deficit * math.exp(-Mj * epsilon) + q / epsilon, aj, Mj))
    return [(a, M) for _, a, M in sorted(scored)[:8]]


@pytest.mark.parametrize("epsilon", [1e-3, 0.01, 0.1, 0.37, 1.0, 5.0, 20.0])
@pytest.mark.parametrize("per_step", [1, 3, 40])
def test_joint_candidates_are_the_loops_best_eight(epsilon: float, per_step: int) -> None:
    lo = max(1, math.ceil(st.JOINT_TAIL_NATS / epsilon))
    hi = st.JOINT_MAX_OUTCOMES // per_step
    assert st._joint_candidates(epsilon, lo, hi, per_step) == _scored_loop(epsilon, lo, hi,
                                                                           per_step)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 1000, 4097, 100_003, 1_000_001])
@pytest.mark.parametrize("chunk", [1, 64, 4096])
def test_pairwise_sum_by_runs_is_numpys_sum(n: int, chunk: int) -> None:
    g = np.random.default_rng(n)
    a = g.standard_normal(n) * np.exp(g.uniform(-40, 40, n))
    assert pairwise_sum(lambda lo, hi: a[lo:hi].copy(), n, chunk=chunk) == float(np.sum(a))


def test_repeated_segment_is_a_slice_of_the_repeat() -> None:
    g = np.random.default_rng(3)
    widths = g.integers(1, 9, 50)
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    values = g.standard_normal(50)
    full = np.repeat(values, widths)
    for lo, hi in [(0, full.size), (0, 1), (3, 4), (5, 40), (full.size - 1, full.size)]:
        assert np.array_equal(repeated_segment(values, starts, widths, lo, hi), full[lo:hi])


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(0.1, 1.0), (1.0, 10.0), (5.0, 1.0)])
def test_joint_moments_by_runs_are_the_cell_arrays(epsilon: float, sensitivity: float) -> None:
    """The joint table's moments summed run by run equal the old P-cell computation."""
    law = Staircase(epsilon=epsilon, sensitivity=sensitivity).law
    assert law.joint
    p = law.period_prob / law.period_prob.sum()
    o = np.arange(law.period, dtype=np.float64) + 0.5
    assert law._joint_sums() == (float(np.sum(p * o)), float(np.sum(p * (o * o))))
    assert law._joint_loss() == law._joint_loss_by_cells()


def _joint_blocks_loop(geo: rg.RatioGeometric, S: int, G: int) -> tuple[list, list, list]:
    """The joint table's construction as the block-by-block loop it replaces."""
    from dpnoise.exact import staircase as es
    from dpnoise.exact.alias import quantize_weights

    starts, widths, weights = [], [], []
    for R in range(geo.M):
        for lo, hi, extra in ((0, G, 0.0), (G, S, geo.inner)):
            for start, width in es.aligned_blocks(lo, hi, 1 << es.BLOCK_BITS):
                starts.append(R * S + start)
                widths.append(width)
                weights.append(math.exp(-geo.inner * R - extra) * width)
    q = quantize_weights(np.array(weights) / max(weights))
    scaled = [(x >> es.BLOCK_BITS) for x in q]
    rest = (1 << (64 - es.BLOCK_BITS)) - sum(scaled)
    order = sorted(range(len(q)), key=lambda i: q[i] - (scaled[i] << es.BLOCK_BITS),
                   reverse=True)
    for i in order[:rest]:
        scaled[i] += 1
    return starts, widths, [x << es.BLOCK_BITS for x in scaled]


@pytest.mark.parametrize(("a", "M", "inner", "S", "G"), [
    (3, 160, 0.013, 17, 9), (14, 16, 0.6, 4096, 2000), (1, 4, 0.17, 5, 5), (2, 7, 0.19, 1500, 1),
    (9, 60, 0.1, 3000, 0)])
def test_joint_blocks_are_the_block_loops(a: int, M: int, inner: float, S: int, G: int) -> None:
    from dpnoise.exact import staircase as es

    geo = rg.RatioGeometric(a, M, inner)
    starts, widths, table = es._joint_blocks(geo, S, G)
    want_starts, want_widths, want_weights = _joint_blocks_loop(geo, S, G)
    assert starts.tolist() == want_starts and widths.tolist() == want_widths
    assert table.exact_weights() == want_weights
