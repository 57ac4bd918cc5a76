"""Accountants: what one release costs, how costs compose, and whether a total fits a budget.

Three accountants share one interface (:class:`Accountant`), built for a ledger that stores one
serialised :class:`Charge` per release and a cached, serialised :class:`State` (the composition
so far), so that reserving release n + 1 composes only the new charge:

``"basic"``  sequential composition: Σε, Σδ of the claimed guarantees (Dwork and Roth, "The
             algorithmic foundations of differential privacy", 2014, Thm. 3.16).
``"pld"``    the composed privacy-loss distribution of what is sampled (:mod:`.sources`),
             numerically exact up to proven, pessimistic discretisation (:mod:`.pld`); the
             reported (ε, δ) is the minimum of the PLD bound, the Rényi-curve conversion
             (when every release has a curve, :mod:`.renyi`) and basic composition: all
             three are valid upper bounds.
``"zcdp"``   Σρ (:mod:`.zcdp`), converted to (ε, δ) by Canonne–Kamath–Steinke, also never worse
             than basic; a budget may also be a total ρ.

A "charge" is a whole release (:class:`ReleaseSpec`): one mechanism applied to k cells that one
person can each move by at most the sensitivity (k-fold composition), or several mechanisms
(a mean's count and sum).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from . import sums as exact_sums
from .pld import DEFAULT_H, PLD
from .sources import (
    fraction_rho_factor,
    fractional_split_pld,
    mechanism_pld,
    profile_of,
    split_pld,
)
from .zcdp import epsilon_from_rho, rho_of

_MAGIC = b"DPNACC1\n"


# --------------------------------------------------------------------------- budget / spec
@dataclass(frozen=True)
class AccountingBudget:
    """A total: (epsilon, delta), or rho for a zCDP total (then epsilon/delta are ignored)."""

    epsilon: float = math.inf
    delta: float = 0.0
    rho: float | None = None

    def __post_init__(self) -> None:
        if self.rho is None and not (self.epsilon >= 0 and 0 <= self.delta <= 1):
            raise ParameterError("budget needs epsilon >= 0 and 0 <= delta <= 1")
        if self.rho is not None and not self.rho >= 0:
            raise ParameterError("budget rho must be >= 0")


@dataclass(frozen=True)
class ReleaseSpec:
    """One ledger charge: ``parts`` = ((mechanism, cells), ...), composed.

    ``cells = k`` means one person can move each of k cells (released with independent noise
    of ``mechanism``) by at most the mechanism's sensitivity.  The product of k dominating pairs
    dominates every such neighbouring pair (composition theorem, see :mod:`.pld`), for every
    law: that is the k-fold self-composition.  For Gaussians it is also *tight*: the k shifts
    form a vector of ℓ2 norm <= √k·Δ and N(0, σ²I) is rotation invariant, so the worst case is
    all k cells moved by Δ, exactly the k-fold composition of N(0, σ²) at shift Δ.  (If instead
    only a TOTAL ℓ1 contribution kΔ is bounded, one cell may move by kΔ: for Gaussians that is
    worse, ℓ2 <= ℓ1 = kΔ, and must be charged as a mechanism with sensitivity kΔ.)
    """

    parts: tuple[tuple[Any, int], ...]
    label: str = ""
    #: ((mechanism, k, cells), ...): one person's k contributions, each moving one of at most
    #: ``cells`` cells by the sensitivity, in any split (ℓ1 bound; :func:`.sources.split_pld`)
    splits: tuple[tuple[Any, int, int], ...] = ()
    #: ((mechanism, k, cells), ...): cells calibrated at the FULL sensitivity k·unit, one
    #: person's k rows split over at most ``cells`` of them, cell i moving by d_i/k of the
    #: calibrated sensitivity (:func:`.sources.fractional_split_pld`)
    fractions: tuple[tuple[Any, int, int], ...] = ()

    @classmethod
    def cells(cls, mechanism: Any, k: int, label: str = "") -> ReleaseSpec:
        if int(k) != k or k < 1:
            raise ParameterError(f"cells must be an integer >= 1, got {k!r}")
        return cls(((mechanism, int(k)),), label)

    @classmethod
    def mean(cls, count: Any, total: Any, cells: int = 1, label: str = "mean") -> ReleaseSpec:
        """A mean released as its noisy (count, sum) pair: the composition of the two."""
        return cls(((count, cells), (total, cells)), label)

    @classmethod
    def split(cls, mechanism: Any, k: int, cells: int, label: str = "") -> ReleaseSpec:
        """A grouped release where one person's k contributions (each moving one cell by at
        most the sensitivity) fall into at most ``cells`` cells in any split: e.g. cell 1
        moved by 3Δ and cell 2 by Δ when k = 4.  Charged as the envelope over every split."""
        if int(k) != k or k < 1 or int(cells) != cells or cells < 1:
            raise ParameterError(f"split needs integers k >= 1 and cells >= 1, got {k!r}, "
                                 f"{cells!r}")
        return cls((), label, ((mechanism, int(k), int(cells)),))

    @classmethod
    def fraction_split(cls, mechanism: Any, k: int, cells: int, label: str = "") -> ReleaseSpec:
        """A grouped release whose cells are each calibrated at the total sensitivity of one
        person's k contributions (the (ε, δ) mechanisms of a GROUP BY): the person's rows
        move cell i by d_i/k of it, Σd_i = k over at most ``cells`` cells.  Basic
        composition charges min(k, cells) cells; the PLD is the envelope over the splits."""
        if int(k) != k or k < 1 or int(cells) != cells or cells < 1:
            raise ParameterError(f"fraction_split needs integers k >= 1 and cells >= 1, got "
                                 f"{k!r}, {cells!r}")
        return cls((), label, (), ((mechanism, int(k), int(cells)),))

    @staticmethod
    def combine(*specs: ReleaseSpec, label: str = "") -> ReleaseSpec:
        """One release made of several (composed): e.g. a mean's count and centred sum."""
        return ReleaseSpec(tuple(p for s in specs for p in s.parts), label,
                           tuple(p for s in specs for p in s.splits),
                           tuple(p for s in specs for p in s.fractions))


