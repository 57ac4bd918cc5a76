"""dpnoise: differential-privacy noise that is tightly calibrated, range-adherent and safe on
real floating point.  This module only re-exports the public API.

Imports are lazy (PEP 562 module ``__getattr__``): ``import dpnoise`` loads the ground floor
and the two checkers (which import scipy only inside the functions that need it); a
mechanism's module, the session (DuckDB) and the randomness module (``cryptography``) load on
first use of a name that lives there.  ``dpnoise.verify`` and ``dpnoise.audit`` are imported
eagerly because they share their names with their submodules: an attribute set on first
use could be shadowed by a later ``import dpnoise.verify``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .audit import AuditReport, audit
from .errors import (
    BudgetExceededError,
    DpnoiseError,
    LedgerError,
    ParameterError,
    PrecisionError,
)
from .verify import VerificationReport, verify
from .views import set_loader as _set_view_loader

if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs only
    from .domain import Domain, HalfLine, Interval, Union, as_domain
    from .laws.finite_precision import eps_prime, grid_for_tolerance
    from .laws.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma, gaussian_delta
    from .laws.truncated_laplacian import lower_bounds, rigorous_lower_bounds, tlap_params
    from .mechanisms.base import Guarantee, Mechanism
    from .mechanisms.count_noise import CountNoise
    from .mechanisms.discrete_gaussian import DiscreteGaussian
    from .mechanisms.gaussian import AnalyticGaussian, Gaussian
    from .mechanisms.geometric import Geometric
    from .mechanisms.laplace import ClampedLaplace, Laplace
    from .mechanisms.planar import PlanarLaplace, PlanarRelease, RegionExitError
    from .mechanisms.range_laplace import RangeLaplace
    from .mechanisms.staircase import Staircase
    from .mechanisms.staircase_l1 import L1Staircase
    from .mechanisms.staircase_multivariate import MultivariateStaircase
    from .mechanisms.truncated import TLapDistribution, TruncatedLaplace
    from .randomness import CryptoRandom, NumpyRandom, RandomSource, SeededRandom
    from .session import (
        Budget,
        Ledger,
        Release,
        Schema,
        Session,
        TrueAnswer,
        Workload,
        WorkloadResult,
    )

__version__ = "0.1.0"


def _load_report_views() -> None:
    """Register the notebook views (:mod:`dpnoise.views`) the first time one is shown."""
    from . import report  # noqa: F401  (importing it registers the renderers)


_set_view_loader(_load_report_views)

#: public name -> the module (relative to this package) that defines it
_LAZY: dict[str, str] = {
    "Domain": ".domain",
    "HalfLine": ".domain",
    "Interval": ".domain",
    "Union": ".domain",
    "as_domain": ".domain",
    "eps_prime": ".laws.finite_precision",
    "grid_for_tolerance": ".laws.finite_precision",
    "lower_bounds": ".laws.truncated_laplacian",
    "rigorous_lower_bounds": ".laws.truncated_laplacian",
    "tlap_params": ".laws.truncated_laplacian",
    "Guarantee": ".mechanisms.base",
    "Mechanism": ".mechanisms.base",
    "CountNoise": ".mechanisms.count_noise",
    "DiscreteGaussian": ".mechanisms.discrete_gaussian",
    "AnalyticGaussian": ".mechanisms.gaussian",
    "Gaussian": ".mechanisms.gaussian",
    "analytic_gaussian_sigma": ".laws.gaussian",
    "classic_gaussian_sigma": ".laws.gaussian",
    "gaussian_delta": ".laws.gaussian",
    "Geometric": ".mechanisms.geometric",
    "ClampedLaplace": ".mechanisms.laplace",
    "Laplace": ".mechanisms.laplace",
    "PlanarLaplace": ".mechanisms.planar",
    "PlanarRelease": ".mechanisms.planar",
    "RegionExitError": ".mechanisms.planar",
    "RangeLaplace": ".mechanisms.range_laplace",
    "Staircase": ".mechanisms.staircase",
    "L1Staircase": ".mechanisms.staircase_l1",
    "MultivariateStaircase": ".mechanisms.staircase_multivariate",
    "TLapDistribution": ".mechanisms.truncated",
    "TruncatedLaplace": ".mechanisms.truncated",
    "CryptoRandom": ".randomness",
    "NumpyRandom": ".randomness",
    "RandomSource": ".randomness",
    "SeededRandom": ".randomness",
    "Budget": ".ledger",
    "Ledger": ".ledger",
    "Release": ".session",
    "Schema": ".session",
    "Session": ".session",
    "TrueAnswer": ".session",
    "Workload": ".session",
    "WorkloadResult": ".session",
}


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dpnoise' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AnalyticGaussian",
    "AuditReport",
    "Budget",
    "BudgetExceededError",
    "ClampedLaplace",
    "CountNoise",
    "CryptoRandom",
    "DiscreteGaussian",
    "Domain",
    "DpnoiseError",
    "Gaussian",
    "Geometric",
    "Guarantee",
    "HalfLine",
    "Interval",
    "L1Staircase",
    "Laplace",
    "Ledger",
    "LedgerError",
    "Mechanism",
    "MultivariateStaircase",
    "NumpyRandom",
    "ParameterError",
    "PlanarLaplace",
    "PlanarRelease",
    "PrecisionError",
    "RandomSource",
    "RangeLaplace",
    "RegionExitError",
    "Release",
    "Schema",
    "SeededRandom",
    "Session",
    "Staircase",
    "TLapDistribution",
    "TrueAnswer",
    "TruncatedLaplace",
    "Union",
    "VerificationReport",
    "Workload",
    "WorkloadResult",
    "__version__",
    "analytic_gaussian_sigma",
    "as_domain",
    "audit",
    "classic_gaussian_sigma",
    "eps_prime",
    "gaussian_delta",
    "grid_for_tolerance",
    "lower_bounds",
    "rigorous_lower_bounds",
    "tlap_params",
    "verify",
]
