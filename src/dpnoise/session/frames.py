"""Released tables as DataFrames: pandas, polars and Arrow, with their metadata.

A release converts to one row per released cell: its key columns (the declared public
keys, or the keys released by DP partition selection -- a suppressed group has no row,
not even one of missing values), the released value (a column named after the
statistic: ``count``, ``mean``, ...) and its error bars (``low``/``high``, or
``level_low``/``level_high`` for a quantile).  These are exactly the columns and rows of
``Release.columns()`` / ``Release.rows()`` and of the file ``output=`` writes
(:func:`dpnoise.session.table.release_columns`): the conversion is post-processing of
released numbers and public labels.

The release's public facts travel with the table as metadata (:func:`release_metadata`):
the confidence level of the error bars and how they were obtained, the guarantee, the
mechanism, (epsilon, delta), the query and the ledger row.  They are pandas'
``DataFrame.attrs``, the Arrow schema's metadata (text values; numbers as Python writes
them) and, as polars has no metadata of its own, an ``attrs`` attribute set on the polars
DataFrame (lost by polars operations that build a new frame, as ``attrs`` mostly are in
pandas: keep ``release.metadata()`` where it matters).

The custodian-only true answer (:class:`dpnoise.session.truth.TrueAnswer`) converts the
same way with a ``true_value`` column and no error bars; its metadata says
``"private": false``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError


def release_metadata(release: Any) -> dict[str, Any]:
    """The public facts of a release, for a table's metadata (JSON-compatible values)."""
    meta: dict[str, Any] = {
        "dpnoise": "release", "private": True, "query": release.query,
        "canonical": release.canonical, "statistic": release.stat,
        "mechanism": release.mechanism, "epsilon": float(release.epsilon),
        "delta": float(release.delta), "guarantee": release.guarantee,
        "ledger_id": release.ledger_id, "ledger_head": release.ledger_head,
        "replayed": bool(release.replayed), "group_by": list(release.group_by)}
    if release.has_intervals():
        meta.update(confidence=float(release.confidence), interval_kind=release.interval_kind,
                    intervals=release.interval_note())
    return meta


def frame_columns(release: Any) -> dict[str, NDArray[Any]]:
    """The table's columns (name -> one-dimensional array), refused for a release that
    was written by the Spark executors (it never came back to the driver)."""
    from .table import release_columns

    if "written" in (release.details or {}):
        raise ParameterError(
            f"this release was noised and written by the Spark executors to "
            f"{release.details['written']['output']!r}; read that parquet directory instead")
    return release_columns(release, intervals=True)


def to_arrow(columns: dict[str, NDArray[Any]], metadata: dict[str, Any]) -> Any:
    """A ``pyarrow.Table`` of ``columns`` with ``metadata`` on its schema (text values)."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ParameterError('to_arrow needs pyarrow: pip install pyarrow') from None
    table = pa.table({name: _arrow_array(pa, a) for name, a in columns.items()})
    return table.replace_schema_metadata({k.encode(): _meta_text(v).encode()
                                          for k, v in metadata.items() if v is not None})


def to_pandas(columns: dict[str, NDArray[Any]], metadata: dict[str, Any]) -> Any:
    """A ``pandas.DataFrame`` of ``columns`` with ``metadata`` as ``DataFrame.attrs``."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ParameterError('to_pandas needs pandas: pip install pandas') from None
    df = pd.DataFrame({name: _plain(a) for name, a in columns.items()},
                      columns=list(columns))
    df.attrs.update(metadata)
    return df


def to_polars(columns: dict[str, NDArray[Any]], metadata: dict[str, Any]) -> Any:
    """A ``polars.DataFrame`` of ``columns``; ``metadata`` as its ``attrs`` attribute."""
    try:
        import polars as pl
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ParameterError('to_polars needs polars: pip install polars') from None
    df = pl.DataFrame({name: _plain(a) for name, a in columns.items()})
    df.attrs = dict(metadata)  # type: ignore[attr-defined]
    return df


def _plain(a: NDArray[Any]) -> Any:
    """Text keys as a list of Python strings (object arrays are not typed by pandas and
    polars alike); numbers stay numpy arrays."""
    a = np.asarray(a)
    return a.tolist() if a.dtype.kind in "OUS" else a


def _arrow_array(pa: Any, a: NDArray[Any]) -> Any:
    a = np.asarray(a)
    if a.dtype.kind in "OUS":
        return pa.array(a.tolist(), type=pa.string())
    return pa.array(a)


def _meta_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v)