# --------------------------------------------------------------------------- serialisation
def _pack(head: dict[str, Any], pld: PLD | None) -> bytes:
    h = json.dumps(head, sort_keys=True, allow_nan=True).encode()
    body = pld.to_bytes() if pld is not None else b""
    return _MAGIC + struct.pack("<I", len(h)) + h + body


def _unpack(data: bytes) -> tuple[dict[str, Any], PLD | None]:
    if not data.startswith(_MAGIC):
        raise ParameterError("not a serialised accounting object")
    off = len(_MAGIC)
    (n,) = struct.unpack_from("<I", data, off)
    head = json.loads(data[off + 4:off + 4 + n])
    rest = data[off + 4 + n:]
    return head, (PLD.from_bytes(rest) if rest else None)


def _curve_from(head: dict[str, Any]) -> tuple[float, ...] | None:
    raw = head.get("rdp")
    return None if raw is None else tuple(float.fromhex(x) for x in raw)


@dataclass(frozen=True)
class Charge:
    """The accounting object of one release (serialisable, content-hashed)."""

    accountant: str
    basic_epsilon: float
    basic_delta: float
    pld: PLD | None = None
    rho: float = 0.0
    notes: tuple[str, ...] = ()
    rdp: tuple[float, ...] | None = None  # Rényi curve on renyi.ALPHAS (zcdp: None = αρ; pld: none)
    #: the basic (ε, δ) and ρ are >= the exact sums of the parts' claims; False only for a
    #: charge written before the exact sums (rounded to nearest, :mod:`.sums`)
    rounded_up: bool = True

    def to_bytes(self) -> bytes:
        head = {"kind": "charge", "accountant": self.accountant,
                "basic": [float(self.basic_epsilon).hex(), float(self.basic_delta).hex()],
                "rho": float(self.rho).hex(), "notes": list(self.notes)}
        if self.rdp is not None:  # absent in charges written before the curves
            head["rdp"] = [float(x).hex() for x in self.rdp]
        if self.rounded_up:  # absent in charges written before the exact sums
            head["sums"] = "up"
        return _pack(head, self.pld)

    def sums_bound(self) -> exact_sums.Sums:
        """(ε, δ, ρ) as exact upper bounds of the parts' claims (:func:`.sums.bound`)."""
        values = (self.basic_epsilon, self.basic_delta, self.rho)
        return exact_sums.bound(values, None, 0 if self.rounded_up else 1)

    @classmethod
    def from_bytes(cls, data: bytes) -> Charge:
        head, pld = _unpack(data)
        if head.get("kind") != "charge":
            raise ParameterError("serialised object is not a charge")
        e, d = (float.fromhex(x) for x in head["basic"])
        return cls(head["accountant"], e, d, pld, float.fromhex(head["rho"]),
                   tuple(head["notes"]), _curve_from(head), head.get("sums") == "up")

    def content_hash(self) -> str:
        return hashlib.sha256(self.to_bytes()).hexdigest()


