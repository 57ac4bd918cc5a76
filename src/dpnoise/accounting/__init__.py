"""Privacy accounting of what is sampled: PLDs of the exact laws, zCDP, and accountants.

See docs/accounting.md.  ``get_accountant("basic" | "pld" | "zcdp")`` returns an
:class:`Accountant`; ``charge_for`` a mechanism or a :class:`ReleaseSpec` gives a serialisable
:class:`Charge`; ``compose`` folds it into a serialisable :class:`State`.
"""

from .accountant import (
    ACCOUNTANTS,
    Accountant,
    AccountingBudget,
    BasicAccountant,
    Charge,
    PLDAccountant,
    ReleaseSpec,
    State,
    ZCDPAccountant,
    compose_all,
    get_accountant,
    largest_share,
)
from .pld import DEFAULT_H, PLD
from .sources import SourcedPLD, mechanism_pld
from .zcdp import delta_from_rho, epsilon_from_rho, rho_for_budget, rho_of

__all__ = [
    "ACCOUNTANTS",
    "DEFAULT_H",
    "PLD",
    "Accountant",
    "AccountingBudget",
    "BasicAccountant",
    "Charge",
    "PLDAccountant",
    "ReleaseSpec",
    "SourcedPLD",
    "State",
    "ZCDPAccountant",
    "compose_all",
    "delta_from_rho",
    "epsilon_from_rho",
    "get_accountant",
    "largest_share",
    "mechanism_pld",
    "rho_for_budget",
    "rho_of",
]
