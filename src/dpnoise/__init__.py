"""dpnoise: differential-privacy noise that is tightly calibrated, range-adherent and safe on
real floating point.  This module only re-exports the public API."""

from .errors import (
    BudgetExceededError,
    DpnoiseError,
    LedgerError,
    ParameterError,
    PrecisionError,
)
from .mechanisms.base import Guarantee, Mechanism
from .mechanisms.laplace import ClampedLaplace, Laplace
from .mechanisms.staircase import L1Staircase, MultivariateStaircase, Staircase
from .randomness import CryptoRandom, NumpyRandom, RandomSource, SeededRandom
from .verify import VerificationReport, verify

__version__ = "0.1.0"

__all__ = [
    "BudgetExceededError",
    "ClampedLaplace",
    "CryptoRandom",
    "DpnoiseError",
    "Guarantee",
    "L1Staircase",
    "Laplace",
    "LedgerError",
    "Mechanism",
    "MultivariateStaircase",
    "NumpyRandom",
    "ParameterError",
    "PrecisionError",
    "RandomSource",
    "SeededRandom",
    "Staircase",
    "VerificationReport",
    "__version__",
    "verify",
]
