"""Independent numerical privacy verifier.

The verifier never reads a mechanism's claim while computing: it takes the
mechanism's *output law* (a "privacy model": the pmf/pdf for each true value) and
computes

* the worst-case privacy loss  sup_{x ~ x'} sup_y |ln p(y|x) − ln p(y|x')|, and
* the hockey-stick curve  δ(ε') = sup_{x ~ x'} Σ_y / ∫ (p(y|x) − e^ε' p(y|x'))_+,

then compares them with the claim afterwards.  Four kinds of model:

:class:`AdditiveLattice`
    output = c(x) + Z on a lattice, neighbours move c by at most ``max_shift`` cells.
    The loss is max over all pairs of lattice points at distance <= max_shift
    (sliding-window min/max, exact in the window); beyond the window the pmf must be
    periodic in log-ratio with the declared ``period`` -- which the verifier *checks*
    on the window instead of trusting.
:class:`AdditiveGrid`
    d-dimensional cells (multivariate staircase): every neighbour shift over a window.
:class:`DiscreteFamily`
    a finite pmf for each input in a list, neighbours by distance; exact sums.
:class:`LatticeFamily`
    exact pmfs per input on one integer lattice (non-additive laws such as a truncated,
    renormalised Laplace); windowed, with geometric tails checked for periodicity.
:func:`verify_neighbours`
    a law that depends on the whole data set (DP quantiles, partition selection):
    exact pmfs on enumerated neighbouring data sets of a small discretised model.
:class:`ContinuousFamily`
    densities (and optional atoms) for each input; piecewise analysis between
    breakpoints with dense evaluation, local maximisation, far-tail probes, and
    hockey-stick integrals over the exact super-level sets of the log-ratio
    (root-finding), in mpmath when the model supplies ``logpdf_mp``.

One module (~630 lines) on purpose: it is the independent check that every mechanism is
tested against, so it is read and audited as a unit; it imports only the ground floor
(never a mechanism, law or sampler), and its model kinds share the report, the pair
enumeration and the hockey-stick code.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import ParameterError

DEFAULT_EPSILONS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)


# ---------------------------------------------------------------------- models
@dataclass(frozen=True)
class AdditiveLattice:
    """Output = centre + z (z integer, in lattice units) with pmf ``exp(logpmf(z))``."""

    logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]]
    max_shift: int
    period: int | None = None
    window: int | None = None  # default: 3 periods + 2 shifts on each side


@dataclass(frozen=True)
class AdditiveGrid:
    """Output = centre + u in d dimensions (u: integer cell offsets), pmf ``exp(logpmf(u))``.

    ``logpmf`` maps an (n, d) int array of offsets to log-probabilities; ``shifts`` is the
    (k, d) array of all cell shifts neighbours can cause; ``window`` the half-widths of the
    box of offsets checked.  The verifier evaluates the pmf on the window and takes the
    maximum |ln p(u) − ln p(u + δ)| over every shift δ and every u with both points in
    the window (it does not extrapolate beyond it).
    """

    logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]]
    shifts: NDArray[np.int64]
    window: tuple[int, ...]


@dataclass(frozen=True)
class FiniteLattice:
    """Output = centre + z with z in [lo, hi] (integers, lattice units), pmf ``exp(logpmf(z))``.

    Finite support: points reachable from one centre but not from a shifted one are
    *not* a verification failure; they are counted in δ(ε') (a distinguishing event).
    ``shifts``: which centre shifts to evaluate δ for (default: all of 1..max_shift when
    max_shift <= 16, else 1, 2, S/4, S/2, 3S/4, S−1, S).  The loss on the common support
    is taken over every pair at distance <= max_shift.
    """

    logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]]
    max_shift: int
    lo: int
    hi: int
    shifts: Sequence[int] | None = None


@dataclass(frozen=True)
class DiscreteFamily:
    """Finite pmfs: ``law(x) -> (outputs, logp)``; neighbours are inputs within ``sensitivity``."""

    inputs: Sequence[float]
    sensitivity: float
    law: Callable[[float], tuple[NDArray[Any], NDArray[np.float64]]]
    pairs: Sequence[tuple[float, float]] | None = None


@dataclass(frozen=True)
class ContinuousFamily:
    """Densities ``logpdf(y, x)`` (−inf off the support) for each neighbouring pair.

    ``breakpoints(x)``: where the density may be non-smooth (support ends, kinks).
    ``cdf(y, x)``: optional, exact mass of (−inf, y] of the continuous part.
    ``atoms(x)``: optional point masses {y: probability}.
    ``scale``: typical length scale, to place dense evaluations and tail probes.
    """

    pairs: Sequence[tuple[float, float]]
    logpdf: Callable[[NDArray[np.float64], float], NDArray[np.float64]]
    breakpoints: Callable[[float], Sequence[float]]
    scale: float
    cdf: Callable[[float, float], float] | None = None
    atoms: Callable[[float], dict[float, float]] | None = None
    logpdf_mp: Callable[[Any, float], Any] | None = None


@dataclass(frozen=True)
class LatticeFamily:
    """Per-input pmfs on one integer lattice of outputs (non-additive, e.g. truncated laws).

    ``logpmf(j, x)``: ln P(output cell j | true value x), −inf off the support.
    ``window(x, x')``: inclusive cell range ``(lo, hi)`` compared for the pair, or a list of
    disjoint ranges.  Past every cut where the support continues, the log-ratio of the pair must
    be periodic with ``period`` cells (geometric tails, interiors of far pieces); the verifier
    *checks* this on the two periods next to each cut instead of trusting it, and adds the mass
    outside the window to δ(ε') for ε' below the loss.
    """

    pairs: Sequence[tuple[float, float]]
    logpmf: Callable[[NDArray[np.int64], float], NDArray[np.float64]]
    window: Callable[[float, float], Any]
    period: int | None = None


# ---------------------------------------------------------------------- report
@dataclass(frozen=True)
class VerificationReport:
    """Verified privacy loss and δ(ε') curve, plus the claim it was compared with.

    Parameters
    ----------
    epsilon : float
        The verified worst-case privacy loss ``sup |ln p(y|x) − ln p(y|x')|`` over
        neighbouring inputs and all outputs (infinite if an output is possible on one side
        only).
    delta_curve : tuple of (float, float)
        Pairs ``(ε', δ(ε'))``, with ``δ(ε') = sup Σ_y (p(y|x) − e^ε' p(y|x'))_+`` (the
        hockey-stick divergence; an integral for densities).
    claimed_epsilon, claimed_delta : float or None, default None
        The mechanism's claim, read after the computation.
    worst : dict, default {}
        Where the worst loss occurs.
    method : str, default ""
        Which analysis produced the numbers (lattice, discrete, continuous, ...).
    """

    epsilon: float
    delta_curve: tuple[tuple[float, float], ...]
    claimed_epsilon: float | None = None
    claimed_delta: float | None = None
    worst: dict[str, Any] = field(default_factory=dict)
    method: str = ""

    def delta_at(self, eps: float) -> float:
        """The verified δ at one of the computed ε'.

        Parameters
        ----------
        eps : float
            An ε' that was passed to :func:`verify` (or the claimed ε).

        Returns
        -------
        float
            δ(ε').

        Raises
        ------
        KeyError
            If δ(ε') was not computed.
        """
        for e, d in self.delta_curve:
            if e == eps:
                return d
        raise KeyError(f"delta({eps}) was not computed; pass epsilons=[...] to verify()")

    @property
    def passed(self) -> bool:
        """Claim holds: verified δ(claimed ε) <= claimed δ (pure: loss <= claimed ε)."""
        if self.claimed_epsilon is None:
            return True
        if not self.claimed_delta:
            return self.epsilon <= self.claimed_epsilon * (1 + 1e-12) + 1e-12
        d = self.delta_at(self.claimed_epsilon)
        return d <= self.claimed_delta * (1 + 1e-9) + 1e-300

    def as_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict.

        Returns
        -------
        dict
            Verified and claimed ε and δ, the curve, the worst case and ``passed``.
        """
        return {
            "verified_epsilon": self.epsilon,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "passed": self.passed,
            "delta_curve": [list(p) for p in self.delta_curve],
            "worst": self.worst,
            "method": self.method,
        }


# ---------------------------------------------------------------- primitives
def _log_hockey(logp: NDArray[np.float64], logq: NDArray[np.float64], eps: float) -> float:
    """Σ (p − e^eps q)_+ over aligned outcomes, accurate for tiny masses."""
    with np.errstate(invalid="ignore", over="ignore"):
        gap = logq + eps - logp  # ln(e^eps q / p)
        mask = np.isfinite(logp) & (gap < 0)
        terms = np.exp(logp[mask]) * -np.expm1(gap[mask])
    return float(math.fsum(terms.tolist()))


def pair_loss(logp: NDArray[np.float64], logq: NDArray[np.float64]) -> float:
    """max |ln p − ln q| over aligned outcomes (inf where exactly one is impossible)."""
    fp, fq = np.isfinite(logp), np.isfinite(logq)
    if np.any(fp != fq):
        return math.inf
    both = fp & fq
    if not np.any(both):
        return 0.0
    return float(np.max(np.abs(logp[both] - logq[both])))


def discrete_pair(
    logp: NDArray[np.float64], logq: NDArray[np.float64], epsilons: Sequence[float]
) -> tuple[float, list[float]]:
    """Loss and δ(ε') (both directions) of two aligned discrete laws."""
    loss = pair_loss(logp, logq)
    deltas = [max(_log_hockey(logp, logq, e), _log_hockey(logq, logp, e)) for e in epsilons]
    return loss, deltas


# ---------------------------------------------------------------- lattice
def _verify_lattice(model: AdditiveLattice, epsilons: Sequence[float]) -> VerificationReport:
    from scipy.ndimage import maximum_filter1d, minimum_filter1d
    S = int(model.max_shift)
    if S < 1:
        raise ParameterError("max_shift must be >= 1")
    period = model.period or 0
    W = model.window or (3 * period + 2 * S + 16)
    z = np.arange(-W, W + 1, dtype=np.int64)
    lp = np.asarray(model.logpmf(z), dtype=np.float64)
    if np.any(np.isnan(lp)):
        raise ParameterError("logpmf returned NaN")
    finite = np.isfinite(lp)
    # loss: for every z, the extreme log-probabilities within distance S
    # every run of S+1 consecutive points = every pair at distance <= S
    hi = maximum_filter1d(np.where(finite, lp, -np.inf), size=S + 1, mode="nearest")
    lo = minimum_filter1d(np.where(finite, lp, np.inf), size=S + 1, mode="nearest")
    inner = slice(S, lp.size - S)  # windows fully inside the evaluated range
    # a possible and an impossible lattice point within S of each other: infinite loss
    some_possible = maximum_filter1d(finite.astype(np.uint8), size=S + 1, mode="nearest")
    some_impossible = maximum_filter1d((~finite).astype(np.uint8), size=S + 1, mode="nearest")
    mismatch = bool(np.any((some_possible & some_impossible)[inner]))
    lo_in = lo[inner]
    loss = math.inf if mismatch else float(np.max((hi[inner] - lo_in)[np.isfinite(lo_in)]))
    # beyond the window: periodicity of the step log-ratios, checked on both tails
    if period:
        steps = np.diff(lp)
        tail_r = steps[-2 * period - 1 :]
        tail_l = steps[: 2 * period + 1]
        if not (np.allclose(tail_r[:period + 1], tail_r[period:], rtol=0, atol=1e-12)
                and np.allclose(tail_l[:period + 1], tail_l[period:], rtol=0, atol=1e-12)):
            raise ParameterError("declared period does not hold on the verified window")
    # hockey stick for a shift by S (the extreme shift) inside the window, plus the tail mass
    p = lp[S:]
    q = lp[:-S]
    tail = float(np.exp(lp[: 2 * S]).sum() + np.exp(lp[-2 * S :]).sum())
    deltas = []
    for e in epsilons:
        d = max(_log_hockey(p, q, e), _log_hockey(q, p, e))
        # outside the window every ratio is <= e^loss, so the tail adds at most
        # tail·(1 − e^(e − loss)): zero when e >= loss, tiny when loss exceeds e by rounding
        tail_part = tail * -math.expm1(min(0.0, e - loss)) if math.isfinite(loss) else tail
        deltas.append(min(1.0, d + tail_part))
    spread = np.where(some_possible & some_impossible, np.inf,
                      np.where(np.isfinite(lo), hi - lo, -np.inf))
    worst_at = int(np.argmax(spread[inner])) + S - W
    return VerificationReport(
        epsilon=loss,
        delta_curve=tuple(zip(epsilons, deltas, strict=True)),
        worst={"lattice_point": worst_at, "max_shift": S, "window": W},
        method="additive lattice: sliding-window extremes over all shifts <= max_shift; "
        "delta(eps') for the extreme shift",
    )


# ---------------------------------------------------------------- grid (d-dim)
def _verify_grid(model: AdditiveGrid, epsilons: Sequence[float]) -> VerificationReport:
    W = tuple(int(w) for w in model.window)
    axes = [np.arange(-w, w) for w in W]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    shape = mesh.shape[:-1]
    lp = np.asarray(model.logpmf(mesh.reshape(-1, len(W))), dtype=np.float64).reshape(shape)
    if np.any(np.isnan(lp)):
        raise ParameterError("logpmf returned NaN")
    loss, worst = 0.0, None
    deltas = [0.0] * len(epsilons)
    for delta in np.asarray(model.shifts, dtype=np.int64):
        if not np.any(delta):
            continue
        src = tuple(slice(max(0, -d), n - max(0, d)) for d, n in zip(delta, shape, strict=True))
        dst = tuple(slice(max(0, d), n - max(0, -d)) for d, n in zip(delta, shape, strict=True))
        a, b = lp[src].ravel(), lp[dst].ravel()
        here = pair_loss(a, b)
        if here > loss:
            loss, worst = here, delta.tolist()
        for i, e in enumerate(epsilons):
            deltas[i] = max(deltas[i], _log_hockey(a, b, e), _log_hockey(b, a, e))
    return VerificationReport(
        epsilon=loss,
        delta_curve=tuple(zip(epsilons, deltas, strict=True)),
        worst={"shift": worst, "window": W, "shifts_checked": len(model.shifts)},
        method="additive grid: every neighbour shift over a window of cells",
    )


# ---------------------------------------------------------------- finite lattice
FINITE_LATTICE_LIMIT = 1 << 25


def _verify_finite_lattice(model: FiniteLattice, epsilons: Sequence[float]
                           ) -> VerificationReport:
    from scipy.ndimage import maximum_filter1d, minimum_filter1d
    S = int(model.max_shift)
    lo, hi = int(model.lo), int(model.hi)
    if S < 1 or hi < lo:
        raise ParameterError("finite lattice needs max_shift >= 1 and lo <= hi")
    if hi - lo + 1 > FINITE_LATTICE_LIMIT:
        raise ParameterError(
            f"support of {hi - lo + 1} lattice points is too large for dense verification "
            f"(limit {FINITE_LATTICE_LIMIT}); use a coarser grid")
    z = np.arange(lo - S, hi + S + 1, dtype=np.int64)
    lp = np.asarray(model.logpmf(z), dtype=np.float64)
    if np.any(np.isnan(lp)) or np.any(lp > 0):
        raise ParameterError("logpmf returned NaN or a probability > 1")
    finite = np.isfinite(lp)
    outside = (z < lo) | (z > hi)
    if np.any(finite & outside):
        raise ParameterError("logpmf has mass outside the declared support [lo, hi]")
    total = math.fsum(np.exp(lp[finite]).tolist())
    if abs(total - 1.0) > 1e-9:
        raise ParameterError(f"pmf sums to {total!r}, not 1")
    # loss over every pair at distance <= S with both points possible
    hiv = maximum_filter1d(np.where(finite, lp, -np.inf), size=S + 1, mode="constant",
                           cval=-np.inf)
    lov = minimum_filter1d(np.where(finite, lp, np.inf), size=S + 1, mode="constant",
                           cval=np.inf)
    both = np.isfinite(hiv) & np.isfinite(lov)
    common_loss = float(np.max((hiv - lov)[both])) if np.any(both) else 0.0
    if model.shifts is not None:
        shifts = sorted({int(s) for s in model.shifts if 1 <= int(s) <= S})
    elif S <= 16:
        shifts = list(range(1, S + 1))
    else:
        shifts = sorted({1, 2, S // 4, S // 2, (3 * S) // 4, S - 1, S})
    mismatch = False
    deltas = [0.0] * len(epsilons)
    worst_shift = [0] * len(epsilons)
    for s in shifts:
        p, q = lp[s:], lp[:-s]  # law at centre 0 vs centre s, aligned on outputs
        if np.any(np.isfinite(p) != np.isfinite(q)):
            mismatch = True
        for i, e in enumerate(epsilons):
            d = max(_log_hockey(p, q, e), _log_hockey(q, p, e))
            if d > deltas[i]:
                deltas[i], worst_shift[i] = d, s
    return VerificationReport(
        epsilon=math.inf if mismatch else common_loss,
        delta_curve=tuple(zip(epsilons, [min(1.0, d) for d in deltas], strict=True)),
        worst={"common_support_loss": common_loss, "shifts_checked": shifts,
               "worst_shift": worst_shift, "support": [lo, hi], "total_mass": total},
        method="finite lattice: exact sums over the whole support, both shift directions",
    )


# ---------------------------------------------------------------- discrete
def _pairs_from_inputs(inputs: Sequence[float], sensitivity: float) -> list[tuple[float, float]]:
    xs = sorted(set(float(x) for x in inputs))
    out = []
    for i, a in enumerate(xs):
        for b in xs[i + 1 :]:
            if b - a <= sensitivity * (1 + 1e-12):
                out.append((a, b))
    return out


def _worst_pair(
    law: Callable[[Any], tuple[Any, Any]],
    pairs: Sequence[tuple[Any, Any]],
    epsilons: Sequence[float],
    *,
    order: Callable[[Any], Any] | None = None,
) -> tuple[float, tuple[Any, Any] | None, list[float]]:
    """The worst ordered pair of finite laws: over every pair, the exact loss and δ(ε)
    on the union of the two supports (:func:`discrete_pair`); returns the largest loss,
    the pair that attains it and the pointwise largest δ curve.  ``law(x) -> (outputs,
    logp)`` is evaluated once per input; ``order`` sorts the outputs (default: their own
    order; ``repr`` when they are of mixed types)."""
    cache: dict[Any, dict[Any, float]] = {}

    def logpmf(x: Any) -> dict[Any, float]:
        if x not in cache:
            ys, lps = law(x)
            cache[x] = dict(zip(np.asarray(ys).tolist(), np.asarray(lps, dtype=float).tolist(),
                                strict=True))
        return cache[x]

    worst_loss, worst_pair = -1.0, None
    worst_delta = [0.0] * len(epsilons)
    for a, b in pairs:
        la, lb = logpmf(a), logpmf(b)
        keys = sorted(set(la) | set(lb), key=order)
        lp = np.array([la.get(k, -math.inf) for k in keys])
        lq = np.array([lb.get(k, -math.inf) for k in keys])
        loss, deltas = discrete_pair(lp, lq, epsilons)
        if loss > worst_loss:
            worst_loss, worst_pair = loss, (a, b)
        worst_delta = [max(u, v) for u, v in zip(worst_delta, deltas, strict=True)]
    return worst_loss, worst_pair, worst_delta


def _verify_discrete(model: DiscreteFamily, epsilons: Sequence[float]) -> VerificationReport:
    pairs = list(model.pairs) if model.pairs is not None else _pairs_from_inputs(
        model.inputs, model.sensitivity
    )
    if not pairs:
        raise ParameterError("no neighbouring pairs to verify")
    worst_loss, worst_pair, worst_delta = _worst_pair(model.law, pairs, epsilons)
    return VerificationReport(
        epsilon=worst_loss,
        delta_curve=tuple(zip(epsilons, worst_delta, strict=True)),
        worst={"pair": worst_pair, "pairs_checked": len(pairs)},
        method="discrete: exact sums over the union of supports",
    )


# ---------------------------------------------------------------- lattice family
def _verify_lattice_family(model: LatticeFamily, epsilons: Sequence[float]
                           ) -> VerificationReport:
    if not model.pairs:
        raise ParameterError("no neighbouring pairs to verify")
    worst, worst_pair, worst_cell = -1.0, None, None
    deltas = [0.0] * len(epsilons)
    for a, b in model.pairs:
        win = model.window(a, b)
        ranges = [win] if isinstance(win[0], (int, np.integer)) else list(win)
        j = np.concatenate([np.arange(int(lo), int(hi) + 1, dtype=np.int64) for lo, hi in ranges])
        lp = np.asarray(model.logpmf(j, a), dtype=np.float64)
        lq = np.asarray(model.logpmf(j, b), dtype=np.float64)
        if np.any(np.isnan(lp)) or np.any(np.isnan(lq)):
            raise ParameterError("logpmf returned NaN")
        loss = pair_loss(lp, lq)
        per = model.period
        with np.errstate(invalid="ignore"):
            ratio = np.where(np.isfinite(lp) & np.isfinite(lq), lp - lq, 0.0)
        start = 0
        for lo, hi in ranges:  # every cut where the support continues: periodic tails
            size = int(hi) - int(lo) + 1
            seg = ratio[start:start + size]
            for edge, side in ((int(lo) - 1, 0), (int(hi) + 1, -1)):
                if edge in (int(r[0]) for r in ranges) or edge in (int(r[1]) for r in ranges):
                    continue
                beyond = np.asarray(model.logpmf(np.array([edge]), a))[0]
                if not np.isfinite(beyond):
                    continue
                if not per:
                    raise ParameterError("support continues past the window but no period given")
                r = seg[: 2 * per] if side == 0 else seg[-2 * per:]
                if r.size < 2 * per or not np.allclose(r[:per], r[per:], rtol=0, atol=1e-9):
                    raise ParameterError("log-ratio is not periodic at a window cut")
            start += size
        if loss > worst:
            both = np.isfinite(lp) & np.isfinite(lq)
            k = int(np.argmax(np.where(both, np.abs(ratio), -1.0)))
            worst, worst_pair, worst_cell = loss, (a, b), int(j[k])
        outside = max(0.0, 1.0 - math.fsum(np.exp(lp[np.isfinite(lp)]).tolist()),
                      1.0 - math.fsum(np.exp(lq[np.isfinite(lq)]).tolist()))
        for i, e in enumerate(epsilons):
            d = max(_log_hockey(lp, lq, e), _log_hockey(lq, lp, e))
            deltas[i] = max(deltas[i], min(1.0, d + (outside if e < loss else 0.0)))
    return VerificationReport(
        epsilon=worst,
        delta_curve=tuple(zip(epsilons, deltas, strict=True)),
        worst={"pair": worst_pair, "cell": worst_cell, "pairs_checked": len(model.pairs)},
        method="lattice family: exact pmfs per input over a window, periodic tails checked",
    )


# ---------------------------------------------------------------- continuous
def _pieces(model: ContinuousFamily, a: float, b: float) -> list[tuple[float, float]]:
    bps = sorted(set(float(t) for t in [*model.breakpoints(a), *model.breakpoints(b)]
                     if math.isfinite(t)))
    edges = [-math.inf, *bps, math.inf]
    return [(lo, hi) for lo, hi in itertools.pairwise(edges) if lo < hi]


def _probe_points(lo: float, hi: float, scale: float, n: int = 129) -> NDArray[np.float64]:
    if math.isfinite(lo) and math.isfinite(hi):
        w = hi - lo
        t = np.linspace(0.0, 1.0, n)
        t = np.concatenate([t, [1e-12, 1e-9, 1 - 1e-9, 1 - 1e-12]])
        pts = np.unique(lo + w * t)
        return pts[(pts > lo) & (pts < hi)]
    anchor = lo if math.isfinite(lo) else hi
    if not math.isfinite(anchor):
        anchor = 0.0
        offsets = scale * np.concatenate([-np.logspace(-6, 4, n), [0.0], np.logspace(-6, 4, n)])
        return np.unique(anchor + offsets)
    direction = 1.0 if math.isfinite(lo) else -1.0
    offsets = scale * np.concatenate([np.logspace(-12, 4, 2 * n), np.linspace(0.01, 50, n)])
    return np.unique(anchor + direction * offsets)


def _log_ratio(model: ContinuousFamily, y: NDArray[np.float64], a: float, b: float
               ) -> NDArray[np.float64]:
    la = np.asarray(model.logpdf(y, a), dtype=np.float64)
    lb = np.asarray(model.logpdf(y, b), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        r = la - lb
    r = np.where(np.isfinite(la) & ~np.isfinite(lb), math.inf, r)
    r = np.where(~np.isfinite(la) & np.isfinite(lb), -math.inf, r)
    return np.where(~np.isfinite(la) & ~np.isfinite(lb), 0.0, r)


def _continuous_pair_loss(model: ContinuousFamily, a: float, b: float) -> tuple[float, float]:
    from scipy import optimize
    best, at = 0.0, math.nan
    for lo, hi in _pieces(model, a, b):
        y = _probe_points(lo, hi, model.scale)
        if y.size == 0:
            continue
        r = np.abs(_log_ratio(model, y, a, b))
        i = int(np.nanargmax(r))
        val, arg = float(r[i]), float(y[i])
        if math.isfinite(val) and 0 < i < y.size - 1:  # refine an interior maximum
            res = optimize.minimize_scalar(
                lambda t: -abs(float(_log_ratio(model, np.array([t]), a, b)[0])),
                bounds=(float(y[i - 1]), float(y[i + 1])), method="bounded",
                options={"xatol": 1e-13 * max(1.0, abs(arg))})
            if -res.fun > val:
                val, arg = float(-res.fun), float(res.x)
        if val > best:
            best, at = val, arg
    return best, at


def _mass(model: ContinuousFamily, x: float, lo: float, hi: float) -> float:
    from scipy import integrate
    if model.cdf is not None:
        return max(0.0, float(model.cdf(hi, x)) - float(model.cdf(lo, x)))
    val, _ = integrate.quad(lambda t: math.exp(float(model.logpdf(np.array([t]), x)[0])), lo, hi,
                            limit=200, epsabs=0, epsrel=1e-12)
    return float(val)


def _superlevel_intervals(model: ContinuousFamily, a: float, b: float, eps: float
                          ) -> list[tuple[float, float]]:
    """Intervals where ln p_a − ln p_b > eps (sign changes located by Brent's method)."""
    from scipy import optimize
    out: list[tuple[float, float]] = []

    def g(t: float) -> float:
        return float(_log_ratio(model, np.array([t]), a, b)[0]) - eps

    for lo, hi in _pieces(model, a, b):
        y = _probe_points(lo, hi, model.scale, n=257)
        if y.size == 0:
            continue
        above = (_log_ratio(model, y, a, b) - eps) > 0
        start = lo if above[0] else None
        for i in range(1, y.size):
            if above[i] == above[i - 1]:
                continue
            u, v = float(y[i - 1]), float(y[i])
            gu, gv = g(u), g(v)
            if math.isfinite(gu) and math.isfinite(gv) and gu * gv < 0:
                root = optimize.brentq(g, u, v, xtol=1e-300, rtol=1e-15, maxiter=500)
            else:  # a jump (support edge): cut at the first point past it
                root = v
            if above[i]:
                start = root
            else:
                out.append((lo if start is None else start, root))
                start = None
        if start is not None:
            out.append((start, hi))
    return out


def _continuous_pair_delta(model: ContinuousFamily, a: float, b: float, eps: float) -> float:
    d = 0.0
    for lo, hi in _superlevel_intervals(model, a, b, eps):
        d += _mass(model, a, lo, hi) - math.exp(eps) * _mass(model, b, lo, hi)
    if model.atoms is not None:
        pa, pb = model.atoms(a), model.atoms(b)
        for y in set(pa) | set(pb):
            d += max(0.0, pa.get(y, 0.0) - math.exp(eps) * pb.get(y, 0.0))
    return max(0.0, d)


def _verify_continuous(model: ContinuousFamily, epsilons: Sequence[float]) -> VerificationReport:
    import mpmath
    worst, worst_pair, worst_y = -1.0, None, math.nan
    deltas = [0.0] * len(epsilons)
    for a, b in model.pairs:
        loss, y = _continuous_pair_loss(model, a, b)
        if model.atoms is not None:
            pa, pb = model.atoms(a), model.atoms(b)
            for t in set(pa) | set(pb):
                u, v = pa.get(t, 0.0), pb.get(t, 0.0)
                if (u > 0) != (v > 0):
                    loss, y = math.inf, t
                elif u > 0:
                    loss = max(loss, abs(math.log(u) - math.log(v)))
        if loss > worst:
            worst, worst_pair, worst_y = loss, (a, b), y
        for i, e in enumerate(epsilons):
            deltas[i] = max(deltas[i], _continuous_pair_delta(model, a, b, e),
                            _continuous_pair_delta(model, b, a, e))
    if model.logpdf_mp is not None and worst_pair is not None and math.isfinite(worst_y):
        with mpmath.workdps(40):
            a, b = worst_pair
            y_mp = mpmath.mpf(worst_y)
            val = abs(model.logpdf_mp(y_mp, a) - model.logpdf_mp(y_mp, b))
            worst = max(worst, float(val))
    return VerificationReport(
        epsilon=worst,
        delta_curve=tuple(zip(epsilons, deltas, strict=True)),
        worst={"pair": worst_pair, "output": worst_y, "pairs_checked": len(model.pairs)},
        method="continuous: piecewise dense evaluation + refinement; exact super-level sets",
    )


# ---------------------------------------------------------------- entry point
# ---------------------------------------------------------------- data-set laws
def verify_neighbours(
    law: Callable[[Any], tuple[NDArray[Any], NDArray[np.float64]]],
    pairs: Sequence[tuple[Any, Any]],
    *,
    epsilons: Sequence[float] | None = None,
    claimed_epsilon: float | None = None,
    claimed_delta: float | None = None,
) -> VerificationReport:
    """Verify a mechanism whose output law depends on the WHOLE data set, not only on a
    shifted true value (a DP quantile, DP partition selection).

    ``law(dataset) -> (outputs, logp)``: the exact (finite) output pmf on a data set of
    a small discretised model; ``pairs``: the neighbouring data sets to compare
    (typically every add/remove-one-person pair of an enumerated family).  For each pair
    the loss ``max |ln p − ln q|`` on the union of supports (infinite where an output is
    possible on one side only) and ``δ(ε')`` in both directions are exact sums; the
    report keeps the worst pair.  The claim, if given, is compared afterwards.  Data
    sets must be hashable (tuples) -- their laws are cached."""
    pairs = list(pairs)
    if not pairs:
        raise ParameterError("no neighbouring pairs to verify")
    eps_list = list(DEFAULT_EPSILONS if epsilons is None else epsilons)
    if claimed_epsilon is not None and claimed_epsilon not in eps_list:
        eps_list.append(float(claimed_epsilon))
    worst_loss, worst_pair, worst_delta = _worst_pair(law, pairs, eps_list, order=repr)
    return VerificationReport(
        epsilon=worst_loss,
        delta_curve=tuple(zip(eps_list, worst_delta, strict=True)),
        claimed_epsilon=claimed_epsilon,
        claimed_delta=claimed_delta,
        worst={"pair": repr(worst_pair), "pairs_checked": len(pairs)},
        method="neighbouring data sets: exact sums over the union of supports",
    )


def verify(
    mechanism_or_model: Any, *, epsilons: Sequence[float] | None = None
) -> VerificationReport:
    """Verify a mechanism (anything with ``privacy_model()``) or a model directly.

    The claim (``mechanism.guarantee``) is read only *after* the computation, to fill
    in ``claimed_*`` and ``passed``.

    The verifier computes the worst-case loss and the hockey-stick curve ``δ(ε')`` of the
    mechanism's exact output law: exact sliding-window extremes for lattice mechanisms,
    exact sums over the union of supports for discrete families, and a piecewise analysis
    with root finding for continuous families (see docs/verifier.md).

    Parameters
    ----------
    mechanism_or_model : Mechanism or privacy model
        A mechanism (anything with ``privacy_model()``) or a model from :mod:`dpnoise.verify`.
    epsilons : sequence of float or None, default None
        The ε' at which δ(ε') is computed (None: 0, 0.1, 0.25, 0.5, 1, 2 and 4; the claimed
        ε is always added).

    Returns
    -------
    VerificationReport
        The verified loss, the δ curve and, for a mechanism, its claim and ``passed``.

    Raises
    ------
    ParameterError
        If the object has no privacy model the verifier knows.
    """
    model = mechanism_or_model
    mechanism = None
    if hasattr(mechanism_or_model, "privacy_model"):
        mechanism = mechanism_or_model
        model = mechanism.privacy_model()
    eps_list = list(DEFAULT_EPSILONS if epsilons is None else epsilons)
    claimed = getattr(mechanism, "guarantee", None) if mechanism is not None else None
    if claimed is not None and claimed.epsilon not in eps_list and math.isfinite(claimed.epsilon):
        eps_list.append(float(claimed.epsilon))
    if isinstance(model, AdditiveLattice):
        report = _verify_lattice(model, eps_list)
    elif isinstance(model, AdditiveGrid):
        report = _verify_grid(model, eps_list)
    elif isinstance(model, FiniteLattice):
        report = _verify_finite_lattice(model, eps_list)
    elif isinstance(model, DiscreteFamily):
        report = _verify_discrete(model, eps_list)
    elif isinstance(model, ContinuousFamily):
        report = _verify_continuous(model, eps_list)
    elif isinstance(model, LatticeFamily):
        report = _verify_lattice_family(model, eps_list)
    else:
        raise ParameterError(f"cannot verify {type(model).__name__}: no privacy model")
    if claimed is None:
        return report
    return VerificationReport(
        epsilon=report.epsilon,
        delta_curve=report.delta_curve,
        claimed_epsilon=claimed.epsilon,
        claimed_delta=claimed.delta,
        worst=report.worst,
        method=report.method,
    )
