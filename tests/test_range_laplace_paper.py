"""Croft et al. 2022 numbers: the reference table (§5.1), Table 2 constants, the motivating
example (§3), the moments table (§4.d) and the errata V1–V5, reproduced by dpnoise's calibration
and checked by the independent verifier."""

import math
import warnings

import numpy as np
import pytest
from scipy import special

from dpnoise.laws.range_laplace import (
    W0_HALF_E,
    eps_metric,
    eps_std_union,
    half_line_loss,
    paper_boundary_scale,
    paper_half_line_scale_unsafe,
    sigma_metric,
    sigma_std,
)
from dpnoise.laws.range_laplace_law import TruncatedLaplaceLaw, continuous_family
from dpnoise.mechanisms.range_laplace import RangeLaplace
from dpnoise.mechanisms.range_laplace_paper import PaperHalfLineLaplaceUnsafe
from dpnoise.verify import ContinuousFamily, verify

INF = math.inf

# reference table: case, S, dF, eps, sig_std, sig_paper, STD@0.999 sig_std, naive STD
TABLE = [
    ("I1", [(0, 1)], 1, 1, 1.0, 2.0, 1.001001001, 1.000000000),
    ("I2", [(0, 10)], 1, 1, 1.611560104417981, 2.0, 1.000851828, 1.489849911),
    ("I3", [(0, 100)], 1, 0.1, 19.50940347475702, 20.0, 0.100097780, 0.190902414),
    ("I4", [(0, 2)], 1, 0.5, 2.914643648653126, 4.0, 0.500485971, 0.719070196),
    ("I5", [(0, 1)], 0.01, 1, 0.01612605395905182, 0.02, 1.000848994, 1.489880126),
    ("I6", [(0, 0.5)], 1, 1, 0.5, 2.0, 1.001001001, 0.500000000),
    ("I7", [(-5, 5)], 3, 0.3, 16.55087410919584, 20.0, 0.300292090, 0.487648892),
    ("I8", [(0, 1000)], 1, 2, 0.697456667532031, 1.0, 2.001629293, 2.623081260),
    ("H1", [(0, INF)], 1, 1, 1.612605395905182, 2.0, 1.000848994, 1.489880126),
    ("H2", [(0, INF)], 1, 0.1, 19.51239328653342, 20.0, 0.100097717, 0.190902829),
    ("H3", [(0, INF)], 2, 3, 0.849098196002655, 4 / 3, 3.002475041, 3.667938562),
    ("U1", [(0, 1), (2, 3)], 1, 1, 1.23076537106, 2.0, 1.000830832, 1.186333676),
    ("U2", [(0, 4), (5, 10)], 1, 0.5, 3.49173379763, 4.0, 0.500459653, 0.824327794),
    ("F1", [(-INF, 0), (1, INF)], 1, 1, 1.23839118571, 1.353482114226, 1.001079825, 1.256279448),
    ("F2", [(-INF, 0), (1, 3), (3.5, INF)], 1, 0.5, 2.38726049339, 2.478946325528, 0.500545052,
     0.606064754),
]


@pytest.mark.parametrize("case", TABLE, ids=[c[0] for c in TABLE])
def test_reference_table(case):
    _, S, d, eps, s_std, s_paper, std_999, naive = case
    s = sigma_std(S, d, eps)
    assert s == pytest.approx(s_std, rel=1e-10)
    assert s >= s_std * (1 - 1e-11)  # rounded up, never down
    assert eps_std_union(S, d, s) <= eps * (1 + 1e-12)
    assert eps_std_union(S, d, 0.999 * s) == pytest.approx(std_999, abs=6e-10)
    assert eps_std_union(S, d, d / eps) == pytest.approx(naive, abs=6e-10)  # naive sigma = Δ/ε
    m = sigma_metric(S, d, eps)
    assert m == pytest.approx(s_paper, rel=1e-10)
    assert eps_metric(S, d, m) <= eps * (1 + 1e-12)
    assert eps_metric(S, d, 0.999 * m) > eps


