"""The compiled count, lattice-Laplace, truncated-Laplace, staircase and Gaussian kernels
(kernels/block.c, folded.c, staircase.c, gaussian.c, integer_block.c, alias_one_word.c)
return bit-for-bit what their numpy references return from the same words."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpnoise
from dpnoise.exact import dg_table, folded, geometric, integer_block, staircase
from dpnoise.exact.geometric import BlockGeometric
from dpnoise.mechanisms import gaussian
from dpnoise.randomness import SeededRandom

from .helpers import WordsWithValues, kernel_and_reference

pytestmark = pytest.mark.skipif(geometric._block_kernel() is None, reason="kernels off")


@pytest.mark.parametrize("M", [1, 2, 7, 1000, 35263, 1 << 20])
@pytest.mark.parametrize("grid", [2.0**-10, 1.0, 2.0**20])
def test_block_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, M: int,
                                       grid: float) -> None:
    b = BlockGeometric(M)
    rng = np.random.default_rng(M)
    n = (1 << 14) + 77  # two chunks, the second partial
    x = rng.normal(0, 1e3, n) * grid
    x[:50] = (np.arange(50) - 25 + 0.5) * grid  # exact half-way points round up
    x[50:60] = -0.0
    for centre in (x, None):
        kw = {} if centre is None else {"centre": centre, "grid": grid}
        fast, ref = kernel_and_reference(
            monkeypatch, geometric, "_block_kernel",
            lambda kw=kw: b.signed_odd(SeededRandom(3), n, **kw))
        assert fast.dtype == ref.dtype
        np.testing.assert_array_equal(fast, ref)
        assert np.array_equal(np.signbit(fast), np.signbit(ref))


def test_block_kernel_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """a-words with all low 63 bits zero (p = 2^-63): the reference extends the count."""
    b = BlockGeometric(9)
    x = np.linspace(-5, 5, 300)
    fast, ref = kernel_and_reference(
        monkeypatch, geometric, "_block_kernel",
        lambda: b.signed_odd(WordsWithValues(11, [3, 10], [0, 1 << 63]), 300, centre=x,
                             grid=1.0))
    np.testing.assert_array_equal(fast, ref)
    assert abs(fast[3] - round(x[3])) >= 9 * 63  # |Z| >= Q·M with Q >= 63: extended


def test_laplace_release_identical_with_and_without_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = dpnoise.Laplace(epsilon=0.3, sensitivity=2.0)
    x = np.arange(100_000, dtype=np.float64) * 0.37
    fast, ref = kernel_and_reference(monkeypatch, geometric, "_block_kernel",
                                     lambda: m.release(x, rng=SeededRandom(5)))
    np.testing.assert_array_equal(fast, ref)


def test_threads_are_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured (docs/performance.md): two threads are not a reliable gain on the project's
    2-vCPU machine even with the compiled kernels, so DPNOISE_THREADS opts in."""
    from dpnoise import parallel

    monkeypatch.delenv("DPNOISE_THREADS", raising=False)
    assert parallel.threads() == 1
    monkeypatch.setenv("DPNOISE_THREADS", "2")
    assert parallel.threads() == 2


@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1), (0.05, 3), (5.0, 1), (0.3, 40)])
def test_integer_block_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, epsilon: float,
                                               sensitivity: int) -> None:
    m = dpnoise.Geometric(epsilon=epsilon, sensitivity=sensitivity)
    assert m.block is not None
    n = (1 << 14) * 2 + 333
    fast, ref = kernel_and_reference(monkeypatch, integer_block, "_intblock_kernel",
                                     lambda: m.sample_noise(n, rng=SeededRandom(8)))
    np.testing.assert_array_equal(fast, ref)
    assert np.any(fast == 0) and fast.min() < 0 < fast.max()


@pytest.mark.parametrize("epsilon, sensitivity", [(3.0, 1), (8.0, 1), (14.0, 3)])
def test_first_steps_block_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch,
                                                   epsilon: float, sensitivity: int) -> None:
    """The first-steps laws (ideal decay inside blocks) run through the same kernel."""
    m = dpnoise.Geometric(epsilon=epsilon, sensitivity=sensitivity, sampler="first-steps")
    assert m.block is not None and m.block.inner is not None
    n = (1 << 14) * 2 + 333
    fast, ref = kernel_and_reference(monkeypatch, integer_block, "_intblock_kernel",
                                     lambda: m.sample_noise(n, rng=SeededRandom(8)))
    np.testing.assert_array_equal(fast, ref)
    assert np.any(fast == 0) and fast.min() < 0 < fast.max()


def test_integer_block_kernel_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    block = dpnoise.Geometric(epsilon=1.0, sensitivity=1).block

    def run() -> np.ndarray:
        out = np.empty(300, dtype=np.int64)
        block.sample_into(WordsWithValues(11, [3, 10], [0, 1 << 63]), out)
        return out

    fast, ref = kernel_and_reference(monkeypatch, integer_block, "_intblock_kernel", run)
    np.testing.assert_array_equal(fast, ref)


@pytest.mark.parametrize("epsilon, delta, sensitivity", [(1.0, 1e-6, 1), (0.1, 1e-9, 5),
                                                         (3.0, 1e-3, 1)])
