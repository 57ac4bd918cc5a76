"""Exceptions raised by dpnoise.

Every invalid parameter raises :class:`ParameterError` *before* any random bit is
drawn and before any privacy budget is spent.  The message always names the
parameter and states its valid range.
"""

from __future__ import annotations


class DpnoiseError(Exception):
    """Base class of every exception dpnoise raises on purpose."""


class ParameterError(DpnoiseError, ValueError):
    """A privacy or query parameter is outside its valid range."""


class PrecisionError(ParameterError):
    """A value cannot be represented exactly on the mechanism's grid or in float64.

    A :class:`ParameterError`: it is raised (before any randomness) for true values or
    parameters outside the exactly representable range, so callers catching bad input catch
    it too.
    """


class BudgetExceededError(DpnoiseError):
    """A release would spend more privacy budget than the ledger allows; nothing was spent."""


class LedgerError(DpnoiseError):
    """The privacy ledger is locked, corrupted or otherwise unusable."""
