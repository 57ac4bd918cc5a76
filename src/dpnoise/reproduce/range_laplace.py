"""``dpnoise reproduce range-laplace``: Croft et al. 2022 (truncated and normalised Laplace).

Regenerates, each row side by side with the reference value of an independent
high-precision (mpmath) check made while building dpnoise:

1. the motivating example (Sec. 3.6): naive truncation with s = Δ/ε has loss ln(2e^ε − 1);
2. Table 2's constants: sigma_1 = −Δ/(W0(−1/(2e)) e ε) ≈ 1.586 Δ/ε and the data-dependent
   sigma(t) of (33) -- plus the verifier's proof that this scale is NOT private;
3. the reference table: minimal ε-DP scale, the paper's metric scale, losses at
   those scales and at 0.999×, and dpnoise's exact lattice mechanism verified on each row;
4. a figure of the released densities for several true values (and the paper's Figure 2
   fixture).

References:
  * W. L. Croft, J.-R. Sack, W. Shi, "Differential Privacy via a Truncated and Normalized
    Laplace Mechanism", Journal of Computer Science and Technology 37(2):369-388, 2022,
    doi:10.1007/s11390-020-0193-z.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from ..laws.range_laplace import (
    eps_metric,
    eps_std_union,
    paper_boundary_scale,
    paper_half_line_scale_unsafe,
    sigma_metric,
    sigma_std,
)
from ..laws.range_laplace_law import continuous_family
from ..mechanisms.range_laplace import RangeLaplace
from ..mechanisms.range_laplace_paper import PaperHalfLineLaplaceUnsafe
from ..progress import progress
from ..verify import ContinuousFamily, verify
from .output import md_table, save_figure, write_csv

INF = math.inf

SPEC_TABLE = [  # case, S, dF, eps, sig_std, sig_paper, STD@0.999 sig_std, naive STD
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
    ("H3", [(0, INF)], 2, 3, 0.849098196002655, 1.333333333333, 3.002475041, 3.667938562),
    ("U1", [(0, 1), (2, 3)], 1, 1, 1.23076537106, 2.0, 1.000830832, 1.186333676),
    ("U2", [(0, 4), (5, 10)], 1, 0.5, 3.49173379763, 4.0, 0.500459653, 0.824327794),
    ("F1", [(-INF, 0), (1, INF)], 1, 1, 1.23839118571, 1.353482114226, 1.001079825, 1.256279448),
    ("F2", [(-INF, 0), (1, 3), (3.5, INF)], 1, 0.5, 2.38726049339, 2.478946325528, 0.500545052,
     0.606064754),
]

MOTIVATING = [(0.1, 1, 0.1909028289), (0.5, 1, 0.8317965658), (1.0, 1, 1.4898801256),
              (2.0, 1, 2.6230812604), (1.0, 0.5, 0.8317965658)]
SIGMA_T = [(0, 1.585954172178), (0.25, 1.492076702066), (0.5, 1.415393854478),
           (1, 1.302017135572), (2, 1.174709536227), (5, 1.060774728946),
           (20, 1.012363415542), (100, 1.002348570559)]
V1_GROWTH = [(4, 1.000000), (10, 1.000000), (12, 1.113968), (15, 1.526479), (20, 2.213998),
             (50, 6.339112), (100, 13.214302), (1000, 136.967726)]


def _md_table(header: list[str], rows: list[list[object]]) -> str:
    def fmt(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.10g}"
        return str(v)

    return md_table(header, rows, fmt)


def motivating_rows() -> list[list[object]]:
    rows = []
    for eps, i, spec in MOTIVATING:
        d = 1.0  # loss of the pair (border, border + i·Δ) with s = Δ/ε, i.e. distance i·Δ
        fam = continuous_family(((0.0, INF),), d / eps, [(0.0, i * d)], ContinuousFamily)
        ver = verify(fam, epsilons=[i * eps]).epsilon
        formula = math.log(2 * math.exp(i * eps) - 1)
        rows.append([eps, i, 2 * math.exp(i * eps) - 1, math.exp(i * eps), spec, formula, ver,
                     i * eps, abs(ver - spec) < 1e-7])
    return rows


def table2_rows() -> list[list[object]]:
    rows: list[list[object]] = [["sigma_1 (32) [Δ/ε]", 1.5859541721782721379,
                                 paper_boundary_scale(1, 1), True]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = paper_half_line_scale_unsafe([t for t, _ in SIGMA_T], 1, 1)
    for (t, spec), g in zip(SIGMA_T, got, strict=True):
        rows.append([f"sigma(t={t}) (33) [Δ/ε]", spec, float(g), abs(g - spec) < 1e-11])
    return rows


def v1_rows() -> list[list[object]]:
    """Brute force: mu in [−4, 0] (step 0.25, pairs <= 1 apart), outputs in [−M, 0]."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = PaperHalfLineLaplaceUnsafe(epsilon=1, sensitivity=1)
    fam = continuous_family(((-INF, 0.0),), 1.0, [], ContinuousFamily, scale_of=mech.scale_at)
    mus = np.arange(-4.0, 0.0001, 0.25)
    pairs = [(a, b) for a in mus for b in mus if 0 < b - a <= 1.0]
    rows = []
    for Mw, spec in V1_GROWTH:
        y = np.concatenate([np.linspace(-Mw, 0, 4001), mus])
        y = y[y >= -Mw]
        loss = max(float(np.max(np.abs(fam.logpdf(y, a) - fam.logpdf(y, b)))) for a, b in pairs)
        rows.append([Mw, spec, loss, abs(loss - spec) < 2e-6])
    return rows


