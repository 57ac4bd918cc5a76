"""Continuous truncated-and-normalised Laplace (Croft et al. 2022): log-mass, loss, minimal scale.

Notation: S = [l_1, r_1] ∪ ... ∪ [l_K, r_K]; for X ~ Lap(mu, s),
``Z_s(mu) = P(X in S)`` and ``g(mu) = ln Z_s(mu)``.  The mechanism's density is
``p(x|mu) = exp(-|x-mu|/s) / (2 s Z_s(mu))`` on S.

* Lemma A (derived here; the paper's (15) bounds it): the exact privacy loss of a pair is
  ``ell(mu1, mu2) = |mu1 - mu2|/s + |g(mu1) - g(mu2)|``.
* Standard DP (``"dp"``, not in the paper): ``eps_std(s) = sup{ell : |mu1 - mu2| <= Δ}``;
  Alg. A (interval: closed form at W = 2Δ, else the 1-D root of phi), Alg. B (half-line:
  ``s = Δ / ln((1 + e^ε)/2)``), Alg. C (unions: families A and B of pairs, bisection).
* Metric (``"metric"``, the paper's (13)): ``2Δ/ε`` whenever S is bounded on one side
  (sharpening Corollary 1); for R minus finite gaps, Theorem 2's 3n+2 bounds plus
  the n reflected gap-pair bounds the paper's proof misses (4n+2 in all).

Every scale returned is rounded **up**: the upper end of the final bracket, then nudged up
until the loss evaluated at it is <= ε.  Every exponential has a non-positive argument.

References:
  * W. L. Croft, J.-R. Sack, W. Shi, "Differential Privacy via a Truncated and Normalized
    Laplace Mechanism", Journal of Computer Science and Technology 37(2):369-388, 2022,
    doi:10.1007/s11390-020-0193-z.

Errata of the paper, each explained: docs/papers.md#errata-range-laplace.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from ..errors import ParameterError
from ..exact.range_lattice import GridDomain, LossBound, loss_bound
from ..params import LN2

Pieces = Sequence[tuple[float, float]]


# --------------------------------------------------------------------- masses
def log_piece_mass(lo: float, hi: float, mu: NDArray[np.float64], s: float
                   ) -> NDArray[np.float64]:
    """ln P(lo <= X <= hi), X ~ Lap(mu, s), stable for every mu."""
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = hi - lo
        span = np.log(-np.expm1(-w / s)) if w > 0 else -np.inf
        right = -(lo - mu) / s + span - LN2          # piece right of mu
        left = -(mu - hi) / s + span - LN2           # piece left of mu
        a = np.where(np.isinf(lo), 1.0, -np.expm1(-np.maximum(mu - lo, 0.0) / s))
        b = np.where(np.isinf(hi), 1.0, -np.expm1(-np.maximum(hi - mu, 0.0) / s))
        inside = np.log(a + b) - LN2
    return np.where(mu < lo, right, np.where(mu > hi, left, inside))


def _log_piece_masses(pieces: Pieces, mu: NDArray[np.float64], s: float
                      ) -> NDArray[np.float64]:
    """:func:`log_piece_mass` of every piece at once (rows), the same arithmetic broadcast."""
    lo = np.array([p[0] for p in pieces], dtype=np.float64).reshape((-1,) + (1,) * mu.ndim)
    hi = np.array([p[1] for p in pieces], dtype=np.float64).reshape(lo.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = hi - lo
        span = np.where(w > 0, np.log(-np.expm1(-w / s)), -np.inf)
        right = -(lo - mu) / s + span - LN2
        left = -(mu - hi) / s + span - LN2
        a = np.where(np.isinf(lo), 1.0, -np.expm1(-np.maximum(mu - lo, 0.0) / s))
        b = np.where(np.isinf(hi), 1.0, -np.expm1(-np.maximum(hi - mu, 0.0) / s))
        inside = np.log(a + b) - LN2
    return np.where(mu < lo, right, np.where(mu > hi, left, inside))


def log_mass(pieces: Pieces, mu: ArrayLike, s: float) -> NDArray[np.float64]:
    """g(mu) = ln Z_s(mu), a log-sum-exp over the pieces."""
    mu = np.asarray(mu, dtype=np.float64)
    if len(pieces) == 1:
        lo, hi = pieces[0]
        return log_piece_mass(lo, hi, mu, s)
    terms = _log_piece_masses(pieces, mu, s)
    mx = np.max(terms, axis=0)  # a plain log-sum-exp (scipy's costs ~0.1 ms a call)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = mx + np.log(np.sum(np.exp(terms - mx), axis=0))
    return np.where(np.isneginf(mx), -np.inf, out)


def pair_loss(pieces: Pieces, mu1: ArrayLike, mu2: ArrayLike, s: float) -> NDArray[np.float64]:
    """Lemma A: sup_x |ln p(x|mu1) − ln p(x|mu2)| = |mu1 − mu2|/s + |g(mu1) − g(mu2)|."""
    mu1 = np.asarray(mu1, dtype=np.float64)
    mu2 = np.asarray(mu2, dtype=np.float64)
    return np.abs(mu1 - mu2) / s + np.abs(log_mass(pieces, mu1, s) - log_mass(pieces, mu2, s))


# ---------------------------------------------------------- standard DP losses
def phi_interval(s: float, width: float, sensitivity: float) -> float:
    """Alg. A: exact eps_std on [a, a+W], W > Δ; worst pair (a, a+Δ)."""
    d, W = sensitivity, width
    num = -math.expm1(-d / s) - math.expm1(-(W - d) / s)
    den = -math.expm1(-W / s)
    return d / s + math.log(num / den)


def half_line_loss(s: float, sensitivity: float) -> float:
    """Alg. B: eps_std on a half-line = Δ/s + ln(2 − e^{−Δ/s})."""
    return sensitivity / s + math.log1p(-math.expm1(-sensitivity / s))


def _feasible_pairs_max(pieces: Pieces, sensitivity: float) -> float:
    """D*: the largest distance <= Δ between two points of S."""
    best = 0.0
    for i, (lo_i, hi_i) in enumerate(pieces):
        for lo_j, hi_j in pieces[i:]:
            # distances between the two pieces fill [lo_j − hi_i, hi_j − lo_i] (0 if i == j)
            if max(0.0, lo_j - hi_i) <= sensitivity:
                best = max(best, min(sensitivity, hi_j - lo_i))
    return best


def eps_std_union(pieces: Pieces, sensitivity: float, s: float, *, grid: int = 400) -> float:
    """Alg. C: sup of Lemma A's loss over pairs at distance <= Δ (families A and B)."""
    d = sensitivity
    fin = [t for p in pieces for t in p if math.isfinite(t)]
    lo_clip = (min(fin) if fin else 0.0) - 40 * max(s, d)
    hi_clip = (max(fin) if fin else 0.0) + 40 * max(s, d)
    best = 0.0
    unbounded = math.isinf(pieces[0][0]) or math.isinf(pieces[-1][1])
    if unbounded:
        best = d / s

    def loss(mu: NDArray[np.float64]) -> NDArray[np.float64]:
        return pair_loss(pieces, mu, mu + d, s)

    # family A: mu and mu + Δ both in S (all grids evaluated in one call)
    grids = []
    for lo_i, hi_i in pieces:
        for lo_j, hi_j in pieces:
            a = max(lo_i, lo_j - d, lo_clip)
            b = min(hi_i, hi_j - d, hi_clip)
            if a > b and a - b <= 1e-12 * max(1.0, abs(a), d):
                a = b  # a single pair at distance Δ, lost to rounding of lo_j − Δ
            if not a <= b:
                continue
            grids.append(np.unique(np.concatenate([np.linspace(a, b, grid), [a, b]])))
    if grids:
        allv = loss(np.concatenate(grids))
        start = 0
        for xs in grids:
            vals = allv[start:start + xs.size]
            start += xs.size
            k = int(np.argmax(vals))
            best = max(best, float(vals[k]))
            if 0 < k < xs.size - 1:
                res = optimize.minimize_scalar(lambda t: -float(loss(np.array([t]))[0]),
                                               bounds=(xs[k - 1], xs[k + 1]), method="bounded",
                                               options={"xatol": 1e-14 * max(1.0, abs(xs[k]))})
                best = max(best, -float(res.fun))
    # family B: a left end and a right end at distance in (0, Δ]
    lefts = [lo for lo, _ in pieces if math.isfinite(lo)]
    rights = [hi for _, hi in pieces if math.isfinite(hi)]
    for l_end in lefts:
        for r_end in rights:
            if 0 < r_end - l_end <= d:
                best = max(best, float(pair_loss(pieces, l_end, r_end, s)))
    return best


