"""``np.sum`` of a long array that is never built: numpy's pairwise summation, segment by segment.

numpy sums a contiguous float64 array by pairwise summation (``pairwise_sum`` in numpy's
``loops_utils.h``): a run of n > 128 values is split at n2 = ⌊n/2⌋ rounded down to a multiple
of 8 and the two halves' sums are added; a run of 8..128 values is summed with eight
interleaved accumulators; a shorter run left to right.  The sum of a run is therefore a
function of that run's values only, and the sum of the whole array is the same tree of
additions over its runs.  :func:`pairwise_sum` walks the same splits down to runs of at most
``chunk`` values, asks for those values only, and sums each with ``np.sum`` -- the same
float, bit for bit, as ``np.sum`` of the whole array, without ever holding more than one
run of it in memory (a table of 10^6 cells costs 8 MB per array, and fresh memory costs
page faults, ~0.4 ms per MB, at the first construction of a process).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

_BLOCK = 128  # numpy's PW_BLOCKSIZE: runs up to this length are summed directly


def pairwise_sum(values: Callable[[int, int], NDArray[np.float64]], n: int, *,
                 chunk: int = 1 << 15) -> float:
    """``float(np.sum(a))`` for the float64 array ``a`` of length ``n`` whose run
    ``a[lo:hi]`` is ``values(lo, hi)`` (a fresh contiguous float64 array)."""
    def walk(lo: int, m: int) -> float:
        if m <= max(chunk, _BLOCK):
            return float(np.sum(values(lo, lo + m)))
        half = m // 2
        half -= half % 8
        return walk(lo, half) + walk(lo + half, m - half)

    return walk(0, n)


def repeated_segment(block_values: NDArray[np.float64], block_start: NDArray[np.int64],
                     block_width: NDArray[np.int64], lo: int, hi: int) -> NDArray[np.float64]:
    """``np.repeat(block_values, block_width)[lo:hi]`` (a fresh array) for blocks listed in
    cell order, block b covering cells [block_start[b], block_start[b] + block_width[b]),
    tiling the cells without gaps."""
    first = int(np.searchsorted(block_start, lo, side="right")) - 1
    last = int(np.searchsorted(block_start, hi - 1, side="right")) - 1
    widths = block_width[first : last + 1].copy()
    if first == last:
        widths[0] = hi - lo
    else:
        widths[0] -= lo - int(block_start[first])
        widths[-1] = hi - int(block_start[last])
    return np.repeat(block_values[first : last + 1], widths)
