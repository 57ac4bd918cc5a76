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

The samplers are :class:`~dpnoise.exact.range_centre.CentreSampler` (per centre, the three
stages above: the reference implementation the distortion bound was first derived for; no
release uses it any more -- a per-centre table built on first use leaks timing),
:class:`~dpnoise.exact.range_convex.ConvexSampler` (per element, convex
domains) and :class:`~dpnoise.exact.range_union.UnionSampler` (per element, unions: every
union release; its distortion is below :func:`distortion_bound` ``(M, P)``, which the union
calibration uses); this module holds what they share: block weights, grid geometry, the
loss bound of P_true and the dyadic inverse-CDF table.

The number of words per draw is fixed by the domain (2, plus one per chain decision, for
:class:`CentreSampler`; 3 for :class:`ConvexSampler`), never by the true value.
:meth:`CentreSampler.logpmf` returns the exact log-probabilities of what is
sampled (from the integer boundaries themselves); the distortion ρ against P_true is bounded by
:func:`distortion_bound` for every centre, which the calibration adds twice to the loss.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
from numpy.typing import NDArray
from scipy.ndimage import maximum_filter1d, minimum_filter1d

from ..errors import ParameterError, PrecisionError
from ..params import LN2
from ..randomness import RandomSource
from .alias import TOTAL

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
    small: tuple[int, ...] = ()  # the weights as ints when there is no W64 (M <= 2)
    W64: NDArray[np.uint64] | None = field(default=None, compare=False, repr=False)  # M >= 2

    @cached_property
    def W(self) -> tuple[int, ...]:  # noqa: N802 -- the weights W_r of the module docstring
        """The weights as Python ints (made on first use: a construction that only needs
        the uint64 array does not convert M of them)."""
        return self.small if self.W64 is None else tuple(self.W64.tolist())

    @cached_property
    def cum(self) -> NDArray[np.float64]:
        """C_r / 2^64 for r = 0..M (float; C_M = 1): each exactly rounded, as C_r / 2^64."""
        return np.array(self.cum_int, dtype=np.float64) / _TWO64

    @cached_property
    def cum_int(self) -> tuple[int, ...]:
        if self.M == 1:
            return (0, TOTAL)
        w64 = self.W64 if self.W64 is not None else np.array(self.W, dtype=np.uint64)
        c = np.cumsum(w64)  # exact: wraps only at C_M = 2^64
        return (0, *c[:-1].tolist(), TOTAL)

    @cached_property
    def w_u64(self) -> NDArray[np.uint64]:
        """The weights as a uint64 array (each < 2^64 for M >= 2)."""
        return self.W64 if self.W64 is not None else np.array(self.W, dtype=np.uint64)

    @cached_property
    def w_min(self) -> int:
        return int(self.W64.min()) if self.W64 is not None else min(self.W)  # the same int

    @cached_property
    def rho_w(self) -> float:
        """max_r |ln(W_r / (2^64 · 2^(−r/M) / B))|: shape distortion of the 64-bit weights."""
        r = np.arange(self.M, dtype=np.float64)
        ideal = np.exp2(-r / self.M)
        ideal /= ideal.sum()
        w = self.W64 if self.W64 is not None else np.array(self.W, dtype=np.float64)
        lw = np.log(w.astype(np.float64) / _TWO64)
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
    frac = p * 2.0**64 - base
    if base.max() >= 2.0**63:  # M <= 2: float -> uint64 is unsafe above 2^63
        order = np.argsort(-frac, kind="stable")
        ints = [int(x) for x in base]
        q, extra = divmod(TOTAL - sum(ints), M)
        ints = [x + q for x in ints]
        for i in order[:extra].tolist():
            ints[i] += 1
    else:  # the same largest-remainder rule in uint64 (Σ base is within M of 2^64)
        b64 = base.astype(np.uint64)
        hi = int((b64 >> np.uint64(32)).sum(dtype=np.uint64))
        lo = int((b64 & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))
        q, extra = divmod(TOTAL - ((hi << 32) + lo), M)  # q is 0 or −1
        if q >= 0:
            b64 += np.uint64(q)
        else:
            b64 -= np.uint64(-q)
        b64[_largest(frac, extra)] += np.uint64(1)
        hi = int((b64 >> np.uint64(32)).sum(dtype=np.uint64))
        lo = int((b64 & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))
        if (hi << 32) + lo != TOTAL or int(b64.min()) <= 0:  # pragma: no cover
            raise AssertionError("block weight quantisation failed")
        return BlockWeights(M, (), b64)
    if sum(ints) != TOTAL or min(ints) <= 0:  # pragma: no cover
        raise AssertionError("block weight quantisation failed")
    return BlockWeights(M, tuple(ints))


