"""The numpy word steps shared by the block samplers' reference chunks (the Laplace lattice
:class:`~dpnoise.exact.geometric.BlockGeometric` and the integer
:class:`~dpnoise.exact.integer_block.IntegerBlock`): a geometric count from the trailing
zeros of one word, an alias-table outcome from another, and a sign from bit 63.  Each writes
into caller-owned scratch arrays (no allocation per chunk); the compiled kernels compute the
same integers."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

_TOP = np.uint64(1 << 63)
_ONE = np.uint64(1)
_EVEN = np.uint64(~1 & 0xFFFFFFFFFFFFFFFF)
_S63 = np.int64(63)


def trailing_zeros_63(a: NDArray[np.uint64], lo: NDArray[np.uint64],
                      tmp: NDArray[np.uint64]) -> NDArray[np.int64]:
    """The trailing zeros of ``a | 2^63`` -- the ctz of the low 63 bits, 63 if they are all
    0 -- in ``lo`` (returned as an int64 view); ``tmp`` is scratch."""
    np.bitwise_or(a, _TOP, out=lo)
    np.negative(lo, out=tmp)
    np.bitwise_and(lo, tmp, out=lo)
    np.subtract(lo, _ONE, out=lo)
    np.bitwise_count(lo, out=lo)
    return lo.view(np.int64)


def alias_outcome(b: NDArray[np.uint64], thr2: NDArray[np.uint64], outcome2: NDArray[Any],
                  col_shift: np.uint64, thr_mask: np.uint64, tmp: NDArray[np.uint64],
                  col: NDArray[np.intp], above: NDArray[np.bool_],
                  out: NDArray[np.int64]) -> None:
    """``out = outcome2[2·col + (u >= thr2[2·col])]``: the column from the top bits of ``b``
    (shifted by ``col_shift``, its low bit cleared), u its low bits (``thr_mask``); the
    tables interleaved as in the kernels.  ``tmp``, ``col``, ``above`` are scratch."""
    np.right_shift(b, col_shift, out=tmp)
    np.bitwise_and(tmp, _EVEN, out=tmp)
    col[:] = tmp
    np.bitwise_and(b, thr_mask, out=tmp)
    np.greater_equal(tmp, thr2[col], out=above)
    np.add(col, above, out=col)
    np.take(outcome2, col, out=out)


def apply_sign(a: NDArray[np.uint64], k: NDArray[np.int64], s: NDArray[np.int64],
               out: NDArray[np.int64] | None = None) -> None:
    """``±k`` into ``out`` (default: ``k`` in place), the sign from bit 63 of ``a``: s in
    {0, -1} (scratch), (k ^ s) - s; 0 stays 0."""
    np.right_shift(a.view(np.int64), _S63, out=s)
    np.bitwise_xor(k, s, out=k)
    np.subtract(k, s, out=k if out is None else out)
