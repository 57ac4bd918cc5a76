"""The ONE place that maps a statistic with its valid range to a dpnoise mechanism.

The session reduces every query to *primitives*: a vector of true values (one per public
cell) of one kind -- an integer ``count`` or a real ``sum`` -- together with

* ``unit``: the most one individual's *single row* can move one cell (1 for counts,
  ``max(|lower|, |upper|)`` for a sum of values clamped into ``[lower, upper]``),
* ``rows``: the most rows one individual owns (the contribution bound k),
* ``cells``: whether the vector has several cells (GROUP BY / histogram),
* the valid range ``[lower, upper]`` of every cell's answer (possibly a half-line).

Calibration (add/remove-one-individual neighbours, all k rows at once):

* scalar: the answer moves by at most ``k·unit``, so the mechanism gets
  ``sensitivity = k·unit`` and the full epsilon;
* cells: one individual's k rows move cells by ``d_i·unit`` with ``Σ d_i <= k`` (with
  two-dimensional bounding -- at most G groups, at most R rows in each -- ``k = G·R`` is
  the L1 bound, ``d_i <= R`` and at most G cells change).  Each cell
  gets a mechanism with ``sensitivity = unit`` and ``epsilon / k``; a shift of ``d·unit`` is
  d shifts of ``unit`` and the privacy loss obeys the triangle inequality, so the total
  loss is ``<= Σ d_i·epsilon/k <= epsilon``.  (For k = 1 this is plain parallel
  composition over disjoint cells.)  For an (epsilon, delta) mechanism the triangle
  argument does not carry delta, so each cell gets ``sensitivity = R·unit`` and
  ``(epsilon/G, delta/G)``: at most G cells change, each by at most R units, basic
  composition over them (``R = G = k`` under the single bound k).

The true value is clamped into the declared range first (a 1-Lipschitz map of the data, so
the sensitivity is unchanged), and the mechanism's output is post-processed into the range
(rounded to an integer for counts).  Post-processing never costs privacy.

Mechanisms available by name (``mechanism=``): see :data:`MECHANISMS`.  Defaults, chosen
from public facts only (:func:`default_mechanism`): counts use ``geometric`` (exact integer
noise clamped into ``[0, N]``); sums and means use ``range-laplace`` (truncated and
normalised Laplace on the derived range, Croft et al. 2022) when that range is narrow against the
noise (width <= 2·Δ/ε, where it has the smaller error), at any number of cells (one sampler
serves every true value, vectorised); otherwise ``clamped-laplace``, which is also
range-adherent (clamping is post-processing) and has about half the error on wide ranges.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..grid import grid_sensitivity, power_of_two_at_most
from ..mechanisms.base import Guarantee, Mechanism
from ..mechanisms.registry import Request, build
from ..params import LN2, check_delta, check_epsilon

Kind = Literal["count", "sum"]
#: the cells of a query grouped by a column whose keys are not public: no public fact bounds
#: them (the charge then counts every cell a person's rows can reach)
UNBOUNDED_CELLS = 1 << 62


@dataclass(frozen=True)
class Target:
    """A vector of true answers of one kind, with its per-row unit and valid range."""

    kind: Kind
    unit: float
    rows: int
    cells: bool
    lower: float
    upper: float
    per_cell: int | None = None  # rows one person adds to one cell (L-inf); default rows
    changed: int | None = None  # cells one person can touch (L0); default rows

    @property
    def integer(self) -> bool:
        return self.kind == "count"

    @property
    def cell_rows(self) -> int:
        return self.rows if self.per_cell is None else self.per_cell

    @property
    def cells_changed(self) -> int:
        return self.rows if self.changed is None else self.changed

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.lower) and math.isfinite(self.upper)


@dataclass(frozen=True)
class Spec:
    """What a mechanism constructor receives: per-cell epsilon, delta and sensitivity."""

    epsilon: float
    delta: float
    sensitivity: float
    lower: float
    upper: float
    integer: bool
    #: the accountant composes Rényi curves ("zcdp"): a family with a finite-support table
    #: sampler and an exact sampler of its infinite law uses the latter (the discrete
    #: Gaussian's CKS sampler), since a finite-support law has no Rényi curve
    exact_sampler: bool = False


Builder = Callable[[Spec], Mechanism]


def session_grid(sensitivity: float, epsilon: float) -> float:
    """Power-of-two grid step for the lattice mechanisms whose build time grows with the
    block length M ≈ (Δ/L)·ln2/ε (staircase, range-laplace; e.g. RangeLaplace on a sum's
    range [0, 1.25e9] builds in 3 s at its default grid, 0.5 s at this one).

    L = 2^floor(log2(min(Δ/256, Δ·ln2/(700·ε)))): M of about 700-1400 for ε >= 0.0027, and
    Δ/L >= 256 so that rounding Δ up to whole cells (ceil(Δ/L)) costs at most 0.4% of
    scale.  Below ε ≈ 0.0027 the grid is coarsened so that M <= 2^16.  The guarantee is
    unchanged (the calibration is exact for any grid); only utility moves, by <= 0.4%.
    The lattice Laplace keeps its own finer default grid (it builds in <= 0.1 s).
    """
    grid = power_of_two_at_most(min(sensitivity / 256, sensitivity * LN2 / (700 * epsilon)))
    # very small epsilon: coarsen until M <= 2^16 (or a single cell per sensitivity)
    while grid_sensitivity(sensitivity, grid) > 1 and \
            grid_sensitivity(sensitivity, grid) * LN2 / epsilon > 2**16:
        grid *= 2
    return grid


@lru_cache(maxsize=512)
def _built(name: str, fields: tuple[tuple[str, Any], ...],
           options: tuple[tuple[str, Any], ...]) -> Mechanism:
    """The registry's mechanism ``name`` for these request fields, built once per process
    for the same public parameters (mechanisms are immutable)."""
    return build(name, Request(**dict(fields), options=dict(options)))


def _cached(name: str, *, options: dict[str, Any] | None = None, **fields: Any) -> Mechanism:
    return _built(name, tuple(sorted(fields.items())), tuple(sorted((options or {}).items())))


def _integer_sensitivity(s: Spec, name: str) -> int:
    if not float(s.sensitivity).is_integer():
        raise ParameterError(f"mechanism {name!r} needs an integer sensitivity, got "
                             f"{s.sensitivity!r}")
    return int(s.sensitivity)


def _laplace(s: Spec) -> Mechanism:
    # default grid: builds in <= 0.1 s
    return _cached("laplace", epsilon=s.epsilon, sensitivity=s.sensitivity)


def _clamped_laplace(s: Spec) -> Mechanism:
    if math.isfinite(s.lower) and math.isfinite(s.upper):
        return _cached("clamped-laplace", epsilon=s.epsilon, sensitivity=s.sensitivity,
                       lower=s.lower, upper=s.upper)
    # a half-line: the plan clamps the Laplace output onto it (post-processing)
    return _laplace(s)


def _range_laplace(s: Spec) -> Mechanism:
    if math.isinf(s.lower) and math.isinf(s.upper):
        raise ParameterError("range-laplace needs a range bounded on at least one side")
    grid = session_grid(s.sensitivity, s.epsilon)  # its default (~Δ/1024) is 10x slower
    if math.isfinite(s.upper - s.lower):
        grid = min(grid, power_of_two_at_most((s.upper - s.lower) / 8))
    return _cached("range-laplace", epsilon=s.epsilon, sensitivity=s.sensitivity,
                   lower=s.lower, upper=s.upper, grid=grid)


def _geometric(s: Spec) -> Mechanism:
    return _cached("geometric", epsilon=s.epsilon,
                   sensitivity=_integer_sensitivity(s, "geometric"), lower=s.lower,
                   upper=s.upper)


def _discrete_gaussian(s: Spec) -> Mechanism:
    return _cached("discrete-gaussian", epsilon=s.epsilon, delta=s.delta,
                   sensitivity=_integer_sensitivity(s, "discrete-gaussian"), lower=s.lower,
                   upper=s.upper, options={"sampler": "cks"} if s.exact_sampler else None)


def _count_noise(s: Spec) -> Mechanism:
    if s.sensitivity != 1:
        raise ParameterError(
            "count-noise is defined for sensitivity 1 only (one row per individual, "
            f"max_contributions = 1); this statistic has sensitivity {s.sensitivity:g}"
        )
    # delta alone: the smallest support
    return _cached("count-noise", epsilon=s.epsilon, delta=s.delta, lower=s.lower,
                   upper=s.upper)


def _staircase(s: Spec) -> Mechanism:
    return _cached("staircase", epsilon=s.epsilon, sensitivity=s.sensitivity,
                   grid=session_grid(s.sensitivity, s.epsilon))


def _truncated_laplace(s: Spec) -> Mechanism:
    return _cached("truncated-laplace", epsilon=s.epsilon, delta=s.delta,
                   sensitivity=s.sensitivity)


@dataclass(frozen=True)
class MechanismInfo:
    name: str
    build: Builder
    summary: str
    integer_only: bool = False
    needs_delta: bool = False


MECHANISMS: dict[str, MechanismInfo] = {
    "laplace": MechanismInfo("laplace", _laplace,
                             "exact lattice Laplace, then post-processed into the range"),
    "clamped-laplace": MechanismInfo("clamped-laplace", _clamped_laplace,
                                     "Laplace then snapped into the range (baseline)"),
    "range-laplace": MechanismInfo(
        "range-laplace", _range_laplace,
        "truncated and normalised Laplace on the derived range (Croft et al. 2022)"),
    "geometric": MechanismInfo(
        "geometric", _geometric, "two-sided geometric integer noise, clamped into [0, N]",
        integer_only=True),
    "discrete-gaussian": MechanismInfo(
        "discrete-gaussian", _discrete_gaussian,
        "discrete Gaussian integer noise, exact delta (needs delta > 0)",
        integer_only=True, needs_delta=True),
    "count-noise": MechanismInfo(
        "count-noise", _count_noise,
        "finite-support count noise, exact delta (Sadeghi et al.; needs delta > 0)",
        integer_only=True, needs_delta=True),
    "staircase": MechanismInfo(
        "staircase", _staircase,
        "optimal data-independent noise (Soria-Comas & Domingo-Ferrer), then "
        "post-processed into the range"),
    "truncated-laplace": MechanismInfo(
        "truncated-laplace", _truncated_laplace,
        "(epsilon, delta) truncated Laplacian (Geng et al.), then post-processed into the "
        "range", needs_delta=True),
}
"""Every mechanism the custodian path can use, by name (all are always installed)."""

DEFAULT_COUNT = "geometric"
DEFAULT_SUM = "range-laplace"


def default_mechanism(target: Target, epsilon: float = 1.0) -> str:
    """The default for a statistic, chosen from PUBLIC facts only (kind, range, ε).

    Counts: ``geometric``.  Sums and means: ``range-laplace`` only where it has the smaller
    error, i.e. when the derived range is narrow against the noise, width <= 2·Δ/ε (per
    cell); otherwise ``clamped-laplace``.  Measured (200k draws, Δ = 1, ε = 1; mean
    absolute error RangeLaplace / clamped Laplace at the edge, a quarter in, the middle):
    width 1: .42/.32 .27/.37 .23/.39; width 2: .77/.43 .50/.59 .44/.63; width 5:
    1.36/.50 .95/.84 .94/.92; width >= 20: 1.61/.50 1.5/1.0 1.6/1.0.  The ε-DP truncated
    Laplace needs a scale up to ~1.6-1.95·Δ/ε on wide ranges (Croft et al. 2022), whereas clamping
    is free post-processing, so on the wide range of a sum over N rows clamped Laplace is
    better everywhere.
    """
    if target.kind == "count":
        return DEFAULT_COUNT
    if not target.bounded:
        return "clamped-laplace"
    cell_eps = epsilon / target.rows if target.cells else epsilon
    sens = target.unit if target.cells else target.rows * target.unit
    if target.upper - target.lower <= 2 * sens / cell_eps:
        return "range-laplace"
    return "clamped-laplace"


@dataclass(frozen=True)
class Plan:
    """A calibrated mechanism for one target, plus the pre/post-processing around it."""

    target: Target
    name: str
    mechanism: Mechanism
    epsilon: float  # charged for the whole vector
    delta: float
    spec: Spec

    @property
    def guarantee(self) -> Guarantee:
        return self.mechanism.guarantee

    def release(self, true_values: NDArray[Any], rng: Any) -> NDArray[Any]:
        """Clamp the truth into the range, release, post-process into the range."""
        t = self.target
        x = np.clip(np.asarray(true_values, dtype=np.float64), t.lower, t.upper)
        y = np.asarray(self.mechanism.release(x, rng=rng), dtype=np.float64).reshape(x.shape)
        if t.integer:
            y = np.floor(y + 0.5)
        y = np.clip(y, t.lower, t.upper)
        return y.astype(np.int64) if t.integer else y

    def parameters(self) -> dict[str, Any]:
        s = self.spec
        return {
            "mechanism": self.name,
            "repr": repr(self.mechanism),
            "kind": self.target.kind,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "cell_epsilon": s.epsilon,
            "cell_delta": s.delta,
            "sensitivity": s.sensitivity,
            "contributions": self.target.rows,
            "range": [s.lower, s.upper],
            # public recipe to rebuild this plan (error bars of a past release)
            "target": {"unit": self.target.unit, "rows": self.target.rows,
                       "cells": self.target.cells, "lower": self.target.lower,
                       "upper": self.target.upper, "per_cell": self.target.per_cell,
                       "changed": self.target.changed},
        }


def plan(target: Target, *, epsilon: float, delta: float = 0.0,
         mechanism: str | None = None, exact_sampler: bool = False) -> Plan:
    """Calibrate the mechanism for ``target`` at total (epsilon, delta); no randomness used.

    ``exact_sampler``: see :attr:`Spec.exact_sampler` (the session sets it under "zcdp").
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    name = mechanism or default_mechanism(target, epsilon)
    info = MECHANISMS.get(name)
    if info is None:
        raise ParameterError(
            f"mechanism must be one of {', '.join(sorted(MECHANISMS))}, got {name!r}"
        )
    if info.integer_only and not target.integer:
        raise ParameterError(f"mechanism {name!r} releases integers: use it for counts only")
    if info.needs_delta and delta <= 0:
        raise ParameterError(f"mechanism {name!r} needs delta > 0 (pass delta=...)")
    if not info.needs_delta and delta > 0:
        raise ParameterError(f"mechanism {name!r} is pure epsilon-DP: pass delta=0")
    k = target.rows
    if target.cells:
        # pure DP: unit steps + triangle inequality (one person adds at most L1 = k rows,
        # i.e. k unit steps in total); (epsilon, delta): at most L0 cells change, each by
        # at most L-inf units, and basic composition over those cells.
        if info.needs_delta:
            g = target.cells_changed
            spec = Spec(epsilon / g, delta / g, target.cell_rows * target.unit,
                        target.lower, target.upper, target.integer, exact_sampler)
        else:
            spec = Spec(epsilon / k, delta / k, target.unit, target.lower, target.upper,
                        target.integer, exact_sampler)
    else:
        spec = Spec(epsilon, delta, k * target.unit, target.lower, target.upper, target.integer,
                    exact_sampler)
    mech = info.build(spec)
    g = mech.guarantee
    if g.epsilon > spec.epsilon or g.delta > spec.delta:  # never charge less than guaranteed
        raise ParameterError(
            f"mechanism {name!r} guarantees {g} but {spec.epsilon:g}-DP per cell was requested"
        )
    return Plan(target, name, mech, epsilon, delta, spec)
