"""Shared parts of the integer-output mechanisms (:class:`~dpnoise.CountNoise`,
:class:`~dpnoise.Geometric`, :class:`~dpnoise.DiscreteGaussian`): validation of the true counts,
the exact output law :class:`IntegerLaw`, and the boundary handling.

Boundary handling, all configured publicly, never by branching on the count:

* ``lower``/``upper`` declare the domain of true counts (default [0, ∞)); a true count
  outside it is a caller bug and raises ParameterError before any randomness is drawn.
* ``boundary="clamp"`` (default): Y = clamp(n + Z, lower, upper) -- post-processing, so
  the guarantee is unchanged; outputs are integers in [lower, upper] (never negative for
  counts); unbiased away from the ends, P(Y = n) >= η everywhere.
* ``boundary="clip"`` (CountNoise only): Y = clip(n, lower + k, upper − k) + Z with k the
  support radius -- clipping is 1-Lipschitz, so sensitivity and guarantee are unchanged,
  Y ∈ [lower, upper], and the noise law is intact (bias only for counts within k of an end).
* ``boundary="none"``: Y = n + Z (may leave [lower, upper], e.g. be negative near 0).

Every element goes through the same vectorised operations whatever its value (clamps are
``np.maximum``/``np.minimum``), so the time taken does not depend on the private counts.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..laws.base import TableLaw
from ..params import EXACT_INTEGER, output_buffer, real_array
from ..randomness import RandomSource, RngLike, resolve_rng
from .base import INT_SCALARS, Mechanism, as_output, compiled_spans

MAX_D = 256  # exact rational construction cost grows ~D^3 in bits; ±256 is ample for counts
MAX_COUNT = EXACT_INTEGER  # counts are exact as float64 below it
Boundary = Literal["clamp", "clip", "none"]


def check_support_radius(D: Any) -> int:
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)):
        raise ParameterError(f"D must be an integer in [1, {MAX_D}], got {D!r}")
    if not 1 <= int(D) <= MAX_D:
        raise ParameterError(f"D must be an integer in [1, {MAX_D}], got {D!r}")
    return int(D)


def check_count_bound(name: str, v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise ParameterError(f"{name} must be an integer or None, got {v!r}")
    if abs(int(v)) >= MAX_COUNT:
        raise ParameterError(f"{name} must be in (-2^53, 2^53), got {v!r}")
    return int(v)


def check_integer_sensitivity(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer, float)) or (
        isinstance(v, float) and not v.is_integer()
    ):
        raise ParameterError(f"sensitivity must be an integer >= 1, got {v!r}")
    if not 1 <= int(v) <= 1 << 20:
        raise ParameterError(f"sensitivity must be an integer in [1, 2^20], got {v!r}")
    return int(v)


@lru_cache(maxsize=1)
def _bounds_kernel() -> Any:
    """``dpk_count_bounds`` (kernels/count_bounds.c), or None when the kernels are off."""
    from .. import kernels

    vp = ctypes.c_void_p
    return kernels.function("dpk_count_bounds", [vp, ctypes.c_int64, vp])


def _extremes(flat: NDArray[np.int64]) -> tuple[int, int]:
    """(min, max) of a non-empty 1-D array in one read: one compiled pass (a single foreign
    call) for contiguous int64 counts, else min and max of each 2^15 block while it is in
    cache."""
    fn = _bounds_kernel() if flat.size >= 64 else None
    if fn is not None and flat.dtype == np.int64 and flat.flags.c_contiguous:
        both = np.empty(2, dtype=np.int64)
        fn(flat.ctypes.data, flat.size, both.ctypes.data)
        return int(both[0]), int(both[1])
    step = 1 << 15
    lo_v, hi_v = int(flat[0]), int(flat[0])
    for i in range(0, flat.size, step):
        blk = flat[i : i + step]
        lo_v = min(lo_v, int(blk.min()))
        hi_v = max(hi_v, int(blk.max()))
    return lo_v, hi_v


def check_counts(values: ArrayLike, lower: int | None, upper: int | None
                 ) -> NDArray[np.int64]:
    """True counts as int64: integers (integer-valued floats accepted), inside [lower, upper]."""
    arr = real_array("true_value", values)  # refuses bool, str, bytes, complex, ragged
    if arr.dtype.kind == "f":
        if arr.size and not np.all(np.isfinite(arr)):
            raise ParameterError("true_value must be finite integers (no NaN or infinity)")
        # float(): comparing a float16 with 2^53 would cast 2^53 to float16 (an overflow warning)
        if arr.size and (np.any(arr != np.floor(arr)) or float(np.max(np.abs(arr))) >= MAX_COUNT):
            raise ParameterError("true_value must be integers with |value| < 2^53")
    elif arr.dtype.kind == "u" and arr.size and arr.max() >= MAX_COUNT:
        raise ParameterError("true_value must be < 2^53")
    out = arr.astype(np.int64, copy=False)
    if out.size:
        from ..parallel import chunk_map

        flat = out.reshape(-1)
        parts = chunk_map(flat.size, lambda s, e: _extremes(flat[s:e]))  # threads when large
        lo_v, hi_v = min(p[0] for p in parts), max(p[1] for p in parts)
        if max(-lo_v, hi_v) >= MAX_COUNT:
            raise ParameterError("true_value must satisfy |value| < 2^53")
        if (lower is not None and lo_v < lower) or (upper is not None and hi_v > upper):
            lo = "-inf" if lower is None else lower
            hi = "inf" if upper is None else upper
            raise ParameterError(
                f"true_value must lie in the declared count domain [{lo}, {hi}], "
                f"got values in [{lo_v}, {hi_v}]"
            )
    return out


def count_in_domain(true_value: Any, lower: int | None, upper: int | None) -> int:
    """ONE true count for noise(): an array is refused (call noise() once per value)."""
    arr = check_counts(true_value, lower, upper)
    if arr.ndim:
        raise ParameterError(
            f"true_value must be a single count for noise() (the law of one release); got an "
            f"array of shape {arr.shape}: call noise() once per value")
    return int(arr)


def check_domain(lower: Any, upper: Any, boundary: Any, allowed: tuple[str, ...]
                  ) -> tuple[int | None, int | None, str]:
    lo = check_count_bound("lower", lower)
    hi = check_count_bound("upper", upper)
    if lo is not None and hi is not None and hi < lo:
        raise ParameterError(f"need lower <= upper, got [{lo}, {hi}]")
    if boundary not in allowed:
        raise ParameterError(f"boundary must be one of {allowed}, got {boundary!r}")
    return lo, hi, str(boundary)


class IntegerLaw(TableLaw):
    """Exact-as-float law of an integer output on a window (scipy.stats-like).

    ``values`` are consecutive integers, ``probs`` their probabilities (mass outside the
    window is below 1e-300 for the infinite-support laws, which say so by ``tails``: below,
    above).  pmf, cdf, ppf, moments and interval are inherited from
    :class:`~dpnoise.laws.base.TableLaw`.
    """

    def __init__(self, values: NDArray[np.int64], probs: NDArray[np.float64],
                 tails: tuple[bool, bool] = (False, False)) -> None:
        super().__init__(np.asarray(values, dtype=np.int64), probs, tails=tails)
        self.values = np.asarray(values, dtype=np.int64)

    def support(self) -> tuple[int, int]:
        nz = np.flatnonzero(self.probs > 0)
        return int(self.values[nz[0]]), int(self.values[nz[-1]])


def integer_output_set(outputs: ArrayLike, lower: int | None, upper: int | None
                       ) -> NDArray[np.bool_]:
    """Integers (any numeric dtype holding integral values) inside [lower, upper]."""
    y = np.asarray(outputs)
    if y.dtype.kind in "iu":
        ok = np.ones(y.shape, dtype=bool)
    else:
        yf = y.astype(np.float64)
        ok = np.isfinite(yf) & (yf == np.floor(yf))
    if lower is not None:
        ok &= y >= lower
    if upper is not None:
        ok &= y <= upper
    return ok


def domain_output_set(outputs: ArrayLike, lower: int | None, upper: int | None,
                       boundary: str) -> NDArray[np.bool_]:
    """Integers; inside [lower, upper] unless boundary='none'."""
    if boundary == "none":
        return integer_output_set(outputs, None, None)
    return integer_output_set(outputs, lower, upper)


def clamped_law(z: NDArray[np.int64], p: NDArray[np.float64], true_value: int | None,
                 lower: int | None, upper: int | None, boundary: str,
                 tails: tuple[bool, bool] = (False, False)) -> IntegerLaw:
    """Law of n + Z (Z with pmf p on z; ``tails``: Z unbounded below, above), clamped into
    [lower, upper] when boundary='clamp'."""
    if true_value is None:
        return IntegerLaw(z, p, tails)
    n = count_in_domain(true_value, lower, upper)
    clip_out = (lower, upper) if boundary == "clamp" else (None, None)
    return push_forward(z, p, n, (None, None), clip_out, tails)


def clamped_release(true_value: ArrayLike, lower: int | None, upper: int | None,
                     boundary: str, sample_noise: Callable[[int, RngLike], NDArray[np.int64]],
                     rng: RngLike) -> Any:
    """Validate the counts (before any word is drawn), add integer noise, clamp if asked."""
    counts = check_counts(true_value, lower, upper)
    flat = counts.reshape(-1)
    out = flat + sample_noise(flat.size, rng)
    if boundary == "clamp":
        if lower is not None:
            np.maximum(out, lower, out=out)
        if upper is not None:
            np.minimum(out, upper, out=out)
    return as_output(out.reshape(counts.shape), true_value)


def split_clamped_release(true_value: ArrayLike, lower: int | None, upper: int | None,
                          boundary: str, sampler: Any, rng: RngLike) -> Any:
    """:func:`clamped_release` for a table sampler (``sample_into``): the same words and
    values, but each chunk's job (:func:`dpnoise.parallel.run_split`) writes its noise
    straight into its slice of the output and the sampler adds the counts and clamps
    there while each piece is in cache, so no per-value pass runs outside the (possibly
    threaded) chunks."""
    from ..parallel import run_split

    counts = check_counts(true_value, lower, upper)
    flat = np.ascontiguousarray(counts.reshape(-1))
    out = output_buffer(flat.size, np.int64)  # before any word
    lo, hi = (lower, upper) if boundary == "clamp" else (None, None)

    def work(src: RandomSource, s: int, e: int) -> None:
        sampler.sample_into(src, out[s:e], add=flat[s:e], lower=lo, upper=hi)

    source = resolve_rng(rng)
    run_split(source, flat.size, work, compiled_spans(sampler, out, add=flat, lower=lo, upper=hi))
    return as_output(out.reshape(counts.shape), true_value)



class ClampedIntegerMechanism(Mechanism):
    """Base of the integer mechanisms whose output is ``n + Z`` for a count ``n`` in the
    declared domain ``[lower, upper]``, clamped there when ``boundary="clamp"``
    (:class:`~dpnoise.Geometric`, :class:`~dpnoise.DiscreteGaussian`).

    A subclass sets ``sensitivity``, ``lower``, ``upper`` and ``boundary`` (with
    :func:`check_integer_sensitivity` and :func:`check_domain`) and provides
    :meth:`sample_noise` (n draws of Z; a table sampler through :meth:`_split_draws`) and
    ``_scalar_kernel`` (its one-value kernel, or None); the output set, the law of a release
    and the release itself -- counts checked before any word is drawn, the same clamps for
    every value -- are here.
    """

    lower: int | None
    upper: int | None
    boundary: str

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return domain_output_set(y, self.lower, self.upper, self.boundary)

    def sample_noise(self, n: int, rng: RngLike = None) -> NDArray[np.int64]:
        raise NotImplementedError

    @property
    def _scalar_kernel(self) -> Any:
        """The one-value kernel (the same words and law as the arrays), or None."""
        return None

    @property
    def _table_sampler(self) -> Any:
        """The table sampler (``sample_into``) behind :meth:`sample_noise`, or None: a bulk
        release then runs through :func:`split_clamped_release`."""
        return None

    def _one_noise(self, rng: RngLike) -> int | None:
        """One draw of Z by the scalar kernel, or None when there is none."""
        kernel = self._scalar_kernel
        return None if kernel is None else kernel.z(resolve_rng(rng))

    @staticmethod
    def _split_draws(sampler: Any, n: int, rng: RngLike) -> NDArray[np.int64]:
        """``n`` draws of a table sampler (``sample_into``), in keyed chunks for large ``n``
        (:func:`dpnoise.parallel.run_split`)."""
        from ..parallel import run_split

        out = output_buffer(int(n), np.int64)  # before any word
        source = resolve_rng(rng)
        run_split(source, out.size, lambda src, s, e: sampler.sample_into(src, out[s:e]),
                  compiled_spans(sampler, out))
        return out

    def _law_of(self, z: NDArray[np.int64], p: NDArray[np.float64],
                true_value: int | None, tails: tuple[bool, bool] = (True, True)) -> IntegerLaw:
        """The law of a release of ``true_value`` for noise pmf ``p`` on ``z`` (a window of
        a law unbounded on the ``tails`` sides: below, above)."""
        return clamped_law(z, p, true_value, self.lower, self.upper, self.boundary, tails)

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        n = one_count(true_value, self.lower, self.upper)
        if n is not None:  # one count: the scalar kernel, when there is one
            z = self._one_noise(rng)
            if z is not None:
                return clamp_one(n + z, self.lower, self.upper, self.boundary)
        sampler = self._table_sampler
        if sampler is not None:
            return split_clamped_release(true_value, self.lower, self.upper, self.boundary,
                                         sampler, rng)
        return clamped_release(true_value, self.lower, self.upper, self.boundary,
                               self.sample_noise, rng)


def one_count(value: Any, lower: int | None, upper: int | None) -> int | None:
    """``value`` as an int when it is one int (or numpy int64) count inside the declared
    domain with |value| < 2^53 -- the one-value (scalar) release path; else None, and the
    array checks (:func:`check_counts`) accept or refuse it."""
    if (type(value) in INT_SCALARS and -MAX_COUNT < value < MAX_COUNT
            and (lower is None or value >= lower) and (upper is None or value <= upper)):
        return int(value)
    return None


def clamp_one(y: int, lower: int | None, upper: int | None, boundary: str) -> int:
    """One output clamped as :func:`clamped_release` clamps arrays (public ends only)."""
    if boundary == "clamp":
        if lower is not None:
            y = max(y, lower)
        if upper is not None:
            y = min(y, upper)
    return y


def push_forward(z: NDArray[np.int64], p: NDArray[np.float64], n: int,
                  clip_in: tuple[int | None, int | None],
                  clip_out: tuple[int | None, int | None],
                  tails: tuple[bool, bool] = (False, False)) -> IntegerLaw:
    """Law of clip(clip(n, *clip_in) + Z, *clip_out) (``tails``: Z unbounded below, above)."""
    c = n
    if clip_in[0] is not None:
        c = max(c, clip_in[0])
    if clip_in[1] is not None:
        c = min(c, clip_in[1])
    y = z + c
    if clip_out[0] is not None:
        y = np.maximum(y, clip_out[0])
    if clip_out[1] is not None:
        y = np.minimum(y, clip_out[1])
    lo, hi = int(y.min()), int(y.max())
    probs = np.zeros(hi - lo + 1)
    np.add.at(probs, y - lo, p)
    open_ends = (tails[0] and clip_out[0] is None, tails[1] and clip_out[1] is None)
    return IntegerLaw(np.arange(lo, hi + 1, dtype=np.int64), probs, open_ends)


def boundary_inputs(lower: int | None, upper: int | None, reach: int) -> list[int]:
    """True counts the verifier checks: both ends of the domain and an interior run."""
    if lower is None and upper is None:
        return [0, 1, 2]
    if lower is not None and upper is not None and upper - lower <= 4 * reach + 8:
        return list(range(lower, upper + 1))
    pts: set[int] = set()
    if lower is not None:
        pts.update(range(lower, lower + 2 * reach + 4))
    if upper is not None:
        pts.update(range(upper - 2 * reach - 3, upper + 1))
    return sorted(pts)
