"""The compiled planar-Laplace chunk (kernels/planar.c) against the numpy reference.

The kernel calls libm's sin and cos; numpy's float64 sin/cos call the same functions on this
project's platform, so the outputs are identical here.  Where a numpy build computes them
differently (last-bit differences), a released cell may differ by one grid step at most, and
rarely: the test accepts exactly that and nothing else.  log1p is numpy's in both paths."""

from __future__ import annotations

import numpy as np
import pytest

import dpnoise
from dpnoise.mechanisms import planar
from dpnoise.randomness import SeededRandom

from .helpers import WordsWithValues, kernel_and_reference

pytestmark = pytest.mark.skipif(planar._planar_kernel() is None, reason="kernels off")


def _assert_same_release(fast, ref, grid: float) -> None:  # type: ignore[no-untyped-def]
    """At most a one-cell difference, on < 0.1 % of the points (last-bit sin/cos)."""
    assert np.mean(fast.exited != ref.exited) < 1e-3
    both = ~fast.exited & ~ref.exited
    diff = np.abs(fast.points[both] - ref.points[both])
    assert np.mean(np.any(diff > 0, axis=-1)) < 1e-3
    assert set(np.unique(diff).tolist()) <= {0.0, grid}


@pytest.mark.parametrize("epsilon, grid, domain", [
    (0.01, 1.0, ((0, 2000), (0, 2000))),
    (1.0, 2.0**-20, ((-1, 1), (0, 5))),
    (5.0, 2.0**-4, ((-1000, 1000), (3000, 4000)))])
def test_planar_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, epsilon: float,
                                        grid: float, domain) -> None:  # type: ignore[no-untyped-def]
    m = dpnoise.PlanarLaplace.with_margin(epsilon=epsilon, grid=grid, domain=domain)
    g = np.random.default_rng(1)
    n = (1 << 14) + 123
    pts = np.column_stack([g.uniform(*domain[0], n), g.uniform(*domain[1], n)])
    pts[:5] = [[domain[0][0], domain[1][0]]] * 5  # corners: some releases exit the region
    fast, ref = kernel_and_reference(monkeypatch, planar, "_planar_kernel",
                                     lambda: m.release(pts, rng=SeededRandom(6)))
    if np.array_equal(fast.points, ref.points, equal_nan=True):
        assert np.array_equal(fast.exited, ref.exited)  # the platform case: identical
    else:  # pragma: no cover - a numpy whose sin/cos differ from libm in the last bit
        _assert_same_release(fast, ref, grid)
    assert np.all(m.in_output_set(fast.points))


def test_planar_kernel_hands_a_zero_exponent_word_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = dpnoise.PlanarLaplace.with_margin(epsilon=1.0, grid=1.0, domain=((0, 100), (0, 100)))
    pts = np.full((64, 2), 50.0)
    # an all-zero exponent word (p = 2^-64): the reference continues the count
    fast, ref = kernel_and_reference(
        monkeypatch, planar, "_planar_kernel",
        lambda: m.release(pts, rng=WordsWithValues(4, [7], [0])))
    assert np.array_equal(fast.points, ref.points, equal_nan=True)
    assert np.array_equal(fast.exited, ref.exited)
