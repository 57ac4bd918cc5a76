"""Parsing the levels of quantile queries, one or several.

* small language: ``quantile 0.9 x`` (one level), ``quantiles x at 0.1, 0.5, 0.9 [where
  ...] [by ...]`` (several, one release);
* SQL: ``QUANTILE_CONT(x, 0.9)``, ``QUANTILE_CONT(x, [0.1, 0.5, 0.9])`` (DuckDB's list
  form: several, one release).

Several levels are kept as a tuple in increasing order (the release's values follow it);
one level in brackets is the single-level query.  Everything here runs on the query text
only, before any data is read or budget spent.
"""

from __future__ import annotations

from typing import Any

from ..errors import ParameterError
from .query_clauses import where_and_by

__all__ = ["MAX_LEVELS", "check_levels", "small_quantiles", "sql_levels", "with_levels"]

#: most levels in one release
MAX_LEVELS = 64


def _number(parser: Any, example: str) -> float:
    if parser.tok.kind != "num":
        parser.fail(f"expected the level, e.g. {example}")
    return float(parser.take().value)


def _levels(values: list[float]) -> float | tuple[float, ...]:
    if len(values) == 1:
        return values[0]
    if len(values) > MAX_LEVELS:
        raise ParameterError(f"at most {MAX_LEVELS} quantile levels in one release, got "
                             f"{len(values)}")
    if len(set(values)) != len(values):
        raise ParameterError(f"quantile levels must be distinct, got {values}")
    return tuple(sorted(values))


def _is(parser: Any, punct: str) -> bool:
    return bool(parser.tok.kind == "punct" and parser.tok.value == punct)


def sql_levels(parser: Any) -> float | tuple[float, ...]:
    """After ``QUANTILE_CONT(x,``: a number, or ``[q1, q2, ...]``."""
    example = "QUANTILE_CONT(income, 0.9) or QUANTILE_CONT(income, [0.25, 0.5, 0.75])"
    if not _is(parser, "["):
        return _number(parser, example)
    parser.i += 1
    values = [_number(parser, example)]
    while _is(parser, ","):
        parser.i += 1
        values.append(_number(parser, example))
    parser.expect_punct("]")
    return _levels(values)


def small_quantiles(parser: Any) -> tuple[str, Any, tuple[str, ...], float | tuple[float, ...]]:
    """``quantiles x at q1, q2, ... [where ...] [by ...]`` (the word ``quantiles`` is
    next): ``(column, where, group_by, levels)``."""
    parser.i += 1
    example = "quantiles income at 0.25, 0.5, 0.75"
    if parser.tok.kind != "ident":
        parser.fail(f"expected the column, e.g. {example}")
    column = parser.ident()
    if not (parser.tok.kind == "ident" and str(parser.tok.value).lower() == "at"):
        parser.fail(f"expected AT and the levels, e.g. {example}")
    parser.i += 1
    values = [_number(parser, example)]
    while _is(parser, ","):
        parser.i += 1
        values.append(_number(parser, example))
    where, group = where_and_by(parser)
    return column, where, group, _levels(values)


def check_levels(level: Any) -> None:
    """A quantile's level(s): a number in (0, 1), or a tuple of distinct increasing ones."""
    values = level if isinstance(level, tuple) else (level,)
    for q in values:
        if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 < q < 1:
            raise ParameterError(f"a quantile's level must be in (0, 1), got {q!r}")
    if isinstance(level, tuple) and (len(level) < 2 or list(level) != sorted(set(level))):
        raise ParameterError(f"quantile levels must be distinct and increasing, got {level!r}")


def with_levels(q: Any, group_by: tuple[str, ...], keys: tuple[Any, ...]
                ) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """The release's key columns: several levels add a last key column ``level`` (named
    ``quantile_level`` when a GROUP BY column is already called ``level``) whose keys are
    the levels in increasing order -- the release's values are shaped ``(*cells, m)``.
    Keys not known yet (``()``, groups still to be selected) are left as they are."""
    if q.stat != "quantile" or not isinstance(q.quantile, tuple):
        return tuple(group_by), tuple(keys)
    name = "quantile_level" if "level" in group_by else "level"
    if len(keys) == len(group_by):
        keys = (*keys, tuple(float(v) for v in q.quantile))
    return (*group_by, name), tuple(keys)
