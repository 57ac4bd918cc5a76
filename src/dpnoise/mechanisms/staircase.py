"""Optimal data-independent noise (Soria-Comas & Domingo-Ferrer 2013): the staircase, exact.

The ideal law (:mod:`dpnoise.laws.staircase`, corrected Theorem 9 of Soria-Comas &
Domingo-Ferrer 2013)
has density M0 on the plateau |x| <= d and M0·e^(−ε(k+1)) on the k-th step of width Δ.
It is a mixture: step index k ~ Geometric (ratio e^(−ε)), then a position inside the
period [kΔ, (k+1)Δ) whose inner part [kΔ, kΔ + d) has weight 1 and outer part weight
e^(−ε), uniform within each part.

What :class:`Staircase` releases -- the same construction on a power-of-two grid, drawn
exactly from random words with integer arithmetic:

1.  Grid L = 2^j.  The true value maps exactly to c = floor(x/L + 1/2); neighbours move
    c by at most S = ceil(Δ/L) cells (``lattice.grid_sensitivity``).  One *step* of the
    staircase is S cells wide (continuous-equivalent width S·L >= Δ), the plateau
    half-width is G = round(γS) cells.  Default grid: Δ/4096 when the fast one-word
    table below fits there (ε >~ 0.05), else a coarser grid that is exact for Δ, else the
    grid among Δ/2^{12,10,...,2} whose exact sampled law is best
    (:func:`~dpnoise.laws.staircase.auto_grid`).
2.  Output c·L ± (K + 1/2)·L (half-offset grid, as :class:`Laplace`).  Magnitude cell
    K = Q·P + o with period P = M·S:  Q = floor(T/a), T = trailing zeros of a random
    word, is exactly Geometric with ratio 2^-a per period; o = R·S + j is the position
    in the period (R = step of the block, j = cell of the step), drawn from 64-bit alias
    tables with weights ∝ e^(−ε'·(R + [j >= G])), ε' = ε minus the measured 64-bit
    quantisation excess.  The block boundary decays by a·ln2 − (M−1)ε' <= ε' (a =
    floor(Mε'/ln2)): every step decays at the full rate except that one, which absorbs
    the dyadic rounding.  Either one joint table over the period (2 words/draw): the
    cells of each step's two parts are grouped into aligned blocks of up to 2^10 cells,
    the alias table (<= 2^13 blocks, so it stays in cache; thresholds multiples of 2^10)
    picks a block from the word's top 54 bits and its low 10 bits pick the cell in the
    block; M >= 10/ε so the boundary carries mass <= e^-10, checked to cost < 1e-5 in
    variance.  Or a block table for
    R and a cell table for j (3 words/draw; any ε).  Sign from bit 63.  No loops, no
    dependence of the work on the true value.
3.  Levels: cell K is at level 0 if K < G, else 1 + floor((K − G)/S); a shift of at most
    S cells changes the level by at most one (also across zero).  Calibration computes
    the EXACT loss of the quantised pmf from the integer tables (``exact_loss``: sliding
    windows over one period for the joint table, an O(M + S) formula for the product);
    it must be <= ε − 1e-12.  ``dpnoise.verify`` recomputes it independently as an
    :class:`~dpnoise.verify.AdditiveLattice` with period P.

The paper's optimality proof assumes symmetric noise.  ε is capped at 20: the outer weight e^-ε
must stay far above 2^-64 in the tables.

References:
  * J. Soria-Comas, J. Domingo-Ferrer, "Optimal data-independent noise for differential
    privacy", Information Sciences 250:200-214, 2013.
  * Q. Geng, P. Viswanath, "The Optimal Noise-Adding Mechanism in Differential Privacy",
    IEEE Transactions on Information Theory 62(2):925-951, 2016.

Errata of the paper, each explained: docs/papers.md#errata-staircase.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import Any

from ..errors import ParameterError
from ..exact.staircase import LatticeStaircase
from ..grid import check_grid
from ..laws.half_lattice import HalfLatticeLaw, half_lattice_logpmf
from ..laws.staircase import (
    CRITERIA,
    StaircaseDensity,
    auto_grid,
    check_level,
    law_for_grid,
    optimal_gamma,
)
from ..params import Interval, supported
from .base import Guarantee, HalfLatticeMechanism

MAX_EPSILON = 20.0  # e^-ε per cell must stay far above 2^-64 / S in the 64-bit tables
MIN_EPSILON = 2e-5  # a dyadic ratio 2^(-a/M) <= e^-ε needs M >= ln2/ε <= 2^16
# the grid choice and the moments square grid steps (g^2 must stay a normal float)
STAIRCASE_SENSITIVITY = Interval(1e-140, 1e140)


@lru_cache(maxsize=16)
def _calibrated(epsilon: float, sensitivity: float, gamma: float, criterion: str,
                grid: float | None) -> tuple[float, LatticeStaircase]:
    """(grid, sampled law) for public parameters, cached per process (a second mechanism
    with the same parameters is built without recalibrating; no true value is involved)."""
    if grid is None:
        return auto_grid(epsilon, sensitivity, gamma, criterion)
    return grid, law_for_grid(epsilon, sensitivity, gamma, grid)


class LatticeStaircaseNoise(HalfLatticeLaw):
    """Exact law of the release c·L + Z·L of :class:`Staircase` (scipy.stats-like)."""

    def __init__(self, law: LatticeStaircase, grid: float, center: float = 0.0) -> None:
        super().__init__(law, grid, center)
        self.law = law




class Staircase(HalfLatticeMechanism):
    """Optimal data-independent ε-DP noise (Soria-Comas & Domingo-Ferrer 2013), exact on a grid.

    ``criterion`` picks the member of the optimal family: "variance" (default),
    "mean_abs" or "interval" (shortest symmetric interval at ``level``).

    Supported: epsilon in [2e-05, 20], sensitivity in [1e-140, 1e+140] (block tables of
    <= 2^16 steps); true values ``|x| < 2^51·grid``.

    >>> m = Staircase(epsilon=1.0, sensitivity=1.0)
    >>> round(m.ideal.var(), 4)
    1.9181

    The ideal law has density M0 on the plateau ``|x| <= d`` and ``M0·e^(−ε(k+1))`` on the
    k-th step of width Δ (Soria-Comas & Domingo-Ferrer 2013, Theorem 9 as corrected, and
    Theorem 10: optimal); the release samples its exact lattice version, whose loss the
    verifier recomputes.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    sensitivity : float
        Δ: the largest change of the true answer between neighbouring data sets.
    criterion : {"variance", "mean_abs", "interval"}, default "variance"
        What the member of the optimal family minimises.
    level : float, default 0.95
        The interval's probability for ``criterion="interval"``.
    grid : float or None, default None
        The output grid step L, a power of two; None: the default, at least 4096 times
        finer than the sensitivity.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(MIN_EPSILON, MAX_EPSILON),
                           "sensitivity": STAIRCASE_SENSITIVITY})

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        criterion: str = "variance",
        level: float = 0.95,
        grid: float | None = None,
    ) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        if criterion not in CRITERIA:
            raise ParameterError(f"criterion must be one of {', '.join(CRITERIA)}, "
                                 f"got {criterion!r}")
        self.criterion = criterion
        self.level = check_level(level)
        self.gamma = optimal_gamma(self.epsilon, criterion, self.level)
        self.grid, self.law = _calibrated(self.epsilon, self.sensitivity, self.gamma, criterion,
                                          None if grid is None else check_grid(grid))
        self.shift_steps = self.law.S
        self.plateau_cells = self.law.G
        self._freeze()

    # ------------------------------------------------------------ calibration
    @property
    def ideal(self) -> StaircaseDensity:
        """The real-valued optimal law this mechanism approximates (for utility tables)."""
        return StaircaseDensity(epsilon=self.epsilon, sensitivity=self.sensitivity,
                                gamma=self.gamma)

    @property
    def effective_epsilon(self) -> float:
        """a·ln2/M: the per-step decay actually used (<= ε)."""
        return self.law.geo.decay

    @cached_property
    def exact_loss(self) -> float:
        return self.law.exact_loss

    @property
    def guarantee(self) -> Guarantee:
        geo = self.law.geo
        return Guarantee(
            epsilon=self.epsilon,
            delta=0.0,
            notion="pure",
            note="exact lattice staircase: no finite-precision degradation",
            details={
                "grid": self.grid,
                "shift_steps": self.shift_steps,
                "plateau_cells": self.plateau_cells,
                "ratio_a": geo.a,
                "ratio_M": geo.M,
                "words_per_draw": self.law.words_per_draw,
                "effective_epsilon": geo.decay,
                "exact_loss": self.exact_loss,
                "criterion": self.criterion,
                "gamma": self.gamma,
            },
        )

    # ---------------------------------------------------------------- release
    def _sampler(self) -> Any:
        return self.law

    def _law(self, center: float) -> LatticeStaircaseNoise:
        return LatticeStaircaseNoise(self.law, self.grid, center)

    def privacy_profile(self) -> Any:
        from .profiles import staircase_profile

        return staircase_profile(self)

    def privacy_model(self) -> Any:
        from ..verify import AdditiveLattice

        law = self.law
        return AdditiveLattice(
            logpmf=half_lattice_logpmf(law),
            max_shift=self.shift_steps,
            period=law.period,
        )

    def __repr__(self) -> str:
        return (f"Staircase(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
                f"criterion={self.criterion!r}, grid={self.grid!r})")
