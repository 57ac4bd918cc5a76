"""The PLD of one release of a dpnoise mechanism, from the pmf that is actually sampled.

The accountant never knows a mechanism by its class: it asks the mechanism for its
:class:`~dpnoise.profile.PrivacyProfile` (``mechanism.privacy_profile()``) and composes what
that reports.  A profile's ``pairs(S)`` gives :class:`~dpnoise.profile.DominatingPairs` for
a centre shift of S lattice cells: the loss atoms of ordered pairs of the SAMPLED law whose
envelope, mixed with a revealed coin, dominates every ordered neighbouring pair (both the
"remove" and the "add" direction).  The constructions and their proofs (monotone likelihood
ratio, revealed coin, all-shift envelope) are in :mod:`dpnoise.laws.privacy_loss`; which one
each family uses, from which table, in :mod:`dpnoise.mechanisms.profiles`.  Here:

* :func:`pairs_pld` rounds each pair's losses UP onto the grid h·ℤ (after adding the
  float-error bound the pair reports), takes the tail envelope (:meth:`PLD.envelope`) or
  the convex-hull envelope (:func:`.envelopes.hull_envelope_of_atoms`), and mixes in the
  coin's +∞ mass (:meth:`PLD.mixture`);
* **Post-processing.**  A clamped release is a function of the unclamped one, so the PLD of
  the unclamped law dominates it (data-processing inequality for the hockey-stick
  divergence); the profiles of clamped mechanisms report the unclamped pairs;
* **Fallback.**  A profile without pairs (``pairs=None``) is charged the randomized-response
  pair of its claimed (ε, δ) (Kairouz, Oh and Viswanath, "The composition theorem for
  differential privacy", ICML 2015, Thm. 2.1; :meth:`PLD.randomized_response`), reported as
  such: range-adherent Laplace (not additive), the planar and multivariate mechanisms.
  This is never worse than basic composition;
* a profile with ``dp=False`` is refused (:func:`profile_of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..profile import DominatingPairs, PrivacyProfile
from .pld import DEFAULT_H, PLD

EXACT = "exact"          # PLD of the sampled law (up to the documented λ-mixture)
FALLBACK = "fallback"    # randomized-response pair from the claimed (ε, δ)


@dataclass(frozen=True)
class SourcedPLD:
    """A PLD with how it was obtained (``method``: 'exact' or 'fallback') and why."""

    pld: PLD
    method: str
    note: str


# --------------------------------------------------------------------------- profiles
def profile_of(mechanism: Any) -> PrivacyProfile:
    """The mechanism's :class:`~dpnoise.profile.PrivacyProfile`; refuses anything that is
    not differentially private (every accountant calls this first)."""
    get = getattr(mechanism, "privacy_profile", None)
    if get is None:
        raise ParameterError(f"cannot account for {type(mechanism).__name__}: it has no "
                             "privacy profile")
    profile = get()
    if not profile.dp:
        raise ParameterError(f"cannot account for {mechanism!r}: {profile.note or 'not DP'} "
                             "(every accountant refuses a release that is not DP)")
    return profile


def pairs_pld(pairs: DominatingPairs, h: float) -> PLD:
    """The dominating PLD of reported pairs: each pair's losses rounded up onto the grid h·ℤ
    (after adding its float-error bound), their tail or convex-hull envelope, then the
    revealed coin (:class:`~dpnoise.profile.DominatingPairs`)."""
    if not pairs.pairs:
        raise ParameterError("no dominating pair reported")
    if pairs.envelope == "hull":
        from .envelopes import hull_envelope_of_atoms

        pld = hull_envelope_of_atoms([(np.asarray(a.losses) + a.error, a.probs)
                                      for a in pairs.pairs], h)
    else:
        each = [PLD.from_losses(a.losses, a.probs, h=h, error=a.error) for a in pairs.pairs]
        pld = each[0] if len(each) == 1 else PLD.envelope(each)
    return pld if pairs.coin is None else pld.mixture(pairs.coin)


def _exact(profile: PrivacyProfile, S: int, h: float) -> SourcedPLD:
    build = profile.pairs
    assert build is not None

    def make() -> tuple[PLD, str]:
        pairs = build(S)
        return pairs_pld(pairs, h), pairs.note

    if profile.cache_key is None:
        pld, note = make()
    else:
        from .envelopes import cached

        pld, note = cached((profile.cache_key, float(h), S), make)
    return SourcedPLD(pld, EXACT, note)


def _fallback(profile: PrivacyProfile, h: float, why: str) -> SourcedPLD:
    e, d = float(profile.epsilon), float(profile.delta)
    return SourcedPLD(PLD.randomized_response(e, d, h=h), FALLBACK,
                      f"{why}: randomized-response pair of the claimed (eps={e:g}, "
                      f"delta={d:g}) (Kairouz-Oh-Viswanath); no tighter than basic per "
                      "release, tighter under composition")


def lattice_steps(mechanism: Any, fraction: Fraction) -> int:
    """Lattice cells a true value moving by ``fraction`` of the sensitivity moves the centre.

    The centre index is c = floor(x/L + 1/2) (integers: L = 1), and
    floor(a + t) − floor(a) <= ceil(t) for t >= 0, so a move by t = fraction·Δ moves c by
    at most ceil(fraction·Δ/L) cells (exact rational arithmetic), capped by the mechanism's
    own shift ceil(Δ/L).
    """
    grid = getattr(mechanism, "grid", None) or 1
    full = math.ceil(Fraction(mechanism.sensitivity) / Fraction(grid))
    return max(1, min(full, math.ceil(Fraction(fraction) * Fraction(mechanism.sensitivity)
                                      / Fraction(grid))))


def mechanism_pld(mechanism: Any, *, h: float = DEFAULT_H, shift: int = 1,
                  steps: int | None = None) -> SourcedPLD:
    """The dominating PLD of one release of ``mechanism`` (see the module docstring).

    ``shift = d``: neighbours whose true values differ by up to d times the mechanism's
    sensitivity (the same construction at the extreme shift d·S, which dominates every
    smaller shift by (a)); the fallback uses group privacy, (dε)-DP for a pure ε-DP
    mechanism (Dwork and Roth 2014, Thm. 2.2), and refuses d > 1 with delta > 0.
    ``steps = t``: neighbours whose centres differ by at most t lattice cells, t <= the
    mechanism's own shift S (a sub-sensitivity move, :func:`lattice_steps`); the same
    constructions at the extreme shift t (for the log-concave families (a) applies to every
    t; the staircase envelope runs over 1..t).  Families without a per-shift construction
    (count noise, fallbacks) are charged at their full sensitivity, which dominates.
    """
    d = int(shift)
    if d != shift or d < 1:
        raise ParameterError(f"shift must be an integer >= 1, got {shift!r}")
    if steps is not None:
        if d != 1 or int(steps) != steps or steps < 1:
            raise ParameterError(f"steps must be an integer >= 1 (with shift=1), got {steps!r}")
        steps = int(steps)
    profile = profile_of(mechanism)
    if profile.pairs is not None:
        if not profile.sub_shifts:  # one construction, at the full sensitivity only
            if d != 1:
                raise ParameterError(f"{profile.note or 'this mechanism'} is defined for "
                                     "shifts of 1 only (sensitivity 1)")
            return _exact(profile, int(profile.shift_cells), h)
        S = int(profile.shift_cells) * d if steps is None else steps
        return _exact(profile, S, h)
    why = profile.note or "no exact PLD"
    if d == 1:
        return _fallback(profile, h, why)
    if float(profile.delta) > 0:
        raise ParameterError(f"{why} is (eps, delta)-DP: a shift of {d} times its sensitivity "
                             "has no fallback bound here (group privacy with delta is not used)")
    e = float(profile.epsilon)
    return SourcedPLD(PLD.randomized_response(d * e, 0.0, h=h), FALLBACK,
                      f"{why}: randomized-response pair of the group-privacy bound "
                      f"{d}x eps={e:g}")


def partitions(k: int, parts: int) -> list[tuple[int, ...]]:
    """The partitions of k into at most ``parts`` positive parts (largest first)."""
    out: list[tuple[int, ...]] = []

    def rec(left: int, most: int, acc: tuple[int, ...]) -> None:
        if left == 0:
            out.append(acc)
            return
        if len(acc) == parts:
            return
        for d in range(min(left, most), 0, -1):
            rec(left - d, d, (*acc, d))

    rec(int(k), int(k), ())
    return out


def _split_envelope(splits: list[tuple[int, ...]], by_part: dict[int, PLD]) -> PLD:
    """Envelope over ``splits`` of the composition of ``by_part[d]`` over each split's parts
    (one split: independent cells, so the product of their dominating pairs).

    The convex-hull envelope of Zhu, Dong and Wang (:func:`.envelopes.hull_envelope_of_atoms`,
    proof there) of the splits' PLDs, each given as its grid atoms and +∞ mass; each split's
    numerical ``slack`` (FFT round-off of its compositions) is an additive bound on its δ at
    every ε, so the largest one is added to the envelope's.  The tail envelope
    (:meth:`PLD.envelope`, used before) is also valid but mixes the tails of different
    splits.  Measured (AnalyticGaussian(0.5, 1e-7), k = 4 rows over 10 cells, 20 releases,
    ε at δ = 1e-6): 2.327 with the tail envelope, 2.240 with the hull; for pure ε-DP splits
    the two agree to 2e-5 relative (the hull's own float-error slack)."""
    from .envelopes import hull_envelope_of_grid

    composed = []
    for split in splits:
        pld = by_part[split[0]]
        for d in split[1:]:
            pld = pld.compose(by_part[d])
        composed.append(pld)
    if len(composed) == 1:
        return composed[0]
    keep = [p.masses > 0 for p in composed]
    hull = hull_envelope_of_grid(
        [(p.start + np.flatnonzero(k)).astype(np.int64) for p, k in zip(composed, keep,
                                                                       strict=True)],
        [p.masses[k] for p, k in zip(composed, keep, strict=True)],
        [p.inf_mass for p in composed], composed[0].h, [p.errors for p in composed])
    return PLD(hull.h, hull.start, hull.masses, hull.inf_mass,
               hull.slack + max(p.slack for p in composed))


MAX_SPLITS = 300  # partitions enveloped exactly; beyond, the pure-DP group bound is used


def split_pld(mechanism: Any, k: int, cells: int, *, h: float = DEFAULT_H) -> SourcedPLD:
    """PLD of one person moving up to ``cells`` cells by d_i times the sensitivity, Σd_i <= k.

    This is the release of a grouped statistic calibrated by the triangle inequality (each
    cell at sensitivity Δ and ε/k; one person's k rows fall into cells as they like).  The
    person's influence is a split (d_1, ..., d_j) of k (a partition; a split with Σd_i < k is
    dominated by one with Σd_i = k because a larger shift dominates a smaller one, (a)).  For
    one split the cells are independent releases, so the product of the per-cell dominating
    pairs at shifts d_i·Δ dominates it (composition, :mod:`.pld`); the charge is the tail
    envelope (:meth:`PLD.envelope`) over every split, which dominates each of them.
    Which split is worst is not assumed: for Gaussians one cell moved by kΔ is worse than k
    cells moved by Δ (ℓ2 norm kΔ vs √kΔ), and measured for the lattice Laplace and the
    geometric law (k = 4) too, but the envelope does not rely on it.  When k has more than
    MAX_SPLITS partitions, the group-privacy
    bound of a pure ε-DP release (kε overall, by the triangle inequality) is charged instead
    (randomized response; (ε, δ) mechanisms are refused there).
    """
    k, cells = int(k), max(1, int(cells))
    if k < 1:
        raise ParameterError(f"k must be an integer >= 1, got {k!r}")
    if k == 1:
        return mechanism_pld(mechanism, h=h)
    splits = partitions(k, cells)
    first = mechanism_pld(mechanism, h=h)
    if first.method == FALLBACK or len(splits) > MAX_SPLITS:
        g = mechanism.guarantee
        if float(g.delta) > 0:
            raise ParameterError(f"{mechanism!r} is (eps, delta)-DP: no bound for "
                                 f"{k} contributions split over cells (charge it per cell "
                                 "at sensitivity k times the unit instead)")
        why = "fallback mechanism" if first.method == FALLBACK else \
            f"{len(splits)} splits > {MAX_SPLITS}"
        return SourcedPLD(PLD.randomized_response(k * float(g.epsilon), 0.0, h=h), FALLBACK,
                          f"{why}: one person's {k} contributions over cells: pure "
                          f"{k}x eps={g.epsilon:g} by the triangle inequality, randomized "
                          "response pair")
    by_shift = {1: first.pld}
    for d in {d for s in splits for d in s} - {1}:
        by_shift[d] = mechanism_pld(mechanism, h=h, shift=d).pld
    return SourcedPLD(_split_envelope(splits, by_shift), EXACT,
                      f"{first.note}; envelope over the {len(splits)} splits of {k} "
                      f"contributions over at most {cells} cells")


def fraction_rho_factor(mechanism: Any, k: int, cells: int) -> float:
    """f such that f·ρ bounds the zCDP cost of a fraction split (:func:`fractional_split_pld`:
    cells calibrated at the full sensitivity kΔ, one person's k rows split d_1 + ... + d_j = k
    over j <= ``cells`` cells, cell i moving by at most t_i = :func:`lattice_steps` (d_i/k) of
    the law's S lattice cells).  The cells are independent, so their ρ add up.

    A Gaussian-type law (``rho_quadratic``: D_α of a move by t cells is at most (t/S)² of the
    full one) costs max over the splits of Σ(t_i/S)² -- at most 1 when S is a multiple of k
    (t_i = d_i·S/k exactly: Σ(d_i/k)² <= 1); the splits are enumerated up to
    :data:`MAX_SPLITS`, beyond which Σ(t_i/S)² <= Σ(d_i/k + 1/S)² <= 1 + 2/S + j/S² bounds
    them (t_i < d_i·S/k + 1).  Any other law is only known to cost its full ρ for a move of
    at most one sensitivity, so j = min(k, cells) cells cost j·ρ.
    """
    k, cells = int(k), max(1, int(cells))
    j = min(k, cells)
    if j == 1:
        return 1.0
    if not profile_of(mechanism).rho_quadratic:
        return float(j)
    S = lattice_steps(mechanism, Fraction(1))
    if S % k == 0:
        return 1.0
    splits = partitions(k, cells)
    if len(splits) > MAX_SPLITS:
        return min(float(j), 1.0 + 2.0 / S + j / S**2)
    worst = max(sum(Fraction(lattice_steps(mechanism, Fraction(d, k)), S) ** 2 for d in split)
                for split in splits)
    return min(float(j), float(worst) * (1 + 1e-15))


def fractional_split_pld(mechanism: Any, k: int, cells: int, *,
                         h: float = DEFAULT_H) -> SourcedPLD:
    """PLD of a grouped release whose cells are each calibrated at the FULL sensitivity kΔ.

    The (ε, δ) mechanisms of a GROUP BY are calibrated per cell at sensitivity k·unit (one
    person's k rows could all fall into one cell).  One person's rows split as
    d_1 + ... + d_j = k over j <= ``cells`` cells, cell i moving by d_i units, i.e. by the
    fraction d_i/k of the calibrated sensitivity: at most :func:`lattice_steps` (d_i/k)
    lattice cells.  For one split the cells are independent releases, so the product of the
    per-cell dominating pairs at those sub-shifts dominates it (composition, :mod:`.pld`; each
    per-cell PLD dominates every pair of centres at most that many cells apart: (a) for the
    log-concave families, the all-shift envelope for the staircase); splits with Σd_i < k are
    dominated by a split with Σd_i = k (a larger shift dominates, (a)).  The charge is the
    tail envelope over all partitions of k into at most ``cells`` parts.  For a Gaussian the
    worst split is one cell moved by kΔ (ℓ2 norm of (d_i) <= k), so the envelope equals one
    full-sensitivity cell; never looser than the earlier charge of min(k, cells) cells at the
    full sensitivity, which is kept when there are more than MAX_SPLITS partitions (or the
    family has no per-shift construction).
    """
    k, cells = int(k), max(1, int(cells))
    if k < 1:
        raise ParameterError(f"k must be an integer >= 1, got {k!r}")
    full = mechanism_pld(mechanism, h=h)
    j = min(k, cells)
    if k == 1 or j == 1:
        return full
    splits = partitions(k, cells)
    per_shift = full.method == EXACT and profile_of(mechanism).sub_shifts
    if not per_shift or len(splits) > MAX_SPLITS:
        return SourcedPLD(full.pld.self_compose(j), full.method,
                          f"{full.note} x{j} cells at the full sensitivity")
    by_d: dict[int, PLD] = {}
    for d in sorted({d for s in splits for d in s}):
        t = lattice_steps(mechanism, Fraction(d, k))
        by_d[d] = full.pld if d == k else mechanism_pld(mechanism, h=h, steps=t).pld
    return SourcedPLD(_split_envelope(splits, by_d), EXACT,
                      f"{full.note}; envelope over the {len(splits)} splits of {k} "
                      f"contributions over at most {cells} cells, cell i moved by d_i/{k} of "
                      "the calibrated sensitivity")
