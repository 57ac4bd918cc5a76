"""The mechanism protocol and the privacy guarantee every mechanism exposes."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.scalar import grid_index
from ..params import (
    EXACT_INTEGER,
    Interval,
    as_real_scalar,
    check_supported,
    output_buffer,
    output_values,
)
from ..profile import PrivacyProfile
from ..randomness import resolve_rng

Notion = Literal["pure", "approximate", "metric", "none"]
_NOTIONS = get_args(Notion)  # the notions a Guarantee states

#: true-value types that may take a mechanism's one-value (scalar) path; bool, numpy bool,
#: arrays and every other type go through the array checks (which raise or convert)
_FLOAT_TYPES = frozenset({float, np.float64})
INT_SCALARS = frozenset({int, np.int64})


def one_real(value: Any) -> float | None:
    """``value`` as a float when it is a float or an integer below 2^53 in magnitude (so the
    conversion is exact), else None.  NaN and infinities come through: callers' range
    comparisons are False for them, which sends them to the array checks that raise."""
    t = type(value)
    if t in _FLOAT_TYPES:
        return float(value)
    if t in INT_SCALARS and -EXACT_INTEGER < value < EXACT_INTEGER:
        return float(value)
    return None


@dataclass(frozen=True)
class Guarantee:
    """What a mechanism guarantees, for neighbours at distance <= sensitivity.

    ``epsilon`` and ``delta`` include every finite-precision degradation and are
    upper bounds (never rounded down).  ``notion`` is "pure" (delta = 0),
    "approximate" ((epsilon, delta)-DP), "metric" (epsilon * d(x, x') / sensitivity
    for all x, x', i.e. d-privacy) or "none" (a non-private reproduction).

    Parameters
    ----------
    epsilon : float
        The privacy-loss bound ε >= 0 (an upper bound, finite precision included).
    delta : float, default 0.0
        The δ in [0, 1] of (ε, δ)-DP: the hockey-stick divergence
        ``sup_S P(M(x) ∈ S) − e^ε P(M(x') ∈ S)`` of the sampled laws (Dwork & Roth, *The
        Algorithmic Foundations of Differential Privacy*, 2014, Definition 2.4).
    notion : {"pure", "approximate", "metric", "none"}, default "pure"
        What ``epsilon`` and ``delta`` bound.
    note : str, default ""
        One human-readable sentence about how the guarantee was obtained.
    details : dict, default {}
        Calibration facts (grid, block length, exact loss, ...); not compared by ``==``.

    Raises
    ------
    ParameterError
        If ``epsilon`` is negative or NaN, or ``delta`` is outside [0, 1].
    """

    epsilon: float
    delta: float = 0.0
    notion: Notion = "pure"
    note: str = ""
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        eps = as_real_scalar("guarantee epsilon", self.epsilon)  # no str, None or bool
        delta = as_real_scalar("guarantee delta", self.delta)
        if not (eps >= 0) or math.isnan(eps):
            raise ParameterError(f"guarantee epsilon must be >= 0, got {self.epsilon!r}")
        if not (0 <= delta <= 1):
            raise ParameterError(f"guarantee delta must be in [0, 1], got {self.delta!r}")
        if self.notion not in _NOTIONS:
            raise ParameterError(f"guarantee notion must be one of {_NOTIONS}, got "
                                 f"{self.notion!r}")

    def as_dict(self) -> dict[str, Any]:
        """The guarantee as a JSON-ready dict (the scalar ``details`` only).

        Returns
        -------
        dict
            ``epsilon``, ``delta``, ``notion``, ``note`` and every int, float, str or bool detail.
        """
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "notion": self.notion,
            "note": self.note,
            **{k: v for k, v in self.details.items() if isinstance(v, (int, float, str, bool))},
        }

    def __str__(self) -> str:
        if self.notion == "none":
            return "NOT differentially private"
        if self.delta:
            core = f"({self.epsilon:.6g}, {self.delta:.3g})-DP"
        else:
            core = f"{self.epsilon:.6g}-DP"
        return core + (" (metric)" if self.notion == "metric" else "")


class Mechanism(ABC):
    """An immutable, calibrated mechanism: calibration + exact output law + safe release."""

    sensitivity: float

    #: The supported range of each numeric parameter (where the calibration and sampler are
    #: exact, the tables fit in memory and construction takes at most a few seconds);
    #: checked by :meth:`_supported` before any work.  Stated in each class docstring.
    SUPPORTED: ClassVar[Mapping[str, Interval]] = {}

    @classmethod
    def _supported(cls, name: str, value: Any, *, key: str | None = None) -> float:
        """``value`` as a float inside ``SUPPORTED[key or name]`` (else ParameterError)."""
        return check_supported(cls.__name__, cls.SUPPORTED, name, value, key=key)

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The (epsilon, delta) this mechanism guarantees, finite precision included."""

    @abstractmethod
    def release(self, true_value: ArrayLike, rng: Any = None) -> Any:
        """Private answer(s) for scalar or array true value(s).

        Parameters
        ----------
        true_value : float or array_like of float
            The true answer(s): a number or a rectangular real array (ragged, bool, string,
            bytes, object and complex input is refused).  Checked before any random word is read.
        rng : RandomSource, numpy.random.Generator or None, default None
            The randomness: None uses the thread's :class:`~dpnoise.CryptoRandom` (ChaCha20
            keyed from ``os.urandom``); :class:`~dpnoise.SeededRandom` for reproducible
            experiments.

        Returns
        -------
        float or numpy.ndarray
            A Python number for a scalar input, else an array of the input's shape: each value
            drawn from the mechanism's exact law :meth:`noise` at its true value.

        Raises
        ------
        ParameterError
            If a true value is not finite or outside the mechanism's supported range.
        """

    @abstractmethod
    def noise(self, true_value: float | None = None) -> Any:
        """The exact output (or noise) distribution, scipy.stats-like.

        Parameters
        ----------
        true_value : float or None, default None
            One true value; None gives the noise law itself (centred at 0) where the law is
            shift-invariant.

        Returns
        -------
        Law
            The exact law of the release (scipy.stats-like: ``pmf``/``pdf``, ``cdf``, ``sf``,
            ``ppf``, ``mean``, ``var``, ``std``, ``mean_abs``, ``interval``).
        """

    #: whether a release is a boolean keep mask (then bool values are outputs to test)
    BOOL_OUTPUTS: ClassVar[bool] = False

    def in_output_set(self, outputs: ArrayLike) -> NDArray[np.bool_]:
        """Whether each value belongs to the declared output set (grid, lattice, range).

        Parameters
        ----------
        outputs : array_like of float
            Values to test: a real number or a rectangular real array, as the true values
            of :meth:`release` (bool too for a mechanism that releases a keep mask).  NaN
            and infinities are numbers that are not outputs (unless NaN is one by design).

        Returns
        -------
        numpy.ndarray of bool
            True where the value is a possible output (a point of the grid, lattice or range).

        Raises
        ------
        ParameterError
            If ``outputs`` holds a str, bytes, None, complex, object or (for a numeric
            release) bool entry, or is ragged.
        """
        return self._output_set(output_values("outputs", outputs, booleans=self.BOOL_OUTPUTS))

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """:meth:`in_output_set` of checked values ``y`` (a real, or bool, numpy array)."""
        raise NotImplementedError(f"{type(self).__name__} does not declare its output set")

    def privacy_model(self) -> Any:
        """The output law in the form :func:`dpnoise.verify` checks (not the claim).

        Returns
        -------
        object
            A privacy model (lattice, discrete or continuous) that :func:`dpnoise.verify`
            evaluates to recompute the worst-case privacy loss.
        """
        raise NotImplementedError(f"{type(self).__name__} has no privacy model")

    def privacy_profile(self) -> PrivacyProfile:
        """What one release answers for, from the law it samples: its dominating pair, Rényi
        curve or none, ρ or "not zCDP", and the facts interval code needs
        (:class:`~dpnoise.profile.PrivacyProfile`).  The accountants read only this.

        The base class knows a mechanism by its claimed guarantee alone: the
        randomized-response pair of (ε, δ) (and for δ = 0 its Rényi curve and ρ = ε²/2);
        notion "none" answers "not DP".  Families with an exact construction override it
        with that construction (:mod:`dpnoise.mechanisms.profiles`) and share this
        description.

        Returns
        -------
        PrivacyProfile
            What the accountants compose for one release of this mechanism.
        """
        from ..profile import claimed_profile, not_dp_profile

        g = self.guarantee
        name = type(self).__name__
        if g.notion == "none":
            return not_dp_profile(g.epsilon, f"{name} is NOT differentially private",
                                  noise_at=self.noise)
        return claimed_profile(g.epsilon, g.delta, note=f"{name} (no exact PLD)",
                               noise_at=self.noise)

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{type(self).__name__} is immutable; build a new one")
        super().__setattr__(name, value)

    def _freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)


def as_output(values: NDArray[Any], like: ArrayLike) -> Any:
    """Return a Python scalar for scalar input, else the array (same shape as the input)."""
    if np.ndim(like) == 0:
        return values.reshape(()).item()
    return values


def compiled_spans(sampler: Any, out: NDArray[Any], **kw: Any) -> Any:
    """The sampler's compiled body over the whole of ``out`` (its ``keyed_job(out, **kw)``)
    for a split release (:func:`dpnoise.parallel.run_split`), or None: a release too small
    to be split, or a sampler without one (the per-chunk path then runs)."""
    from ..parallel import SPLIT_MIN

    keyed_job = getattr(sampler, "keyed_job", None)
    return keyed_job(out, **kw) if keyed_job is not None and out.size >= SPLIT_MIN else None


class HalfLatticeMechanism(Mechanism):
    """A mechanism releasing c·L + Z·L with Z = ±(K + 1/2) on the half-offset grid.

    Subclasses set ``grid`` and implement :meth:`_sampler` (an object with the exact
    kernel ``signed_odd(rng, n, centre=, grid=)``) and :meth:`_law` (the exact law for a
    grid centre); release, noise and the output-set test are shared.
    """

    grid: float

    @abstractmethod
    def _sampler(self) -> Any:
        """The exact sampler of 2Z with a ``signed_odd`` kernel."""

    @abstractmethod
    def _law(self, center: float) -> Any:
        """The exact law around ``center``: a
        :class:`~dpnoise.laws.half_lattice.HalfLatticeLaw`."""

    def release(self, true_value: ArrayLike, rng: Any = None) -> Any:
        x = one_real(true_value)  # one number: the scalar kernel (same words, same law)
        if x is not None and -self._scalar_limit < x < self._scalar_limit:
            return self._release_one(x, rng)  # finite, |x| < 2^51·L (else the checks raise)
        from ..grid import check_representable
        from ..params import check_values_bounds
        from ..randomness import resolve_rng

        values, lo, hi = check_values_bounds("true_value", true_value)
        flat = np.ascontiguousarray(values.reshape(-1))
        check_representable(flat, self.grid, bounds=(lo, hi))  # before any random word
        from ..parallel import run_split

        source = resolve_rng(rng)
        sampler = self._sampler()
        n = flat.size
        if n < 2:
            out = sampler.signed_odd(source, n, centre=flat, grid=self.grid)
            return as_output(out.reshape(values.shape), true_value)
        out = output_buffer(n)  # a refusal is a ParameterError: no word is drawn yet
        into = getattr(sampler, "release_into", None)  # writes in place, input checked above

        def work(src: Any, s: int, e: int) -> None:
            if into is not None:
                into(src, out[s:e], centre=flat[s:e], grid=self.grid)
            else:
                out[s:e] = sampler.signed_odd(src, e - s, centre=flat[s:e], grid=self.grid)

        run_split(source, n, work, compiled_spans(sampler, out, centre=flat, grid=self.grid))
        return as_output(out.reshape(values.shape), true_value)

    @cached_property
    def _scalar_limit(self) -> float:
        """2^51·L: one-value releases below it in magnitude take the scalar kernel."""
        return float(1 << 51) * self.grid

    @cached_property
    def _scalar_kernel(self) -> Any:
        from ..exact.scalar import half_lattice_kernel

        return half_lattice_kernel(self._sampler())

    def _release_one(self, x: float, rng: Any) -> float:
        """The release (2c + 2Z)·L/2 of one finite x with |x| < 2^51·L, c = floor(x/L + 1/2)
        exactly (as ``round_half_up``), 2Z from the scalar kernel: the same words, integers
        and law as the array kernel (see :mod:`dpnoise.exact.scalar`)."""
        kernel = self._scalar_kernel
        source = resolve_rng(rng)
        if kernel is None:  # a sampler without a scalar kernel: the array path
            return float(self._sampler().signed_odd(source, 1, centre=np.array([x]),
                                                    grid=self.grid)[0])
        two_z = kernel.two_z(source)
        grid = self.grid
        c = grid_index(x / grid)  # x/L exact (L = 2^j); floor(x/L + 1/2) exactly, as a float
        return (c + two_z * 0.5) * grid  # multiples of 1/2 below 2^52, times 2^j: exact

    def noise(self, true_value: float | None = None) -> Any:
        """The exact law of the release for ``true_value`` (None: the noise, centred at 0).

        Parameters
        ----------
        true_value : float or None, default None
            One true value, snapped to its grid centre ``c·L`` with ``c = floor(x/L + 1/2)``.

        Returns
        -------
        HalfLatticeLaw
            The exact law of ``c·L + Z·L``, ``Z = ±(K + 1/2)``.
        """
        from ..grid import to_index
        from ..params import check_true_scalar

        if true_value is None:
            return self._law(0.0)
        x = check_true_scalar("true_value", true_value)
        return self._law(float(to_index(np.array([x]), self.grid)[0]) * self.grid)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """Points of the half-offset grid (j + 1/2)·L: y / (L/2) is an odd integer."""
        with np.errstate(over="ignore", invalid="ignore"):  # inf, NaN: not odd integers
            v = y.astype(np.float64, copy=False) / (self.grid / 2)
            return (np.floor(v) == v) & (np.mod(v, 2) == 1)
