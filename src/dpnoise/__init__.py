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
from .mechanisms.base import Guarantee, Mechanism
from .mechanisms.counts import CountNoise, DiscreteGaussian, Geometric
from .mechanisms.laplace import ClampedLaplace, Laplace
from .mechanisms.planar import PlanarLaplace, PlanarRelease, RegionExitError
from .mechanisms.range_laplace import RangeLaplace
from .precision import eps_prime, grid_for_tolerance
from .randomness import CryptoRandom, NumpyRandom, RandomSource, SeededRandom
from .verify import VerificationReport, verify

__version__ = "0.1.0"

__all__ = [
    "AuditReport",
    "BudgetExceededError",
    "ClampedLaplace",
    "CountNoise",
    "CryptoRandom",
    "DiscreteGaussian",
    "Domain",
    "DpnoiseError",
    "Geometric",
    "Guarantee",
    "HalfLine",
    "Interval",
    "Laplace",
    "LedgerError",
    "Mechanism",
    "NumpyRandom",
    "ParameterError",
    "PlanarLaplace",
    "PlanarRelease",
    "PrecisionError",
    "RandomSource",
    "RangeLaplace",
    "RegionExitError",
    "SeededRandom",
    "Union",
    "VerificationReport",
    "__version__",
    "as_domain",
    "audit",
    "eps_prime",
    "grid_for_tolerance",
    "verify",
]
