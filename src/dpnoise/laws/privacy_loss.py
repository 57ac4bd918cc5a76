"""Privacy-loss atoms of additive lattice laws: the dominating pairs mechanisms report.

Each function returns :class:`~dpnoise.profile.LossAtoms` / ``DominatingPairs`` (the
accountant rounds them onto its loss grid and composes them).  The proof tools:

(a) **Monotone likelihood ratio.**  If g is log-concave on ℤ, the location family g(· − s)
    has a monotone likelihood ratio, so for 0 < s <= S the most powerful test of G_0
    against G_s has at every level a power against G_S at least its power against G_s
    (Lehmann and Romano, "Testing Statistical Hypotheses", 3rd ed. 2005, Thm. 3.4.1(ii)).
    Hence T(G_0, G_S) <= T(G_0, G_s): the extreme shift S dominates all smaller shifts, and
    by shift invariance every pair of centres at distance <= S.  Negative shifts are the
    ordered pair (G_0, G_{−S}); both are returned (the accountant envelopes them).
(b) **A revealed coin.**  If the sampled pmf satisfies p̃ >= g pointwise for a log-concave
    g of mass λ, then p̃ = λ·G + (1 − λ)·R (G = g/λ, R a pmf): the mechanism first flips a
    λ-coin and adds G- or R-noise.  Publishing the coin as well is more informative, and
    the pair with the coin has the PLD λ·PLD(G_0, G_S) + (1 − λ)·(+∞), which dominates
    every pair.  Two constructions of g from an ideal log-concave f: g = e^{−ρ}·f with
    ρ = max ln(f/p̃) (relative closeness), or g = (f − c)_+ with c = max(f − p̃) (absolute
    closeness); (f − c)_+ is log-concave where positive since
    (ln(e^φ − c))'' = [φ''e^φ(e^φ − c) − c φ'²e^φ]/(e^φ − c)² <= 0 for concave φ.
(e) **All-shift envelope** of a periodic (not log-concave) law: :func:`periodic_shift_atoms`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..float_sum import fsum_array
from ..profile import DominatingPairs, LossAtoms, U


def pair_atoms(lg: NDArray[np.float64], shift: int,
               probs: NDArray[np.float64] | None = None) -> LossAtoms:
    """PLD atoms of (G_0, G_shift) for a pmf given by its log ``lg`` on consecutive integers.

    One atom per point y of G_0's support (lg(y) > −inf): loss lg(y) − lg(y − shift)
    (+inf where G_shift(y) = G(y − shift) = 0), probability e^{lg(y)}, float error
    8u(|lg(y)| + |lg(y − shift)|) + 1e-13.  ``probs``: e^{lg} if the caller has it (it is
    the same for both signs of the shift).
    """
    lg = np.asarray(lg, dtype=np.float64)
    n, s = lg.size, abs(int(shift))
    p = np.exp(lg) if probs is None else probs
    if 0 < s < n and bool(np.isfinite(lg).all()):  # the same floats, without masks
        loss, err = _finite_pair_losses(lg, int(shift))
        return LossAtoms(loss, p, err)
    lq = np.full(n, -np.inf)  # lg(y − shift) aligned with lg(y)
    if s < n:
        if shift > 0:
            lq[s:] = lg[:n - s]
        else:
            lq[:n - s] = lg[s:]
    matched = np.isfinite(lq)
    with np.errstate(invalid="ignore"):
        loss = lg - lq
    loss[~matched] = np.inf
    lq[~matched] = 0.0
    err = np.abs(lg)
    err += np.abs(lq, out=lq)
    err *= 8 * U
    err += 1e-13
    support = np.isfinite(lg)
    if not support.all():
        loss, p, err = loss[support], p[support], err[support]
    return LossAtoms(loss, p, err)


def _finite_pair_losses(lg: NDArray[np.float64], shift: int
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(losses, errors) of :func:`pair_atoms` when every lg is finite and |shift| < len."""
    s = abs(shift)
    loss = np.empty(lg.size)
    err = np.abs(lg)
    mine, theirs, unmatched = ((slice(s, None), slice(None, -s), slice(None, s)) if shift > 0
                               else (slice(None, -s), slice(s, None), slice(-s, None)))
    np.subtract(lg[mine], lg[theirs], out=loss[mine])
    loss[unmatched] = np.inf
    err[mine] += np.abs(lg[theirs])
    err *= 8 * U
    err += 1e-13
    return loss, err


