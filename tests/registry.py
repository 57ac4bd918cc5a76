"""The ONE list of mechanisms the tests sweep, derived from the library's registry.

Every entry of :mod:`dpnoise.mechanisms.registry` (kind "value") becomes a :class:`Case`
built from its ``example`` request (:func:`registered_cases`), so a mechanism added to the
registry is swept by the generic harness (``test_harness.py``), the accountants, the
protocol and audit tests and the extremes (``test_extremes.py``: bad parameters, the corners
of its ``SUPPORTED`` ranges) without editing a test file.  Below them: more parameter points
of the same families, with what only a hand-written case can carry (``less_noisy``: the
calibration is minimal).  :data:`OUTSIDE` lists, in one place, the public mechanisms that are
not in the registry (vector-valued ones), for the tests that take any mechanism class.
A mechanism's own test file holds only what is special about it (the paper's numbers, its
errata).

Fields:
    build        -- returns a calibrated mechanism (representative parameters)
    true_value   -- a true answer inside the domain
    factory      -- the class (or callable) taking ``valid`` keyword arguments
    valid        -- keyword arguments that construct successfully
    invalid      -- list of keyword overrides that must raise ParameterError
    bad_values   -- true values that release() must reject with ParameterError
    less_noisy   -- optional: the same mechanism made slightly less noisy (e.g. 0.999x
                    its calibrated scale); the verifier must then find a loss > epsilon
                    (or delta > claimed), proving the calibration is minimal
    discrete     -- outputs on a lattice/grid (chi-square test) vs continuous (KS)
    moments      -- whether sample mean/var are compared with noise().mean()/var()
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import dpnoise as dp
from dpnoise import (
    AnalyticGaussian,
    ClampedLaplace,
    CountNoise,
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    RangeLaplace,
    Staircase,
    TruncatedLaplace,
)
from dpnoise.mechanisms import registry
from dpnoise.mechanisms.registry import Request


@dataclass(frozen=True)
class Case:
    id: str
    factory: Callable[..., Any]
    valid: dict[str, Any]
    true_value: float
    invalid: list[dict[str, Any]] = field(default_factory=list)
    bad_values: list[Any] = field(default_factory=list)
    less_noisy: Callable[[], Any] | None = None
    discrete: bool = True
    moments: bool = True

    def build(self) -> Any:
        return self.factory(**self.valid)


_BAD_PRIVACY = [
    {"epsilon": 0.0}, {"epsilon": -1.0}, {"epsilon": math.nan}, {"epsilon": math.inf},
    {"sensitivity": 0.0}, {"sensitivity": -2.0}, {"sensitivity": math.nan},
]

#: the Request fields that carry privacy parameters, and values no mechanism accepts
_PRIVACY_FIELDS = ("epsilon", "delta", "sensitivity")
_BAD_NUMBERS = (0.0, -1.0, math.nan, math.inf)


def build_registered(name: str, **fields: Any) -> Any:
    """The registry's mechanism ``name`` for a request with these fields."""
    return registry.build(name, Request(**fields))


def request_fields(request: Request) -> dict[str, Any]:
    """The fields a request was given (None: not given), options as a plain dict."""
    out = {k: getattr(request, k) for k in ("epsilon", "delta", "sensitivity", "lower",
                                             "upper", "grid")
           if getattr(request, k) is not None}
    if request.options:
        out["options"] = dict(request.options)
    return out


def privacy_fields(entry: registry.MechanismEntry) -> tuple[str, ...]:
    """The Request fields whose value the entry's class checks (its ``SUPPORTED`` names,
    and delta when the example gives one)."""
    cls = type(entry.build(entry.example))
    names = {part for key in cls.SUPPORTED for part in key.split("/")}
    return tuple(f for f in _PRIVACY_FIELDS
                 if f in names or (f == "delta" and entry.example.delta is not None))


def registered_cases(kind: str = "value") -> list[Case]:
    """One case per registry entry of ``kind``, from its example request -- except an entry
    that claims no guarantee at all (``notion="none"``: the paper's non-DP scale, kept for
    reproductions; tests/test_range_laplace.py shows that the verifier rejects it)."""
    cases = []
    for name, entry in registry.entries(kind).items():
        if entry.build(entry.example).guarantee.notion == "none":
            continue
        cases.append(Case(
            id=f"registry:{name}",
            factory=functools.partial(build_registered, name),
            valid=request_fields(entry.example),
            true_value=entry.example_value,
            invalid=[{f: v} for f in privacy_fields(entry) for v in _BAD_NUMBERS],
            bad_values=[math.nan, "abc"],
        ))
    return cases


