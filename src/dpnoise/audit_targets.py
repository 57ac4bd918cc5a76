"""Named samplers for ``dpnoise audit``: dpnoise's releases, numpy, diffprivlib and OpenDP.

dpnoise's own scalar mechanisms come from the one registry
(:mod:`dpnoise.mechanisms.registry`); the planar Laplace (two-dimensional, its own command)
is built here.  Each builder returns an :class:`AuditTarget`: a sampler ``f(x, n)``, the ε
it claims for neighbours at distance ``sensitivity`` and, when one exists, an exact support oracle.
Peer libraries are imported lazily; a missing or broken peer gives ``TargetUnavailableError``
(reported, never faked).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .audit import Sampler, Support, numpy_laplace_reachable
from .errors import DpnoiseError
from .mechanisms import registry


class TargetUnavailableError(DpnoiseError):
    """A peer library is not installed or cannot be imported."""


@dataclass(frozen=True)
class AuditTarget:
    name: str
    description: str
    sampler: Sampler
    claimed_epsilon: float
    x: Any
    x_prime: Any
    support: Support | None = None


def _full(x: float, n: int) -> np.ndarray:
    return np.full(n, float(x))


def _numpy(eps: float, sens: float, seed: int, x: float) -> AuditTarget:
    gen = np.random.default_rng(seed)
    b = sens / eps
    return AuditTarget(
        "numpy", f"x + numpy.random.Generator.laplace(0, {b:g}) (textbook float release)",
        lambda v, n: float(v) + gen.laplace(0.0, b, n), eps, x, x + sens,
        support=lambda y, v: numpy_laplace_reachable(y, float(v), b),
    )


def _dpnoise(eps: float, sens: float, seed: int, x: float) -> AuditTarget:
    m = registry.build("laplace", registry.Request(epsilon=eps, sensitivity=sens))
    from .randomness import SeededRandom

    rng = SeededRandom(seed)
    return AuditTarget("dpnoise", repr(m), lambda v, n: m.release(_full(v, n), rng=rng),
                       m.guarantee.epsilon, x, x + sens)


def _dpnoise_clamped(eps: float, sens: float, seed: int, x: float) -> AuditTarget:
    m = registry.build("clamped-laplace", registry.Request(
        epsilon=eps, sensitivity=sens, lower=x - sens, upper=x + 2 * sens))
    from .randomness import SeededRandom

    rng = SeededRandom(seed)
    return AuditTarget("dpnoise-clamped", repr(m),
                       lambda v, n: m.release(_full(v, n), rng=rng),
                       m.guarantee.epsilon, x, x + sens)


def _dpnoise_planar(eps: float, sens: float, seed: int, x: float) -> AuditTarget:
    from .mechanisms.planar import PlanarLaplace

    b = sens / eps
    m = PlanarLaplace.with_margin(epsilon=eps, sensitivity=sens, grid=_pow2_below(b / 64),
                                  domain=((x - sens, x + 2 * sens), (-sens, sens)))
    from .randomness import SeededRandom

    rng = SeededRandom(seed)
    return AuditTarget("dpnoise-planar", repr(m),
                       lambda v, n: m.release(np.tile(np.asarray(v, float), (n, 1)),
                                              rng=rng).points,
                       m.guarantee.epsilon, (x, 0.0), (x + sens, 0.0))


def _pow2_below(v: float) -> float:
    return float(2.0 ** np.floor(np.log2(v)))


def _import_diffprivlib_mechanisms() -> Any:
    """diffprivlib.mechanisms; if the package ``__init__`` fails (it imports its sklearn
    models, which break with some scikit-learn versions) load the subpackage alone."""
    try:
        return importlib.import_module("diffprivlib.mechanisms")
    except ImportError as exc:
        spec = importlib.util.find_spec("diffprivlib")
        if spec is None or spec.submodule_search_locations is None:
            raise TargetUnavailableError("diffprivlib is not installed") from exc
        for k in [k for k in sys.modules if k == "diffprivlib" or k.startswith("diffprivlib.")]:
            del sys.modules[k]
        pkg = types.ModuleType("diffprivlib")
        pkg.__path__ = list(spec.submodule_search_locations)
        sys.modules["diffprivlib"] = pkg
        try:
            return importlib.import_module("diffprivlib.mechanisms")
        except Exception as exc2:  # pragma: no cover - depends on the installed peer
            raise TargetUnavailableError(f"diffprivlib cannot be imported: {exc2}") from exc2


def _diffprivlib(eps: float, sens: float, seed: int, x: float) -> AuditTarget:
    mech = _import_diffprivlib_mechanisms()
    m = mech.Laplace(epsilon=eps, sensitivity=sens, random_state=seed)
    return AuditTarget(
        "diffprivlib", f"diffprivlib.mechanisms.Laplace(epsilon={eps}, sensitivity={sens})",
        lambda v, n: np.array([m.randomise(float(v)) for _ in range(n)]), eps, x, x + sens)


def _diffprivlib_snapping(eps: float, sens: float, seed: int, x: float) -> AuditTarget:
    mech = _import_diffprivlib_mechanisms()
    lo, hi = x - 10 * sens, x + 11 * sens
    m = mech.Snapping(epsilon=eps, sensitivity=sens, lower=lo, upper=hi, random_state=seed)
    return AuditTarget(
        "diffprivlib-snapping",
        f"diffprivlib.mechanisms.Snapping(epsilon={eps}, sensitivity={sens}, "
        f"lower={lo:g}, upper={hi:g})",
        lambda v, n: np.array([m.randomise(float(v)) for _ in range(n)]), eps, x, x + sens)


def _opendp(eps: float, sens: float, seed: int, x: float) -> AuditTarget:
    try:
        dp = importlib.import_module("opendp.prelude")
    except ImportError as exc:
        raise TargetUnavailableError("opendp is not installed") from exc
    dp.enable_features("contrib")
    m = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                          dp.l1_distance(T=float), scale=sens / eps)
    claimed = float(m.map(sens))
    return AuditTarget(
        "opendp", f"opendp make_laplace(scale={sens / eps:g}) on float64 (OS randomness; "
        "seed ignored)", lambda v, n: np.asarray(m([float(v)] * n), dtype=float),
        claimed, x, x + sens)


TARGETS: dict[str, Callable[[float, float, int, float], AuditTarget]] = {
    "numpy": _numpy,
    "dpnoise": _dpnoise,
    "dpnoise-clamped": _dpnoise_clamped,
    "dpnoise-planar": _dpnoise_planar,
    "diffprivlib": _diffprivlib,
    "diffprivlib-snapping": _diffprivlib_snapping,
    "opendp": _opendp,
}


def build_target(name: str, *, epsilon: float = 1.0, sensitivity: float = 1.0, seed: int = 0,
                 x: float = 0.0) -> AuditTarget:
    """The named target, auditing inputs x and x + sensitivity."""
    try:
        builder = TARGETS[name]
    except KeyError as exc:
        raise TargetUnavailableError(
            f"unknown target {name!r}; choose from {sorted(TARGETS)}") from exc
    try:
        return builder(epsilon, sensitivity, seed, x)
    except ImportError as exc:
        raise TargetUnavailableError(f"{name}: {exc}") from exc
