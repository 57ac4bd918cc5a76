"""Charts of a statistic's *error* law, drawn at a public point only.

A range-adherent law (truncated and renormalised, or clamped at the range's ends) changes
shape with the value it is centred on, so a chart of the law around the true value would
reveal it.  The report therefore draws every law at a PUBLIC point, never at the true
value: in a release's section, at the **released value** itself (the law the release
would have if the true value were the released one -- post-processing of the output);
for a bare law object, the unconstrained noise law ``noise(None)`` (centred at 0).

A count or a sum is one mechanism's output: its chart is P(error in bin) = cdf(b) −
cdf(a) for bins (a, b] of the error Y − x0, from the law's exact cdf (the law that is
sampled, not a simulation).  A mean, a variance or a standard deviation is combined from
several noisy components: its chart is simulated (a fixed seed, so the page is
reproducible) by drawing each component from its exact law at its released value and
combining them as the release did -- the statistic's own error, not its parts'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .svg import bar_chart

BINS = 41
TAIL = 5e-4  # the chart spans the [TAIL, 1 - TAIL] quantiles of the law
DRAWS = 20_000  # simulated draws for a statistic combined from several components
SEED = 20_260_101  # fixed: the chart is a function of public values only


@dataclass(frozen=True)
class LawView:
    """A binned error law: bar edges and probabilities, and the public point used."""

    edges: list[float]
    probabilities: list[float]
    public_point: float | None  # None: the unconstrained noise law (centred at 0)

    def svg(self, title: str, where: str | None = None, x_label: str | None = None) -> str:
        if where is None:
            where = ("at the public point x0 = " + f"{self.public_point:.6g}"
                     if self.public_point is not None else "of the noise (centred at 0)")
        if x_label is None:
            x_label = "error  (output − x0)" if self.public_point is not None else "noise"
        return bar_chart(self.edges, self.probabilities, marker=0.0,
                         title=f"{title}: error law {where}", x_label=x_label)


def public_point(lower: float, upper: float) -> float | None:
    """The middle of a finite range (None for an unbounded one)."""
    if math.isfinite(lower) and math.isfinite(upper):
        return (lower + upper) / 2
    return None


def bin_law(law: Any, public: float | None = None) -> LawView | None:
    """Bin ``law`` (scipy-like: ``cdf`` and ``ppf``) as the error ``Y − x0``.

    ``public`` is the public point x0 the law is centred on (None: ``law`` is the
    noise law itself, centred at 0).  Returns None for laws without a usable
    cdf/ppf (nothing is drawn then).
    """
    centre = 0.0 if public is None else float(public)
    try:
        lo = float(np.asarray(law.ppf(TAIL)).reshape(-1)[0])
        hi = float(np.asarray(law.ppf(1 - TAIL)).reshape(-1)[0])
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        return None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    if hi <= lo:  # (nearly) a point mass
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    if float(lo).is_integer() and float(hi).is_integer() and float(centre).is_integer():
        # integer support: bars of an odd number of whole integers, one centred on x0 (a
        # bar never splits the integers unevenly: no comb artefacts, no lopsided peak)
        step = max(1, math.ceil((span + 1) / BINS)) | 1
        below = math.ceil((centre - lo) / step)
        start = centre - step / 2 - below * step
        edges = np.arange(start, hi + step, step)
    else:
        edges = np.linspace(lo - span * 0.02, hi + span * 0.02, BINS + 1)
    cdf = np.asarray(law.cdf(edges), dtype=np.float64)
    probs = np.clip(np.diff(cdf), 0.0, 1.0)
    return LawView([float(e - centre) for e in edges], [float(p) for p in probs], public)


def bin_samples(samples: np.ndarray, centre: float) -> LawView | None:
    """Bin simulated draws of a statistic as the error ``draw − centre``."""
    err = np.asarray(samples, dtype=np.float64) - float(centre)
    err = err[np.isfinite(err)]
    if err.size == 0:
        return None
    lo, hi = (float(v) for v in np.quantile(err, [TAIL, 1 - TAIL]))
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    edges = np.linspace(lo - span * 0.02, hi + span * 0.02, BINS + 1)
    counts, _ = np.histogram(err, bins=edges)
    return LawView([float(e) for e in edges], [float(c) / err.size for c in counts],
                   float(centre))


def mechanism_for(plan: Mapping[str, Any]) -> Any | None:
    """The mechanism of one calibrated plan, rebuilt from its public recipe (or None)."""
    from ..session.adapter import MECHANISMS, Spec

    info = MECHANISMS.get(str(plan.get("mechanism")))
    if info is None or "cell_epsilon" not in plan or "sensitivity" not in plan:
        return None
    lo, hi = (float(v) for v in plan.get("range", (-math.inf, math.inf)))
    spec = Spec(float(plan["cell_epsilon"]), float(plan.get("cell_delta", 0.0)),
                float(plan["sensitivity"]), lo, hi, plan.get("kind") == "count")
    try:
        return info.build(spec)
    except Exception:  # a mechanism that cannot be rebuilt here is simply not drawn
        return None


def _law_at(plan: Mapping[str, Any], value: float) -> Any | None:
    mech = mechanism_for(plan)
    if mech is None:
        return None
    lo, hi = (float(v) for v in plan.get("range", (-math.inf, math.inf)))
    try:
        return mech.noise(float(np.clip(value, lo, hi)))
    except Exception:
        return None


def released_law(stat: str, plans: Mapping[str, Mapping[str, Any]], answer: float,
                 components: Mapping[str, Any], col_range: Any) -> LawView | None:
    """The error law of a scalar release's statistic, drawn at its released value(s).

    A count or a sum: the exact law of its one mechanism at the released value.  A mean,
    variance or standard deviation: simulated from its components' exact laws, each at
    its released value, combined as the release combined them.  None for a quantile or
    when the recipe or the released components are not recorded."""
    roles = [r for r in plans if r != "selection"]
    if stat in ("count", "sum") and roles == [stat]:
        law = _law_at(plans[stat], answer)
        return None if law is None else bin_law(law, float(answer))
    if stat not in ("mean", "variance", "stddev") or col_range is None or not components:
        return None
    rng = np.random.default_rng(SEED)
    draws: dict[str, np.ndarray] = {}
    for role in roles:
        if role not in components:
            return None
        law = _law_at(plans[role], float(np.asarray(components[role]).reshape(-1)[0]))
        if law is None:
            return None
        try:
            # levels in the open interval (0, 1): ppf(0) and ppf(1) are the support's ends,
            # infinite for an unbounded law
            levels = (rng.integers(0, 1 << 53, DRAWS) + 0.5) / 2.0**53
            draws[role] = np.asarray(law.ppf(levels), dtype=np.float64)
        except Exception:
            return None
    lo, hi = (float(v) for v in col_range)
    if stat == "mean":
        from ..session.aggregation import combine

        stats = combine("mean", draws, lo, hi)
    else:
        from ..session.answers import combine_variance

        stats = combine_variance(draws, lo, hi)
        if stat == "stddev":
            stats = np.sqrt(stats)
    return bin_samples(stats, float(answer))
