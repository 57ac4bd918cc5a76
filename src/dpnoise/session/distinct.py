"""``count distinct persons``: the number of distinct persons (``user_id``) per group.

Spellings (all parse to a :class:`DistinctQuery`, statistic ``"distinct"``)::

    count distinct persons
    count distinct persons by region where age > 30
    SELECT region, COUNT(DISTINCT person_id) FROM data GROUP BY region

and from Python :func:`count_distinct_persons`.  A trailing ``with other`` (``count by city
with other``, ``count distinct persons by city with other``: keys not public) also releases
the "other" row (:mod:`dpnoise.session.other_row`).  The SQL form's column must be the
schema's declared ``user_id``; every form needs one (without it a row is the privacy
unit and "persons" are not defined) -- refused by :meth:`DistinctQuery.validate`, before
any data is read or budget is spent.

Sensitivity.  The count is taken over the rows that survive contribution bounding, the
same bounding as a row count's (:class:`~dpnoise.session.aggregation.Bounding`: a person
keeps at most ``G`` groups -- ``max_groups``, else ``max_contributions`` -- and at most
``R`` rows in each): rows beyond the caps are dropped first, so a person is counted in at
most ``G`` groups, once in each.  Adding or removing a person changes at most ``G`` cells,
each by exactly 1: L-infinity sensitivity 1 (``R = 1`` whatever the row caps), L1
sensitivity ``G`` (1 without a GROUP BY).  The noise is the exact two-sided geometric law
(integers) calibrated to L1 = ``G``.  Grouped by a column whose keys are not public, the
per-group distinct count is itself a count with per-group sensitivity ``R = 1``, so it is
released by thresholding its own noise exactly as a row count is
(:class:`~dpnoise.mechanisms.thresholded.ThresholdedCount` with ``rows = 1``): a group that
exists only because of one person has distinct count 1, and ``δ = G·P(Z >= τ − 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError
from .query import EXTENSIONS, Query, Token, _Parser, tokenize
from .schema import Schema

#: the words of the small language's form
WORDS = ("count", "distinct", "persons")


@dataclass(frozen=True)
class DistinctQuery(Query):
    """A :class:`~dpnoise.session.query.Query` in a form this module adds: distinct persons
    (statistic ``"distinct"``; ``person`` is the column the SQL form named, checked against
    the schema's ``user_id``) and/or, with ``other``, the separately noised "other" row of a
    count over keys that are not public (:mod:`dpnoise.session.other_row`)."""

    person: str | None = None
    other: bool = False

    def canonical(self) -> str:
        base = Query.canonical(self)
        if self.stat == "distinct":
            base = "count distinct persons" + base[len("distinct"):]
        return base + (" with other" if self.other else "")

    def validate(self, schema: Schema) -> Query:
        """:meth:`Query.validate`, after checking the declared ``user_id`` (distinct) and
        that the other row has a count over keys that are not public to complete."""
        if self.stat == "distinct" and schema.user_id is None:
            raise ParameterError(
                "count distinct persons needs a declared user_id (the column naming the "
                "person each row belongs to: the privacy unit) in the schema's [dataset]")
        if self.person is not None and self.person != schema.user_id:
            raise ParameterError(
                f"COUNT(DISTINCT {self.person}): only the declared user_id "
                f"{schema.user_id!r} can be counted distinctly")
        out = Query.validate(self, schema)
        if self.other and (self.stat not in ("count", "distinct") or not any(
                schema.column(g).private_keys for g in self.group_by)):
            raise ParameterError(
                "'with other' releases the count of the groups NOT released, for a count "
                "(or count distinct persons) grouped by a column whose keys are not public "
                "(declared text = true), e.g. count by city with other")
        return out


def distinct_bounds(schema: Schema, grouped: bool) -> tuple[int, int, int]:
    """``(L1, Linf, cells)`` of a distinct-persons count: ``(G, 1, G)`` grouped (``G`` the
    cells one person can touch, :meth:`Schema.bounds`), ``(1, 1, 1)`` ungrouped."""
    if not grouped:
        return 1, 1, 1
    g = schema.bounds(True)[2]
    return g, 1, g


def _is_word(t: Token, word: str) -> bool:
    return t.kind in ("ident", "kw") and str(t.value).lower() == word


def _small_form(toks: list[Token]) -> bool:
    return len(toks) > 3 and all(_is_word(t, w) for t, w in zip(toks, WORDS, strict=False))


def _sql_form(toks: list[Token]) -> int | None:
    """The index of ``COUNT ( DISTINCT`` in a SELECT, else None."""
    if not toks or not _is_word(toks[0], "select"):
        return None
    for i in range(len(toks) - 4):
        if _is_word(toks[i], "count") and toks[i + 1].value == "(" and \
                _is_word(toks[i + 2], "distinct"):
            return i
    return None


def _other_suffix(toks: list[Token]) -> bool:
    """Whether the query ends with ``with other`` (``toks`` ends with the end token)."""
    return len(toks) > 3 and _is_word(toks[-3], "with") and _is_word(toks[-2], "other")


def parse_distinct(text: str) -> DistinctQuery | None:
    """The query of ``text`` in a form of this module, or None for any other query.

    The distinct words are replaced by a plain ``count`` (``COUNT(*)``), a trailing ``with
    other`` is taken off, and the rest is parsed by the one grammar of
    :mod:`dpnoise.session.query`."""
    toks = tokenize(text)
    other = _other_suffix(toks)
    if other:
        toks = [*toks[:-3], toks[-1]]
    person = None
    if _small_form(toks):
        rest = [toks[0], *toks[3:]]
    elif (i := _sql_form(toks)) is not None:
        if toks[i + 3].kind != "ident" or toks[i + 4].value != ")":
            raise ParameterError("query: COUNT(DISTINCT ...) takes the declared user_id "
                                 "column, e.g. COUNT(DISTINCT person_id)")
        person = str(toks[i + 3].value)
        star = Token("punct", "*", toks[i + 3].pos)
        rest = [*toks[:i + 2], star, *toks[i + 4:]]
    elif other:
        rest = toks
    else:
        return None
    p = _Parser(text)
    p.toks = rest
    q = p.parse()
    if rest is toks:  # a plain query with the other row
        return DistinctQuery(q.stat, q.column, q.where, q.group_by, text, q.source,
                             q.quantile, other=True)
    if q.stat != "count" or q.column is not None:
        raise ParameterError("query: count distinct persons counts persons only, e.g. "
                             "count distinct persons by region")
    return DistinctQuery("distinct", None, q.where, q.group_by, text,  # type: ignore[arg-type]
                         q.source, person=person, other=other)


def count_distinct_persons(by: tuple[str, ...] | str = (), where: str | None = None
                           ) -> DistinctQuery:
    """The Python form: ``count_distinct_persons(by="region", where="age > 30")`` is
    ``count distinct persons by region where age > 30``."""
    keys = (by,) if isinstance(by, str) else tuple(by)
    text = "count distinct persons" + (" by " + ", ".join(keys) if keys else "") + \
        (f" where {where}" if where else "")
    q = parse_distinct(text)
    assert q is not None
    return q


EXTENSIONS.append(parse_distinct)
