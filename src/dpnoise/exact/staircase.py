"""Exact sampler of the staircase lattice law (one period: a block of M steps of S cells).

Magnitude cell K = Q·P + o with period P = M·S: Q = floor(T/a) from the trailing zeros T of
a random word is exactly Geometric with ratio 2^-a per period; the position o in the
period comes from 64-bit alias tables (one joint table over aligned blocks of up to
2^BLOCK_BITS cells, 2 words a draw, or a block table and a cell table, 3 words a draw).
The calibration that chooses (a, M) and the mechanism are in
:mod:`dpnoise.mechanisms.staircase`; the ideal law in :mod:`dpnoise.laws.staircase`.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError, PrecisionError
from ..grid import round_half_up_inplace
from ..kernels import MIN_VALUES
from ..params import LN2
from ..randomness import RandomSource, fill_words
from .alias import AliasTable, exact_sum, quantize_weights_array
from .pairwise import pairwise_sum, repeated_segment
from .ratio_geometric import RatioGeometric
from .run_spread import run_spread

_CHUNK = 1 << 14
_MAX_INDEX = float(1 << 51)


@lru_cache(maxsize=1)
def _staircase_kernel() -> Any:
    """The compiled twin of the chunk body of :meth:`LatticeStaircase._sample`
    (``kernels/staircase.c``), or None (kernels off): raw pointers, no per-call checks."""
    from .. import kernels

    vp, i64, f64, u64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double, ctypes.c_uint64
    return kernels.function("dpk_staircase_sample",
                            [vp, i64, i64, vp, vp, vp, i64, u64, vp, vp, i64, u64, vp, f64,
                             vp, f64, vp], i64)


class LatticeStaircase:
    """The exact sampled law: magnitude cell K = Q·P + o, with period P = M·S.

    Q = floor(T/a) is exactly Geometric with ratio 2^-a per period (trailing zeros of a
    random word); o ∈ [0, P) is the position inside the period, o = R·S + j (R: step of
    the block, j: cell of the step).  Two samplers for o, both with known integer weights:

    * ``joint``: one alias table over aligned blocks of up to 2^10 cells of the period
      (one word: top 54 bits pick the block, low 10 bits the cell; <= 2^13 blocks);
    * product: R from the block table of :class:`RatioGeometric` and j from a table over
      the S cells (two words; any ε).

    Levels: j < G is the plateau/inner part of a step (weight 1), j >= G the outer part
    (weight e^(−inner)).  A shift of <= S cells changes the level by at most one.
    """

    def __init__(self, geo: RatioGeometric, S: int, G: int, *, joint: bool = False) -> None:
        if not (isinstance(S, int) and S >= 1 and 0 <= G <= S):
            raise ParameterError(f"need S >= 1 and 0 <= G <= S, got S={S}, G={G}")
        self.geo = geo
        self.S = S
        self.G = G
        self.joint = joint
        self.period = geo.M * S
        if joint:
            starts, widths, table = _joint_blocks(geo, S, G)
            self.period_table = table
            self.block_start = starts
            self.block_width = widths
        else:
            cellw = np.where(np.arange(S) < G, 1.0, math.exp(-geo.inner))
            self.cell_table = AliasTable(quantize_weights_array(cellw))

    @property
    def words_per_draw(self) -> int:
        return 2 if self.joint else 3

    @property
    def table_size(self) -> int:
        """Outcomes of the joint period table (blocks), or block + cell table sizes."""
        if self.joint:
            return int(self.block_start.size)
        return self.geo.M + self.S

    # ------------------------------------------------------------ exact pmf
    @cached_property
    def period_log(self) -> NDArray[np.float64]:
        """ln P(o) for o = 0..P−1 (from the exact integer weights)."""
        if self.joint:  # each block's probability spread evenly over its cells
            return np.repeat(self._block_log, self.block_width)  # blocks in cell order
        cw = _weights_of(self.cell_table)
        with np.errstate(divide="ignore"):  # a zero weight: −inf, as log(0) stands for
            cl = np.where(cw > 0, log_of_integers(np.maximum(cw, 1)) - 64 * LN2, -math.inf)
        return (self.geo.log_weights[:, None] + cl[None, :]).reshape(-1)

    @cached_property
    def _block_log(self) -> NDArray[np.float64]:
        """Joint table: ln P(o) of each cell o of each block (one value per block)."""
        w = self.period_table.exact_weights()
        lw = np.array([math.log(x) - 64 * LN2 if x else -math.inf for x in w])
        lw -= np.log(self.block_width.astype(np.float64))
        return lw

    @cached_property
    def period_prob(self) -> NDArray[np.float64]:
        return np.exp(self.period_log)

    @cached_property
    def period_tail(self) -> NDArray[np.float64]:
        """P(o' >= o) for o = 0..P (summed from the small end for accuracy)."""
        p = self.period_prob
        tail = np.cumsum(p[::-1])[::-1]
        return np.append(tail / tail[0], 0.0)

    def log_magnitude(self, K: ArrayLike) -> NDArray[np.float64]:
        """ln P(|Z| = K + 1/2) (both signs together)."""
        K = np.asarray(K, dtype=np.int64)
        q, o = np.divmod(np.maximum(K, 0), self.period)
        out = -(q * self.geo.a) * LN2 + self.geo.log_block + self.period_log[o]
        return np.where(K < 0, -np.inf, out)

    def magnitude_sf(self, K: ArrayLike) -> NDArray[np.float64]:
        """P(K' >= K) = 2^(-a(q+1)) + 2^(-aq)(1 − 2^-a) P(o' >= o), K = qP + o."""
        K = np.asarray(K, dtype=np.int64)
        q, o = np.divmod(np.maximum(K, 0), self.period)
        rho = 2.0 ** -self.geo.a
        base = np.exp2(-(q * self.geo.a).astype(np.float64))
        out = base * (rho + (1 - rho) * self.period_tail[o])
        return np.where(K <= 0, 1.0, out)

    @cached_property
    def _moments(self) -> tuple[float, float]:
        """(E[K + 1/2], E[(K + 1/2)^2]) in cells."""
        if self.joint:  # Σ p·o and Σ p·o² (p = period_prob / Σ period_prob, o = cell + 1/2)
            m1, m2 = self._joint_sums()
        else:  # o + 1/2 = R·S + (j + 1/2) with R and j independent
            pr = np.array(self.geo.weights, dtype=np.float64) / 2.0**64
            pj = np.array(self.cell_table.exact_weights(), dtype=np.float64) / 2.0**64
            R = np.arange(self.geo.M, dtype=np.float64)
            jj = np.arange(self.S, dtype=np.float64) + 0.5
            er, er2 = _weighted_sum(pr, R), _weighted_sum(pr, R * R)
            ej, ej2 = _weighted_sum(pj, jj), _weighted_sum(pj, jj * jj)
            S = self.S
            m1 = S * er + ej
            m2 = S * S * er2 + 2 * S * er * ej + ej2
        rho = 2.0 ** -self.geo.a
        eq, eq2 = rho / (1 - rho), rho * (1 + rho) / (1 - rho) ** 2
        P = self.period
        return P * eq + m1, P * P * eq2 + 2 * P * eq * m1 + m2

    def _joint_sums(self) -> tuple[float, float]:
        """``_weighted_sum(p, o)`` and ``_weighted_sum(p, o * o)`` for the joint table, with
        p = period_prob / period_prob.sum() and o = arange(P) + 1/2: the same floats, summed
        run by run (:func:`~dpnoise.exact.pairwise.pairwise_sum`) from the per-block
        probabilities instead of arrays of P cells (exp commutes with repeating a value)."""
        prob = np.exp(self._block_log)
        starts, widths = self.block_start, self.block_width

        def cells(lo: int, hi: int) -> NDArray[np.float64]:
            return repeated_segment(prob, starts, widths, lo, hi)

        total = pairwise_sum(cells, self.period)

        def weighted(power: int) -> Callable[[int, int], NDArray[np.float64]]:
            def run(lo: int, hi: int) -> NDArray[np.float64]:
                o = np.arange(lo, hi, dtype=np.float64)
                o += 0.5
                if power == 2:
                    o *= o
                p = cells(lo, hi)
                p /= total
                p *= o
                return p
            return run

        return pairwise_sum(weighted(1), self.period), pairwise_sum(weighted(2), self.period)

    def logpmf(self, K: ArrayLike) -> NDArray[np.float64]:
        """ln P(K) of the magnitude (the :class:`~dpnoise.laws.half_lattice.MagnitudeLaw` view)."""
        return self.log_magnitude(K)

    def sf(self, K: ArrayLike) -> NDArray[np.float64]:
        return self.magnitude_sf(K)

    def half_moments(self) -> tuple[float, float]:
        return self._moments

    def first_moment(self) -> float:
        return self._moments[0]

    def second_moment(self) -> float:
        return self._moments[1]

    # --------------------------------------------------------- exact loss
    @cached_property
    def exact_loss(self) -> float:
        """max over lattice points at distance <= S of |ln p − ln p'|, from the tables.

        Joint table: sliding-window extremes over every window of S+1 consecutive lattice
        points in [−(P + 2S), P + 2S]; beyond, the log-ratios repeat with period P
        exactly (the period ratio is the exact dyadic 2^-a), so every pair is covered.

        Product tables (p(K) = P_k(k)·P_j(j), K = kS + j): pairs on one step, or across
        zero (both in step 0), are any two cells j, j' -> A = max ln P_j − min ln P_j;
        pairs on consecutive steps are K = kS + j, K' = (k+1)S + j' with j' <= j, where k
        and (j, j') vary independently -> max_k D_k + max_{j'<=j}(ln P_j(j) − ln P_j(j'))
        and its mirror (D_k = ln P_k(k) − ln P_k(k+1)).  Exact, O(M + S).
        """
        if not self.joint:
            # period_log is finite iff every block and cell weight is > 0 (the block logs
            # raise on a zero weight, as building period_log would)
            self.geo.log_weights  # noqa: B018
            cw = _weights_of(self.cell_table)
            if not np.all(cw > 0):
                return math.inf  # a zero-weight position would be an impossible output
            cl = log_of_integers(cw)
            A = float(cl.max() - cl.min())
            up = float(np.max(cl - np.minimum.accumulate(cl)))
            down = float(np.max(np.maximum.accumulate(cl) - cl))
            D = self.geo.step_log_ratios
            return max(A, float(D.max()) + up, float(-D.min()) + down)
        if not np.all(np.isfinite(self._block_log)):  # = period_log's cells, repeated
            return math.inf  # a zero-weight position would be an impossible output
        return self._joint_loss()

    def _joint_loss(self) -> float:
        """The joint table's exact loss: the largest log-pmf difference of two lattice points
        at most S apart among points m ∈ [−W, W), W = P + 2S + 2 (magnitude cell K = m for
        m >= 0, −m − 1 below), restricted to the points of the windows of S + 1 points
        centred on S .. 2W − S − 1 (the windows the cell-by-cell computation
        :meth:`_joint_loss_by_cells` slides).  ln P is constant on each block of the period
        table, so the points come as runs, one per block and period, and
        :func:`~dpnoise.exact.run_spread.run_spread` takes the same maximum over the runs."""
        S, P = self.S, self.period
        W = P + 2 * S + 2
        lo, hi = S - (S + 1) // 2, 2 * W - (S + 1) // 2  # point indices m + W in the windows
        periods = -(-W // P)
        k0 = (np.arange(periods, dtype=np.int64)[:, None] * P + self.block_start).reshape(-1)
        k1 = np.minimum(k0 + np.tile(self.block_width, periods), W)
        keep = k0 < W
        k0, k1 = k0[keep], k1[keep]
        # log_magnitude(k0) from the per-block logs (k0 is a block start: period_log[o] is
        # its block's value): the same floats without the P-cell period_log
        nb = self.block_start.size
        q = np.repeat(np.arange(periods, dtype=np.int64), nb)[keep]
        value = (-(q * self.geo.a) * LN2 + self.geo.log_block
                 + np.tile(self._block_log, periods)[keep])
        # index m + W: K-run [k0, k1) is [W + k0, W + k1) on the right, [W − k1, W − k0) left
        starts = np.concatenate([(W - k1)[::-1], W + k0])
        ends = np.concatenate([(W - k0)[::-1], W + k1])
        values = np.concatenate([value[::-1], value])
        starts, ends = np.maximum(starts, lo), np.minimum(ends, hi)
        inside = starts < ends
        return run_spread(starts[inside], ends[inside], values[inside], S)

    def _joint_loss_by_cells(self) -> float:
        """The reference of :meth:`_joint_loss`, point by point: sliding-window extremes over
        every window of S + 1 consecutive lattice points (O(P) memory and time)."""
        W = self.period + 2 * self.S + 2
        m = np.arange(-W, W, dtype=np.int64)
        lp = self.log_magnitude(np.where(m >= 0, m, -m - 1))
        S = self.S
        # windows of S + 1 points centred on S .. size − S − 1 (start = centre − (S+1)//2)
        hi, lo = _window_max_min(lp, S + 1)
        first = S - (S + 1) // 2
        last = lp.size - S - (S + 1) // 2  # exclusive
        return float(np.max(hi[first:last] - lo[first:last]))

    # ------------------------------------------------------------ sampling
    @cached_property
    def _tables(self) -> tuple[Any, ...]:
        """Kernel tables with the outcome values pre-scaled to floats (see ``_sample``)."""
        qtab = np.append(self.geo.q_of_t, 64 // self.geo.a) * self.period
        if self.joint:
            pos = _interleaved(self.period_table, self.block_start + 0.5)
            width2 = np.empty(2 * self.period_table.columns, dtype=np.uint64)
            padded = np.concatenate([self.block_width - 1, np.zeros(
                self.period_table.columns - self.block_width.size, dtype=np.int64)])
            width2[0::2] = padded
            width2[1::2] = padded[self.period_table._alias]
            return qtab, pos, width2
        r = _interleaved(self.geo.table, np.arange(self.geo.M, dtype=np.float64) * self.S)
        j = _interleaved(self.cell_table, np.arange(self.S) + 0.5)
        return qtab, r, j

    def signed_odd(
        self,
        rng: RandomSource,
        n: int,
        *,
        centre: NDArray[np.float64] | None = None,
        grid: float | None = None,
    ) -> NDArray[np.int64] | NDArray[np.float64]:
        """n draws of 2Z = ±(2K+1); with ``centre`` and ``grid``, the release c·L + Z·L."""
        if centre is None:
            z = self._sample(rng, n, np.zeros(n), 2.0)  # ±(K + 1/2)·2, exact
            return z.astype(np.int64)
        if grid is None:
            raise ParameterError("grid is required with centre")
        return self._sample(rng, n, centre, grid)

    def _sample(self, rng: RandomSource, n: int, centre: NDArray[np.float64], grid: float
                ) -> NDArray[np.float64]:
        """The release c·L ± (K + 1/2)·L for each true value (c = floor(x/L + 1/2)).

        Per draw: word a -> sign (bit 63) and Q = floor(T/a), T = trailing zeros of the
        low 63 bits; then the in-period position from one word (joint table) or step R
        and cell j from two words.  K = Q·P + o.  Alias lookups use interleaved tables
        (index 2·column + [u >= threshold]) whose outcomes are pre-scaled floats, so the
        noise magnitude (K + 1/2)·L is assembled by exact float additions of multiples
        of L/2 (all < 2^53·L/2); the sign bit is OR-ed in; no masked ufuncs, a fixed
        number of words per draw (plus one with probability 2^-63, data-independent).

        Long on purpose: the compiled kernel and its numpy reference share the chunk loop and its
        preallocated buffers (one allocation per call, not per chunk).
        """
        out = np.empty(n, dtype=np.float64)
        if n and not float(np.max(np.abs(centre))) / grid < _MAX_INDEX:
            raise PrecisionError(
                f"true value too large for grid step {grid!r}: need |x| < 2^51 * grid")
        qtab, t_a, t_b = self._tables
        qtab_f = qtab * grid
        width2 = t_b if self.joint else None
        tabs = [(thr2, vals * grid, sh, mask) for thr2, vals, sh, mask in
                ([t_a] if self.joint else [t_a, t_b])]
        nw = 1 + len(tabs)
        chunk = min(n, _CHUNK) if n > 0 else 1
        words = np.empty(nw * chunk + 8, dtype=np.uint64)
        u1 = np.empty(chunk, dtype=np.uint64)
        u2 = np.empty(chunk, dtype=np.uint64)
        fl = np.empty(chunk, dtype=bool)
        f1 = np.empty(chunk, dtype=np.float64)
        xs = np.empty(chunk, dtype=np.float64)
        work = np.empty(chunk, dtype=np.float64)
        one, top, even = np.uint64(1), np.uint64(1 << 63), np.uint64(0xFFFFFFFFFFFFFFFE)
        inv = 1.0 / grid  # exact: L is a power of two
        kern = _staircase_kernel() if n >= MIN_VALUES else None  # module-level: picklable
        if kern is not None:  # raw addresses for the compiled chunk body (same words)
            centre = np.ascontiguousarray(centre, dtype=np.float64)
            (ta, va, sa, ma), (tb, vb, sb, mb) = tabs[0], tabs[-1]
            keep = (qtab_f, ta, va, tb, vb, width2)  # alive for the raw pointers below
            args = [words.ctypes.data, 0, len(tabs), keep[0].ctypes.data, ta.ctypes.data,
                    va.ctypes.data, int(sa), int(ma), tb.ctypes.data, vb.ctypes.data, int(sb),
                    int(mb), None if width2 is None else width2.ctypes.data, grid, 0, inv, 0]
        for start in range(0, n, chunk):
            c = min(chunk, n - start)
            fill_words(rng, words, nw * c)
            if kern is not None:
                args[1], args[14], args[16] = (c, centre.ctypes.data + 8 * start,
                                               out.ctypes.data + 8 * start)
                if kern(*args) == 0:
                    continue  # else (T >= 63 somewhere, p = 2^-63 per value): the reference
            a = words[:c]
            t1, t2, g, v, o = u1[:c], u2[:c], fl[:c], f1[:c], out[start : start + c]
            # T = trailing zeros of a (bit 63 is the sign; T >= 63 means "extend")
            np.negative(a, out=t1)
            np.bitwise_and(a, t1, out=t1)
            np.subtract(t1, one, out=t1)
            np.bitwise_count(t1, out=t1)
            if t1.max() >= 63:  # probability 2^-63 per draw: exact extension
                K = self.geo.q_from_words(rng, a & _LOW63_MASK) * self.period
                if K.max() >= (1 << 51):
                    raise PrecisionError("noise beyond the exactly representable range")
                np.multiply(K, grid, out=o)
            else:
                np.take(qtab_f, t1.view(np.int64), out=o, mode="wrap")
            for i, (thr2, vals, sh, mask) in enumerate(tabs):
                w = words[(i + 1) * c : (i + 2) * c]
                np.right_shift(w, sh, out=t1)  # 2·column + one extra bit ...
                np.bitwise_and(t1, even, out=t1)  # ... cleared: 2·column
                np.take(thr2, t1.view(np.int64), out=t2, mode="wrap")
                np.bitwise_and(w, mask, out=w)  # uniform below the column mass
                np.greater_equal(w, t2, out=g)  # take the alias?
                np.add(t1, g, out=t1)
                np.take(vals, t1.view(np.int64), out=v, mode="wrap")
                np.add(o, v, out=o)  # (K + 1/2)·L accumulates exactly
                if width2 is not None:  # uniform offset inside the block: low bits of w
                    np.take(width2, t1.view(np.int64), out=t2, mode="wrap")
                    np.bitwise_and(w, t2, out=t2)
                    np.multiply(t2.view(np.int64), grid, out=v)  # < 2^10: exact
                    np.add(o, v, out=o)
            np.bitwise_and(a, top, out=t1)  # sign bit of a, OR-ed into the positive float
            ov = o.view(np.uint64)
            np.bitwise_or(ov, t1, out=ov)
            x = xs[:c]
            np.multiply(centre[start : start + c], inv, out=x)  # exact
            round_half_up_inplace(x, work[:c])  # exact index floor(x/L + 1/2)
            np.multiply(x, grid, out=x)
            np.add(o, x, out=o)  # exact: multiples of L/2 below 2^53·L/2
        return out


def _joint_blocks(geo: RatioGeometric, S: int, G: int
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64], AliasTable]:
    """The joint period table: aligned blocks of up to 2^BLOCK_BITS cells of every step R
    (plateau cells j < G, then outer cells j >= G), block weight e^(−inner·R − extra)·width,
    quantised in units of 2^BLOCK_BITS.

    Weights in units of 2^BLOCK_BITS make every threshold a multiple of it, so the outcome
    depends only on the top 64 − BLOCK_BITS bits of the word and its low BLOCK_BITS bits are
    an independent uniform offset inside the block.  The units quantize_weights leaves
    over go to the largest remainders (a stable sort, as Python's ``sorted``).  Arrays
    instead of a loop per block: the same ``math.exp`` per step and part, the same float
    product with each width, the same integers."""
    parts = [(extra, aligned_blocks(lo, hi, 1 << BLOCK_BITS))  # the same every step
             for lo, hi, extra in ((0, G, 0.0), (G, S, geo.inner))]
    step_starts = np.array([a for _, blocks in parts for a, _ in blocks], dtype=np.int64)
    step_widths = np.array([w for _, blocks in parts for _, w in blocks], dtype=np.int64)
    counts = [len(blocks) for _, blocks in parts]
    exps = np.array([math.exp(-geo.inner * R - extra)
                     for R in range(geo.M) for extra, _ in parts])
    # exps runs over (R, part); each part's value repeats for that part's blocks
    weights = np.repeat(exps, counts * geo.M) * np.tile(step_widths.astype(np.float64), geo.M)
    starts = (np.arange(geo.M, dtype=np.int64)[:, None] * S + step_starts).reshape(-1)
    widths = np.tile(step_widths, geo.M)
    q = quantize_weights_array(weights / weights.max())
    if not isinstance(q, np.ndarray):  # one block holds all the mass (2^64): no rest
        return starts, widths, AliasTable([(x >> BLOCK_BITS) << BLOCK_BITS for x in q])
    scaled = q >> np.uint64(BLOCK_BITS)
    rest = (1 << (64 - BLOCK_BITS)) - exact_sum(scaled)
    order = np.argsort(-(q & np.uint64((1 << BLOCK_BITS) - 1)).astype(np.int64),
                       kind="stable")
    scaled[order[:rest]] += np.uint64(1)
    return starts, widths, AliasTable(scaled << np.uint64(BLOCK_BITS))


def _weights_of(table: AliasTable) -> NDArray[Any]:
    """The table's exact weights as uint64 (or as Python ints when one is 2^64)."""
    if table.columns <= 2 or table.mass == 1 << 64:
        return np.array(table.exact_weights(), dtype=object)
    return table.exact_weights_array()


def log_of_integers(w: NDArray[np.uint64]) -> NDArray[np.float64]:
    """``[math.log(x) for x in w.tolist()]`` as an array, with one ``math.log`` per distinct
    value (a cell table holds a handful of distinct weights): the same floats, since each
    is ``math.log`` of the same integer.  Every x must be > 0."""
    values, where = np.unique(w, return_inverse=True)
    return np.array([math.log(x) for x in values.tolist()])[where.reshape(-1)]


def _weighted_sum(p: NDArray[np.float64], v: NDArray[np.float64]) -> float:
    """Σ p_i·v_i by numpy's pairwise summation -- not ``np.dot``, whose BLAS splits long sums
    over threads (a result that depends on the machine's thread count, and threads that spin
    for tens of milliseconds on a busy machine at the first call of a process)."""
    return float(np.sum(p * v))


_LOW63_MASK = np.uint64((1 << 63) - 1)
BLOCK_BITS = 10  # joint table: cells grouped in aligned blocks of up to 2^10


def _window_max_min(x: NDArray[np.float64], w: int
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(max, min) of every window x[j : j + w], j = 0..len(x) − w, in O(len(x)) (van Herk /
    Gil-Werman: prefix extremes within blocks of w, suffix extremes within blocks, and each
    window spans the end of one block and the start of the next).  Exact: only comparisons."""
    n = x.size
    nb = -(-n // w)
    pad = nb * w - n
    out = []
    for op, fill in ((np.maximum, -np.inf), (np.minimum, np.inf)):
        y = np.concatenate([x, np.full(pad, fill)]).reshape(nb, w)
        pre = op.accumulate(y, axis=1).reshape(-1)
        suf = op.accumulate(y[:, ::-1], axis=1)[:, ::-1].reshape(-1)
        j = np.arange(n - w + 1)
        out.append(op(suf[j], pre[j + w - 1]))
    return out[0], out[1]


def aligned_blocks(lo: int, hi: int, max_width: int) -> list[tuple[int, int]]:
    """[lo, hi) as aligned power-of-two blocks (start % width == 0), in order."""
    out = []
    a = lo
    while a < hi:
        w = max_width if a == 0 else min(max_width, a & -a)
        while a + w > hi:
            w >>= 1
        out.append((a, w))
        a += w
    return out


def _interleaved(table: AliasTable, values: NDArray[np.float64]
                 ) -> tuple[NDArray[np.uint64], NDArray[np.float64], np.uint64, np.uint64]:
    """Alias table as thr2[2c] = thr2[2c+1] = threshold(c), vals[2c] = value(c),
    vals[2c+1] = value(alias(c)): outcome = vals[2c + (u >= thr2[2c])] (exactly the
    table's pmf: u < threshold keeps the column, as in :class:`AliasTable`)."""
    thr = table._thr
    alias = table._alias
    cols = np.arange(table.columns)
    padded = np.concatenate([np.asarray(values, dtype=np.float64),
                             np.zeros(table.columns - len(values))])  # padding: never drawn
    thr2 = np.repeat(thr, 2)
    vals = np.empty(2 * table.columns, dtype=np.float64)
    vals[0::2] = padded[cols]
    vals[1::2] = padded[alias]
    return (thr2, vals, np.uint64(64 - table.bits - 1), np.uint64(table.mass - 1))
