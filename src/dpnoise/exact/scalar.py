"""One-value release kernels: the array samplers' laws, word for word, in Python integers.

A release of one true value through the numpy kernels pays for array set-up (buffers,
a dozen ufunc calls, a cipher call) that dwarfs the work of one draw.  The kernels below
take the **same words** (:func:`~dpnoise.randomness.word_ints`: the same number, in the same
order, as the array kernel with n = 1), apply the **same integer arithmetic** to them with
Python ints, and so return exactly the value the array kernel returns for those words:

* alias draws: column c = w >> (64 − b), u = w mod 2^(64−b); the outcome is the column's
  own value if u < thr[c], else its alias's -- as ``pick2[2c + (u >= thr[c])]`` on the
  interleaved table (no branch);
* trailing-zero counts (the Geometric(1/2) block index) as ``(x & −x).bit_length() − 1``;
  the all-zero case (probability 2^-63 per draw) continues on fresh words through the
  array samplers' own extension code;
* the sign from bit 63 applied as (k ^ −s) + s.

So the law of a scalar release is the law the array path samples (and ``noise(x)``
returns); tests check it both ways (identical outputs from the same seeded words, and a
chi-square of scalar releases against ``noise(x)``).  Every draw runs the same operations
whatever the true value; the only branch is the sampler's own 2^-63 extension.  The tables
are built once per mechanism (public parameters only, never per true value).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import PrecisionError
from ..randomness import RandomSource, word_ints
from .alias import AliasTable

LOW63 = (1 << 63) - 1
TOP = 1 << 63
MAX_INDEX = 1 << 51


def grid_index(q: float) -> float:
    """floor(q + 1/2) for |q| < 2^51, exactly, in float arithmetic (as ``round_half_up``):
    t = q − fmod(q, 1) truncates toward zero (exact), floor(q) = t − [t > q], the
    fractional part q − floor(q) is exact, and the index is floor(q) + [fraction >= 1/2].
    Floats, not Python ints, so the work does not grow with |q| (an int above 2^30 takes
    two internal digits)."""
    t = q - math.fmod(q, 1.0)
    fl = t - (t > q)
    return fl + ((q - fl) >= 0.5)


def interleaved(table: AliasTable, values: Sequence[Any], typecode: str = "q"
                ) -> tuple[int, int, array, array]:
    """(shift, mask, thr2, pick2): outcome = pick2[2c + (u >= thr2[c])]... with
    c = w >> shift, u = w & mask, thr2 = the column thresholds and pick2[2c] = values[c],
    pick2[2c + 1] = values[alias(c)] (``values`` indexed by outcome; padding never drawn)."""
    cols = table.columns
    vals = list(values) + [0] * (cols - len(values))
    pick2 = array(typecode, [0]) * (2 * cols)
    pick2[0::2] = array(typecode, vals[:cols])
    pick2[1::2] = array(typecode, [vals[a] for a in table._alias.tolist()])
    thr = array("Q")
    thr.frombytes(np.ascontiguousarray(table._thr, dtype=np.uint64).tobytes())
    return 64 - table.bits, table.mass - 1, thr, pick2


class BlockKernel:
    """2Z = ±(2K + 1), K = Q·M + R, of :class:`~dpnoise.exact.geometric.BlockGeometric`."""

    __slots__ = ("M2", "mask", "pick2", "sampler", "shift", "thr")

    def __init__(self, sampler: Any) -> None:
        t = sampler.table
        odd = [2 * r + 1 for r in range(t.columns)]
        self.shift, self.mask, self.thr, self.pick2 = interleaved(t, odd)
        self.M2 = 2 * sampler.M
        self.sampler = sampler

    def two_z(self, rng: RandomSource) -> int:
        a, b = word_ints(rng, 2)
        low = a & LOW63
        q = (low & -low).bit_length() - 1 if low else self._extend(rng, a)
        c = b >> self.shift
        k = q * self.M2 + self.pick2[2 * c + ((b & self.mask) >= self.thr[c])]
        s = a >> 63
        return (k ^ -s) + s

    def _extend(self, rng: RandomSource, a: int) -> int:  # probability 2^-63
        qa = np.array([63], dtype=np.int64)
        self.sampler._extend_counts(rng, np.array([a], dtype=np.uint64), qa)
        return int(qa[0])


class FoldedKernel(BlockKernel):
    """2Z = ±(2K + 1), K = (Q·M + R) mod n, of
    :class:`~dpnoise.exact.folded.FoldedBlockGeometric` (same words as BlockGeometric)."""

    __slots__ = ("M", "n")

    def __init__(self, sampler: Any) -> None:
        t = sampler.block.table
        self.n, self.M = sampler.n, sampler.M
        self.shift, self.mask, self.thr, self.pick2 = interleaved(
            t, [r % self.n for r in range(t.columns)])
        self.sampler = sampler.block

    def two_z(self, rng: RandomSource) -> int:
        a, b = word_ints(rng, 2)
        low = a & LOW63
        q = (low & -low).bit_length() - 1 if low else self._extend(rng, a)
        c = b >> self.shift
        n = self.n
        k = (q * self.M) % n + self.pick2[2 * c + ((b & self.mask) >= self.thr[c])]
        k -= n * (k >= n)
        k = 2 * k + 1
        s = a >> 63
        return (k ^ -s) + s


class StaircaseKernel:
    """2Z = ±(2K + 1), K = Q·P + o, of :class:`~dpnoise.exact.staircase.LatticeStaircase`
    (joint table: words a, b; product tables: words a, b, c -- as the array kernel)."""

    __slots__ = ("a", "law", "period", "tabs", "width2")

    def __init__(self, law: Any) -> None:
        self.law = law
        self.a = law.geo.a
        self.period = law.period
        if law.joint:
            t = law.period_table
            self.tabs = [interleaved(t, law.block_start.tolist())]
            width = (law.block_width - 1).tolist()
            self.width2 = interleaved(t, width)[3]
        else:
            S = law.S
            self.tabs = [interleaved(law.geo.table, [r * S for r in range(law.geo.M)]),
                         interleaved(law.cell_table, list(range(S)))]
            self.width2 = None

    def two_z(self, rng: RandomSource) -> int:
        words = word_ints(rng, 1 + len(self.tabs))
        a = words[0]
        low = a & LOW63
        if low:
            k = (((low & -low).bit_length() - 1) // self.a) * self.period
        else:  # probability 2^-63: the array kernel's exact extension
            q = self.law.geo.q_from_words(rng, np.array([low], dtype=np.uint64))
            k = int(q[0]) * self.period
            if k >= MAX_INDEX:
                raise PrecisionError("noise beyond the exactly representable range")
        for (shift, mask, thr, pick2), w in zip(self.tabs, words[1:], strict=True):
            c = w >> shift
            u = w & mask
            i = 2 * c + (u >= thr[c])
            k += pick2[i]
            if self.width2 is not None:
                k += u & self.width2[i]
        k = 2 * k + 1
        s = a >> 63
        return (k ^ -s) + s


class IntegerBlockKernel:
    """Z of :class:`~dpnoise.exact.integer_block.IntegerBlockLaplace` (words a, b)."""

    __slots__ = ("law", "mask", "pick2", "qm", "shift", "thr")

    def __init__(self, law: Any) -> None:
        t = law.table
        self.shift, self.mask, self.thr, self.pick2 = interleaved(t, list(range(t.columns)))
        self.qm = [(c // law.j) * law.M for c in range(64)]
        self.law = law

    def z(self, rng: RandomSource) -> int:
        a, b = word_ints(rng, 2)
        low = a & LOW63
        c = b >> self.shift
        k = self.pick2[2 * c + ((b & self.mask) >= self.thr[c])]
        if low:
            block = self.qm[(low & -low).bit_length() - 1]
        else:  # probability 2^-63: the array kernel's exact continuation
            block = int(self.law._long_counts(rng, np.array([a], dtype=np.uint64),
                                              np.array([63], dtype=np.int64))[0])
        k += block * (k != 0)
        s = a >> 63
        return (k ^ -s) + s


class OneWordKernel:
    """An outcome value from one word through an alias table (discrete Gaussian tables)."""

    __slots__ = ("mask", "pick2", "shift", "thr")

    def __init__(self, table: AliasTable, values: Sequence[int]) -> None:
        self.shift, self.mask, self.thr, self.pick2 = interleaved(table, values)

    def z(self, rng: RandomSource) -> int:
        (w,) = word_ints(rng, 1)
        c = w >> self.shift
        return self.pick2[2 * c + ((w & self.mask) >= self.thr[c])]


def half_lattice_kernel(sampler: Any) -> Any:
    """The scalar kernel of a half-lattice sampler (an object with ``two_z(rng)``)."""
    from .folded import FoldedBlockGeometric
    from .geometric import BlockGeometric
    from .staircase import LatticeStaircase

    if isinstance(sampler, FoldedBlockGeometric):
        return FoldedKernel(sampler)
    if isinstance(sampler, BlockGeometric):
        return BlockKernel(sampler)
    if isinstance(sampler, LatticeStaircase):
        return StaircaseKernel(sampler)
    return None
