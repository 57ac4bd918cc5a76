"""The queries a custodian may answer: one aggregate, optionally filtered and grouped.

Two spellings parse to the same :class:`Query`:

* the small language::

      count
      count where age > 30 and smoker = 1
      sum income where region in ('north', 'east')
      mean age by region
      histogram region                    (= count by region)

* an SQL subset::

      SELECT COUNT(*) FROM data WHERE age > 30
      SELECT region, AVG(income) FROM data WHERE smoker = 0 GROUP BY region

Only COUNT(*) / COUNT(col), SUM(col), MEAN/AVG(col), VARIANCE/VAR_SAMP(col),
STDDEV/STDDEV_SAMP(col), MEDIAN(col) and QUANTILE_CONT(col, q) of a *declared, bounded*
column are allowed (small language: ``variance x``, ``stddev x``, ``median x``,
``quantile 0.9 x``), grouped by columns with *declared public keys* -- or by ONE column
declared ``text = true`` (keys not public: only groups surviving DP partition selection
are released).  Predicates are
conjunctions / disjunctions / negations of ``col OP literal``, ``col [NOT] IN (...)``,
``col [NOT] BETWEEN a AND b`` and ``col IS [NOT] NULL`` on declared columns.

Safety: the tokenizer accepts only plain identifiers, numbers, single-quoted strings,
comparison operators, parentheses, commas and ``*``; quoted identifiers, semicolons,
comments and everything else are refused.  Identifiers are then checked against the
schema and literals are passed to DuckDB as bound parameters, never spliced into SQL.
All of this happens before any privacy budget is touched.

Why this file is long (~580 lines): the query language's and the SQL subset's parsers
share one grammar, one validator and one set of error messages; they stay together.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ParameterError
from .columns import MAX_CELLS, MAX_POWER_BOUND, QUERY_KEYWORDS, check_identifier
from .quantile_query import check_levels, small_quantiles, sql_levels
from .query_clauses import where_and_by
from .schema import Schema

Stat = Literal["count", "sum", "mean", "variance", "stddev", "quantile", "distinct"]
#: statistics of a bounded numeric column
NUMERIC_STATS = ("sum", "mean", "variance", "stddev", "quantile")

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
      | (?P<str>'(?:[^']|'')*')
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<op><=|>=|<>|!=|==|=|<|>)
      | (?P<punct>[(),*\[\]])
    )""",
    re.VERBOSE,
)
_AGG = {"count": "count", "sum": "sum", "mean": "mean", "avg": "mean", "median": "quantile",
        "quantile": "quantile", "quantile_cont": "quantile", "variance": "variance",
        "var_samp": "variance", "stddev": "stddev", "stddev_samp": "stddev"}
