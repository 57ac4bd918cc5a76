"""What a ledger has spent and what remains, under its accountant.

The header records the accountant (``"basic"``: the charges add up, as exact rationals;
``"pld"`` / ``"zcdp"``: each reserve event may carry the release's serialised charge and
the hash of the composed state after it).
"""


from __future__ import annotations

import math
import sqlite3
from fractions import Fraction
from typing import Any

from ..errors import ParameterError
from .budget import (
    Budget,
    float_down,
    float_up,
)
from .chain import (
    ChainError,
    ChainState,
    sha256_hex,
)
from .store import (
    v1_charged,
)


class LedgerAccounts:
    """Spent, remaining, the composed state and the charge of a release; mixed into
    :class:`~dpnoise.ledger.ledger.Ledger`."""

    def _spent_fractions(self) -> tuple[Fraction, Fraction]:
        if self._v1:
            with self._read("reading") as con:
                return v1_charged(con, self.path)
        st = self._refresh()
        return st.eps, st.delta

    def spent(self) -> Budget:
        """Total charged so far (reserved, released and aborted releases alike), under the
        ledger's accountant: ``basic``: the sums; ``pld``/``zcdp``: the composed epsilon at
        the total's delta and the composed delta at the total's epsilon (or the composed
        rho for a rho total).  :meth:`spent_basic` gives what basic composition charges.

        Returns
        -------
        Budget
            The charged total.
        """
        if self.accountant == "basic" or self._v1:
            eps, dl = self._spent_fractions()
            return Budget(float_up(eps), min(1.0, float_up(dl)))
        c = self._composed_summary()
        if self.budget.rho is not None:
            return Budget(rho=c["rho"])
        return Budget(c["epsilon"], min(1.0, c["delta"]), accountant=self.accountant)

    def spent_basic(self) -> Budget:
        """What basic sequential composition charges for the same releases (the sum of the
        rows' epsilon/delta columns), whatever the accountant.

        Returns
        -------
        Budget
            The sums.
        """
        eps, dl = self._spent_fractions()
        return Budget(float_up(eps), min(1.0, float_up(dl)))

    def remaining(self) -> Budget:
        """The total minus :meth:`spent` (rounded down).  Under ``pld``/``zcdp`` it is an
        indication, not additive: whether a release fits is decided by composing it
        (:meth:`reserve`, ``Session.plan``).

        Returns
        -------
        Budget
            What is left.
        """
        if self.accountant == "basic" or self._v1:
            eps, dl = self._spent_fractions()
            r_eps = Fraction(self.budget.epsilon) - eps  # type: ignore[arg-type]
            r_dl = Fraction(self.budget.delta) - dl
            # round DOWN so the reported remainder is never more than what is left
            return Budget(float_down(r_eps), float_down(r_dl))
        c = self._composed_summary()
        if self.budget.rho is not None:
            return Budget(rho=float_down(Fraction(self.budget.rho) - Fraction(c["rho"])))
        return Budget(float_down(Fraction(self.budget.epsilon) - Fraction(c["epsilon"]))
                      if math.isfinite(c["epsilon"]) else 0.0,
                      float_down(Fraction(self.budget.delta) - Fraction(min(1.0, c["delta"]))),
                      accountant=self.accountant)

    def _composed_summary(self) -> dict[str, float]:
        st = self._refresh()
        return st.composed if st.composed is not None else \
            {"epsilon": 0.0, "delta": 0.0, "rho": 0.0}

    # ------------------------------------------------------------ accounting
    def accountant_object(self) -> Any:
        """The :class:`dpnoise.accounting.Accountant` of this ledger.

        Returns
        -------
        Accountant
            The accountant that composes this ledger's charges.
        """
        from ..accounting import get_accountant

        if self._acc is None:
            self._acc = get_accountant(self.accountant)
        return self._acc

    def state(self) -> Any:
        """The composed :class:`dpnoise.accounting.State` of every release so far (for
        planning: ``accounting.largest_share(..., state=ledger.state())``).  Under
        ``basic`` a state holding the sums rounded up.

        Returns
        -------
        State
            The composed state.
        """
        from ..accounting import State

        if self.accountant == "basic" or self._v1:
            eps, dl = self._spent_fractions()
            n = len(self.entries()) if self._v1 else self._state.releases
            dl = min(Fraction(1), dl)
            return State("basic", n, float_up(eps), float_up(dl), sums=(eps, dl, Fraction(0)))
        st = self._refresh()
        with self._read("reading") as con:
            return self._composed_state(con, st)

    def charge_for(self, what: Any) -> Any:
        """The charge of a mechanism or :class:`~dpnoise.accounting.ReleaseSpec` under
        this ledger's accountant (raises ParameterError for a law the accountant refuses).

        Parameters
        ----------
        what : Mechanism or ReleaseSpec
            What a release samples.

        Returns
        -------
        object
            The charge the accountant composes (a privacy-loss distribution, a ρ, ...).
        """
        return self.accountant_object().charge_for(what)

    def _claimed_charge(self, epsilon: float, delta: float) -> Any:
        """A charge from a claimed (epsilon, delta) alone: the randomized-response pair
        (pld; dominates every (epsilon, delta)-DP release) or rho = epsilon^2/2 (zcdp,
        pure DP only)."""
        from ..mechanisms.base import Guarantee
        from ..profile import claimed_profile

        class Claimed:  # what the accountants read of a mechanism: its privacy profile
            guarantee = Guarantee(epsilon=epsilon, delta=delta)

            def privacy_profile(self) -> Any:
                return claimed_profile(epsilon, delta, note="a claimed (epsilon, delta)")

        return self.charge_for(Claimed())

    def _charge(self, accounting: Any, epsilon: float, delta: float) -> Any:
        from ..accounting import Charge

        if accounting is None:
            return self._claimed_charge(epsilon, delta)
        if isinstance(accounting, bytes):
            try:
                accounting = Charge.from_bytes(accounting)
            except (ParameterError, ValueError, KeyError) as exc:
                raise ParameterError(f"accounting is not a serialised charge: {exc}") from exc
        if not isinstance(accounting, Charge):
            raise ParameterError("accounting must be a dpnoise.accounting.Charge (or its bytes)")
        if accounting.accountant != self.accountant:
            raise ParameterError(f"a charge of accountant {accounting.accountant!r} given to a "
                                 f"{self.accountant!r} ledger")
        return accounting

    def _composed_state(self, con: sqlite3.Connection, st: ChainState) -> Any:
        """Inside a transaction: the composed state after the last reserve event -- this
        object's copy if its hash is the one the chain names, else the cached one (its
        SHA-256 must be the chain's), else (cache missing) rebuilt by composing the stored
        charges in order."""
        from ..accounting import Charge, State

        acc = self.accountant_object()
        if not st.state_seq:
            return acc.empty()
        if self._acc_state is not None and self._acc_state[0] == st.state_sha256:
            return self._acc_state[1]
        row = con.execute("SELECT seq, state FROM composed").fetchone()
        if row is not None:
            if row[0] != st.state_seq or not isinstance(row[1], bytes) or \
                    sha256_hex(row[1]) != st.state_sha256:
                raise ChainError(self.path, st.state_seq, "the cached composed state does "
                                 "not match the state hash of this reserve event")
            try:
                state = State.from_bytes(row[1])
            except (ParameterError, ValueError, KeyError) as exc:
                raise ChainError(self.path, st.state_seq, f"the cached composed state is "
                                 f"unreadable ({exc})") from exc
        else:
            state = acc.empty()
            for seq, blob in con.execute(
                    "SELECT e.seq, b.data FROM events e JOIN blobs b ON b.seq = e.seq AND "
                    "b.role = 'accounting' WHERE e.kind = 'reserve' AND e.seq <= ? "
                    "ORDER BY e.seq", (st.seq,)):
                try:
                    state = acc.compose(state, Charge.from_bytes(blob))
                except (ParameterError, ValueError, KeyError) as exc:
                    raise ChainError(self.path, seq, f"its accounting object is unreadable "
                                     f"({exc})") from exc
        if state.accountant != self.accountant or state.count != st.releases:
            raise ChainError(self.path, st.state_seq, "the composed state does not cover "
                             "the releases of the chain")
        self._acc_state = (st.state_sha256, state)
        return state

    def summary_of(self, state: Any) -> dict[str, float]:
        """The composed guarantee of ``state`` against this ledger's total.

        Parameters
        ----------
        state : State
            A composed state of this ledger's accountant.

        Returns
        -------
        dict of str to float
            ``epsilon`` (at the total's delta), ``delta`` (at the total's epsilon) and, for
            a rho total, ``rho``.
        """
        acc, total = self.accountant_object(), self.budget
        rho = float(state.reported()[2])  # never below the exact Σρ
        if total.rho is not None:
            return {"epsilon": math.inf, "delta": 1.0, "rho": rho}
        return {"epsilon": float(acc.epsilon(state, total.delta)) if total.delta > 0 else
                float(acc.epsilon(state, 0.0)),
                "delta": float(acc.delta(state, total.epsilon)), "rho": rho}

    def fits_total(self, c: dict[str, float]) -> bool:
        """Strict (no tolerance): the composed guarantee within the total.

        Parameters
        ----------
        c : dict of str to float
            A summary from :meth:`summary_of`.

        Returns
        -------
        bool
            True if it is within the ledger's total.
        """
        total = self.budget
        if total.rho is not None:
            return c["rho"] <= total.rho
        return c["delta"] <= total.delta or c["epsilon"] <= total.epsilon  # type: ignore[operator]

    def history_composed(self) -> list[dict[str, Any]]:
        """Per release, in order: the composed guarantee after it under the ledger's
        accountant and what basic composition would have charged by then (for plots).

        Returns
        -------
        list of dict
            Per release: the composed ε and δ and the basic sums.
        """
        return [{"id": e.id, "status": e.status, "epsilon": e.epsilon, "delta": e.delta,
                 "composed_epsilon": e.composed_epsilon, "composed_delta": e.composed_delta,
                 "composed_rho": e.composed_rho, "basic_epsilon": e.basic_epsilon,
                 "basic_delta": e.basic_delta} for e in self.entries()]
