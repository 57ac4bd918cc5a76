"""The lattice Gaussian builds faster with the same calibration: each shortcut equals the
computation it replaces, value for value (bit for bit for floats)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise.exact.alias import largest_first
from dpnoise.mechanisms import gaussian


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 1e-300, 0.3]), min_size=1,
                max_size=40), st.integers(0, 45))
def test_largest_first_is_the_stable_sort_prefix(values: list[float], k: int) -> None:
    v = np.array(values)
    k = min(k, v.size)
    want = np.argsort(-v, kind="stable")[:k]
    assert sorted(largest_first(v, k).tolist()) == sorted(want.tolist())


def test_largest_first_on_a_gaussian_table_matches_argsort() -> None:
    _, lp = gaussian._ideal_logpmf(700.3, 0.5)
    scaled = np.exp(lp + 64 * math.log(2.0))
    frac = scaled - np.floor(scaled)
    for k in (0, 1, 17, 1000, frac.size):
        want = np.argsort(-frac, kind="stable")[:k]
        assert np.array_equal(np.sort(largest_first(frac, k)), np.sort(want))


def test_ideal_delta_with_reused_buffers_is_the_same_float() -> None:
    """The σ search's test (reused buffers) against _hockey(_ideal_logpmf(...)): equal floats
    for growing and shrinking σ (buffers reallocated and reused) and several shifts."""
    g = np.random.default_rng(5)
    for grid, steps, eps in ((1.0, 1, 0.01), (0.5, 64, 1.0), (2.0**-3, 1024, 0.3),
                             (1.0, 4096, 5.0)):
        ideal = gaussian._IdealDelta(grid, steps, eps)
        sigmas = np.sort(g.uniform(0.5, 2000 * grid, 4))
        for sigma in [*sigmas, *(sigmas[::-1] * 1.0003)]:
            want = gaussian._hockey(gaussian._ideal_logpmf(sigma, grid)[1], steps, eps,
                                    symmetric=True, exact_sum=False)
            assert ideal(sigma) == want


def test_ideal_logpmf_in_the_search_buffers_is_the_same_array() -> None:
    """The table is quantised from the search's buffer: the same floats as fresh arrays."""
    g = np.random.default_rng(8)
    for grid, steps, eps in ((1.0, 1, 0.01), (2.0**-7, 1280, 0.1), (2.0**-10, 1024, 5.0)):
        ideal = gaussian._IdealDelta(grid, steps, eps)
        for sigma in [*np.sort(g.uniform(0.5, 2000 * grid, 3)), 0.7 * grid]:
            assert np.array_equal(ideal.logpmf(sigma), gaussian._ideal_logpmf(sigma, grid)[1])
