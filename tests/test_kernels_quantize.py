"""The compiled exact quantisation shares (kernels/quantize.c) give the same 64-bit weights
as the reference's packed big-integer arithmetic and the pure-Python reference."""

from __future__ import annotations

import numpy as np
import pytest

from dpnoise.exact import alias

from .helpers import kernel_and_reference


@pytest.mark.parametrize("n, spread", [(2, 1.0), (7, 0.5), (1000, 8.0), (35263, 1.0),
                                       (4096, 9.9)])
def test_compiled_shares_equal_the_reference(monkeypatch: pytest.MonkeyPatch, n: int,
                                             spread: float) -> None:
    g = np.random.default_rng(n)
    p = np.exp2(-spread * g.random(n))  # within a factor 2^10: the fast path applies
    p[::3] = p[0]  # ties in the remainders (lowest index first)
    fast, ref = kernel_and_reference(monkeypatch, alias, "_compiled_shares",
                                     lambda: alias.quantize_weights_array(p))
    np.testing.assert_array_equal(fast, ref)
    assert alias.exact_sum(fast) == 2**64
    if n <= 1000:
        assert fast.tolist() == alias._quantize_exact(p)  # the pure-Python construction


@pytest.mark.parametrize("n", [2, 3, 5, 1000, 65536, 70001])
def test_compiled_alias_table_equals_the_sweep_and_the_reference(n: int) -> None:
    g = np.random.default_rng(n)
    p = np.exp2(-6 * g.random(n))
    p[::7] = p[1]
    w = alias.quantize_weights_array(p)
    bits = max(1, (n - 1).bit_length())
    cols, mass = 1 << bits, alias.TOTAL >> bits
    padded = np.zeros(cols, dtype=np.uint64)
    padded[:n] = w
    compiled = alias._compiled_sweep(padded, np.uint64(mass))
    if compiled is None:
        pytest.skip("kernels off")
    swept = alias._sweep(padded, np.uint64(mass))
    np.testing.assert_array_equal(compiled[0], swept[0])
    np.testing.assert_array_equal(compiled[1], swept[1])
    if n <= 1000:
        ref = alias.AliasTable.__new__(alias.AliasTable)
        ref._build_reference([int(x) for x in w])
        np.testing.assert_array_equal(compiled[0], ref._thr)
        np.testing.assert_array_equal(compiled[1], ref._alias)
