"""Preparing, replaying and executing one release -- the steps of :class:`~dpnoise.session.
session.Session` that follow the calibration.

:func:`prepare_release` (steps 2-3, public facts only: the plans, the charge, the replay key
and the ledger reservation's fields), :func:`replayed_release` (an identical recorded
release served at no cost) and :func:`execute_release` (steps 5-6 once the charge is
reserved: aggregate, noise, record, write).  A workload runs the same three functions for
each of its queries after reserving them all at once.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from ..errors import DpnoiseError, ParameterError
from ..ledger import encode_record
from ..params import reserve_output
from .answers import (
    column_range,
    combine_answer,
    components_of,
    composed_guarantee,
    entry_interval,
    entry_interval_at,
    interval_function,
    public_cells,
    recorded_components,
)
from .calibration import calibrate, count_cells
from .declared import declared_rules
from .opening import check_output, data_engine
from .other_row import other_details, select_with_other
from .planning import mechanism_name, release_spec, snap_to_remaining
from .quantile_query import with_levels
from .query import Query
from .rank_bar import wants_rank_bar
from .release import PendingRelease, Release, write_on_executors
from .schema import Schema
from .table import duckdb_error, write_table


class ReleaseHost(Protocol):
    """What the release steps need of a session: its public facts, its data and its ledger
    (:class:`~dpnoise.session.session.Session` is one)."""

    schema: Schema
    engine: Any
    ledger: Any

    def row_bound(self) -> int | None: ...


def release_key(*parts: Any) -> str:
    """The replay key: SHA-256 of the parts' reprs, NUL-separated."""
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()


def prepare_release(session: ReleaseHost, q: Query, epsilon: float, delta: float,
                    mechanism: str | None, with_rows: bool, output: str | None,
                    confidence: float) -> PendingRelease:
    """Steps 2-3 of a release from public facts only: its plans, its charge, its
    replay key and the ledger reservation's fields.  Nothing is read or spent."""
    data_engine(session.engine)  # refuses a planning-only session
    executors = check_output(session.engine, q, output)
    basic = session.ledger.accountant == "basic"
    asked = (epsilon, delta)
    epsilon, delta = snap_to_remaining(session.ledger, epsilon, delta)
    plans = calibrate(session.schema, q, epsilon, delta, mechanism,
                      rows=session.row_bound() if with_rows else None,
                      accountant=session.ledger.accountant)
    # pld / zcdp: the release's charge (its PLD or rho), computed from public facts
    # before anything is spent (a law the accountant refuses raises here)
    charge = None if basic else session.ledger.charge_for(
        release_spec(plans, count_cells(session.schema, q), q.canonical()))
    # charge what was asked, or the plans' sum if rounding made that larger
    eps = max(float(epsilon), float(sum(p.epsilon for _, p in plans)))
    dl = max(float(delta), float(sum(p.delta for _, p in plans)))
    mech_name = mechanism_name(plans)
    canonical = q.canonical()
    key_eps, key_dl, key_mech = eps, dl, mech_name
    if (epsilon, delta) != asked:  # snapped to the remainder: keyed as asked, so that the
        # same request replays it later (when nothing remains, nothing is snapped)
        asked_plans = calibrate(session.schema, q, *asked, mechanism,
                                rows=session.row_bound() if with_rows else None,
                                accountant=session.ledger.accountant)
        key_eps = max(float(asked[0]), float(sum(p.epsilon for _, p in asked_plans)))
        key_dl = max(float(asked[1]), float(sum(p.delta for _, p in asked_plans)))
        key_mech = mechanism_name(asked_plans)
    key_parts = (session.schema.fingerprint(), key_mech, float(key_eps).hex(),
                 float(key_dl).hex(), session.row_bound() if with_rows else None)
    key = release_key(canonical, session.engine.fingerprint, *key_parts)
    legacy = getattr(session.engine, "legacy_fingerprint", None)  # recorded with the size
    legacy_key = None if legacy is None else release_key(canonical, legacy, *key_parts)
    private = any(session.schema.column(g).private_keys for g in q.group_by)
    if not private:  # public cells: an output the allocator refuses is refused unspent
        reserve_output(count_cells(session.schema, q))
    group_keys: tuple[Any, ...] = () if private else tuple(
        session.schema.column(g).keys() for g in q.group_by)
    guarantee = composed_guarantee(plans, eps, dl, session.schema.user_id is not None)
    reservation = dict(
        epsilon=eps, delta=dl, query=str(q.text), canonical=canonical, query_key=key,
        dataset=session.engine.fingerprint, mechanism=mech_name,
        parameters={"plans": {role: p.parameters() for role, p in plans},
                    "schema": session.schema.fingerprint(),
                    "declared": declared_rules(session.schema, q),
                    "interval": interval_recipe(q, plans, confidence,
                                                column_range(session.schema, q)),
                    "cells": public_cells(*with_levels(q, q.group_by, group_keys))},
        guarantee={"epsilon": eps, "delta": dl, "text": guarantee,
                   "cells": {role: p.guarantee.as_dict() for role, p in plans}},
        accounting=charge)
    return PendingRelease(q, plans, eps, dl, mech_name, key, private, group_keys,
                          guarantee, executors, output, confidence, reservation, legacy_key)