def _largest(frac: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """Indices of the k largest entries, ties to the lowest index: the first k of a stable
    argsort of −frac, found in linear time."""
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    v = -np.partition(-frac, k - 1)[k - 1]  # the k-th largest value
    above = np.flatnonzero(frac > v)
    return np.concatenate([above, np.flatnonzero(frac == v)[:k - above.size]])


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
    rho_tab = 1.01 * 2.0**19 / wmin + 1.01 / wmin  # (>= ConvexSampler's own bound, tested)
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
               n_decisions: int = 0, full_scan: bool = False) -> LossBound:
    """Upper bound on the worst-case loss of the sampled pmf for centres <= ``shift`` apart.

    For the ideal P_true (Lemma A on the lattice): ell(c, c') <= |c − c'|·ln2/M +
    |ln z(c) − ln z(c')|, exact for cells beyond both centres.  The normaliser term is
    evaluated at every reachable centre within 37 scales (+ 2·shift cells) of a finite endpoint
    with sliding-window extremes; beyond, z(c) is within 2·2^(−37 M/ln2 / M)·... of its
    full-line value, which is added as ``tail``.  ``metric_cells`` (= Δ/L) also bounds the
    per-cell rate and gap pairs for the metric guarantee.

    One piece (interval, half-line, line): ln z(c) = ln((1 − ρ^(n_L)) + (1 − ρ^(n_R))) with
    n_L = c − jlo, n_R = jhi + 1 − c is concave in c (a sum of concave terms, then ln), so
    A(c, d) = dλ + g(c) − g(c + d) is non-decreasing and B(c, d) = dλ + g(c + d) − g(c)
    non-increasing in c: every pair is dominated by one with a centre at an end
    (A <= dλ as c -> ∞ on a half-line, where g increases), and so are the per-cell rate
    and the edge corrections.  The scan then covers 2·shift + 4 cells from each finite end
    instead of 37 scales -- the same bound (``full_scan=True`` keeps the long scan; a test
    checks both agree) at a tiny fraction of the cost.

    Long on purpose: one proof, step by step (the normaliser term, the tail, the metric pairs,
    the distortion); each step is commented where it is applied.
    """
    lam = LN2 / M
    s_eff = int(min(shift, gd.span)) if math.isfinite(gd.span) else shift
    convex = len(gd.cells) == 1
    radius = (2 * shift + 4 if convex and not full_scan
              else math.ceil(WINDOW_SCALES * M / LN2) + 2 * shift + 2)
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
    # far from every endpoint (if such centres exist) the loss is <= d·λ + 2·tail; on an
    # interval every pair is dominated by one within the end windows (concavity, docstring)
    bounded = convex and math.isfinite(hull[0]) and math.isfinite(hull[1])
    best = -math.inf if covered or (bounded and not full_scan) else 2 * tail + s_eff * lam
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
    if convex and not full_scan:
        best += 1e-13  # >= the long scan, whose far-field float noise reaches ~1e-14
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


def dyadic_boundaries(F: NDArray[np.float64]) -> NDArray[np.uint64]:
    """Interior boundaries rint(2^64 F) (F strictly inside (0, 1))."""
    x = np.rint(F * 2.0**64)
    if x.size and (x.min() <= 0 or x.max() >= 2.0**64):
        raise PrecisionError("an entry's probability is too small for a 64-bit table")
    return x.astype(np.uint64)


def geometric_sum(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """Σ_{i<m} 2^(−i) = 2(1 − 2^(−m)) (m may be inf)."""
    with np.errstate(over="ignore"):
        return 2.0 * -np.expm1(-m * LN2)


def sample_geometric(rng: RandomSource, w: NDArray[np.uint64]) -> NDArray[np.int64]:
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
