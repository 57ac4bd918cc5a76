"""Exact law of the continuous truncated-and-normalised Laplace density.

``p(x|mu) = exp(−|x − mu|/s) / (2 s Z_s(mu))`` for x in S.  Moments use the one-sided partial
moments over a distance range [p, q] with regularised incomplete gamma functions (P(k, z) or,
for far pieces, Q(k, z) differences), so nothing cancels when s >> W and nothing overflows.

References:
  * W. L. Croft, J.-R. Sack, W. Shi, "Differential Privacy via a Truncated and Normalized
    Laplace Mechanism", Journal of Computer Science and Technology 37(2):369-388, 2022,
    doi:10.1007/s11390-020-0193-z.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ..errors import ParameterError
from ..params import LN2, check_quantiles
from .base import Law, TableLaw
from .range_laplace import log_mass


def _gamma_diff(k: int, p: float, q: float) -> float:
    """P(k, q) − P(k, p) for 0 <= p <= q <= inf, accurate for far ranges."""
    if p >= q:
        return 0.0
    if p > 1.0:
        qq = 0.0 if math.isinf(q) else float(special.gammaincc(k, q))
        return float(special.gammaincc(k, p)) - qq
    qq = 1.0 if math.isinf(q) else float(special.gammainc(k, q))
    return qq - float(special.gammainc(k, p))


class TruncatedLaplaceLaw(Law):
    """Output law of the continuous mechanism for one true value (scipy.stats-like)."""

    def __init__(self, pieces: Sequence[tuple[float, float]], mu: float, scale: float) -> None:
        if not scale > 0:
            raise ParameterError("scale must be > 0")
        self.pieces = tuple(pieces)
        self.mu = float(mu)
        self.scale = float(scale)
        self.log_z = float(log_mass(self.pieces, np.array([self.mu]), self.scale)[0])
        # one-sided distance ranges (side, p, q) covering S
        ranges: list[tuple[int, float, float]] = []
        for lo, hi in self.pieces:
            if hi > self.mu:
                ranges.append((+1, max(lo, self.mu) - self.mu, hi - self.mu))
            if lo < self.mu:
                ranges.append((-1, self.mu - min(hi, self.mu), self.mu - lo))
        self._ranges = ranges
        s = self.scale
        m = [0.0, 0.0, 0.0]  # sum of mass, signed first moment, second moment (unnormalised)
        ab = 0.0
        for side, p, q in ranges:
            a, b = p / s, q / s
            m0 = _gamma_diff(1, a, b) / 2
            m1 = s / 2 * _gamma_diff(2, a, b)
            m2 = s * s * _gamma_diff(3, a, b)
            m[0] += m0
            m[1] += side * m1
            m[2] += m2
            ab += m1
        self._m = m
        self._abs = ab

    # ---------------------------------------------------------------- density
    def logpdf(self, x: ArrayLike) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float64)
        inside = np.zeros(x.shape, dtype=bool)
        for lo, hi in self.pieces:
            inside |= (x >= lo) & (x <= hi)
        val = -np.abs(x - self.mu) / self.scale - math.log(2 * self.scale) - self.log_z
        return np.where(inside, val, -np.inf)

    def pdf(self, x: ArrayLike) -> NDArray[np.float64]:
        return np.exp(self.logpdf(x))

    def _lap_cdf_mass(self, lo: float, hi: float) -> float:
        """P(lo <= X <= hi) for the untruncated Laplace (stable)."""
        from .range_laplace import log_piece_mass

        if hi <= lo:
            return 0.0
        return float(np.exp(log_piece_mass(lo, hi, np.array(self.mu), self.scale)))

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float64)
        flat = x.reshape(-1)
        out = np.empty(flat.size)
        z = math.exp(self.log_z)
        for i, t in enumerate(flat):
            acc = 0.0
            for lo, hi in self.pieces:
                if t >= hi:
                    acc += self._lap_cdf_mass(lo, hi)
                elif t > lo:
                    acc += self._lap_cdf_mass(lo, t)
            out[i] = min(1.0, acc / z)
        return out.reshape(x.shape)

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        """Smallest x in S with cdf(x) >= q (bisection to full double precision); q = 0 and 1:
        the ends of S (:meth:`support_ends`)."""
        q = check_quantiles(q)
        flat = q.reshape(-1)
        out = np.empty(flat.size)
        span = 80 * self.scale
        lo0 = max(self.pieces[0][0], self.mu - span)
        hi0 = min(self.pieces[-1][1], self.mu + span)
        for i, qq in enumerate(flat):
            a, b = lo0, hi0
            for _ in range(200):
                mid = 0.5 * (a + b)
                if mid in (a, b):
                    break
                if self.cdf(mid) >= qq:
                    b = mid
                else:
                    a = mid
            out[i] = b
        return self._with_ends(q, out.reshape(q.shape))

    def support_ends(self) -> tuple[float, float]:
        """The ends of the domain S (infinite for a half-line).

        Returns
        -------
        tuple of float
            ``(inf S, sup S)``.
        """
        return self.pieces[0][0], self.pieces[-1][1]

    # ---------------------------------------------------------------- moments
    def mean(self) -> float:
        return self.mu + self._m[1] / self._m[0]

    def second_moment(self) -> float:
        """E(X − mu)^2."""
        return self._m[2] / self._m[0]

    def var(self) -> float:
        d = self._m[1] / self._m[0]
        return self.second_moment() - d * d

    def mean_abs_error(self) -> float:
        """E|X − mu|: the mean absolute error of the release about the true value."""
        return self._abs / self._m[0]

    def mean_abs(self) -> float:
        """E|X − E X|: mean absolute deviation (the harness / scipy-like convention)."""
        from scipy import integrate

        m = self.mean()
        pts = sorted({m, *[t for p in self.pieces for t in p]})
        total = 0.0
        for lo, hi in self.pieces:
            cuts = [lo, *[t for t in pts if lo < t < hi], hi]
            for a, b in itertools.pairwise(cuts):
                a2 = max(a, self.mu - 80 * self.scale)
                b2 = min(b, self.mu + 80 * self.scale)
                if a2 < b2:
                    total += integrate.quad(lambda x: float(self.pdf(x)) * abs(x - m), a2, b2,
                                            epsabs=0, epsrel=1e-11, limit=200)[0]
        return total

    def log_normaliser(self) -> float:
        """ln Z_s(mu) (consistency: equals ln of the summed piece masses)."""
        return self.log_z


__all__ = ["LN2", "TruncatedLaplaceLaw"]


def continuous_family(pieces: tuple[tuple[float, float], ...], s: float,
                      pairs: list[tuple[float, float]], family: Any,
                      scale_of: Any = None) -> Any:
    """ContinuousFamily of the truncated Laplace density; ``scale_of(x)`` for data-dependent
    scales (the paper's unsafe Sec. 4.1), else the uniform scale s."""
    sc = scale_of or (lambda x: s)

    def logpdf(y: NDArray[np.float64], x: float) -> NDArray[np.float64]:
        sx = sc(x)
        y = np.asarray(y, dtype=np.float64)
        inside = np.zeros(y.shape, dtype=bool)
        for lo, hi in pieces:
            inside |= (y >= lo) & (y <= hi)
        lz = float(log_mass(pieces, np.array([x]), sx)[0])
        return np.where(inside, -np.abs(y - x) / sx - math.log(2 * sx) - lz, -np.inf)

    def breakpoints(x: float) -> list[float]:
        return [x, *[t for p in pieces for t in p if math.isfinite(t)]]

    def cdf(y: float, x: float) -> float:
        return float(TruncatedLaplaceLaw(pieces, x, sc(x)).cdf(y))

    return family(pairs=pairs, logpdf=logpdf, breakpoints=breakpoints, scale=s, cdf=cdf)


# ---------------------------------------------------------------------- laws
class RangeLatticeLaw(TableLaw):
    """Exact law of the released grid value for one true value (scipy.stats-like).

    Computed from the exact sampled pmf over every cell within 60 scales of the centre (the
    mass beyond is < e^-60 of the total); a normalised :class:`~dpnoise.laws.base.TableLaw`
    on those cells (pmf, cdf, ppf, moments and interval inherited).  ``sampler``: anything
    with ``gd``, ``c`` and the exact ``logpmf(j)`` (ConvexSampler.at(c) or UnionSampler.at(c))."""

    def __init__(self, sampler: Any, grid: float, true_value: float, scale: float) -> None:
        self.grid = grid
        self.true_value = true_value
        gd, c = sampler.gd, sampler.c
        span = math.ceil(60 * scale / grid) + 2
        lo = max(c - span, int(gd.cells[0][0]) if math.isfinite(gd.cells[0][0]) else c - span)
        hi = min(c + span, int(gd.cells[-1][1]) if math.isfinite(gd.cells[-1][1]) else c + span)
        j = np.arange(lo, hi + 1, dtype=np.int64)
        lp = sampler.logpmf(j)
        keep = np.isfinite(lp)
        self.cells = j[keep]
        super().__init__((self.cells + 0.5) * grid, np.exp(lp[keep]), normalise=True,
                         logprobs=lp[keep], tails=(not math.isfinite(gd.cells[0][0]),
                                                   not math.isfinite(gd.cells[-1][1])))
        self.support = self.points

    def mean_abs_error(self) -> float:
        """E|Y − x| for the true value x: the mean absolute error of a release."""
        return self.mean_abs(about=self.true_value)

    def mse(self) -> float:
        return self._expect((self.points - self.true_value) ** 2)
