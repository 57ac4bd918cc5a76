"""The ONE registry of dpnoise's mechanisms by name.

Every entry builds a calibrated mechanism from a :class:`Request` (one builder signature)
and declares the command-line flags of its family.  It is used by

* the command line (``dpnoise release NAME``, ``dpnoise verify NAME``):
  :meth:`MechanismEntry.build_from_args`;
* the custodian session (:mod:`dpnoise.session.adapter`), which adds its own policy
  (which names a custodian may pick, caching, a faster-building grid);
* ``dpnoise compare`` (:data:`dpnoise.compare.CANDIDATES` names entries here) and
  ``dpnoise audit`` (:mod:`dpnoise.audit_targets`).

Entries are of a ``kind``: "value" (a noisy scalar answer; :func:`entries` lists these by
default) or "statistic" (report noisy max, partition selection: a choice made from a whole
vector; the custodian session builds them, the test harness, the verifier and the
accountants sweep them, ``release``/``compare``/``audit`` skip them).

A new mechanism joins all of them by adding one :class:`MechanismEntry` to ``ENTRIES``.
Constructors are imported inside the builders, so importing this module is cheap.
A builder passes optional arguments on only when the request carries them, so every caller
gets exactly the constructor call (defaults included) that it made before.

Not here: :class:`~dpnoise.PlanarLaplace`.  A builder could construct it (``region`` and
``grid`` as options), but every user of this registry releases a *scalar* answer and reads a
univariate law: ``dpnoise release`` parses numbers, the session adds noise to one value per
cell, ``compare`` ranks E|noise| and error bars of a 1-D law, ``audit`` feeds scalars.  A
planar release takes points of shape (..., 2), may return an *exception* instead of a point
(``PlanarRelease``) and promises metric privacy (geo-indistinguishability), so it has its own
command (``dpnoise planar``) instead of an entry whose callers would all have to refuse it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import Mechanism


@dataclass(frozen=True)
class Request:
    """What every builder receives.

    ``delta``, ``lower``, ``upper``, ``grid``: None means "not given" (the constructor's
    default applies).  ``options`` holds family-specific settings by their keyword name
    (``D``, ``eta``, ``method``, ``boundary``, ``sigma2``, ``sampler``, ``criterion``,
    ``level``, ``mode``, ``domain``, ``border``); other keys are ignored.
    """

    epsilon: float
    delta: float | None = None
    sensitivity: float = 1.0
    lower: float | None = None
    upper: float | None = None
    grid: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> Request:
        """The request of parsed ``dpnoise release/verify NAME`` flags."""
        return cls(epsilon=a.epsilon, delta=getattr(a, "delta", None),
                   sensitivity=getattr(a, "sensitivity", 1.0), lower=getattr(a, "lower", None),
                   upper=getattr(a, "upper", None), grid=getattr(a, "grid", None),
                   options=vars(a))

    def given(self, *names: str) -> dict[str, Any]:
        """The options among ``names`` that this request carries."""
        return {n: self.options[n] for n in names if n in self.options}


Builder = Callable[[Request], Mechanism]


@dataclass(frozen=True)
class MechanismEntry:
    """One registry entry.  ``kind``: "value" -- releases a noisy scalar answer (what
    ``dpnoise release``/``verify``, ``compare`` and ``audit`` use); "statistic" -- takes a
    whole vector (utilities, person counts) and releases a choice (report noisy max, partition
    selection): those callers skip it, the test harness, the verifier and the accountants
    sweep it like every mechanism.

    ``example``: a representative valid request and ``example_value`` a true value inside
    its domain (None for a statistic) -- what the documentation shows and what the test
    suite sweeps every entry with: its guarantee checked by the verifier, its sampled law,
    its refusal of bad parameters, and the corners of its class's ``SUPPORTED`` ranges.
    """

    name: str
    summary: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    build: Builder
    example: Request
    example_value: Any = None
    kind: str = "value"

    def build_from_args(self, a: argparse.Namespace) -> Mechanism:
        return self.build(Request.from_args(a))


def _privacy_args(p: argparse.ArgumentParser, *, delta: bool = False) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--sensitivity", type=float, default=1.0,
                   help="largest change of the true answer between neighbours (default 1)")
    if delta:
        p.add_argument("--delta", type=float, required=True, help="privacy parameter delta")


def _laplace_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p)
    p.add_argument("--grid", type=float, default=None,
                   help="output grid step, a power of two (default: sensitivity/4096 or coarser)")


def _build_laplace(r: Request) -> Mechanism:
    from .laplace import Laplace

    return Laplace(epsilon=r.epsilon, sensitivity=r.sensitivity, grid=r.grid)


def _clamped_args(p: argparse.ArgumentParser) -> None:
    _laplace_args(p)
    p.add_argument("--lower", type=float, required=True, help="lower end of the valid range")
    p.add_argument("--upper", type=float, required=True, help="upper end of the valid range")


def _build_clamped(r: Request) -> Mechanism:
    from .laplace import ClampedLaplace

    return ClampedLaplace(epsilon=r.epsilon, sensitivity=r.sensitivity, lower=r.lower,
                          upper=r.upper, grid=r.grid)


def _parse_domain(text: str) -> object:
    """'0,100' -> (0, 100); '0,inf' -> half-line; '0,1;2,3' -> union of pieces."""
    from ..errors import ParameterError

    pieces = []
    for part in text.split(";"):
        bits = [b.strip() for b in part.split(",")]
        if len(bits) != 2:
            raise ParameterError(f"--domain pieces must be 'lower,upper', got {part!r}")
        try:
            pieces.append((float(bits[0]), float(bits[1])))
        except ValueError as exc:
            raise ParameterError(f"--domain bounds must be numbers or inf, got {part!r}") from exc
    return pieces[0] if len(pieces) == 1 else pieces


def _range_laplace_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p)
    p.add_argument("--domain", required=True,
                   help="valid range: 'lower,upper' (inf allowed, e.g. '0,inf'); a union of "
                        "disjoint pieces as '0,1;2,3'")
    p.add_argument("--mode", choices=["dp", "metric"], default="dp",
                   help="dp: minimal scale for epsilon-DP (default); metric: the paper's "
                        "generalised (metric) guarantee")
    p.add_argument("--grid", type=float, default=None,
                   help="output grid step, a power of two (default: about sensitivity/1024)")


def _build_range_laplace(r: Request) -> Mechanism:
    """``options['domain']``: the CLI's text form (see :func:`_parse_domain`) or any domain;
    without it, the interval (or half-line) [lower, upper]."""
    from .range_laplace import RangeLaplace

    domain = r.options.get("domain", (r.lower, r.upper))
    if isinstance(domain, str):
        domain = _parse_domain(domain)
    return RangeLaplace(epsilon=r.epsilon, sensitivity=r.sensitivity, domain=domain,
                        **r.given("mode"), grid=r.grid)


def _paper_unsafe_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p)
    p.add_argument("--border", type=float, default=0.0,
                   help="the domain is (-inf, border] (default 0)")


def _build_paper_unsafe(r: Request) -> Mechanism:
    import warnings

    from .range_laplace_paper import PaperHalfLineLaplaceUnsafe

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PaperHalfLineLaplaceUnsafe(epsilon=r.epsilon, sensitivity=r.sensitivity,
                                          **r.given("border"))
def _truncated_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p, delta=True)
    p.add_argument("--grid", type=float, default=None,
                   help="output grid step, a power of two (default: chosen from epsilon)")


def _build_truncated(r: Request) -> Mechanism:
    from .truncated import TruncatedLaplace

    return TruncatedLaplace(epsilon=r.epsilon, delta=r.delta, sensitivity=r.sensitivity,
                            grid=r.grid)


def _gaussian_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p, delta=True)


def _build_gaussian(r: Request) -> Mechanism:
    from .gaussian import Gaussian

    return Gaussian(epsilon=r.epsilon, delta=r.delta, sensitivity=r.sensitivity)


def _build_analytic_gaussian(r: Request) -> Mechanism:
    from .gaussian import AnalyticGaussian

    return AnalyticGaussian(epsilon=r.epsilon, delta=r.delta, sensitivity=r.sensitivity)


def _count_domain_args(p: argparse.ArgumentParser, *, clip: bool = False) -> None:
    p.add_argument("--lower", type=int, default=0,
                   help="smallest possible true count (default 0; outputs never go below)")
    p.add_argument("--upper", type=int, default=None,
                   help="largest possible true count, e.g. the population size N")
    choices = ["clamp", "clip", "none"] if clip else ["clamp", "none"]
    p.add_argument("--boundary", choices=choices, default="clamp",
                   help="clamp: clamp the output into [lower, upper] (post-processing); "
                   + ("clip: clip the count into [lower+k, upper-k] then add noise; " if clip
                      else "") + "none: raw n + Z")


def _count_noise_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--D", type=int, default=None, help="support bound: noise in [-D, D]")
    p.add_argument("--eta", type=str, default=None,
                   help="P(noise = 0), in (0, 1) (decimal strings are exact)")
    p.add_argument("--delta", type=float, default=None,
                   help="target delta: calibrate eta (with --D) or D (with --eta) or both")
    p.add_argument("--method", choices=["paper", "optimal", "geometric"], default="paper",
                   help="paper: alpha* of Definition 2; optimal: LP-minimal exact delta")
    _count_domain_args(p, clip=True)


def _count_bounds(r: Request) -> dict[str, Any]:
    """lower/upper as the count mechanisms take them: integers, None for an open side."""
    kw: dict[str, Any] = {}
    for key, value in (("lower", r.lower), ("upper", r.upper)):
        if value is not None:
            kw[key] = None if abs(value) == float("inf") else int(value)
    return kw


def _build_count_noise(r: Request) -> Mechanism:
    """Two of D (``options['D']``), eta (``options['eta']``) and delta calibrate the third;
    delta alone gives the smallest support (with the largest eta there)."""
    from ..errors import ParameterError
    from .count_noise import CountNoise

    kw = {**r.given("method"), **_count_bounds(r), **r.given("boundary")}
    D, eta = r.options.get("D"), r.options.get("eta")
    if r.delta is None:
        if eta is None:
            raise ParameterError("count-noise needs --eta (with --D, or alone above the knee) "
                                 "or --delta")
        if D is None:
            return CountNoise.from_eta(epsilon=r.epsilon, eta=eta, **kw)
        return CountNoise(epsilon=r.epsilon, D=D, eta=eta, **kw)
    if D is not None and eta is None:
        return CountNoise.from_delta(epsilon=r.epsilon, delta=r.delta, D=D, **kw)
    if D is not None:
        raise ParameterError("give at most two of --D, --eta, --delta")
    return CountNoise.smallest_support(epsilon=r.epsilon, delta=r.delta, eta=eta, **kw)


def _geometric_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--sensitivity", type=int, default=1, help="integer sensitivity (default 1)")
    _count_domain_args(p)


def _build_geometric(r: Request) -> Mechanism:
    from .geometric import Geometric

    return Geometric(epsilon=r.epsilon, sensitivity=r.sensitivity, **_count_bounds(r),
                     **r.given("boundary"))


def _dg_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=float, default=None, help="target delta (calibrates sigma2)")
    p.add_argument("--sigma2", type=float, default=None,
                   help="CKS scale sigma^2 (not the variance); reports delta(epsilon)")
    p.add_argument("--sensitivity", type=int, default=1, help="integer sensitivity (default 1)")
    _count_domain_args(p)


def _build_dg(r: Request) -> Mechanism:
    from .discrete_gaussian import DiscreteGaussian

    return DiscreteGaussian(epsilon=r.epsilon, delta=r.delta, **r.given("sigma2"),
                            sensitivity=r.sensitivity, **_count_bounds(r),
                            **r.given("boundary", "sampler"))
def _staircase_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p)
    p.add_argument("--criterion", choices=["variance", "mean_abs", "interval"],
                   default="variance",
                   help="member of the optimal family: min variance (default), min E|noise|, "
                        "or shortest symmetric interval at --level")
    p.add_argument("--level", type=float, default=0.95,
                   help="coverage for --criterion interval (default 0.95)")
    p.add_argument("--grid", type=float, default=None,
                   help="output grid step, a power of two (default: sensitivity/4096)")


def _build_staircase(r: Request) -> Mechanism:
    from .staircase import Staircase

    return Staircase(epsilon=r.epsilon, sensitivity=r.sensitivity,
                     **r.given("criterion", "level"), grid=r.grid)


def _quantile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--sensitivity", type=int, default=1,
                   help="largest change of one utility between neighbours (integer)")
    p.add_argument("--candidates", type=int, required=True, help="number of candidates")


def _build_quantile(r: Request) -> Mechanism:
    """``sensitivity``: the utilities' sensitivity Δu; ``options['candidates']``."""
    from .statistics import NoisyMaxQuantile

    return NoisyMaxQuantile(epsilon=r.epsilon, utility_sensitivity=r.sensitivity,
                            candidates=r.options.get("candidates", 1))