def _round_up(s: float, loss_at: float, eps: float, loss_fn) -> float:  # type: ignore[no-untyped-def]
    """Nudge s up (never down) until loss_fn(s) <= eps."""
    for _ in range(200):
        if loss_at <= eps:
            return s
        s = math.nextafter(s, math.inf) * (1 + 1e-15)
        loss_at = loss_fn(s)
    raise ParameterError("calibration failed to converge")  # pragma: no cover


def sigma_std(pieces: Pieces, sensitivity: float, epsilon: float) -> float:
    """The minimal uniform scale for ordinary ε-DP (Alg. A/B/C), rounded up."""
    d, eps = sensitivity, epsilon
    lo, hi = pieces[0][0], pieces[-1][1]
    if len(pieces) == 1:
        if math.isinf(lo) and math.isinf(hi):
            return d / eps
        if lo == hi:
            return 0.0
        if math.isinf(lo) or math.isinf(hi):  # Alg. B, closed form
            den = math.log1p(math.expm1(eps) / 2) if eps <= 700 else (
                eps - LN2 + math.log1p(math.exp(-eps)))
            s = d / den
            return _round_up(s, half_line_loss(s, d), eps, lambda t: half_line_loss(t, d))
        W = hi - lo
        if d >= W:  # effective sensitivity W; the loss is exactly W/s (Z(a) = Z(b))
            s = W / eps
            return _round_up(s, W / s, eps, lambda t: W / t)
        if 2 * d == W:  # closed form: e^(-Δ/s) = q = (sqrt(1 + 8e^-ε) - 1)/2, i.e.
            # -ln q = ε + ln(1 + sqrt(1 + 8e^-ε)) - ln 4 -- written so that no term
            # cancels or underflows (at ε >= 37 the difference form gives q = 0)
            s = d / (eps + math.log1p(math.sqrt(1 + 8 * math.exp(-eps))) - 2 * LN2)
        else:
            f = lambda t: phi_interval(t, W, d) - eps  # noqa: E731
            a, b = d / eps, 2 * d / eps
            s = optimize.brentq(f, a, b, xtol=1e-300, rtol=1e-15, maxiter=500)
        return _round_up(s, phi_interval(s, W, d), eps, lambda t: phi_interval(t, W, d))
    # Alg. C: root of eps_std(s) = ε on [D*/ε, 2Δ/ε] (decreasing in every case checked;
    # re-verified at the end) by the Illinois false-position method: the bracket [a, b]
    # keeps eps_std(a) > ε >= eps_std(b) and shrinks to 1e-13·b in ~10 evaluations instead
    # of bisection's ~45; the upper end b is returned (its loss is <= ε), rounded up.
    dstar = _feasible_pairs_max(pieces, d)
    a, b = dstar / eps, 2 * d / eps
    fb = eps_std_union(pieces, d, b) - eps
    while fb > 0:  # pragma: no cover - 2Δ/ε is always DP
        a, b = b, b * 1.5
        fb = eps_std_union(pieces, d, b) - eps
    fa = eps_std_union(pieces, d, a) - eps if a > 0 else math.inf
    if fa <= 0:  # pragma: no cover - the shift term alone gives D*/s >= ε at a
        return _round_up(a, fa + eps, eps, lambda t: eps_std_union(pieces, d, t))
    side = 0  # +1: b moved last, −1: a moved last (Illinois halves the other end's value)
    for _ in range(200):
        if b - a <= 1e-13 * b:
            break
        c = b - fb * (b - a) / (fb - fa) if math.isfinite(fa) else 0.5 * (a + b)
        if not a < c < b:
            c = 0.5 * (a + b)
        fc = eps_std_union(pieces, d, c) - eps
        if fc <= 0:
            b, fb = c, fc
            if side == 1:
                fa *= 0.5
            side = 1
        else:
            a, fa = c, fc
            if side == -1:
                fb *= 0.5
            side = -1
    return _round_up(b, eps_std_union(pieces, d, b), eps, lambda t: eps_std_union(pieces, d, t))


