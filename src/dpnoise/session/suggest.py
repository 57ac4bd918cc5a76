"""Suggested bounds: a DP range holding most of a column, charged to the ledger like any
release, printed as a schema snippet that names the ledger event it came from.

A schema's bounds must be public facts; when none are known, a custodian can spend a little
budget to learn them privately instead of reading them off the data.  The release is the
registry mechanism ``private-bounds`` (:class:`~dpnoise.mechanisms.private_bounds.
PrivateBounds`): two quantiles, at levels ``q_lo`` and ``q_hi``, each by report noisy max
with exact geometric noise at ε/2 over the public grid ``0, ±2^k`` (``k`` from
``min_exponent`` to ``max_exponent``).  The grid does not depend on any declared bound, so
a column declared with placeholder bounds (or not declared at all, on the command line) can
be measured.

Sensitivity.  One person keeps at most ``k`` rows (the schema's ``max_contributions``; the
rows kept are chosen by a fixed order on the person's own values, as for every
statistic), so each quantile's utility ``−max(0, D·A_j − Q·n, Q·n − D·B_j)`` moves by at
most ``k·max(Q, D − Q)`` (``A_j``, ``B_j``, ``n`` each move by at most ``k``); the two
releases compose to ε (pure ε-DP; Dwork and Roth, *The Algorithmic Foundations of
Differential Privacy*, 2014, Thm. 3.16).  The ledger charges the mechanism's own privacy
profile under its accountant.

Accuracy (from the released levels and public parameters only).  With probability at least
``1 − β``, at most ``2·q_lo·n + R_1`` rows lie below ``low`` and at most
``2·(1 − q_hi)·n + R_2`` above ``high``, ``R_i`` from the noise's tail and the grid's public
preference for small magnitudes
(:meth:`~dpnoise.mechanisms.private_bounds.PrivateBounds.clamped_rows_bound`, with the
proof) -- a statement about what a schema with these bounds would clamp that reads nothing
of the data (values beyond ``±2^max_exponent`` count at the grid's ends).

The custodian rule holds: which code path runs and every error depend on the column's
declaration, the engine and the public parameters only; after the reservation a failure
aborts it with the fixed reason ``release_failed`` and a fixed message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..params import check_epsilon
from .columns import MAX_BOUND, Column, quote_identifier
from .execution import failure_after_reserve, release_key
from .opening import data_engine
from .planning import snap_to_remaining
from .schema import Schema

#: the ledger's mechanism name and the parameters' key of a suggested-bounds release
MECHANISM = "private-bounds"
#: default grid exponents: candidates 0, ±2^-10 .. ±2^62
MIN_EXPONENT, MAX_EXPONENT = -10, 62


@dataclass(frozen=True)
class SuggestedBounds:
    """A released range ``[low, high]`` for ``column`` and where it is recorded.

    ``str()`` is a schema snippet (TOML) ready to paste; ``clamp_bound_rows`` states, from
    the released levels and the error bound only, how many rows a schema with these bounds
    would clamp at most (with probability ``confidence``): ``fraction·n + rows``.
    """

    column: str
    low: float
    high: float
    epsilon: float
    levels: tuple[float, float]
    integer: bool
    ledger_id: int
    ledger_head: str | None
    ledger_path: str | None
    confidence: float
    clamp_bound_rows: tuple[float, float]
    replayed: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def lower(self) -> float:
        """The snippet's lower bound (``low``; floored for an integer column)."""
        return float(math.floor(self.low)) if self.integer else self.low

    @property
    def upper(self) -> float:
        """The snippet's upper bound: ``high`` (ceiled for an integer column), or the next
        grid point above ``low`` when both released quantiles are the same point (a schema
        needs ``lower < upper``; post-processing of the released values only)."""
        hi = float(math.ceil(self.high)) if self.integer else self.high
        if hi > self.lower:
            return hi
        from ..mechanisms.private_bounds import candidates

        above = candidates(MIN_EXPONENT, MAX_EXPONENT)
        above = above[above > self.lower]
        nxt = float(above[0]) if above.size else self.lower + 1.0
        return float(math.ceil(nxt)) if self.integer else nxt

    def clamp_statement(self) -> str:
        """The clamped-rows statement, from the released levels and the error bound."""
        frac, rows = self.clamp_bound_rows
        return (f"with probability >= {self.confidence:g}, at most {frac:.4g} of the rows "
                f"plus {rows:.0f} rows (of those kept per person) lie outside "
                f"[{_num(self.lower)}, {_num(self.upper)}]")

    def snippet(self) -> str:
        """The TOML snippet for the schema file, naming the ledger event."""
        where = f"ledger {self.ledger_path} release {self.ledger_id}" if self.ledger_path \
            else f"an in-memory ledger (release {self.ledger_id}, not recorded)"
        lines = [f"[columns.{self.column}]   # suggested by DP bounds at epsilon="
                 f"{self.epsilon:g}: {where}",
                 f"lower = {_num(self.lower)}",
                 f"upper = {_num(self.upper)}"]
        if self.integer:
            lines.append("integer = true")
        lines.append(f"# {self.clamp_statement()}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {"column": self.column, "lower": self.lower, "upper": self.upper,
                "released": [self.low, self.high], "epsilon": self.epsilon,
                "levels": list(self.levels), "integer": self.integer,
                "ledger_id": self.ledger_id, "ledger_head": self.ledger_head,
                "ledger": self.ledger_path, "replayed": self.replayed,
                "confidence": self.confidence,
                "clamped_at_most": {"fraction": self.clamp_bound_rows[0],
                                    "plus_rows": self.clamp_bound_rows[1]},
                "snippet": self.snippet()}

    def __str__(self) -> str:
        return self.snippet()


