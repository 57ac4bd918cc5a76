"""``dpnoise reproduce count-noise``: Sadeghi et al. 2020's numbers and figures, exact δ too.

Writes (CSV + PNG + markdown):

* ``figure1.csv`` -- the Fig. 1 walkthrough (E, C_k, δ*, α*, p(±1), DG comparison, the ε
  the DG needs to reach δ*), next to the values quoted by the paper and by an
  independent 50-digit check.
* ``figure2.csv/png`` -- (2D+1)δ* and the exact δ vs ε (η = .5, D = 2..10).
* ``figure3.csv/png`` -- (2D+1)δ* and the exact δ vs η (ε = 1.1, 2.2; D = 4, 6, 8), with the
  knee η = tanh(ε/2).
* ``figure4.csv/png`` -- η = .5, D = 6: paper metric, exact δ of α*, LP-optimal exact δ and
  the discrete Gaussian δ_G with scale σ² = the count noise's variance.
* ``side_by_side.csv`` -- exact δ of CountNoise vs the discrete Gaussian at matched error
  probability (P(Z=0) = η) and at matched variance.
* ``count_noise.md`` -- all of the above as tables, errata flagged.

References:
  * P. Sadeghi, S. Asoodeh, F. du Pin Calmon, "Differentially Private Mechanisms for Count
    Queries", arXiv:2007.09374, 2020.
  * C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020.
"""

from __future__ import annotations

import csv
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..exact.rational import exp_lower
from ..laws import count_noise as cf
from ..laws import discrete_gaussian as dga
from ..progress import progress
from .output import md_table, save_figure


def _paper(eps: float, eta: float, D: int) -> dict[str, float]:
    E = exp_lower(eps)
    e = Fraction(eta)
    sol = cf.paper_alpha(E, e, D, check=False)
    pmf = cf.pmf_from_alpha(e, sol.alpha)
    valid = not (sol.k == D + 1 and D >= 2 and e < sol.eta_bad)
    var = float((1 - e) * sum(a * i * i for i, a in enumerate(sol.alpha, start=1)))
    return {
        "k": sol.k, "delta_tilde": float(sol.delta_tilde),
        "paper_dp": float(min(Fraction(1), (2 * D + 1) * sol.delta_tilde)),
        "exact_hs": float(cf.hockey_delta(pmf, E)), "thm3_holds": valid, "variance": var,
    }