def _selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=float, required=True, help="privacy parameter delta > 0")
    p.add_argument("--groups", type=int, default=1,
                   help="most groups one person contributes to (L1 sensitivity)")


def _build_selection(r: Request) -> Mechanism:
    """``options['groups']``: the most groups one person is in."""
    from ..errors import ParameterError
    from .statistics import PartitionSelection

    if r.delta is None:
        raise ParameterError("partition selection needs delta > 0")
    return PartitionSelection(epsilon=r.epsilon, delta=r.delta,
                              groups=r.options.get("groups", 1))


def _thresholded_args(p: argparse.ArgumentParser) -> None:
    _selection_args(p)
    p.add_argument("--rows", type=int, default=1, help="most rows one person has in one group")


def _build_thresholded(r: Request) -> Mechanism:
    """``options['groups']``, ``options['rows']``: the per-person bounds G and R."""
    from ..errors import ParameterError
    from .thresholded import ThresholdedCount

    if r.delta is None:
        raise ParameterError("a thresholded count needs delta > 0")
    return ThresholdedCount(epsilon=r.epsilon, delta=r.delta, groups=r.options.get("groups", 1),
                            rows=r.options.get("rows", 1))


def _build_gaussian_threshold(r: Request) -> Mechanism:
    """``options['groups']``, ``options['rows']``: the per-person bounds G and R."""
    from ..errors import ParameterError
    from .gaussian_threshold import GaussianThresholdCount

    if r.delta is None:
        raise ParameterError("a Gaussian threshold needs delta > 0")
    return GaussianThresholdCount(epsilon=r.epsilon, delta=r.delta,
                                  groups=r.options.get("groups", 1),
                                  rows=r.options.get("rows", 1))


