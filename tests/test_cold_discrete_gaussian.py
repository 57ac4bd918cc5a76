"""The discrete Gaussian builds faster with the same calibration: the wide-range exact
quantisation gives the pure-Python reference's integers, and δ computed into reused
buffers is the same float as δ on fresh arrays."""

from __future__ import annotations

import numpy as np
import pytest

from dpnoise.exact import alias
from dpnoise.exact.quantize_wide import quantize_wide
from dpnoise.laws import discrete_gaussian as dg


def _cases() -> list[np.ndarray]:
    g = np.random.default_rng(1)
    out = []
    for n in (2, 3, 10, 1000):
        for spread in (12, 64, 90, 300, 1000):
            p = np.exp2(-spread * g.random(n))
            out.append(p)
            tied = p.copy()
            tied[::3] = tied[0]  # equal remainders: lowest index first
            out.append(tied)
            holes = p.copy()
            holes[1::4] = 0.0
            out.append(holes)
    for s2 in (3.7, 100.0, 5000.0):  # discrete Gaussian tables: symmetric, 2^-64 tails
        k = int(np.ceil(np.sqrt(2 * s2 * (64 * np.log(2) + 2)))) + 1
        z = np.arange(-k, k + 1.0)
        out.append(np.exp(-(z * z) / (2 * s2)))
    out += [np.array([1.0, 5e-324]), np.array([1.0, 0.0, 1e-300, 1e-300]),
            np.array([0.5, 0.5, 2.0**-80, 2.0**-80, 2.0**-79])]
    return out


@pytest.mark.parametrize("p", _cases(), ids=lambda p: f"n{p.size}")
def test_wide_quantisation_equals_the_reference(p: np.ndarray) -> None:
    want = alias._quantize_exact(p)
    got = quantize_wide(p)
    if got is None:  # one entry takes (almost) all 2^64: left to the reference
        assert max(want) >= 2**64 - 1
    else:
        assert got.tolist() == want
    assert alias.quantize_weights(p) == want


def test_delta_into_reused_buffers_is_the_same_float() -> None:
    g = np.random.default_rng(4)
    work = dg.DeltaBuffers()
    sigma2s = [*np.exp(g.uniform(np.log(0.01), np.log(1e8), 12)), 1.0, 7.2e7, 3.0]
    for s2 in sigma2s:  # growing, shrinking and regrowing the buffers
        for eps, d in ((0.01, 16), (1.0, 1), (5.0, 2)):
            assert dg.delta(s2, eps, d, work) == dg.delta(s2, eps, d)
