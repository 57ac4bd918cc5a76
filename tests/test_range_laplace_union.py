"""RangeLaplace on unions: the per-element UnionSampler (exact/range_union.py).

Verified privacy of the sampled pmf, release against noise() (chi-square, distinct values in
one call), the same operations and words for every centre, nothing built per centre, far
pieces with positive exactly known probability, and its distortion inside the calibration's."""

import math
import sys

import numpy as np
import pytest

from dpnoise import RangeLaplace, SeededRandom, verify
from dpnoise.exact.range_lattice import distortion_bound
from dpnoise.exact.range_union import UnionSampler, union_distortion_bound

from .helpers import CountingSource, assert_fits_lattice_law

INF = math.inf
G = 2.0**-5  # coarse grid: small block lengths keep the exact verification fast


@pytest.mark.parametrize("dom", [
    [(-INF, 0), (0.6, 0.9), (2, INF)],              # unbounded ends, a piece narrower than Δ
    [(0, 1.0), (1.001, 2)],                         # a gap narrower than one grid cell
])
def test_union_sampler_verified(dom):
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=dom, grid=G)
    rep = verify(m)
    assert rep.passed, (rep.epsilon, m.bound)
    assert rep.epsilon <= m.bound.total <= 1.0


def test_release_matches_noise_for_distinct_values():
    """One call with distinct true values (edge, middle, near a gap, far piece): each value's
    outputs follow noise(x) (chi-square), and all lie in the domain on the grid."""
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 2), (3, 4), (8, 9)], grid=G)
    xs = np.array([0.0, 2.0, 3.0, 9.0])
    n = 12_000
    y = m.release(np.tile(xs, n), rng=SeededRandom(5)).reshape(n, xs.size)
    assert np.all(m.in_output_set(y))
    for col, x in enumerate(xs):
        assert_fits_lattice_law(m, float(x), y[:, col])


def test_pmf_is_normalised_and_close_to_the_ideal_law():
    m = RangeLaplace(epsilon=0.5, sensitivity=1.0, domain=[(-INF, 0), (1, 3), (3.5, INF)],
                     grid=G)
    us = m._union
    lam = math.log(2) / m.block
    for x in (0.0, 2.0, 3.5, 7.0):
        c = int(m._centres(np.array([x]))[0])
        j = np.arange(c - 40 * m.block, c + 40 * m.block)
        lp = us.logpmf(j, c)
        fin = np.isfinite(lp)
        assert np.array_equal(fin, m._gd.reachable_cells(j))
        assert math.fsum(np.exp(lp[fin])) == pytest.approx(1.0, abs=1e-11)
        k = np.where(j >= c, j - c, c - 1 - j)[fin]
        ideal = -k * lam
        ideal -= np.log(np.sum(np.exp(ideal)))
        assert np.max(np.abs(lp[fin] - ideal)) <= 2 * union_distortion_bound(m.block, 3) + 1e-12


def test_far_piece_keeps_positive_exact_probability():
    """A piece thousands of scales away: probability ~2^-4000, still positive for every centre
    (a zero next to a positive value would be an infinite loss) and within the proven bound."""
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 1), (6000, 6001)], grid=G)
    us = m._union
    far = np.arange(int(6000 / G), int(6001 / G))
    lps = []
    for x in (0.0, 0.5, 1.0):
        c = int(m._centres(np.array([x]))[0])
        lp = us.logpmf(far, c)
        assert np.all(np.isfinite(lp)) and np.max(lp) < -2000
        lps.append(lp)
    assert np.max(np.abs(lps[2] - lps[0])) <= m.bound.total  # neighbours x = 0 and x = 1
    # near side: the mass of the own piece sums to 1 up to that tiny far mass
    j = np.arange(0, int(1 / G))
    assert math.fsum(np.exp(us.logpmf(j, 0)).tolist()) == pytest.approx(1.0, abs=1e-12)
    y = m.release(np.zeros(4000), rng=SeededRandom(3))
    assert np.all(m.domain.contains(y))


def _trace_release(m, x, seed=4):
    """Lines executed inside dpnoise by one release (and the words drawn)."""
    lines = []

    def tracer(frame, event, arg):
        if "/dpnoise/" not in frame.f_code.co_filename:
            return None
        if event == "line":
            lines.append((frame.f_code.co_filename.rsplit("/", 1)[-1], frame.f_lineno))
        return tracer

    src = CountingSource(seed)
    sys.settrace(tracer)
    try:
        m.release(x, rng=src)
    finally:
        sys.settrace(None)
    return lines, src.drawn


def test_same_operations_and_words_for_every_centre():
    """Deterministic: the same Python lines (hence the same numpy calls, on arrays of the same
    size) and the same number of words, for a centre at a piece's edge, in its middle, next
    to a gap, in an unbounded piece; nothing is built or cached per centre."""
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(-INF, 0), (1, 3), (3.5, INF)],
                     grid=G)
    us = m._union
    state = (dict(m.__dict__), dict(us.__dict__))
    points = (0.0, -40.0, 1.0, 2.0, 3.0, 3.5, 5.0, 400.0)
    for shape in ((), (64,)):
        runs = [_trace_release(m, np.full(shape, x) if shape else x) for x in points]
        assert all(lines == runs[0][0] for lines, _ in runs)
        assert {drawn for _, drawn in runs} == {us.words_per_draw * (64 if shape else 1)}
    assert dict(m.__dict__) == state[0] and dict(us.__dict__).keys() == state[1].keys()
    assert all(us.__dict__[k] is v for k, v in state[1].items())


def test_law_parameters_do_not_depend_on_the_batch():
    """logpmf computes a centre's parameters alone; a release computes them in a batch: the
    floats must be identical (the law is exactly what is sampled)."""
    m = RangeLaplace(epsilon=0.7, sensitivity=1.0, domain=[(-INF, 0), (1, 3), (3.5, 9)],
                     grid=G)
    us = m._union
    c = np.arange(-700, 300 + 1, dtype=np.float64)
    c = c[m._gd.reachable(c)]
    q, sides, thr, chain = us._params(c)
    for i in range(0, c.size, 7):
        one = us._scalar_params(int(c[i]))
        assert one[0] == q[i] and one[1] == tuple(float(v[i]) for v in sides)
        assert one[2] == tuple(float(v[i]) for v in thr)
        assert one[3] == tuple((float(n[i]), float(x[i]), bool(f[i])) for n, x, f in chain)


def test_distortion_inside_the_calibrations_bound():
    """The calibration adds distortion_bound(M, P) twice; the union sampler's own bound is
    smaller for every block length and piece count."""
    for M in (1, 2, 7, 64, 1000, 4097, 1 << 17):
        for P in (2, 3, 8, 64):
            assert union_distortion_bound(M, P) <= distortion_bound(M, P)


def test_union_release_shapes_and_reproducibility():
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 1), (2, 3)], grid=G)
    assert isinstance(m.release(0.5, rng=SeededRandom(1)), float)
    x = np.linspace(0, 1, 12).reshape(3, 4)
    a = m.release(x, rng=SeededRandom(2))
    assert a.shape == (3, 4)
    np.testing.assert_array_equal(a, m.release(x, rng=SeededRandom(2)))
    assert isinstance(m._union, UnionSampler) and m._union.words_per_draw == 4