def test_interval_sigma_curve_and_closed_forms():
    """§4.a: sigma_std(W) for Δ = ε = 1, the W = 2Δ closed form and the half-line limit."""
    for W, ref in [(1.1, 1.08672559617), (1.5, 1.29005507531), (2, 1.41334269774),
                   (3, 1.52207817304), (5, 1.58893810661), (20, 1.61260327465)]:
        assert sigma_std([(0, W)], 1, 1) == pytest.approx(ref, rel=1e-10)
    q = (-1 + math.sqrt(1 + 8 * math.exp(-1))) / 2
    assert sigma_std([(0, 2)], 1, 1) == pytest.approx(-1 / math.log(q), rel=1e-14)
    assert sigma_std([(0, INF)], 1, 1) == pytest.approx(1 / math.log((1 + math.e) / 2), rel=1e-14)
    assert sigma_std([(0, INF)], 1, 800) > 0  # eps > 700 branch: no overflow


def test_table2_constants():
    """Table 2 / (32): sigma_1 = −Δ/(W0(−1/(2e)) e ε) = 1.5859541721782721379 Δ/ε."""
    assert pytest.approx(-0.23196095298653443474, rel=1e-15) == W0_HALF_E
    assert paper_boundary_scale(1, 1) == pytest.approx(1.5859541721782721379, rel=1e-15)
    assert paper_boundary_scale(3, 0.5) == pytest.approx(6 * 1.5859541721782721379, rel=1e-15)
    wm1 = float(special.lambertw(-1 / (2 * math.e), -1).real)
    assert wm1 == pytest.approx(-2.678346990016661, rel=1e-12)
    assert -1 / (wm1 * math.e) == pytest.approx(0.13735316691, rel=1e-10)  # (A34)


def test_data_dependent_scale_table_and_warning():
    """§5.2: sigma(t) of (33) for Δ = ε = 1; decreasing in t in (Δ/ε, 1.586 Δ/ε]."""
    ts = [0, 0.25, 0.5, 1, 2, 5, 20, 100]
    ref = [1.585954172178, 1.492076702066, 1.415393854478, 1.302017135572, 1.174709536227,
           1.060774728946, 1.012363415542, 1.002348570559]
    with pytest.warns(UserWarning, match="NOT differentially private"):
        got = paper_half_line_scale_unsafe(ts, 1, 1)
    np.testing.assert_allclose(got, ref, rtol=1e-11)
    assert np.all(np.diff(got) < 0) and np.all(got > 1)
    # (A26) holds with equality at the border: sigma2 (2 e^{t/sigma2} − 1) = sigma1 e^{eps t}
    s1 = paper_boundary_scale(1, 1)
    for t, s2 in zip(ts[1:], got[1:], strict=True):
        lhs = s2 * (2 * math.exp(t / s2) - 1)
        assert lhs / (s1 * math.exp(t)) == pytest.approx(1, rel=1e-9)


