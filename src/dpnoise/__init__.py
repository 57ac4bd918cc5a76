"""dpnoise: differential-privacy noise that is tightly calibrated, range-adherent and safe on
real floating point.  This module only re-exports the public API."""

from .domain import Domain, HalfLine, Interval, Union, as_domain
from .errors import (
    BudgetExceededError,
    DpnoiseError,
    LedgerError,
    ParameterError,
    PrecisionError,
)
from .mechanisms.base import Guarantee, Mechanism
from .mechanisms.laplace import ClampedLaplace, Laplace
from .mechanisms.range_laplace import RangeLaplace
from .randomness import CryptoRandom, NumpyRandom, RandomSource, SeededRandom
from .verify import VerificationReport, verify

__version__ = "0.1.0"

__all__ = [
    "BudgetExceededError",
    "ClampedLaplace",
    "CryptoRandom",
    "Domain",
    "DpnoiseError",
    "Guarantee",
    "HalfLine",
    "Interval",
    "Laplace",
    "LedgerError",
    "Mechanism",
    "NumpyRandom",
    "ParameterError",
    "PrecisionError",
    "RandomSource",
    "RangeLaplace",
    "SeededRandom",
    "Union",
    "VerificationReport",
    "__version__",
    "as_domain",
    "verify",
]
