"""Distinct persons per group: a count with per-group sensitivity one.

After contribution bounding a person is in at most ``G`` groups and is counted once in each,
so the vector of per-group distinct-person counts changes, when one person is added or
removed, in at most ``G`` cells by exactly 1 (L-infinity 1, L1 ``G``).

* Keys public (every group released): exact two-sided geometric noise of decay ``a <=
  ε/G`` per cell (:class:`~dpnoise.mechanisms.geometric.Geometric` with sensitivity ``G``,
  the exact sampler of Canonne, Kamath and Steinke, "The discrete Gaussian for differential
  privacy", NeurIPS 2020, Algorithm 2): ``ε``-DP by the triangle inequality over the
  ``G`` unit steps.
* Keys not public: :class:`DistinctPersonsCount`, the thresholded count
  (:class:`~dpnoise.mechanisms.thresholded.ThresholdedCount`) with ``R = 1`` row per group:
  a group that exists only because of one person has distinct count exactly 1, so it is
  released with probability ``<= P(keep | 1)`` and ``δ = G·P(Z >= τ − 1)`` (Wilson, Zhang,
  Lam, Desfontaines, Simmons-Marengo and Gipson, "Differentially private SQL with bounded
  user contribution", PoPETs 2020, Sec. 5 -- where the partition selection IS a distinct-
  user count).  Whatever the row caps, counting persons instead of rows makes ``R = 1``.
"""

from __future__ import annotations

from .thresholded import ThresholdedCount


class DistinctPersonsCount(ThresholdedCount):
    """Per-group distinct persons over keys that are not public, released iff the noisy
    count clears the threshold (module docstring): ``ThresholdedCount(rows=1, l1=G)``.

    Supported: delta in (0, 1); groups an integer >= 1; ε/groups >= 2^-32.
    """

    def __init__(self, *, epsilon: float, delta: float, groups: int = 1) -> None:
        super().__init__(epsilon=epsilon, delta=delta, groups=groups, rows=1)

    def __repr__(self) -> str:
        return (f"DistinctPersonsCount(epsilon={self.epsilon!r}, "
                f"delta={self.delta_requested!r}, groups={self.groups})")