def test_data_dependent_scale_is_not_private():
    """V1: the witness pair (0, −1): ln p1/p2 at x = −12, −100, −1000 grows without bound."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = PaperHalfLineLaplaceUnsafe(epsilon=1, sensitivity=1)
    fam = continuous_family(((-INF, 0.0),), 1.0, [(-1.0, 0.0)], ContinuousFamily,
                            scale_of=mech.scale_at)
    ys = np.array([0.0, -1.0, -10.0, -11.0, -12.0, -100.0, -1000.0])
    ratio = fam.logpdf(ys, 0.0) - fam.logpdf(ys, -1.0)
    np.testing.assert_allclose(ratio, [1.0, -0.398574, 0.838960, 0.976464, 1.113968, 13.214302,
                                       136.967726], atol=2e-6)
    report = verify(mech)
    assert report.epsilon > 100 and not report.passed
    assert report.delta_at(1.0) == pytest.approx(1.563e-4, rel=2e-3)


@pytest.mark.parametrize("eps,loss", [(0.1, 0.1909028289), (0.5, 0.8317965658),
                                      (1.0, 1.4898801256), (2.0, 2.6230812604)])
def test_motivating_example(eps, loss):
    """§3 / V5: naive truncation with sigma = Δ/ε on a half-line has loss ln(2e^ε − 1) > ε."""
    assert half_line_loss(1 / eps, 1) == pytest.approx(loss, rel=1e-9)
    assert math.log(2 * math.exp(eps) - 1) == pytest.approx(loss, rel=1e-9)
    fam = continuous_family(((0.0, INF),), 1 / eps, [(0.0, 1.0)], ContinuousFamily)
    assert verify(fam).epsilon == pytest.approx(loss, rel=1e-7)


@pytest.mark.parametrize("mu,s,S,ref", [
    (0, 1, [(0, 10)], (0.99954598, 0.99954598, 0.99545959, 1.99455176)),
    (3, 2, [(0, 10)], (1.49574280, 3.48313257, 3.75270392, 3.98612100)),
    (0.2, 5, [(0, 1)], (0.32855082, 0.48690882, 0.08236143, 0.16467811)),
    (0.5, 1 / 0.9, [(0, 1)], (0.23131298, 0.50000000, 0.07412977, 0.07412977)),
])
def test_moments_reference(mu, s, S, ref):
    law = TruncatedLaplaceLaw(S, mu, s)
    got = (law.mean_abs_error(), law.mean(), law.var(), law.second_moment())
    np.testing.assert_allclose(got, ref, atol=6e-9)
    assert float(law.cdf(law.ppf(0.3))) == pytest.approx(0.3, abs=1e-12)


def test_figure2_fixture_normalisation():
    """§6.13: S = [−3,−2] ∪ [−1.5,1] ∪ [1.5,2.5], mu = 0, s = 1: pdf/Lap = 1/Z(0) on S."""
    S = [(-3, -2), (-1.5, 1), (1.5, 2.5)]
    law = TruncatedLaplaceLaw(S, 0.0, 1.0)
    from scipy import integrate

    total = sum(integrate.quad(lambda x: float(law.pdf(x)), a, b)[0] for a, b in S)
    assert total == pytest.approx(1, rel=1e-10)
    x = np.array([-2.5, 0.3, 2.0])
    np.testing.assert_allclose(law.pdf(x) / (np.exp(-np.abs(x)) / 2), math.exp(-law.log_z))


def test_metric_is_two_delta_over_eps_when_bounded_and_v4_proof_gap():
    """V3: exactly 2Δ/ε with an infinite constraint; V4: the reflected gap-pair bound of F2
    (2.1577) exceeds the non-reflected one (1.8485), so it must be checked."""
    for S in ([(0, 1)], [(0, INF)], [(0, 1), (2, 3)], [(-INF, 0), (1, 2)]):
        assert sigma_metric(S, 1.5, 0.7) == 2 * 1.5 / 0.7
    from scipy import optimize

    from dpnoise.laws.range_laplace import log_mass

    F2 = [(-INF, 0), (1, 3), (3.5, INF)]

    def gap(s, refl):
        g = log_mass(F2, np.array([3.0, 3.5]), s)
        d = (g[1] - g[0]) if refl else (g[0] - g[1])
        return 0.5 / s + d - 0.5 * 0.5

    plain = optimize.brentq(lambda s: gap(s, False), 0.5, 10)
    refl = optimize.brentq(lambda s: gap(s, True), 0.5, 10)
    assert plain == pytest.approx(1.848512684, rel=1e-8)
    assert refl == pytest.approx(2.157716840, rel=1e-8)


def test_mechanism_reproduces_table_scales():
    """RangeLaplace's continuous_scale is the reference sig_std / sig_paper; the released lattice
    law's scale is within 0.1 % above it."""
    for _, S, d, eps, s_std, s_paper, _, _ in TABLE[:11]:
        dom = S[0] if len(S) == 1 else S
        g = 2.0 ** math.floor(math.log2(d / 64))
        m = RangeLaplace(epsilon=eps, sensitivity=d, domain=dom, grid=g)
        assert m.continuous_scale == pytest.approx(s_std, rel=1e-10)
        assert abs(m.scale_inflation) < 0.05  # lattice law: its own exact minimum
        mm = RangeLaplace(epsilon=eps, sensitivity=d, domain=dom, mode="metric", grid=g)
        assert mm.continuous_scale == pytest.approx(s_paper, rel=1e-10)


def test_reproduction_rows_match_reference():
    from dpnoise.reproduce.range_laplace import motivating_rows, table2_rows, v1_rows

    assert all(r[-1] for r in motivating_rows())
    assert all(r[-1] for r in table2_rows())
    assert all(r[-1] for r in v1_rows())


@pytest.mark.slow  # regenerates tables/figures: no privacy check here
def test_reproduce_command_writes_files(tmp_path):
    from dpnoise.cli import main

    assert main(["reproduce", "range-laplace", "--quick", "--out", str(tmp_path)]) == 0
    out = tmp_path / "range-laplace"
    for name in ("README.md", "reference_table.csv", "densities.png", "v1_not_private.csv"):
        assert (out / name).stat().st_size > 0
