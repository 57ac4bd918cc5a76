"""The mechanisms the command line knows: name -> arguments and constructor.

Each entry declares its own CLI arguments and builds a calibrated mechanism from the
parsed namespace.  ``dpnoise release NAME`` and ``dpnoise verify NAME`` use it.  A new
mechanism joins the CLI by adding one :class:`MechanismEntry` to ``ENTRIES``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from .mechanisms.base import Mechanism


@dataclass(frozen=True)
class MechanismEntry:
    name: str
    summary: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    build: Callable[[argparse.Namespace], Mechanism]


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


def _build_laplace(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.laplace import Laplace

    return Laplace(epsilon=a.epsilon, sensitivity=a.sensitivity, grid=a.grid)


def _clamped_args(p: argparse.ArgumentParser) -> None:
    _laplace_args(p)
    p.add_argument("--lower", type=float, required=True, help="lower end of the valid range")
    p.add_argument("--upper", type=float, required=True, help="upper end of the valid range")


def _build_clamped(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.laplace import ClampedLaplace

    return ClampedLaplace(epsilon=a.epsilon, sensitivity=a.sensitivity, lower=a.lower,
                          upper=a.upper, grid=a.grid)


def _parse_domain(text: str) -> object:
    """'0,100' -> (0, 100); '0,inf' -> half-line; '0,1;2,3' -> union of pieces."""
    from .errors import ParameterError

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


def _build_range_laplace(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.range_laplace import RangeLaplace

    return RangeLaplace(epsilon=a.epsilon, sensitivity=a.sensitivity,
                        domain=_parse_domain(a.domain), mode=a.mode, grid=a.grid)


def _paper_unsafe_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p)
    p.add_argument("--border", type=float, default=0.0,
                   help="the domain is (-inf, border] (default 0)")


def _build_paper_unsafe(a: argparse.Namespace) -> Mechanism:
    import warnings

    from .mechanisms.range_laplace import PaperHalfLineLaplaceUnsafe

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PaperHalfLineLaplaceUnsafe(epsilon=a.epsilon, sensitivity=a.sensitivity,
                                          border=a.border)
def _truncated_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p, delta=True)
    p.add_argument("--grid", type=float, default=None,
                   help="output grid step, a power of two (default: chosen from epsilon)")


def _build_truncated(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.truncated import TruncatedLaplace

    return TruncatedLaplace(epsilon=a.epsilon, delta=a.delta, sensitivity=a.sensitivity,
                            grid=a.grid)


def _gaussian_args(p: argparse.ArgumentParser) -> None:
    _privacy_args(p, delta=True)


def _build_gaussian(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.gaussian import Gaussian

    return Gaussian(epsilon=a.epsilon, delta=a.delta, sensitivity=a.sensitivity)


def _build_analytic_gaussian(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.gaussian import AnalyticGaussian

    return AnalyticGaussian(epsilon=a.epsilon, delta=a.delta, sensitivity=a.sensitivity)


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


def _build_count_noise(a: argparse.Namespace) -> Mechanism:
    from .errors import ParameterError
    from .mechanisms.counts import CountNoise

    kw = {"method": a.method, "lower": a.lower, "upper": a.upper, "boundary": a.boundary}
    if a.delta is None:
        if a.eta is None:
            raise ParameterError("count-noise needs --eta (with --D, or alone above the knee) "
                                 "or --delta")
        if a.D is None:
            return CountNoise.from_eta(epsilon=a.epsilon, eta=a.eta, **kw)
        return CountNoise(epsilon=a.epsilon, D=a.D, eta=a.eta, **kw)
    if a.D is not None and a.eta is None:
        return CountNoise.from_delta(epsilon=a.epsilon, delta=a.delta, D=a.D, **kw)
    if a.D is not None:
        raise ParameterError("give at most two of --D, --eta, --delta")
    return CountNoise.smallest_support(epsilon=a.epsilon, delta=a.delta, eta=a.eta, **kw)


def _geometric_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--sensitivity", type=int, default=1, help="integer sensitivity (default 1)")
    _count_domain_args(p)


def _build_geometric(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.counts import Geometric

    return Geometric(epsilon=a.epsilon, sensitivity=a.sensitivity, lower=a.lower,
                     upper=a.upper, boundary=a.boundary)


def _dg_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=float, default=None, help="target delta (calibrates sigma2)")
    p.add_argument("--sigma2", type=float, default=None,
                   help="CKS scale sigma^2 (not the variance); reports delta(epsilon)")
    p.add_argument("--sensitivity", type=int, default=1, help="integer sensitivity (default 1)")
    _count_domain_args(p)


def _build_dg(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.counts import DiscreteGaussian

    return DiscreteGaussian(epsilon=a.epsilon, delta=a.delta, sigma2=a.sigma2,
                            sensitivity=a.sensitivity, lower=a.lower, upper=a.upper,
                            boundary=a.boundary)
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


def _build_staircase(a: argparse.Namespace) -> Mechanism:
    from .mechanisms.staircase import Staircase

    return Staircase(epsilon=a.epsilon, sensitivity=a.sensitivity, criterion=a.criterion,
                     level=a.level, grid=a.grid)


ENTRIES: list[MechanismEntry] = [
    MechanismEntry("laplace", "pure ε-DP Laplace, exact on a power-of-two grid",
                   _laplace_args, _build_laplace),
    MechanismEntry("clamped-laplace", "Laplace then clamp into [lower, upper] (baseline)",
                   _clamped_args, _build_clamped),
    MechanismEntry("range-laplace",
                   "truncated-and-normalised Laplace on a domain (paper 000), exact on a grid",
                   _range_laplace_args, _build_range_laplace),
    MechanismEntry("range-laplace-paper-unsafe",
                   "NOT DP: paper 000 Sec. 4.1's data-dependent half-line scale (reproduction)",
                   _paper_unsafe_args, _build_paper_unsafe),
    MechanismEntry("truncated-laplace",
                   "(ε, δ)-DP truncated Laplacian (paper 001), exact on a grid; 0 < δ < 1/2",
                   _truncated_args, _build_truncated),
    MechanismEntry("gaussian", "classic Gaussian σ = Δ√(2 ln(1.25/δ))/ε (ε < 1), exact on a grid",
                   _gaussian_args, _build_gaussian),
    MechanismEntry("analytic-gaussian",
                   "analytic Gaussian (Balle & Wang 2018): smallest σ, exact on a grid",
                   _gaussian_args, _build_analytic_gaussian),
    MechanismEntry("count-noise",
                   "finite-support integer count noise (paper 002), exact hockey-stick delta",
                   _count_noise_args, _build_count_noise),
    MechanismEntry("geometric", "two-sided geometric (discrete Laplace) for counts, pure eps-DP",
                   _geometric_args, _build_geometric),
    MechanismEntry("discrete-gaussian",
                   "discrete Gaussian (Canonne-Kamath-Steinke), exact sampler and delta",
                   _dg_args, _build_dg),
    MechanismEntry("staircase", "optimal data-independent pure ε-DP noise (paper 004), exact "
                   "on a power-of-two grid", _staircase_args, _build_staircase),
]


def entries() -> dict[str, MechanismEntry]:
    return {e.name: e for e in ENTRIES}