def bar_of(q: Query) -> str:
    """A release's error-bar kind: ``rank`` for a quantile ``with rank bar``, else
    ``level`` (the field is read for quantiles only)."""
    return "rank" if wants_rank_bar(q) else "level"


def interval_recipe(q: Query, plans: list[tuple[str, Any]], confidence: float,
                    col_range: Any) -> dict[str, Any]:
    """What the ledger records of a release's error bars (public): the method, the kind
    (``value``, ``level`` or ``rank``) and, for a rank bar, its bound at the release's
    confidence (``rank_error`` rows + ``level_slack``·n, per level)."""
    kind = ("rank" if wants_rank_bar(q) else "level") if q.stat == "quantile" else "value"
    out: dict[str, Any] = {"confidence": confidence, "kind": kind, "stat": q.stat,
                           "method": "test inversion per component, union bound",
                           "range": col_range}
    if kind == "rank":
        fixed, slope = dict(plans)["rank"].rank_bar(1 - confidence)
        out["method"] = "the exponential mechanism's public rank bound (no count)"
        out["rank_bound"] = {"rank_error": np.atleast_1d(fixed).tolist(),
                             "level_slack": np.atleast_1d(slope).tolist(),
                             "reads": "rank within rank_error + level_slack*n rows of q*n"}
    return out


def replayed_release(session: ReleaseHost, p: PendingRelease) -> Release | None:
    """An identical earlier release served from the ledger at no cost, else None."""
    hit = session.ledger.find(p.key)
    if hit is None and p.legacy_key is not None:  # recorded before the size was dropped
        hit = session.ledger.find(p.legacy_key)
    if hit is None or hit.answer is None:
        return None
    group_keys = p.group_keys
    if p.private:  # the groups DP selection released, as recorded (text keys)
        if hit.released_keys is None or not hit.released_keys:
            return None  # recorded without its keys: it cannot be served again
        group_keys = (tuple(hit.released_keys[0]),)
    # error bars from the recorded answer and components, when recorded
    replayed_iv: Any = None
    try:
        entry_interval(hit, p.confidence)
        replayed_iv = functools.partial(entry_interval_at, hit)
    except (ParameterError, KeyError, TypeError, ValueError):
        pass
    q = p.q
    details = other_details(p.plans, dict(hit.components or {}), p.confidence)
    return Release(str(q.text), q.canonical(), q.stat,
                   *with_levels(q, q.group_by, group_keys), hit.answer, p.mech_name,
                   hit.epsilon, hit.delta, p.guarantee, hit.id, replayed=True, ledger_head=hit.head,
                   details=details, confidence=p.confidence, _intervals=replayed_iv,
                   declared=declared_rules(session.schema, q), bar=bar_of(q))

