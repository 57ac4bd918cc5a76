"""The staircase builds faster with the same calibration: the candidate block ratios found
with array operations are the loop's list, in the same order."""

from __future__ import annotations

import math

import pytest

from dpnoise.exact import ratio_geometric as rg
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