# ------------------------------------------------------------------ metric
def side_masses(pieces: Pieces, mu: float, s: float) -> tuple[float, float]:
    """Feasible Laplace mass left and right of mu (FL, FR; Z = FL + FR)."""
    fl = fr = 0.0
    for lo, hi in pieces:
        if lo < mu:
            fl += math.exp(float(log_piece_mass(lo, min(hi, mu), np.array(mu), s)))
        if hi > mu:
            fr += math.exp(float(log_piece_mass(max(lo, mu), hi, np.array(mu), s)))
    return fl, fr


def eps_metric(pieces: Pieces, sensitivity: float, s: float) -> float:
    """The paper's generalised (metric) loss: local rates at every finite endpoint, both gap
    orientations (4n+2 bounds) and the bulk rate Δ/s."""
    d = sensitivity
    best = d / s
    for lo, hi in pieces:
        for t in (lo, hi):
            if math.isfinite(t):
                fl, fr = side_masses(pieces, t, s)
                z = fl + fr
                best = max(best, d * 2 * fl / (s * z), d * 2 * fr / (s * z))
    for (_, r), (l_next, _) in itertools.pairwise(pieces):
        w = l_next - r
        g = log_mass(pieces, np.array([r, l_next]), s)
        best = max(best, d * (w / s + abs(float(g[1] - g[0]))) / w)
    return best


