"""``dpnoise.Session``: answer queries on a data set within a durable privacy budget.

    >>> s = Session(data="people.csv", schema="people.toml",
    ...             budget=Budget(epsilon=1.0), ledger="people.ledger")   # doctest: +SKIP
    >>> s.release("count where age > 30", epsilon=0.1)                    # doctest: +SKIP

The rule: **the only data-dependent thing a release emits is its noisy answer**.  Which
code path runs, whether an error is raised, and every message depend only on the query,
the schema and public parameters.  The data was read once, when the session opened, into
the typed view of :mod:`dpnoise.session.source`.

What one release does, in this order (steps 1-4 depend on no data; nothing is spent
before 4; after 4 the charge is kept whatever happens):

1. parse and type-check the query against the schema (unknown / unbounded columns,
   literals of the wrong type, non-aggregate SQL, unsupported aggregates are refused);
2. calibrate the mechanism(s) for the statistic's sensitivity and valid range
   (:mod:`dpnoise.session.adapter`);
3. (opt-in replay) serve an identical earlier release from the ledger at no cost;
4. reserve (epsilon, delta) in the ledger -- a durable transaction, refused if over budget;
5. compute the true aggregates on the typed view (:mod:`dpnoise.session.engine`: exact
   fixed-point sums), draw the noise (vectorised over all cells) and post-process into
   the valid range; a failure here aborts the reservation with the fixed reason code
   ``release_failed`` (the charge stays) and raises a fixed, data-free message;
6. record the answer in the ledger.

Statistics, for add/remove-one-individual neighbours with at most k rows each, values
clamped into the declared ``[lo, hi]`` and an optional public row bound N:

* COUNT: integer cells in ``[0, N]`` (``[0, ∞)`` without N), one row moves a cell by 1;
* SUM: cells in ``[N·min(lo, 0), N·max(hi, 0)]`` (a half-line or the real line without N),
  one row moves a cell by at most ``max(|lo|, |hi|)`` rounded up to the exact sum's grid
  (:func:`~dpnoise.session.engine.exact_sum`, at most 2^-16 relatively more);
* MEAN: half the epsilon releases the count of non-missing values C, half releases the
  *centred* sum S = Σ(x − mid) over the same values (one row moves it by at most
  ``(hi − lo)/2``, rounded up to its grid); the answer is ``clamp(mid + S/max(C, 1), lo,
  hi)`` -- post-processing, so always inside ``[lo, hi]``.  A missing value is in neither.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import BudgetExceededError, DpnoiseError, ParameterError
from ..params import check_delta, check_epsilon
from ..randomness import RngLike, resolve_rng
from .adapter import Plan, Target, plan
from .engine import Aggregates, Engine, exact_sum
from .ledger import Budget, Entry, Ledger
from .query import Query, parse_query
from .schema import Schema


@dataclass(frozen=True)
class Release:
    """A released statistic: private values per public cell, with its provenance."""

    query: str
    canonical: str
    stat: str
    group_by: tuple[str, ...]
    group_keys: tuple[Any, ...]  # per group column: its public keys (tuple or range)
    values: NDArray[Any]  # shape = number of keys per group column; () for a scalar
    mechanism: str
    epsilon: float
    delta: float
    guarantee: str
    ledger_id: int | None
    replayed: bool = False
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def value(self) -> Any:
        """The scalar answer (queries without GROUP BY)."""
        if self.values.ndim:
            raise ParameterError("a grouped release has many values: use .values / .rows()")
        return self.values.item()

    def key_arrays(self) -> dict[str, NDArray[Any]]:
        """One array per group column, aligned with ``values.ravel()``."""
        if not self.group_by:
            return {}
        grids = np.meshgrid(*[np.asarray(list(k) if not isinstance(k, range)
                                         else np.arange(k.start, k.stop))
                              for k in self.group_keys], indexing="ij")
        return {g: a.ravel() for g, a in zip(self.group_by, grids, strict=True)}

    def rows(self, limit: int | None = None) -> list[tuple[Any, ...]]:
        flat = self.values.ravel()
        n = flat.size if limit is None else min(limit, flat.size)
        keys = self.key_arrays()
        return [(*tuple(keys[g][i].item() for g in self.group_by), flat[i].item())
                for i in range(n)]

    def table(self, limit: int = 20) -> str:
        head = [*self.group_by, self.stat]
        body = [[format(c, ".10g") if isinstance(c, float) else str(c) for c in r]
                for r in self.rows(limit)]
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in body]
        if self.values.size > limit:
            lines.append(f"... ({self.values.size} cells)")
        return "\n".join(lines)


def _key(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()


class Session:
    """A custodian's session: a data set, its public schema and a budget ledger.

    ``data``: a ``.csv``/``.parquet``/``.duckdb`` path or a mapping of numpy columns.
    ``schema``: a :class:`Schema`, a TOML path or a dict; default: ``<data stem>.toml``
    next to the data file.  ``ledger``: a path (durable SQLite file), a :class:`Ledger`,
    or None (in memory).  ``budget``: the ledger's total; required for a new ledger.
    ``replay=True`` serves identical queries from the ledger without new spend.
    ``rng``: a random source for every release (default: fresh OS-keyed CSPRNG each time).
    """

    def __init__(self, data: Any, budget: Budget | None = None, ledger: Any = None, *,
                 schema: Schema | str | Path | Mapping[str, Any] | None = None,
                 replay: bool = False, rng: RngLike = None, timeout: float = 30.0,
                 rows_epsilon: float | None = None) -> None:
        self.schema = _resolve_schema(schema, data)
        self.rows_epsilon = None if rows_epsilon is None else check_epsilon(
            rows_epsilon, name="rows_epsilon")
        self._rows: int | None = None
        if isinstance(ledger, Ledger):
            if budget is not None and budget != ledger.budget:
                raise ParameterError(f"budget {budget} differs from the ledger's {ledger.budget}")
            self.ledger = ledger
        else:
            self.ledger = Ledger(ledger, budget=budget, timeout=timeout)
        self.engine = Engine(data, self.schema)  # reads the data ONCE into the typed view
        self.replay = bool(replay)
        self.rng = rng

    # ----------------------------------------------------------- budget
    @property
    def budget(self) -> Budget:
        return self.ledger.budget

    @property
    def spent(self) -> Budget:
        return self.ledger.spent()

    @property
    def remaining(self) -> Budget:
        return self.ledger.remaining()

    def history(self) -> list[Entry]:
        return self.ledger.entries()

    # ----------------------------------------------------------- queries
    def parse(self, query: str | Query) -> Query:
        q = query if isinstance(query, Query) else parse_query(query)
        q = q.validate(self.schema)
        allowed = {"data", self.schema.table} - {None}
        if q.source is not None and q.source not in allowed:
            raise ParameterError(
                f"query reads table {q.source!r}; this session's data set is called "
                f"{' or '.join(sorted(allowed))!r}"  # type: ignore[arg-type]
            )
        return q

    def row_bound(self) -> int | None:
        """N for the valid ranges: the schema's public ``max_rows``, else (with
        ``rows_epsilon``) the row count released ONCE per ledger and data set -- a DP
        release like any other, recorded in the ledger and reused afterwards (so later
        queries use N as post-processing) -- else None (counts on [0, ∞))."""
        if self.schema.max_rows is not None:
            return self.schema.max_rows
        if self.rows_epsilon is None:
            return None
        if self._rows is None:
            r = self._release(parse_query("count"), self.rows_epsilon, 0.0, None,
                              replay=True, with_rows=False)
            self._rows = max(1, int(r.value))
        return self._rows

    def _targets(self, q: Query, with_rows: bool = True) -> list[tuple[str, Target]]:
        s = self.schema
        n = self.row_bound() if with_rows else None
        k = s.max_contributions
        cells = bool(q.group_by)
        count_hi = float(n) if n is not None else math.inf
        count = Target("count", 1.0, k, cells, 0.0, count_hi)
        if q.stat == "count":
            return [("count", count)]
        col = s.numeric(q.column)  # type: ignore[arg-type]
        lo, hi = float(col.lower), float(col.upper)  # type: ignore[arg-type]
        exact = exact_sum(col, s.max_rows)
        if q.stat == "sum":
            unit = exact.sum_unit
            if n is not None:
                a, b = n * min(lo, 0.0), n * max(hi, 0.0)
            else:
                a = -math.inf if lo < 0 else 0.0
                b = math.inf if hi > 0 else 0.0
            return [("sum", Target("sum", unit, k, cells, a, b))]
        half = exact.mean_unit  # (hi - lo) / 2 rounded up to the centred sum's grid
        a, b = (-n * half, n * half) if n is not None else (-math.inf, math.inf)
        return [("count", count), ("centred_sum", Target("sum", half, k, cells, a, b))]

    def _plans(self, q: Query, epsilon: float, delta: float,
               mechanism: str | None, with_rows: bool = True) -> list[tuple[str, Plan]]:
        targets = self._targets(q, with_rows)
        share = len(targets)
        n_cells = 1
        for g in q.group_by:
            n_cells *= self.schema.column(g).n_keys()
        return [(role, plan(t, epsilon=epsilon / share, delta=delta / share,
                            mechanism=mechanism, n_cells=n_cells)) for role, t in targets]

    def _snap(self, epsilon: float, delta: float) -> tuple[float, float]:
        """Spend the exact remainder when a request exceeds it by binary rounding only.

        Ten releases at epsilon = 0.1 add up (exactly, in binary) to slightly more than
        1.0, so the tenth would be refused.  If a request exceeds what remains by less than
        one part in 10^9, the release is calibrated at -- and charged -- the remainder
        instead: a (negligibly) smaller epsilon, so the guarantee is still honest.
        """
        left = self.ledger.remaining()
        eps = float(epsilon)
        dl = float(delta)
        if 0 < left.epsilon < eps <= left.epsilon * (1 + 1e-9):
            eps = left.epsilon
        if 0 < left.delta < dl <= left.delta * (1 + 1e-9):
            dl = left.delta
        return eps, dl

    def plans(self, query: str | Query, epsilon: float, delta: float = 0.0,
              mechanism: str | None = None) -> list[tuple[str, Plan]]:
        """The calibrated plan of each component (role, Plan) a release of ``query`` at
        (epsilon, delta) would use -- public facts only; nothing is read or spent."""
        q = self.parse(query)
        return self._plans(q, check_epsilon(epsilon), check_delta(delta, allow_zero=True),
                           mechanism)

    def true_components(self, query: str | Query) -> dict[str, NDArray[Any]]:
        """CUSTODIAN ONLY (not private, never release it): the exact true value of each
        component a release of ``query`` adds noise to, keyed by the role of its plan
        (``count``, ``sum``, ``centred_sum``), shaped like the release.  For tests and
        audits of the sensitivity; reads the data, spends nothing."""
        q = self.parse(query)
        return _components(q, self.engine.aggregate(q))

    def true_answer(self, query: str | Query) -> NDArray[Any]:
        """The exact (NOT private) answer -- for the custodian's own checks only."""
        q = self.parse(query)
        return _combine(q, self.schema, _components(q, self.engine.aggregate(q)))

    def release(self, query: str | Query, *, epsilon: float, delta: float = 0.0,
                mechanism: str | None = None, replay: bool | None = None) -> Release:
        """Release ``query`` at (epsilon, delta); see the module docstring for the steps."""
        q = self.parse(query)
        epsilon, delta = check_epsilon(epsilon), check_delta(delta, allow_zero=True)
        if self._rows is None and self.schema.max_rows is None and self.rows_epsilon:
            left = self.ledger.remaining()
            if self.rows_epsilon + epsilon > left.epsilon:  # do not release N in vain
                raise BudgetExceededError(
                    f"release refused, nothing spent: releasing the row bound N "
                    f"(epsilon={self.rows_epsilon:g}, once) and this query (epsilon="
                    f"{epsilon:g}) needs more than the remaining {left}"
                )
        self.row_bound()  # may release N first (its own ledger entry, replayed later)
        return self._release(q, epsilon, delta, mechanism, replay, with_rows=True)

    def _release(self, q: Query, epsilon: float, delta: float, mechanism: str | None,
                 replay: bool | None, with_rows: bool) -> Release:
        epsilon, delta = self._snap(epsilon, delta)
        plans = self._plans(q, epsilon, delta, mechanism, with_rows)
        # charge what was asked, or the plans' sum if rounding made that larger
        eps = max(float(epsilon), float(sum(p.epsilon for _, p in plans)))
        dl = max(float(delta), float(sum(p.delta for _, p in plans)))
        mech_name = ", ".join(f"{role}={p.name}" for role, p in plans) if len(plans) > 1 \
            else plans[0][1].name
        canonical = q.canonical()
        key = _key(canonical, self.engine.fingerprint, self.schema.fingerprint(), mech_name,
                   float(eps).hex(), float(dl).hex(), self.row_bound() if with_rows else None)
        group_keys = tuple(self.schema.column(g).keys() for g in q.group_by)
        guarantee = _composed_guarantee(plans, eps, dl, self.schema.user_id is not None)
        use_replay = self.replay if replay is None else bool(replay)
        if use_replay:
            hit = self.ledger.find(key)
            if hit is not None and hit.answer is not None:
                return Release(str(q.text), canonical, q.stat, q.group_by, group_keys,
                               hit.answer, mech_name, hit.epsilon, hit.delta, guarantee,
                               hit.id, replayed=True)
        left = self.ledger.remaining()  # early refusal (the reservation re-checks exactly)
        if eps > left.epsilon or dl > left.delta:
            raise BudgetExceededError(
                f"release refused, nothing spent: it needs epsilon={eps:g}"
                + (f", delta={dl:g}" if dl else "") + " but only "
                + (f"epsilon={left.epsilon:.6g}, delta={left.delta:.3g}" if dl else str(left))
                + f" of the total {self.budget} remains"
            )
        rng = resolve_rng(self.rng)
        # reserve BEFORE anything data-dependent runs: from here on the charge is kept
        rid = self.ledger.reserve(
            epsilon=eps, delta=dl, query=str(q.text), canonical=canonical, query_key=key,
            dataset=self.engine.fingerprint, mechanism=mech_name,
            parameters={"plans": {role: p.parameters() for role, p in plans},
                        "schema": self.schema.fingerprint()},
            guarantee={"epsilon": eps, "delta": dl, "text": guarantee,
                       "cells": {role: p.guarantee.as_dict() for role, p in plans}},
        )
        try:
            truth = _components(q, self.engine.aggregate(q))
            noisy = {role: p.release(truth[role], rng) for role, p in plans}
            answer = _combine(q, self.schema, noisy)
        except Exception:
            # a fixed reason code and a fixed message: the exception's text could
            # depend on the data, so it is neither stored nor shown (nor chained)
            self.ledger.abort(rid, "release_failed")
            raise DpnoiseError(
                f"release failed after its budget was reserved (ledger row {rid}, reason "
                "release_failed); the charge is kept and the cause is withheld because it "
                "could depend on the data"
            ) from None
        except BaseException:
            self.ledger.abort(rid, "interrupted")
            raise
        preview = np.array2string(answer.ravel()[:8], precision=6, separator=", ")
        self.ledger.complete(rid, answer, preview)
        return Release(str(q.text), canonical, q.stat, q.group_by, group_keys, answer,
                       mech_name, eps, dl, guarantee, rid,
                       details={role: p.parameters() for role, p in plans})

    def close(self) -> None:
        self.engine.close()
        self.ledger.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _components(q: Query, agg: Aggregates) -> dict[str, NDArray[Any]]:
    """The true value of each component, keyed by role (see the module docstring)."""
    shape = agg.shape
    if q.stat == "count":
        counts = agg.values if q.column is not None else agg.rows
        return {"count": counts.reshape(shape)}
    if q.stat == "sum":
        return {"sum": agg.sums.reshape(shape)}
    # mean: count of non-missing values and Σ(x - mid) of the same values, exactly
    return {"count": agg.values.reshape(shape), "centred_sum": agg.centred.reshape(shape)}