#: public mechanisms outside the registry (vector-valued): class, valid keyword arguments, a
#: true value inside the domain
OUTSIDE: dict[str, tuple[Callable[..., Any], dict[str, Any], Any]] = {
    "MultivariateStaircase": (dp.MultivariateStaircase,
                              {"epsilon": 1.0, "sensitivities": (1.0, 1.0)},
                              np.array([1.0, 2.0])),
    "L1Staircase": (dp.L1Staircase, {"epsilon": 1.0, "sensitivity": 1.0}, np.array([1.0, 2.0])),
    "PlanarLaplace": (dp.PlanarLaplace, {"epsilon": 1.0, "grid": 1.0,
                                         "region": ((0.0, 10.0), (0.0, 10.0))},
                      np.array([1.0, 2.0])),
}

CASES: list[Case] = [*registered_cases(),
    Case(
        id="laplace-eps1",
        factory=Laplace,
        valid={"epsilon": 1.0, "sensitivity": 1.0},
        true_value=3.25,
        invalid=[*_BAD_PRIVACY, {"grid": 0.3}, {"grid": -1.0}],
        bad_values=[math.nan, math.inf, "abc"],
    ),
    Case(
        id="laplace-eps0.1-sens3",
        factory=Laplace,
        valid={"epsilon": 0.1, "sensitivity": 3.0},
        true_value=-12.0,
        invalid=_BAD_PRIVACY,
        bad_values=[-math.inf],
    ),
    Case(
        id="clamped-laplace",
        factory=ClampedLaplace,
        valid={"epsilon": 0.5, "sensitivity": 1.0, "lower": 0.0, "upper": 10.0},
        true_value=0.5,
        invalid=[*_BAD_PRIVACY, {"lower": 5.0, "upper": 5.0}, {"lower": 3.0, "upper": 1.0},
                 {"upper": math.inf}],
        bad_values=[11.0, -0.5, math.nan],
    ),
]


CASES += [
    Case(
        id="staircase-variance-eps1",
        factory=Staircase,
        valid={"epsilon": 1.0, "sensitivity": 1.0},
        true_value=2.5,
        invalid=[*_BAD_PRIVACY, {"epsilon": 25.0}, {"criterion": "median"}, {"level": 1.5},
                 {"grid": 0.3}],
        bad_values=[math.nan, math.inf, "abc"],
        # calibrated for a 0.1% larger epsilon (steeper steps): loss must exceed epsilon
        less_noisy=lambda: Staircase(epsilon=1.001, sensitivity=1.0).privacy_model(),
    ),
    Case(
        id="staircase-interval-eps0.5-sens3",
        factory=Staircase,
        valid={"epsilon": 0.5, "sensitivity": 3.0, "criterion": "interval", "level": 0.9},
        true_value=-40.0,
        invalid=_BAD_PRIVACY,
        bad_values=[-math.inf],
        less_noisy=lambda: Staircase(epsilon=0.5005, sensitivity=3.0, criterion="interval",
                                     level=0.9).privacy_model(),
    ),
]


def _laplace_one_block_less(**kw: Any) -> Any:
    """The lattice Laplace with block length M - 1 (about 0.9996x the calibrated scale)."""
    from dpnoise.exact.geometric import BlockGeometric
    from dpnoise.params import LN2
    from dpnoise.verify import AdditiveLattice

    m = Laplace(**kw)
    block = BlockGeometric(m.block.M - 1)
    return AdditiveLattice(
        logpmf=lambda z: block.logpmf(np.where(z >= 0, z, -z - 1)) - LN2,
        max_shift=m.shift_steps,
        period=block.M,
    )


for _i, _case in enumerate(CASES):
    if _case.factory is Laplace:
        CASES[_i] = Case(**{**_case.__dict__,
                            "less_noisy": (lambda kw=_case.valid: _laplace_one_block_less(**kw))})


# ---------------------------------------------------------------- Geng et al. 2018
def _tlap_one_cell_less(**kw: Any) -> Any:
    """The lattice truncated Laplacian with one support cell less: its δ(ε) exceeds δ."""
    from dpnoise.exact.folded import FoldedBlockGeometric
    from dpnoise.verify import FiniteLattice

    m = TruncatedLaplace(**kw)
    law = FoldedBlockGeometric(m.block, m.law.n - 1)
    return FiniteLattice(logpmf=lambda z: law.logpmf(np.where(z >= 0, z, -z - 1)) - math.log(2),
                         max_shift=m.shift_steps, lo=-law.n, hi=law.n - 1)


