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

The models, the report and the shared hockey-stick primitives live in
:mod:`dpnoise.verify_models` (re-exported here), the continuous analysis in
:mod:`dpnoise.verify_continuous`.  The verifier imports only the ground floor (never a
mechanism, law or sampler): it is the independent check every mechanism is tested against.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import ParameterError
from .float_sum import fsum_array
from .params import as_real_scalar
from .verify_continuous import verify_continuous
from .verify_models import (
    DEFAULT_EPSILONS,
    AdditiveGrid,
    AdditiveLattice,
    ContinuousFamily,
    DiscreteFamily,
    FiniteLattice,
    LatticeFamily,
    VerificationReport,
    discrete_pair,
    hockey_curve_with_error,
    log_hockey,
    pair_loss,
    pairs_from_inputs,
)

__all__ = ["DEFAULT_EPSILONS", "AdditiveGrid", "AdditiveLattice", "ContinuousFamily",
           "DiscreteFamily", "FiniteLattice", "LatticeFamily", "VerificationReport",
           "discrete_pair", "pair_loss", "verify", "verify_neighbours"]


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
        d = max(log_hockey(p, q, e), log_hockey(q, p, e))
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
            deltas[i] = max(deltas[i], log_hockey(a, b, e), log_hockey(b, a, e))
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
    total = fsum_array(np.exp(lp[finite]))
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
            d = max(log_hockey(p, q, e), log_hockey(q, p, e))
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
def _worst_pair(
    law: Callable[[Any], tuple[Any, Any]],
    pairs: Sequence[tuple[Any, Any]],
    epsilons: Sequence[float],
    *,
    order: Callable[[Any], Any] | None = None,
) -> tuple[float, tuple[Any, Any] | None, list[float], list[float]]:
    """The worst ordered pair of finite laws: over every pair, the exact loss and δ(ε)
    on the union of the two supports (:func:`discrete_pair`); returns the largest loss,
    the pair that attains it, the pointwise largest δ curve and the pointwise largest
    proven lower bound δ − B (:func:`~dpnoise.verify_models.hockey_with_error`, both
    directions).  ``law(x) -> (outputs, logp)`` is evaluated once per input; ``order``
    sorts the outputs (default: their own order; ``repr`` when they are of mixed types)."""
    cache: dict[Any, dict[Any, float]] = {}

    def logpmf(x: Any) -> dict[Any, float]:
        if x not in cache:
            ys, lps = law(x)
            cache[x] = dict(zip(np.asarray(ys).tolist(), np.asarray(lps, dtype=float).tolist(),
                                strict=True))
        return cache[x]

    worst_loss, worst_pair = -1.0, None
    worst_delta = [0.0] * len(epsilons)
    worst_lower = [0.0] * len(epsilons)
    for a, b in pairs:
        la, lb = logpmf(a), logpmf(b)
        keys = sorted(set(la) | set(lb), key=order)
        lp = np.array([la.get(k, -math.inf) for k in keys])
        lq = np.array([lb.get(k, -math.inf) for k in keys])
        loss = pair_loss(lp, lq)
        if loss > worst_loss:
            worst_loss, worst_pair = loss, (a, b)
        for ds, errs in (hockey_curve_with_error(lp, lq, epsilons),
                         hockey_curve_with_error(lq, lp, epsilons)):
            for i, (d, err) in enumerate(zip(ds, errs, strict=True)):
                worst_delta[i] = max(worst_delta[i], d)
                worst_lower[i] = max(worst_lower[i], d - err)
    return worst_loss, worst_pair, worst_delta, worst_lower


def _verify_discrete(model: DiscreteFamily, epsilons: Sequence[float]) -> VerificationReport:
    pairs = list(model.pairs) if model.pairs is not None else pairs_from_inputs(
        model.inputs, model.sensitivity
    )
    if not pairs:
        raise ParameterError("no neighbouring pairs to verify")
    worst_loss, worst_pair, worst_delta, lower = _worst_pair(model.law, pairs, epsilons)
    return VerificationReport(
        epsilon=worst_loss,
        delta_curve=tuple(zip(epsilons, worst_delta, strict=True)),
        delta_lower=tuple(zip(epsilons, lower, strict=True)),
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
        outside = max(0.0, 1.0 - fsum_array(np.exp(lp[np.isfinite(lp)])),
                      1.0 - fsum_array(np.exp(lq[np.isfinite(lq)])))
        for i, e in enumerate(epsilons):
            d = max(log_hockey(lp, lq, e), log_hockey(lq, lp, e))
            deltas[i] = max(deltas[i], min(1.0, d + (outside if e < loss else 0.0)))
    return VerificationReport(
        epsilon=worst,
        delta_curve=tuple(zip(epsilons, deltas, strict=True)),
        worst={"pair": worst_pair, "cell": worst_cell, "pairs_checked": len(model.pairs)},
        method="lattice family: exact pmfs per input over a window, periodic tails checked",
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
    eps_list = _epsilon_list(epsilons)
    if claimed_epsilon is not None and claimed_epsilon not in eps_list:
        eps_list.append(float(claimed_epsilon))
    worst_loss, worst_pair, worst_delta, lower = _worst_pair(law, pairs, eps_list, order=repr)
    return VerificationReport(
        epsilon=worst_loss,
        delta_curve=tuple(zip(eps_list, worst_delta, strict=True)),
        delta_lower=tuple(zip(eps_list, lower, strict=True)),
        claimed_epsilon=claimed_epsilon,
        claimed_delta=claimed_delta,
        worst={"pair": repr(worst_pair), "pairs_checked": len(pairs)},
        method="neighbouring data sets: exact sums over the union of supports",
    )


def _epsilon_list(epsilons: Any) -> list[float]:
    """The ε' of a δ curve as floats: None gives the defaults; else a sequence of real
    numbers, NaN refused (a str, a bool, a lone number -> ParameterError)."""
    if epsilons is None:
        return list(DEFAULT_EPSILONS)
    try:
        items = None if isinstance(epsilons, (str, bytes)) else list(epsilons)
    except TypeError:  # a lone number, a 0-d array
        items = None
    if items is None:
        raise ParameterError(f"epsilons must be a sequence of real numbers, got {epsilons!r}")
    out = [as_real_scalar("epsilons entry", e) for e in items]
    if any(math.isnan(e) for e in out):
        raise ParameterError("epsilons must not contain NaN")
    return out


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
        If the object has no privacy model the verifier knows (a class is refused: construct
        the mechanism first), or ``epsilons`` is not a sequence of real numbers without NaN.
    """
    model = mechanism_or_model
    mechanism = None
    if isinstance(mechanism_or_model, type):
        raise ParameterError(f"verify needs a mechanism or a model, got the class "
                             f"{mechanism_or_model.__name__} (construct one first)")
    if hasattr(mechanism_or_model, "privacy_model"):
        mechanism = mechanism_or_model
        model = mechanism.privacy_model()
    eps_list = _epsilon_list(epsilons)
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
        report = verify_continuous(model, eps_list)
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
        delta_lower=report.delta_lower,
    )
