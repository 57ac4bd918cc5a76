"""One declared column of a schema: its public bounds, categories or integer keys.

:class:`Column` checks each fact strictly when it is declared (a string where a number or
boolean belongs is a :class:`~dpnoise.errors.ParameterError`); :class:`~dpnoise.session.
schema.Schema` holds the columns and the data set's facts.  The identifier rules here
(:func:`check_identifier`, :func:`quote_identifier`) are what lets names be quoted into
SQL without any escaping question.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..errors import ParameterError
from ..params import check_interval

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
MAX_CELLS = 50_000_000
#: largest |bound|: 2^53 values at the bound sum to at most 2^1023, a finite double
MAX_BOUND = 2.0**970
#: largest |bound| of a column whose variance or standard deviation is asked: the sum of
#: squares of 2^53 values at the bound, and its sensitivity, stay finite doubles
MAX_POWER_BOUND = 2.0**480
#: largest schema file read (a schema is a few kilobytes)
MAX_SCHEMA_BYTES = 1 << 24
#: deepest nesting of TOML arrays / tables accepted (Python's parser recurses)
MAX_SCHEMA_NESTING = 64
#: smallest nonzero max(|lower|, |upper|): keeps the fixed-point resolution a normal double
MIN_SCALE = 2.0**-960
#: integer keys are exact doubles
MAX_INTEGER_KEY = 2**53
#: the whitespace stripped from both ends of every text before it is compared
_ASCII_WS = " \t\n\v\f\r"


def _number(what: str, value: Any) -> float:
    """A TOML/Python number (int or float, never bool or str), finite, |x| <= MAX_BOUND."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(f"{what} must be a number, got {type(value).__name__} {value!r}")
    x = float(value)
    if not math.isfinite(x) or abs(x) > MAX_BOUND:
        raise ParameterError(
            f"{what} must be a finite number with |value| <= 2^970 (about 9.98e291, so that "
            f"a sum of 2^53 values at the bound stays a finite double), got {value!r}"
        )
    return x


#: the words of the query language (a column named so could never be queried)
QUERY_KEYWORDS = frozenset({
    "select", "from", "where", "group", "by", "and", "or", "not", "in", "between", "is",
    "null", "as", "count", "sum", "mean", "avg", "histogram", "true", "false",
    "median", "quantile", "quantile_cont", "variance", "var_samp", "stddev", "stddev_samp",
})
#: the prefix of dpnoise's own columns in the typed view (the person id is ``__dp_uid``)
RESERVED_PREFIX = "__dp"


def check_column_name(name: Any) -> str:
    """A declared column's name: a plain identifier that is neither a word of the query
    language nor, in any letter case (SQL names are case-insensitive), one of dpnoise's own
    ``__dp...`` columns -- a column ``__dp_uid`` would be read as the person id."""
    check_identifier(name)
    low = name.lower()
    if low in QUERY_KEYWORDS or low.startswith(RESERVED_PREFIX):
        why = "a word of the query language" if low in QUERY_KEYWORDS else \
            f"names starting with {RESERVED_PREFIX} are dpnoise's own columns"
        raise ParameterError(
            f"column name {name!r} is reserved ({why}): declare the column under another "
            f"name, with source = {name!r} naming its header")
    return name


def quote_identifier(name: str) -> str:
    """A double-quoted SQL identifier for any header name (quotes doubled; NUL refused)."""
    if not isinstance(name, str) or not name or "\x00" in name or len(name) > 1024:
        raise ParameterError(f"column source must be a non-empty header name, got {name!r}")
    return '"' + name.replace('"', '""') + '"'


def check_identifier(name: Any, *, what: str = "column name") -> str:
    """A plain SQL identifier (letters, digits, underscore; not starting with a digit).

    Anything else -- quotes, spaces, semicolons, comments -- is refused, so names can be
    quoted into SQL without any escaping question.
    """
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise ParameterError(
            f"{what} must be a plain identifier matching [A-Za-z_][A-Za-z0-9_]* "
            f"(at most 63 characters), got {name!r}"
        )
    return name


