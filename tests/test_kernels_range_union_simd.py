"""The union kernel's vector rows (AVX-512 and AVX2: kernels/range_union_avx512.c,
range_union_avx2.c) give the same bits as its scalar rows (kernels/range_union.c), value for
value, from the same words: on random
unions and centres -- at and next to every piece's ends, in the gaps, outside the hull, of
huge and tiny magnitude -- and on random words with the rare events (12 zero low bits, a
zero geometric word) planted; and the compiled grid centres equal numpy's round half up."""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import dpnoise
from dpnoise import kernels
from dpnoise.exact import range_union as ru
from dpnoise.grid import round_half_up
from dpnoise.randomness import SeededRandom

pytestmark = pytest.mark.skipif(ru._union_kernel() is None, reason="kernels off")

HUGE = [2.0**52, 2.0**50, 2.0**50 - 1, 1e15, 2.0**40, 3.0, 1.0, 0.0]


VP, I64 = ctypes.c_void_p, ctypes.c_int64
RELEASE_SIG = [I64, I64, VP, VP, VP, VP, VP, VP, I64, ctypes.c_double, VP, I64, I64,
               ctypes.c_uint64, VP, VP, VP, I64, ctypes.c_double, VP, VP]


def _lanes() -> int:
    """The widest rows this CPU runs (8: AVX-512, 4: AVX2, 1: scalar only)."""
    return int(kernels.function("dpk_union_simd_lanes", [], I64)())


def _entry(name: str, sig: list, lanes: int):  # type: ignore[no-untyped-def]
    """The kernel ``name``_lanes with its rows capped at ``lanes`` values."""
    fn = kernels.function(f"dpk_union_{name}_lanes", [I64, *sig], I64)
    return lambda *args: fn(lanes, *args)


WIDTHS = [w for w in (8, 4) if ru._union_kernel() is not None and w <= _lanes()]


@st.composite
def _unions(draw):  # type: ignore[no-untyped-def]
    """2-10 pieces (more than 8: the tables are gathered, not permuted), integer-ish ends,
    random gaps and lengths, optional unbounded ends."""
    k = draw(st.sampled_from([2, 3, 4, 9]))
    ends, x = [], draw(st.integers(-20, 20)) * 0.5
    for _ in range(k):
        length = draw(st.integers(0, 24)) * 0.25 + 0.25
        ends.append([x, x + length])
        x += length + draw(st.integers(1, 4000)) * 0.25
    if draw(st.booleans()):
        ends[0][0] = -math.inf
    if draw(st.booleans()):
        ends[-1][1] = math.inf
    return [tuple(e) for e in ends]


