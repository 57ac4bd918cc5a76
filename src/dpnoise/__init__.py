"""dpnoise: differential-privacy noise that is tightly calibrated, range-adherent and safe on
real floating point.  This module only re-exports the public API."""

from .bounds import lower_bounds, rigorous_lower_bounds, tlap_params
from .errors import (
    BudgetExceededError,
    DpnoiseError,
    LedgerError,
    ParameterError,
    PrecisionError,
)
from .mechanisms.base import Guarantee, Mechanism
from .mechanisms.gaussian import (
    AnalyticGaussian,
    Gaussian,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
)
from .mechanisms.laplace import ClampedLaplace, Laplace
from .mechanisms.truncated import TLapDistribution, TruncatedLaplace
from .randomness import CryptoRandom, NumpyRandom, RandomSource, SeededRandom
from .verify import VerificationReport, verify

__version__ = "0.1.0"

__all__ = [
    "AnalyticGaussian",
    "BudgetExceededError",
    "ClampedLaplace",
    "CryptoRandom",
    "DpnoiseError",
    "Gaussian",
    "Guarantee",
    "Laplace",
    "LedgerError",
    "Mechanism",
    "NumpyRandom",
    "ParameterError",
    "PrecisionError",
    "RandomSource",
    "SeededRandom",
    "TLapDistribution",
    "TruncatedLaplace",
    "VerificationReport",
    "__version__",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "gaussian_delta",
    "lower_bounds",
    "rigorous_lower_bounds",
    "tlap_params",
    "verify",
]
