"""Charts of a mechanism's *error* law, drawn at a public point only.

A range-adherent law (truncated and renormalised, or clamped at the range's ends)
changes shape with the value it is centred on, so a chart of the law around the true
value would reveal it.  The report therefore draws the law at a PUBLIC point, never at
the true value: the middle of the declared range when the range is finite, else the
unconstrained noise law ``noise(None)`` (centred at 0).  The chart shows
P(error in bin) = cdf(b) − cdf(a) for bins (a, b] of the error Y − x0, computed from
the law's exact cdf (so it is the law that is sampled, not a simulation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .svg import bar_chart

BINS = 41
TAIL = 5e-4  # the chart spans the [TAIL, 1 - TAIL] quantiles of the law


@dataclass(frozen=True)
class LawView:
    """A binned error law: bar edges and probabilities, and the public point used."""

    edges: list[float]
    probabilities: list[float]
    public_point: float | None  # None: the unconstrained noise law (centred at 0)

    def svg(self, title: str) -> str:
        where = ("at the public point x0 = " + f"{self.public_point:.6g}"
                 if self.public_point is not None else "of the noise (centred at 0)")
        return bar_chart(self.edges, self.probabilities, marker=0.0,
                         title=f"{title}: error law {where}",
                         x_label="error  (output − x0)" if self.public_point is not None
                         else "noise")


def public_point(lower: float, upper: float) -> float | None:
    """The point a range-adherent law is drawn at: the middle of a finite range."""
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
