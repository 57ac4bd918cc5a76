"""Multivariate staircase noise (Soria-Comas & Domingo-Ferrer 2013 §6, Thm 13), exact on a grid.

Theorem 13 with the corrected union (it runs to i), in nested-set form.

On the cells of a per-coordinate power-of-two grid, with the level function ℓ(z) of the
shape (box or L1 ball) the released pmf is, ideally, p(z) = C·r^ℓ(z), r = 2^(-a/M).  It
is the nested mixture  Σ_i P(I = i)·Uniform(B_i)  with B_i = {ℓ <= i} and
P(I = i) ∝ r^i |B_i|.  |B_i| = P(i) is an integer polynomial of degree d in i, so

    Σ_i r^i P(i) = h(r) / (1 − r)^(d+1),   h_m = Σ_t (−1)^t C(d+1, t) P(m − t),

i.e. I = m + G_1 + ... + G_(d+1): m from a 4-outcome-ish alias table (weights h_m r^m,
which must be >= 0 -- checked) and G_j iid exact geometrics (ratio r, RatioGeometric).
The uniform point of B_I uses one word per coordinate mapped by an exact 64x64->128
multiply-high, so index u of [0, n) has probability ⌊·⌋ or ⌈2^64/n⌉ / 2^64 (known).
Everything sampled is a known dyadic pmf; the deviation from the ideal is bounded by
η = η_m + (d+1)·η_geo + d·n_max/2^64 per cell, so the loss is <= a·ln2/M + 2η, which the
calibration keeps <= ε.  dpnoise.verify checks the exact cell pmf on a window of cells
(``privacy_model``, an AdditiveGrid).  Level draws whose uniform range would exceed
n_max = 2^40 cells raise PrecisionError (probability reported as ``overflow_log10``).

References:
  * J. Soria-Comas, J. Domingo-Ferrer, "Optimal data-independent noise for differential
    privacy", Information Sciences 250:200-214, 2013.
"""

from __future__ import annotations

import ctypes
import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError, PrecisionError
from ..exact.nested_levels import NestedLevels
from ..exact.ratio_geometric import RatioGeometric, ratio_candidates
from ..exact.words import index_probability, mulhi64
from ..grid import (
    check_representable,
    grid_sensitivity,
    power_of_two_at_most,
    round_half_up_inplace,
    to_index,
)
from ..laws.staircase import ROUNDING_ALLOWANCE
from ..params import (
    EXACT_INTEGER,
    LN2,
    Interval,
    as_real_scalar,
    check_int,
    check_values,
    supported,
)
from ..randomness import RandomSource, RngLike, fill_words, resolve_rng
from .base import Guarantee, Mechanism
from .staircase import MAX_EPSILON, STAIRCASE_SENSITIVITY

MV_MIN_EPSILON = 3e-3  # the level ratio 2^(-a/M) with M <= 256 needs ε/ln2 >= 1/256

N_MAX_BITS = 40
L1_INDEX_BITS = 48


@lru_cache(maxsize=1)
def _mv_box_kernel() -> Any:
    """The compiled chunk body of :meth:`MultivariateStaircase.release`
    (``kernels/multivariate.c``: bit-for-bit :meth:`MultivariateBase._reference_chunk` from
    the same words), or None when the kernels are off."""
    from .. import kernels

    vp, i64, u64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64
    return kernels.function("dpk_mv_box", [vp, i64, i64, vp, vp, i64, u64, vp, vp, i64, u64,
                                           vp, i64, i64, vp, vp, vp, vp, vp, vp], i64)


def calibrate_levels(epsilon: float, poly: list[int], eta_u: float, max_block: int = 256
                  ) -> tuple[NestedLevels, float]:
    for a, M in ratio_candidates(epsilon / LN2, max_block)[:200]:
        try:
            lv = NestedLevels(poly, RatioGeometric(a, M))
        except ParameterError:
            continue
        bound = a * LN2 / M + 2 * (lv.eta + eta_u)
        if bound + ROUNDING_ALLOWANCE <= epsilon:
            return lv, bound
    raise ParameterError(f"could not calibrate the multivariate staircase for epsilon={epsilon!r}")


