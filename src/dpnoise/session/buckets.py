"""Rows per (cell, lattice point) of a quantile, kept sparse.

A quantile at the data's resolution is released from each cell's snapped values: the
distinct lattice indices present in the cell and their row counts (a lattice of up to
2^24 + 1 points is never materialised).  The engines compute exactly these groups
(``GROUP BY cell keys, kb``); :class:`SparseBuckets` holds them sorted by cell, then by
index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["SparseBuckets"]


@dataclass(frozen=True)
class SparseBuckets:
    """``count[i]`` rows of cell ``cell[i]`` sit at lattice index ``index[i]``; sorted by
    ``(cell, index)``, counts >= 1; ``shape`` the cells' shape (C order)."""

    shape: tuple[int, ...]
    cell: NDArray[np.int64]
    index: NDArray[np.int64]
    count: NDArray[np.int64]

    @classmethod
    def build(cls, shape: tuple[int, ...], cell: Any, index: Any, count: Any,
              top: int) -> SparseBuckets:
        """From unsorted per-group rows (duplicates merged, indices clamped to ``[0, top]``,
        groups with no rows dropped)."""
        cell = np.asarray(cell, dtype=np.int64)
        index = np.clip(np.asarray(index, dtype=np.int64), 0, top)
        count = np.asarray(count, dtype=np.int64)
        keep = count > 0
        cell, index, count = cell[keep], index[keep], count[keep]
        order = np.lexsort((index, cell))
        cell, index, count = cell[order], index[order], count[order]
        if cell.size:
            new = np.r_[True, (np.diff(cell) != 0) | (np.diff(index) != 0)]
            starts = np.flatnonzero(new)
            count = np.add.reduceat(count, starts)
            cell, index = cell[starts], index[starts]
        return cls(tuple(shape), cell, index, count)

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def rows(self) -> NDArray[np.int64]:
        """Rows per cell (flat, C order)."""
        return np.bincount(self.cell, weights=self.count, minlength=self.n_cells
                           ).astype(np.int64)

    def cells(self) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
        """``(index, count)`` of every cell in order (empty arrays for an empty cell)."""
        bounds = np.searchsorted(self.cell, np.arange(self.n_cells + 1))
        return [(self.index[a:b], self.count[a:b])
                for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]

    def __getitem__(self, keep: Any) -> SparseBuckets:
        """The cells where the boolean mask ``keep`` (flat, one per cell) holds, renumbered;
        the result is one-dimensional."""
        keep = np.asarray(keep, dtype=bool).ravel()
        new = np.cumsum(keep) - 1
        rows = keep[self.cell]
        return SparseBuckets((int(keep.sum()),), new[self.cell[rows]], self.index[rows],
                             self.count[rows])