def sigma_metric(pieces: Pieces, sensitivity: float, epsilon: float) -> float:
    """The paper's metric-optimal uniform scale (Alg. M), rounded up."""
    d, eps = sensitivity, epsilon
    lo, hi = pieces[0][0], pieces[-1][1]
    if len(pieces) == 1 and lo == hi:
        return 0.0
    if math.isinf(lo) and math.isinf(hi):
        if len(pieces) == 1:
            return d / eps
        a, b = d / eps, 2 * d / eps
        for _ in range(200):
            mid = 0.5 * (a + b)
            if eps_metric(pieces, d, mid) <= eps:
                b = mid
            else:
                a = mid
            if b - a <= 1e-14 * b:
                break
        return _round_up(b, eps_metric(pieces, d, b), eps, lambda t: eps_metric(pieces, d, t))
    return 2 * d / eps  # V3: exactly 2Δ/ε when S is bounded on at least one side


# ---------------------------------------------- the paper's Sec. 4.1 (NOT DP)
W0_HALF_E = float(special.lambertw(-1 / (2 * math.e), 0).real)  # -0.2319609529865344


def paper_boundary_scale(sensitivity: float, epsilon: float) -> float:
    """(32): sigma_1 = −Δ / (W0(−1/(2e)) e ε) ≈ 1.5859541721782721 Δ/ε."""
    return -sensitivity / (W0_HALF_E * math.e * epsilon)