def _gauss_smaller_sigma(**kw: Any) -> Any:
    """The discretised analytic Gaussian at 0.999σ (same grid): δ(ε) exceeds δ."""
    from dpnoise.mechanisms.gaussian import _ideal_logpmf, _quantise
    from dpnoise.verify import FiniteLattice

    m = AnalyticGaussian(**kw)
    T, lp = _ideal_logpmf(m.sigma * 0.999, m.grid)
    w = np.array([float(x) for x in _quantise(lp)])
    with np.errstate(divide="ignore"):
        lw = np.log(w) - 64 * math.log(2)
    return FiniteLattice(
        logpmf=lambda z: np.where(np.abs(z) <= T, lw[np.clip(z + T, 0, 2 * T)], -np.inf),
        max_shift=m.shift_steps, lo=-T, hi=T)


_BAD_DELTA = [{"delta": 0.0}, {"delta": -1e-3}, {"delta": 1.0}, {"delta": math.nan}]
_TLAP_BAD = [*_BAD_PRIVACY, *_BAD_DELTA, {"delta": 0.5}, {"grid": 0.3}]
CASES += [
    Case(id="truncated-laplace-eps1-d1e-3", factory=TruncatedLaplace,
         valid={"epsilon": 1.0, "delta": 1e-3, "sensitivity": 1.0}, true_value=2.5,
         invalid=_TLAP_BAD, bad_values=[math.nan, math.inf],
         less_noisy=lambda: _tlap_one_cell_less(epsilon=1.0, delta=1e-3, sensitivity=1.0)),
    Case(id="truncated-laplace-eps0.5-d1e-6-sens2", factory=TruncatedLaplace,
         valid={"epsilon": 0.5, "delta": 1e-6, "sensitivity": 2.0}, true_value=-7.3,
         invalid=_TLAP_BAD, bad_values=[-math.inf],
         less_noisy=lambda: _tlap_one_cell_less(epsilon=0.5, delta=1e-6, sensitivity=2.0)),
    Case(id="analytic-gaussian-eps1-d1e-5", factory=AnalyticGaussian,
         valid={"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0}, true_value=0.3,
         invalid=[*_BAD_PRIVACY, *_BAD_DELTA], bad_values=[math.nan],
         less_noisy=lambda: _gauss_smaller_sigma(epsilon=1.0, delta=1e-5, sensitivity=1.0)),
    Case(id="gaussian-classic-eps0.5", factory=Gaussian,
         valid={"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0}, true_value=10.0,
         invalid=[*_BAD_PRIVACY, *_BAD_DELTA, {"epsilon": 1.5}], bad_values=[math.inf]),
]


# ------------------------------------------------------------ counts (Sadeghi et al. 2020)
_BAD_COUNTS = [-1, 1.5, math.nan, math.inf, "abc"]  # (a scalar True is rejected too)


def _count_noise_more_eta(**kw: Any) -> Any:
    """CountNoise calibrated by from_delta, with eta raised by 2^-20 (less noise)."""
    from fractions import Fraction

    m = CountNoise.from_delta(**kw)
    return CountNoise(epsilon=m.epsilon, D=m.D, eta=m.eta + Fraction(1, 1 << 20),
                      upper=m.upper).privacy_model()


def _dg_smaller(**kw: Any) -> Any:
    m = DiscreteGaussian(**kw)
    return DiscreteGaussian(epsilon=m.epsilon, sigma2=float(m.sigma2) * 0.999,
                            upper=m.upper).privacy_model()


def _geometric_less(**kw: Any) -> Any:
    return Geometric(**{**kw, "epsilon": kw["epsilon"] * 1.001}).privacy_model()


_COUNT_INVALID = [{"epsilon": 0.0}, {"epsilon": -1.0}, {"epsilon": math.nan},
                  {"epsilon": math.inf}, {"upper": -5}, {"boundary": "wrap"}]

CASES += [
    Case(
        id="count-noise-fig1",
        factory=CountNoise,
        valid={"epsilon": 2.18, "D": 6, "eta": 0.8, "upper": 1000},
        true_value=25.0,
        invalid=[*_COUNT_INVALID, {"D": 0}, {"D": 2.5}, {"eta": 1.0}, {"eta": 0.0},
                 {"method": "lp"}, {"eta": 0.04}],
        bad_values=[*_BAD_COUNTS, 1001],
    ),
    Case(
        id="count-noise-optimal-edge",
        factory=CountNoise.optimal,
        valid={"epsilon": 0.5, "D": 8, "eta": 0.1, "upper": 40},
        true_value=1.0,
        invalid=[*_COUNT_INVALID, {"D": True}, {"eta": math.nan}],
        bad_values=_BAD_COUNTS,  # true value 1 next to the clamp at 0: noise() is the clamped law
    ),
    Case(
        id="count-noise-from-delta",
        factory=CountNoise.from_delta,
        valid={"epsilon": 2.2, "delta": 5e-7, "D": 8, "upper": 500},
        true_value=250.0,
        invalid=[*_COUNT_INVALID, {"delta": 0.0}, {"delta": 1.5}, {"D": 2}],
        bad_values=_BAD_COUNTS,
        less_noisy=lambda: _count_noise_more_eta(epsilon=2.2, delta=5e-7, D=8, upper=500),
    ),
    Case(  # the rejection sampler (reference): decay within 2^-24 of eps, so minimal
        id="geometric",
        factory=Geometric,
        valid={"epsilon": 0.7, "upper": 100, "sampler": "cks"},
        true_value=40.0,
        invalid=[*_COUNT_INVALID, {"sensitivity": 0}, {"sensitivity": 1.5},
                 {"sampler": "fast"}],
        bad_values=[*_BAD_COUNTS, 101],
        less_noisy=lambda: _geometric_less(epsilon=0.7, upper=100, sampler="cks"),
    ),
    Case(  # the default two-word block sampler: decay j ln2/M, within 0.3% of eps here
        id="geometric-block",
        factory=Geometric,
        valid={"epsilon": 1.0, "sensitivity": 2, "upper": 100},
        true_value=40.0,
        invalid=[*_COUNT_INVALID, {"sensitivity": 0}, {"sensitivity": 1.5}],
        bad_values=[*_BAD_COUNTS, 101],
    ),
    Case(
        id="discrete-gaussian",
        factory=DiscreteGaussian,
        valid={"epsilon": 1.0, "delta": 1e-6, "upper": 1000},
        true_value=500.0,
        invalid=[*_COUNT_INVALID, {"delta": 0.0}, {"delta": 2.0}, {"sensitivity": 0}],
        bad_values=_BAD_COUNTS,
        less_noisy=lambda: _dg_smaller(epsilon=1.0, delta=1e-6, upper=1000),
    ),
]


# ------------------------------------------------------- range-adherent Laplace (Croft et al. 2022)
# (mode="metric" is tested in tests/test_range_laplace.py: its ε is the metric one, so the
# standard-DP loss the auditor estimates is well below the claim by design)
def _range_one_block_less(**kw: Any) -> Any:
    """The sampled lattice law with block length M − 1 (>= 0.1 % less noise here)."""
    m = RangeLaplace(**kw)
    return m.privacy_model(block=m.block - 1)


_RANGE_INVALID = [*_BAD_PRIVACY, {"domain": (1.0, 0.0)}, {"domain": (math.nan, 1.0)},
                  {"mode": "paper"}, {"grid": 0.3}]
_G = 2.0**-5  # coarse grid: small block lengths keep the exact verification fast

for _id, _kw, _x, _bad, _minimal in [
    ("range-laplace-interval", {"epsilon": 1.0, "sensitivity": 1.0, "domain": (0.0, 10.0)},
     9.5, [10.5, -0.1, math.nan, math.inf, "abc"], True),
    ("range-laplace-half-line", {"epsilon": 0.5, "sensitivity": 2.0, "domain": (0.0, math.inf)},
     0.75, [-1.0, math.inf, math.nan], True),
    ("range-laplace-union", {"epsilon": 1.0, "sensitivity": 1.0,
                             "domain": [(0.0, 1.0), (2.0, 3.0)]},
     1.0, [1.5, 3.5, math.nan], True),
]:
    CASES.append(Case(
        id=_id,
        factory=RangeLaplace,
        valid={**_kw, "grid": _G},
        true_value=_x,
        invalid=_RANGE_INVALID,
        bad_values=_bad,
        less_noisy=(lambda kw={**_kw, "grid": _G}: _range_one_block_less(**kw))
        if _minimal else None,
    ))
