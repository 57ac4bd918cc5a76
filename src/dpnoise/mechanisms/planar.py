"""Planar Laplace for locations (geo-indistinguishability), safe on floats (Gazeau et al. 2013 §6).

Ideal law (Andrés et al.; GMP §6): density (ε_g²/2π)·e^{−ε_g·d(y, x0)} around the true
point x0, ε_g = ε/Δ per unit distance.  In polar form the angle is uniform and the
radius is Gamma(2, b), b = 1/ε_g = Δ/ε.

Release procedure, for a true point x0 in the domain:

1.  θ = 2π·k·2^-53 with k 53 random bits.
2.  ρ = b·(E1 + E2), each E = e·ln2 − log1p(f·2^-52) with e >= 1, P(e = i) = 2^-i (trailing
    zeros of a random word) and f 52 random bits: E is −ln U for U uniform on (0, 1]
    discretised to 52 relative bits, and U itself is never formed (no subnormal cap).
    E1 + E2 is Gamma(2): **no Lambert W** (scipy's ``lambertw`` is wrong by up to 100%
    near the branch point) and no √-singularity of the inverse CDF.
3.  (x, y) = x0 + ρ·(cos θ, sin θ) in float64, cos θ and sin θ from a 1024-entry table
    indexed by θ's top 10 bits and a degree-6 polynomial in the rest
    (:mod:`dpnoise.mechanisms.planar_angle`: each within 2^-50 of the exact value).
4.  Round each coordinate exactly to the grid (L = 2^j: j = rint(x/L), output j·L).
5.  If the rounded cell is outside the region M_r the release is an **exception**
    (``PlanarRelease.exited``): never a projection onto the boundary (unbounded error in
    2-D) and never a resample (the renormalisation depends on x0 and leaks).

Each draw reads five 64-bit words (two for e1, e2, two for f1, f2, one for θ), plus one
more per exponent with probability 2^-64 when a word is all zero -- an event that does
not depend on the true point.

Guarantee (GMP Thm 4.5, corrected): with
δt = 2^-46·(b + D + A) (D = Euclidean diameter of M_r, A = max |coordinate| of M_r),
for all true points x, x' in the domain and every set S of outputs (cells and the
exception)::

    ln P[S | x] − ln P[S | x'] <= ε_g·d(x, x') + c,
    c = ln(1 + 8Lδt/(L − 2δt)² · e^{ε_g(√2·L + δt)}).

The additive constant c does *not* scale with distance (pitfall 17).  The reported
``guarantee.epsilon`` is ε' = ε + c, the bound at d = Δ (``sensitivity``); notion "metric".

Coordinates must be **planar and in metres** (or any Euclidean unit): e.g. UTM eastings
and northings.  For latitude/longitude, project first (see docs/mechanisms/finite-precision.md):
the guarantee holds in the projected metric, so a projection that stretches distances by
at most a factor s needs ε_g divided by s to hold in true ground distance.  Large
coordinates cost precision (the term A in δt): centring the data first helps.

References:
  * I. Gazeau, D. Miller, C. Palamidessi, "Preserving differential privacy under
    finite-precision semantics", QAPL 2013, EPTCS 117, pp. 1-18, 2013.

Errata of the paper, each explained: docs/papers.md#errata-finite-precision.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from ..errors import DpnoiseError, ParameterError
from ..grid import check_grid
from ..laws.finite_precision import (
    MIN_GRID_OVER_DT,
    aligned_interval,
    delta_t_recommended,
    eps_prime_overhead,
)
from ..laws.planar import PlanarLaplaceNoise
from ..params import (
    LN2,
    SENSITIVITY_RANGE,
    Interval,
    as_real_array,
    as_real_scalar,
    check_interval,
    supported,
)
from ..randomness import RandomSource, RngLike, fill_words, resolve_rng
from .base import Guarantee, Mechanism
from .planar_angle import TABLES, cos_sin

TWO_PI_ULP = 2.0 * math.pi * 2.0**-53
F_ULP = 2.0**-52
WORDS_PER_DRAW = 5
DEFAULT_TOLERANCE = 1e-3
_CHUNK = 1 << 14

Rect = tuple[tuple[float, float], tuple[float, float]]


class RegionExitError(DpnoiseError):
    """The release is the EXCEPTION outcome: the noisy point left the region M_r.

    This is a legitimate, privacy-protected output (it is covered by ε'); it carries no
    location.  It is raised only by :meth:`PlanarRelease.point`.
    """


@dataclass(frozen=True)
class PlanarRelease:
    """Result of :meth:`PlanarLaplace.release`.

    Parameters
    ----------
    points : numpy.ndarray of float64, shape (..., 2)
        Grid points; rows whose release is the exception are NaN.
    exited : numpy.ndarray of bool, shape (...)
        True where the release is the exception (never projected).
    """

    points: NDArray[np.float64]
    exited: NDArray[np.bool_]

    @property
    def n_exited(self) -> int:
        """How many releases are the exception (left the region)."""
        return int(np.count_nonzero(self.exited))

    def point(self) -> tuple[float, float]:
        """The single released point, or raise :class:`RegionExitError` for the exception.

        Returns
        -------
        tuple of float
            ``(x, y)``.

        Raises
        ------
        RegionExitError
            If the release is the exception.
        ParameterError
            If this holds more than one release.
        """
        if self.points.shape != (2,):
            raise ParameterError("point() is for a single release; use .points and .exited")
        if bool(self.exited):
            raise RegionExitError("the noisy location left the region: the release is EXCEPTION")
        return float(self.points[0]), float(self.points[1])


def _check_rect(name: str, rect: Any) -> Rect:
    try:
        (x0, x1), (y0, y1) = rect
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} must be ((xmin, xmax), (ymin, ymax)), got {rect!r}") from exc
    xs = check_interval(x0, x1, name=f"{name} x-range")
    ys = check_interval(y0, y1, name=f"{name} y-range")
    return xs, ys


def radius_for_exit_probability(scale: float, probability: float) -> float:
    """t with P[ρ > t] = (1 + t/b)·e^{−t/b} = probability (planar-Laplace radius tail)."""
    if not 0 < probability < 1:
        raise ParameterError(f"exit_probability must be in (0, 1), got {probability!r}")
    target = -math.log(probability)
    s = optimize.brentq(lambda s: s - math.log1p(s) - target, 0.0, 4 * target + 10)
    return s * scale


class PlanarLaplace(Mechanism):
    """ε_g-geo-indistinguishable planar Laplace on a grid, with GMP's finite-precision ε'.

    The ideal law has density ``(ε_g²/2π)·e^(−ε_g·d(x, y))`` (M. E. Andrés, N. E. Bordenabe,
    K. Chatzikokolakis, C. Palamidessi, *Geo-Indistinguishability: Differential Privacy for
    Location-Based Systems*, CCS 2013);
    the release rounds it to the grid and truncates it to a region, and the guarantee is
    the corrected ``ε' = ε + ln(1 + R·e^(ε(ℓ + δt)/Δ))`` of I. Gazeau, D. Miller,
    C. Palamidessi, *Preserving Differential Privacy under Finite-Precision Semantics*,
    QAPL 2013, Theorem 4.5 (as printed it drops ε from the exponent).

    Supported: epsilon in [1e-06, 1000], sensitivity in [1e-280, 1e+295], grid a power of
    two in [2^-60, 2^60]; region coordinates with ``|coordinate| < 2^50·grid`` (else the
    finite-precision check refuses the grid).

    Parameters
    ----------
    epsilon : float
        ε at distance ``sensitivity`` (ε_g = epsilon / sensitivity per unit distance).
    grid : float
        Output grid step L, a power of two in the coordinates' unit (e.g. 1.0 = 1 m).
    region : ((float, float), (float, float))
        ((xmin, xmax), (ymin, ymax)): the truncation region M_r (snapped outwards to cell
        boundaries).  Outputs outside it are the exception.  Choose it as the domain of
        interest plus a margin (:meth:`with_margin`); a true point on the edge of M_r
        exits with probability > 1/2.
    sensitivity : float, default 1.0
        The distance at which ``guarantee.epsilon`` is quoted.
    domain : ((float, float), (float, float)) or None, default None
        Rectangle the true points must lie in (None: ``region``).
    tolerance : float, default 1e-3
        Largest accepted relative overhead (ε' − ε)/ε.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range or the overhead exceeds
        ``tolerance``, before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-6, 1000.0), "sensitivity": SENSITIVITY_RANGE,
                           "grid": Interval(2.0**-60, 2.0**60)})

    def __init__(
        self,
        *,
        epsilon: float,
        grid: float,
        region: Rect,
        sensitivity: float = 1.0,
        domain: Rect | None = None,
        tolerance: float = DEFAULT_TOLERANCE,
    ) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        self.grid = check_grid(grid)
        self._supported("grid", self.grid)
        (rx, ry) = _check_rect("region", region)
        self.domain = _check_rect("domain", region if domain is None else domain)
        (dx, dy) = self.domain
        if dx[0] < rx[0] or dx[1] > rx[1] or dy[0] < ry[0] or dy[1] > ry[1]:
            raise ParameterError(f"domain {self.domain!r} must lie inside region {region!r}")
        tolerance = as_real_scalar("tolerance", tolerance)
        if not (math.isfinite(tolerance) and tolerance > 0):
            raise ParameterError(f"tolerance must be a finite number > 0, got {tolerance!r}")
        xm = aligned_interval(*rx, self.grid)
        ym = aligned_interval(*ry, self.grid)
        self.region = (xm, ym)
        L = self.grid
        # index ranges of the cells inside M_r: [m, M) = [(lo - 1/2)L, (hi + 1/2)L)
        self._jx = (round(xm[0] / L + 0.5), round(xm[1] / L - 0.5))
        self._jy = (round(ym[0] / L + 0.5), round(ym[1] / L - 0.5))
        self.scale = self.sensitivity / self.epsilon
        self.diameter = math.hypot(xm[1] - xm[0], ym[1] - ym[0])
        self.max_abs = max(abs(xm[0]), abs(xm[1]), abs(ym[0]), abs(ym[1]))
        self.delta_t = delta_t_recommended(self.scale, self.diameter, self.max_abs, dim=2)
        if not MIN_GRID_OVER_DT * self.delta_t <= L:
            raise ParameterError(
                f"grid={L!r} is too fine for this region: it must be >= 2^10 * delta_t = "
                f"{MIN_GRID_OVER_DT * self.delta_t:.3g} (centre the coordinates or use a "
                "coarser grid)"
            )
        if self.epsilon * L / self.sensitivity > 1.0:  # overhead > ε (and e^x overflows)
            raise ParameterError(
                f"grid={L!r} is too coarse: epsilon * grid / sensitivity must be <= 1 (the "
                f"finite-precision overhead grows like e^(ε·grid/Δ)), got "
                f"{self.epsilon * L / self.sensitivity:.3g}")
        self.additive_c = eps_prime_overhead(self.epsilon, self.sensitivity, L, self.delta_t, 2)
        if self.additive_c > tolerance * self.epsilon:
            raise ParameterError(
                f"the finite-precision overhead c = {self.additive_c:.3g} exceeds "
                f"tolerance*epsilon = {tolerance * self.epsilon:.3g}; use a coarser grid"
            )
        self._freeze()

    @classmethod
    def with_margin(
        cls,
        *,
        epsilon: float,
        grid: float,
        domain: Rect,
        sensitivity: float = 1.0,
        exit_probability: float = 1e-3,
        tolerance: float = DEFAULT_TOLERANCE,
    ) -> PlanarLaplace:
        """Region = domain enlarged by the margin t with P[ρ > t] = exit_probability.

        Then a true point anywhere in the domain exits with probability <= exit_probability.

        Parameters
        ----------
        epsilon : float
            ε at distance ``sensitivity``.
        grid : float
            The output grid step, a power of two.
        domain : ((float, float), (float, float))
            The rectangle the true points lie in.
        sensitivity : float, default 1.0
            The distance at which ε is quoted.
        exit_probability : float, default 1e-3
            The largest probability that a true point in the domain exits the region.
        tolerance : float, default 1e-3
            As in the constructor.

        Returns
        -------
        PlanarLaplace
            The mechanism on the enlarged region.
        """
        eps = cls._supported("epsilon", epsilon)
        sens = cls._supported("sensitivity", sensitivity)
        (dx, dy) = _check_rect("domain", domain)
        t = radius_for_exit_probability(sens / eps, exit_probability)
        region = ((dx[0] - t, dx[1] + t), (dy[0] - t, dy[1] + t))
        return cls(epsilon=eps, grid=grid, region=region, sensitivity=sens, domain=(dx, dy),
                   tolerance=tolerance)

    # ------------------------------------------------------------ guarantee
    @property
    def epsilon_per_unit(self) -> float:
        """ε_g = ε/Δ: the metric privacy per unit distance."""
        return self.epsilon / self.sensitivity

    @property
    def epsilon_prime(self) -> float:
        """The corrected ε' = ε + c of the rounded, truncated release (GMP Theorem 4.5)."""
        return self.epsilon + self.additive_c

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            epsilon=self.epsilon_prime,
            delta=0.0,
            notion="metric",
            note=(
                "geo-indistinguishability: ln P[S|x]/P[S|x'] <= "
                f"{self.epsilon_per_unit:.6g}*d(x,x') + c with c = {self.additive_c:.3g} "
                "for all x, x' in the domain (GMP Thm 4.5, corrected); epsilon is the "
                "bound at d = sensitivity"
            ),
            details={
                "epsilon_ideal": self.epsilon,
                "epsilon_per_unit": self.epsilon_per_unit,
                "additive_c": self.additive_c,
                "delta_t": self.delta_t,
                "grid": self.grid,
                "sensitivity": self.sensitivity,
                "region": self.region,
                "domain": self.domain,
                "diameter": self.diameter,
            },
        )

    def loss_bound(self, distance: float) -> float:
        """ε_g·d + c: the bound on the log-probability ratio at distance d.

        Parameters
        ----------
        distance : float
            The distance d between two true points.

        Returns
        -------
        float
            ``ε_g·d + c``.
        """
        return self.epsilon_per_unit * float(distance) + self.additive_c

    # -------------------------------------------------------------- release
    def _validate(self, points: ArrayLike, clamp: bool) -> NDArray[np.float64]:
        if not isinstance(clamp, (bool, np.bool_)):  # clamp="false" is truthy: never guess
            raise ParameterError(f"clamp must be True or False, got {clamp!r}")
        arr = np.array(as_real_array("true_value", points))  # a copy: clamp writes into it
        if arr.ndim == 0 or arr.shape[-1] != 2:
            raise ParameterError(f"true_value must have shape (..., 2), got {arr.shape}")
        if arr.size and not np.all(np.isfinite(arr)):
            raise ParameterError("true_value must be finite (no NaN or infinity)")
        (dx, dy) = self.domain
        if clamp:
            arr[..., 0] = np.clip(arr[..., 0], dx[0], dx[1])
            arr[..., 1] = np.clip(arr[..., 1], dy[0], dy[1])
        elif arr.size and (arr[..., 0].min() < dx[0] or arr[..., 0].max() > dx[1]
                           or arr[..., 1].min() < dy[0] or arr[..., 1].max() > dy[1]):
            raise ParameterError(
                f"true_value must lie in the domain x in [{dx[0]:g}, {dx[1]:g}], "
                f"y in [{dy[0]:g}, {dy[1]:g}] (pass clamp=True to project onto it)"
            )
        return arr

    def release(self, true_value: ArrayLike, rng: RngLike = None, *,
                clamp: bool = False) -> PlanarRelease:
        """Private location(s) for true point(s) of shape (2,) or (..., 2).

        ``clamp=True`` projects true points onto the domain first (non-expansive, so the
        guarantee is unchanged); otherwise points outside it raise ParameterError.

        Parameters
        ----------
        true_value : array_like of float, shape (2,) or (..., 2)
            The true point(s).
        rng : RandomSource, numpy.random.Generator or None, default None
            The randomness (None: the thread's OS-keyed CryptoRandom).
        clamp : bool, default False
            Project true points onto the domain first.

        Returns
        -------
        PlanarRelease
            The released grid points and which of them are the exception.

        Raises
        ------
        ParameterError
            If a true point is not finite or lies outside the domain (without ``clamp``).
        """
        arr = self._validate(true_value, clamp)  # before any random word
        flat = arr.reshape(-1, 2)
        source = resolve_rng(rng)
        pts, exited = self._sample(source, flat)
        shape = arr.shape[:-1]
        return PlanarRelease(points=pts.reshape(arr.shape), exited=exited.reshape(shape))

    def _sample(self, rng: RandomSource, xy: NDArray[np.float64]
                ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        n = xy.shape[0]
        out = np.empty((n, 2), dtype=np.float64)
        exited = np.empty(n, dtype=bool)
        chunk = max(1, min(n, _CHUNK))
        words = np.empty(WORDS_PER_DRAW * chunk + 8, dtype=np.uint64)
        L = self.grid
        kern = _planar_kernel() if n >= 16 else None
        if kern is not None:
            xy = np.ascontiguousarray(xy, dtype=np.float64)
            consts = (float(self.scale), LN2, TWO_PI_ULP, float(L), float(self._jx[0]),
                      float(self._jx[1]), float(self._jy[0]), float(self._jy[1]),
                      TABLES[0].ctypes.data, TABLES[1].ctypes.data)
            lbuf = np.empty((2, chunk))
        for start in range(0, n, chunk):
            c = min(chunk, n - start)
            fill_words(rng, words, WORDS_PER_DRAW * c)
            w = words[: WORDS_PER_DRAW * c].reshape(WORDS_PER_DRAW, c)
            if kern is not None:  # numpy's log1p (the reference's), the rest compiled
                l1, l2 = lbuf[0, :c], lbuf[1, :c]
                np.right_shift(w[2], np.uint64(12), out=w[2])  # the words are used once
                np.right_shift(w[3], np.uint64(12), out=w[3])
                np.multiply(w[2], F_ULP, out=l1)
                np.multiply(w[3], F_ULP, out=l2)
                np.log1p(l1, out=l1)
                np.log1p(l2, out=l2)
                if kern(words.ctypes.data, c, l1.ctypes.data, l2.ctypes.data,
                        xy[start:].ctypes.data, *consts, out[start:].ctypes.data,
                        exited[start:].ctypes.data) == 0:
                    continue
                # an all-zero exponent word (p = 2^-64): the reference, from the same words
                np.left_shift(w[2], np.uint64(12), out=w[2])  # restore bits 12..63 (the
                np.left_shift(w[3], np.uint64(12), out=w[3])  # reference reads only those)
            x, y = self._raw_points(rng, w, xy[start : start + c])
            jx = np.rint(x / L)
            jy = np.rint(y / L)
            bad = ((jx < self._jx[0]) | (jx > self._jx[1])
                   | (jy < self._jy[0]) | (jy > self._jy[1]))
            jx[bad] = np.nan
            jy[bad] = np.nan
            out[start : start + c, 0] = jx * L
            out[start : start + c, 1] = jy * L
            exited[start : start + c] = bad
        return out, exited

    def _raw_points(self, rng: RandomSource, w: NDArray[np.uint64], xy: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """x0 + ρ(cos θ, sin θ) in float64 (before rounding) from words w[0..4] per draw."""
        E = _exponential(rng, w[0], w[2]) + _exponential(rng, w[1], w[3])
        rho = self.scale * E
        cos_t, sin_t = cos_sin(w[4])  # θ = 2π·(w >> 11)·2^-53 (planar_angle: |error| < 2^-50)
        return xy[:, 0] + rho * cos_t, xy[:, 1] + rho * sin_t

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """Per point (last axis = (x, y)): a grid point j·L inside the region, or the EXCEPTION
        outcome (both coordinates NaN)."""
        pts = y.astype(np.float64, copy=False)
        if pts.shape[-1:] != (2,):
            raise ParameterError(f"outputs must have shape (..., 2), got {pts.shape}")
        jx, jy = pts[..., 0] / self.grid, pts[..., 1] / self.grid
        exited = np.isnan(jx) & np.isnan(jy)
        with np.errstate(invalid="ignore"):
            on_grid = (np.floor(jx) == jx) & (np.floor(jy) == jy)
            inside = ((jx >= self._jx[0]) & (jx <= self._jx[1])
                      & (jy >= self._jy[0]) & (jy <= self._jy[1]))
        return exited | (on_grid & inside)

    def noise(self, true_value: ArrayLike | None = None) -> PlanarLaplaceNoise:
        if true_value is not None and np.shape(true_value) != (2,):
            raise ParameterError("true_value must be ONE point (x, y) for noise(), got shape "
                                 f"{np.shape(true_value)}: call noise() once per point")
        centre = (0.0, 0.0) if true_value is None else tuple(
            self._validate(true_value, False).reshape(2).tolist())
        return PlanarLaplaceNoise(self.scale, centre, self.grid)  # type: ignore[arg-type]

    def privacy_model(self, pairs: list[tuple[tuple[float, float], tuple[float, float]]]
                      | None = None, max_cells: int = 40_000) -> Any:
        """Model for :func:`dpnoise.verify`: the ideal law (δt = 0) of the rounded,
        truncated release, cell by cell plus the exception, for pairs of true points.

        Default pairs: points at distance ``sensitivity`` (along x, along y, diagonal)
        from the domain's centre and from its lower-left corner.  The verifier's loss
        must be <= ε = ε_g·Δ; the finite-precision constant c comes from GMP's theorem
        (checked separately in tests/test_planar.py).  Refuses more than ``max_cells``.

        Parameters
        ----------
        pairs : list of ((float, float), (float, float)) or None, default None
            Pairs of true points (None: the defaults above).
        max_cells : int, default 40000
            The largest number of cells evaluated.

        Returns
        -------
        object
            A discrete family that :func:`dpnoise.verify` evaluates.
        """
        from ..verify import DiscreteFamily

        jx, jy = self.cell_indices()
        if jx.size * jy.size > max_cells:
            raise ParameterError(
                f"the region has {jx.size * jy.size} cells; verification is limited to "
                f"{max_cells} (use a coarser grid or a smaller region for the check)")
        if pairs is None:
            (dx, dy) = self.domain
            d = self.sensitivity
            bases = [((dx[0] + dx[1]) / 2, (dy[0] + dy[1]) / 2), (dx[0], dy[0])]
            steps = [(d, 0.0), (0.0, d), (d / math.sqrt(2), d / math.sqrt(2))]
            pairs = []
            for bx, by in bases:
                for sx, sy in steps:
                    other = (min(bx + sx, dx[1]), min(by + sy, dy[1]))
                    pairs.append(((bx, by), other))
        points = sorted({p for pair in pairs for p in pair})
        index = {p: float(i) for i, p in enumerate(points)}

        def law(i: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
            lp = self.noise(points[int(i)]).cell_logprob(jx, jy).ravel()
            p_exit = max(0.0, 1.0 - math.fsum(np.exp(lp).tolist()))
            keys = np.append(np.arange(lp.size), -1)
            return keys, np.append(lp, math.log(p_exit) if p_exit > 0 else -math.inf)

        return DiscreteFamily(inputs=[index[p] for p in points], sensitivity=self.sensitivity,
                              law=law, pairs=[(index[a], index[b]) for a, b in pairs])

    def cell_indices(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Grid indices (jx, jy) of the cells of M_r along each axis.

        Returns
        -------
        tuple of numpy.ndarray of int64
            ``(jx, jy)``.
        """
        return (np.arange(self._jx[0], self._jx[1] + 1, dtype=np.int64),
                np.arange(self._jy[0], self._jy[1] + 1, dtype=np.int64))

    def __repr__(self) -> str:
        return (f"PlanarLaplace(epsilon={self.epsilon!r}, grid={self.grid!r}, "
                f"region={self.region!r}, sensitivity={self.sensitivity!r})")


@lru_cache(maxsize=1)
def _planar_kernel() -> Any:
    """The compiled chunk of :meth:`PlanarLaplace._sample` (``kernels/planar.c``), or None
    when the kernels are off."""
    from .. import kernels

    vp, i64, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
    return kernels.function("dpk_planar", [vp, i64, vp, vp, vp, *([f64] * 8), vp, vp, vp, vp],
                            i64)


def _exponential(rng: RandomSource, ew: NDArray[np.uint64], fw: NDArray[np.uint64]
                 ) -> NDArray[np.float64]:
    """E = e·ln2 − log1p(f·2^-52): e = 1 + trailing zeros of ``ew`` (continued on fresh
    words when a word is 0, probability 2^-64), f = top 52 bits of ``fw``."""
    lowest = ew & (~ew + np.uint64(1))
    e = np.bitwise_count(lowest - np.uint64(1)).astype(np.float64) + 1.0  # 0 -> 65
    zero = np.flatnonzero(ew == 0)
    if zero.size:  # pragma: no cover - probability 2^-64 per draw
        e[zero] = 64.0
        for i in zero:
            while True:
                v = int(rng.words(1)[0])
                if v:
                    e[i] += ((v & -v).bit_length() - 1) + 1
                    break
                e[i] += 64.0
    f = (fw >> np.uint64(12)).astype(np.float64) * F_ULP
    return e * LN2 - np.log1p(f)