def _distinct_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=float, default=None,
                   help="delta > 0: keys not public (thresholded); omit for public keys")
    p.add_argument("--groups", type=int, default=1,
                   help="most groups one person is counted in (L1 sensitivity)")


def _build_distinct(r: Request) -> Mechanism:
    """``options['groups']``: the most groups one person is in (L1 sensitivity G).  With
    delta > 0 the keys are not public (thresholded, R = 1); without, every group is released
    with exact geometric noise for L1 sensitivity G."""
    from .distinct import DistinctPersonsCount
    from .geometric import Geometric

    groups = r.options.get("groups", 1)
    if r.delta is None or r.delta == 0:
        return Geometric(epsilon=r.epsilon, sensitivity=groups, lower=0, upper=None,
                         sampler="cks")
    return DistinctPersonsCount(epsilon=r.epsilon, delta=r.delta, groups=groups)


def _build_optimal_selection(r: Request) -> Mechanism:
    from ..errors import ParameterError
    from .optimal_selection import OptimalSelection

    if r.delta is None:
        raise ParameterError("optimal partition selection needs delta > 0")
    return OptimalSelection(epsilon=r.epsilon, delta=r.delta)
def _interval_quantile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--level", type=float, default=0.5, help="quantile level in [0, 1]")
    p.add_argument("--levels", type=str, default=None,
                   help="several levels, comma-separated (one joint release)")
    p.add_argument("--lower", type=float, required=True, help="lower end of the values")
    p.add_argument("--upper", type=float, required=True, help="upper end of the values")
    p.add_argument("--grid", type=float, default=None, help="lattice step, a power of two")
    p.add_argument("--contributions", type=int, default=1, help="most rows per person")


