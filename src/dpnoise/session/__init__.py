"""Releasing statistics from real data within a durable privacy budget.

``Session`` (session.py) ties together: ``Schema`` (schema.py: public per-column bounds),
``parse_query`` (query.py: the small query language and SQL subset), ``Engine``
(engine.py: DuckDB execution, files read in place), the mechanism adapter (adapter.py)
and ``Ledger`` (ledger.py: the crash-safe SQLite budget ledger).
"""

from .adapter import MECHANISMS, Plan, Target, plan
from .ledger import Budget, Entry, Ledger
from .query import Query, parse_query
from .schema import Column, Schema
from .session import Release, Session

__all__ = [
    "MECHANISMS",
    "Budget",
    "Column",
    "Entry",
    "Ledger",
    "Plan",
    "Query",
    "Release",
    "Schema",
    "Session",
    "Target",
    "parse_query",
    "plan",
]