def _combine(q: Query, schema: Schema, parts: dict[str, NDArray[Any]]) -> NDArray[Any]:
    if q.stat == "count":
        return np.asarray(parts["count"]).astype(np.int64)
    if q.stat == "sum":
        return np.asarray(parts["sum"], dtype=np.float64)
    col = schema.numeric(q.column)  # type: ignore[arg-type]
    lo, hi = float(col.lower), float(col.upper)  # type: ignore[arg-type]
    mid = (lo + hi) / 2
    count = np.asarray(parts["count"], dtype=np.float64)
    sums = np.asarray(parts["centred_sum"], dtype=np.float64)
    return np.clip(mid + sums / np.maximum(count, 1.0), lo, hi)


def _composed_guarantee(plans: list[tuple[str, Plan]], eps: float, dl: float,
                        per_individual: bool = True) -> str:
    parts = [f"{role}: {p.guarantee} per cell" for role, p in plans]
    core = f"({eps:.6g}, {dl:.3g})-DP" if dl else f"{eps:.6g}-DP"
    # without a user_id a person may own several rows: the guarantee is per row only
    unit = "one individual (user_id)" if per_individual else \
        "one row (no user_id declared: a person owning several rows is not covered)"
    return f"{core} for add/remove {unit} [{'; '.join(parts)}]"


def _resolve_schema(schema: Any, data: Any) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, Mapping):
        return Schema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return Schema.from_toml(schema)
    if schema is None and isinstance(data, (str, Path)):
        guess = Path(data).with_suffix(".toml")
        if guess.is_file():
            return Schema.from_toml(guess)
    raise ParameterError(
        "schema is required: declare public bounds per column (a TOML file, a dict, or "
        "dpnoise.session.Schema); without bounds no statistic has an honest sensitivity"
    )