@dataclass(frozen=True)
class State:
    """The composition of every charge so far (serialisable, content-hashed)."""

    accountant: str
    count: int = 0
    basic_epsilon: float = 0.0
    basic_delta: float = 0.0
    pld: PLD | None = None
    rho: float = 0.0
    previous: str = field(default="", compare=False)  # content hash of the state before
    rdp: tuple[float, ...] | None = None  # composed Rényi curve ("zcdp"; None: α·rho)
    #: the exact (Σε, Σδ, Σρ) (basic_epsilon, basic_delta and rho are the smallest doubles
    #: >= them); None in an empty state and in one written before the exact sums
    sums: exact_sums.Sums | None = None

    def to_bytes(self) -> bytes:
        head = {"kind": "state", "accountant": self.accountant, "count": self.count,
                "basic": [float(self.basic_epsilon).hex(), float(self.basic_delta).hex()],
                "rho": float(self.rho).hex(), "previous": self.previous}
        if self.rdp is not None:  # absent in states written before the curves
            head["rdp"] = [float(x).hex() for x in self.rdp]
        if self.sums is not None:  # absent in states written before the exact sums
            head["sums"] = [str(x) for x in self.sums]
        return _pack(head, self.pld)

    def sums_bound(self) -> exact_sums.Sums:
        """Exact upper bounds of the claimed (Σε, Σδ, Σρ) (:func:`.sums.bound`)."""
        return exact_sums.bound((self.basic_epsilon, self.basic_delta, self.rho), self.sums,
                                self.count)

    def reported(self) -> tuple[float, float, float]:
        """The basic (ε, δ) and ρ as doubles never below the claimed sums."""
        return exact_sums.reported((self.basic_epsilon, self.basic_delta, self.rho),
                                   self.sums, self.count)

    @classmethod
    def from_bytes(cls, data: bytes) -> State:
        head, pld = _unpack(data)
        if head.get("kind") != "state":
            raise ParameterError("serialised object is not a state")
        e, d = (float.fromhex(x) for x in head["basic"])
        rho, sums = float.fromhex(head["rho"]), head.get("sums")
        if sums is not None:
            sums = (Fraction(sums[0]), Fraction(sums[1]), Fraction(sums[2]))
            if tuple(map(exact_sums.up, sums)) != (e, d, rho):
                raise ParameterError("a serialised state's sums disagree with their exact "
                                     "values")
        return cls(head["accountant"], int(head["count"]), e, d, pld, rho, head["previous"],
                   _curve_from(head), sums)

    def content_hash(self) -> str:
        """SHA-256 of :meth:`to_bytes`, computed once per (immutable) state: a ledger
        composes every new charge with the same state object."""
        got = self.__dict__.get("_content_hash")
        if got is None:
            got = hashlib.sha256(self.to_bytes()).hexdigest()
            object.__setattr__(self, "_content_hash", got)
        return got


# --------------------------------------------------------------------------- accountants
def _parts(what: Any) -> tuple[tuple[Any, int], ...]:
    return what.parts if isinstance(what, ReleaseSpec) else ((what, 1),)


def _splits(what: Any) -> tuple[tuple[Any, int, int], ...]:
    return what.splits if isinstance(what, ReleaseSpec) else ()


def _fractions(what: Any) -> tuple[tuple[Any, int, int], ...]:
    return what.fractions if isinstance(what, ReleaseSpec) else ()


def _basic(what: Any) -> tuple[float, float]:
    """The claimed (Σkε, Σkδ) of a release's mechanisms, rounded up (:mod:`.sums`)."""
    terms = _parts(what) + tuple((m, k) for m, k, _ in _splits(what)) + tuple(
        (m, min(k, c)) for m, k, c in _fractions(what))
    for m, _ in terms:
        profile_of(m)  # refuses a release that is not DP
    e = exact_sums.claimed_sum((k, m.guarantee.epsilon) for m, k in terms)
    d = exact_sums.claimed_sum((k, m.guarantee.delta) for m, k in terms)
    return exact_sums.up(e), exact_sums.up(exact_sums.capped(d))


