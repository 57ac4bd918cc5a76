"""Range-adherent Laplace: the truncated and normalised Laplace of Croft et al. 2022, done right.

Every output lies in the declared domain S (an interval, a half-line or a union of disjoint
intervals).  The ideal density is the Laplace density restricted to S and renormalised,
``p(x|mu) = exp(−|x−mu|/s) / (2 s Z_s(mu))`` (paper (2), (4)–(6)).

Calibration (its one home: :mod:`dpnoise.laws.range_laplace` -- the continuous scale and
:func:`~dpnoise.laws.range_laplace.lattice_block`, the sampled table's block length):

* ``mode="dp"`` (default): the minimal uniform scale for ordinary ε-DP -- Alg. A (interval:
  phi(s) = ε, closed form at W = 2Δ, s = W/ε when W <= Δ), Alg. B (half-line:
  s = Δ/ln((1+e^ε)/2)), Alg. C (unions).  This is *not* the paper's scale: the paper's
  "optimal" scales are optimal for its generalised guarantee (13), which is metric DP
; the ε-DP minimum is 2.4–75 % smaller.
* ``mode="metric"``: the paper's generalised guarantee (13): exactly 2Δ/ε whenever S is
  bounded on one side (the paper only bounds it by 2Δ/ε and binary-searches), and
  Theorem 2's bounds plus the reflected gap-pair bounds (4n+2, not 3n+2) for R minus
  finite gaps.  On the grid the metric guarantee reads ell(x, x') <= ε(|x − x'| + L)/Δ.
* The paper's data-dependent half-line scale (Sec. 4.1, (32)/(33), Theorem 1) is NOT
  differentially private: its loss is unbounded.  It is available only as
  :func:`paper_half_line_scale_unsafe` and
  :class:`~dpnoise.mechanisms.range_laplace_paper.PaperHalfLineLaplaceUnsafe`, which warn.

Release on real hardware (see docs/mechanisms/finite-precision.md): outputs are half-offset
grid points ``(j + 1/2)·L`` inside S, L = 2^k; the true value is rounded exactly to the centre index
``c = floor(x/L + 1/2)`` (neighbours move c by at most ``S = ceil(Δ/L)``), and the cell is drawn
exactly from the truncated discrete Laplace with decay 2^(−1/M) per cell by an integer sampler
(fixed number of 64-bit words per draw, no rejection loop): on an interval, half-line or the
line ONE :class:`~dpnoise.exact.range_convex.ConvexSampler` serves every release (scalar,
repeated or distinct values; no per-centre state, the same operations for every true value);
on a union ONE :class:`~dpnoise.exact.range_union.UnionSampler` built at construction (P + 2
words per value for P pieces, a fixed chain of exact decisions for far pieces; no per-centre
state either).
The block length M is the smallest integer whose *proven* loss bound

    S·ln2/M + max_{|c−c'|<=S} |ln z(c) − ln z(c')| + 2ρ + 1e-12  <=  ε

holds (ρ bounds the 64-bit quantisation of the sampled pmf against the ideal lattice law), so
the grid rounding of the true value and every quantisation are paid for in the scale, not in ε.
The reported ``scale`` = M·L/ln2 is the continuous-equivalent scale (>= the continuous minimum,
``continuous_scale``; ``scale_inflation`` is typically ~1e-3).  ``dpnoise.verify`` recomputes the
loss from the exact integer tables that are sampled.

~530 lines: the mechanism, its two exact laws (lattice and continuous) and the paper's
non-private half-line variant kept beside it, so that the reproduction and the verifier's
counter-example use the very same density code; the sampler itself is in :mod:`dpnoise.exact`.

References:
  * W. L. Croft, J.-R. Sack, W. Shi, "Differential Privacy via a Truncated and Normalized
    Laplace Mechanism", Journal of Computer Science and Technology 37(2):369-388, 2022,
    doi:10.1007/s11390-020-0193-z.

Errata of the paper, each explained: docs/papers.md#errata-range-laplace.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..domain import Domain, as_domain
from ..errors import ParameterError, PrecisionError
from ..exact.range_convex import ConvexSampler
from ..exact.range_lattice import GridDomain, window_cells
from ..exact.range_union import PieceEnds, UnionSampler
from ..grid import check_grid, grid_sensitivity, power_of_two_at_most, round_half_up
from ..laws.range_laplace import (
    lattice_block,
    paper_half_line_scale_unsafe,
    sigma_metric,
    sigma_std,
)
from ..laws.range_laplace_law import RangeLatticeLaw, TruncatedLaplaceLaw, continuous_family
from ..params import (
    EXACT_INTEGER,
    LN2,
    SENSITIVITY_RANGE,
    Interval,
    as_real_array,
    check_true_scalar,
    output_buffer,
    supported,
)
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism, as_output

MODES = ("dp", "metric")
MAX_M = 1 << 17  # block tables and loss-bound windows build in ~1 s at this size
MAX_WINDOW_CELLS = 1 << 22  # centre cells the loss bound scans (~0.5 s per evaluation)
_MAX_Q = 2.0**50  # |x / grid| bound of a true value (exact centre and output indices)
#: calibrations and samplers by public parameters (domain, sensitivity, epsilon, mode,
#: grid): identical parameters are not rebuilt in a process; the samplers are immutable
_BUILT: dict[tuple[Any, ...], dict[str, Any]] = {}
_BUILT_MAX = 32
_BUILT_LOCK = threading.Lock()

__all__ = [
    "RangeLaplace",
    "paper_half_line_scale_unsafe",
]


def range_laplace_grid(sensitivity: float, scale: float, domain: Domain) -> float:
    """RangeLaplace's default grid (it depends on the scale and the domain, unlike the shared
    lattice rule :func:`dpnoise.laws.block_calibration.default_grid`).  Power-of-two step:
    ~Δ/1024, or ~scale/64 when the scale is below Δ/16 (large ε: a grid coarse next to the
    scale would add more than the accuracy rule's 2.5 % to E|noise|), coarse enough that
    M = scale·ln2/L stays <= ~2^15, fine enough that the smallest piece holds >= 8 cells."""
    step = max(min(sensitivity / 1024, scale / 64), scale * LN2 / 2**15)
    step = min(step, domain.min_piece_length / 8)
    return power_of_two_at_most(step)


class RangeLaplace(Mechanism):
    """Truncated-and-normalised Laplace on a domain, exact on a power-of-two grid.

    Supported: epsilon in [0.01, 1000], sensitivity in [1e-280, 1e+295], domain ends
    ``|a| < 2^50·grid``; the block length M = scale·ln2/grid must be <= 2^17 and the
    calibration may scan at most 2^22 centre cells (else a ParameterError asks for a
    coarser grid: a piece tiny next to the noise scale, or a domain ~10^6 sensitivities
    wide); construction takes up to ~5 s at the corners (half-lines at ε = 0.01); true
    values inside the domain.

    >>> m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0, 10))
    >>> round(m.continuous_scale, 6)
    1.61156

    The noise density is the Laplace density restricted to the domain and renormalised, with
    the scale calibrated so that the guarantee holds (W. L. Croft, J.-R. Sack, W. Shi,
    *Differential Privacy via a Truncated and Normalized Laplace Mechanism*, JCST 2022,
    Sections 3.2 and 4); it is sampled exactly on a lattice whose loss the verifier
    recomputes.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    sensitivity : float
        Δ: the largest change of the true answer between neighbouring data sets.
    domain : tuple, Domain
        The answers' domain: ``(a, b)``, an :func:`Interval`, :func:`HalfLine` or :func:`Union`.
    mode : {"dp", "metric"}, default "dp"
        "dp": the minimal scale for ε-DP; "metric": the paper's metric notion and scales.
    grid : float or None, default None
        The output grid step L, a power of two; None: the default, at least 4096 times
        finer than the sensitivity.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-2, 1000.0),
                           "sensitivity": SENSITIVITY_RANGE})

    def __init__(self, *, epsilon: float, sensitivity: float, domain: Any, mode: str = "dp",
                 grid: float | None = None) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        if mode not in MODES:
            raise ParameterError(f"mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.domain = as_domain(domain)
        pieces = self.domain.pieces
        self._conv: ConvexSampler | None = None
        self._union: UnionSampler | None = None
        if grid is not None:  # checked before the cache is asked (its key must be a float)
            grid = check_grid(grid)
        if self.domain.is_degenerate:  # a single point: output it, no noise needed
            self.continuous_scale = 0.0
            self.grid = None
            self.block = None
            self.shift_steps = 0
            self.bound = None
            self._freeze()
            return
        key = (self.domain.pieces, self.sensitivity, self.epsilon, mode, grid)
        built = _BUILT.get(key)
        if built is None:  # calibrate and build the sampler (public parameters only)
            before = set(self.__dict__) - {"_conv", "_union"}
            self._build(pieces, grid)
            built = {k: v for k, v in self.__dict__.items() if k not in before}
            with _BUILT_LOCK:
                _BUILT[key] = built
                while len(_BUILT) > _BUILT_MAX:
                    _BUILT.pop(next(iter(_BUILT)))
        else:
            self.__dict__.update(built)
        self._freeze()

    def _build(self, pieces: tuple[tuple[float, float], ...], grid: float | None) -> None:
        """Calibrate (continuous scale, grid, block length with its proven loss bound) and
        build the one sampler; the attributes it sets are cached by public parameters."""
        calib = sigma_std if self.mode == "dp" else sigma_metric
        self.continuous_scale = calib(pieces, self.sensitivity, self.epsilon)
        self.grid = (range_laplace_grid(self.sensitivity, self.continuous_scale, self.domain)
                     if grid is None else check_grid(grid))
        M0 = math.ceil(self.continuous_scale * LN2 / self.grid)
        if M0 > MAX_M:
            raise ParameterError(
                f"epsilon={self.epsilon!r} at grid {self.grid!r} needs a block length "
                f"{M0} > 2^17 (the noise scale {self.continuous_scale:.3g} is huge next to the "
                f"grid); raise epsilon or pass a coarser grid=")
        self._gd = GridDomain.build(pieces, self.grid)
        self.shift_steps = grid_sensitivity(self.sensitivity, self.grid)
        cells = window_cells(self._gd, math.ceil(1.1 * M0), self.shift_steps)
        if cells > MAX_WINDOW_CELLS:
            raise ParameterError(
                f"this domain is too wide next to the noise scale at epsilon={self.epsilon!r}, "
                f"sensitivity={self.sensitivity!r} and grid {self.grid!r}: calibration would "
                f"scan {cells} centre cells (> 2^22, seconds of work); pass a coarser grid= "
                f"(e.g. grid={power_of_two_at_most(self.grid * 4 * cells / MAX_WINDOW_CELLS)!r})")
        self._n_decisions = len(pieces) if len(pieces) > 1 else 0
        self.block, self.bound = lattice_block(
            self._gd, self.continuous_scale, self.shift_steps, epsilon=self.epsilon,
            sensitivity=self.sensitivity, metric=self.mode == "metric",
            n_decisions=self._n_decisions, max_block=MAX_M)
        if self.domain.is_convex:  # one sampler for every true value (no per-centre state)
            self._conv = ConvexSampler(self._gd, self.block)
            self._lo, self._hi = self.domain.lower, self.domain.upper
            self._bounded = math.isfinite(self._lo) and math.isfinite(self._hi)
        else:  # unions: one per-element sampler, built now from public parameters
            self._union = UnionSampler(self._gd, self.block)
            self._pieces = tuple((float(lo), float(hi)) for lo, hi in pieces)
            self._ends = PieceEnds(self._pieces)  # for the compiled domain check

    @property
    def scale(self) -> float:
        """Continuous-equivalent scale M·L/ln2 of the released lattice law (0 for a point)."""
        if self.block is None:
            return 0.0
        return self.block * self.grid / LN2

    @property
    def scale_inflation(self) -> float:
        """scale / continuous_scale − 1: the price of the exact grid release."""
        if not self.continuous_scale:
            return 0.0
        return self.scale / self.continuous_scale - 1.0

    @property
    def guarantee(self) -> Guarantee:
        if self.block is None:
            return Guarantee(0.0, 0.0, "pure", "single-point domain: deterministic output",
                             {"scale": 0.0})
        notion = "metric" if self.mode == "metric" else "pure"
        note = ("exact lattice sampler; loss bound proven for every pair of true values"
                if notion == "pure" else
                "metric: loss <= ε·(|x−x'| + grid)/Δ for all x, x' (and ε-DP); exact lattice")
        return Guarantee(
            epsilon=self.epsilon, delta=0.0, notion=notion, note=note,
            details={"grid": self.grid, "block": self.block, "shift_steps": self.shift_steps,
                     "loss_bound": self.bound.total, "scale": self.scale,
                     "continuous_scale": self.continuous_scale,
                     "scale_inflation": self.scale_inflation, "domain": str(self.domain),
                     "mode": self.mode})

    # ---------------------------------------------------------------- release
    def _centres(self, flat: NDArray[np.float64]) -> NDArray[np.int64]:
        scaled = flat / self.grid
        if scaled.size and np.max(np.abs(scaled)) >= 2.0**50:
            raise PrecisionError("true value too large for the grid step; pass a coarser grid")
        return round_half_up(scaled).astype(np.int64)

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        conv = self._conv
        tv = type(true_value)  # float, or an int that float() converts exactly
        one = tv is float or (tv is int and -EXACT_INTEGER < true_value < EXACT_INTEGER)
        if conv is not None and one:
            x = float(true_value)  # one number on an interval / half-line / the line
            if self._lo <= x <= self._hi and -math.inf < x < math.inf:
                q = x / self.grid  # exact (power-of-two grid)
                if -_MAX_Q < q < _MAX_Q:
                    i = math.floor(q)
                    return conv.sample_one(resolve_rng(rng), i + (q - i >= 0.5))
            # anything else: the general path raises the right error
        union = self._union
        if union is not None and one:
            x = float(true_value)  # one number on a union: the pure-Python twin of the batch
            inside = sum(lo <= x <= hi for lo, hi in self._pieces)
            q = x / self.grid  # exact (power-of-two grid)
            if inside and -_MAX_Q < q < _MAX_Q:
                i = math.floor(q)
                return union.scalar.sample_one(resolve_rng(rng), i + (q - i >= 0.5), self.grid)
        if union is not None and self.block is not None:  # many values on a union
            arr = as_real_array("true_value", true_value)
            # centres and domain check in one compiled pass (None: check_values below raises)
            cf = union.centres(arr, self._ends, self.grid) if arr.size else None
            if cf is not None:
                out = union.sample_values(resolve_rng(rng), cf, self.grid)
                return as_output(out.reshape(arr.shape), true_value)
        values = self.domain.check_values(true_value)
        flat = values.reshape(-1)
        if self.block is None:
            return as_output(np.full(values.shape, self.domain.lower), true_value)
        if flat.size == 0:
            return as_output(np.empty(values.shape), true_value)
        if conv is not None:  # every value through the one convex sampler, chunk by chunk
            if not self._bounded and max(-float(flat.min()), float(flat.max())) / self.grid \
                    >= _MAX_Q:
                raise PrecisionError("true value too large for the grid step; pass a coarser "
                                     "grid")
            out = output_buffer(flat.size)  # before any word
            source = resolve_rng(rng)
            conv.sample(source, np.ascontiguousarray(flat, dtype=np.float64), out)
            return as_output(out.reshape(values.shape), true_value)
        assert self._union is not None  # unions: one per-element sampler, nothing per centre
        out = self._union.sample_values(resolve_rng(rng), self._centres(flat), self.grid)
        return as_output(out.reshape(values.shape), true_value)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """In the domain and on the half-offset grid (j + 1/2)·L (a point domain: its point)."""
        y = y.astype(np.float64, copy=False)
        if self.block is None:
            return y == self.domain.lower
        u = y / self.grid - 0.5
        return self.domain.contains(y) & (np.floor(u) == u) & np.isfinite(y)

    # ---------------------------------------------------------------- laws
    def _default_value(self) -> float:
        lo, hi = self.domain.pieces[0]
        if math.isfinite(lo) and math.isfinite(hi):
            return 0.5 * (lo + hi)
        return lo if math.isfinite(lo) else (hi if math.isfinite(hi) else 0.0)

    def noise(self, true_value: float | None = None) -> RangeLatticeLaw:
        """Exact law of the released value for ``true_value`` (default: a point of the domain).

        Parameters
        ----------
        true_value : float or None, default None
            One true value (None: the default named in the summary above).

        Returns
        -------
        Law
            The exact law of the release (scipy.stats-like: ``pmf``/``pdf``, ``cdf``, ``sf``,
            ``ppf``, ``mean``, ``var``, ``std``, ``mean_abs``, ``interval``).
        """
        x = self._default_value() if true_value is None else float(
            self.domain.check_values(check_true_scalar("true_value", true_value)))
        if self.block is None:
            raise ParameterError("a single-point domain has no noise law (output is constant)")
        c = int(self._centres(np.array([x]))[0])
        law = self._conv.at(c) if self._conv is not None else self._union.at(c)  # type: ignore[union-attr]
        return RangeLatticeLaw(law, self.grid, x, self.scale)

    def tail_probabilities(self, true_value: float, y: float) -> tuple[float, float]:
        """(P(Y <= y), P(Y >= y)) for the release Y at ``true_value``: the ``cdf`` and
        ``sf + pmf`` of :meth:`noise`, computed in closed form from the convex sampler's
        structure (:meth:`~dpnoise.exact.range_convex.ConvexSampler.tails`: no table) on an
        interval / half-line / the line; on a union (or a non-finite y) from the table.

        Parameters
        ----------
        true_value : float
            The true value.
        y : float
            An output value.

        Returns
        -------
        tuple of float
            ``(P(Y <= y), P(Y >= y))``.
        """
        if self._conv is None or self.block is None or not math.isfinite(y):
            law = self.noise(true_value)
            le = float(np.asarray(law.cdf(y)).reshape(-1)[0])
            atom = float(np.asarray(law.pmf(y)).reshape(-1)[0])
            return le, float(np.asarray(law.sf(y)).reshape(-1)[0]) + atom
        x = float(self.domain.check_values(check_true_scalar("true_value", true_value)))
        c = int(self._centres(np.array([x]))[0])
        u = y / self.grid - 0.5  # cell index of y (exact on the grid; y is public)
        le = self._conv.tails(math.floor(u), c)[0]
        ge = self._conv.tails(math.ceil(u), c)[1]
        return le, ge

    def continuous_law(self, true_value: float, scale: float | None = None
                       ) -> TruncatedLaplaceLaw:
        """The ideal continuous truncated Laplace (at ``continuous_scale`` by default).

        Parameters
        ----------
        true_value : float
            A true value in the domain.
        scale : float or None, default None
            The Laplace scale (None: ``continuous_scale``).

        Returns
        -------
        TruncatedLaplaceLaw
            The ideal law at ``true_value``.
        """
        x = float(self.domain.check_values(true_value).reshape(-1)[0])
        return TruncatedLaplaceLaw(self.domain.pieces, x, scale or self.continuous_scale)

    # ------------------------------------------------------------ verification
    def probe_pairs(self) -> list[tuple[float, float]]:
        """Neighbouring true values to verify: near every finite endpoint (where the loss is
        largest), across gaps, and in the bulk.

        Returns
        -------
        list of (float, float)
            Pairs of true values at distance <= sensitivity.
        """
        d, L = self.sensitivity, self.grid or 1.0
        pts: list[float] = []
        for e in self.domain.finite_endpoints:
            for off in (0.0, L / 2, -L / 2, L, -L, 0.25 * d, -0.25 * d):
                pts.append(e + off)
        for lo, hi in self.domain.pieces:
            if math.isfinite(lo) and math.isfinite(hi):
                pts.append(0.5 * (lo + hi))
            elif math.isfinite(lo):
                pts.append(lo + 6 * self.continuous_scale)
            elif math.isfinite(hi):
                pts.append(hi - 6 * self.continuous_scale)
            else:
                pts.append(0.0)
        pts = [p for p in pts if bool(self.domain.contains(p))]
        pairs = set()

        def add(p: float, q: float) -> None:
            if p != q and abs(q - p) <= d and bool(self.domain.contains(p)) and bool(
                    self.domain.contains(q)):
                pairs.add((min(p, q), max(p, q)))

        for p in pts:
            for q in (p + d, p - d, p + d / 2, p - d / 2, p + L, p - L):
                add(p, q)
        ends = self.domain.finite_endpoints
        for e in ends:
            for k in range(4):  # the worst pairs sit at an edge and (about) Δ away
                add(e, e + d - k * L)
                add(e, e - d + k * L)
            for k in range(1, 8):
                add(e, e + d * k / 8)
                add(e, e - d * k / 8)
        for e1 in ends:  # pairs of edges within Δ (narrow pieces, gaps), jittered by grid cells
            for e2 in ends:
                if e1 < e2 <= e1 + d + 4 * L:
                    for da in (0.0, L / 2, L, 2 * L):
                        for db in (0.0, -L / 2, -L, -2 * L):
                            add(e1 + da, e2 + db)
        return sorted(pairs)

    def privacy_profile(self) -> Any:
        """Range-adherent (not additive): known by its claimed guarantee (randomized
        response, :meth:`Mechanism.privacy_profile`); its law depends on where the true
        value lies in the domain.

        Returns
        -------
        PrivacyProfile
            The randomized-response pair of the calibrated ε, with the interval facts.
        """
        from ..profile import claimed_profile

        g = self.guarantee
        return claimed_profile(g.epsilon, g.delta, note="range-adherent Laplace (not additive)",
                               noise_at=self.noise, range_adherent=True)

    def privacy_model(self, block: int | None = None) -> Any:
        """The exact lattice pmfs that are sampled (a :class:`~dpnoise.verify.LatticeFamily`):
        on an interval, half-line or the line those of the one :class:`ConvexSampler` every
        release uses; on a union those of the one :class:`UnionSampler` every release uses.
        ``block`` overrides the block length (tests: loss > ε at M − 1).

        Parameters
        ----------
        block : int or None, default None
            Overrides the block length (to test a calibration).

        Returns
        -------
        LatticeFamily
            The exact lattice pmfs that are sampled.
        """
        from ..verify import LatticeFamily

        if self.block is None:
            from ..verify import DiscreteFamily

            a = self.domain.lower
            return DiscreteFamily([a], self.sensitivity,
                                  lambda x: (np.array([a]), np.array([0.0])), pairs=[(a, a)])
        M, S = block or self.block, self.shift_steps
        def window(a: float, b: float) -> list[tuple[int, int]]:
            """Cells near both centres, plus the first/last 2M + 2 cells of every piece (far
            pieces have a constant log-ratio; the piece holding a centre a periodic one)."""
            ca, cb = (int(t) for t in self._centres(np.array([a, b])))
            ivs = [(min(ca, cb) - 3 * M - S - 2, max(ca, cb) + 3 * M + S + 2)]
            for jlo, jhi in self._gd.cells:
                if math.isfinite(jlo):
                    ivs.append((int(jlo), int(min(jhi, jlo + 2 * M + 2))))
                if math.isfinite(jhi):
                    ivs.append((int(max(jlo, jhi - 2 * M - 2)), int(jhi)))
            ivs.sort()
            merged = [list(ivs[0])]
            for lo, hi in ivs[1:]:
                if lo <= merged[-1][1] + 1:
                    merged[-1][1] = max(merged[-1][1], hi)
                else:
                    merged.append([lo, hi])
            return [(lo, hi) for lo, hi in merged]

        sampler: ConvexSampler | UnionSampler
        if self._conv is not None:
            sampler = self._conv if self.block == M else ConvexSampler(self._gd, M)
        else:
            assert self._union is not None
            sampler = self._union if self.block == M else UnionSampler(self._gd, M)

        def logpmf(j: NDArray[np.int64], x: float) -> NDArray[np.float64]:
            return sampler.logpmf(j, int(self._centres(np.array([x]))[0]))

        return LatticeFamily(pairs=self.probe_pairs(), logpmf=logpmf, window=window, period=M)

    def continuous_model(self, scale: float | None = None,
                         pairs: list[tuple[float, float]] | None = None) -> Any:
        """The ideal continuous density as a :class:`~dpnoise.verify.ContinuousFamily`.

        Parameters
        ----------
        scale : float or None, default None
            The Laplace scale (None: ``continuous_scale``).
        pairs : list of (float, float) or None, default None
            Neighbouring true values to check (None: :meth:`probe_pairs`).

        Returns
        -------
        ContinuousFamily
            The model :func:`dpnoise.verify` evaluates.
        """
        from ..verify import ContinuousFamily

        s = scale or self.continuous_scale
        pieces = self.domain.pieces
        return continuous_family(pieces, s, pairs or self.probe_pairs(), ContinuousFamily)

    def __repr__(self) -> str:
        return (f"RangeLaplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
                f"domain='{self.domain}', mode={self.mode!r}, grid={self.grid!r})")
