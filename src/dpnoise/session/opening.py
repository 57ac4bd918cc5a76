"""Opening a session's data (the engine holding its typed view) and its schema."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ParameterError
from .engine import DuckDBEngine
from .query import Query
from .schema import Schema
from .table import TABLE_FORMATS, check_new_file

ENGINES = ("duckdb", "spark")


def open_engine(data: Any, schema: Schema, engine: str = "duckdb",
                options: Mapping[str, Any] | None = None) -> Any:
    """The engine holding ``data``'s typed view (see :class:`Session`); ``data=None``: no
    engine (a planning-only session: plan() works, releases are refused)."""
    if data is None:
        return None
    if engine not in ENGINES:
        raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    opts = dict(options or {})
    if engine == "spark":
        from .spark import SparkEngine

        try:
            return SparkEngine(data, schema, **opts)
        except TypeError as exc:
            raise ParameterError(f"engine_options: {exc}") from None
    if opts:
        raise ParameterError(f"engine_options {sorted(opts)} are for engine=\"spark\" only")
    return DuckDBEngine(data, schema)


def data_engine(engine: Any) -> Any:
    """``engine``, or a ParameterError for a session opened with data=None (planning only:
    nothing to read)."""
    if engine is None:
        raise ParameterError("this session has no data (data=None: planning only)")
    return engine


def resolve_schema(schema: Any, data: Any) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, Mapping):
        return Schema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return Schema.from_toml(schema)
    if schema is None and isinstance(data, (str, Path)):
        guess = Path(data).with_suffix(".toml")
        if guess.is_file():
            return Schema.from_toml(guess)
    raise ParameterError(
        "schema is required: declare public bounds per column (a TOML file, a dict, or "
        "dpnoise.session.Schema); without bounds no statistic has an honest sensitivity"
    )


def check_output(engine: Any, q: Query, output: str | None) -> bool:
    """Whether ``q`` is noised on the executors; ``output`` checked before any spend."""
    on_executors = getattr(engine, "noise_on_executors", None)
    executors = bool(on_executors(q)) if on_executors is not None else False
    if executors and output is None:
        raise ParameterError(
            "output is required: this release is noised on the Spark executors and "
            "written to a path (more cells than driver_cells, or noise=\"executors\")")
    if output is not None:
        if not isinstance(output, (str, Path)) or not str(output):
            raise ParameterError(f"output must be a path, got {output!r}")
        if "://" not in str(output):
            check_new_file(str(output), "output")
        if not executors and Path(str(output)).suffix.lower() not in TABLE_FORMATS:
            raise ParameterError(
                f"output {str(output)!r}: the released table is written as "
                f"{' or '.join(TABLE_FORMATS)} (name the file with that suffix)")
    return executors