def _centres(g: np.random.Generator, cells: list[float], n: int) -> np.ndarray:
    """Centres at and around every cell end, in the hull, outside it, and huge/tiny."""
    lo, hi = min(cells), max(cells)
    edges = np.array([c + d for c in cells for d in (-2, -1, 0, 1, 2)], dtype=float)
    mags = np.array(HUGE + [-h for h in HUGE])
    rest = n - edges.size - mags.size
    cf = np.concatenate([edges, mags, np.round(g.uniform(lo - 300, hi + 300, rest // 2)),
                         np.round(g.uniform(-1e12, 1e12, rest - rest // 2))])
    g.shuffle(cf)
    return np.ascontiguousarray(cf)


def _words(g: np.random.Generator, n: int) -> np.ndarray:
    w = g.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    w[g.integers(0, n, max(1, n // 50))] &= np.uint64(2**64 - 4096)  # 12 zero low bits
    return w


def _run(fn, sampler, cf, w, qz, grid: float, guided: bool):  # type: ignore[no-untyped-def]
    tabs = list(sampler._ktuple)
    if not guided:
        tabs[6] = 0  # the binary search over the block table instead of the guide
    out = np.full(cf.size, np.nan)
    scratch = np.empty(3 * (sampler.P - 1))
    bad = fn(cf.size, sampler.P, cf.ctypes.data, w.ctypes.data, qz.ctypes.data, *tabs,
             grid / 2, scratch.ctypes.data, out.ctypes.data)
    return bad, out.view(np.uint64)


@pytest.mark.skipif(not WIDTHS, reason="no vector rows on this CPU")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dom=_unions(), epsilon=st.sampled_from([0.3, 1.0, 4.0]), seed=st.integers(0, 2**32 - 1),
       n=st.integers(300, 700))
@example(dom=[(3.0 * i, 3.0 * i + 1) for i in range(9)], epsilon=1.0, seed=1, n=333)  # P > 8
@example(dom=[(-math.inf, 0.0), (2.0, math.inf)], epsilon=0.3, seed=2, n=301)
def test_vector_rows_equal_scalar_rows(dom, epsilon: float, seed: int, n: int
                                       ) -> None:  # type: ignore[no-untyped-def]
    """Whole chunks (any length: the last n mod 8 or 4 values take the scalar rows) through
    the AVX-512 rows, the AVX2 rows and the scalar rows: identical bits and the same bad
    flag, with the guide table and with the binary search; without the huge centres the
    flag is 0."""
    try:
        m = dpnoise.RangeLaplace(epsilon=epsilon, sensitivity=1.0, domain=dom, grid=0.25)
    except dpnoise.ParameterError:  # too wide for the noise scale: nothing to sample
        return
    kern, sampler = ru._union_kernel(), m._union
    g = np.random.default_rng(seed)
    cells = [c for piece in sampler.gd.cells for c in piece if math.isfinite(c)]
    cf = _centres(g, cells, n)
    w = _words(g, (sampler.P + 2) * n)
    w[(sampler.P + 1) * n + g.integers(0, n)] = 0  # a zero geometric word: bad for both
    nd = (sampler.P - 1) * n
    qz, ext = np.empty(nd), np.empty(nd, dtype=np.int64)
    ne = kern.qz(w.ctypes.data, nd, qz.ctypes.data, ext.ctypes.data)
    qz[ext[:ne]] = 12.0 + g.integers(0, 6, ne)
    inside = np.ascontiguousarray(np.clip(cf, min(cells) - 40, max(cells) + 40))
    vectors = [_entry("release", RELEASE_SIG, lanes) for lanes in WIDTHS]
    for c in (cf, inside):
        for guided in (True, False):
            slow = _run(kern.scalar, sampler, c, w, qz, m.grid, guided)
            assert slow[0] == 1
            for fn in vectors:
                fast = _run(fn, sampler, c, w, qz, m.grid, guided)
                assert fast[0] == 1
                np.testing.assert_array_equal(fast[1], slow[1])
    w[(sampler.P + 1) * n:] |= np.uint64(1)  # no zero geometric word: in range, not bad
    slow = _run(kern.scalar, sampler, inside, w, qz, m.grid, True)
    assert slow[0] == 0
    for fn in vectors:
        fast = _run(fn, sampler, inside, w, qz, m.grid, True)
        assert fast[0] == 0
        np.testing.assert_array_equal(fast[1], slow[1])


def test_forced_scalar_release_equals_dispatched(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release through the dispatched rows and through the scalar rows only (the
    ``DPNOISE_SIMD=0`` choice) from the same seed: the same bits, over two chunks."""
    m = dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 10), (20, 30)])
    xs = np.random.default_rng(4).uniform(0, 10, 9001)
    xs[:6] = [0.0, 10.0, 20.0, 30.0, 5.0, 25.0]
    fast = m.release(xs, rng=SeededRandom(8))
    kern = ru._union_kernel()
    monkeypatch.setattr(ru, "_union_kernel", lambda: kern._replace(release=kern.scalar))
    slow = m.release(xs, rng=SeededRandom(8))
    np.testing.assert_array_equal(fast.view(np.uint64), slow.view(np.uint64))


@pytest.mark.parametrize("lanes", [8, 4, 1])
def test_compiled_centres_equal_numpy(lanes: int) -> None:
    """The grid-centre pass, in rows of each width, gives numpy's round_half_up(x / grid), bit
    for bit (halves, negative halves, -0.0, huge and tiny values), and its status: 1 for a
    value outside every piece or not finite, else 2 for |x / grid| >= 2^50, else 0."""
    fn = _entry("centres", [VP, I64, VP, VP, I64, ctypes.c_double, VP], lanes)
    grid = 2.0**-3
    lo = np.array([-math.inf, -4.0, 7.5])
    hi = np.array([-5.0, 3.0, math.inf])

    def run(x: np.ndarray) -> tuple[int, np.ndarray]:
        x = np.ascontiguousarray(x, dtype=np.float64)
        cf = np.full(x.size, np.nan)
        status = fn(x.ctypes.data, x.size, lo.ctypes.data, hi.ctypes.data, 3, grid,
                    cf.ctypes.data)
        return status, cf

    g = np.random.default_rng(1)
    halves = (np.arange(-64, 64) + 0.5) * grid
    x = np.concatenate([halves, [-0.0, 0.0, 5e-324, -5e-324, 2.0**45, -(2.0**45)],
                        g.uniform(-4, 3, 301), g.uniform(8, 1e6, 101)])
    x = x[(x <= -5) | ((x >= -4) & (x <= 3)) | (x >= 7.5)]
    status, cf = run(x)
    assert status == 0
    np.testing.assert_array_equal(cf.view(np.uint64), round_half_up(x / grid).view(np.uint64))
    for bad, want in ((4.0, 1), (math.nan, 1), (math.inf, 1), (2.0**47, 2), (-(2.0**47), 2)):
        for at in (0, 5, x.size - 1):  # in the vector rows and in the scalar tail
            y = x.copy()
            y[at] = bad
            assert run(y)[0] == want
    y = x.copy()
    y[[3, 9]] = [2.0**47, 4.0]  # outside wins over too large
    assert run(y)[0] == 1


@pytest.mark.parametrize("lanes", [8, 4, 1])
def test_decision_zero_counts_equal_numpy(lanes: int) -> None:
    """dpk_union_qz in rows of each width (then a scalar tail): Q' = trailing zeros of the low
    12 bits (12 when all are zero) and the positions of the 12s in increasing order, as
    numpy."""
    qz_rows = _entry("qz", [VP, I64, VP, VP], lanes)
    g = np.random.default_rng(6)
    w = _words(g, 1003)
    w[[0, 7, 8, 1001, 1002]] &= np.uint64(2**64 - 4096)
    qz, ext = np.full(w.size, np.nan), np.full(w.size, -1, dtype=np.int64)
    ne = qz_rows(w.ctypes.data, w.size, qz.ctypes.data, ext.ctypes.data)
    low = w & np.uint64(4095)
    want = np.bitwise_count((low & (np.uint64(0) - low)) - np.uint64(1)).astype(np.float64)
    want = np.minimum(want, 12.0)  # low == 0: 64 ones -> 12
    np.testing.assert_array_equal(qz, want)
    np.testing.assert_array_equal(ext[:ne], np.flatnonzero(low == 0))


def test_a_copy_reads_its_own_tables() -> None:
    """The kernel addresses a union sampler keeps are rebuilt in a deep copy (never the
    original's arrays): the copy releases the same values after the original is gone."""
    import copy
    import gc

    m = dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 10), (20, 30)])
    xs = np.linspace(0.0, 30.0, 2001)
    xs = xs[m.domain.contains(xs)]
    want = m.release(xs, rng=SeededRandom(3))
    twin = copy.deepcopy(m)
    assert twin._union._ktuple == twin._union._kernel_tables() != m._union._ktuple
    assert (twin._ends.lo_at, twin._ends.hi_at) != (m._ends.lo_at, m._ends.hi_at)
    del m
    gc.collect()
    np.testing.assert_array_equal(twin.release(xs, rng=SeededRandom(3)), want)