def test_discrete_gaussian_table_kernel_equals_reference(
        monkeypatch: pytest.MonkeyPatch, epsilon: float, delta: float, sensitivity: int) -> None:
    m = dpnoise.DiscreteGaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    assert m.table is not None
    n = (1 << 14) * 2 + 999
    fast, ref = kernel_and_reference(monkeypatch, dg_table, "_alias_kernel",
                                     lambda: m.sample_noise(n, rng=SeededRandom(4)))
    np.testing.assert_array_equal(fast, ref)


@pytest.mark.parametrize("M, n", [(1, 1), (2, 3), (7, 5), (1000, 37), (1000, 4096),
                                  (35263, 70000), (1 << 20, 1 << 22), (9, (1 << 40) + 3)])
@pytest.mark.parametrize("grid", [2.0**-10, 1.0])
def test_folded_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, M: int, n: int,
                                        grid: float) -> None:
    f = folded.FoldedBlockGeometric(BlockGeometric(M), n)
    rng = np.random.default_rng(M + n)
    count = (1 << 14) + 77  # two chunks, the second partial
    x = rng.normal(0, 1e3, count) * grid
    x[:50] = (np.arange(50) - 25 + 0.5) * grid  # exact half-way points round up
    x[50:60] = -0.0
    for centre in (x, None):
        kw = {} if centre is None else {"centre": centre, "grid": grid}
        fast, ref = kernel_and_reference(
            monkeypatch, folded, "_folded_kernel",
            lambda kw=kw: f.signed_odd(SeededRandom(4), count, **kw))
        assert fast.dtype == ref.dtype
        np.testing.assert_array_equal(fast, ref)
        assert np.array_equal(np.signbit(fast), np.signbit(ref))


def test_folded_kernel_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    f = folded.FoldedBlockGeometric(BlockGeometric(9), 1000)
    x = np.linspace(-5, 5, 300)
    fast, ref = kernel_and_reference(
        monkeypatch, folded, "_folded_kernel",
        lambda: f.signed_odd(WordsWithValues(12, [3, 10], [0, 1 << 63]), 300, centre=x,
                             grid=1.0))
    np.testing.assert_array_equal(fast, ref)


def test_truncated_laplace_release_identical_with_and_without_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = dpnoise.TruncatedLaplace(epsilon=0.7, delta=1e-6, sensitivity=2.0)
    x = np.arange(100_000, dtype=np.float64) * 0.37
    fast, ref = kernel_and_reference(monkeypatch, folded, "_folded_kernel",
                                     lambda: m.release(x, rng=SeededRandom(6)))
    np.testing.assert_array_equal(fast, ref)


@pytest.mark.parametrize("epsilon, sensitivity", [(0.01, 1.0), (0.1, 3.0), (1.0, 1.0),
                                                  (5.0, 2.0**-7), (20.0, 1e6)])
def test_staircase_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, epsilon: float,
                                           sensitivity: float) -> None:
    """Both table layouts (the joint in-period table, and step + cell tables at small
    epsilon), both chunk shapes, half-way points and negative zeros."""
    m = dpnoise.Staircase(epsilon=epsilon, sensitivity=sensitivity)
    rng = np.random.default_rng(int(epsilon * 100))
    count = (1 << 14) + 77
    x = rng.normal(0, 1e3, count) * m.grid
    x[:50] = (np.arange(50) - 25 + 0.5) * m.grid
    x[50:60] = -0.0
    for run in (lambda: m.release(x, rng=SeededRandom(7)),
                lambda: m.law.signed_odd(SeededRandom(8), count)):
        fast, ref = kernel_and_reference(monkeypatch, staircase, "_staircase_kernel", run)
        np.testing.assert_array_equal(fast, ref)
        assert np.array_equal(np.signbit(fast), np.signbit(ref))


def test_staircase_kernel_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = dpnoise.Staircase(epsilon=1.0, sensitivity=1.0)
    x = np.linspace(-5, 5, 300)
    for zero in (0, 1 << 63):  # T = 64 and T = 63
        fast, ref = kernel_and_reference(
            monkeypatch, staircase, "_staircase_kernel",
            lambda zero=zero: m.release(x, rng=WordsWithValues(13, [3], [zero])))
        np.testing.assert_array_equal(fast, ref)


@pytest.mark.parametrize("build", [
    lambda: dpnoise.AnalyticGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0),
    lambda: dpnoise.AnalyticGaussian(epsilon=0.05, delta=1e-9, sensitivity=2.0**-20),
    lambda: dpnoise.AnalyticGaussian(epsilon=50.0, delta=1e-3, sensitivity=1e6),
    lambda: dpnoise.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=3.0),
])
def test_gaussian_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, build: Any) -> None:
    m = build()
    rng = np.random.default_rng(5)
    count = (1 << 14) + 77
    x = rng.normal(0, 1e3, count) * m.grid
    x[:50] = (np.arange(50) - 25 + 0.5) * m.grid
    x[50:60] = -0.0
    fast, ref = kernel_and_reference(monkeypatch, gaussian, "_gaussian_kernel",
                                     lambda: m.release(x, rng=SeededRandom(9)))
    np.testing.assert_array_equal(fast, ref)
    assert np.array_equal(np.signbit(fast), np.signbit(ref))


def test_gaussian_kernel_leaves_too_large_values_to_the_reference() -> None:
    from dpnoise.mechanisms.gaussian import _alias_release

    m = dpnoise.AnalyticGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0)
    x = np.zeros(200)
    x[17] = 2.0**52 * m.grid
    with pytest.raises(dpnoise.PrecisionError):
        _alias_release(m.table, SeededRandom(1), x, m.grid, (len(m.weights) - 1) // 2)
