"""Public facts about a data set, declared once by the custodian: the schema.

Privacy needs bounds that do not depend on the data.  A schema declares, per column,
either a numeric range ``[lower, upper]`` (values are clamped into it, so one row moves a
sum by at most ``max(|lower|, |upper|)``), a list of public ``categories`` (the only keys a
histogram / GROUP BY may release), or an integer range used as keys (``integer = true``:
every integer in ``[lower, upper]`` is a public key).  Columns not declared cannot be used
in a query at all.

Dataset-level facts (all optional):

* ``table``: the table inside a ``.duckdb`` file;
* ``user_id`` and ``max_contributions`` (k): if one individual may own several rows,
  name the column that identifies them; each individual then contributes at most ``k``
  rows to any statistic (rows beyond ``k`` are dropped deterministically, per individual).
  Without ``user_id`` every row is one individual (``k = 1``);
* ``max_rows``: a public upper bound ``N`` on the number of rows.  Counts are released in
  ``[0, N]`` and sums in the range it implies; without it, counts live on ``[0, ∞)``.

Column-level facts: ``lower``/``upper`` (finite TOML numbers with ``|bound| <= 2^970``, so
that a sum of 2^53 values at the bound is still a finite double), ``categories`` (all
strings or all numbers), ``integer`` (a TOML boolean: ``integer = "false"`` is an error,
never read as true) and ``source``: the header of the column in the file when it is not
a plain identifier (``[columns.hours_per_week]`` with ``source = "hours-per-week"``);
queries use the declared name.  Types are checked strictly: a string where a number or
boolean belongs is a :class:`~dpnoise.errors.ParameterError` at schema time.

TOML form (``tomllib``)::

    [dataset]
    user_id = "person_id"        # optional
    max_contributions = 1        # optional, default 1
    max_rows = 5000              # optional public bound N

    [columns.age]
    lower = 18
    upper = 95

    [columns.region]
    categories = ["north", "south", "east", "west"]

    [columns.zip]                # integer keys 10000..99999, all public
    integer = true
    lower = 10000
    upper = 99999

Flag form (CLI): ``--bounds age=18:95 --categories region=north,south,east,west``.
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParameterError
from ..params import check_int
from .columns import (
    MAX_SCHEMA_BYTES,
    MAX_SCHEMA_NESTING,
    Column,
    check_identifier,
    quote_identifier,
)


@dataclass(frozen=True)
class Schema:
    """All public facts: declared columns plus dataset-level bounds (see module docstring).

    Parameters
    ----------
    columns : mapping of str to Column
        The declared columns (only these can be queried).
    user_id : str or None, default None
        The column naming the person who owns a row.
    max_contributions : int, default 1
        Rows one person may contribute to a statistic (k).
    max_rows : int or None, default None
        A public upper bound N on the number of rows.
    table : str or None, default None
        The table inside a ``.duckdb`` file.
    max_groups : int or None, default None
        Groups one person may contribute to in a GROUP BY (G).
    max_rows_per_group : int or None, default None
        Rows one person may contribute to one group (R).
    extra : mapping, default {}
        The dataset's name and description (not compared).

    Raises
    ------
    ParameterError
        If a fact is of the wrong type or out of range, or the caps are inconsistent.
    """

    columns: Mapping[str, Column]
    user_id: str | None = None
    max_contributions: int = 1
    max_rows: int | None = None
    table: str | None = None
    max_groups: int | None = None
    max_rows_per_group: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        cols = dict(self.columns)
        for key, col in cols.items():
            if key != col.name:
                raise ParameterError(f"schema column key {key!r} != column name {col.name!r}")
        by_case: dict[str, str] = {}
        for key in cols:  # SQL names are case-insensitive: x and X would be one column
            if by_case.setdefault(key.lower(), key) != key:
                raise ParameterError(
                    f"columns {by_case[key.lower()]!r} and {key!r} differ only in letter case, "
                    "which SQL does not tell apart: rename one (source = ... names its header)")
        object.__setattr__(self, "columns", cols)
        if self.user_id is not None:
            if not isinstance(self.user_id, str):
                raise ParameterError(f"user_id must be a string, got {self.user_id!r}")
            quote_identifier(self.user_id)
        if isinstance(self.max_contributions, bool):
            raise ParameterError("max_contributions must be an integer, got a boolean")
        if isinstance(self.max_rows, bool):
            raise ParameterError("max_rows must be an integer, got a boolean")
        k = check_int("max_contributions", self.max_contributions, lower=1, upper=1_000_000)
        object.__setattr__(self, "max_contributions", k)
        if self.user_id is None and k != 1:
            raise ParameterError(
                "max_contributions > 1 needs a user_id column (without it each row is one "
                "individual)"
            )
        if (self.max_groups is None) != (self.max_rows_per_group is None):
            raise ParameterError("declare max_groups and max_rows_per_group together")
        if self.max_groups is not None:
            for name in ("max_groups", "max_rows_per_group"):
                v = getattr(self, name)
                if isinstance(v, bool):
                    raise ParameterError(f"{name} must be an integer, got a boolean")
                object.__setattr__(self, name, check_int(name, v, lower=1, upper=1_000_000))
            if self.user_id is None:
                raise ParameterError(
                    "max_groups / max_rows_per_group need a user_id column (without it "
                    "each row is one individual: one group, one row)")
        if self.max_rows is not None:
            n = check_int("max_rows", self.max_rows, lower=1, upper=2**50)
            object.__setattr__(self, "max_rows", n)
        if self.table is not None:
            check_identifier(self.table, what="table")

    # ------------------------------------------------------------- construction
    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Schema:
        """A schema from a mapping shaped like the TOML file (``dataset`` and ``columns``).

        Parameters
        ----------
        doc : mapping
            The parsed document.

        Returns
        -------
        Schema
            The schema.

        Raises
        ------
        ParameterError
            If a key is unknown or a value is invalid.
        """
        if not isinstance(doc, Mapping):
            raise ParameterError(f"schema must be a table with [dataset] and [columns.NAME], "
                                 f"got {type(doc).__name__}")
        for section in ("dataset", "columns"):
            if not isinstance(doc.get(section, {}), Mapping):
                raise ParameterError(
                    f"schema {section} must be a table ([{section}]"
                    + ("" if section == "dataset" else " with [columns.NAME] under it")
                    + f"), got {type(doc[section]).__name__}")
        unknown = set(doc) - {"dataset", "columns"}
        if unknown:
            raise ParameterError(f"schema: unknown sections {sorted(unknown)}; use [dataset] "
                                 "and [columns.NAME]")
        ds = dict(doc.get("dataset", {}))
        allowed = {"user_id", "max_contributions", "max_rows", "table", "name", "description",
                   "max_groups", "max_rows_per_group"}
        bad = set(ds) - allowed
        if bad:
            raise ParameterError(f"schema [dataset]: unknown keys {sorted(bad)}; allowed "
                                 f"{sorted(allowed)}")
        columns: dict[str, Column] = {}
        for name, spec in dict(doc.get("columns", {})).items():
            if not isinstance(spec, Mapping):
                raise ParameterError(f"schema column {name!r} must be a table of settings")
            bad = set(spec) - {"lower", "upper", "categories", "integer", "description",
                               "source", "text"}
            if bad:
                raise ParameterError(f"schema column {name!r}: unknown keys {sorted(bad)}")
            cats = spec.get("categories")
            if cats is not None and not isinstance(cats, (list, tuple)):
                raise ParameterError(f"schema column {name!r}: categories must be a list")
            source = spec.get("source")
            if source is not None and not isinstance(source, str):
                raise ParameterError(f"schema column {name!r}: source must be a string "
                                     f"(the column's header in the file), got {source!r}")
            columns[name] = Column(
                name=name,
                lower=spec.get("lower"),
                upper=spec.get("upper"),
                categories=None if cats is None else tuple(cats),
                integer=spec.get("integer", False),
                source=source,
                text=spec.get("text", False),
            )
        return cls(
            columns=columns,
            user_id=ds.get("user_id"),
            max_contributions=ds.get("max_contributions", 1),
            max_rows=ds.get("max_rows"),
            table=ds.get("table"),
            max_groups=ds.get("max_groups"),
            max_rows_per_group=ds.get("max_rows_per_group"),
            extra={k: ds[k] for k in ("name", "description") if k in ds},
        )

    @classmethod
    def from_toml(cls, path: str | Path) -> Schema:
        """A schema from a TOML file.

        Parameters
        ----------
        path : str or pathlib.Path
            The file.

        Returns
        -------
        Schema
            The schema.

        Raises
        ------
        ParameterError
            If the file cannot be read or parsed, or a fact is invalid.
        """
        p = Path(path)
        text = _read_schema_text(p)
        if _nesting(text) > MAX_SCHEMA_NESTING:
            raise ParameterError(f"schema file {str(p)!r} nests arrays or tables more than "
                                 f"{MAX_SCHEMA_NESTING} deep")
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ParameterError(f"schema file {str(p)!r} is not valid TOML: {exc}") from None
        except RecursionError:  # pragma: no cover - the nesting check comes first
            raise ParameterError(f"schema file {str(p)!r} nests too deep") from None
        return cls.from_dict(doc)

    @classmethod
    def from_flags(
        cls,
        bounds: Iterable[str] = (),
        categories: Iterable[str] = (),
        keys: Iterable[str] = (),
        *,
        user_id: str | None = None,
        max_contributions: int = 1,
        max_rows: int | None = None,
        table: str | None = None,
        base: Schema | None = None,
        texts: Iterable[str] = (),
        max_groups: int | None = None,
        max_rows_per_group: int | None = None,
    ) -> Schema:
        """``bounds``: ``col=lo:hi``; ``categories``: ``col=a,b,c``; ``keys``: ``col=lo:hi``
        integer keys.  Flags override the same columns of ``base`` (a schema file).

        Parameters
        ----------
        bounds : iterable of str, default ()
            ``col=lo:hi`` numeric bounds.
        categories : iterable of str, default ()
            ``col=a,b,c`` public categories.
        keys : iterable of str, default ()
            ``col=lo:hi`` integer keys.
        user_id : str or None, default None
            The person-id column.
        max_contributions : int, default 1
            The contribution cap k.
        max_rows : int or None, default None
            The public row bound N.
        table : str or None, default None
            The table inside a ``.duckdb`` file.
        base : Schema or None, default None
            A schema the flags override.
        texts : iterable of str, default ()
            Columns whose keys are not public.
        max_groups, max_rows_per_group : int or None, default None
            The L0 / L-infinity caps.

        Returns
        -------
        Schema
            The schema.
        """
        cols: dict[str, Column] = dict(base.columns) if base else {}

        def source(name: str) -> str | None:  # a flag keeps the base column's source
            return cols[name].source if name in cols else None

        for spec in bounds:
            name, lo, hi = _split_range(spec, "--bounds")
            cols[name] = Column(name, lower=lo, upper=hi, source=source(name))
        for spec in keys:
            name, lo, hi = _split_range(spec, "--keys")
            cols[name] = Column(name, lower=lo, upper=hi, integer=True, source=source(name))
        for name in texts:
            cols[name.strip()] = Column(name.strip(), text=True, source=source(name.strip()))
        for spec in categories:
            name, _, rest = spec.partition("=")
            if not rest:
                raise ParameterError(f"--categories must look like col=a,b,c, got {spec!r}")
            cols[name.strip()] = Column(
                name.strip(), categories=tuple(c.strip() for c in rest.split(",")),
                source=source(name.strip()),
            )
        return cls(
            columns=cols,
            user_id=user_id if user_id is not None else (base.user_id if base else None),
            max_contributions=(max_contributions if max_contributions != 1 or base is None
                               else base.max_contributions),
            max_rows=max_rows if max_rows is not None else (base.max_rows if base else None),
            table=table if table is not None else (base.table if base else None),
            max_groups=max_groups if max_groups is not None else (
                base.max_groups if base else None),
            max_rows_per_group=max_rows_per_group if max_rows_per_group is not None else (
                base.max_rows_per_group if base else None),
        )

    # ------------------------------------------------------------------ lookups
    def column(self, name: str) -> Column:
        """The declared column ``name``.

        Parameters
        ----------
        name : str
            A column name.

        Returns
        -------
        Column
            Its declaration.

        Raises
        ------
        ParameterError
            If the column is not declared.
        """
        check_identifier(name)
        try:
            return self.columns[name]
        except KeyError:
            raise ParameterError(
                f"unknown column {name!r}: only declared columns can be queried "
                f"(declared: {', '.join(sorted(self.columns)) or 'none'})"
            ) from None

    def bounds(self, grouped: bool) -> tuple[int, int, int]:
        """Per-person contribution bounds ``(L1, Linf, cells)`` of a statistic: rows one
        person can add in total, rows one person can add to ONE cell, cells one person
        can touch.  Grouped queries with ``max_groups`` G and ``max_rows_per_group`` R
        declared use ``(G·R, R, G)`` (Tumult-style L0 / L-infinity bounding); otherwise
        ``(k, k, k)`` with ``k = max_contributions`` (1 without a user_id).

        Parameters
        ----------
        grouped : bool
            Whether the query has a GROUP BY.

        Returns
        -------
        tuple of int
            ``(L1, Linf, cells)``.
        """
        if grouped and self.max_groups is not None:
            g, r = int(self.max_groups), int(self.max_rows_per_group)  # type: ignore[arg-type]
            return g * r, r, g
        k = int(self.max_contributions)
        return k, k, k

    def numeric(self, name: str) -> Column:
        """The declared numeric column ``name`` (one with bounds).

        Parameters
        ----------
        name : str
            A column name.

        Returns
        -------
        Column
            Its declaration.

        Raises
        ------
        ParameterError
            If the column is not declared or not numeric.
        """
        col = self.column(name)
        if not col.is_numeric:
            raise ParameterError(
                f"column {name!r} is {col.kind}: it has no numeric bounds to sum or average"
            )
        return col

    def user_header(self) -> str | None:
        """The file header of the ``user_id`` column (a declared column's ``source`` if the
        user_id names a declared column, else the user_id itself).

        Returns
        -------
        str or None
            The header, or None without a user_id.
        """
        if self.user_id is None:
            return None
        col = self.columns.get(self.user_id)
        return col.header if col is not None else self.user_id

    def as_dict(self) -> dict[str, Any]:
        """The schema as a mapping shaped like its TOML file.

        Returns
        -------
        dict
            ``dataset`` and ``columns``.
        """
        return {
            "dataset": {k: v for k, v in (("user_id", self.user_id),
                                          ("max_contributions", self.max_contributions),
                                          ("max_rows", self.max_rows),
                                          ("max_groups", self.max_groups),
                                          ("max_rows_per_group", self.max_rows_per_group),
                                          ("table", self.table)) if v is not None},
            "columns": {n: c.as_dict() for n, c in sorted(self.columns.items())},
        }

    def fingerprint(self) -> str:
        """SHA-256 of the canonical schema (the ledger keys replays on it).

        Returns
        -------
        str
            16 hex digits.
        """
        blob = json.dumps(self.as_dict(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _read_schema_text(p: Path) -> str:
    """The schema file's text: a regular file (never a FIFO or device: opening a FIFO
    blocks), at most MAX_SCHEMA_BYTES, UTF-8."""
    import os

    from .files import open_regular

    if not os.path.lexists(p):
        raise ParameterError(f"schema file {str(p)!r} does not exist")
    fd = open_regular(p, "schema file")
    try:
        raw = b""
        while len(raw) <= MAX_SCHEMA_BYTES:
            chunk = os.read(fd, MAX_SCHEMA_BYTES + 1 - len(raw))
            if not chunk:
                break
            raw += chunk
    finally:
        os.close(fd)
    if len(raw) > MAX_SCHEMA_BYTES:
        raise ParameterError(f"schema file {str(p)!r} is larger than {MAX_SCHEMA_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParameterError(f"schema file {str(p)!r} is not UTF-8 text (byte {exc.start})") \
            from None


def _nesting(text: str) -> int:
    """An upper bound on the depth of TOML arrays and inline tables: brackets and braces
    outside strings are counted (a bracket inside a string or comment only over-counts,
    which no real schema comes near)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest


def _split_range(spec: str, flag: str) -> tuple[str, float, float]:
    name, _, rest = spec.partition("=")
    lo, sep, hi = rest.partition(":")
    if not sep:
        raise ParameterError(f"{flag} must look like col=lower:upper, got {spec!r}")
    try:
        lo_f, hi_f = float(lo), float(hi)
    except ValueError as exc:
        raise ParameterError(f"{flag} bounds must be numbers, got {spec!r}") from exc
    if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
        raise ParameterError(f"{flag} bounds must be finite, got {spec!r}")
    return name.strip(), lo_f, hi_f
