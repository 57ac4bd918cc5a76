"""A ledger's total (:class:`Budget`) and the exact arithmetic of its charges.

Charges are summed as exact rationals of the stored doubles and rounded outward
(:func:`float_up`, :func:`float_down`), so rounding never lets the charges exceed the total.
"""


from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import LedgerError, ParameterError
from ..params import check_delta, check_finite
from .chain import (
    ACCOUNTANTS,
    ChainState,
)


@dataclass(frozen=True)
class Budget:
    """A ledger's total under an accountant.

    ``Budget(epsilon, delta=0, accountant="basic" | "pld" | "zcdp")``: an (epsilon, delta)
    total; ``Budget(rho=...)``: a zCDP total (accountant ``"zcdp"``; epsilon is then
    infinite and unused).  ``"basic"``: the releases' (epsilon, delta) add up; ``"pld"``:
    the privacy-loss distributions of the laws sampled are composed; ``"zcdp"``: their rho
    add up (see :mod:`dpnoise.accounting` and docs/accounting.md).  The accountant defaults
    to ``"basic"``, or ``"zcdp"`` with ``rho``.

    Parameters
    ----------
    epsilon : float or None, default None
        The total ε (None with ``rho``).
    delta : float, default 0.0
        The total δ.
    rho : float or None, default None
        A zCDP total ρ (M. Bun, T. Steinke, *Concentrated Differential Privacy*, TCC 2016,
        Definition 1.1): releases compose by adding their ρ, and ρ-zCDP implies
        ``(ρ + 2·sqrt(ρ·ln(1/δ)), δ)``-DP (their Proposition 1.3).
    accountant : {"basic", "pld", "zcdp"} or None, default None
        How releases compose (None: "basic", or "zcdp" with ``rho``).

    Raises
    ------
    ParameterError
        If the accountant is unknown or a total is out of range or inconsistent with it.
    """

    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None
    accountant: str | None = None

    def __post_init__(self) -> None:
        acc = self.accountant if self.accountant is not None else (
            "zcdp" if self.rho is not None else "basic")
        if acc not in ACCOUNTANTS:
            raise ParameterError(f"budget accountant must be one of {', '.join(ACCOUNTANTS)}, "
                                 f"got {self.accountant!r}")
        if self.rho is not None:
            r = check_finite("budget rho", self.rho)
            if r < 0:
                raise ParameterError(f"budget rho must be >= 0, got {r!r}")
            if acc != "zcdp":
                raise ParameterError(f"budget rho (a zCDP total) needs accountant 'zcdp', not "
                                     f"{acc!r}")
            if (self.epsilon is not None and self.epsilon != math.inf) or self.delta:
                raise ParameterError("a rho budget has no epsilon/delta: give "
                                     "Budget(rho=...) alone, or Budget(epsilon, delta, "
                                     "accountant='zcdp') for an (epsilon, delta) total")
            object.__setattr__(self, "rho", r)
            object.__setattr__(self, "epsilon", math.inf)
            object.__setattr__(self, "delta", 0.0)
        else:
            if self.epsilon is None:
                raise ParameterError("budget epsilon is required (or rho=... for a zCDP total)")
            e = check_finite("budget epsilon", self.epsilon)
            if e < 0:
                raise ParameterError(f"budget epsilon must be >= 0, got {e!r}")
            d = check_delta(self.delta, name="budget delta", allow_zero=True)
            object.__setattr__(self, "epsilon", e)
            object.__setattr__(self, "delta", d)
        object.__setattr__(self, "accountant", acc)

    def for_accounting(self) -> Any:
        """The :class:`dpnoise.accounting.AccountingBudget` of this total.

        Returns
        -------
        AccountingBudget
            The same total in the accountants' terms.
        """
        from ..accounting import AccountingBudget

        if self.rho is not None:
            return AccountingBudget(rho=self.rho)
        return AccountingBudget(float(self.epsilon), float(self.delta))  # type: ignore[arg-type]

    def __str__(self) -> str:
        if self.rho is not None:
            return f"rho={self.rho:.6g}"
        return f"epsilon={self.epsilon:.6g}" + (f", delta={self.delta:.3g}" if self.delta else "")



#: the totals a new ledger file accepts (besides 0): a total below a billionth -- or a
#: subnormal double -- is a typo, not a budget (no release could fit in it)
TOTAL_RANGE = {"epsilon": (1e-9, 1e9), "delta": (1e-100, 1.0), "rho": (1e-18, 1e18)}


def check_new_total(budget: Budget) -> None:
    """A new ledger's total: each part 0 or inside :data:`TOTAL_RANGE` (delta below 1)."""
    parts = {"rho": budget.rho} if budget.rho is not None else \
        {"epsilon": budget.epsilon, "delta": budget.delta}
    for name, value in parts.items():
        lo, hi = TOTAL_RANGE[name]
        if value and not lo <= value <= hi:  # type: ignore[operator]
            raise ParameterError(f"budget {name} (the ledger's total) must be 0 or in "
                                 f"[{lo:g}, {hi:g}], got {value!r}")



def budget_of(st: ChainState) -> Budget:
    assert st.header is not None
    h = st.header
    try:
        return Budget(h.epsilon, h.delta, h.rho, h.accountant)
    except ParameterError as exc:
        raise LedgerError(f"ledger {st.path!r} has an unusable total: {exc}") from exc



def format_composed(c: dict[str, float], total: Budget) -> str:
    if total.rho is not None:
        return f"rho={c['rho']:.6g}"
    return f"epsilon={c['epsilon']:.6g} (at delta={total.delta:.3g})" + (
        f", delta={c['delta']:.3g} (at epsilon={total.epsilon:.6g})" if total.delta else "")


def float_up(x: Fraction) -> float:
    """The smallest double >= x."""
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def float_down(x: Fraction) -> float:
    """The largest double <= x (>= 0)."""
    if x <= 0:
        return 0.0
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, 0.0)
    return f
