"""Shared lattice calibration: the default grid step and the block length M.

Every exact-lattice mechanism built on :class:`~dpnoise.exact.geometric.BlockGeometric`
(Laplace, truncated Laplacian, ...) calibrates the same way:

* :func:`default_grid` -- a power-of-two step L fine enough that grid rounding of the true
  value (neighbours move by S = ceil(Δ/L) cells) and the integer block length each cost
  less than 2^-12 of the scale, while keeping the alias table small;
* :func:`calibrate_block` -- the smallest M whose *exact* quantised loss for a shift of S
  cells, plus a 1e-12 allowance for float evaluation of logs, is <= ε.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..errors import ParameterError
from ..exact.geometric import MAX_BLOCK, BlockGeometric
from ..grid import power_of_two_at_most
from ..params import LN2

ROUNDING_ALLOWANCE = 1e-12
DEFAULT_GRID_BITS = 12


def default_grid(sensitivity: float, epsilon: float, *, max_bits: int | None = None) -> float:
    """Power-of-two step L = 2^-k · (power of two <= Δ).

    k >= 12 keeps the rounding cost ceil(Δ/L)·L/Δ − 1 below 2^-12, and k >= log2(2^12 ε/ln2)
    keeps M ≈ (Δ/L)·ln2/ε >= 2^12, so ceil() in M costs < 2^-12 too.  k is capped so that
    M <= ~2^18 (table size): for ε < 0.02 that makes the grid coarser (rounding cost up to
    2^-k with k = floor(17 + log2(ε/0.7))).  ``max_bits`` caps k further (e.g. to keep a
    finite support small enough to verify densely).
    """
    wanted = max(DEFAULT_GRID_BITS, math.ceil(math.log2(2**DEFAULT_GRID_BITS * epsilon / LN2)))
    cap = math.floor(17 + math.log2(epsilon / 0.7))
    if max_bits is not None:
        cap = min(cap, max_bits)
    k = max(0, min(wanted, cap))
    return power_of_two_at_most(sensitivity) / 2.0**k


MAX_FAST_BLOCK = 1 << 18  # block tables up to 2^18 entries build in well under a second

#: below this ε the table cap makes :func:`default_grid` coarser than 2^-6·(power of two <= Δ)
#: (k = ⌊17 + log2(ε/0.7)⌋ < 6), so rounding the true value may cost more than the accuracy
#: rule's 2.5 % when Δ is not a power of two: the documented exemption of the lattice Laplace
#: laws (docs/accounting.md, "The 2.5 % accuracy rule")
TABLE_LIMITED_EPSILON = 0.7 * 2.0**-11


def check_block_length(epsilon: float, steps: int, grid: float) -> None:
    """Refuse (before building anything) a grid whose block length ceil(S·ln2/ε) would exceed
    :data:`MAX_FAST_BLOCK`: the table would be slow to build (seconds) or not fit."""
    M = math.ceil(steps * LN2 / epsilon)
    if M > MAX_FAST_BLOCK:
        raise ParameterError(
            f"grid={grid!r} is too fine for epsilon={epsilon!r}: the block length {M} would "
            f"exceed 2^18 (S = {steps} grid steps per sensitivity); pass a coarser grid")


def calibrate_block(
    epsilon: float,
    steps: int,
    loss: Callable[[BlockGeometric], float] | None = None,
) -> tuple[BlockGeometric, float]:
    """Smallest block length M with ``loss(block) + 1e-12 <= ε``; returns (block, loss).

    ``loss`` defaults to the exact S-step loss of the two-sided lattice Laplace,
    ``block.step_loss(steps)``.  The start M = ceil(S·ln2/ε) is the ideal value; the
    quantised table occasionally needs one more.
    """
    loss_of = loss if loss is not None else (lambda block: block.step_loss(steps))
    M = max(1, math.ceil(steps * LN2 / epsilon))
    while True:
        if M > MAX_BLOCK:
            raise ParameterError(
                f"epsilon={epsilon!r} is too small for this grid (block length {M} > "
                f"{MAX_BLOCK}); pass a coarser grid="
            )
        block = BlockGeometric(M)
        value = loss_of(block)
        if value + ROUNDING_ALLOWANCE <= epsilon:
            return block, value
        M += 1
