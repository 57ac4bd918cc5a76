"""Exact sampler for the truncated-and-normalised discrete Laplace on a grid inside a domain.

Outputs are the half-offset grid points ``y_j = (j + 1/2) L`` that lie in the domain S
(L = 2^k).  The true value x is mapped exactly to the centre index ``c = floor(x/L + 1/2)``;
a cell j is at distance ``k = j − c`` (right, j >= c) or ``k = c − 1 − j`` (left) cells.

Target law (the "ideal" used for calibration)::

    P_true(j | c) = 2^(−k/M) / z(c),     j in J = {j : y_j in S},

a discrete Laplace with scale M·L/ln2 truncated to the domain and renormalised.

What is sampled (and known exactly): J, seen from c, is a list of *segments* of consecutive
cells on one side, at offsets [p, p+n) (n may be infinite).  Inside a segment the offset is
``k' = i·M + r`` with the block weights W_r ∝ 2^(−r/M) (64-bit integers, the table of
:class:`~dpnoise.exact.geometric.BlockGeometric`), so with n = m·M + t the cell (i, r) exists
iff i < m_r, m_r = m + 1 (r < t) or m (r >= t).  The structural law is

    P*(j | c) ∝ 2^(−p/M) · 2^(−i) · W_r,

sampled in (at most) three exact stages, each from uniform 64-bit words:

1. segment choice (unions whose nearest-to-farthest segment factor 2^(−p/M) drops below
   z/2^12, i.e. a piece ~11 blocks away; otherwise all segments share the stage-2 table): a
   chain of "continue" decisions with probability 2^(−n_s)·β_s/2^40 (β_s a 40-bit
   integer), read from one word: ``Q' >= n_s`` on the trailing zeros of its low 24 bits
   (extended with fresh words when those 24 bits are all zero, whatever the centre) and
   ``top40 < β_s``.  Far segments have exponentially small but exactly represented
   probability.
2. the pair (segment, r) from a dyadic table: boundaries B_e (uint64) of the cumulative law
   of (segment, r) with weight ∝ W_r·(1 − 2^(−m_r)) (i.e. the mass of all cells with that r);
   one word v gives the entry e with B_e <= v < B_{e+1}, found with a guide table (each
   bucket of the top bits holds at most one boundary) -- exact inverse-CDF, no loop.
3. i = Q mod m_r with Q = trailing zeros of one word (exact Geometric(1/2), extended on the
   2^-64 event of a zero word): P(i) = 2^(−i−1)/(1 − 2^(−m_r)), exactly the truncated law.

The number of words per draw is fixed by the domain (2, plus one per chain decision), never by
the true value.  :meth:`CentreSampler.logpmf` returns the exact log-probabilities of what is
sampled (from the integer boundaries themselves); the distortion ρ against P_true is bounded by
:func:`distortion_bound` for every centre, which the calibration adds twice to the loss.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from numpy.typing import NDArray
from scipy.ndimage import maximum_filter1d, minimum_filter1d

from ..errors import ParameterError, PrecisionError
from ..randomness import RandomSource, fill_words
from .alias import TOTAL

LN2 = math.log(2.0)
_TWO64 = float(TOTAL)
_INF_MOD = np.int64(1 << 62)
_LOW24 = np.uint64((1 << 24) - 1)
_CHUNK = 1 << 16
WINDOW_SCALES = 37.0  # beyond 37 scales from every endpoint, z(c) is constant to 2e-16
MAX_GUIDE_BITS = 22


# ------------------------------------------------------------------ block weights
@dataclass(frozen=True)
class BlockWeights:
    """Integer weights W_r ∝ 2^(−r/M), r < M, summing to exactly 2^64."""

    M: int
    W: tuple[int, ...]

    @cached_property
    def cum(self) -> NDArray[np.float64]:
        """C_r / 2^64 for r = 0..M (float; C_M = 1)."""
        acc, out = 0, [0.0]
        for w in self.W:
            acc += w
            out.append(acc / TOTAL)
        return np.array(out)

    @cached_property
    def cum_int(self) -> tuple[int, ...]:
        acc, out = 0, [0]
        for w in self.W:
            acc += w
            out.append(acc)
        return tuple(out)

    @property
    def w_min(self) -> int:
        return min(self.W)

    @cached_property
    def rho_w(self) -> float:
        """max_r |ln(W_r / (2^64 · 2^(−r/M) / B))|: shape distortion of the 64-bit weights."""
        r = np.arange(self.M, dtype=np.float64)
        ideal = np.exp2(-r / self.M)
        ideal /= ideal.sum()
        lw = np.log(np.array(self.W, dtype=np.float64) / _TWO64)
        return float(np.max(np.abs(lw - np.log(ideal)))) + 1e-15


@lru_cache(maxsize=32)
def block_weights(M: int) -> BlockWeights:
    """Vectorised largest-remainder quantisation of 2^(−r/M) to integers summing to 2^64."""
    if not isinstance(M, int) or M < 1:
        raise ParameterError(f"block length must be an integer >= 1, got {M!r}")
    r = np.arange(M, dtype=np.float64)
    p = np.exp2(-r / M)
    p /= p.sum()
    base = np.floor(p * 2.0**64)
    ints = [int(x) for x in base]
    rest = TOTAL - sum(ints)
    order = np.argsort(-(p * 2.0**64 - base), kind="stable")
    q, extra = divmod(rest, M)
    ints = [x + q for x in ints]
    for i in order[:extra].tolist():
        ints[i] += 1
    if sum(ints) != TOTAL or min(ints) <= 0:  # pragma: no cover
        raise AssertionError("block weight quantisation failed")
    return BlockWeights(M, tuple(ints))


def distortion_bound(M: int, n_decisions: int) -> float:
    """Upper bound on max_{c, j} |ln P_sampled(j|c) − ln P_true(j|c)| (module docstring).

    * table stage: boundaries are rint(2^64·F) with |F̃ − F| <= 2^-48 (float evaluation of the
      analytic cumulative law) -> each entry width is off by <= 2^17 units, and every entry has
      probability >= W_min/(4·2^64) (intervals, half-lines; unions: >= W_min/(2^12·2^64), the
      condition under which :class:`CentreSampler` merges segments into one table), so the
      relative error is <= 2^19/W_min (unions: 2^29/W_min);
    * chain stage: a continue probability is off by <= 2^-39 + 1e-12 relative; a stop
      probability is >= W_min/(5·2^64), so its relative error is <= (2^-39 + 1e-12)·5·2^64/W_min;
    * shape: the structural law P* differs from P_true by the block-weight distortion on the
      unnormalised weights, twice that after normalisation.
    """
    bw = block_weights(M)
    wmin = float(bw.w_min)
    rho_tab = 1.01 * 2.0**19 / wmin + 1.01 / wmin  # (+ the r stage of ConvexSampler)
    if n_decisions:  # unions: one table may hold segments with factor 2^(−p/M) >= z/2^12
        rho_tab *= 2.0**10
    rho_cont = 2.0**-39 + 1e-12
    rho_chain = 0.0
    if n_decisions:
        rho_chain = 1.01 * rho_cont * 5 * _TWO64 / wmin + n_decisions * rho_cont * 1.01
    return rho_tab + rho_chain + 2 * bw.rho_w + 1e-12


# ------------------------------------------------------------------ grid geometry
def _half_up(q: float) -> float:
    """floor(q + 1/2) exactly (the float sum q + 0.5 can round up across an integer)."""
    i = math.floor(q)
    return float(i + (q - i >= 0.5))


@dataclass(frozen=True)
class GridDomain:
    """Cells j (y_j = (j + 1/2)L) inside each piece, and the reachable centre indices."""

    grid: float
    cells: tuple[tuple[float, float], ...]    # (jlo, jhi) per piece, ±inf for unbounded
    centres: tuple[tuple[float, float], ...]  # (clo, chi) per piece, ±inf for unbounded

    @classmethod
    def build(cls, pieces: tuple[tuple[float, float], ...], grid: float) -> GridDomain:
        cells, centres = [], []
        for lo, hi in pieces:
            # exact: ceil(q − 1/2) = −floor(−q + 1/2), floor(q − 1/2) = floor(q + 1/2) − 1
            jlo = -math.inf if math.isinf(lo) else -_half_up(-lo / grid)
            jhi = math.inf if math.isinf(hi) else _half_up(hi / grid) - 1.0
            if jlo > jhi:
                raise ParameterError(f"domain piece [{lo!r}, {hi!r}] holds no grid point of step "
                                     f"{grid!r}; pass a finer grid")
            clo = -math.inf if math.isinf(lo) else _half_up(lo / grid)
            chi = math.inf if math.isinf(hi) else _half_up(hi / grid)
            for t in (jlo, jhi, clo, chi):
                if math.isfinite(t) and abs(t) >= 2.0**50:
                    raise PrecisionError("domain end too large for the grid step; pass a coarser "
                                         "grid")
            cells.append((jlo, jhi))
            centres.append((clo, chi))
        return cls(grid, tuple(cells), tuple(centres))

    @property
    def span(self) -> float:
        """Largest distance between two reachable centres."""
        return self.centres[-1][1] - self.centres[0][0]

    def segments(self, c: int) -> list[tuple[int, int, float]]:
        """(side, p, n) of the cells seen from centre c, sorted by p (n may be inf)."""
        out: list[tuple[int, int, float]] = []
        for jlo, jhi in self.cells:
            if jhi < c:
                out.append((-1, int(c - 1 - jhi), jhi - jlo + 1))
            elif jlo >= c:
                out.append((+1, int(jlo - c), jhi - jlo + 1))
            else:
                if c - jlo > 0:
                    out.append((-1, 0, c - jlo))
                if jhi - c + 1 > 0:
                    out.append((+1, 0, jhi - c + 1))
        out.sort(key=lambda s: (s[1], s[0]))
        return out

    def log_z(self, c: NDArray[np.float64], M: int) -> NDArray[np.float64]:
        """ln z(c), z(c) = Σ_j 2^(−k/M) (1 − 2^(−1/M)), for float centre indices c."""
        lam = LN2 / M
        terms = []
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            for jlo, jhi in self.cells:
                # cells left of c: [jlo, min(jhi, c − 1)]
                top = np.minimum(jhi, c - 1)
                n = top - jlo + 1
                p = c - 1 - top
                t = -p * lam + np.log(-np.expm1(-n * lam))
                terms.append(np.where(n > 0, t, -np.inf))
                # cells right of c: [max(jlo, c), jhi]
                bot = np.maximum(jlo, c)
                n = jhi - bot + 1
                p = bot - c
                t = -p * lam + np.log(-np.expm1(-n * lam))
                terms.append(np.where(n > 0, t, -np.inf))
        stack = np.stack(terms)
        mx = np.max(stack, axis=0)
        return mx + np.log(np.sum(np.exp(stack - mx), axis=0))

    def reachable_cells(self, j: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Cells that lie in the domain."""
        out = np.zeros(np.shape(j), dtype=bool)
        for jlo, jhi in self.cells:
            out |= (j >= jlo) & (j <= jhi)
        return out

    def reachable(self, c: NDArray[np.float64]) -> NDArray[np.bool_]:
        out = np.zeros(c.shape, dtype=bool)
        for clo, chi in self.centres:
            out |= (c >= clo) & (c <= chi)
        return out


