"""The privacy profile of each family, from the law its sampler actually draws.

Each function builds the :class:`~dpnoise.profile.PrivacyProfile` of one mechanism (its
``privacy_profile()`` calls it): the dominating pairs at a centre shift of S lattice cells
from the SAMPLED pmf (the alias / block tables, not the ideal law), the Rényi curve and ρ
where the sampled law has them, and the facts interval code uses.  The constructions and
their proofs are in :mod:`dpnoise.laws.privacy_loss`:

* lattice Laplace and the block geometric sampler: the 64-bit block table is periodic and
  p̃ >= e^{−ρ}·f for the ideal (log-concave) discrete Laplace f, so the PLD is the ideal law's
  exact PLD mixed with +∞ of mass 1 − e^{−ρ} (constructions (a) and (b));
* the exact geometric (CKS Alg. 2) and discrete Gaussian (CKS Alg. 3) samplers draw the
  ideal law itself (log-concave: (a));
* the finite tables (discrete Gaussian alias table, lattice Gaussians, truncated
  Laplacian): a log-concave minorant of the table ((a)+(b)); a finite-support law has
  infinite Rényi divergence between shifted neighbours, so these have no Rényi curve
  and no ρ;
* count noise: the exact PLDs of its table at the shifts ±1 (its only neighbours);
* the staircase (not log-concave): the all-shift envelope of the exact PLDs (e).

A clamped or clipped release is a post-processing of the unclamped one, so the unclamped
law's pairs dominate it (data-processing inequality for the hockey-stick divergence).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..laws.privacy_loss import (
    geometric_atoms,
    minorant_pairs,
    pair_atoms,
    periodic_gaps,
    periodic_shift_atoms,
)
from ..laws.table_residual import residual_mixture_pairs
from ..profile import DominatingPairs, PrivacyProfile, pure_renyi, renyi_gaussian

#: a finite table (the discrete Gaussian's) is charged the exact PLDs of its own pmf at every
#: shift 1..S up to this S (tail envelope); beyond, its log-concave minorant
EXACT_TABLE_SHIFTS = 16

_FINITE = ("samples a finite-support law, whose Renyi divergence between neighbours is "
           "infinite: it has no zCDP guarantee. Use the 'pld' accountant (exact for this law)")


def _pure(m: Any, **facts: Any) -> dict[str, Any]:
    """Rényi curve (randomized response of kε) and ρ = ε²/2 of a pure ε-DP release."""
    e = float(m.guarantee.epsilon)
    return {"renyi": pure_renyi(e), "rho": e * e / 2, **facts}


def _finite(name: str, **facts: Any) -> dict[str, Any]:
    return {"renyi": None, "rho": None, "not_zcdp": f"{name} {_FINITE}", **facts}


def _additive(m: Any, law: Any, snap: float, *, integer: bool = False,
              shift_invariant: bool = True) -> dict[str, Any]:
    return {"noise_at": m.noise, "shift_invariant": shift_invariant,
            "noise_law": (lambda: law(None)), "snap": float(snap), "integer_output": integer}


# --------------------------------------------------------------------------- Laplace
def laplace_pairs(m: Any, S: int) -> DominatingPairs:
    """Lattice Laplace (half-offset lattice, block table of period M), shift S cells."""
    M = int(m.block.M)
    a = math.log(2.0) / M
    k = np.arange(2 * M, dtype=np.int64)
    lp = np.asarray(m.block.logpmf(k), dtype=np.float64)  # ln P(K = k), sampled
    lf = np.log(-math.expm1(-a)) - a * k.astype(np.float64)  # ideal (1 − r) r^k
    rho = periodic_gaps(lf, lp, slice(0, M), slice(M, 2 * M))
    return DominatingPairs((geometric_atoms(a, S, half=True, close=rho),),
                           note=f"lattice Laplace: ideal discrete Laplace (decay ln2/{M}) at "
                           f"shift {S}, inflated by the 64-bit table's pointwise log-gaps to "
                           f"the ideal law ({rho[0]:.3g}, {rho[1]:.3g}; periodic in blocks)")


def laplace_profile(m: Any) -> PrivacyProfile:
    g = m.guarantee
    return PrivacyProfile(True, g.epsilon, g.delta, "lattice Laplace",
                          pairs=lambda S: laplace_pairs(m, S), shift_cells=int(m.shift_steps),
                          **_pure(m, **_additive(m, m.noise, m.grid)))


def clamped_laplace_profile(m: Any) -> PrivacyProfile:
    inner = m.laplace
    g = m.guarantee

    def pairs(S: int) -> DominatingPairs:
        p = laplace_pairs(inner, S)
        return DominatingPairs(p.pairs, p.coin, p.envelope, "clamp of " + p.note)

    facts = _additive(m, inner.noise, inner.grid)
    return PrivacyProfile(True, g.epsilon, g.delta, "Laplace then clamp (post-processing)",
                          pairs=pairs, shift_cells=int(inner.shift_steps),
                          range_adherent=True, **_pure(m, **facts))


# --------------------------------------------------------------------------- integers
def geometric_pairs(m: Any, S: int) -> DominatingPairs:
    block = getattr(m, "block", None)
    if block is not None and getattr(block, "inner", None) is not None:
        # first-steps block: decay ε/Δ inside blocks, 2^-j per block -- not log-concave and
        # far from any uniform geometric law, so the exact all-shift envelope of its own pmf
        # (periodic with period M: construction (e) of laws.privacy_loss)
        rows = periodic_shift_atoms(block.logpmf, int(block.M), S)
        return DominatingPairs(tuple(rows), envelope="hull",
                               note=f"two-sided geometric (first-steps block, period "
                               f"{block.M}): convex-hull envelope of the exact PLDs of the "
                               f"sampled pmf over all shifts 1..{S} ({len(rows)} critical "
                               "shifts, both orders; clamping is post-processing)")
    if block is not None:  # block sampler: ideal decay j ln2/M, 64-bit table (periodic)
        M = int(block.M)
        a = block.j * math.log(2.0) / M
        z = np.arange(0, 2 * M + 1, dtype=np.int64)
        lp = np.asarray(block.logpmf(z), dtype=np.float64)
        lf = math.log(-math.expm1(-a)) - math.log1p(math.exp(-a)) - a * z.astype(np.float64)
        rho = periodic_gaps(lf, lp, slice(1, M + 1), slice(M + 1, None))
        return DominatingPairs((geometric_atoms(a, S, half=False, close=rho),),
                               note=f"two-sided geometric (block sampler, decay {a:.6g}), "
                               f"shift {S}, inflated by the 64-bit table's pointwise log-gaps "
                               f"to the ideal law ({rho[0]:.3g}, {rho[1]:.3g}; periodic in "
                               "blocks; clamping is post-processing)")
    a = m.s / m.t  # exact sampler (CKS Alg. 2): the sampled law IS the ideal one
    return DominatingPairs((geometric_atoms(a, S, half=False),), coin=1.0,
                           note=f"two-sided geometric, decay {a:.6g}, shift {S} (exact "
                           "sampler; clamping is post-processing)")


def geometric_profile(m: Any) -> PrivacyProfile:
    g = m.guarantee
    return PrivacyProfile(True, g.epsilon, g.delta, "two-sided geometric",
                          pairs=lambda S: geometric_pairs(m, S), shift_cells=int(m.sensitivity),
                          **_pure(m, **_additive(m, m.noise, 0.0, integer=True)))


def discrete_gaussian_pairs(m: Any, S: int) -> DominatingPairs:
    from ..laws.discrete_gaussian import logpmf

    s2 = float(m.sigma2)
    table = m.table
    if table is not None and S <= EXACT_TABLE_SHIFTS:  # every shift of the table itself
        z = np.arange(-table.K - S, table.K + S + 1, dtype=np.int64)
        lp = np.asarray(table.logpmf(z), dtype=np.float64)
        return DominatingPairs(
            tuple(pair_atoms(lp, d) for s in range(1, S + 1) for d in (s, -s)),
            note=f"discrete Gaussian table sigma2={s2:.6g}: the table's exact PLDs at every "
            f"shift +-1..{S}, tail envelope (finite support: the unmatched end cells are +inf; "
            "clamping is post-processing)")
    if table is not None:  # the sampled table vs the ideal (log-concave) discrete Gaussian
        z = np.arange(-table.K - S, table.K + S + 1, dtype=np.int64)
        lp = np.asarray(table.logpmf(z), dtype=np.float64)
        lf = -(z.astype(np.float64) ** 2) / (2 * s2)
        p = minorant_pairs(lp, lf, S, "absolute", f"discrete Gaussian table sigma2={s2:.6g}")
        return DominatingPairs(p.pairs, p.coin, note=p.note + " (finite support; clamping is "
                               "post-processing)")
    K = math.ceil(40 * math.sqrt(s2)) + 2 * S + 60  # beyond 40σ the mass is < e^-790
    z = np.arange(-K, K + 1)
    lp = logpmf(z, s2)
    p = minorant_pairs(lp, lp, S, "ratio", f"discrete Gaussian sigma2={s2:.6g}")
    return DominatingPairs(p.pairs, p.coin, note=f"discrete Gaussian sigma2={s2:.6g}, shift "
                           f"{S} (exact CKS sampler, log-concave; clamping is post-processing)")


def discrete_gaussian_profile(m: Any) -> PrivacyProfile:
    """The exact CKS sampler draws N_ℤ(0, σ²): ρ = Δ²/(2σ²) (Canonne, Kamath and Steinke,
    NeurIPS 2020, Prop. 5).  The alias table has finite support ±K: no Rényi curve, no ρ."""
    g = m.guarantee
    facts = _additive(m, m.noise, 0.0, integer=True)
    if m.table is not None:
        zcdp = _finite("DiscreteGaussian(sampler='table')", **facts)
        zcdp["not_zcdp"] += ", or DiscreteGaussian(sampler='cks') (the exact infinite law)"
    else:
        rho = float(m.sensitivity) ** 2 / (2 * float(m.sigma2))
        zcdp = {"renyi": renyi_gaussian(rho), "rho": rho, "rho_quadratic": True, **facts}
    return PrivacyProfile(True, g.epsilon, g.delta, "discrete Gaussian",
                          pairs=lambda S: discrete_gaussian_pairs(m, S),
                          shift_cells=int(m.sensitivity), **zcdp)


def count_noise_profile(m: Any) -> PrivacyProfile:
    """The additive table on −D..D at the shifts ±1 (clamp/clip are pre-/post-processing)."""
    g = m.guarantee

    def pairs(S: int) -> DominatingPairs:
        law = m.noise()
        with np.errstate(divide="ignore"):
            lp = np.log(np.asarray(law.probs, dtype=np.float64))
        return DominatingPairs((pair_atoms(lp, 1), pair_atoms(lp, -1)),
                               note=f"count noise table D={m.D}, shifts +-1 (the only "
                               "neighbours)")

    return PrivacyProfile(True, g.epsilon, g.delta, "count noise", pairs=pairs, shift_cells=1,
                          sub_shifts=False, noise_at=m.noise, integer_output=True,
                          **_finite("CountNoise"))


# --------------------------------------------------------------------------- tables
def finite_table_pairs(m: Any, S: int, ideal: str) -> DominatingPairs:
    model = m.privacy_model()
    z = np.arange(model.lo, model.hi + 1, dtype=np.int64)
    lp = np.asarray(model.logpmf(z), dtype=np.float64)
    if ideal == "gauss":  # minorant + the residual's all-shift window (keeps the real tail)
        pad = np.full(S, -np.inf)
        lp = np.concatenate([pad, lp, pad])
        zz = np.arange(model.lo - S, model.hi + S + 1, dtype=np.float64)
        return residual_mixture_pairs(lp, -0.5 * (zz * (m.grid / m.sigma)) ** 2, S,
                                      f"discretised Gaussian table sigma={m.sigma:.6g} (finite "
                                      "support)")
    else:  # truncated Laplace: folded block geometric, ideal = truncated discrete Laplace
        a = math.log(2.0) / int(m.block.M)
        K = np.where(z >= 0, z, -z - 1)
        p = minorant_pairs(lp, -a * K.astype(np.float64), S, "ratio",
                           "truncated Laplacian table")
    return DominatingPairs(p.pairs, p.coin, note=p.note + " (finite support: the shift's "
                           "unmatched cells are +inf)")


def lattice_gaussian_profile(m: Any) -> PrivacyProfile:
    """The lattice Gaussians sample a finite 64-bit table on ±9.6σ, not N(0, σ²)."""
    g = m.guarantee
    return PrivacyProfile(True, g.epsilon, g.delta, "discretised Gaussian table",
                          pairs=lambda S: finite_table_pairs(m, S, "gauss"),
                          shift_cells=int(m.shift_steps), noise_at=m.noise,
                          cache_key=("lattice Gaussian table", type(m).__name__,
                                     float(m.sigma), float(m.grid), int(m.shift_steps)),
                          **_finite(type(m).__name__))


def truncated_laplace_profile(m: Any) -> PrivacyProfile:
    g = m.guarantee
    return PrivacyProfile(True, g.epsilon, g.delta, "truncated Laplacian table",
                          pairs=lambda S: finite_table_pairs(m, S, "laplace"),
                          shift_cells=int(m.shift_steps),
                          **_finite("TruncatedLaplace", **_additive(m, m.noise, m.grid)))


def staircase_pairs(m: Any, S: int) -> DominatingPairs:
    model = m.privacy_model()
    rows = periodic_shift_atoms(model.logpmf, int(model.period), S)
    return DominatingPairs(tuple(rows), envelope="hull",
                           note=f"lattice staircase (period {model.period} cells): tail "
                           f"envelope of the exact PLDs over all shifts 1..{S} ({len(rows)} "
                           "critical shifts enveloped; symmetric law, both orders)")


def staircase_profile(m: Any) -> PrivacyProfile:
    g = m.guarantee
    return PrivacyProfile(True, g.epsilon, g.delta, "lattice staircase",
                          pairs=lambda S: staircase_pairs(m, S), shift_cells=int(m.shift_steps),
                          cache_key=("Staircase", repr(m), float(m.level)),
                          **_pure(m, **_additive(m, m.noise, m.grid)))