def execute_release(session: ReleaseHost, p: PendingRelease, rid: int, rng: Any) -> Release:
    """Steps 5-6 of a release whose charge ``rid`` is reserved: aggregate, noise,
    record, write ``output``.  A failure aborts the reservation (the charge stays)
    and raises a fixed, data-free message."""
    q, plans, output, executors = p.q, p.plans, p.output, p.executors
    group_keys = p.group_keys
    try:
        if executors:  # the noise key now; the executors draw after complete
            driver_key = np.asarray(rng.words(4), dtype=np.uint64).tobytes()
            answer = np.zeros(0)
        else:
            agg = session.engine.aggregate(q)
            truth = components_of(q, agg)
            pl = dict(plans)
            released: dict[str, Any] = {}
            if getattr(pl.get("selection"), "on_count", False):  # thresholded on the count
                keep, truth, released = select_with_other(plans, truth, rng)
                group_keys = (tuple(agg.labels[keep].tolist()),)  # type: ignore[index]
            elif "selection" in pl:
                keep = pl["selection"].release(agg.persons, rng)
                truth = {r: np.asarray(v)[keep] for r, v in truth.items()}
                group_keys = (tuple(agg.labels[keep].tolist()),)  # type: ignore[index]
                if q.stat == "quantile":
                    agg = replace(agg, buckets=agg.buckets[keep])  # type: ignore[index]
            if q.stat == "quantile":
                truth["rank"] = agg.buckets  # rows per (cell, lattice index)
            noisy = {role: released[role] if role in released else
                     c.release(truth[role], rng) for role, c in plans if role != "selection"}
            answer = combine_answer(q, session.schema, noisy)
    except BaseException as exc:
        raise failure_after_reserve(session.ledger, rid, exc) from None
    group_by, group_keys = with_levels(q, q.group_by, group_keys)
    preview = f"written to {output}" if executors else \
        np.array2string(answer.ravel()[:8], precision=6, separator=", ")
    if executors:
        record = encode_record(None, None, 0, note="components not recorded: noised and "
                               "written by the Spark executors")
    else:
        record = encode_record(recorded_components(q, plans, noisy),
                               group_keys if p.private else None, int(answer.size))
    head = session.ledger.complete(rid, answer, preview, record=record)
    if executors:  # only now, with the complete event in the ledger file
        written = write_on_executors(session.engine, rid, q, plans, output,  # type: ignore[arg-type]
                                             driver_key, p.confidence)
    details: dict[str, Any] = {role: c.parameters() for role, c in plans}
    if getattr(session.engine, "noise_site", None) is not None:  # Spark: where noised
        details["noise"] = "executors" if executors else "driver"
    intervals = None
    if executors:
        details["written"] = written
    else:
        intervals = interval_function(q.stat, column_range(session.schema, q), plans,
                                       noisy, answer.shape)
        if (sel := dict(plans).get("selection")) is not None:
            details.update(other_details(plans, noisy, p.confidence))  # if asked
            details["selection"] = {"threshold": sel.threshold, "delta_exact": sel.delta_exact,
                                    "on": "count" if getattr(sel, "on_count", 0) else "persons",
                                    "suppressed_bound": sel.suppressed_bound(1 - p.confidence)}
    release = Release(str(q.text), q.canonical(), q.stat, group_by, group_keys, answer,
                      p.mech_name, p.eps, p.dl, p.guarantee, rid, details=details,
                      ledger_head=head, confidence=p.confidence, _intervals=intervals,
                      declared=declared_rules(session.schema, q), bar=bar_of(q))
    if output is not None and not executors:
        try:
            write_table(release, str(output))
        except (OSError, duckdb_error()) as exc:
            raise DpnoiseError(
                f"release {rid} is recorded in the ledger (replay it at no cost with "
                f"replay=True / --replay) but output {str(output)!r} could not be "
                f"written: {getattr(exc, 'strerror', None) or type(exc).__name__}"
            ) from None
        release.details["output"] = str(output)
    return release


def failure_after_reserve(ledger: Any, rid: int, exc: BaseException,
                          what: str = "release") -> BaseException:
    """Abort reservation ``rid`` after ``exc`` and return what to raise: for an error, a
    :class:`DpnoiseError` with the fixed reason ``release_failed`` and a fixed message (the
    exception's text could depend on the data, so it is neither stored nor shown nor
    chained); for an interruption (KeyboardInterrupt, SystemExit), ``exc`` itself after the
    reason ``interrupted``.  The charge is kept either way."""
    if not isinstance(exc, Exception):
        ledger.abort(rid, "interrupted")
        return exc
    ledger.abort(rid, "release_failed")
    return DpnoiseError(
        f"{what} failed after its budget was reserved (ledger row {rid}, reason "
        "release_failed); the charge is kept and the cause is withheld because it "
        "could depend on the data")