# --------------------------------------------------------------- loss of P_true
@dataclass(frozen=True)
class LossBound:
    """Bound on the loss of the sampled pmf: shift·ln2/M + G + 2ρ (+ tail, allowance)."""

    total: float
    shift_term: float
    normaliser_term: float
    distortion: float
    metric_rate: float = math.nan        # per-cell loss rate bound (metric mode)
    metric_gap_ratio: float = math.nan   # worst gap-pair loss / gap length (cells)


def _windows(gd: GridDomain, radius: int) -> list[tuple[int, int]]:
    ends = []
    for (clo, chi) in gd.centres:
        for e in (clo, chi):
            if math.isfinite(e):
                ends.append(int(e))
    hull_lo, hull_hi = gd.centres[0][0], gd.centres[-1][1]
    ivs = []
    for e in sorted(ends):
        a = max(e - radius, hull_lo)
        b = min(e + radius, hull_hi)
        a, b = int(a), int(b)
        if ivs and a <= ivs[-1][1] + 1:
            ivs[-1] = (ivs[-1][0], max(ivs[-1][1], b))
        else:
            ivs.append((a, b))
    return ivs


def window_cells(gd: GridDomain, M: int, shift: int) -> int:
    """Number of centre cells :func:`loss_bound` scans for block length ``M`` (its cost)."""
    radius = math.ceil(WINDOW_SCALES * M / LN2) + 2 * shift + 2
    return sum(b - a + 1 for a, b in _windows(gd, radius))