def _num(x: float) -> str:
    """A TOML number: an integer-valued double without the ``.0``, else its repr."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


def placeholder_schema(schema: Schema, column: str) -> Schema:
    """``schema`` with ``column`` declared numeric with the widest bounds when it is not
    declared: the typed view then holds its numbers unclamped (the grid of the suggested
    bounds does not read declared bounds)."""
    if column in schema.columns:
        return schema
    cols = dict(schema.columns)
    cols[column] = Column(column, lower=-MAX_BOUND, upper=MAX_BOUND)
    return Schema(columns=cols, user_id=schema.user_id,
                  max_contributions=schema.max_contributions, max_rows=schema.max_rows,
                  table=schema.table, max_groups=schema.max_groups,
                  max_rows_per_group=schema.max_rows_per_group)


def bounds_mechanism(schema: Schema, column: str, epsilon: float, levels: tuple[float, float]
                     ) -> Any:
    """The calibrated mechanism for ``column`` (checks everything public first)."""
    from ..mechanisms.private_bounds import PrivateBounds

    if not isinstance(column, str) or column not in schema.columns:
        raise ParameterError(f"column {column!r} is not declared in the schema (declared: "
                             f"{', '.join(sorted(schema.columns)) or 'none'})")
    col = schema.column(column)
    if not col.is_numeric:
        raise ParameterError(f"column {column!r} is {col.kind}: suggested bounds need a "
                             "numeric column")
    try:
        lo, hi = (float(v) for v in levels)
    except (TypeError, ValueError):
        lo = hi = math.nan
    if not 0 < lo < hi < 1:  # a level of 0 or 1 has every candidate beyond the data tied
        raise ParameterError(f"levels must be two numbers 0 < lower < upper < 1, got "
                             f"{levels!r}")
    return PrivateBounds(epsilon=check_epsilon(epsilon), lower_level=lo, upper_level=hi,
                         min_exponent=MIN_EXPONENT, max_exponent=MAX_EXPONENT,
                         contributions=schema.max_contributions)


def bounded_values(engine: Any, schema: Schema, column: str) -> Any:
    """The column's non-missing numbers with at most ``max_contributions`` rows per person
    (the first rows in a fixed order of the person's own values)."""
    from .source import UID, VIEW

    c = quote_identifier(column)
    if schema.user_id is None:
        sql = f"SELECT {c} AS x FROM {VIEW} WHERE {c} IS NOT NULL"
    else:
        sql = (f"SELECT x FROM (SELECT {c} AS x, row_number() OVER (PARTITION BY {UID} "
               f"ORDER BY sha256(CAST({c} AS VARCHAR)), {c}) AS rn FROM {VIEW} WHERE {c} "
               f"IS NOT NULL) WHERE rn <= {int(schema.max_contributions)}")
    return np.asarray(engine.fetchnumpy(sql)["x"], dtype=np.float64)


class BoundsSuggestion:
    """The :meth:`suggest_bounds` step of a :class:`~dpnoise.session.session.Session`."""

    schema: Schema
    engine: Any
    ledger: Any
    replay: bool

    def release_rng(self) -> Any: ...  # provided by Session

    def suggest_bounds(self, column: str, *, epsilon: float,
                       levels: tuple[float, float] = (0.01, 0.99), confidence: float = 0.95,
                       replay: bool | None = None) -> SuggestedBounds:
        """Release a DP range ``[low, high]`` holding most of ``column`` (see the module
        docstring), charged to the ledger; print it for a schema snippet.

        Parameters
        ----------
        column : str
            A declared numeric column (its declared bounds are not used).
        epsilon : float
            The ε spent (ε/2 per bound); pure ε-DP.
        levels : tuple of float, default (0.01, 0.99)
            The quantile levels of the two bounds, ``0 < lower < upper < 1``.
        confidence : float, default 0.95
            The confidence of the clamped-rows statement.
        replay : bool or None, default None
            Serve an identical recorded suggestion at no cost (None: the session's setting).

        Returns
        -------
        SuggestedBounds
            The released range, the schema snippet and the ledger event.

        Raises
        ------
        ParameterError
            If the column is not a declared numeric column, a parameter is out of range or
            the engine is Spark (before anything is spent).
        BudgetExceededError
            If ε does not fit the remaining budget (nothing is spent).
        """
        from ..laws.base import check_level
        from ..ledger import encode_record

        confidence = check_level(confidence)
        epsilon = asked = check_epsilon(epsilon)
        if self.ledger.accountant == "basic":  # the exact remainder, not one ulp over it
            epsilon, _ = snap_to_remaining(self.ledger, epsilon, 0.0)
        mech = bounds_mechanism(self.schema, column, epsilon, levels)
        data_engine(self.engine)  # refuses a planning-only session
        if getattr(self.engine, "name", None) != "duckdb":
            raise ParameterError("suggest_bounds runs on the embedded engine (duckdb); open "
                                 "the data with engine='duckdb'")
        params = {"column": column, "levels": [str(q) for q in mech.levels],
                  "min_exponent": MIN_EXPONENT, "max_exponent": MAX_EXPONENT,
                  "contributions": mech.contributions}
        canonical = f"suggest bounds {column} at {float(mech.levels[0]):g}, " \
                    f"{float(mech.levels[1]):g}"
        key = release_key(canonical, self.engine.fingerprint, self.schema.fingerprint(),
                          MECHANISM, float(mech.epsilon if epsilon == asked else asked).hex(),
                          sorted(params.items()))  # keyed as asked: replayable once spent
        clamp = mech.clamped_rows_bound(1 - confidence)
        made = dict(column=column, epsilon=mech.epsilon,
                    levels=tuple(float(q) for q in mech.levels),
                    integer=self.schema.column(column).integer,
                    ledger_path=str(self.ledger.path) if self.ledger.durable else None,
                    confidence=confidence, clamp_bound_rows=clamp)
        if self.replay if replay is None else bool(replay):
            hit = self.ledger.find(key)
            if hit is not None and hit.answer is not None:
                low, high = (float(v) for v in np.asarray(hit.answer).ravel()[:2])
                return SuggestedBounds(low=low, high=high, ledger_id=hit.id,
                                       ledger_head=hit.head, replayed=True, **made)
        charge = None if self.ledger.accountant == "basic" else self.ledger.charge_for(mech)
        rng = self.release_rng()
        rid = self.ledger.reserve(
            epsilon=mech.epsilon, delta=0.0, query=canonical, canonical=canonical,
            query_key=key, dataset=self.engine.fingerprint, mechanism=MECHANISM,
            parameters={MECHANISM: params, "schema": self.schema.fingerprint()},
            guarantee={"epsilon": mech.epsilon, "delta": 0.0,
                       "text": f"pure epsilon={mech.epsilon:g}-DP (two report-noisy-max "
                               "quantiles on the public sign x 2^k grid)"},
            accounting=charge)
        try:
            low, high = mech.release(bounded_values(self.engine, self.schema, column), rng=rng)
        except BaseException as exc:
            raise failure_after_reserve(self.ledger, rid, exc, "suggested bounds") from None
        answer = np.array([low, high])
        head = self.ledger.complete(rid, answer, f"[{low!r}, {high!r}]",
                                    record=encode_record({"bounds": answer}, None, 2))
        return SuggestedBounds(low=low, high=high, ledger_id=rid, ledger_head=head,
                               details={"parameters": params}, **made)
