"""RangeLaplace: verified privacy of the sampled lattice pmf and of the ideal density, minimality,
outputs in the domain, exact sampling (chi-square), laws, invalid input, reproducibility."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from dpnoise import ParameterError, RangeLaplace, SeededRandom, Union, verify
from dpnoise.exact.range_centre import CentreSampler
from dpnoise.exact.range_convex import convex_distortion_bound
from dpnoise.exact.range_lattice import block_weights, distortion_bound
from dpnoise.laws.range_laplace import eps_std_union, sigma_std
from dpnoise.params import LN2

from .helpers import CountingSource, assert_fits_lattice_law

INF = math.inf
G = 2.0**-5  # coarse grid: small block lengths keep the exact verification fast

DOMAINS = {
    "interval": (0, 10),
    "short": (0, 0.5),
    "half-line": (0, INF),
    "left-half-line": (-INF, 3),
    "union": [(0, 1), (2, 3)],
    "gaps": [(-INF, 0), (1, 3), (3.5, INF)],
    "far-union": [(0, 1), (40, 41)],
}


class NoWords:
    """A random source that fails the test if any word is drawn."""

    def words(self, n):
        raise AssertionError("randomness drawn before validation")


@pytest.mark.parametrize("name", list(DOMAINS))
def test_lattice_loss_verified_and_minimal(name):
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=DOMAINS[name], grid=G)
    rep = verify(m)
    assert rep.passed, (rep.epsilon, m.bound)
    assert rep.epsilon <= m.bound.total <= 1.0
    # one block step smaller (>= 0.1 % smaller scale at these block lengths) is not 1-DP
    worse = verify(m.privacy_model(block=m.block - 1))
    assert worse.epsilon > 1.0
    # the lattice law's own minimal scale is close to the continuous one (it can be a little
    # smaller on a narrow domain: the cells span W − L, not W)
    assert abs(m.scale_inflation) < 0.05


@pytest.mark.parametrize("name", ["interval", "half-line", "union", "gaps"])
def test_continuous_density_verified_and_minimal(name):
    m = RangeLaplace(epsilon=0.7, sensitivity=1.5, domain=DOMAINS[name], grid=G)
    ends = set(m.domain.finite_endpoints)
    pairs = [p for p in m.probe_pairs()
             if (p[0] in ends or p[1] in ends) and p[1] - p[0] >= 0.74 * 1.5]
    ok = verify(m.continuous_model(pairs=pairs), epsilons=[0.7])
    assert ok.epsilon <= 0.7 * (1 + 1e-9)
    bad = verify(m.continuous_model(scale=0.999 * m.continuous_scale, pairs=pairs),
                 epsilons=[0.7])
    assert bad.epsilon > 0.7


_piece = st.tuples(st.floats(-20, 20), st.floats(0.2, 8))


@st.composite
def domains(draw):
    kind = draw(st.sampled_from(["interval", "half", "union", "gaps"]))
    a, w = draw(_piece)
    if kind == "interval":
        return (a, a + w)
    if kind == "half":
        return (a, INF) if draw(st.booleans()) else (-INF, a)
    gap = draw(st.floats(0.1, 3))
    w2 = draw(st.floats(0.2, 5))
    if kind == "union":
        return [(a, a + w), (a + w + gap, a + w + gap + w2)]
    return [(-INF, a), (a + gap, INF)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dom=domains(), sens=st.floats(0.3, 3), eps=st.floats(0.3, 2.5))
def test_property_random_domains(dom, sens, eps):
    grid = 2.0 ** math.floor(math.log2(min(sens, 0.2) / 16))
    m = RangeLaplace(epsilon=eps, sensitivity=sens, domain=dom, grid=grid)
    rep = verify(m)
    assert rep.passed, (dom, sens, eps, rep.epsilon)
    pieces = m.domain.pieces
    s = sigma_std(pieces, sens, eps)
    assert eps_std_union(pieces, sens, s) <= eps * (1 + 1e-12)
    assert eps_std_union(pieces, sens, 0.999 * s) > eps
    y = m.release(np.full(300, pieces[0][0] if math.isfinite(pieces[0][0]) else pieces[0][1]),
                  rng=SeededRandom(7))
    assert np.all(m.domain.contains(y))


@pytest.mark.parametrize("name", list(DOMAINS))
def test_outputs_in_domain_on_half_offset_grid(name):
    m = RangeLaplace(epsilon=0.5, sensitivity=1.0, domain=DOMAINS[name], grid=G)
    pts = [p for p in m.domain.finite_endpoints] + [m._default_value()]
    x = np.repeat(pts, 2000)
    y = m.release(x, rng=SeededRandom(1))
    assert y.shape == x.shape
    assert np.all(m.domain.contains(y))
    u = y / G - 0.5
    assert np.all(u == np.floor(u))


@pytest.mark.parametrize("name,x", [("interval", 9.9), ("short", 0.0), ("half-line", 0.2),
                                    ("union", 0.9), ("gaps", 1.2), ("far-union", 40.5)])
def test_chi_square_against_exact_pmf(name, x):
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=DOMAINS[name], grid=G)
    law = m.noise(x)
    n = 100_000
    y = m.release(np.full(n, x), rng=SeededRandom(11))
    assert_fits_lattice_law(m, x, y)
    assert y.mean() == pytest.approx(law.mean(), abs=5 * law.std() / math.sqrt(n))


def test_ks_against_continuous_cdf():
    """The released grid law is the discretised continuous law: KS distance ~ grid/scale."""
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10))
    y = m.release(np.full(20_000, 2.0), rng=SeededRandom(5))
    ideal = m.continuous_law(2.0, scale=m.scale)
    res = stats.kstest(y, lambda t: ideal.cdf(t))
    assert res.pvalue > 1e-3


def test_law_consistency_and_moments():
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10))
    law = m.noise(3.0)
    assert law.probs.sum() == pytest.approx(1, abs=1e-12)
    for q in (0.01, 0.3, 0.5, 0.9, 0.999):
        assert float(law.cdf(law.ppf(q))) >= q - 1e-12
    ideal = m.continuous_law(3.0, scale=m.scale)
    assert law.mean() == pytest.approx(ideal.mean(), abs=2 * m.grid)
    assert law.var() == pytest.approx(ideal.var(), rel=2e-3)
    assert law.mean_abs_error() == pytest.approx(ideal.mean_abs_error(), abs=2 * m.grid)
    assert law.mean_abs() == pytest.approx(ideal.mean_abs(), abs=2 * m.grid)
    assert np.exp(law.logpmf(law.support[:5])) == pytest.approx(law.probs[:5])
    assert float(law.pmf(0.1234)) == 0.0


def test_sampler_pmf_sums_to_one_including_chain():
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 1), (3, 4), (9, 10)], grid=G)
    s = CentreSampler(m._gd, m.block, 64)
    j = np.arange(-100, 400)
    assert np.exp(s.logpmf(j)).sum() == pytest.approx(1, abs=1e-12)
    assert s.words_per_draw == 2 + s.n_decisions


def test_distortion_bound_is_small():
    assert distortion_bound(1000, 0) < 1e-9
    assert distortion_bound(1000, 4) < 1e-6
    bw = block_weights(777)
    assert sum(bw.W) == 2**64 and min(bw.W) > 0


def test_metric_mode():
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10), mode="metric", grid=G)
    assert m.continuous_scale == 2.0
    assert m.guarantee.notion == "metric"
    assert m.bound.metric_rate <= 1.0 * G / 1.0
    assert verify(m).passed
    f = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(-INF, 0), (1, INF)], mode="metric",
                     grid=G)
    assert f.continuous_scale == pytest.approx(1.3534821142256737694, rel=1e-12)
    assert f.bound.metric_gap_ratio <= G and verify(f).passed


def test_degenerate_and_narrow_domains():
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(2.5, 2.5))
    assert m.release(2.5) == 2.5
    assert m.guarantee.epsilon == 0.0 and m.scale == 0.0
    assert verify(m).epsilon == 0.0
    n = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 0.5), grid=G)
    assert n.continuous_scale == 0.5  # W <= Δ: sigma = W/ε (effective sensitivity W)
    s = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(-INF, INF), grid=G)
    assert s.continuous_scale == 1.0 and verify(s).passed


def test_guarantee_and_details():
    m = RangeLaplace(epsilon=0.5, sensitivity=2.0, domain=(0, 100))
    g = m.guarantee
    assert (g.epsilon, g.delta, g.notion) == (0.5, 0.0, "pure")
    assert g.details["loss_bound"] <= 0.5
    assert abs(m.scale_inflation) < 2e-3
    assert "RangeLaplace" in repr(m)


@pytest.mark.parametrize("kwargs", [
    {"epsilon": 0}, {"epsilon": -1}, {"epsilon": np.nan}, {"epsilon": INF},
    {"sensitivity": 0}, {"sensitivity": np.nan}, {"sensitivity": -2},
    {"domain": (1, 0)}, {"domain": (np.nan, 1)}, {"domain": "0,1"}, {"domain": []},
    {"mode": "paper"}, {"grid": 0.3}, {"grid": -1},
])
def test_invalid_parameters(kwargs):
    args = {"epsilon": 1.0, "sensitivity": 1.0, "domain": (0, 1)} | kwargs
    with pytest.raises(ParameterError):
        RangeLaplace(**args)


@pytest.mark.parametrize("value", [-0.1, 1.1, np.nan, INF, [0.5, 2.0], "x"])
def test_invalid_true_values_raise_before_randomness(value):
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 1), grid=G)
    with pytest.raises(ParameterError):
        m.release(value, rng=NoWords())
    u = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 1), (2, 3)], grid=G)
    with pytest.raises(ParameterError):
        u.release(1.5, rng=NoWords())


def test_union_zero_length_piece_warns():
    with pytest.warns(UserWarning):
        m = RangeLaplace(epsilon=1, sensitivity=1, domain=Union((0, 1), (1.5, 1.5), (2, 3)),
                         grid=G)
    assert len(m.domain.pieces) == 2


def test_reproducibility_and_default_rng():
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10), grid=G)
    x = np.linspace(0, 10, 50)
    a = m.release(x, rng=SeededRandom(3))
    b = m.release(x, rng=SeededRandom(3))
    np.testing.assert_array_equal(a, b)
    c, d = m.release(np.full(50, 5.0)), m.release(np.full(50, 5.0))
    assert not np.array_equal(c, d)
    assert isinstance(m.release(5.0, rng=SeededRandom(1)), float)
    assert m.release(np.zeros((2, 3)), rng=SeededRandom(1)).shape == (2, 3)
    assert m.release(np.array([]), rng=SeededRandom(1)).shape == (0,)


def test_fixed_word_count_independent_of_true_value():
    """No rejection loop: three words per value on an interval, whatever the value(s)."""

    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10), grid=G)
    counts = set()
    for x in (0.0, 0.01, 5.0, 9.99, 10.0):
        src = CountingSource(9)
        m.release(np.full(1000, x), rng=src)
        counts.add(src.drawn)
    for lo in (0.0, 4.0, 9.0):  # many distinct values: the same sampler, 3 words each
        src = CountingSource(9)
        m.release(np.linspace(lo, lo + 1, 1000), rng=src)
        counts.add(src.drawn)
    assert counts == {3000}
    for x in (0.0, 5.0, 10.0):  # one scalar: 3 words
        src = CountingSource(9)
        m.release(x, rng=src)
        assert src.drawn == 3


def test_paper_unsafe_mechanism_warns_and_fails_verification():
    from dpnoise.mechanisms.range_laplace_paper import PaperHalfLineLaplaceUnsafe

    with pytest.warns(UserWarning, match="NOT differentially private"):
        u = PaperHalfLineLaplaceUnsafe(epsilon=1.0, sensitivity=1.0)
    assert u.guarantee.notion == "none"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = u.release([0.0, -3.0], rng=SeededRandom(1))
    assert np.all(np.asarray(y) <= 0)


@pytest.mark.parametrize("name", ["interval", "short", "half-line", "left-half-line"])
def test_convex_sampler_within_the_charged_distortion(name):
    """The one sampler of convex domains: its exact pmf is within convex_distortion_bound of
    the ideal lattice law P_true at every centre probed (edges included), and that bound is
    below distortion_bound(M, 0), which the calibration charges -- so ε covers it."""
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=DOMAINS[name], grid=G)
    M, gd, cs = m.block, m._gd, m._conv
    assert convex_distortion_bound(M) <= distortion_bound(M, 0)
    for M2 in (1, 2, 3, 700, 2**15, 2**17):  # the inequality for other block lengths
        assert convex_distortion_bound(M2) <= distortion_bound(M2, 0)
    (jlo, jhi), = gd.cells
    ends = [int(e) for e in (jlo, jhi + 1) if math.isfinite(e)] or [0]
    worst = 0.0
    for e in ends:
        for c in (e - 3, e - 1, e, e + 1, e + 2, e + M // 2, e + 3 * M):
            if not gd.reachable(np.array([float(c)]))[0]:
                continue
            j = np.arange(c - 12 * M, c + 12 * M)
            lp = cs.logpmf(j, c)
            k = np.where(j >= c, j - c, c - 1 - j)
            ideal = (-k * LN2 / M + math.log(-math.expm1(-LN2 / M))
                     - gd.log_z(np.array([float(c)]), M)[0])
            ok = gd.reachable_cells(j)
            assert np.all(np.isneginf(lp[~ok]))
            worst = max(worst, float(np.max(np.abs(lp[ok] - ideal[ok]))))
    assert worst <= convex_distortion_bound(M)


def test_convex_sampler_chi_square_scalar_vector_and_distinct():
    """Scalar path, vector path and distinct values in one call all sample noise(x)."""
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10), grid=G)
    # the scalar path draws the same three words as a one-element vector: same value
    for x in (0.0, 0.3, 5.0, 10.0):
        for seed in range(5):
            assert m.release(x, rng=SeededRandom(seed)) == m.release(
                np.array([x]), rng=SeededRandom(seed))[0]
    # 20 000 scalar releases at the edge against the exact law
    rng = SeededRandom(4)
    y = np.array([m.release(0.0, rng=rng) for _ in range(20_000)])
    assert_fits_lattice_law(m, 0.0, y)
    # two centres interleaved in one vector (several chunks): each against its own law
    x = np.tile([0.0, 6.5], 40_000)
    y = m.release(x, rng=SeededRandom(8))
    assert_fits_lattice_law(m, 0.0, y[0::2])
    assert_fits_lattice_law(m, 6.5, y[1::2])
    # distinct values in one call: all outputs in range, shape kept, seeded reproducible
    x = np.linspace(0, 10, 5000).reshape(50, 100)
    a = m.release(x, rng=SeededRandom(2))
    assert a.shape == x.shape and np.all((a >= 0) & (a <= 10))
    np.testing.assert_array_equal(a, m.release(x, rng=SeededRandom(2)))


@pytest.mark.parametrize(("eps", "domain"), [
    (1.0, (0, 100)), (1.0, (0, INF)), (1.0, (-INF, 5)), (1.0, (0, 1)), (1.0, (-INF, INF)),
    (1.0, (0, 3000)), (0.3, (0, INF))])
def test_threshold_table_equals_formula_and_scalar(eps, domain):
    """The construction-time threshold table, the vector formula and the scalar path give
    the same integers T(c) (so the same law), at the edges and at random centres."""
    from dpnoise.exact.range_convex import ConvexSampler, _Work

    m = RangeLaplace(epsilon=eps, sensitivity=1.0, domain=domain)
    cs = m._conv
    formula = ConvexSampler(m._gd, m.block, table_limit=0)
    assert formula._tkind in ("formula", "const")  # the line: one constant T
    lo = cs._jlo if cs._jlo is not None else -10**6
    hi = cs._jhi1 if cs._jhi1 is not None else 10**6
    c = np.unique(np.concatenate([np.arange(lo, min(hi, lo + 300) + 1),
                                  np.arange(max(lo, hi - 300), hi + 1),
                                  np.random.default_rng(0).integers(lo, hi + 1, 300)]))
    big = np.full(c.size, 1 << 62)
    nl = c - cs._jlo if cs._jlo is not None else big
    nr = cs._jhi1 - c if cs._jhi1 is not None else big
    t_tab, t_formula = np.empty(c.size, np.uint64), np.empty(c.size, np.uint64)
    cs._thresholds(nl.copy(), nr.copy(), _Work(c.size), t_tab)
    formula._thresholds(nl.copy(), nr.copy(), _Work(c.size), t_formula)
    np.testing.assert_array_equal(t_tab, t_formula)
    scalar = [(cs.threshold(int(ci)) - 1) % 2**64 for ci in c]
    assert t_tab.tolist() == scalar


def test_convex_loss_bound_end_windows_equal_the_full_scan():
    """On one piece, scanning 2S + 4 cells per end gives (at least) the long scan's bound."""
    from dpnoise.exact.range_lattice import loss_bound

    for dom in [(0, 1), (0, 10), (0, INF), (-INF, 2), (-3, 0.2), (-INF, INF)]:
        m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=dom, grid=G)
        for M in (m.block - 1, m.block, m.block + 7):
            for metric in (None, 1.0 / G):
                a = loss_bound(m._gd, M, m.shift_steps, metric_cells=metric)
                b = loss_bound(m._gd, M, m.shift_steps, metric_cells=metric, full_scan=True)
                assert b.total <= a.total <= b.total + 2e-13
                if metric:
                    assert b.metric_rate <= a.metric_rate <= b.metric_rate + 1e-15


def test_metric_calibration_is_minimal_for_the_metric_rate():
    from dpnoise.exact.range_lattice import loss_bound

    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 5), mode="metric", grid=G)
    per_cell = 1.0 * G / 1.0
    assert m.bound.metric_rate <= per_cell
    less = loss_bound(m._gd, m.block - 1, m.shift_steps, metric_cells=1.0 / G)
    assert less.metric_rate > per_cell
