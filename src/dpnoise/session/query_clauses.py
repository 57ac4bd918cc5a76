"""The trailing clauses of a query in the small language: ``WHERE`` and ``BY``, each at most
once, in either order, up to the end of the text (shared by every parser of the language:
:mod:`dpnoise.session.query`, :mod:`dpnoise.session.quantile_query`)."""

from __future__ import annotations

from typing import Any


def where_and_by(parser: Any, group: tuple[str, ...] = ()) -> tuple[Any, tuple[str, ...]]:
    """``(where, group)`` read from ``parser`` up to the end (``group``: one already read,
    e.g. by ``histogram COL``, which a ``BY`` may not repeat)."""
    where = None
    while parser.tok.kind != "end":
        if parser.is_kw("where") and where is None:
            parser.i += 1
            where = parser.predicate()
        elif parser.is_kw("by") and not group:
            parser.i += 1
            group = parser.ident_list()
        else:
            parser.fail("expected WHERE or BY")
    return where, group
