"""The largest difference of values at most S cells apart, for values given as runs.

A lattice law whose log-pmf is constant on long runs of cells (the staircase's joint period
table spreads each block's probability evenly over up to 2^10 cells) has its largest
privacy loss of a shift by <= S cells at

    max { |v(i) − v(j)| : |i − j| <= S }.

Cell by cell this is a sliding-window maximum minus minimum over millions of cells; over
the runs it is the same maximum over far fewer entries: a run k = [s_k, e_k) and a later run
l reach each other iff their nearest cells do, s_l − (e_k − 1) <= S.  The runs reaching l
from the left are a contiguous range [f(l), l] (the ends e_k increase), so the spread is
max over l of max(max_{[f(l), l]} v − v_l, v_l − min_{[f(l), l]} v), with the range
extremes from a sparse table (O(R log R) for R runs).  Exact: rounding is monotone, so
fl(max v − v_l) is the largest of the fl(v_k − v_l) that the cell-by-cell windows compute.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def _range_extremes(v: NDArray[np.float64], lo: NDArray[np.intp], hi: NDArray[np.intp]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(max, min) of v over each inclusive index range [lo_i, hi_i] (a sparse table)."""
    levels_max, levels_min = [v], [v]
    width = 1
    while 2 * width <= v.size:
        a, b = levels_max[-1], levels_min[-1]
        levels_max.append(np.maximum(a[:-width], a[width:]))
        levels_min.append(np.minimum(b[:-width], b[width:]))
        width *= 2
    span = hi - lo + 1
    level = np.zeros(span.size, dtype=np.intp)
    while np.any(span >= (2 << level)):
        level += span >= (2 << level)
    big, small = np.empty(span.size), np.empty(span.size)
    for k in range(int(level.max()) + 1 if level.size else 0):  # (np.unique imports numpy.ma)
        sel = level == k
        left, right = lo[sel], hi[sel] - (1 << k) + 1
        big[sel] = np.maximum(levels_max[k][left], levels_max[k][right])
        small[sel] = np.minimum(levels_min[k][left], levels_min[k][right])
    return big, small


def run_spread(starts: NDArray[np.int64], ends: NDArray[np.int64], values: NDArray[np.float64],
               reach: int) -> float:
    """max |v(i) − v(j)| over cells i, j at most ``reach`` apart; the cells are the runs
    [starts_k, ends_k) in increasing order, back to back, run k holding the value values_k."""
    first = np.searchsorted(ends, starts - reach, side="right")  # e_k − 1 >= s_l − reach
    own = np.arange(starts.size)
    big, small = _range_extremes(values, first, own)
    return float(max(np.max(big - values), np.max(values - small)))