#: aggregates people ask for that have no honest bounded-sensitivity release here
UNSUPPORTED_AGGREGATES = {
    "min", "max", "quantile_disc", "percentile",
    "percentile_cont", "percentile_disc", "mode", "stddev_pop",
    "var_pop", "var", "std", "first", "last", "any_value",
    "arg_max", "arg_min", "string_agg", "list", "array_agg", "product", "range",
}
#: what the refusal of an unsupported aggregate says is released instead (every entry of _AGG)
SUPPORTED_AGGREGATES = (
    "the released statistics are COUNT, SUM, AVG/MEAN, VARIANCE/VAR_SAMP, STDDEV/STDDEV_SAMP, "
    "MEDIAN and QUANTILE/QUANTILE_CONT of a bounded column"
)
#: deepest nesting of parentheses / NOT a predicate may have
MAX_DEPTH = 64
#: parsers of other forms, tried first (``count distinct persons``: session/distinct.py)
EXTENSIONS: list[Any] = []
_OPS = {"=": "=", "==": "=", "!=": "<>", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass(frozen=True)
class Token:
    kind: str  # num, str, ident, kw, op, punct, end
    value: Any
    pos: int


def tokenize(text: str) -> list[Token]:
    if not isinstance(text, str) or not text.strip():
        raise ParameterError("query must be a non-empty string")
    if len(text) > 20_000:
        raise ParameterError("query is too long (at most 20000 characters)")
    out: list[Token] = []
    pos = 0
    n = len(text)
    while pos < n:
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            bad = text[pos:].lstrip()[:1]
            raise ParameterError(
                f"query: unexpected character {bad!r} at position {pos}; only identifiers, "
                "numbers, 'strings', comparisons, parentheses, commas and * are allowed "
                "(no quoted identifiers, semicolons or comments)"
            )
        kind = m.lastgroup
        raw = m.group(kind)  # type: ignore[arg-type]
        start = m.start(kind)  # type: ignore[arg-type]
        if kind == "num":
            val: Any = float(raw)
            if not math.isfinite(val):
                raise ParameterError(f"query: number {raw!r} is not finite")
            if re.fullmatch(r"-?\d+", raw):
                val = int(raw)
            out.append(Token("num", val, start))
        elif kind == "str":
            out.append(Token("str", raw[1:-1].replace("''", "'"), start))
        elif kind == "ident":
            low = raw.lower()
            out.append(Token("kw", low, start) if low in QUERY_KEYWORDS
                       else Token("ident", raw, start))
        else:
            out.append(Token(kind, raw, start))  # type: ignore[arg-type]
        pos = m.end()
    out.append(Token("end", None, n))
    return out


# ------------------------------------------------------------------ predicates
@dataclass(frozen=True)
class Compare:
    column: str
    op: str
    value: Any


@dataclass(frozen=True)
class InList:
    column: str
    values: tuple[Any, ...]
    negate: bool = False


@dataclass(frozen=True)
class Between:
    column: str
    low: Any
    high: Any
    negate: bool = False


@dataclass(frozen=True)
class IsNull:
    column: str
    negate: bool = False


@dataclass(frozen=True)
class Not:
    arg: Predicate


@dataclass(frozen=True)
class BoolOp:
    op: Literal["AND", "OR"]
    args: tuple[Predicate, ...]


Predicate = Compare | InList | Between | IsNull | Not | BoolOp


def predicate_columns(p: Predicate | None) -> set[str]:
    if p is None:
        return set()
    if isinstance(p, Not):
        return predicate_columns(p.arg)
    if isinstance(p, BoolOp):
        return set().union(*(predicate_columns(a) for a in p.args))
    return {p.column}


def predicate_sql(p: Predicate, params: dict[str, Any]) -> str:
    """SQL text for a predicate: identifiers double-quoted (already validated as plain),
    literals as named parameters ``$p0, $p1, ...`` collected in ``params``."""

    def lit(v: Any) -> str:
        key = f"p{len(params)}"
        params[key] = v
        return f"${key}"

    def col(name: str) -> str:
        return '"' + check_identifier(name) + '"'

    if isinstance(p, Compare):
        return f"({col(p.column)} {p.op} {lit(p.value)})"
    if isinstance(p, InList):
        items = ", ".join(lit(v) for v in p.values)
        return f"({col(p.column)} {'NOT IN' if p.negate else 'IN'} ({items}))"
    if isinstance(p, Between):
        word = "NOT BETWEEN" if p.negate else "BETWEEN"
        return f"({col(p.column)} {word} {lit(p.low)} AND {lit(p.high)})"
    if isinstance(p, IsNull):
        return f"({col(p.column)} IS {'NOT NULL' if p.negate else 'NULL'})"
    if isinstance(p, Not):
        return f"(NOT {predicate_sql(p.arg, params)})"
    if isinstance(p, BoolOp):
        return "(" + f" {p.op} ".join(predicate_sql(a, params) for a in p.args) + ")"
    raise TypeError(p)  # pragma: no cover


def predicate_text(p: Predicate | None) -> str:
    """Canonical text (used in the ledger key, so equal queries compare equal)."""
    if p is None:
        return ""

    def lit(v: Any) -> str:
        return "'" + v.replace("'", "''") + "'" if isinstance(v, str) else repr(v)

    if isinstance(p, Compare):
        return f"{p.column} {p.op} {lit(p.value)}"
    if isinstance(p, InList):
        return f"{p.column} {'not in' if p.negate else 'in'} ({', '.join(map(lit, p.values))})"
    if isinstance(p, Between):
        return (f"{p.column} {'not between' if p.negate else 'between'} "
                f"{lit(p.low)} and {lit(p.high)}")
    if isinstance(p, IsNull):
        return f"{p.column} is {'not null' if p.negate else 'null'}"
    if isinstance(p, Not):
        return f"not ({predicate_text(p.arg)})"
    return "(" + f" {p.op.lower()} ".join(predicate_text(a) for a in p.args) + ")"


# ----------------------------------------------------------------------- query
@dataclass(frozen=True)
class Query:
    """One aggregate: ``stat`` of ``column`` over rows matching ``where``, per ``group_by``."""

    stat: Stat
    column: str | None
    where: Predicate | None = None
    group_by: tuple[str, ...] = ()
    text: str = ""
    source: str | None = None  # the FROM table of the SQL form
    quantile: float | tuple[float, ...] | None = None  # level(s) of a quantile (median: 0.5)

    def canonical(self) -> str:
        s = self.stat + (f" {self.quantile!r}" if self.stat == "quantile" else "") + \
            (f" {self.column}" if self.column else "")
        if self.group_by:
            s += " by " + ", ".join(self.group_by)
        if self.where is not None:
            s += " where " + predicate_text(self.where)
        return s

    def columns(self) -> set[str]:
        cols = set(self.group_by) | predicate_columns(self.where)
        if self.column is not None:
            cols.add(self.column)
        return cols

    def validate(self, schema: Schema) -> Query:
        """Type-check against the schema, before any data is read or budget spent: unknown
        / unbounded columns, non-public group keys, and literals of the wrong type for a
        column (a number against a categorical column of strings, a string against a
        numeric one) are refused with a ParameterError naming the column and its type."""
        for name in sorted(self.columns()):
            schema.column(name)
        if self.stat in NUMERIC_STATS:
            if self.column is None:
                raise ParameterError(f"{self.stat.upper()} needs a column, e.g. {self.stat} age")
            col = schema.numeric(self.column)
            if self.stat in ("variance", "stddev") and \
                    max(abs(col.lower), abs(col.upper)) > MAX_POWER_BOUND:  # type: ignore[arg-type]
                raise ParameterError(
                    f"{self.stat} of column {self.column!r}: its bounds [{col.lower:g}, "
                    f"{col.upper:g}] exceed 2^480 (about 3.1e144) in absolute value, where "
                    "the sum of squares of 2^53 values stops being a finite double; declare "
                    "tighter bounds")
        if self.stat == "quantile":
            check_levels(self.quantile)
        if self.stat == "count" and self.column and schema.column(self.column).text:
            raise ParameterError(  # its values were cast to numbers: data-dependent failure
                f"count {self.column}: column {self.column!r} is text (keys not public); count "
                f"its rows that have a value with: count where {self.column} is not null")
        private = [g for g in self.group_by if schema.column(g).private_keys]
        if private and len(self.group_by) > 1:
            raise ParameterError(
                f"grouping by {private[0]!r} (keys not public: DP partition selection) is "
                "supported for one GROUP BY column alone")
        if len(set(self.group_by)) != len(self.group_by):
            raise ParameterError("GROUP BY lists a column twice")
        cells = 1
        for g in self.group_by:
            col = schema.column(g)
            if col.private_keys:
                continue
            if not col.can_group:
                raise ParameterError(
                    f"cannot group by {g!r}: its keys are not declared public (declare "
                    "categories, or integer = true with lower/upper, in the schema)"
                )
            cells *= col.n_keys()
        if cells > MAX_CELLS:
            raise ParameterError(f"GROUP BY would release {cells} cells; at most {MAX_CELLS}")
        _check_literals(self.where, schema)
        return self


def _check_literals(p: Predicate | None, schema: Schema) -> None:
    if p is None:
        return
    if isinstance(p, Not):
        _check_literals(p.arg, schema)
        return
    if isinstance(p, BoolOp):
        for a in p.args:
            _check_literals(a, schema)
        return
    col = schema.column(p.column)
    if col.text and not isinstance(p, IsNull):
        # a comparison with its stripped text would be decided by the data (a number: a cast)
        raise ParameterError(
            f"column {p.column!r} is text (declared type: text = true, keys not public): "
            "it can be grouped by or tested with IS [NOT] NULL, not compared with a value")
    vals: tuple[Any, ...] = ()
    if isinstance(p, Compare):
        vals = (p.value,)
    elif isinstance(p, InList):
        vals = p.values
    elif isinstance(p, Between):
        vals = (p.low, p.high)
    for v in vals:
        kind = "a boolean" if isinstance(v, bool) else (
            "a string" if isinstance(v, str) else "a number")
        if col.categories is None:
            if kind != "a number":
                lo, hi = col.lower, col.upper
                raise ParameterError(
                    f"column {p.column!r} is {col.kind} (declared type: number in "
                    f"[{lo:g}, {hi:g}]): compare it with a number, got {kind} {v!r}"
                )
        else:
            want = "a string" if isinstance(col.categories[0], str) else "a number"
            if kind != want:
                raise ParameterError(
                    f"column {p.column!r} is categorical (declared type: categories that are "
                    f"{'strings' if want == 'a string' else 'numbers'}): compare it with "
                    f"{want}, got {kind} {v!r}"
                )


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.depth = 0

    # helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def take(self) -> Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def is_kw(self, *words: str) -> bool:
        return self.tok.kind == "kw" and self.tok.value in words

    def expect_kw(self, word: str) -> None:
        if not self.is_kw(word):
            self.fail(f"expected {word.upper()}")
        self.i += 1

    def expect_punct(self, p: str) -> None:
        if not (self.tok.kind == "punct" and self.tok.value == p):
            self.fail(f"expected {p!r}")
        self.i += 1

    def fail(self, msg: str) -> None:
        t = self.tok
        where = "end of query" if t.kind == "end" else f"{t.value!r} at position {t.pos}"
        raise ParameterError(f"query: {msg}, found {where} in {self.text!r}")

    def ident(self) -> str:
        t = self.tok
        if t.kind != "ident":
            self.fail("expected a column name")
        self.i += 1
        return check_identifier(t.value)

    def literal(self) -> Any:
        t = self.tok
        if t.kind in ("num", "str"):
            self.i += 1
            return t.value
        if t.kind == "kw" and t.value in ("true", "false"):
            self.i += 1
            return t.value == "true"
        self.fail("expected a literal (number or 'string')")
        return None  # pragma: no cover

    # grammar
    def parse(self) -> Query:
        q = self.sql() if self.is_kw("select") else self.small()
        if self.tok.kind != "end":
            self.fail("unexpected trailing input")
        return q

    def small(self) -> Query:
        self.unsupported()
        if self.tok.kind == "ident" and self.tok.value.lower() == "quantiles":
            c, w, g, lv = small_quantiles(self)
            return Query("quantile", c, w, g, self.text, quantile=lv)
        t = self.take()
        if t.kind != "kw" or t.value not in ("count", "sum", "mean", "avg", "histogram",
                                             "median", "quantile", "variance", "stddev"):
            self.i -= 1
            self.fail("a query starts with count, sum, mean, variance, stddev, median, "
                      "quantile, histogram or SELECT")
        column: str | None = None
        group: tuple[str, ...] = ()
        level: float | None = 0.5 if t.value == "median" else None
        if t.value == "histogram":
            stat: Stat = "count"
            group = self.ident_list()
        else:
            stat = _AGG[t.value]  # type: ignore[assignment]
            if t.value == "quantile":
                if self.tok.kind != "num":
                    self.fail("expected the level, e.g. quantile 0.9 income")
                level = float(self.take().value)
            if self.tok.kind == "ident":
                column = self.ident()
            elif self.tok.kind == "punct" and self.tok.value == "*":
                self.i += 1
        where, group = where_and_by(self, group)
        return Query(stat, column, where, group, self.text, quantile=level)

    def ident_list(self) -> tuple[str, ...]:
        names = [self.ident()]
        while self.tok.kind == "punct" and self.tok.value == ",":
            self.i += 1
            names.append(self.ident())
        return tuple(names)

    def sql(self) -> Query:
        self.expect_kw("select")
        keys: list[str] = []
        agg: tuple[Stat, str | None, float | None] | None = None
        while True:
            nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else self.tok
            if nxt.kind == "punct" and nxt.value == "(":
                self.unsupported()
            if self.tok.kind == "ident":
                keys.append(self.ident())
            elif self.is_kw(*_AGG):
                if agg is not None:
                    self.fail("only one aggregate per query")
                agg = self.aggregate()
                if self.is_kw("as"):
                    self.i += 1
                    self.ident()
            else:
                self.fail("SELECT lists group keys and one aggregate: COUNT, SUM, AVG or MEAN "
                          "(non-aggregate queries are refused)")
            if self.tok.kind == "punct" and self.tok.value == ",":
                self.i += 1
                continue
            break
        if agg is None:
            self.fail("non-aggregate SELECT is refused: select COUNT, SUM, AVG or MEAN")
        self.expect_kw("from")
        source = self.ident()  # the session's data set (checked by the session)
        where = None
        group: tuple[str, ...] = ()
        if self.is_kw("where"):
            self.i += 1
            where = self.predicate()
        if self.is_kw("group"):
            self.i += 1
            self.expect_kw("by")
            group = self.ident_list()
        if sorted(keys) != sorted(group):
            raise ParameterError(
                f"query: selected keys {keys} must be exactly the GROUP BY columns {list(group)}"
            )
        assert agg is not None
        return Query(agg[0], agg[1], where, tuple(group), self.text, source, agg[2])

    def aggregate(self) -> tuple[Stat, str | None, float | None]:
        word = self.take().value
        name = _AGG[word]
        self.expect_punct("(")
        column: str | None = None
        if self.tok.kind == "punct" and self.tok.value == "*":
            if name != "count":
                self.fail(f"{name.upper()}(*) is not defined; name a column")
            self.i += 1
        else:
            column = self.ident()
        level: float | None = 0.5 if word == "median" else None
        if word in ("quantile", "quantile_cont"):
            self.expect_punct(",")
            level = sql_levels(self)  # type: ignore[assignment]
        self.expect_punct(")")
        return name, column, level  # type: ignore[return-value]

    def predicate(self) -> Predicate:
        args = [self.conjunction()]
        while self.is_kw("or"):
            self.i += 1
            args.append(self.conjunction())
        return args[0] if len(args) == 1 else BoolOp("OR", tuple(args))

    def conjunction(self) -> Predicate:
        args = [self.negation()]
        while self.is_kw("and"):
            self.i += 1
            args.append(self.negation())
        return args[0] if len(args) == 1 else BoolOp("AND", tuple(args))

    def negation(self) -> Predicate:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ParameterError(
                f"query: predicates may nest at most {MAX_DEPTH} levels of parentheses / NOT"
            )
        try:
            if self.is_kw("not"):
                self.i += 1
                return Not(self.negation())
            if self.tok.kind == "punct" and self.tok.value == "(":
                self.i += 1
                p = self.predicate()
                self.expect_punct(")")
                return p
            return self.atom()
        finally:
            self.depth -= 1

    def unsupported(self) -> None:
        """Refuse a known aggregate that dpnoise does not release, by its name."""
        t = self.tok
        if t.kind == "ident" and t.value.lower() in UNSUPPORTED_AGGREGATES:
            raise ParameterError(
                f"query: unsupported aggregate {t.value.upper()}: {SUPPORTED_AGGREGATES}"
            )

    def atom(self) -> Predicate:
        column = self.ident()
        negate = False
        if self.is_kw("is"):
            self.i += 1
            if self.is_kw("not"):
                self.i += 1
                negate = True
            self.expect_kw("null")
            return IsNull(column, negate)
        if self.is_kw("not"):
            self.i += 1
            negate = True
            if not self.is_kw("in", "between"):
                self.fail("expected IN or BETWEEN after NOT")
        if self.is_kw("in"):
            self.i += 1
            self.expect_punct("(")
            vals = [self.literal()]
            while self.tok.kind == "punct" and self.tok.value == ",":
                self.i += 1
                vals.append(self.literal())
            self.expect_punct(")")
            return InList(column, tuple(vals), negate)
        if self.is_kw("between"):
            self.i += 1
            low = self.literal()
            self.expect_kw("and")
            high = self.literal()
            return Between(column, low, high, negate)
        if self.tok.kind != "op":
            self.fail("expected a comparison (=, <>, <, <=, >, >=, IN, BETWEEN, IS NULL)")
        op = _OPS[self.take().value]
        return Compare(column, op, self.literal())


def parse_query(text: str, schema: Schema | None = None) -> Query:
    """Parse (and, with a schema, validate) a query; raises ParameterError on anything else."""
    q = next(filter(None, (f(text) for f in EXTENSIONS)), None) or _Parser(text).parse()
    return q.validate(schema) if schema is not None else q
