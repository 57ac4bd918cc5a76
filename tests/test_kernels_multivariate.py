"""The compiled multivariate-staircase chunk (kernels/multivariate.c) returns bit-for-bit
what the numpy reference returns from the same words."""

from __future__ import annotations

import numpy as np
import pytest

import dpnoise
from dpnoise.mechanisms import staircase_multivariate as smv
from dpnoise.randomness import SeededRandom

from .helpers import WordsWithValues, kernel_and_reference

pytestmark = pytest.mark.skipif(smv._mv_box_kernel() is None, reason="kernels off")


@pytest.mark.parametrize("epsilon, sens, lam", [(1.0, (1, 10), 0.1), (0.05, (3.0, 0.5), None),
                                                (5.0, (1, 1, 1), 0.3), (0.5, (2.0**-20, 7e5), 0.0)])
def test_box_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, epsilon: float,
                                     sens: tuple[float, ...], lam: float | None) -> None:
    m = dpnoise.MultivariateStaircase(epsilon=epsilon, sensitivities=sens, lam=lam)
    d = len(sens)
    rng = np.random.default_rng(d)
    n = (1 << 13) + 501  # two chunks, the second partial
    x = rng.normal(0, 50, (n, d)) * np.array(sens)
    x[:20] = (np.arange(20)[:, None] + 0.5) * m.grids[None, :]  # exact half-way points
    fast, ref = kernel_and_reference(monkeypatch, smv, "_mv_box_kernel",
                                     lambda: m.release(x, rng=SeededRandom(9)))
    np.testing.assert_array_equal(fast, ref)
    assert np.all(m.in_output_set(fast))


def test_box_kernel_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A level-geometric word with its low 63 bits zero (p = 2^-63): the reference extends."""
    m = dpnoise.MultivariateStaircase(epsilon=1.0, sensitivities=(1, 10), lam=0.1)
    x = np.zeros((100, 2))
    fast, ref = kernel_and_reference(
        monkeypatch, smv, "_mv_box_kernel",
        lambda: m.release(x, rng=WordsWithValues(2, [100 + 5], [1 << 63])))  # Q_0, vector 5
    np.testing.assert_array_equal(fast, ref)