def _write(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def _md_table(rows: list[dict], digits: int = 6) -> str:
    def fmt(v: object) -> str:
        return f"{v:.{digits}g}" if isinstance(v, float) else str(v)

    return md_table(list(rows[0]), [r.values() for r in rows], fmt)


def _dg_pointwise(sigma2: float, eps: float) -> float:
    """The DG's singular-event δ: max_z p(z) − e^ε p(z−1) (the paper's per-outcome metric)."""
    import numpy as np

    K = dga.window(sigma2)
    z = np.arange(-K, K + 2)
    return float(np.max(dga.pmf(z, sigma2) - math.exp(eps) * dga.pmf(z - 1, sigma2)))


def dg_eps_for(sigma2: float, target: float, pointwise: bool = False) -> float:
    f = _dg_pointwise if pointwise else dga.delta
    lo, hi = 0.0, 50.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if f(sigma2, mid) > target:
            lo = mid
        else:
            hi = mid
    return hi


def figure1() -> list[dict]:
    eps, eta, D = 2.18, 0.8, 6
    E = exp_lower(eps)
    sol = cf.paper_alpha(E, Fraction(eta), D)
    a = [float(x) for x in sol.alpha]
    h = (1 - eta) / 2
    p = _paper(eps, eta, D)
    s2 = p["variance"]
    pg = dga.pmf([1, 2], s2)
    rows = [
        ("E = e^eps", float(E), 8.8463),
        ("C_2", float(sol.crossovers[1]), 8.1229),
        ("C_3", float(sol.crossovers[2]), 7.8867),
        ("regime k", sol.k, 3),
        ("delta* (paper, per outcome)", float(sol.delta_tilde), 0.0049478),
        ("alpha_1", a[0], 0.89873915), ("alpha_2", a[1], 0.096001756),
        ("alpha_3", a[2], 0.0052590921),
        ("p(+-1)", a[0] * h, 0.089874), ("p(+-2)", a[1] * h, 0.0096002),
        ("alpha_1/alpha_2", a[0] / a[1], 9.3617),
        ("sigma^2 = variance", s2, 0.2660156),
        ("DG p(+-1) at scale sigma^2", float(pg[0]), 0.11685),
        ("DG p(+-2) at scale sigma^2", float(pg[1]), 0.000416),
        ("DG ratio p_G(1)/p_G(2)", float(pg[0] / pg[1]), 282.0),
        ("DG eps with per-outcome delta = delta*",
         dg_eps_for(s2, float(sol.delta_tilde), pointwise=True), 5.6),
        ("DG eps with DP delta = delta*", dg_eps_for(s2, float(sol.delta_tilde)),
         float("nan")),
        ("paper DP delta (2D+1)delta*", p["paper_dp"], float("nan")),
        ("exact DP delta (dpnoise)", p["exact_hs"], float("nan")),
    ]
    return [{"quantity": q, "dpnoise": v, "paper": ref} for q, v, ref in rows]


Section = tuple[list[Path], list[str]]  # files written, markdown lines


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _eps_grid(quick: bool) -> list[float]:
    return [0.75, 1.0, 1.1, 1.5, 2.0, 3.0] if quick else [
        0.5, 0.75, 1.0, 1.05, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0]


def figure1_section(out_dir: Path, quick: bool) -> Section:
    """Fig. 1's walkthrough (ε = 2.18, η = 0.8, D = 6) beside the paper's numbers."""
    f1 = figure1()
    return ([_write(out_dir / "figure1.csv", f1)],
            ["## Figure 1 walkthrough (eps = 2.18, eta = 0.8, D = 6)", "", _md_table(f1), ""])


def grid_section(out_dir: Path, quick: bool) -> Section:
    """The reference grid over (η, D, ε), with the errata flags of Theorem 3 and Remark 2."""
    grid = []
    cells = [(eta, D, eps) for eta in (0.1, 0.5, 0.9) for D in ((2, 6) if quick else
             (2, 4, 6, 8, 10)) for eps in (0.5, 1.1, 2.2)]
    for eta, D, eps in progress(cells, total=len(cells), desc="grid"):
        p = _paper(eps, eta, D)
        E = exp_lower(eps)
        opt = cf.lp_alpha(E, Fraction(eta), D)[0]
        lphs = float(cf.hockey_delta(cf.pmf_from_alpha(Fraction(eta), opt), E))
        flag = "" if p["thm3_holds"] else ("!!" if p["exact_hs"] > p["paper_dp"] else "!")
        grid.append({"eta": eta, "D": D, "epsilon": eps, "k": p["k"],
                     "delta_star": p["delta_tilde"], "paper_dp": p["paper_dp"],
                     "exact_delta_alpha_star": p["exact_hs"], "flag": flag,
                     "lp_optimal_exact_delta": lphs, "sigma2": p["variance"],
                     "dg_delta_scale_sigma2": dga.delta(p["variance"], eps),
                     "dg_delta_same_p0": dga.delta(dga.sigma2_for_zero_mass(eta), eps)})
    return ([_write(out_dir / "grid.csv", grid)],
            ["## Reference grid", "", "flag `!`: Theorem 3 fails (the paper's alpha* is not "
             "optimal and dpnoise refuses it); `!!`: even the paper's (2D+1)delta* DP claim is "
             "false.", "", _md_table(grid, 6), ""])


def figure2_section(out_dir: Path, quick: bool) -> Section:
    """Fig. 2: (2D + 1)δ* and the exact δ against ε, η = 0.5, D = 2..10."""
    f2 = []
    for D in progress([2, 4, 6, 8, 10], total=5, desc="figure 2"):
        for eps in _eps_grid(quick):
            p = _paper(eps, 0.5, D)
            f2.append({"D": D, "epsilon": eps, "paper_dp": p["paper_dp"],
                       "exact_delta": p["exact_hs"]})
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for D in [2, 4, 6, 8, 10]:
        r = [x for x in f2 if x["D"] == D]
        ax.semilogy([x["epsilon"] for x in r], [x["paper_dp"] for x in r], "-o", ms=3,
                    label=f"(2D+1)δ*, D={D}")
        ax.semilogy([x["epsilon"] for x in r], [x["exact_delta"] for x in r], "--", lw=1)
    ax.set_xlabel("ε")
    ax.set_ylabel("δ")
    ax.set_title("Fig. 2: η = 0.5 (solid: paper, dashed: exact δ)")
    ax.legend(fontsize=7)
    return ([_write(out_dir / "figure2.csv", f2), save_figure(fig, out_dir / "figure2.png")],
            ["## Figure 2 (eta = 0.5)", "", _md_table(f2, 4), ""])


def figure3_section(out_dir: Path, quick: bool) -> Section:
    """Fig. 3: (2D + 1)δ* and the exact δ against η at ε = 1.1 and 2.2, with the knee."""
    etas = [0.1, 0.3, 0.5, 0.6, 0.8, 0.9] if quick else [
        0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8, 0.82, 0.85, 0.9]
    f3 = []
    for eps in progress([1.1, 2.2], total=2, desc="figure 3"):
        for D in [4, 6, 8]:
            for eta in etas:
                p = _paper(eps, eta, D)
                f3.append({"epsilon": eps, "D": D, "eta": eta, "paper_dp": p["paper_dp"],
                           "exact_delta_alpha_star": p["exact_hs"],
                           "theorem3_holds": p["thm3_holds"]})
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, eps in zip(axes, [1.1, 2.2], strict=True):
        for D in [4, 6, 8]:
            r = [x for x in f3 if x["D"] == D and x["epsilon"] == eps]
            ax.semilogy([x["eta"] for x in r], [x["paper_dp"] for x in r], "-o", ms=3,
                        label=f"(2D+1)δ*, D={D}")
            ax.semilogy([x["eta"] for x in r], [x["exact_delta_alpha_star"] for x in r], "--",
                        lw=1)
        ax.axvline(math.tanh(eps / 2), color="k", ls=":", label="knee tanh(ε/2)")
        ax.set_title(f"Fig. 3: ε = {eps}")
        ax.set_xlabel("η")
        ax.legend(fontsize=7)
    knees = {eps: math.tanh(eps / 2) for eps in (1.1, 2.2)}
    return ([_write(out_dir / "figure3.csv", f3), save_figure(fig, out_dir / "figure3.png")],
            ["## Figure 3", "", "Knee at η = tanh(ε/2): " + ", ".join(
                f"ε={e}: {k:.5f}" for e, k in knees.items()) + " (theorem3_holds = False rows "
             "are points where the paper's α* is invalid; dpnoise refuses them).", "",
             _md_table(f3, 4), ""])


def figure4_section(out_dir: Path, quick: bool) -> Section:
    """Fig. 4: η = 0.5, D = 6 against ε, with the discrete Gaussian of the same variance."""
    f4 = []
    grid = _eps_grid(quick)
    for eps in progress(grid, total=len(grid), desc="figure 4"):
        p = _paper(eps, 0.5, 6)
        E = exp_lower(eps)
        opt = cf.lp_alpha(E, Fraction(1, 2), 6)[0]
        f4.append({"epsilon": eps, "paper_dp": p["paper_dp"], "exact_delta": p["exact_hs"],
                   "optimal_exact_delta": float(cf.hockey_delta(
                       cf.pmf_from_alpha(Fraction(1, 2), opt), E)),
                   "sigma2": p["variance"], "dg_delta": dga.delta(p["variance"], eps)})
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [x["epsilon"] for x in f4]
    for key, lab in [("paper_dp", "ours, paper metric (2D+1)δ*"),
                     ("exact_delta", "ours, exact δ (α*)"),
                     ("optimal_exact_delta", "ours, exact δ (LP-optimal α)"),
                     ("dg_delta", "discrete Gaussian, scale σ² = our variance")]:
        ax.semilogy(xs, [x[key] for x in f4], "-o", ms=3, label=lab)
    ax.set_xlabel("ε")
    ax.set_ylabel("δ")
    ax.set_title("Fig. 4: η = 0.5, D = 6")
    ax.legend(fontsize=7)
    return ([_write(out_dir / "figure4.csv", f4), save_figure(fig, out_dir / "figure4.png")],
            ["## Figure 4 (eta = 0.5, D = 6)", "", _md_table(f4, 5), ""])


def side_by_side_section(out_dir: Path, quick: bool) -> Section:
    """CountNoise against the discrete Gaussian at matched error probability and variance."""
    sbs = []
    cases = [(0.5, 6, 1.1), (0.5, 10, 2.2), (0.8, 6, 2.2)] if quick else [
        (eta, D, eps) for eta in (0.1, 0.5, 0.8) for D in (4, 6, 10) for eps in (0.5, 1.1, 2.2)]
    for eta, D, eps in progress(cases, total=len(cases), desc="side by side"):
        E = exp_lower(eps)
        e = Fraction(eta)
        opt = cf.lp_alpha(E, e, D)[0]
        pmf = cf.pmf_from_alpha(e, opt)
        var = float((1 - e) * sum(a * i * i for i, a in enumerate(opt, start=1)))
        p = _paper(eps, eta, D)
        s_eta = dga.sigma2_for_zero_mass(eta)
        s_var = dga.sigma2_for_variance(var)
        sbs.append({
            "eta": eta, "D": D, "epsilon": eps,
            "count_noise_exact_delta_paper_alpha": p["exact_hs"] if p["thm3_holds"]
            else float("nan"),
            "count_noise_exact_delta_optimal": float(cf.hockey_delta(pmf, E)),
            "count_noise_variance": var,
            "dg_delta_matched_error_prob": dga.delta(s_eta, eps),
            "dg_variance_matched_error_prob": dga.moments(s_eta)[1],
            "dg_delta_matched_variance": dga.delta(s_var, eps),
        })
    return ([_write(out_dir / "side_by_side.csv", sbs)],
            ["## CountNoise vs discrete Gaussian (exact delta at epsilon)", "",
             "matched error probability: DG scale with P(Z=0) = eta; matched variance: DG with "
             "Var = CountNoise (LP-optimal alpha) variance. NaN = paper alpha* invalid "
             "(Theorem 3 fails).", "", _md_table(sbs, 4), ""])


SECTIONS = (figure1_section, grid_section, figure2_section, figure3_section, figure4_section,
            side_by_side_section)


def run(out_dir: Path, quick: bool = False) -> list[Path]:
    """Every section's files, and count_noise.md gathering their tables."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    md = ["# Sadeghi et al. 2020 (count-query noise), reproduced by dpnoise", ""]
    for section in SECTIONS:
        files, lines = section(out_dir, quick)
        paths += files
        md += lines
    (out_dir / "count_noise.md").write_text("\n".join(md))
    paths.append(out_dir / "count_noise.md")
    return paths