def loss_bound(gd: GridDomain, M: int, shift: int, *, metric_cells: float | None = None,
               n_decisions: int = 0) -> LossBound:
    """Upper bound on the worst-case loss of the sampled pmf for centres <= ``shift`` apart.

    For the ideal P_true (Lemma A on the lattice): ell(c, c') <= |c − c'|·ln2/M +
    |ln z(c) − ln z(c')|, exact for cells beyond both centres.  The normaliser term is
    evaluated at every reachable centre within 37 scales (+ 2·shift cells) of a finite endpoint
    with sliding-window extremes; beyond, z(c) is within 2·2^(−37 M/ln2 / M)·... of its
    full-line value, which is added as ``tail``.  ``metric_cells`` (= Δ/L) also bounds the
    per-cell rate and gap pairs for the metric guarantee.
    """
    lam = LN2 / M
    s_eff = int(min(shift, gd.span)) if math.isfinite(gd.span) else shift
    radius = math.ceil(WINDOW_SCALES * M / LN2) + 2 * shift + 2
    tail = 4 * math.exp(-WINDOW_SCALES) + 1e-15
    rate = 2 * tail
    # For c < c' = c + d with Δz = g(c) − g(c'), h± = g ± c·λ, A = h−(c) − h−(c') = dλ + Δz and
    # B = h+(c') − h+(c) = dλ − Δz, the exact lattice loss satisfies
    #   ell <= max(R·A, L·B, max(A, B) − λ),
    # R = [a cell lies right of c'], L = [a cell lies left of c] (cells beyond a centre give
    # |dλ ± Δz|, cells between give <= (d − 1)λ + |Δz|).  R fails only for c' = jmax + 1 and L
    # only for c = jmin, which is applied by shifting h− / h+ there by λ.
    wins = _windows(gd, radius)
    hull = (gd.centres[0][0], gd.centres[-1][1])
    covered = bool(wins) and math.isfinite(hull[0]) and math.isfinite(hull[1]) and all(
        w2[0] <= w1[1] + 1 for w1, w2 in itertools.pairwise(wins)) and (
        wins[0][0] <= hull[0] and wins[-1][1] >= hull[1])
    # far from every endpoint (if such centres exist) the loss is <= d·λ + 2·tail
    best = -math.inf if covered else 2 * tail + s_eff * lam
    n = s_eff + 1
    jmin, jmax = gd.cells[0][0], gd.cells[-1][1]
    for a, b in wins:
        c = np.arange(a, b + 1, dtype=np.float64)
        ok = gd.reachable(c)
        g = gd.log_z(c, M)
        if s_eff >= 1 and c.size > 1:
            hp = g + (c - a) * lam
            hm = g - (c - a) * lam
            hm_far = np.where(c == jmax + 1, hm + lam, hm)   # as c' in A
            hp_base = np.where(c == jmin, hp + lam, hp)      # as c in B
            pad = n // 2 + 1
            fmax = maximum_filter1d(np.concatenate([np.where(ok, hp, -np.inf),
                                                    np.full(pad, -np.inf)]),
                                    size=n, mode="constant", cval=-np.inf)[n // 2: n // 2 + c.size]
            fmin = minimum_filter1d(np.concatenate([np.where(ok, hm_far, np.inf),
                                                    np.full(pad, np.inf)]),
                                    size=n, mode="constant", cval=np.inf)[n // 2: n // 2 + c.size]
            cand = np.where(ok, np.maximum(fmax - hp_base, hm - fmin), -np.inf)
            best = max(best, float(np.max(cand)))
        if metric_cells is not None and c.size > 1:
            both = ok[1:] & ok[:-1]
            if np.any(both):
                rate = max(rate, float(np.max(np.abs(np.diff(g))[both])))
    shift_term = s_eff * lam
    G = best - shift_term
    rho = distortion_bound(M, n_decisions)
    total = shift_term + G + 2 * rho + 1e-12
    gap_ratio = math.nan
    if metric_cells is not None:
        gap_ratio = 0.0
        for (_, chi), (clo, _) in itertools.pairwise(gd.centres):
            d = clo - chi
            gz = gd.log_z(np.array([chi, clo], dtype=np.float64), M)
            gap_ratio = max(gap_ratio, (d * lam + abs(float(gz[1] - gz[0])) + 2 * rho) / d)
        rate = lam + rate + 2 * rho + 1e-12
    return LossBound(total, shift_term, G, rho, rate, gap_ratio)


# ------------------------------------------------------------------ dyadic table
class DyadicTable:
    """Exact inverse-CDF sampling of entries with integer boundaries 0 < B_1 < ... < 2^64."""

    def __init__(self, boundaries: NDArray[np.uint64]) -> None:
        B = np.asarray(boundaries, dtype=np.uint64)
        if B.size and (np.any(B[1:] <= B[:-1]) or B[0] == 0):
            raise PrecisionError("table boundaries must be strictly increasing and > 0")
        self.B = B
        self.size = B.size + 1
        widths = np.diff(np.concatenate([[np.uint64(0)], B]))
        last = TOTAL - int(B[-1]) if B.size else TOTAL
        min_w = min(int(widths.min()) if widths.size else TOTAL, last)
        bits = max(1, 65 - min_w.bit_length()) if B.size else 1
        self.bits = bits
        self.guided = bits <= MAX_GUIDE_BITS and B.size > 0
        if self.guided:
            shift = 64 - bits
            K = 1 << bits
            starts = np.arange(K, dtype=np.uint64) << np.uint64(shift)
            # g_k = #{B <= start_k} = #{(B − 1) >> shift < k}: a counting pass, no search
            counts = np.bincount(((B - np.uint64(1)) >> np.uint64(shift)).astype(np.intp),
                                 minlength=K)
            if counts.max() > 1:  # pragma: no cover - excluded by the choice of bits
                raise AssertionError("guide bucket holds two boundaries")
            g = np.zeros(K, dtype=np.int64)
            np.cumsum(counts[:-1], out=g[1:])
            nxt = np.minimum(g, B.size - 1)
            has = (g < B.size) & ((B[nxt] - starts) < np.uint64(1 << shift))
            thr = np.where(has, B[nxt] - starts, np.uint64(1 << shift))
            self._g = g.astype(np.int64)
            self._thr = thr.astype(np.uint64)
            self._shift = np.uint64(shift)
            self._mask = np.uint64((1 << shift) - 1)

    def lookup(self, v: NDArray[np.uint64]) -> NDArray[np.int64]:
        """Entry index of each word: #{B_e <= v}."""
        if not self.guided:
            return np.searchsorted(self.B, v, side="right").astype(np.int64)
        bucket = (v >> self._shift).astype(np.intp)
        e = self._g[bucket]
        e += (v & self._mask) >= self._thr[bucket]
        return e

    def log_prob(self) -> NDArray[np.float64]:
        """ln P(entry) exactly from the integer widths (float64-rounded)."""
        ints = [0, *[int(x) for x in self.B], TOTAL]
        widths = np.array([float(b - a) for a, b in itertools.pairwise(ints)])
        return np.log(widths) - 64 * LN2


def _boundaries(F: NDArray[np.float64]) -> NDArray[np.uint64]:
    """Interior boundaries rint(2^64 F) (F strictly inside (0, 1))."""
    x = np.rint(F * 2.0**64)
    if x.size and (x.min() <= 0 or x.max() >= 2.0**64):
        raise PrecisionError("an entry's probability is too small for a 64-bit table")
    return x.astype(np.uint64)


def _geo_sum(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """Σ_{i<m} 2^(−i) = 2(1 − 2^(−m)) (m may be inf)."""
    with np.errstate(over="ignore"):
        return 2.0 * -np.expm1(-m * LN2)


# ------------------------------------------------------------------ per-centre sampler
class CentreSampler:
    """Exact sampler and exact pmf for one centre index c (see the module docstring)."""

    def __init__(self, gd: GridDomain, M: int, c: int) -> None:
        self.gd, self.M, self.c = gd, M, int(c)
        bw = block_weights(M)
        segs = gd.segments(self.c)
        if not segs:
            raise ParameterError("the domain holds no grid cell")  # pragma: no cover
        self.segs = segs
        cum = bw.cum
        # per segment: m (full blocks), t (remainder), low/high masses with r-entries
        self._seg_info = []
        for side, p, n in segs:
            if math.isinf(n):
                m, t = math.inf, 0
            else:
                m, t = divmod(int(n), M)
            self._seg_info.append((side, p, m, t))
        # One table for all segments when every entry keeps probability >= W_min/(2^12·2^64)
        # (segments within ~11 blocks of c; the union distortion bound allows this), else a
        # chain of exact decisions, one group per segment (far pieces: tiny probabilities).
        self._factor = [2.0 ** (-p / M) for _, p, _ in segs]
        z = sum(f * (float(_geo_sum(np.float64(m + 1))) * float(cum[t])
                     + float(_geo_sum(np.float64(m))) * (TOTAL - bw.cum_int[t]) / _TWO64)
                for f, (_s, _p, m, t) in zip(self._factor, self._seg_info, strict=True))
        chained = any(p > 0 for _, p, _ in segs) and min(self._factor) < z / 2.0**12 * 1.01
        self.groups = [[i] for i in range(len(segs))] if chained else [list(range(len(segs)))]
        # stage 1: chain over groups (log masses of P*)
        log_mass = []
        for grp in self.groups:
            vals = []
            for si in grp:
                _side, p, m, t = self._seg_info[si]
                ct = float(cum[t])
                hi_part = (TOTAL - bw.cum_int[t]) / _TWO64
                mass = (float(_geo_sum(np.float64(m + 1))) * ct
                        + float(_geo_sum(np.float64(m))) * hi_part)
                vals.append(-p / M * LN2 + math.log(mass))
            mx = max(vals)
            log_mass.append(mx + math.log(sum(math.exp(v - mx) for v in vals)))
        self.n_decisions = len(self.groups) - 1
        self._chain: list[tuple[int, int]] = []  # (n_s, beta_s)
        for s in range(self.n_decisions):
            rest = log_mass[s + 1:]
            mx = max(rest)
            lse_rest = mx + math.log(sum(math.exp(v - mx) for v in rest))
            allv = log_mass[s:]
            mx2 = max(allv)
            lse_all = mx2 + math.log(sum(math.exp(v - mx2) for v in allv))
            l2 = min(0.0, (lse_rest - lse_all) / LN2)
            n_s = math.floor(-l2)
            beta = 2.0 ** (l2 + n_s)
            b_int = min(1 << 40, max(1, round(beta * 2.0**40)))
            self._chain.append((n_s, b_int))
        # stage 2: one dyadic table per group over (segment, r)
        self._tables: list[DyadicTable] = []
        self._entry_seg: list[NDArray[np.int64]] = []
        self._entry_r: list[NDArray[np.int64]] = []
        self._entry_index: dict[int, NDArray[np.int64]] = {}
        self._entry_mod: list[NDArray[np.int64]] = []
        self._entry_base2: list[NDArray[np.int64]] = []
        self._entry_step2: list[NDArray[np.int64]] = []
        r_all = np.arange(M, dtype=np.int64)
        for grp in self.groups:
            F_parts, segs_e, rs_e, mods = [], [], [], []
            offset = 0.0
            masses = []
            single = len(grp) == 1
            for si in grp:
                _side, _p, m, t = self._seg_info[si]
                f = 1.0 if single else self._factor[si]
                ga, gb = float(_geo_sum(np.float64(m + 1))), float(_geo_sum(np.float64(m)))
                ct = float(cum[t])
                masses.append(f * (ga * ct + gb * (TOTAL - bw.cum_int[t]) / _TWO64))
            total = sum(masses)
            for si, mass in zip(grp, masses, strict=True):
                side, p, m, t = self._seg_info[si]
                f = 1.0 if single else self._factor[si]
                ga, gb = f * float(_geo_sum(np.float64(m + 1))), f * float(
                    _geo_sum(np.float64(m)))
                ct = float(cum[t])
                # cumulative (unnormalised) mass before entry r of this segment
                before = np.where(r_all <= t, ga * cum[:-1], ga * ct + gb * (cum[:-1] - ct))
                m_r = np.where(r_all < t, m + 1, m) if math.isfinite(m) else np.full(M, np.inf)
                keep = m_r > 0
                F_parts.append((offset + before[keep]) / total)
                segs_e.append(np.full(int(keep.sum()), si, dtype=np.int64))
                rs_e.append(r_all[keep])
                mods.append(np.where(np.isinf(m_r[keep]), _INF_MOD,
                                     np.nan_to_num(m_r[keep], posinf=0).astype(np.int64)))
                offset += mass
            F = np.concatenate(F_parts)[1:]  # drop the leading 0
            self._tables.append(DyadicTable(_boundaries(F)))
            es, er = np.concatenate(segs_e), np.concatenate(rs_e)
            self._entry_seg.append(es)
            self._entry_r.append(er)
            self._entry_mod.append(np.concatenate(mods))
            side_e = np.array([si[0] for si in self._seg_info], dtype=np.int64)[es]
            p_e = np.array([si[1] for si in self._seg_info], dtype=np.int64)[es]
            # cell of (i = 0, r): right j = c + p + r, left j = c − 1 − p − r
            base = np.where(side_e > 0, self.c + p_e + er, self.c - 1 - p_e - er)
            self._entry_base2.append(2 * base + 1)
            self._entry_step2.append(side_e * 2 * M)

    @cached_property
    def _seg_group(self) -> NDArray[np.int64]:
        out = np.empty(len(self.segs), dtype=np.int64)
        for gi, grp in enumerate(self.groups):
            out[grp] = gi
        return out

    @cached_property
    def _seg_entry(self) -> NDArray[np.int64]:
        """(segment, r) -> entry index in its group's table (−1: no cell)."""
        out = np.full((len(self.segs), self.M), -1, dtype=np.int64)
        for gi in range(len(self.groups)):
            out[self._entry_seg[gi], self._entry_r[gi]] = np.arange(self._entry_seg[gi].size)
        return out

    # ------------------------------------------------------------ exact pmf
    def log_group_probs(self) -> NDArray[np.float64]:
        """ln P(group) exactly from the chain's integers."""
        out = np.empty(len(self.groups))
        acc = 0.0
        for s in range(len(self.groups)):
            if s < self.n_decisions:
                n_s, b = self._chain[s]
                log_cont = -n_s * LN2 + math.log(b) - 40 * LN2
                if n_s == 0:
                    log_stop = (math.log((1 << 40) - b) - 40 * LN2) if b < (1 << 40) else -math.inf
                else:
                    log_stop = math.log1p(-math.exp(log_cont))
                out[s] = acc + log_stop
                acc += log_cont
            else:
                out[s] = acc
        return out

    def logpmf(self, j: NDArray[np.int64]) -> NDArray[np.float64]:
        """Exact ln P(cell j | c) of the sampled law (−inf off the domain)."""
        j = np.asarray(j, dtype=np.int64)
        out = np.full(j.shape, -np.inf)
        right = j >= self.c
        k = np.where(right, j - self.c, self.c - 1 - j)
        lg = self.log_group_probs()
        tabs = [t.log_prob() for t in self._tables]
        M = self.M
        for si, (side, p, n) in enumerate(self.segs):
            sel = (right == (side > 0)) & (k >= p) & (k < p + n)
            if not np.any(sel):
                continue
            kk = k[sel] - p
            i, r = np.divmod(kk, M)
            gi = int(self._seg_group[si])
            e = self._seg_entry[si, r]
            mod = self._entry_mod[gi][e]
            finite = mod < _INF_MOD
            with np.errstate(divide="ignore"):
                trunc = np.where(finite, np.log1p(-np.exp2(-mod.astype(np.float64))), 0.0)
            out[sel] = lg[gi] + tabs[gi][e] - (i + 1) * LN2 - trunc
        return out

    # ------------------------------------------------------------ sampling
    @property
    def words_per_draw(self) -> int:
        return 2 + self.n_decisions

    def sample_values(self, rng: RandomSource, n: int, grid: float) -> NDArray[np.float64]:
        """n releases (2j + 1)·grid/2 (float64, exact)."""
        if self.n_decisions == 0 and self._tables[0].guided:
            return self._sample_fast(rng, n, grid)
        half = self.sample_half(rng, n)
        if half.size and np.max(np.abs(half)) >= (1 << 53):
            raise PrecisionError("release fell outside the exactly representable range")
        return half * (grid / 2)

    def sample_half(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        """n draws of 2j + 1 (the output is (2j + 1)·L/2)."""
        if self.n_decisions == 0 and self._tables[0].guided:
            return self._sample_fast(rng, n)
        out = np.empty(n, dtype=np.int64)
        nd = self.n_decisions
        for start in range(0, n, _CHUNK):
            cnt = min(_CHUNK, n - start)
            words = rng.words((2 + nd) * cnt)
            if nd:
                group = self._chain_choice(rng, words[: nd * cnt].reshape(nd, cnt))
            v = words[nd * cnt:(nd + 1) * cnt]
            qw = words[(nd + 1) * cnt:]
            q = _geometric(rng, qw)
            if nd:
                h = np.empty(cnt, dtype=np.int64)
                for gi in range(len(self.groups)):
                    sel = group == gi
                    h[sel] = self._finish(gi, v[sel], q[sel])
            else:
                h = self._finish(0, v, q)
            out[start:start + cnt] = h
        return out

    def _sample_fast(self, rng: RandomSource, n: int, grid: float | None = None
                     ) -> NDArray[np.int64] | NDArray[np.float64]:
        """Single-table kernel (intervals, half-lines): two words per draw, cache-sized chunks,
        preallocated buffers; same law as the generic path.  With ``grid`` the result is the
        release (2j + 1)·grid/2 in float64 (exact: |2j + 1| < 2^53 is checked per chunk)."""
        tab = self._tables[0]
        g, thr = tab._g, tab._thr
        mods, base2, step2 = self._entry_mod[0], self._entry_base2[0], self._entry_step2[0]
        cls64, lut, limit = self._fast_consts
        out = np.empty(n, dtype=np.float64 if grid is not None else np.int64)
        chunk = min(n, 1 << 14) if n > 0 else 1
        words = np.empty(2 * chunk + 8, dtype=np.uint64)
        t1 = np.empty(chunk, dtype=np.uint64)
        t2 = np.empty(chunk, dtype=np.uint64)
        e = np.empty(chunk, dtype=np.int64)
        q = np.empty(chunk, dtype=np.int64)
        h = np.empty(chunk, dtype=np.int64)
        ge = np.empty(chunk, dtype=bool)
        one = np.uint64(1)
        for start in range(0, n, chunk):
            c = min(chunk, n - start)
            fill_words(rng, words, 2 * c)
            v, qw = words[:c], words[c:2 * c]
            a1, a2, E, Q, H, GE = t1[:c], t2[:c], e[:c], q[:c], h[:c], ge[:c]
            # entry: guide bucket from the top bits, one threshold compare in the bucket
            np.right_shift(v, tab._shift, out=a1)
            np.take(g, a1.view(np.int64), out=E)
            np.take(thr, a1.view(np.int64), out=a2)
            np.bitwise_and(v, tab._mask, out=a1)
            np.greater_equal(a1, a2, out=GE)
            np.add(E, GE, out=E)
            # Q = trailing zeros of qw (a zero word gives 64 and is extended below)
            np.negative(qw, out=a1)
            np.bitwise_and(qw, a1, out=a1)
            np.subtract(a1, one, out=a1)
            Q[:] = np.bitwise_count(a1)
            if Q.max() >= 64:  # probability 2^-64 per draw: exact slow path
                Q[:] = np.remainder(_geometric(rng, qw), mods[E])
            else:
                np.take(cls64, E, out=H)
                np.add(H, Q, out=H)
                np.take(lut, H, out=Q)
            if grid is not None and Q.max() * 2 * self.M >= limit:
                raise PrecisionError("release fell outside the exactly representable range")
            np.take(step2, E, out=H)
            np.multiply(H, Q, out=H)
            np.add(H, base2[E], out=H)
            if grid is None:
                out[start:start + c] = H
            else:
                np.multiply(H, grid / 2, out=out[start:start + c])
        return out

    @cached_property
    def _fast_consts(self) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
        """Per-sampler constants of :meth:`_sample_fast`, built once (not per call): i = Q mod
        m_r through a small lookup table (class of each entry's modulus x 64 + Q), and the
        largest |2j + 1| base."""
        mods, base2 = self._entry_mod[0], self._entry_base2[0]
        classes, cls_of = np.unique(mods, return_inverse=True)
        cls64 = (cls_of.astype(np.int64) * 64).reshape(-1)
        qs = np.arange(64, dtype=np.int64)
        lut = np.concatenate([np.remainder(qs, m) for m in classes.tolist()])
        return cls64, lut, (1 << 53) - int(np.abs(base2).max())

    def _finish(self, gi: int, v: NDArray[np.uint64], q: NDArray[np.int64]) -> NDArray[np.int64]:
        e = self._tables[gi].lookup(v)
        i = np.remainder(q, self._entry_mod[gi][e])
        return self._entry_base2[gi][e] + self._entry_step2[gi][e] * i

    def _chain_choice(self, rng: RandomSource, w: NDArray[np.uint64]) -> NDArray[np.int64]:
        nd, cnt = w.shape
        low = w & _LOW24
        top = w >> np.uint64(24)
        # Q' = trailing zeros of the low 24 bits, extended with fresh words when they are 0
        qext = np.zeros(w.shape, dtype=np.int64)
        z = low == 0
        if np.any(z):  # probability 2^-24 per decision, whatever the centre
            idx = np.flatnonzero(z.reshape(-1))
            qext.reshape(-1)[idx] = 24 + _geometric(rng, rng.words(idx.size))
        group = np.full(cnt, nd, dtype=np.int64)
        undecided = np.ones(cnt, dtype=bool)
        for s in range(nd):
            n_s, b = self._chain[s]
            if n_s == 0:
                geo_ok = np.ones(cnt, dtype=bool)
            elif n_s < 24:
                geo_ok = (low[s] & np.uint64((1 << n_s) - 1)) == 0
            else:
                geo_ok = z[s] & (qext[s] >= n_s)
            cont = geo_ok & (top[s] < np.uint64(b)) if b < (1 << 40) else geo_ok
            stop = undecided & ~cont
            group[stop] = s
            undecided &= cont
        return group


def _geometric(rng: RandomSource, w: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Exact Geometric(1/2) (P(q) = 2^-(q+1)) from trailing zeros; a zero word continues."""
    w = w.copy()
    q = np.zeros(w.shape, dtype=np.int64)
    zero = w == 0
    while np.any(zero):  # probability 2^-64 per element
        idx = np.flatnonzero(zero)
        q[idx] += 64
        w[idx] = rng.words(idx.size)
        zero = w == 0
    lowest = w & (~w + np.uint64(1))
    q += np.bitwise_count(lowest - np.uint64(1)).astype(np.int64)
    return q


# --------------------------------------------------- per-element sampler (convex)
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def _mulhi(a: NDArray[np.uint64], b: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """floor(a·b / 2^64) exactly, elementwise, from 32-bit halves."""
    a0, a1 = a & _M32, a >> _S32
    b0, b1 = b & _M32, b >> _S32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _S32) + (p01 & _M32) + (p10 & _M32)
    return p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32)


@lru_cache(maxsize=16)
def _block_table_guide(M: int) -> DyadicTable:
    """Inverse-CDF guide over the block weights: entry r for C_r <= v < C_{r+1}."""
    bw = block_weights(M)
    return DyadicTable(np.array(bw.cum_int[1:M], dtype=np.uint64))


class ConvexSampler:
    """Exact per-element sampler for an interval / half-line / the line (no per-centre table).

    Each true value has its own centre; per draw (three words):

    1. category (side, low r < t | high r >= t) from one word against three 64-bit thresholds
       rint(2^64·F) of the cumulative category masses (low = G(m+1)·C_t, high = G(m)·(2^64−C_t),
       G(m) = 2(1 − 2^(−m)), n = m·M + t cells on that side);
    2. r from one word w: v = lo + floor(w·R/2^64) with [lo, lo+R) = [0, C_t) or [C_t, 2^64),
       then the block table's inverse CDF (guide table) -- exactly
       P(r) = (ceil((C_{r+1}−lo)2^64/R) − ceil((C_r−lo)2^64/R)) / 2^64;
    3. i = Q mod m_r from a geometric word, as in :class:`CentreSampler`.

    Same target law and the same distortion bound as the per-centre tables (the category stage
    is the table stage with four entries; the r stage adds <= 1/W_min relative error).
    """

    def __init__(self, gd: GridDomain, M: int) -> None:
        if len(gd.cells) != 1:
            raise ParameterError("ConvexSampler needs a single-piece domain")
        self.gd, self.M = gd, M
        bw = block_weights(M)
        self._cum_u = np.array(bw.cum_int[:M], dtype=np.uint64)        # C_t, t < M
        self._cum_f = bw.cum[:M].copy()                                 # C_t / 2^64
        self._comp_f = np.array([(TOTAL - x) / _TWO64 for x in bw.cum_int[:M]])
        self._guide = _block_table_guide(M)

    def _side(self, n: NDArray[np.float64]):  # type: ignore[no-untyped-def]
        """(m as float, t, low mass, high mass) for n cells on one side (n may be inf)."""
        M = self.M
        inf = np.isinf(n)
        nn = np.where(inf, 0.0, n)
        m = np.floor(nn / M)  # exact: n < 2^51, M < 2^21; corrected below if rounding slips
        t = (nn - m * M).astype(np.int64)
        bad = (t < 0) | (t >= M)
        if np.any(bad):  # pragma: no cover - float division guard
            q, rem = np.divmod(nn[bad].astype(np.int64), M)
            m[bad], t[bad] = q, rem
        t[inf] = 0
        m[inf] = np.inf
        low = (2.0 - np.exp2(-m)) * self._cum_f[t]  # G(m + 1) = 2 − 2^(−m), exact
        high = (2.0 - np.exp2(1.0 - m)) * self._comp_f[t]  # G(m) = 2 − 2^(1−m)
        return m, t, low, high

    def _params(self, c: NDArray[np.int64]):  # type: ignore[no-untyped-def]
        """Per-element (m, t) per side and the three category thresholds (uint64) with their
        validity (F < 1; an invalid threshold is never reached)."""
        jlo, jhi = self.gd.cells[0]
        cf = c.astype(np.float64)
        mL, tL, lowL, highL = self._side(cf - jlo)
        mR, tR, lowR, highR = self._side(jhi - cf + 1)
        tot = lowL + highL + lowR + highR
        cum1 = lowL
        cum2 = cum1 + highL
        cum3 = cum2 + lowR
        B, valid = [], []
        for cu in (cum1, cum2, cum3):
            F = cu / tot
            ok = F < 1.0
            x = np.rint(F * 2.0**64)
            x[~ok] = 0.0
            B.append(np.minimum(x, 2.0**64 - 2.0**11).astype(np.uint64))
            valid.append(ok)
        return (mL, tL, mR, tR), B, valid

    def sample_values(self, rng: RandomSource, c: NDArray[np.int64], grid: float
                      ) -> NDArray[np.float64]:
        n = c.size
        (mL, tL, mR, tR), B, valid = self._params(c)
        w = rng.words(3 * n)
        wc, wr, wq = w[:n], w[n:2 * n], w[2 * n:]
        cat = ((wc >= B[0]) & valid[0]).astype(np.int8)
        cat += (wc >= B[1]) & valid[1]
        cat += (wc >= B[2]) & valid[2]
        right = cat >= 2
        high = (cat & 1).astype(bool)
        t = np.where(right, tR, tL)
        m = np.where(right, mR, mL)
        ct = self._cum_u[t]
        lo = np.where(high, ct, np.uint64(0))
        R = np.where(high, np.uint64(0) - ct, ct)  # 2^64 − C_t (wraps to 0 for t = 0)
        v = lo + _mulhi(wr, R)
        full = high & (t == 0)
        v[full] = wr[full]
        r = self._guide.lookup(v)
        q = _geometric(rng, wq)
        mod = m + 1 - high  # m_r: m + 1 for r < t, m for r >= t (inf stays inf)
        fin = np.isfinite(mod)
        i = q.copy()
        qf = q[fin]
        mf = mod[fin].astype(np.int64)
        wrap = qf >= mf
        if np.any(wrap):
            qf[wrap] = np.remainder(qf[wrap], mf[wrap])
            i[fin] = qf
        k = i * self.M + r
        j = np.where(right, c + k, c - 1 - k)
        half = 2 * j + 1
        if half.size and np.max(np.abs(half)) >= (1 << 53):
            raise PrecisionError("release fell outside the exactly representable range")
        return half * (grid / 2)

    def logpmf(self, j: NDArray[np.int64], c: int) -> NDArray[np.float64]:
        """Exact ln P(cell j | centre c) of what :meth:`sample_values` draws."""
        j = np.asarray(j, dtype=np.int64)
        (mL, tL, mR, tR), B, valid = self._params(np.array([c], dtype=np.int64))
        bounds = [0] + [int(B[k][0]) if valid[k][0] else TOTAL for k in range(3)] + [TOTAL]
        cat_p = [max(0, bounds[k + 1] - bounds[k]) for k in range(4)]
        cum = block_weights(self.M).cum_int
        M = self.M
        out = np.full(j.shape, -np.inf)
        right = j >= c
        kk = np.where(right, j - c, c - 1 - j)
        i, r = np.divmod(kk, M)
        for side, (m, t) in ((0, (float(mL[0]), int(tL[0]))), (1, (float(mR[0]), int(tR[0])))):
            sel = (right == bool(side)) & self.gd.reachable_cells(j)
            for high in (0, 1):
                p_cat = cat_p[2 * side + high]
                if p_cat == 0:
                    continue
                lo = cum[t] if high else 0
                R = TOTAL - cum[t] if high else cum[t]
                rr = (r >= t) if high else (r < t)
                mod = m if high else m + 1
                s2 = sel & rr & (i < mod)
                if not np.any(s2):
                    continue
                counts = {}
                for x in np.unique(r[s2]).tolist():
                    a = -((-(cum[x] - lo) * TOTAL) // R)
                    b = -((-(cum[x + 1] - lo) * TOTAL) // R)
                    counts[x] = max(0, min(b, TOTAL) - max(a, 0))
                lc = np.array([math.log(counts[x]) if counts[x] else -math.inf
                               for x in r[s2].tolist()])
                trunc = 0.0 if math.isinf(mod) else math.log1p(-2.0 ** -mod)
                out[s2] = (math.log(p_cat) - 64 * LN2 + lc - 64 * LN2
                           - (i[s2] + 1) * LN2 - trunc)
        return out
