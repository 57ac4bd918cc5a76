"""A finite table's PLD that keeps its real tail: minorant plus an all-shift residual.

A 64-bit table p̃ on −K..K (the lattice Gaussians' sampled law) is within an absolute c of
an ideal log-concave f (c = max(f − p̃), the table's 2^-64 rounding).  The revealed-coin
construction of :mod:`dpnoise.laws.privacy_loss` ((b), absolute closeness) writes
p̃ = g + r with g = (f − 2c)_+ log-concave of mass λ and a residual r = p̃ − g >= 0 of mass
1 − λ, and charges the residual +∞: about N·c (N ~ 1e5 cells), i.e. ~5e-14 of δ per
release, which is most of the budget at δ = 1e-12 after a dozen releases.

Here the residual is charged its own **all-shift window PLD** instead.  For a pmf r and the
shifts s = 1..S (one direction), the pair (R_0, R') with R'(y) = min_{1<=s<=S} r(y − s)
(a sub-probability; the missing mass sits on an extra output) satisfies R' <= R_s
pointwise for every s, hence (R_0(y) − e^ε R_s(y))_+ <= (R_0(y) − e^ε R'(y))_+ at every
output y: its PLD, atoms r(y) at the losses ln r(y) − min_{1<=s<=S} ln r(y − s), dominates
every pair (R_0, R_s), s = 1..S, and is the PLD of a pair of (sub-)probability measures,
so it composes (Zhu, Dong and Wang, "Optimal accounting of differential privacy via
characteristic function", AISTATS 2022, dominating pairs).  The mixture
λ·PLD(G_0, G_S) + (1 − λ)·PLD(R_0, R') then dominates every (P̃_0, P̃_s), s <= S (revealed
coin, then MLR for G and the window for R).  Since r = 2c + (p̃ − f) >= c wherever g > 0
(and p̃ − f is the table's rounding, of the order of c), the residual's losses are small
inside the table and +∞ only on the S cells at the end of the support (the table's real
unmatched tail, ~1e-16 for S = 256): the +∞ mass per release falls from ~5e-14 to the
table's own.

The window minimum is a sliding minimum (O(N), :func:`scipy.ndimage.minimum_filter1d`).
Float errors: r = p̃ − g is a difference of two numbers near p̃, so its relative error is
at most 8u·p̃/r; each residual loss gets that (both ends) plus the log's error added to its
error bound, and each residual mass is rounded up by the same factor (a larger P-mass with
the same Q-mass only raises the hockey-stick curve).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..float_sum import fsum_array
from ..profile import DominatingPairs, LossAtoms, U
from .privacy_loss import pair_atoms


def window_min_losses(lr: NDArray[np.float64], S: int) -> NDArray[np.float64]:
    """ln r(y) − min_{1<=s<=S} ln r(y − s) for each y of ``lr`` (−inf off the array)."""
    from scipy.ndimage import minimum_filter1d  # here: importing scipy.ndimage takes 0.3 s

    ext = np.concatenate([np.full(S, -np.inf), lr])
    # m[i] = min(ext[i .. i + S − 1]) = min over y − S .. y − 1 for y = i (index in lr)
    m = minimum_filter1d(ext, size=S, mode="constant", cval=-np.inf, origin=-(S // 2))
    low = m[: lr.size]
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(low), lr - low, np.inf)


def residual_mixture_pairs(logp: NDArray[np.float64], logf: NDArray[np.float64], S: int,
                           what: str) -> DominatingPairs:
    """The mixture of the module docstring, both directions (tail envelope of the two).

    ``logp``: the sampled pmf on consecutive integers (an interval support, −inf off it),
    already padded by at least S cells of −inf on each side; ``logf``: the ideal
    log-concave law on the same points (normalisation irrelevant)."""
    fin = np.flatnonzero(np.isfinite(logp))
    if fin.size == 0 or fin.size != fin[-1] - fin[0] + 1:
        raise ParameterError("the sampled pmf must have an interval support")
    lp = logp[fin[0]:fin[-1] + 1]
    lf = logf[fin[0]:fin[-1] + 1] - float(np.max(logf[fin[0]:fin[-1] + 1]))
    p = np.exp(lp)
    f = np.exp(lf)
    f = f * (fsum_array(p) / fsum_array(f))  # = math.fsum, in linear time
    c = float(np.max(f - p)) * (1 + 1e-9) + 1e-300 + 16 * U * float(f.max())
    g = np.maximum(f - 2 * c, 0.0)  # log-concave where positive (privacy_loss (b))
    pos = np.flatnonzero(g > 0)
    if pos.size == 0 or pos.size != pos[-1] - pos[0] + 1:
        raise ParameterError("no log-concave minorant")
    mass = fsum_array(g)  # exactly rounded, as math.fsum (float_sum)
    lam = mass * (1 - 16 * U)  # mass of g, rounded down
    with np.errstate(divide="ignore"):
        lg = np.log(g[pos[0]:pos[-1] + 1]) - math.log(mass)
    r = p - g
    rel = 8 * U * p / np.maximum(r, 1e-320) + 4 * U  # relative error bound of r
    if np.any(r <= 0) or float(rel.max()) > 0.25:
        raise ParameterError("the residual is not resolved in float")
    lr = np.log(r)
    masses = r * (1 + rel)
    out = []
    for direction in (1, -1):
        gp = pair_atoms(lg, direction * S)
        src = lr if direction > 0 else lr[::-1]
        loss = window_min_losses(src, S)
        err_src = rel if direction > 0 else rel[::-1]
        lo_err = -np.log1p(-np.minimum(err_src, 0.5))  # |ln(1 − rel)| of the lower end
        # the loss's denominator used r(y − s) at the minimising cell; bound its error by
        # the largest relative error over the table (cheap and safe)
        err = np.log1p(err_src) + float(lo_err.max()) + 8 * U * (np.abs(src) + 1.0)
        m = masses if direction > 0 else masses[::-1]
        out.append(LossAtoms(
            np.concatenate([gp.losses, loss]),
            np.concatenate([lam * gp.probs, m]),
            np.concatenate([np.broadcast_to(gp.error, gp.losses.shape), err])))
    return DominatingPairs(tuple(out), note=f"{what}: log-concave minorant (f - 2c)+ of mass "
                           f"{lam:.17g} at shift {S}, mixed with the residual's all-shift "
                           f"window PLD (shifts 1..{S}; +inf only off the table's support)")