def log_concave_minorant(logp: NDArray[np.float64], logf: NDArray[np.float64], S: int,
                         how: str) -> tuple[tuple[LossAtoms, LossAtoms], float]:
    """Constructions (a)+(b) on one window of consecutive lattice points.

    ``logp``: the sampled pmf (−inf off its support, which must be an interval);
    ``logf``: an ideal log-concave function on the same points (normalisation irrelevant);
    ``how``: 'ratio' (g = e^{−ρ}f) or 'absolute' (g = (f − c)_+).  Returns the atoms of the
    pairs (G_0, G_S), (G_0, G_{−S}) and the coin λ (the mass of g, rounded down).

    Every mass is an exactly rounded sum (:func:`~dpnoise.float_sum.fsum_array`, the
    float of ``math.fsum`` bit for bit, in linear time on tables of 10^7 cells), taken once:
    fl(Σ e^{lg}) is within u of the mass of the g the code represents, and each e^{lg} is
    within 2u of its value, so λ = fl(Σ)·(1 − 16u) is below the true mass of g.
    """
    finite = np.isfinite(logp)
    if not finite.any():
        raise ParameterError("empty support")
    a, b = int(np.argmax(finite)), finite.size - 1 - int(np.argmax(finite[::-1]))
    if not finite[a:b + 1].all():
        raise ParameterError("the sampled pmf has holes: not an interval support")
    lp = logp[a:b + 1]
    work = np.exp(lp)  # one scratch array of the window's size, reused below
    mass_p = fsum_array(work)
    lf = logf[a:b + 1] - float(np.max(logf[a:b + 1]))
    lf += math.log(mass_p) - math.log(fsum_array(np.exp(lf, out=work)))
    if how == "ratio":
        gap = float(np.max(np.subtract(lf, lp, out=work)))
        np.abs(lf, out=work)
        work += np.abs(lp)
        rho = max(gap + 16 * U * float(np.max(work)), 0.0)
        lg = np.subtract(lf, rho, out=lf)
    elif how == "absolute":
        p, f = np.exp(lp), np.exp(lf)
        c = float(np.max(f - p)) * (1 + 1e-9) + 1e-300 + 16 * U * float(f.max())
        g = f - c
        with np.errstate(divide="ignore"):
            lg = np.where(g > 0, np.log(np.maximum(g, 1e-320)), -np.inf)
        pos = np.flatnonzero(np.isfinite(lg))
        lg = lg[pos[0]:pos[-1] + 1]
        work = np.empty_like(lg)
    else:  # pragma: no cover
        raise ParameterError(how)
    mass = fsum_array(np.exp(lg, out=work))  # = math.fsum: exactly rounded (float_sum)
    lam = mass * (1 - 16 * U)  # mass of g, rounded down
    lg -= math.log(mass)  # G = g/λ
    probs = np.exp(lg, out=work)  # e^{lg} of G, shared by both shifts
    return (pair_atoms(lg, S, probs), pair_atoms(lg, -S, probs)), min(1.0, lam)


def minorant_pairs(logp: NDArray[np.float64], logf: NDArray[np.float64], S: int, how: str,
                   what: str) -> DominatingPairs:
    """:func:`log_concave_minorant` as a dominating pair with its coin; ``what`` names the law."""
    pairs, lam = log_concave_minorant(logp, logf, S, how)
    return DominatingPairs(pairs, coin=lam, note=f"{what}: log-concave minorant of mass "
                           f"{lam:.17g} at shift {S}, rest at +inf")


