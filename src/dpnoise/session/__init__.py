"""Releasing statistics from real data within a durable privacy budget.

``Session`` (session.py) ties together: ``Schema`` (schema.py: public per-column bounds),
``parse_query`` (query.py: the small query language and SQL subset), ``Engine``
(engine.py: DuckDB execution, files read in place), the mechanism adapter (adapter.py)
``Ledger`` (ledger.py: the crash-safe SQLite budget ledger) and ``Workload`` (workload.py:
several queries released in one pass, their budget reserved in one transaction).
"""

from ..ledger import Budget, Entry, Ledger
from .adapter import MECHANISMS, Plan, Target, plan
from .columns import Column
from .distinct import DistinctQuery, count_distinct_persons
from .query import Query, parse_query
from .release import Release
from .schema import Schema
from .session import Session
from .truth import TrueAnswer
from .workload import Workload
from .workload_run import WorkloadResult

__all__ = [
    "MECHANISMS",
    "Budget",
    "Column",
    "DistinctQuery",
    "Entry",
    "Ledger",
    "Plan",
    "Query",
    "Release",
    "Schema",
    "Session",
    "Target",
    "TrueAnswer",
    "Workload",
    "WorkloadResult",
    "count_distinct_persons",
    "parse_query",
    "plan",
]
