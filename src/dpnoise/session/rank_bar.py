"""A quantile whose error bar is stated in RANKS: the whole quantile epsilon to the
exponential mechanism, no noisy count.

Spellings (one clause, the same everywhere a query is written)::

    median income with rank bar
    quantile 0.9 income by region with rank bar
    quantiles income at 0.25, 0.5, 0.75 with rank bar
    SELECT region, MEDIAN(income) FROM data GROUP BY region WITH RANK BAR

and ``Session.release(query, bar="rank")`` / ``dpnoise release --bar rank`` (which add the
clause).  The default bar of a quantile (``bar="level"``) is an interval of quantile LEVELS
``|p − q| <= E/(D n)``; it needs the cell's row count ``n``, so a quarter of the quantile's
epsilon goes to a noisy count.  The rank bar needs no count.

The error bar (public parameters only).  With probability ``>= 1 − β`` (``β = 1 −
confidence``), at once for every level of the release, each released value ``y`` is an
empirical quantile of its cell's snapped values whose rank is within ``R`` rows of
``q·n``::

    max(0, A(y) − q·n, q·n − B(y)) <= R = rank_error + level_slack · n,

``A(y)``/``B(y)`` the rows below / at or below ``y`` and ``n`` the cell's rows (which is
NOT released).  One level: ``rank_error = E/D`` (:meth:`IntervalQuantile.rank_error
<dpnoise.mechanisms.interval_quantile.IntervalQuantile.rank_error>`: ``E`` the smallest
integer with ``(N + 1)·b^E <= β``), ``level_slack = 0``.  Several levels:
``(rank_error, level_slack)`` per level is :meth:`MultiQuantile.rank_error_parts
<dpnoise.mechanisms.multi_quantile.MultiQuantile.rank_error_parts>` (the recursion's
steps, the ties broken at random and the derived levels' rounding -- the part that grows
with ``n``).  Both depend on epsilon, the lattice, the level(s), the contribution cap and
``β`` only: no data-dependent quantity enters the bar.

Privacy.  The release is the exponential mechanism alone (one level: McSherry and Talwar,
"Mechanism design via differential privacy", FOCS 2007, with the utility of Smith,
"Privacy-preserving statistical estimation with optimal convergence rates", STOC 2011;
several: Kaplan, Schnapp and Stemmer, "Differentially private approximate quantiles",
ICML 2022, Alg. 1), calibrated to the utility sensitivity ``k·max(Q, D − Q)`` at the
WHOLE quantile epsilon: ``ε``-DP per cell, composed over the ``L0`` cells a person can
change as before.  Nothing else is computed from the data: the bar is the public function
above.  Grouped by keys that are not public, partition selection keeps its half of epsilon
(its own count of persons), and the quantile takes the other half.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .interval_rank import rebuild_rank_plan
from .query import EXTENSIONS, Query, Token, parse_query, tokenize
from .schema import Schema

__all__ = ["BARS", "RankBarQuery", "check_bar", "parse_rank_bar", "rank_bar_note",
           "wants_rank_bar", "with_bar"]

#: the error bars a quantile can carry: ``level`` (default) and ``rank``
BARS = ("level", "rank")
#: the clause's words, at the end of a query
WORDS = ("with", "rank", "bar")


@dataclass(frozen=True)
class RankBarQuery(Query):
    """A quantile query released with its error bar in ranks (see the module docstring)."""

    bar: str = "rank"

    def canonical(self) -> str:
        return Query.canonical(self) + " with rank bar"

    def validate(self, schema: Schema) -> Query:
        """Refuse a statistic that is not a quantile (before anything is read or spent),
        then :meth:`Query.validate`."""
        if self.stat != "quantile":
            raise ParameterError(
                f"bar='rank' ('with rank bar') states a quantile's error bar in ranks; it "
                f"applies to median, quantile and quantiles only, not to {self.stat} (valid "
                f"bar values: {', '.join(BARS)}; 'level' is the default)")
        return Query.validate(self, schema)


def wants_rank_bar(q: Any) -> bool:
    """Whether ``q`` asks for its error bar in ranks."""
    return getattr(q, "bar", "level") == "rank"


def check_bar(bar: Any) -> str | None:
    """``bar`` (None, ``"level"`` or ``"rank"``), or a ParameterError naming it."""
    if bar is not None and (not isinstance(bar, str) or bar not in BARS):
        raise ParameterError(f"bar must be one of {', '.join(map(repr, BARS))} (a quantile's "
                             f"error bar: levels, or ranks without a noisy count), got {bar!r}")
    return bar


def with_bar(q: Query, bar: str | None) -> Query:
    """``q`` with the error bar ``bar`` asked by keyword (None or ``"level"``: as written;
    ``"rank"``: the ``with rank bar`` clause added)."""
    if check_bar(bar) == "level" and wants_rank_bar(q):
        raise ParameterError("bar='level' contradicts the query's 'with rank bar'")
    if bar != "rank" or wants_rank_bar(q):
        return q
    base = {f.name: getattr(q, f.name) for f in fields(Query)}
    return RankBarQuery(**{**base, "text": f"{q.text or q.canonical()} with rank bar"})


def _is_word(t: Token, word: str) -> bool:
    return t.kind in ("ident", "kw") and str(t.value).lower() == word


def parse_rank_bar(text: str) -> RankBarQuery | None:
    """The query of ``text`` when it ends with ``with rank bar`` (the rest parsed by the
    one grammar, its other forms included), else None."""
    toks = tokenize(text)
    if len(toks) <= len(WORDS) + 1 or not all(
            _is_word(t, w) for t, w in zip(toks[-len(WORDS) - 1:-1], WORDS, strict=True)):
        return None
    inner = parse_query(text[:toks[-len(WORDS) - 1].pos])
    if wants_rank_bar(inner):
        raise ParameterError(f"query: 'with rank bar' is given twice in {text!r}")
    base = {f.name: getattr(inner, f.name) for f in fields(Query)}
    return RankBarQuery(**{**base, "text": text})


def rank_bar_note() -> str:
    """How a rank bar reads (one line, public)."""
    return ("rank_error/level_slack: with the stated confidence the released value is an "
            "empirical q-quantile of the cell's snapped values up to a rank error of at most "
            "rank_error + level_slack·n rows (n the cell's rows, not released); no interval "
            "of values or levels is stated")


def rank_bar_parts(rank: Any, beta: float, shape: tuple[int, ...]
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(rank_error, level_slack)`` broadcast to ``shape`` from a rank plan
    (:class:`~dpnoise.session.interval_rank.IntervalRankPlan`, or its recorded
    parameters) at ``1 − beta``."""
    plan = rebuild_rank_plan(rank) if isinstance(rank, dict) else rank
    fixed, slope = plan.rank_bar(beta)
    return (np.broadcast_to(fixed, shape).astype(np.float64),
            np.broadcast_to(slope, shape).astype(np.float64))


EXTENSIONS.insert(0, parse_rank_bar)
