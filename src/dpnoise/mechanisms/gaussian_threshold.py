"""Counts over keys that are not public for persons in MANY groups: discrete Gaussian noise,
thresholded, accounted by its privacy-loss distribution.

:class:`GaussianThresholdCount` -- each group's count ``u`` gets exact discrete Gaussian
noise ``Z ~ N_ℤ(0, σ²)`` (Canonne, Kamath and Steinke, "The discrete Gaussian for
differential privacy", NeurIPS 2020, Algorithm 3) and the group is released with ``y = u +
Z`` iff ``y >= τ``.  One person is in at most ``G`` groups with at most ``R`` rows in each:
the counts' L2 sensitivity is ``√G·R`` where the geometric threshold
(:class:`~dpnoise.mechanisms.thresholded.ThresholdedCount`) pays the L1 sensitivity
``G·R``, so for ``G`` beyond a few the threshold and the noise are both smaller.

The privacy-loss distribution and its proof are in :mod:`dpnoise.laws.gaussian_threshold`:
for each split of the person's at most ``G`` groups into ``k`` of his own and ``G − k`` of the
data, the (G − k)-fold discrete Gaussian pair, exact for the sampled law, mixed with an atom
at ``+∞`` of mass ``1 − (1 − P(Z >= τ − R))^k`` (a group of the person's own released).  That atom
makes every Rényi divergence infinite: the mechanism has NO zCDP guarantee and the `zcdp`
accountant refuses it (before anything is spent); the `pld` accountant composes its PLD.
``(σ², τ)`` are chosen by :func:`~dpnoise.laws.gaussian_threshold.calibrate` (the lowest
threshold at the stated ``(ε, δ)``) and the stated ``δ`` is the PLD's own ``δ(ε)``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.discrete_gaussian import discrete_gaussian, grid_sigma2
from ..exact.words import WordStream
from ..laws import discrete_gaussian as dga
from ..laws import gaussian_threshold as gt
from ..params import check_delta, check_epsilon
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism
from .integers import IntegerLaw, check_counts
from .thresholded import SUPPRESSED, _check_count, joint_log_law

_NOT_ZCDP = ("a Gaussian threshold releases a group of one person's own with probability "
             "> 0 (an atom at +infinity of its privacy-loss distribution): it has no zCDP "
             "guarantee. Use the 'pld' accountant, or the geometric thresholded count")


class GaussianThresholdCount(Mechanism):
    """Release each group's discrete-Gaussian-noised count iff it is ``>= τ`` (module
    docstring).  ``release(counts)`` takes the true counts of the groups present (0:
    absent) and returns the noisy counts, :data:`SUPPRESSED` where not released.

    Supported: delta in (0, 1); groups an integer in [1, 32]; rows an integer >= 1.
    """

    kind = "statistic"

    def __init__(self, *, epsilon: float, delta: float, groups: int = 1, rows: int = 1
                 ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta_requested = check_delta(delta)
        self.groups = _check_count("groups", groups)
        self.rows = _check_count("rows", rows)
        if self.groups > gt.MAX_GROUPS:
            raise ParameterError(f"groups must be in [1, {gt.MAX_GROUPS}] for the Gaussian "
                                 f"threshold, got {groups!r}")
        cal = gt.calibrate(self.epsilon, self.delta_requested, self.groups, self.rows)
        self.params = grid_sigma2(cal.sigma2)  # already on the grid: the same σ²
        self.sigma2 = self.params.sigma2
        self.threshold = int(cal.threshold)
        self.delta = float(cal.delta)
        self.sensitivity = math.sqrt(self.groups) * self.rows  # L2
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=self.delta, notion="approximate",
                         note=f"discrete Gaussian threshold: sigma2 {float(self.sigma2):.6g}, "
                         f"threshold {self.threshold}")

    def delta_at(self, epsilon: float) -> float:
        """``δ(ε)`` of the PLD at another ε."""
        return gt.total_delta(float(self.sigma2), self.threshold, self.groups, self.rows,
                              check_epsilon(epsilon))

    def keep_probability(self, count: int) -> float:
        """P(kept) for a group of true count ``count`` (0: absent, never kept)."""
        return 0.0 if count <= 0 else gt.tail(float(self.sigma2), self.threshold - int(count))

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        u = check_counts(true_value, None, None).reshape(-1)  # refused before any word
        y = u + discrete_gaussian(WordStream(resolve_rng(rng)), self.params, u.size)
        return np.where((u > 0) & (y >= self.threshold), y, SUPPRESSED)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        """None: the law of one count's noise Z; a count u: the law of its released value."""
        s2 = float(self.sigma2)
        if true_value is None:
            K = dga.window(s2)
            z = np.arange(-K, K + 1)
            return IntegerLaw(z, dga.pmf(z, s2), (True, True))
        outs, lp = self._group_law(int(true_value), int(true_value) + dga.window(s2))
        return IntegerLaw(outs, np.exp(lp), (False, True))  # kept counts: unbounded above

    def _group_law(self, u: int, top: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(released value) of one group on {SUPPRESSED, τ, ..., top} (the mass above
        ``top`` lumped into ``top``: a post-processing)."""
        if u <= 0:
            return np.array([SUPPRESSED]), np.array([0.0])
        s2 = float(self.sigma2)
        top = max(top, self.threshold)
        y = np.arange(self.threshold, top + 1, dtype=np.int64)
        p = dga.pmf(y - u, s2)
        p[-1] = gt.tail(s2, top - u)
        keep = gt.tail(s2, self.threshold - u)
        outs = np.concatenate([[SUPPRESSED], y])
        with np.errstate(divide="ignore"):
            return outs, np.log(np.maximum(np.concatenate([[1.0 - keep], p]), 0.0))

    def _log_law(self, u: tuple[int, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(released vector | counts u), the vector encoded as one integer."""
        top = self.threshold + 2 * self.rows + math.ceil(12 * math.sqrt(float(self.sigma2)))
        return joint_log_law(self._group_law, u, top)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return (y == SUPPRESSED) | ((y == np.floor(y)) & (y >= self.threshold)
                                   & np.isfinite(y))

    def privacy_model(self) -> Any:
        """Exact laws over neighbouring count vectors of up to two groups: every add/remove
        of one person with at most ``rows`` rows in each, from counts in {0, 1, τ − R,
        τ − 1, τ}."""
        from ..verify import DiscreteFamily

        g, tau, R = min(self.groups, 2), self.threshold, self.rows
        values = sorted({0, 1, max(0, tau - R), max(0, tau - 1), tau})
        moves = [m for m in itertools.product(range(R + 1), repeat=g) if sum(m) > 0]
        pairs = []
        for x in itertools.product(values, repeat=g):
            for m in moves:
                y = tuple(a + b for a, b in zip(x, m, strict=True))
                pairs += [(x, y), (y, x)]
        return DiscreteFamily(inputs=[], sensitivity=self.sensitivity, law=self._log_law,
                              pairs=pairs)

    def privacy_profile(self) -> Any:
        """Two ordered pairs per case of :func:`~dpnoise.laws.gaussian_threshold.cases`: the
        j existing groups' G-fold discrete Gaussian PLD mixed with the atom ``p_k`` at
        ``+∞``, and the reverse pair shifted by ``−ln(1 − p_k)``; their envelope."""
        from ..profile import DominatingPairs, LossAtoms, PrivacyProfile

        s2 = float(self.sigma2)
        pairs = []
        for atoms, p in gt.cases(s2, self.threshold, self.groups, self.rows):
            losses, probs = np.asarray(atoms.losses), np.asarray(atoms.probs)
            err = np.asarray(atoms.error)
            pairs.append(LossAtoms(np.append(losses, math.inf),
                                   np.append(probs * (1 - p), p), np.append(err, 0.0)))
            pairs.append(LossAtoms(losses - math.log1p(-p), probs, err))
        most = gt.new_group_mass(s2, self.threshold, self.groups, self.rows)
        dominating = DominatingPairs(tuple(pairs), envelope="hull", note=(
            f"discrete Gaussian threshold: up to {self.groups}-fold N_Z(0, {s2:.6g}) at shift "
            f"{self.rows}, +inf atom up to {most:.3g} (new groups)"))
        return PrivacyProfile(True, self.epsilon, self.delta, "Gaussian threshold",
                              pairs=lambda S: dominating, sub_shifts=False,
                              cache_key=("gaussian-threshold", self.sigma2, self.threshold,
                                         self.groups, self.rows),
                              renyi=None, rho=None, not_zcdp=_NOT_ZCDP,
                              noise_at=self.noise, integer_output=True)

    def __repr__(self) -> str:
        return (f"GaussianThresholdCount(epsilon={self.epsilon!r}, "
                f"delta={self.delta_requested!r}, groups={self.groups}, rows={self.rows})")
