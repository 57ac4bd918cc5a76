"""``dpnoise.Session``: answer queries on a data set within a durable privacy budget.

    >>> s = Session(data="people.csv", schema="people.toml", ledger="people.ledger",
    ...             budget=Budget(epsilon=1.0), create_ledger=True)     # doctest: +SKIP
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
6. record the answer in the ledger (durable in its main file) -- only then is it returned
   or written; a release noised on the Spark executors is written after its complete
   event.

How each statistic is made from its components, and its error bars:
:mod:`dpnoise.session.answers`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import BudgetExceededError, ParameterError
from ..ledger import Budget, Entry, Ledger, check_rng_for_ledger
from ..params import check_delta, check_epsilon
from ..randomness import RngLike, resolve_rng
from .answers import combine_answer, components_of, true_quantile
from .calibration import calibrate, count_cells
from .execution import execute_release, prepare_release, replayed_release
from .opening import data_engine, open_engine, resolve_schema
from .planning import ReleasePlan, plan_release
from .quantile_query import with_levels
from .query import Query, parse_query
from .rank_bar import with_bar
from .release import Release
from .schema import Schema
from .suggest import BoundsSuggestion
from .truth import TrueAnswer


class Session(BoundsSuggestion):
    """A custodian's session: a data set, its public schema and a budget ledger.

    ``data``: a ``.csv``/``.parquet``/``.duckdb`` path or a mapping of numpy columns.
    ``schema``: a :class:`Schema`, a TOML path or a dict; default: ``<data stem>.toml``
    next to the data file.  ``ledger``: a path to an existing ledger file, a
    :class:`Ledger`, or None (in memory: nothing is recorded).  ``budget``: the total of an
    in-memory or new ledger; for an existing file it is optional and must match.
    ``create_ledger=True`` creates the ledger file (never an existing path: a ledger is
    only ever created explicitly).  ``anchor``: a file outside the ledger holding its head
    hash, compared on open and advanced after each release.
    ``replay=True`` serves identical queries from the ledger without new spend.
    ``rng``: a random source for every release (default: fresh OS-keyed CSPRNG each time);
    a seeded source is refused together with a ledger file.
    ``engine``: ``"duckdb"`` (embedded, default: the data is read ONCE into the typed
    view) or ``"spark"`` (:mod:`dpnoise.session.spark`: a pyspark DataFrame, a parquet /
    csv path or a catalog table; ``engine_options`` such as ``spark``, ``spark_master``,
    ``spark_remote``, ``partitioned``, ``noise``, ``driver_cells``, ``block_cells``).
    ``data`` may also be a pandas or polars DataFrame, an Arrow table or a numpy record
    array (embedded engine; scanned in place).

    Parameters
    ----------
    data : str, pathlib.Path, DataFrame or mapping
        A ``.csv``/``.tsv``/``.csv.gz``, ``.parquet`` or ``.duckdb`` file, a pandas or polars
        DataFrame, an Arrow table, a numpy record array, a dict of numpy columns, or (with
        ``engine="spark"``) a Spark DataFrame, table name or path.  Read once, into the typed
        view the schema defines.
    budget : Budget or None, default None
        The ledger's total: required with ``create_ledger=True`` or an in-memory ledger;
        otherwise only a check of the ledger's total.
    ledger : str, pathlib.Path, Ledger or None, default None
        The SQLite ledger file (or an open :class:`Ledger`); None or ``":memory:"``: an
        in-memory ledger that records nothing durable.
    schema : Schema, str, pathlib.Path, mapping or None, default None
        The public facts: a TOML file, a mapping of the same shape or a :class:`Schema`.
    replay : bool, default False
        Serve a query identical to a recorded one from the ledger, at no cost.
    rng : RandomSource, numpy.random.Generator or None, default None
        The randomness (None: OS-keyed ChaCha20); a seeded source is refused with a ledger file.
    timeout : float, default 30.0
        Seconds to wait for the ledger's lock.
    rows_epsilon : float or None, default None
        Release the row count N once with this ε when the schema declares no ``max_rows``.
    create_ledger : bool, default False
        Create the ledger file (with ``budget``); it must not exist yet.
    anchor : str, pathlib.Path or None, default None
        A file outside the ledger that keeps its head hash (detects a rollback).
    engine : {"duckdb", "spark"}, default "duckdb"
        Where the aggregation runs.
    engine_options : mapping or None, default None
        Engine settings (e.g. the Spark master).

    Raises
    ------
    ParameterError
        If the schema, data or a parameter is invalid (before anything is spent).
    LedgerError
        If the ledger file is missing, foreign, broken or already exists on create.
    """

    def __init__(self, data: Any, budget: Budget | None = None, ledger: Any = None, *,
                 schema: Schema | str | Path | Mapping[str, Any] | None = None,
                 replay: bool = False, rng: RngLike = None, timeout: float = 30.0,
                 rows_epsilon: float | None = None, create_ledger: bool = False,
                 anchor: str | Path | None = None, engine: str = "duckdb",
                 engine_options: Mapping[str, Any] | None = None) -> None:
        self.schema = resolve_schema(schema, data)
        self.rows_epsilon = None if rows_epsilon is None else check_epsilon(
            rows_epsilon, name="rows_epsilon")
        self._rows: int | None = None
        self._rows_lock = threading.Lock()  # threads sharing the session: N released once
        if isinstance(ledger, Ledger):
            if create_ledger or anchor is not None:
                raise ParameterError("create_ledger and anchor apply to a ledger path; for a "
                                     "Ledger object pass them to Ledger(...)")
            if budget is not None and budget != ledger.budget:
                raise ParameterError(f"budget {budget} differs from the ledger's {ledger.budget}")
            check_rng_for_ledger(rng, ledger.durable, f"ledger {ledger.path!r}")
            self.ledger = ledger
        else:
            durable = ledger is not None and str(ledger) != ":memory:"
            check_rng_for_ledger(rng, durable, f"ledger {str(ledger)!r}")  # before creating
            self.ledger = Ledger(ledger, budget=budget, create=create_ledger, timeout=timeout,
                                 anchor=anchor)
        self.engine = open_engine(data, self.schema, engine, engine_options)
        self.replay = bool(replay)
        self.rng = rng

    @property
    def rng(self) -> RngLike:
        """The session's random source (None: a fresh OS-keyed CryptoRandom per release)."""
        return self._rng

    @rng.setter
    def rng(self, value: RngLike) -> None:
        check_rng_for_ledger(value, self.ledger.durable, f"ledger {self.ledger.path!r}")
        self._rng = value

    # ----------------------------------------------------------- budget
    @property
    def budget(self) -> Budget:
        """The ledger's total."""
        return self.ledger.budget

    @property
    def spent(self) -> Budget:
        """What the ledger has charged so far, under its accountant."""
        return self.ledger.spent()

    @property
    def remaining(self) -> Budget:
        """What is left of the ledger's total (an indication under pld/zcdp)."""
        return self.ledger.remaining()

    def history(self) -> list[Entry]:
        """Every release in the ledger, in order.

        Returns
        -------
        list of Entry
            One row per release: query, ε, δ, mechanism, answer, time, state.
        """
        return self.ledger.entries()

    # ----------------------------------------------------------- queries
    def parse(self, query: str | Query) -> Query:
        """Parse and type-check a query against the schema (no data read, nothing spent).

        Parameters
        ----------
        query : str or Query
            A query in the small language (``mean income by region``) or the SQL subset.

        Returns
        -------
        Query
            The parsed query.

        Raises
        ------
        ParameterError
            If the query is outside the grammar or does not fit the schema.
        """
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
        """N for the valid ranges: the schema's public ``max_rows``, else (with ``rows_epsilon``)
        the row count released ONCE per ledger and data set (also by threads sharing the session)
        and reused afterwards as post-processing -- else None (counts on [0, ∞)).

        Returns
        -------
        int or None
            N, or None when no bound is declared or released.
        """
        if self.schema.max_rows is not None:
            return self.schema.max_rows
        if self.rows_epsilon is None:
            return None
        with self._rows_lock:  # a second thread waits for the first one's N
            if self._rows is None:
                r = self._release(parse_query("count"), self.rows_epsilon, 0.0, None,
                                  replay=True, with_rows=False)
                self._rows = max(1, int(r.value))
        return self._rows

    def n_cells(self, q: Query) -> int:
        """The number of public cells of ``q`` (1 for a scalar); with a group column whose
        keys are not public, :data:`~dpnoise.session.adapter.UNBOUNDED_CELLS` (no public
        fact bounds them).

        Parameters
        ----------
        q : Query
            A parsed query.

        Returns
        -------
        int
            The number of cells.
        """
        return count_cells(self.schema, q)

    def plan(self, query: str | Query, *, epsilon: float | None = None,
             delta: float | None = None, mechanism: str | None = None,
             reserve_for: int = 0) -> ReleasePlan:
        """Plan a release WITHOUT spending or reading data: the per-release epsilon the
        ledger's accountant allows for this release and ``reserve_for`` more like it from
        the remaining budget (the largest, found by bisection; or check a given
        ``epsilon``), the mechanism and parameters per component, the expected error per
        cell from the exact law at a public point (worst case over the range for
        range-adherent laws), the composed guarantee after all of them and what basic
        composition would allow.  See :mod:`dpnoise.session.planning`.

        Parameters
        ----------
        query : str or Query
            A query in the small language (``mean income by region``) or the SQL subset.
        epsilon : float or None, default None
            A per-release ε to check (None: the largest that fits).
        delta : float or None, default None
            The per-release δ.
        mechanism : str or None, default None
            A registry name to use instead of the default mechanism.
        reserve_for : int, default 0
            How many more releases like this one must still fit.

        Returns
        -------
        ReleasePlan
            The per-release ε, the mechanisms and their parameters, the expected error per cell
            and the composed guarantee.

        Raises
        ------
        ParameterError
            If the query or a parameter is invalid, or nothing fits.
        """
        q = self.parse(query)
        if self.schema.max_rows is None and self.rows_epsilon and self._rows is None:
            raise ParameterError("the row bound N is not released yet (rows_epsilon): plan "
                                 "needs it -- release it first (session.row_bound()) or "
                                 "declare max_rows in the schema")
        if epsilon is not None:
            epsilon = check_epsilon(epsilon)
        if delta is not None:
            delta = check_delta(delta, allow_zero=True)
        return plan_release(self, q, epsilon=epsilon, delta=delta, mechanism=mechanism,
                            reserve_for=reserve_for)

    @property
    def row_bound_released(self) -> bool:
        """Whether the row bound N was released (``rows_epsilon``) in this session."""
        return self._rows is not None

    def _plans(self, q: Query, epsilon: float, delta: float,
               mechanism: str | None, with_rows: bool = True) -> list[tuple[str, Any]]:
        """The calibrated components of ``q`` at total (epsilon, delta)
        (:func:`~dpnoise.session.calibration.calibrate`; may release the row bound first)."""
        return calibrate(self.schema, q, epsilon, delta, mechanism,
                         rows=self.row_bound() if with_rows else None,
                         accountant=self.ledger.accountant)

    def plans(self, query: str | Query, epsilon: float, delta: float = 0.0,
              mechanism: str | None = None) -> list[tuple[str, Any]]:
        """The calibrated plan of each component (role, Plan) a release of ``query`` at
        (epsilon, delta) would use -- public facts only; nothing is read or spent.

        Parameters
        ----------
        query : str or Query
            A query in the small language (``mean income by region``) or the SQL subset.
        epsilon : float
            The release's ε.
        delta : float, default 0.0
            The release's δ.
        mechanism : str or None, default None
            A registry name to use instead of the default mechanism.

        Returns
        -------
        list of (str, Plan)
            One (role, plan) per component.
        """
        q = self.parse(query)
        return self._plans(q, check_epsilon(epsilon), check_delta(delta, allow_zero=True),
                           mechanism)

    def true_components(self, query: str | Query) -> dict[str, NDArray[Any]]:
        """CUSTODIAN ONLY (not private, never release it): the exact true value of each
        component a release of ``query`` adds noise to, keyed by the role of its plan
        (``count``, ``sum``, ``centred_sum``, ``power1``, ``power2``; a quantile's
        ``rank``: the utility at <= 1025 lattice probe points; ``selection``: distinct persons per
        group, with ``labels`` their keys), shaped like the release.  For tests and
        audits of the sensitivity; reads the data, spends nothing.

        Parameters
        ----------
        query : str or Query
            A query in the small language (``mean income by region``) or the SQL subset.

        Returns
        -------
        dict of str to numpy.ndarray
            The exact value of each noised component, by role.
        """
        q = self.parse(query)
        agg = data_engine(self.engine).aggregate(q)
        comps = components_of(q, agg)
        if q.stat == "quantile":
            rank = dict(self.plans(q, 1.0, 1e-6 if agg.labels is not None else 0.0))["rank"]
            comps["rank"] = rank.utilities(agg.buckets)  # type: ignore[arg-type]
        if agg.labels is not None:
            comps["selection"] = agg.persons  # type: ignore[assignment]
            comps["labels"] = agg.labels
        return comps

    def true_answer(self, query: str | Query) -> NDArray[Any]:
        """The exact (NOT private) answer -- for the custodian's own checks only --
        as an array shaped like a release's values (:meth:`true_table`: with its keys).

        Parameters
        ----------
        query : str or Query
            A query in the small language (``mean income by region``) or the SQL subset.

        Returns
        -------
        numpy.ndarray
            The exact values per public cell.
        """
        q = self.parse(query)
        agg = data_engine(self.engine).aggregate(q)
        if q.stat == "quantile":
            return true_quantile(q, self.schema, agg)
        return combine_answer(q, self.schema, components_of(q, agg))

    def true_table(self, query: str | Query) -> TrueAnswer:
        """CUSTODIAN ONLY: the exact answer with its key columns, as a
        :class:`~dpnoise.session.truth.TrueAnswer` (a ``true_value`` column, no error
        bars; ``output=`` and the report refuse it).  Reads the data, spends nothing.

        Parameters
        ----------
        query : str or Query
            A query.

        Returns
        -------
        TrueAnswer
            The exact values with their keys (never release them).
        """
        q = self.parse(query)
        agg = data_engine(self.engine).aggregate(q)
        values = true_quantile(q, self.schema, agg) if q.stat == "quantile" else \
            combine_answer(q, self.schema, components_of(q, agg))
        keys: tuple[Any, ...] = (tuple(agg.labels.tolist()),) if agg.labels is not None \
            else tuple(self.schema.column(g).keys() for g in q.group_by)
        return TrueAnswer(str(q.text), q.canonical(), q.stat, *with_levels(q, q.group_by, keys),
                          np.asarray(values))

    def release(self, query: str | Query, *, epsilon: float | None = None,
                delta: float | None = None, mechanism: str | None = None,
                replay: bool | None = None, output: str | None = None,
                reserve_for: int | None = None, confidence: float = 0.95,
                bar: str | None = None) -> Release:
        """Release ``query`` at (epsilon, delta); see the module docstring for the steps.

        ``reserve_for=N`` (instead of ``epsilon``): take the largest epsilon that leaves
        budget for N more releases like this one under the ledger's accountant
        (:meth:`plan`; ``delta`` then defaults to a share of the total for mechanisms that
        need one).  ``output``: where a release noised on the Spark executors is written
        (parquet); required exactly when the engine noises this query there (more cells
        than its ``driver_cells``, or ``noise="executors"``).

        Parameters
        ----------
        query : str or Query
            A query in the small language (``mean income by region``) or the SQL subset.
        epsilon : float or None, default None
            The release's ε (or give ``reserve_for``).
        delta : float or None, default None
            The release's δ (needed for keys that are not public).
        mechanism : str or None, default None
            A registry name to use instead of the default mechanism.
        replay : bool or None, default None
            Serve an identical recorded query from the ledger (None: the session's setting).
        output : str, pathlib.Path or None, default None
            Also write the released table, with its ``low``/``high`` columns, to a new ``.csv``
            or ``.parquet`` file.
        reserve_for : int or None, default None
            Instead of ``epsilon``: the largest ε that leaves room for this many more releases.
        confidence : float or None, default None
            The error bars' confidence (None: 0.95; ``Release.interval``, low/high columns).
        bar : {None, "level", "rank"}, default None
            ``"rank"``: a quantile ``with rank bar`` (:mod:`dpnoise.session.rank_bar`).

        Returns
        -------
        Release
            The private values per public cell, their error bars and the provenance.

        Raises
        ------
        ParameterError
            If the query or a parameter is invalid (before anything is spent).
        BudgetExceededError
            If the release does not fit the remaining budget (nothing is spent).
        """
        from ..laws.base import check_level

        q = self.parse(with_bar(self.parse(query), bar))
        confidence = check_level(confidence)
        data_engine(self.engine)  # refuses a planning-only session before anything else
        if reserve_for is not None:
            if epsilon is not None:
                raise ParameterError("give epsilon or reserve_for, not both")
            self.row_bound()  # may release N first (before the plan reads the state)
            p = self.plan(q, delta=delta, mechanism=mechanism, reserve_for=reserve_for)
            epsilon, delta = p.epsilon, p.delta
        if epsilon is None:
            raise ParameterError("release needs epsilon=... (or reserve_for=N: the largest "
                                 "share that leaves budget for N more like it)")
        epsilon = check_epsilon(epsilon)
        delta = check_delta(0.0 if delta is None else delta, allow_zero=True)
        if self._rows is None and self.schema.max_rows is None and self.rows_epsilon and \
                self.ledger.accountant == "basic":
            left = self.ledger.remaining()
            if self.rows_epsilon + epsilon > left.epsilon:  # do not release N in vain
                raise BudgetExceededError(
                    f"release refused, nothing spent: releasing the row bound N "
                    f"(epsilon={self.rows_epsilon:g}, once) and this query (epsilon="
                    f"{epsilon:g}) needs more than the remaining {left}"
                )
        self.row_bound()  # may release N first (its own ledger entry, replayed later)
        return self._release(q, epsilon, delta, mechanism, replay, with_rows=True,
                             output=output, confidence=confidence)

    def plan_workload(self, workload: Any) -> Any:
        """Plan a workload whose queries carry accuracy targets WITHOUT reading data or
        spending: the cheapest per-query budgets that meet every target or, with a total
        ``[workload] epsilon``, the split that minimises the worst error/target ratio
        (:mod:`dpnoise.session.targets`).

        Parameters
        ----------
        workload : Workload, str, pathlib.Path or mapping
            The workload (TOML path, dict or :class:`~dpnoise.session.workload.Workload`).

        Returns
        -------
        TargetPlan
            Each query's epsilon, delta, expected error and target, the composed guarantee
            under the ledger's accountant and whether it fits what remains.

        Raises
        ------
        ParameterError
            If the workload or a target is invalid, or a target cannot be reached.
        """
        from .targets import plan_targets
        from .workload import Workload

        return plan_targets(self, Workload.load(workload))

    def run_workload(self, workload: Any, *, output: str | Path | None = None,
                     replay: bool | None = None) -> Any:
        """Release every query of a workload (a TOML path, a dict or a
        :class:`~dpnoise.session.workload.Workload`) in one pass: all parsed and
        calibrated first, their budget reserved in ONE ledger transaction (all or
        nothing), then each aggregated, noised and recorded as its own release;
        ``output``: a directory receiving one table per query, named by the workload.
        Returns a :class:`~dpnoise.session.workload_run.WorkloadResult`.

        Parameters
        ----------
        workload : Workload, str, pathlib.Path or mapping
            The workload.
        output : str, pathlib.Path or None, default None
            A directory for one table per query.
        replay : bool or None, default None
            Serve recorded identical queries from the ledger (None: the session's setting).

        Returns
        -------
        WorkloadResult
            The releases by query name, and the queries that failed after their reservation.

        Raises
        ------
        ParameterError
            If a query or the workload is invalid (nothing is spent).
        BudgetExceededError
            If the workload does not fit the remaining budget as a whole (nothing is spent).
        """
        from .workload_run import run_workload

        return run_workload(self, workload, output=output, replay=replay)

    def _release(self, q: Query, epsilon: float, delta: float, mechanism: str | None,
                 replay: bool | None, with_rows: bool, output: str | None = None,
                 confidence: float = 0.95) -> Release:
        p = prepare_release(self, q, epsilon, delta, mechanism, with_rows, output, confidence)
        if self.replay if replay is None else bool(replay):
            hit = replayed_release(self, p)
            if hit is not None:
                return hit
        left = self.ledger.remaining()  # early refusal (the reservation re-checks exactly)
        if self.ledger.accountant == "basic" and (p.eps > left.epsilon or p.dl > left.delta):
            raise BudgetExceededError(
                f"release refused, nothing spent: it needs epsilon={p.eps:g}"
                + (f", delta={p.dl:g}" if p.dl else "") + " but only "
                + (f"epsilon={left.epsilon:.6g}, delta={left.delta:.3g}" if p.dl
                   else str(left))
                + f" of the total {self.budget} remains"
            )
        rng = self.release_rng()
        # reserve BEFORE anything data-dependent runs: from here on the charge is kept
        rid = self.ledger.reserve(**p.reservation)
        return execute_release(self, p, rid, rng)

    def release_rng(self) -> Any:
        """The random source of the releases about to be reserved, checked again against
        the ledger (only dpnoise's OS-keyed source with a ledger file) before any spend.

        Returns
        -------
        RandomSource
            The session's source, or a fresh OS-keyed CryptoRandom.

        Raises
        ------
        ParameterError
            If a seeded or foreign source would be charged to a ledger file.
        """
        check_rng_for_ledger(self.rng, self.ledger.durable, f"ledger {self.ledger.path!r}")
        return resolve_rng(self.rng)

    def close(self) -> None:
        """Close the data engine and the ledger (also on leaving a ``with`` block)."""
        if self.engine is not None:
            self.engine.close()
        self.ledger.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