class MultivariateBase(Mechanism):
    """Shared release/verification machinery for the box and the L1-ball staircase."""

    dim: int
    epsilon: float
    levels: NestedLevels
    loss_bound: float
    grids: NDArray[np.float64]

    def _poly(self, i: int) -> int:  # number of magnitude cells in B_i
        raise NotImplementedError

    #: words per vector that :meth:`_half_from_words` reads (0: :meth:`_uniform` draws them)
    _uniform_words_per_draw = 0

    def _uniform(self, rng: RandomSource, I: NDArray[np.int64]) -> NDArray[np.int64]:
        """(n, d) half-offset cell offsets u (cell centre = u + 1/2) uniform in B_I."""
        raise NotImplementedError

    def _cells_per_level(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(2S, 2Z): level I has 2n = 2Z + I·2S cells per coordinate (box only)."""
        raise NotImplementedError

    def _half_from_words(self, w: NDArray[np.uint64], m2: NDArray[np.int64],
                         c21: NDArray[np.int64]) -> NDArray[np.int64]:
        """2u + (2c + 1) for u = :meth:`_uniform` computed from its words ``w``; all three
        arrays flat (n·d,), ``m2`` = 2n (the cells per coordinate, doubled)."""
        raise NotImplementedError

    def cell_level(self, u: NDArray[np.int64]) -> NDArray[np.int64]:
        """The staircase level of each noise cell.

        Parameters
        ----------
        u : numpy.ndarray of int64, shape (n, d)
            Cell offsets from the centre.

        Returns
        -------
        numpy.ndarray of int64
            The level index I of each cell (0 on the plateau).
        """
        raise NotImplementedError

    def _cell_prob_given(self, u: NDArray[np.int64], i: int) -> NDArray[np.float64]:
        raise NotImplementedError

    @property
    def effective_epsilon(self) -> float:
        """The exact ε of the sampled level law (its geometric decay), <= ``epsilon``."""
        return self.levels.geo.decay

    @property
    def overflow_log10(self) -> float:
        """log10 of a bound on P(I > i_max) (such draws raise PrecisionError)."""
        g = self.levels.geo
        # P(I >= i) <= (d+1)·P(G >= (i−d)/(d+1)) and P(G >= k) <= 2^(-a·floor(k/M))
        k = max(0, (self.i_max - self.dim) // (self.dim + 1))
        return math.log10(self.dim + 1) - g.a * (k // g.M) * math.log10(2)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            epsilon=self.epsilon,
            delta=0.0,
            notion="pure",
            note=("exact lattice sampler; loss bound from the integer tables "
                  "(PrecisionError instead of output with probability 10^overflow_log10)"),
            details={"loss_bound": self.loss_bound,
                     "effective_epsilon": self.effective_epsilon,
                     "ratio_a": self.levels.geo.a, "ratio_M": self.levels.geo.M,
                     "overflow_log10": self.overflow_log10},
        )

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        """Release a vector (shape (d,)) or a batch of vectors (shape (n, d)).

        Parameters
        ----------
        true_value : float or array_like of float
            The true answer(s): a number or a rectangular real array, checked before any random
            word is read.
        rng : RandomSource, numpy.random.Generator or None, default None
            The randomness (None: the thread's OS-keyed :class:`~dpnoise.CryptoRandom`).

        Returns
        -------
        float or numpy.ndarray
            A Python number for a scalar input, else an array of the input's shape, drawn from
            the exact law :meth:`noise` at each true value.

        Raises
        ------
        ParameterError
            If a true value is not finite or outside the supported range.
        """
        x = check_values("true_value", true_value)
        if x.shape[-1:] != (self.dim,):
            raise ParameterError(f"true_value must have last dimension {self.dim}, got {x.shape}")
        flat = x.reshape(-1, self.dim)
        for k in range(self.dim):  # |x/L| < 2^51, before any random word
            check_representable(flat[:, k], float(self.grids[k]))
        source = resolve_rng(rng)
        out = np.empty(flat.shape, dtype=np.float64)
        N, d = flat.shape
        step = 1 << 13  # cache-sized chunks
        nl = self.levels.words_per_draw
        nu = self._uniform_words_per_draw  # words of the uniform point drawn with the levels
        words = np.empty((nl + nu) * min(step, N) + 8, dtype=np.uint64)
        kern = _mv_box_kernel() if nu and N >= 16 else None
        if kern is not None:
            flat = np.ascontiguousarray(flat, dtype=np.float64)
            kargs = self._box_kernel_args()
        ref = None
        for start in range(0, N, step):  # per chunk: the level words, then the uniform words
            stop = min(start + step, N)
            k = stop - start
            fill_words(source, words, (nl + nu) * k)
            if kern is not None and kern(words.ctypes.data, k, d, *kargs,
                                         flat[start:stop].ctypes.data,
                                         out[start:stop].ctypes.data) == 0:
                continue  # else (a count of 63 zeros, p = 2^-63, or an error): the reference
            if ref is None:
                ref = self._reference_buffers(min(step, N))
            self._reference_chunk(source, words, flat[start:stop], out[start:stop], ref)
        return out.reshape(x.shape)

    def _reference_buffers(self, rows: int) -> dict[str, Any]:
        """Preallocated chunk buffers of the numpy reference (rows vectors)."""
        d = self.dim
        m = rows * d
        # per-coordinate constants tiled over a chunk: every array op below is on flat,
        # contiguous (k·d,) arrays (a broadcast (k, d) x (1, d) op runs a d-long inner loop)
        grid_t = np.tile(self.grids, rows)
        buf: dict[str, Any] = {"q": np.empty(m), "w": np.empty(m),
                               "c": np.empty(m, dtype=np.int64), "grid": grid_t,
                               "half_grid": grid_t / 2}
        if self._uniform_words_per_draw:
            two_s, two_z = self._cells_per_level()
            buf["two_s"], buf["two_z"] = np.tile(two_s, rows), np.tile(two_z, rows)
        return buf

    def _reference_chunk(self, source: RandomSource, words: NDArray[np.uint64],
                         x: NDArray[np.float64], out: NDArray[np.float64],
                         buf: dict[str, Any]) -> None:
        """The numpy reference for one chunk of vectors ``x`` (k, d) whose words are already
        in ``words`` (levels, then the uniform point): writes ``out`` (k, d)."""
        k, d = x.shape
        nl = self.levels.words_per_draw
        nu = self._uniform_words_per_draw
        q, c21 = buf["q"][: k * d], buf["c"][: k * d]
        np.divide(x.reshape(-1), buf["grid"][: k * d], out=q)  # exact: L = 2^j
        round_half_up_inplace(q, buf["w"][: k * d])  # c = floor(x/L + 1/2), as to_index
        c21[:] = q
        np.add(c21, c21, out=c21)
        np.add(c21, 1, out=c21)  # 2c + 1
        I = self.levels.sample_words(source, words, k)
        if I.size and I.max() > self.i_max:
            raise PrecisionError("noise level beyond the exactly representable range "
                                 f"(probability <= 10^{self.overflow_log10:.0f})")
        if nu:  # 2n = 2Z + I·2S per coordinate, then 2(c + u) + 1 from the words
            m2 = np.repeat(I, d)
            np.multiply(m2, buf["two_s"][: k * d], out=m2)
            np.add(m2, buf["two_z"][: k * d], out=m2)
            half = self._half_from_words(words[nl * k : (nl + nu) * k], m2, c21)
        else:
            half = 2 * self._uniform(source, I).reshape(-1) + c21
        if max(-int(half.min(initial=0)), int(half.max(initial=0))) >= EXACT_INTEGER:
            raise PrecisionError("release fell outside the exactly representable range")
        np.multiply(half, buf["half_grid"][: k * d], out=out.reshape(-1))

    def cell_logpmf(self, u: NDArray[np.int64], *, levels_beyond: int = 0) -> NDArray[np.float64]:
        """Exact ln P(noise cell = u) (u: (n, d) offsets), summing the mixture over I.

        Parameters
        ----------
        u : numpy.ndarray of int64, shape (n, d)
            Cell offsets.
        levels_beyond : int, default 0
            Extra levels summed beyond the cell's own (for tail checks).

        Returns
        -------
        numpy.ndarray of float64
            ``ln P(noise cell = u)``.
        """
        u = np.atleast_2d(np.asarray(u, dtype=np.int64))
        lev = self.cell_level(u)
        top = int(lev.max()) + 1 + max(levels_beyond, self._tail_levels())
        pI = self.levels.pmf(top + 1)
        out = np.zeros(u.shape[0])
        for i in range(int(lev.min()), top + 1):
            sel = lev <= i
            if np.any(sel):
                out[sel] += pI[i] * self._cell_prob_given(u[sel], i)
        with np.errstate(divide="ignore"):
            return np.log(out)

    def _tail_levels(self) -> int:
        """Extra levels after which P(I = i) is < 1e-25 of its peak (rel. error of the sum)."""
        g = self.levels.geo
        per = g.a / g.M * LN2
        return math.ceil((60 + 10 * self.dim) / per) + 2 * self.dim

    def privacy_model(self, *, levels: int = 3) -> Any:
        """Exact cell pmf on a window of ``levels`` levels, shifts = the neighbour set.

        Parameters
        ----------
        levels : int, default 3
            How many levels the window holds.

        Returns
        -------
        object
            A lattice family that :func:`dpnoise.verify` evaluates.
        """
        from ..verify import AdditiveGrid

        return AdditiveGrid(logpmf=self.cell_logpmf, shifts=self.neighbour_shifts(),
                            window=self.window(levels))

    def neighbour_shifts(self) -> NDArray[np.int64]:
        """The cell shifts a neighbouring input can cause.

        Returns
        -------
        numpy.ndarray of int64, shape (m, d)
            Every shift of the true value's cell between neighbours.
        """
        raise NotImplementedError

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """Rows on the per-coordinate half-offset grids (y_k / (L_k/2) odd integers)."""
        if y.shape[-1:] != self.grids.shape:
            raise ParameterError(f"outputs must have shape (..., {self.grids.size}), "
                                 f"got {y.shape}")
        with np.errstate(over="ignore", invalid="ignore"):  # inf, NaN: not odd integers
            v = np.atleast_2d(y.astype(np.float64, copy=False)) / (self.grids / 2)[None, :]
            return np.all((np.floor(v) == v) & (np.mod(v, 2) == 1), axis=-1)

    def var(self) -> NDArray[np.float64]:
        raise NotImplementedError

    def noise(self, true_value: ArrayLike | None = None) -> MultivariateNoise:
        if true_value is None:
            return MultivariateNoise(self, np.zeros(self.dim))
        x = check_values("true_value", true_value)
        if x.shape != (self.dim,):
            raise ParameterError(f"true_value must be ONE point of {self.dim} entries for "
                                 f"noise() (shape ({self.dim},)), got shape {x.shape}")
        c = np.array([float(to_index(x[k : k + 1], float(self.grids[k]))[0]) for k in
                      range(self.dim)])
        return MultivariateNoise(self, c * self.grids)

    def window(self, levels: int) -> tuple[int, ...]:
        """Half-widths (in cells) of a window holding ``levels`` levels.

        Parameters
        ----------
        levels : int
            The number of levels.

        Returns
        -------
        tuple of int
            One half-width per coordinate.
        """
        raise NotImplementedError


class MultivariateNoise:
    """Exact law of a multivariate staircase release around a grid centre."""

    def __init__(self, mech: MultivariateBase, center: NDArray[np.float64]) -> None:
        self.mech = mech
        self.center = center

    def logpmf(self, y: ArrayLike) -> NDArray[np.float64]:
        """ln P(release = y) for points y of shape (n, d) (−inf off the half-offset grid)."""
        y = np.atleast_2d(np.asarray(y, dtype=np.float64))
        cells = (y - self.center[None, :]) / self.mech.grids[None, :] - 0.5
        on = np.all(np.floor(cells) == cells, axis=1)
        out = np.full(y.shape[0], -np.inf)
        if np.any(on):
            out[on] = self.mech.cell_logpmf(cells[on].astype(np.int64))
        return out

    def pmf(self, y: ArrayLike) -> NDArray[np.float64]:
        return np.exp(self.logpmf(y))

    def mean(self) -> NDArray[np.float64]:
        return self.center.copy()

    def var(self) -> NDArray[np.float64]:
        return self.mech.var()

    def std(self) -> NDArray[np.float64]:
        return np.sqrt(self.var())


class MultivariateStaircase(MultivariateBase):
    """Optimal noise for a vector query with per-coordinate sensitivities (box S_f).

    S_f = Π[−s_k, s_k] (each coordinate moves by at most s_k between neighbours, all at
    once allowed), S_0 = λ·S_f.  Default λ minimises the per-coordinate variance.
    Released exactly on per-coordinate grids L_k = 2^j <= s_k/2^grid_bits.

    Supported: epsilon in [0.003, 20] (the level ratio 2^(-a/M) needs M <= 256), each of
    1..8 sensitivities in [1e-140, 1e+140]; true values ``|x_k| < 2^51·L_k``.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    sensitivities : array_like of float
        s_k for each of 1..8 coordinates.
    lam : float or None, default None
        λ in [0, 1], the plateau S_0 = λ·S_f (None: the per-coordinate variance optimum).
    grid_bits : int, default 10
        Grid step L_k = 2^j <= s_k / 2^grid_bits (1..16).

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(MV_MIN_EPSILON, MAX_EPSILON),
                           "sensitivities": STAIRCASE_SENSITIVITY})

    def __init__(self, *, epsilon: float, sensitivities: ArrayLike, lam: float | None = None,
                 grid_bits: int = 10) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        if isinstance(sensitivities, (list, tuple, np.ndarray)):
            try:
                raw = np.asarray(sensitivities, dtype=object)
            except ValueError as exc:
                raise ParameterError("sensitivities must be a 1-D list of 1..8 values") from exc
        else:
            raw = np.asarray([sensitivities], dtype=object)
        if raw.ndim != 1 or raw.size < 1 or raw.size > 8:
            raise ParameterError("sensitivities must be a 1-D list of 1..8 values")
        s = np.array([self._supported("sensitivities", v) for v in raw.tolist()])
        self.sensitivities = s
        self.dim = int(s.size)
        self.sensitivity = float(self.sensitivities.max())
        from ..laws.staircase import optimal_lambda

        self.lam = optimal_lambda(self.epsilon, self.dim) if lam is None else \
            as_real_scalar("lam", lam)
        if not (math.isfinite(self.lam) and 0 <= self.lam <= 1):
            raise ParameterError(f"lam must be in [0, 1], got {lam!r}")
        grid_bits = check_int("grid_bits", grid_bits, lower=1, upper=16)  # no bool
        self.grids = np.array([power_of_two_at_most(v) / 2.0**grid_bits
                               for v in self.sensitivities])
        self.S = np.array([grid_sensitivity(v, g) for v, g in
                           zip(self.sensitivities, self.grids, strict=True)], dtype=np.int64)
        self.Z = np.array([round(self.lam * int(Sk)) for Sk in self.S], dtype=np.int64)
        self.i_max = int(((1 << (N_MAX_BITS - 1)) - int(self.Z.max())) // int(self.S.max()))
        poly = [self._poly(i) for i in range(self.dim + 1)]
        self.levels, self.loss_bound = calibrate_levels(self.epsilon, poly,
                                                     self.dim * 2.0 ** (N_MAX_BITS - 64))
        self._freeze()

    def _poly(self, i: int) -> int:
        return math.prod(int(z) + i * int(s) for z, s in zip(self.Z, self.S, strict=True))

    def _box_kernel_args(self) -> tuple[Any, ...]:
        """Table addresses and constants for :func:`_mv_box_kernel` (the arrays live in
        self's caches, so the addresses stay valid)."""
        lv = self.levels
        thr2_m, out2_m, sh_m, mask_m = lv._kernel(lv.m_table)
        thr2_g, out2_g, sh_g, mask_g = lv._kernel(lv.geo.table)
        two_s, two_z = self._cells_per_level()
        keep = self.__dict__.setdefault("_kernel_consts", {})
        if not keep:
            keep["two_s"] = np.ascontiguousarray(two_s, dtype=np.int64)
            keep["two_z"] = np.ascontiguousarray(two_z, dtype=np.int64)
            keep["inv"] = np.ascontiguousarray(1.0 / self.grids)
            keep["half"] = np.ascontiguousarray(self.grids / 2)
            keep["q_of_t"] = np.ascontiguousarray(lv.geo.q_of_t, dtype=np.int64)
        return (thr2_m.ctypes.data, out2_m.ctypes.data, int(sh_m), int(mask_m),
                thr2_g.ctypes.data, out2_g.ctypes.data, int(sh_g), int(mask_g),
                keep["q_of_t"].ctypes.data, int(lv.geo.M), int(self.i_max),
                keep["two_s"].ctypes.data, keep["two_z"].ctypes.data, keep["inv"].ctypes.data,
                keep["half"].ctypes.data)

    _uniform_words_per_draw = property(lambda self: self.dim)  # type: ignore[assignment]

    def _uniform(self, rng: RandomSource, I: NDArray[np.int64]) -> NDArray[np.int64]:
        n = self.Z[None, :] + I[:, None] * self.S[None, :]  # magnitude cells per coordinate
        w = rng.words(n.size).reshape(n.shape)
        idx = mulhi64(w, (2 * n).astype(np.uint64)).astype(np.int64)
        return idx - n

    def _cells_per_level(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        return 2 * self.S, 2 * self.Z

    def _half_from_words(self, w: NDArray[np.uint64], m2: NDArray[np.int64],
                         c21: NDArray[np.int64]) -> NDArray[np.int64]:
        """2(c + u) + 1 with u = floor(w·2n/2^64) − n: the words and arithmetic of
        :meth:`_uniform`, written as 2·idx − 2n + (2c + 1) in place (flat arrays)."""
        half = mulhi64(w, m2.view(np.uint64)).view(np.int64)
        np.add(half, half, out=half)
        np.subtract(half, m2, out=half)
        np.add(half, c21, out=half)
        return half

    def cell_level(self, u: NDArray[np.int64]) -> NDArray[np.int64]:
        K = np.where(u >= 0, u, -u - 1)  # magnitude cell
        per = np.where(K < self.Z, 0, 1 + (K - self.Z) // self.S)
        return per.max(axis=1)

    def _cell_prob_given(self, u: NDArray[np.int64], i: int) -> NDArray[np.float64]:
        n = self.Z + i * self.S
        out = np.ones(u.shape[0])
        for k in range(self.dim):
            out *= index_probability(u[:, k] + n[k], np.full(u.shape[0], 2 * n[k]))
        return out

    def neighbour_shifts(self) -> NDArray[np.int64]:
        axes = [np.arange(-int(s), int(s) + 1) for s in self.S]
        return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, self.dim)

    def window(self, levels: int) -> tuple[int, ...]:
        return tuple(int(z + levels * s) for z, s in zip(self.Z, self.S, strict=True))

    def ideal(self) -> Any:
        """The ideal (continuous) box-staircase density of the optimal family.

        Returns
        -------
        BoxStaircaseDensity
            Its ``var``, ``region_size`` and density.
        """
        from ..laws.staircase import BoxStaircaseDensity

        return BoxStaircaseDensity(epsilon=self.epsilon, sensitivities=self.sensitivities,
                                   plateau=self.lam * self.sensitivities)

    def var(self) -> NDArray[np.float64]:
        """Exact per-coordinate variance of the released noise (cells -> units).

        Returns
        -------
        numpy.ndarray of float64
            One variance per coordinate.
        """
        N = self._tail_levels() * 4
        pI = self.levels.pmf(N)
        n = self.Z[None, :] + np.arange(N)[:, None] * self.S[None, :]
        # uniform-ish on 2n cells of half-offset centres: E[(u+1/2)^2] = (4n^2 − 1)/12
        second = (4.0 * n.astype(np.float64) ** 2 - 1) / 12
        return (pI[:, None] * second).sum(axis=0) * self.grids**2

    def region_size(self, level: float) -> float:
        """Volume of the smallest region holding ``level`` (ideal law).

        Parameters
        ----------
        level : float
            A probability in (0, 1).

        Returns
        -------
        float
            The region's volume.
        """
        return self.ideal().region_size(level)

    def __repr__(self) -> str:
        return (f"MultivariateStaircase(epsilon={self.epsilon!r}, "
                f"sensitivities={tuple(self.sensitivities.tolist())!r}, lam={self.lam:.6g})")