def reference_rows(quick: bool) -> list[list[object]]:
    rows = []
    for case, S, d, eps, s_std, s_paper, std999, naive in progress(SPEC_TABLE,
                                                                  total=len(SPEC_TABLE),
                                                                  desc="reference table"):
        s = sigma_std(S, d, eps)
        m = sigma_metric(S, d, eps)
        dom = S[0] if len(S) == 1 else S
        mech = RangeLaplace(epsilon=eps, sensitivity=d, domain=dom)
        if quick and mech.block > 4000:
            lattice_loss: object = "skipped (--quick)"
        else:
            lattice_loss = verify(mech, epsilons=[eps]).epsilon
        rows.append([case, str(mech.domain), d, eps, s_std, s, abs(s / s_std - 1),
                     s_paper, m, eps_std_union(S, d, s), std999,
                     eps_std_union(S, d, 0.999 * s), naive, eps_std_union(S, d, d / eps),
                     eps_metric(S, d, m), mech.scale, mech.block, mech.grid, lattice_loss])
    return rows


def _figure(out_dir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    mech = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10), grid=2.0**-4)
    for x in (0.0, 1.0, 2.5, 5.0, 9.0):
        law = mech.noise(x)
        axes[0].step(law.support, law.probs / mech.grid, where="mid", lw=1,
                     label=f"true value {x:g}")
        ideal = mech.continuous_law(x)
        t = np.linspace(0, 10, 800)
        axes[0].plot(t, ideal.pdf(t), "k:", lw=0.7)
    axes[0].set_title("dpnoise RangeLaplace on [0, 10], Δ = ε = 1\n"
                      "released grid pmf / L (steps) and ideal density (dotted)")
    axes[0].set_xlabel("released value")
    axes[0].legend(fontsize=8)
    S = [(-3, -2), (-1.5, 1), (1.5, 2.5)]
    from ..laws.range_laplace_law import TruncatedLaplaceLaw

    law = TruncatedLaplaceLaw(S, 0.0, 1.0)
    t = np.linspace(-4, 4, 2000)
    axes[1].plot(t, np.exp(-np.abs(t)) / 2, "k--", lw=1, label="Laplace(0, 1)")
    axes[1].plot(t, law.pdf(t), lw=1.2, label="truncated + normalised")
    axes[1].set_title("paper Fig. 2 (fixture)")
    axes[1].legend(fontsize=8)
    return save_figure(fig, out_dir / "densities.png")


def run(out_dir: Path, quick: bool = False) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    mh = ["eps", "i", "2e^(i eps)-1", "e^(i eps)", "reference loss", "ln(2e^(i eps)-1)",
          "verifier loss", "allowed i*eps", "match"]
    mrows = motivating_rows()
    paths.append(write_csv(out_dir / "motivating_example.csv", mh, mrows))
    th = ["quantity", "reference", "dpnoise", "match"]
    trows = table2_rows()
    paths.append(write_csv(out_dir / "table2_constants.csv", th, trows))
    vh = ["outputs restricted to [-M, 0]: M", "reference loss", "dpnoise brute-force loss", "match"]
    vrows = v1_rows()
    paths.append(write_csv(out_dir / "v1_not_private.csv", vh, vrows))
    rh = ["case", "domain", "sensitivity", "eps", "ref sig_std", "dpnoise sig_std", "rel diff",
          "ref sig_paper", "dpnoise sig_metric", "STD@sig_std", "ref STD@0.999",
          "dpnoise STD@0.999", "ref naive STD", "dpnoise naive STD", "MET@sig_metric",
          "lattice scale", "block M", "grid", "lattice verified loss"]
    rrows = reference_rows(quick)
    paths.append(write_csv(out_dir / "reference_table.csv", rh, rrows))
    paths.append(_figure(out_dir))
    md = [
        "# Croft et al. 2022: truncated and normalised Laplace -- reproduction",
        "",
        "Generated by `dpnoise reproduce range-laplace`. Each row is compared with the value "
        "verified by an independent high-precision check.",
        "",
        "## Motivating example (Sec. 3.6): naive truncation with s = Δ/ε is not ε-DP",
        "",
        _md_table(mh, mrows),
        "",
        "## Table 2 constants (32)/(33)",
        "",
        _md_table(th, trows),
        "",
        "The data-dependent scale is **not** differentially private: with outputs "
        "restricted to [−M, 0] the loss grows without bound:",
        "",
        _md_table(vh, vrows),
        "",
        "## Reference table and dpnoise's exact lattice mechanism",
        "",
        "`lattice verified loss` is the independent verifier's worst-case loss of the pmf that "
        "dpnoise actually samples (default grid); it must be <= ε.",
        "",
        _md_table(rh, rrows),
        "",
        "![densities](densities.png)",
        "",
    ]
    p = out_dir / "README.md"
    p.write_text("\n".join(md))
    paths.append(p)
    return paths
