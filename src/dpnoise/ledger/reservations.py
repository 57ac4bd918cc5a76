"""Reserving budget: one release (:meth:`~LedgerReservations.reserve`) or several at once,
all or nothing (:meth:`~LedgerReservations.reserve_all`), each a durable ``reserve`` event
written before any noise is drawn.
"""


from __future__ import annotations

import os
from fractions import Fraction
from typing import Any

from ..errors import BudgetExceededError, LedgerError, ParameterError
from ..params import check_delta, check_finite
from .budget import (
    Budget,
    float_down,
    float_up,
    format_composed,
)
from .chain import (
    basic_state,
    verify_rows,
)
from .records import (
    timestamp,
)
from .store import (
    append_event,
    fingerprint,
)


class LedgerReservations:
    """Reservations under the accountant; mixed into :class:`~dpnoise.ledger.ledger.Ledger`."""

    def reserve(self, *, epsilon: float, delta: float, query: str, canonical: str,
                query_key: str, dataset: str, mechanism: str, parameters: dict[str, Any],
                guarantee: dict[str, Any], accounting: Any = None) -> int:
        """Charge a release durably before any noise is drawn; returns the release number.

        ``epsilon``/``delta``: the release's own calibrated guarantee (the row's columns).
        ``accounting``: under ``basic`` optional bytes stored with their SHA-256; under
        ``pld``/``zcdp`` the release's :class:`~dpnoise.accounting.Charge` (or its bytes;
        ``None``: a charge from the claimed (epsilon, delta) alone).  The composed state
        after it is computed INSIDE the transaction from the cached state, and the release
        is refused (BudgetExceededError, nothing written) if it would exceed the total.

        Parameters
        ----------
        epsilon, delta : float
            The release's own calibrated guarantee.
        query : str
            The query as asked.
        canonical : str
            Its canonical form.
        query_key : str
            The key for replay (query and data set).
        dataset : str
            The data set's fingerprint.
        mechanism : str
            The mechanism of each component.
        parameters : dict
            The public parameters (statistic, bounds, grid, ...).
        guarantee : dict
            The guarantee as a dict.
        accounting : object, default None
            The release's charge under the ledger's accountant.

        Returns
        -------
        int
            The release number.

        Raises
        ------
        BudgetExceededError
            If the release does not fit the remaining budget (nothing is written).
        LedgerError
            If the file changed under this object or its chain is broken.
        """
        epsilon = check_finite("epsilon", epsilon)
        delta = check_delta(delta, allow_zero=True)
        if epsilon <= 0:
            raise ParameterError(f"epsilon must be > 0, got {epsilon!r}")
        if self.accountant == "basic":
            if accounting is not None and not isinstance(accounting, bytes):
                accounting = accounting.to_bytes() if hasattr(accounting, "to_bytes") else \
                    accounting
                if not isinstance(accounting, bytes):
                    raise ParameterError("accounting must be bytes (a serialised accounting "
                                         "object)")
            return self._reserve_basic(epsilon, delta, accounting, query=query,
                                       canonical=canonical, query_key=query_key,
                                       dataset=dataset, mechanism=mechanism,
                                       parameters=parameters, guarantee=guarantee)
        if self.read_only:
            raise LedgerError(self.read_only_message())
        charge = self._charge(accounting, epsilon, delta)  # before the lock: public work
        charge_bytes = charge.to_bytes()
        acc, total = self.accountant_object(), self.budget
        with self._write("reservation") as con:
            st = self._sync_for_reservation(con)
            state = self._composed_state(con, st)
            new = acc.compose(state, charge)
            c = self.summary_of(new)
            if not self.fits_total(c):
                before = self.summary_of(state)
                raise BudgetExceededError(
                    f"release refused, nothing spent: under the {self.accountant} accountant "
                    f"it would bring the composed guarantee to {format_composed(c, total)}, "
                    f"over the total {total} (spent so far: {format_composed(before, total)})")
            rel = st.releases + 1
            body = {"query": query, "canonical": canonical, "dataset": dataset,
                    "mechanism": mechanism, "parameters": parameters, "guarantee": guarantee,
                    "pid": os.getpid(), "composed": c, "accountant": self.accountant,
                    "notes": list(charge.notes)}
            new_bytes = new.to_bytes()
            row = append_event(con, st, kind="reserve", at=timestamp(), release=rel,
                               query_key=query_key, epsilon=epsilon, delta=delta, body=body,
                               accounting=charge_bytes, composed=new_bytes)
            st = verify_rows(st, [row])
            fp = fingerprint(con, st.seq)
        self._acc_state = (st.state_sha256, new)
        self._after_write(st, fp)
        return rel

    def _reserve_basic(self, epsilon: float, delta: float, accounting: bytes | None,
                       **fields: Any) -> int:
        total = self.budget
        with self._write("reservation") as con:
            st = self._sync_for_reservation(con)
            new_eps, new_dl = st.eps + Fraction(epsilon), st.delta + Fraction(delta)
            if new_eps > Fraction(total.epsilon) or new_dl > Fraction(total.delta):  # type: ignore[arg-type]
                left = Budget(float_down(Fraction(total.epsilon) - st.eps),  # type: ignore[arg-type]
                              float_down(Fraction(total.delta) - st.delta))
                raise BudgetExceededError(
                    f"release refused, nothing spent: it needs epsilon={epsilon:g}"
                    + (f", delta={delta:g}" if delta else "")
                    + " but only "
                    + (f"epsilon={left.epsilon:.6g}, delta={left.delta:.3g}" if delta
                       else str(left))
                    + f" of the total {total} remains"
                )
            rel = st.releases + 1
            body = {k: fields[k] for k in ("query", "canonical", "dataset", "mechanism",
                                           "parameters", "guarantee")}
            body["pid"] = os.getpid()
            row = append_event(con, st, kind="reserve", at=timestamp(), release=rel,
                               query_key=fields["query_key"], epsilon=epsilon, delta=delta,
                               body=body, accounting=accounting,
                               composed=basic_state(new_eps, new_dl, rel))
            st = verify_rows(st, [row])
            fp = fingerprint(con, st.seq)
        self._after_write(st, fp)
        return rel

    def reserve_all(self, requests: list[dict[str, Any]]) -> list[int]:
        """Charge several releases in ONE transaction, all or nothing (a workload):
        each request holds :meth:`reserve`'s keyword arguments; one reserve event per
        request is appended, in order, and the whole set is refused (BudgetExceededError,
        nothing written) unless the total after all of them fits -- summed under
        ``basic``, composed under ``pld``/``zcdp``.  Returns the release numbers.

        Parameters
        ----------
        requests : list of dict
            One dict of :meth:`reserve`'s keyword arguments per release.

        Returns
        -------
        list of int
            The release numbers, in order.

        Raises
        ------
        BudgetExceededError
            If the releases do not fit together (nothing is written).
        """
        if self.read_only:
            raise LedgerError(self.read_only_message())
        basic = self.accountant == "basic"
        reqs = []
        for r in requests:  # checks and charges before the lock: public work
            eps = check_finite("epsilon", r["epsilon"])
            if eps <= 0:
                raise ParameterError(f"epsilon must be > 0, got {eps!r}")
            dl = check_delta(r["delta"], allow_zero=True)
            acc = r.get("accounting")
            charge = (acc if acc is None or isinstance(acc, bytes) else acc.to_bytes()) \
                if basic else self._charge(acc, eps, dl)
            reqs.append((eps, dl, charge, r))
        total, acc_obj = self.budget, None if basic else self.accountant_object()
        with self._write("reservation") as con:
            st = self._sync_for_reservation(con)  # an anchored ledger: only with it
            if basic:
                new_eps = st.eps + sum((Fraction(e) for e, *_ in reqs), Fraction(0))
                new_dl = st.delta + sum((Fraction(d) for _, d, *_ in reqs), Fraction(0))
                if new_eps > Fraction(total.epsilon) or new_dl > Fraction(total.delta):  # type: ignore[arg-type]
                    raise BudgetExceededError(
                        f"workload refused, nothing spent: its {len(reqs)} releases need "
                        f"epsilon={float_up(new_eps - st.eps):g}, delta="
                        f"{float_up(new_dl - st.delta):g} but only "
                        f"epsilon={float_down(Fraction(total.epsilon) - st.eps):.6g}, "  # type: ignore[arg-type]
                        f"delta={float_down(Fraction(total.delta) - st.delta):.3g} of "
                        f"the total {total} remains")
            else:
                state = self._composed_state(con, st)
                states = []
                for *_, charge, _r in reqs:
                    state = acc_obj.compose(state, charge)
                    states.append(state)
                c = self.summary_of(state)
                if not self.fits_total(c):
                    raise BudgetExceededError(
                        f"workload refused, nothing spent: under the {self.accountant} "
                        f"accountant its {len(reqs)} releases would bring the composed "
                        f"guarantee to {format_composed(c, total)}, over the total {total}")
            rids = []
            for i, (eps, dl, charge, r) in enumerate(reqs):
                rel = st.releases + 1
                body = {k: r[k] for k in ("query", "canonical", "dataset", "mechanism",
                                          "parameters", "guarantee")}
                body["pid"] = os.getpid()
                if basic:
                    st_eps = st.eps + Fraction(eps)
                    composed = basic_state(st_eps, st.delta + Fraction(dl), rel)
                    acc_bytes = charge
                else:
                    body.update(composed=self.summary_of(states[i]), accountant=self.accountant,
                                notes=list(charge.notes))
                    composed, acc_bytes = states[i].to_bytes(), charge.to_bytes()
                row = append_event(con, st, kind="reserve", at=timestamp(), release=rel,
                                   query_key=r["query_key"], epsilon=eps, delta=dl, body=body,
                                   accounting=acc_bytes, composed=composed)
                st = verify_rows(st, [row])
                rids.append(rel)
            fp = fingerprint(con, st.seq)
        if not basic and states:
            self._acc_state = (st.state_sha256, states[-1])
        self._after_write(st, fp)
        return rids