def _build_interval_quantile(r: Request) -> Mechanism:
    """``options['level']`` (default 0.5), ``options['contributions']`` (default 1)."""
    from .interval_quantile import IntervalQuantile

    return IntervalQuantile(epsilon=r.epsilon, level=r.options.get("level", 0.5),
                            lower=r.lower, upper=r.upper, grid=r.grid,
                            contributions=r.options.get("contributions", 1))


def _build_multi_quantile(r: Request) -> Mechanism:
    """``options['levels']`` (a sequence or comma-separated text)."""
    from .multi_quantile import MultiQuantile

    levels = r.options.get("levels") or (0.25, 0.5, 0.75)
    if isinstance(levels, str):
        levels = [x for x in levels.split(",") if x.strip()]
    return MultiQuantile(epsilon=r.epsilon, levels=levels, lower=r.lower, upper=r.upper,
                         grid=r.grid, contributions=r.options.get("contributions", 1))


def _bounds_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--contributions", type=int, default=1, help="most rows per person")


def _build_bounds(r: Request) -> Mechanism:
    """``options``: lower_level, upper_level, min_exponent, max_exponent, contributions."""
    from .private_bounds import PrivateBounds

    return PrivateBounds(epsilon=r.epsilon, **r.given(
        "lower_level", "upper_level", "min_exponent", "max_exponent", "contributions"))