def paper_half_line_scale_unsafe(distance: ArrayLike, sensitivity: float, epsilon: float
                                 ) -> NDArray[np.float64]:
    """The paper's data-dependent scale sigma(t) of Sec. 4.1, (32)/(33) -- NOT DIFFERENTIALLY
    PRIVATE.  ``distance`` t >= 0 is the true answer's distance to the border.

    sigma(t) = t / (−u − W_Z(−2u e^{−u})), u = t e^{−ε t/Δ}/sigma_1, branch Z = 0 for
    t <= Δ/ε and Z = −1 beyond; sigma(0) = sigma_1.  Reproduction only: it warns.
    """
    warnings.warn("paper_half_line_scale_unsafe: the data-dependent scale of Croft et al. 2022 "
                  "Sec. 4.1 is NOT differentially private (its loss is unbounded); "
                  "reproduction only", UserWarning, stacklevel=2)
    t = np.asarray(distance, dtype=np.float64)
    if np.any(t < 0) or not np.all(np.isfinite(t)):
        raise ParameterError("distance must be finite and >= 0")
    s1 = paper_boundary_scale(sensitivity, epsilon)
    out = np.full(t.shape, s1)
    pos = t > 0
    tt = t[pos]
    u = tt * np.exp(-epsilon * tt / sensitivity) / s1
    arg = np.maximum(-2 * u * np.exp(-u), -1 / math.e)  # clamp rounding below the branch point
    with np.errstate(invalid="ignore"):
        w0 = special.lambertw(arg, 0).real
        wm1 = special.lambertw(arg, -1).real
    w = np.where(tt <= sensitivity / epsilon, w0, wm1)
    w = np.where(np.isfinite(w), w, -1.0)  # the branch point W(-1/e) = -1 (t = Δ/ε)
    out[pos] = tt / (-u - w)
    return out


# ------------------------------------------------------------ the lattice's block length
def lattice_block(gd: GridDomain, continuous_scale: float, shift_steps: int, *,
                  epsilon: float, sensitivity: float, metric: bool, n_decisions: int,
                  max_block: int) -> tuple[int, LossBound]:
    """The smallest block length M of the sampled lattice law whose proven loss bound
    (:func:`dpnoise.exact.range_lattice.loss_bound`, computed on the exact table) is at most
    epsilon -- and, with ``metric``, whose per-cell metric rate and gap ratio are at most
    epsilon·L/Δ -- with that bound.

    The search starts at the continuous scale's block, M0 = ceil(s·ln 2 / L): downwards when
    M0 already fits, else upwards by doubling steps from M0/512 (the answer lies within about
    1 % of M0) and then by bisection; the bound is monotone in M in every case checked, and
    the M returned is the one whose bound was computed.  Together with :func:`sigma_std` /
    :func:`sigma_metric` (the continuous scale) this is the range-adherent Laplace's whole
    calibration.

    Parameters
    ----------
    gd : GridDomain
        The domain on the lattice of step L.
    continuous_scale : float
        The continuous scale s the lattice law approximates.
    shift_steps : int
        The sensitivity in lattice cells, S = ceil(Δ/L).
    epsilon, sensitivity : float
        The guarantee and the sensitivity Δ.
    metric : bool
        The paper's generalised (metric) guarantee instead of epsilon-DP.
    n_decisions : int
        The exact decisions of a union's sampler (0 on an interval or half-line).
    max_block : int
        The largest block length allowed.

    Returns
    -------
    (int, LossBound)
        The block length and its proven bound.

    Raises
    ------
    ParameterError
        If no block length up to ``max_block`` fits.
    """
    grid = gd.grid

    def check(M: int) -> tuple[bool, LossBound]:
        b = loss_bound(gd, M, shift_steps, n_decisions=n_decisions,
                       metric_cells=sensitivity / grid if metric else None)
        ok = b.total <= epsilon
        if metric:
            per_cell = epsilon * grid / sensitivity
            ok = ok and b.metric_rate <= per_cell and not (b.metric_gap_ratio > per_cell)
        return ok, b

    M0 = max(1, math.ceil(continuous_scale * LN2 / grid))
    ok, b = check(M0)
    if ok:
        M, best = M0, b
        for _ in range(16):
            ok2, b2 = check(M - 1) if M > 1 else (False, b)
            if not ok2:
                break
            M, best = M - 1, b2
        return M, best
    lo, step = M0, max(1, M0 >> 9)
    while True:
        hi = M0 + step
        if hi > max_block:
            raise ParameterError(f"epsilon={epsilon!r} needs a block length > {max_block} at "
                                 f"grid {grid!r}; pass a coarser grid=")
        ok, b = check(hi)
        if ok:
            break
        lo, step = hi, step * 2
    best = b
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok, bm = check(mid)
        if ok:
            hi, best = mid, bm
        else:
            lo = mid
    return hi, best
