"""dpnoise: differential-privacy noise that is tightly calibrated, range-adherent and safe on
real floating point.  This module only re-exports the public API."""

from .audit import AuditReport, audit
from .domain import Domain, HalfLine, Interval, Union, as_domain
from .errors import (
    BudgetExceededError,
    DpnoiseError,
    LedgerError,
    ParameterError,
    PrecisionError,
)
from .laws.finite_precision import eps_prime, grid_for_tolerance
from .laws.truncated_laplacian import lower_bounds, rigorous_lower_bounds, tlap_params
from .mechanisms.base import Guarantee, Mechanism
from .mechanisms.counts import CountNoise, DiscreteGaussian, Geometric
from .mechanisms.gaussian import (
    AnalyticGaussian,
    Gaussian,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
)
from .mechanisms.laplace import ClampedLaplace, Laplace
from .mechanisms.planar import PlanarLaplace, PlanarRelease, RegionExitError
from .mechanisms.range_laplace import RangeLaplace
from .mechanisms.staircase import L1Staircase, MultivariateStaircase, Staircase
from .mechanisms.truncated import TLapDistribution, TruncatedLaplace
from .randomness import CryptoRandom, NumpyRandom, RandomSource, SeededRandom
from .session import Budget, Session
from .verify import VerificationReport, verify

__version__ = "0.1.0"

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
    "SeededRandom",
    "Session",
    "Staircase",
    "TLapDistribution",
    "TruncatedLaplace",
    "Union",
    "VerificationReport",
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