class Accountant(ABC):
    """charge_for → Charge; compose(state, charge) → State; epsilon/delta/fits of a State."""

    name: str = ""

    def empty(self) -> State:
        return State(self.name)

    @abstractmethod
    def charge_for(self, what: Any) -> Charge:
        """The charge of one release (a mechanism or a :class:`ReleaseSpec`)."""

    def compose(self, state: State, charge: Charge) -> State:
        if charge.accountant != self.name or state.accountant != self.name:
            raise ParameterError(f"charge/state of accountant {charge.accountant!r}/"
                                 f"{state.accountant!r} given to {self.name!r}")
        pld = None
        if charge.pld is not None:
            pld = charge.pld if state.pld is None else state.pld.compose(charge.pld)
        e, d, rho, sums = exact_sums.compose_sums(state, charge, 1)
        return State(self.name, state.count + 1, e, d, pld, rho, state.content_hash(),
                     self._add_curves(state, charge, 1), sums)

    def compose_many(self, state: State, charge: Charge, n: int) -> State:
        """``n`` copies of ``charge`` at once (repeated squaring of the PLD)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"the number of releases must be an integer >= 0, got {n!r}")
        n = int(n)
        pld = state.pld
        if charge.pld is not None and n > 0:
            many = charge.pld.self_compose(n)
            pld = many if pld is None else pld.compose(many)
        e, d, rho, sums = exact_sums.compose_sums(state, charge, n)
        return State(self.name, state.count + n, e, d, pld, rho, state.content_hash(),
                     self._add_curves(state, charge, n), sums)

    @staticmethod
    def _add_curves(state: State, charge: Charge, n: int) -> tuple[float, ...] | None:
        """Σ Rényi curves (Mironov Prop. 1), or None when neither side has one.  A side
        without a curve (a charge or state written before the curves) counts as α·ρ, which
        bounds every ρ-zCDP charge."""
        if charge.rdp is None and state.rdp is None:
            return None
        from .renyi import ALPHAS

        old = np.array(state.rdp) if state.rdp is not None else ALPHAS * state.rho
        new = np.array(charge.rdp) if charge.rdp is not None else ALPHAS * charge.rho
        return tuple(_compose_curves(state, charge, old, new, n).tolist())

    # basic composition is valid under every accountant: each reports the better bound
    def epsilon(self, state: State, delta: float) -> float:
        if not 0 <= delta <= 1:  # NaN too: it compared False and gave inf silently
            raise ParameterError(f"delta must be in [0, 1], got {delta!r}")
        e, d, _ = state.reported()
        return e if delta >= d else math.inf

    def delta(self, state: State, epsilon: float) -> float:
        if math.isnan(epsilon):
            raise ParameterError("epsilon must not be NaN")
        e, d, _ = state.reported()
        return d if epsilon >= e else 1.0

    def fits(self, state: State, budget: AccountingBudget) -> bool:
        """Strict, like a ledger's test: the composed δ at the total's ε, or the composed ε
        at the total's δ, within the total (no tolerance: a total exceeded by 1e-12 is
        exceeded, and a ledger refuses it)."""
        if budget.rho is not None:
            raise ParameterError(f"a rho budget needs the 'zcdp' accountant, not {self.name!r}")
        if state.count == 0:
            return True
        return self.delta(state, budget.epsilon) <= budget.delta or \
            self.epsilon(state, budget.delta) <= budget.epsilon


class BasicAccountant(Accountant):
    name = "basic"

    def charge_for(self, what: Any) -> Charge:
        e, d = _basic(what)
        return Charge(self.name, e, d)


class PLDAccountant(Accountant):
    """Composed PLDs of the sampled laws; ``h`` is the loss grid (ε error <= releases·h)."""

    name = "pld"

    def __init__(self, h: float = DEFAULT_H) -> None:
        self.h = float(h)

    def charge_for(self, what: Any) -> Charge:
        e, d = _basic(what)
        total: PLD | None = None
        notes = []
        curves: list[NDArray[np.float64] | None] = []
        for m, k in _parts(what):
            src = mechanism_pld(m, h=self.h)
            notes.append(f"{src.method}: {src.note}" + (f" x{k} cells" if k > 1 else ""))
            part = src.pld.self_compose(k) if k > 1 else src.pld
            total = part if total is None else total.compose(part)
            curves.append(_curve_of_part(m, src.pld, "cells", k))
        for m, k, cells in _splits(what):
            src = split_pld(m, k, cells, h=self.h)
            notes.append(f"{src.method}: {src.note}")
            total = src.pld if total is None else total.compose(src.pld)
            curves.append(_curve_of_part(m, src.pld, "split", k))
        for m, k, cells in _fractions(what):
            src = fractional_split_pld(m, k, cells, h=self.h)
            notes.append(f"{src.method}: {src.note}")
            total = src.pld if total is None else total.compose(src.pld)
            curves.append(_curve_of_part(m, src.pld, "fraction", k, cells))
        if total is None:
            raise ParameterError("a release with no mechanism has nothing to charge")
        rdp = None if any(c is None for c in curves) else \
            tuple(np.sum(np.array(curves), axis=0).tolist())
        return Charge(self.name, e, d, total, 0.0, tuple(notes), rdp)

    @staticmethod
    def _add_curves(state: State, charge: Charge, n: int) -> tuple[float, ...] | None:
        """Σ Rényi curves, or None as soon as one release has none (a "pld" charge without
        a curve has no Rényi bound at all: it must not count as zero)."""
        if charge.rdp is None or (state.count > 0 and state.rdp is None):
            return None
        from .renyi import ALPHAS

        old = np.array(state.rdp) if state.rdp is not None else np.zeros(ALPHAS.size)
        return tuple(_compose_curves(state, charge, old, np.array(charge.rdp), n).tolist())

    def epsilon(self, state: State, delta: float) -> float:
        best = super().epsilon(state, delta)
        if state.pld is not None:
            best = min(best, state.pld.epsilon(delta))
        if state.rdp is not None and delta > 0:
            from .renyi import epsilon_from_curve

            best = min(best, epsilon_from_curve(np.array(state.rdp), delta))
        return best

    def delta(self, state: State, epsilon: float) -> float:
        best = super().delta(state, epsilon)
        if state.pld is not None:
            best = min(best, state.pld.delta(epsilon))
        if state.rdp is not None:
            from .renyi import delta_from_curve

            best = min(best, delta_from_curve(np.array(state.rdp), epsilon))
        return best


def _compose_curves(state: State, charge: Charge, old: NDArray[np.float64],
                    new: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """A state's curve ``old`` after ``n`` releases of a charge's curve ``new``, rounded up
    (:func:`.sums.compose_curves`) -- as it was, rounded to nearest, when both were written
    before the exact sums (an old ledger's states then hash as recorded)."""
    legacy = state.sums is None and not charge.rounded_up  # as exact_sums.compose_sums
    return exact_sums.compose_curves(old, new, n, legacy=legacy,
                                     old_releases=state.count if state.sums is None else 0)


def _curve_of_part(m: Any, pld: PLD, kind: str, k: int,
                   cells: int = 1) -> NDArray[np.float64] | None:
    """The Rényi curve of one part of a release for the "pld" accountant, or None.

    The curves of :func:`.renyi.curve_of` (the zCDP accountant's: randomized response of a
    pure ε for pure ε-DP laws, α·Δ²/(2σ²) for the exact discrete Gaussian) are used only
    where the part's own PLD has no +∞ mass: a law whose neighbours' supports differ has
    an infinite Rényi divergence (a positive +∞ mass of the true PLD, which the dominating
    PLD bounds from above), so no finite curve may be charged for it.
    """
    from .renyi import curve_of

    if pld.inf_mass > 0:
        return None
    try:
        if kind == "cells":
            return k * curve_of(m)
        if kind == "split":
            return curve_of(m, shift=k)
        return _fraction_curve(m, k, cells)
    except ParameterError:
        return None


def _fraction_curve(m: Any, k: int, cells: int) -> NDArray[np.float64]:
    """The Rényi curve of a fraction split (:meth:`ReleaseSpec.fraction_split`): α times
    its ρ over the worst split for a Gaussian-type law (:func:`.sources.fraction_rho_factor`);
    for any other law each of the min(k, cells) cells moves by at most one sensitivity, so
    costs at most the law's own curve."""
    from .renyi import ALPHAS, curve_of

    factor = fraction_rho_factor(m, k, cells)  # min(k, cells) cells for any other law
    if profile_of(m).rho_quadratic:
        return ALPHAS * (rho_of(m) * factor)
    return factor * curve_of(m)


class ZCDPAccountant(Accountant):
    name = "zcdp"

    def charge_for(self, what: Any) -> Charge:
        e, d = _basic(what)
        # a split: ρ of a shift dΔ is d²ρ for the Gaussian and (dε)²/2 for pure ε-DP, so
        # Σ d_i² ρ <= k²ρ: the worst split puts all k contributions in one cell; a fraction
        # split: the cells' ρ over the worst split (sources.fraction_rho_factor)
        rho = exact_sums.up(exact_sums.claimed_sum(
            [(k, rho_of(m)) for m, k in _parts(what)]
            + [(k * k, rho_of(m)) for m, k, _ in _splits(what)]
            + [(fraction_rho_factor(m, k, c), rho_of(m)) for m, k, c in _fractions(what)]))
        # the Rényi curves (renyi.py): a k-fold shift of a cell is the curve at shift k;
        # a fraction split is α times its ρ
        from .renyi import ALPHAS, curve_of

        tau = np.zeros(ALPHAS.size)
        for m, k in _parts(what):
            tau += k * curve_of(m)
        for m, k, _ in _splits(what):
            tau += curve_of(m, shift=k)
        for m, k, c in _fractions(what):
            tau += _fraction_curve(m, k, c)
        return Charge(self.name, e, d, None, rho, (), tuple(tau.tolist()))

    def epsilon(self, state: State, delta: float) -> float:
        basic, rho = super().epsilon(state, delta), state.reported()[2]
        if delta <= 0:
            return basic if rho > 0 else min(basic, 0.0)
        best = min(basic, epsilon_from_rho(rho, delta))
        if state.rdp is not None:
            from .renyi import epsilon_from_curve

            best = min(best, epsilon_from_curve(np.array(state.rdp), delta))
        return best

    def delta(self, state: State, epsilon: float) -> float:
        from .zcdp import delta_from_rho

        best = min(super().delta(state, epsilon), delta_from_rho(state.reported()[2], epsilon))
        if state.rdp is not None:
            from .renyi import delta_from_curve

            best = min(best, delta_from_curve(np.array(state.rdp), epsilon))
        return best

    def fits(self, state: State, budget: AccountingBudget) -> bool:
        if budget.rho is not None:
            return state.reported()[2] <= budget.rho
        return super().fits(state, budget)


ACCOUNTANTS: dict[str, Callable[[], Accountant]] = {
    "basic": BasicAccountant, "pld": PLDAccountant, "zcdp": ZCDPAccountant}


def get_accountant(name: str | Accountant) -> Accountant:
    """The accountant called ``name`` ("basic", "pld" or "zcdp")."""
    if isinstance(name, Accountant):
        return name
    if name not in ACCOUNTANTS:
        raise ParameterError(f"accountant must be one of {sorted(ACCOUNTANTS)}, got {name!r}")
    return ACCOUNTANTS[name]()


# --------------------------------------------------------------------------- planning
def largest_share(accountant: str | Accountant, budget: AccountingBudget,
                  mechanism_family: Callable[[float], Any], n_releases: int, *,
                  bounds: tuple[float, float], noisier: str = "increasing",
                  state: State | None = None, rel_tol: float = 1e-3,
                  ) -> tuple[float, Any]:
    """The least noise parameter p in ``bounds`` such that ``n_releases`` releases of
    ``mechanism_family(p)``, after ``state``, fit ``budget`` (bisection; p is rounded toward
    more noise, so the answer always fits).

    ``noisier="increasing"`` if a larger p means more noise (a scale, σ), "decreasing" if a
    smaller p does (an ε).  Returns (p, mechanism_family(p)).  Raises ParameterError if even
    the noisiest end of ``bounds`` does not fit.  This is what ``Session.plan(reserve_for=N)``
    will call.
    """
    acc = get_accountant(accountant)
    start = state if state is not None else acc.empty()
    lo, hi = float(bounds[0]), float(bounds[1])
    up = noisier == "increasing"
    if noisier not in ("increasing", "decreasing"):
        raise ParameterError("noisier must be 'increasing' or 'decreasing'")

    def ok(p: float) -> bool:
        charge = acc.charge_for(mechanism_family(p))
        return acc.fits(acc.compose_many(start, charge, n_releases), budget)

    safe, risky = (hi, lo) if up else (lo, hi)
    if not ok(safe):
        raise ParameterError(f"{n_releases} releases do not fit the budget even at {safe!r}")
    if ok(risky):
        return risky, mechanism_family(risky)
    while abs(safe - risky) > rel_tol * abs(safe):
        mid = math.sqrt(safe * risky) if safe > 0 and risky > 0 else (safe + risky) / 2
        if ok(mid):
            safe = mid
        else:
            risky = mid
    return safe, mechanism_family(safe)


def compose_all(accountant: str | Accountant, releases: Sequence[Any]) -> State:
    """Compose ``releases`` (mechanisms or specs) one by one from the empty state."""
    acc = get_accountant(accountant)
    state = acc.empty()
    for r in releases:
        state = acc.compose(state, acc.charge_for(r))
    return state
