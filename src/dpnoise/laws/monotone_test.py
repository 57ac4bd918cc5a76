"""Answer ``f(x) > goal`` for a decreasing f from evaluations already made (fewer evaluations,
the same answers).

A calibration that bisects on a decreasing privacy curve (δ as a function of the noise
scale σ) asks ``f(mid) > goal`` some twenty times, and each question costs an evaluation of
f over a whole noise table.  :class:`DecreasingTest` remembers every evaluation: the largest
x known to have f(x) > goal (``above_at``) and the smallest known to have f(x) <= goal
(``below_at``).  Any x below ``above_at`` has a larger f, so the answer is "above" without
evaluating; any x beyond ``below_at`` is "not above".  :meth:`DecreasingTest.locate` first
narrows that bracket around the root with a few secant steps on ln f, so the bisection that
follows asks the same questions and gets the same answers, but evaluates f only for the
few midpoints that fall inside the narrow bracket.

Floating point: the computed f is the true decreasing function up to a relative error far
below 1e-12 (each f here is a sum of correctly rounded terms, error <= log2(n)·2^-53 per
term).  An answer is inferred only when x is at least ``guard`` (relative) beyond a known
point and the measured slope |d ln f / d ln x| between the bracket ends is at least
``min_slope``, so the true values differ by more than ``guard·min_slope`` = 1e-11 relative
-- far more than the evaluation error -- and the inferred answer is the one an evaluation
would give.  Otherwise x is evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Callable


class DecreasingTest:
    """``above(x) == (f(x) > goal)`` for a decreasing f, evaluating f only when needed.

    Parameters
    ----------
    f : callable
        The decreasing function (x > 0).
    goal : float
        The threshold (> 0).
    guard : float, default 1e-9
        The least relative distance from a known point at which an answer is inferred.
    min_slope : float, default 1e-2
        The least measured |d ln f / d ln x| at which answers are inferred at all.
    """

    def __init__(self, f: Callable[[float], float], goal: float, *, guard: float = 1e-9,
                 min_slope: float = 1e-2) -> None:
        self.f, self.goal = f, goal
        self.guard, self.min_slope = guard, min_slope
        self.values: dict[float, float] = {}
        self.above_at = -math.inf  # the largest x with f(x) > goal evaluated
        self.below_at = math.inf  # the smallest x with f(x) <= goal evaluated
        self.evaluations = 0

    def value(self, x: float) -> float:
        """f(x), evaluated once and remembered."""
        if x not in self.values:
            v = self.f(x)
            self.values[x] = v
            self.evaluations += 1
            if v > self.goal:
                self.above_at = max(self.above_at, x)
            else:
                self.below_at = min(self.below_at, x)
        return self.values[x]

    def _inferring(self) -> bool:
        """Whether the bracket's measured slope allows inference (see the module docstring)."""
        a, b = self.above_at, self.below_at
        if not (0 < a < b < math.inf):
            return False
        fa, fb = self.values[a], self.values[b]
        if not (fa > fb > 0):
            return False
        return math.log(fa / fb) >= self.min_slope * math.log(b / a)

    def above(self, x: float) -> bool:
        """``f(x) > goal``, from the remembered evaluations when they decide it."""
        if x in self.values:
            return self.values[x] > self.goal
        if self._inferring():
            if x <= self.above_at * (1 - self.guard):
                return True
            if x >= self.below_at * (1 + self.guard):
                return False
        return self.value(x) > self.goal

    def locate(self, x0: float, *, spread: float = 1e-8, tol: float = 2e-9,
               max_steps: int = 8) -> None:
        """Narrow the known bracket around the root of f = goal: evaluate x0·(1 ∓ spread)
        (done if they bracket the root within 4·spread), then secant steps on
        ln f − ln goal against ln x until a step is below ``tol``/8 (at most
        ``max_steps``), then one evaluation just below and one just above the estimated
        root (``tol``/4 away).  Only remembers evaluations: the answers of :meth:`above`
        do not depend on it."""
        lg = math.log(self.goal)

        def g(x: float) -> float:
            v = self.value(x)
            return (math.log(v) if v > 0 else -745.0) - lg

        pts = [(math.log(x), g(x)) for x in (x0 * (1 - spread), x0 * (1 + spread))]
        if 0 < self.above_at < self.below_at <= self.above_at * (1 + 4 * spread):
            return
        root = None
        for _ in range(max_steps):
            (xa, ga), (xb, gb) = pts[-2], pts[-1]
            if gb == ga:
                break
            x = xb - gb * (xb - xa) / (gb - ga)
            if not (math.isfinite(x) and abs(x - xb) < 0.5):
                break
            root = x
            if abs(x - xb) < tol / 8:
                break
            pts.append((x, g(math.exp(x))))
        if root is None:
            return
        r = math.exp(root)
        lo, hi = r * (1 - tol / 4), r * (1 + tol / 4)
        if self.above_at < lo:
            self.value(lo)
        if self.below_at > hi:
            self.value(hi)