ENTRIES: list[MechanismEntry] = [
    MechanismEntry("laplace", "pure ε-DP Laplace, exact on a power-of-two grid",
                   _laplace_args, _build_laplace,
                   Request(epsilon=1.0), 3.25),
    MechanismEntry("clamped-laplace", "Laplace then clamp into [lower, upper] (baseline)",
                   _clamped_args, _build_clamped,
                   Request(epsilon=1.0, lower=0.0, upper=10.0), 3.0),
    MechanismEntry("range-laplace",
                   "truncated-and-normalised Laplace on a domain (Croft et al. 2022), exact, grid",
                   _range_laplace_args, _build_range_laplace,
                   Request(epsilon=1.0, lower=0.0, upper=10.0), 9.5),
    MechanismEntry("range-laplace-paper-unsafe",
                   "NOT DP: Croft et al. 2022 Sec. 4.1's data-dependent half-line scale (repro)",
                   _paper_unsafe_args, _build_paper_unsafe,
                   Request(epsilon=1.0), -1.0),
    MechanismEntry("truncated-laplace",
                   "(ε, δ)-DP truncated Laplacian (Geng et al. 2018), exact on a grid; 0 < δ < 1/2",
                   _truncated_args, _build_truncated,
                   Request(epsilon=1.0, delta=1e-5), 2.5),
    MechanismEntry("gaussian", "classic Gaussian σ = Δ√(2 ln(1.25/δ))/ε (ε < 1), exact on a grid",
                   _gaussian_args, _build_gaussian,
                   Request(epsilon=0.5, delta=1e-5), 10.0),
    MechanismEntry("analytic-gaussian",
                   "analytic Gaussian (Balle & Wang 2018): smallest σ, exact on a grid",
                   _gaussian_args, _build_analytic_gaussian,
                   Request(epsilon=1.0, delta=1e-5), 0.3),
    MechanismEntry("count-noise",
                   "finite-support integer count noise (Sadeghi et al. 2020), exact hockey-stick δ",
                   _count_noise_args, _build_count_noise,
                   Request(epsilon=2.18, upper=1000.0, options={"D": 6, "eta": 0.8}), 25),
    MechanismEntry("geometric", "two-sided geometric (discrete Laplace) for counts, pure eps-DP",
                   _geometric_args, _build_geometric,
                   Request(epsilon=1.0, upper=100.0), 40),
    MechanismEntry("discrete-gaussian",
                   "discrete Gaussian (Canonne-Kamath-Steinke), exact sampler and delta",
                   _dg_args, _build_dg,
                   Request(epsilon=1.0, delta=1e-6, upper=1000.0), 500),
    MechanismEntry("staircase", "optimal data-independent pure ε-DP noise "
                   "(Soria-Comas & Domingo-Ferrer 2013), exact "
                   "on a power-of-two grid", _staircase_args, _build_staircase,
                   Request(epsilon=1.0), 2.5),
    MechanismEntry("noisy-max-quantile",
                   "report noisy max over integer utilities (DP quantiles), exact geometric "
                   "noise, pure ε-DP", _quantile_args, _build_quantile,
                   Request(epsilon=1.0, options={"candidates": 5}), kind="statistic"),
    MechanismEntry("partition-selection",
                   "keep groups whose noisy person count clears a threshold, exact geometric "
                   "noise, (ε, δ)-DP", _selection_args, _build_selection,
                   Request(epsilon=1.0, delta=1e-6, options={"groups": 2}), kind="statistic"),
    MechanismEntry("thresholded-count",
                   "release a group's geometric-noised count iff it clears a threshold, "
                   "(ε, δ)-DP", _thresholded_args, _build_thresholded,
                   Request(epsilon=1.0, delta=1e-4, options={"groups": 2, "rows": 2}),
                   kind="statistic"),
    MechanismEntry("gaussian-threshold",
                   "release a group's discrete-Gaussian-noised count iff it clears a threshold "
                   "(persons in many groups), exact PLD, pld accountant only",
                   _thresholded_args, _build_gaussian_threshold,
                   Request(epsilon=1.0, delta=1e-4, options={"groups": 2, "rows": 1}),
                   kind="statistic"),
    MechanismEntry("distinct-persons",
                   "distinct persons per group (one per person per group touched): exact "
                   "geometric, thresholded on its own noise when keys are not public",
                   _distinct_args, _build_distinct,
                   Request(epsilon=1.0, delta=1e-4, options={"groups": 2}), kind="statistic"),
    MechanismEntry("optimal-selection",
                   "optimal partition selection for one group per person (Desfontaines et al. "
                   "2022), dyadic keep-probabilities, (ε, δ)-DP",
                   lambda p: _privacy_args(p, delta=True), _build_optimal_selection,
                   Request(epsilon=1.0, delta=1e-6), kind="statistic"),
    MechanismEntry("interval-quantile",
                   "exponential mechanism over the lattice between the data (quantile at the "
                   "data's resolution), exact dyadic base, pure ε-DP", _interval_quantile_args,
                   _build_interval_quantile,
                   Request(epsilon=1.0, lower=0.0, upper=16.0, grid=1.0,
                           options={"level": 0.5}), kind="statistic"),
    MechanismEntry("multi-quantile",
                   "several quantiles in one release (Kaplan, Schnapp and Stemmer 2022) of "
                   "exact exponential-mechanism steps, pure ε-DP", _interval_quantile_args,
                   _build_multi_quantile,
                   Request(epsilon=1.0, lower=0.0, upper=16.0, grid=1.0,
                           options={"levels": (0.25, 0.5, 0.75)}), kind="statistic"),
    MechanismEntry("private-bounds",
                   "suggested bounds: two report-noisy-max quantiles on the public sign x 2^k "
                   "grid, pure ε-DP", _bounds_args, _build_bounds,
                   Request(epsilon=1.0, options={"min_exponent": -2, "max_exponent": 3,
                                                  "lower_level": 0.25, "upper_level": 0.75}),
                   kind="statistic"),
]


def entries(kind: str | None = "value") -> dict[str, MechanismEntry]:
    """The entries of ``kind`` ("value", "statistic"; None: all) by name."""
    return {e.name: e for e in ENTRIES if kind is None or e.kind == kind}


def build(name: str, request: Request) -> Mechanism:
    """The calibrated mechanism ``name`` (of any kind) for ``request``."""
    from ..errors import ParameterError

    entry = entries(None).get(name)
    if entry is None:
        raise ParameterError(f"unknown mechanism {name!r}; choose from {sorted(entries(None))}")
    return entry.build(request)