@dataclass(frozen=True)
class Column:
    """One declared column: numeric bounds, public categories, or an integer key range."""

    name: str
    lower: float | None = None
    upper: float | None = None
    categories: tuple[Any, ...] | None = None
    integer: bool = False
    source: str | None = None  # header in the file, if not the declared name
    text: bool = False  # keys NOT public: grouped by only through DP partition selection

    def __post_init__(self) -> None:
        check_column_name(self.name)
        if not isinstance(self.text, bool):
            raise ParameterError(
                f"column {self.name!r}: text must be a boolean (true or false), got "
                f"{type(self.text).__name__} {self.text!r}")
        if self.text:
            if self.categories is not None or self.lower is not None or \
                    self.upper is not None or self.integer:
                raise ParameterError(
                    f"column {self.name!r}: a text column (keys not public) takes no "
                    "categories, bounds or integer flag")
            if self.source is not None:
                quote_identifier(self.source)
            return
        if not isinstance(self.integer, bool):
            raise ParameterError(
                f"column {self.name!r}: integer must be a boolean (true or false), got "
                f"{type(self.integer).__name__} {self.integer!r}"
            )
        if self.source is not None:
            quote_identifier(self.source)
        if self.categories is not None:
            if self.lower is not None or self.upper is not None or self.integer:
                raise ParameterError(
                    f"column {self.name!r}: give either categories or lower/upper, not both"
                )
            object.__setattr__(self, "categories",
                               _checked_categories(self.name, self.categories))
            return
        if self.lower is None or self.upper is None:
            raise ParameterError(
                f"column {self.name!r} is unbounded: declare lower and upper (or categories)"
            )
        lo, hi = check_interval(_number(f"column {self.name!r} lower bound", self.lower),
                                _number(f"column {self.name!r} upper bound", self.upper),
                                name=f"column {self.name!r} bounds")
        if max(abs(lo), abs(hi)) < MIN_SCALE:
            raise ParameterError(
                f"column {self.name!r}: max(|lower|, |upper|) must be at least 2^-960, got "
                f"[{lo!r}, {hi!r}]"
            )
        if self.integer:
            if not (lo.is_integer() and hi.is_integer()):
                raise ParameterError(
                    f"column {self.name!r}: integer key bounds must be integers, got [{lo}, {hi}]"
                )
            if max(abs(lo), abs(hi)) > MAX_INTEGER_KEY:
                raise ParameterError(
                    f"column {self.name!r}: integer key bounds must lie in [-2^53, 2^53], got "
                    f"[{lo:g}, {hi:g}]"
                )
            if hi - lo + 1 > MAX_CELLS:
                raise ParameterError(
                    f"column {self.name!r}: at most {MAX_CELLS} integer keys, got {hi - lo + 1:g}"
                )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def is_numeric(self) -> bool:
        return self.categories is None and not self.text

    @property
    def header(self) -> str:
        """The column's name in the file (``source`` if declared, else its name)."""
        return self.source if self.source is not None else self.name

    @property
    def kind(self) -> str:
        """``categorical``, ``integer key`` or ``numeric`` (used in error messages)."""
        if self.categories is not None:
            return "categorical"
        if self.text:
            return "text"
        return "integer key" if self.integer else "numeric"

    @property
    def can_group(self) -> bool:
        """Public keys exist: declared categories or an integer key range."""
        return self.categories is not None or self.integer

    @property
    def private_keys(self) -> bool:
        """Keys not public (``text = true``): GROUP BY it releases only the groups that
        survive DP partition selection."""
        return self.text

    def keys(self) -> tuple[Any, ...] | range:
        """The public group keys (categories, or every integer in [lower, upper])."""
        if self.categories is not None:
            return self.categories
        if self.integer:
            assert self.lower is not None and self.upper is not None
            return range(int(self.lower), int(self.upper) + 1)
        raise ParameterError(
            f"column {self.name!r} has no public keys: declare categories or integer = true "
            "to group by it"
        )

    def n_keys(self) -> int:
        return len(self.keys())

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any]
        if self.text:
            d = {"text": True}
        elif self.categories is not None:
            d = {"categories": list(self.categories)}
        else:
            d = {"lower": self.lower, "upper": self.upper}
            if self.integer:
                d["integer"] = True
        if self.source is not None:
            d["source"] = self.source
        return d


def _checked_categories(name: str, categories: Any) -> tuple[Any, ...]:
    """A column's public categories: non-empty, all strings or all finite numbers,
    distinct, and (strings) able to match a stripped, non-empty cell."""
    cats = tuple(categories)
    if not cats:
        raise ParameterError(f"column {name!r}: categories must be non-empty")
    for c in cats:
        if isinstance(c, bool) or not isinstance(c, (str, int, float)):
            raise ParameterError(
                f"column {name!r}: categories must be strings or numbers, got {c!r}"
            )
    kinds = {isinstance(c, str) for c in cats}
    if len(kinds) > 1:
        raise ParameterError(
            f"column {name!r}: categories must be all strings or all numbers"
        )
    dead = [c for c in cats if isinstance(c, str) and (not c or c != c.strip(_ASCII_WS))]
    if dead:  # a cell is compared stripped, and empty text is missing
        raise ParameterError(
            f"column {name!r}: category {dead[0]!r} could never match a value "
            "(text is compared without its outer whitespace; empty text is missing)")
    if not isinstance(cats[0], str):
        for c in cats:
            _number(f"column {name!r} category", c)
        if len({float(c) for c in cats}) != len(cats):
            raise ParameterError(f"column {name!r}: categories must be distinct")
    if len({str(c) for c in cats}) != len(cats):
        raise ParameterError(f"column {name!r}: categories must be distinct")
    return cats