def geometric_atoms(a: float, S: int, *, half: bool,
                    close: tuple[float, float] = (0.0, 0.0)) -> LossAtoms:
    """Exact PLD atoms of the ideal two-sided geometric law (decay a per cell), shift S.

    ``half=False``: p(z) ∝ e^{−a|z|} on ℤ (discrete Laplace).  ``half=True``: the half-offset
    lattice p(j) ∝ e^{−a·K(j)}, K(j) = j (j >= 0) or −j − 1 (j < 0).  Both laws are symmetric,
    so (G_0, G_{−S}) mirrors (G_0, G_S) and one direction suffices.  ``close = (ρ_lo, ρ_hi)``:
    the sampled law p̃ satisfies e^{−ρ_lo} f <= p̃ <= e^{ρ_hi} f pointwise (f the ideal law),
    and the atoms returned are the pointwise-close inflation of :mod:`dpnoise.accounting.pld`
    (losses + ρ_lo + ρ_hi, masses × e^{ρ_hi}): they dominate the sampled pair.
    """
    r = math.exp(-a)
    if half:
        # j < 0: loss +Sa, mass 1/2;  j >= S: loss −Sa, mass r^S/2;  0 <= j < S: (S−1−2j)a
        j = np.arange(S, dtype=np.float64)
        losses = np.concatenate([[S * a, -S * a], (S - 1 - 2 * j) * a])
        probs = np.concatenate([[0.5, 0.5 * r**S], 0.5 * (-math.expm1(-a)) * np.exp(-a * j)])
    else:
        norm = (-math.expm1(-a)) / (1 + r)
        z = np.arange(1, S, dtype=np.float64)
        losses = np.concatenate([[S * a, -S * a], (S - 2 * z) * a])
        probs = np.concatenate([[1 / (1 + r), r**S / (1 + r)], norm * np.exp(-a * z)])
    err = 16 * U * np.abs(losses) + 1e-13 + (close[0] + close[1]) * (1 + 4 * U)
    return LossAtoms(losses, probs * math.exp(close[1]) * (1 + 4 * U), err)


def periodic_gaps(lf: NDArray[np.float64], lp: NDArray[np.float64], first: slice,
                  second: slice) -> tuple[float, float]:
    """(ρ_lo, ρ_hi), rounded up: e^{−ρ_lo} f <= p̃ <= e^{ρ_hi} f for a block-periodic sampled
    table ``lp`` against the ideal ``lf`` (the gap must repeat between the ``first`` and
    ``second`` period, so its extremes over two periods are its extremes everywhere)."""
    gap = lf - lp
    if not np.allclose(gap[first], gap[second], rtol=0, atol=1e-12):
        raise ParameterError("block law is not periodic: cannot bound it by the ideal law")
    pad = 16 * U * float(np.max(np.abs(lf) + np.abs(lp)))
    return max(0.0, float(np.max(gap))) + pad, max(0.0, -float(np.min(gap))) + pad


def _runs(values: NDArray[np.float64], first: int) -> tuple[NDArray[np.int64],
                                                            NDArray[np.float64]]:
    """Run-length encoding: (start index of each run, value of the run)."""
    st = np.concatenate([[0], np.flatnonzero(values[1:] != values[:-1]) + 1])
    return (st + first).astype(np.int64), values[st]


