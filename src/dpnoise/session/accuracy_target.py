"""An accuracy target: the error-bar half-width a query's released cells must reach.

A fact the custodian declares in a workload (``target = ...`` or ``relative_target = ...``
with ``reference = ...``); :mod:`dpnoise.session.targets` plans the budgets that meet it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ParameterError


@dataclass(frozen=True)
class AccuracyTarget:
    """The error-bar half-width every released cell of a query must reach.

    Parameters
    ----------
    absolute : float or None, default None
        The half-width in the statistic's units (a quantile's: rank levels, e.g. 0.02).
    relative : float or None, default None
        The half-width as a fraction of ``reference``.
    reference : float or None, default None
        A value the custodian states: a public figure, or a value released earlier and
        charged -- never one computed from the data being released.
    """

    absolute: float | None = None
    relative: float | None = None
    reference: float | None = None

    def __post_init__(self) -> None:
        if (self.absolute is None) == (self.relative is None):
            raise ParameterError("a target is either absolute (target = ...) or relative "
                                 "(relative_target = ... with reference = ...), not both")
        for name in ("absolute", "relative"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool)
                                      and 0 < v < math.inf):
                raise ParameterError(f"target {name} must be a positive finite number, "
                                     f"got {v!r}")
        if self.relative is not None:
            ref = self.reference
            if isinstance(ref, bool) or not isinstance(ref, (int, float)) or \
                    not (0 < abs(ref) < math.inf):
                raise ParameterError("a relative target needs reference = a nonzero finite "
                                     f"number (a public figure), got {ref!r}")
        elif self.reference is not None:
            raise ParameterError("reference is for a relative target (relative_target = ...)")

    @property
    def half_width(self) -> float:
        """The target half-width in the statistic's units."""
        if self.absolute is not None:
            return float(self.absolute)
        return float(self.relative) * abs(float(self.reference))  # type: ignore[arg-type]

    def describe(self) -> str:
        if self.absolute is not None:
            return f"+-{self.absolute:g}"
        return f"+-{100 * self.relative:g}% of {self.reference:g}"  # type: ignore[operator]
