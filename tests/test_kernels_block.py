"""The compiled lattice-Laplace kernel (kernels/block.c) returns bit-for-bit what the numpy
reference of ``BlockGeometric.signed_odd`` returns from the same words."""

from __future__ import annotations

import numpy as np
import pytest

import dpnoise
from dpnoise.exact import geometric
from dpnoise.exact.geometric import BlockGeometric
from dpnoise.randomness import SeededRandom

pytestmark = pytest.mark.skipif(geometric._block_kernel() is None, reason="kernels off")


def _pure(monkeypatch: pytest.MonkeyPatch, fn):  # type: ignore[no-untyped-def]
    with monkeypatch.context() as mp:
        mp.setattr(geometric, "_block_kernel", lambda: None)
        return fn()


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
        fast = b.signed_odd(SeededRandom(3), n, **kw)
        ref = _pure(monkeypatch, lambda kw=kw: b.signed_odd(SeededRandom(3), n, **kw))
        assert fast.dtype == ref.dtype
        np.testing.assert_array_equal(fast, ref)
        assert np.array_equal(np.signbit(fast), np.signbit(ref))


class _ZeroWords:
    """A word source that yields some a-words with all low 63 bits zero (the p = 2^-63
    event): the kernel must hand the chunk to the reference, which extends the count."""

    def __init__(self) -> None:
        self.inner = SeededRandom(11)
        self.first = True

    def words(self, n: int) -> np.ndarray:
        w = self.inner.words(n)
        if self.first:
            w[[3, 10]] = [0, np.uint64(1 << 63)]
            self.first = False
        return w


def test_block_kernel_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    b = BlockGeometric(9)
    x = np.linspace(-5, 5, 300)
    fast = b.signed_odd(_ZeroWords(), 300, centre=x, grid=1.0)
    ref = _pure(monkeypatch, lambda: b.signed_odd(_ZeroWords(), 300, centre=x, grid=1.0))
    np.testing.assert_array_equal(fast, ref)
    assert abs(fast[3] - round(x[3])) >= 9 * 63  # |Z| >= Q·M with Q >= 63: extended


def test_laplace_release_identical_with_and_without_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = dpnoise.Laplace(epsilon=0.3, sensitivity=2.0)
    x = np.arange(100_000, dtype=np.float64) * 0.37
    fast = m.release(x, rng=SeededRandom(5))
    ref = _pure(monkeypatch, lambda: m.release(x, rng=SeededRandom(5)))
    np.testing.assert_array_equal(fast, ref)


def test_threads_are_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured (README "Threads"): two threads are not a reliable gain on the project's
    2-vCPU machine even with the compiled kernels, so DPNOISE_THREADS opts in."""
    from dpnoise import parallel

    monkeypatch.delenv("DPNOISE_THREADS", raising=False)
    assert parallel.threads() == 1
    monkeypatch.setenv("DPNOISE_THREADS", "2")
    assert parallel.threads() == 2


@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1), (0.05, 3), (5.0, 1), (0.3, 40)])
def test_integer_block_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, epsilon: float,
                                               sensitivity: int) -> None:
    from dpnoise.exact import integer_block

    m = dpnoise.Geometric(epsilon=epsilon, sensitivity=sensitivity)
    assert m.block is not None
    n = (1 << 14) * 2 + 333
    fast = m.sample_noise(n, rng=SeededRandom(8))
    with monkeypatch.context() as mp:
        mp.setattr(integer_block, "_intblock_kernel", lambda: None)
        ref = m.sample_noise(n, rng=SeededRandom(8))
    np.testing.assert_array_equal(fast, ref)
    assert np.any(fast == 0) and fast.min() < 0 < fast.max()


def test_integer_block_kernel_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dpnoise.exact import integer_block

    block = dpnoise.Geometric(epsilon=1.0, sensitivity=1).block
    fast = np.empty(300, dtype=np.int64)
    block.sample_into(_ZeroWords(), fast)
    ref = np.empty(300, dtype=np.int64)
    with monkeypatch.context() as mp:
        mp.setattr(integer_block, "_intblock_kernel", lambda: None)
        block.sample_into(_ZeroWords(), ref)
    np.testing.assert_array_equal(fast, ref)


@pytest.mark.parametrize("epsilon, delta, sensitivity", [(1.0, 1e-6, 1), (0.1, 1e-9, 5),
                                                         (3.0, 1e-3, 1)])
def test_discrete_gaussian_table_kernel_equals_reference(
        monkeypatch: pytest.MonkeyPatch, epsilon: float, delta: float, sensitivity: int) -> None:
    from dpnoise.exact import dg_table

    m = dpnoise.DiscreteGaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    assert m.table is not None
    n = (1 << 14) * 2 + 999
    fast = m.sample_noise(n, rng=SeededRandom(4))
    with monkeypatch.context() as mp:
        mp.setattr(dg_table, "_alias_kernel", lambda: None)
        ref = m.sample_noise(n, rng=SeededRandom(4))
    np.testing.assert_array_equal(fast, ref)