def periodic_shift_atoms(logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]],
                         period: int, max_shift: int, symmetric: bool = True
                         ) -> list[LossAtoms]:
    """Exact PLD atoms of an additive lattice law at every critical shift in ±1..max_shift.

    ``logpmf(z)``: ln g(z) of the noise on ℤ, with a geometric tail of period P:
    g(z + P) = r·g(z) for z >= W and g(z − P) = r·g(z) for z < −W, where W is the smallest
    multiple of P that is >= max_shift (checked numerically on a period, to 1e-9).

    **Proof.**  (1) *Reduction to shifts.*  The release for centre c is c + Z, Z ~ g, so the
    ordered pair of centres (c, c') has the PLD of (G_0, G_{c'−c}); neighbours have
    |c' − c| <= max_shift, so the shifts s ∈ ±{1..max_shift} cover every ordered pair (both
    the "remove" and the "add" order).  If g is symmetric about −1/2 (g(z) = g(−1 − z), the
    half-offset lattice), y ↦ −1 − y maps (G_0, G_{−s}) onto (G_0, G_s), so the PLDs agree and
    s > 0 suffices (checked numerically; else both signs are computed).
    (2) *Exact PLD of one shift.*  ln g is piecewise constant: runs [b_i, b_{i+1}) of equal
    values (the sampler's aligned blocks).  On the window [−W − P, W + P) the loss
    ln g(z) − ln g(z − s) is constant between consecutive points of B ∪ (B + s) (B: run starts
    and the region boundaries ±W, ±(W + P)), so the PLD restricted to the window is a finite
    sum over those segments (length · g(start)).  For z >= W both z and z − s lie in the
    periodic tail, so z and z + P have the same loss and masses in ratio r: the outputs
    z >= W contribute the atoms of [W, W + P) times 1/(1 − r); likewise z < −W from
    [−W − P, −W).  This is the exact PLD (as a law of the loss), up to the float error of the
    logs (8u(|ln g(z)| + |ln g(z − s)|) + 1e-13 per loss).
    (3) *Finitely many shifts suffice.*  Between two consecutive *critical* shifts
    s ∈ {b − b' : b ∈ B, b' a run start} the order of the points of B ∪ (B + s) does not
    change, so every segment keeps its pair of runs (hence its loss) and its length is affine
    in s: for every ℓ the tail P_s(L >= ℓ), and for every ε the hockey stick
    H_s(ε) = Σ_segments length·g(start)·(1 − e^{ε − L})_+, are affine in s there, so their
    maxima over the integer shifts of the interval are attained at an end.  The envelope
    (tail or convex hull: both are functions of the pointwise maxima) over the critical
    shifts together with ±1 and ±max_shift therefore equals the one over all shifts.
    """
    P, S = int(period), int(max_shift)
    if P < 1 or S < 1:
        raise ParameterError("period and max_shift must be >= 1")
    W = P * max(1, math.ceil(S / P))
    z0 = -W - P - S
    z = np.arange(z0, W + P + max(P, S), dtype=np.int64)
    lp = np.asarray(logpmf(z), dtype=np.float64)
    if not np.all(np.isfinite(lp)):
        raise ParameterError("periodic envelope needs a law with full support")
    # periodic geometric tails, checked on one period each side
    up = lp[W + P - z0:W + 2 * P - z0] - lp[W - z0:W + P - z0]
    dn = lp[-W - P - z0:-W - z0] - lp[-W - z0:-W + P - z0]
    gaps = np.concatenate([up, dn])
    if gaps.size == 0 or float(np.ptp(gaps)) > 1e-9 or float(np.max(gaps)) >= 0:
        raise ParameterError("the law's tail is not geometric with the declared period")
    log_r = float(np.max(gaps)) + 1e-12  # rounded up: the tail masses are over-counted
    tail_factor = 1.0 / (-math.expm1(log_r))
    zz = np.arange(-W - P, W + P)
    sym = symmetric and bool(np.array_equal(lp[zz - z0], lp[-1 - zz - z0]))
    b, v = _runs(lp, z0)
    zb = np.union1d(b[(b >= -W - P) & (b < W + P)], [-W - P, -W, W, W + P])
    # critical shifts: zb_i − b_j with 1 <= |zb_i − b_j| <= S
    lo = np.searchsorted(b, zb - S, side="left")
    hi = np.searchsorted(b, zb + S, side="right")
    cnt = np.maximum(hi - lo, 0)
    offs = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    diffs = np.repeat(zb, cnt) - b[np.repeat(lo, cnt) + offs]
    diffs = np.union1d(diffs[(diffs != 0) & (np.abs(diffs) <= S)], [1, S, -1, -S])
    shifts = diffs[diffs > 0] if sym else diffs
    rows = []
    for s in shifts.astype(np.int64).tolist():
        pts = np.union1d(zb, np.clip(b + s, -W - P, W + P))
        start, length = pts[:-1], np.diff(pts)
        keep = length > 0
        start, length = start[keep], length[keep].astype(np.float64)
        lp_s = v[np.searchsorted(b, start, side="right") - 1]
        lq_s = v[np.searchsorted(b, start - s, side="right") - 1]
        tail = (start < -W) | (start >= W)
        mass = length * np.exp(lp_s) * np.where(tail, tail_factor, 1.0)
        err = 8 * U * (np.abs(lp_s) + np.abs(lq_s)) + 1e-13
        if abs(fsum_array(mass) - 1.0) > 1e-9:
            raise ParameterError("the law's pmf does not sum to 1 on the window and tails")
        rows.append(LossAtoms(lp_s - lq_s, mass, err))
    return rows
