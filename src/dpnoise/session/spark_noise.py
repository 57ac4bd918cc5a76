"""Noise added on the Spark executors, for releases too large to collect.

A release of more than ``driver_cells`` public cells (or any, with ``noise="executors"``)
never comes back to the driver: every public cell is generated in Spark
(``spark.range`` over the dense cell index, so cells no row reached are released too),
left-joined with the per-group aggregates, and noised on the executors by the very
mechanisms (:class:`~dpnoise.session.adapter.Plan`) the driver path uses, inside
``mapInPandas``.  The answer is written to ``output`` (parquet: the key columns, the
statistic and its error bars); nothing is collected.  Counts, sums, means, variances and
standard deviations go this way (:data:`EXECUTOR_STATS`); quantiles and groups whose
keys are not public are always noised on the driver from the collected aggregates
(:meth:`~dpnoise.session.spark.SparkEngine.noise_site`), with exactly the embedded
engine's law and draws.

**Keys and determinism.**  The cells are cut into fixed *noise blocks* of ``block_cells``
consecutive cell indices, decided from public facts before the noise stage.  Block ``b``
draws its noise from ChaCha20 (:class:`~dpnoise.randomness.KeyedRandom`) keyed with
``HKDF-SHA256(driver_key, salt = "dpnoise-spark-noise-v1", info = b as 8 bytes)``
(Krawczyk, "Cryptographic extraction and key derivation: the HKDF scheme", CRYPTO 2010;
RFC 5869), over the block's cells in increasing index order, components in the plan's
order.  The driver key is 256 fresh bits from the session's random source for every
release.  A block's noise is therefore a function of (driver key, block, its true
values) only: a retried or speculative task -- or a re-run of a lost partition --
recomputes exactly the same noise instead of drawing new noise, and distinct blocks use
distinct keys.  Spark's own partitioning (hash of the block id) only decides which task
holds which blocks.

**Where the key lives.**  The driver key is a Python ``bytes`` object inside the
closure of the ``mapInPandas`` function: Spark serialises the closure (cloudpickle) into
the task, so the key never appears as a column, a literal, a query-plan node, in the
Spark configuration, the UI or the logs (tested on the plan text).  It is *not* secret
from anyone who can read the executors' memory or intercept the serialised tasks (the
cluster's operators, anyone with access to the driver-executor traffic without
``spark.network.crypto.enabled`` / ``spark.io.encryption.enabled``): such a party sees
the data itself anyway, and the threat model of the custodian path is an analyst who
sees only the released output.  A fresh key per release means one leaked key exposes
the noise of one release.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..randomness import KeyedRandom
from .aggregation import AggregatePlan, PowerSum, combine, component_sources
from .query import Query
from .schema import Schema

HKDF_SALT = b"dpnoise-spark-noise-v1"


def block_key(driver_key: bytes, block: int) -> bytes:
    """The ChaCha20 key of noise block ``block`` (HKDF-SHA256, 32 bytes)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=HKDF_SALT,
                info=int(block).to_bytes(8, "big")).derive(driver_key)


#: statistics noised on the executors; the others -- quantiles (the exponential mechanism
#: on each cell's rows per lattice index) and groups whose keys are not public (partition
#: selection decides which cells exist) -- are noised on the driver from the aggregates
EXECUTOR_STATS = ("count", "sum", "mean", "variance", "stddev")


def sources(stat: str, counted_column: bool) -> dict[str, str]:
    """Which aggregate output each component role reads (``c1``/``c2``: a variance's
    centred power sums)."""
    if stat in ("variance", "stddev"):
        return {"count": "nv", "power1": "c1", "power2": "c2"}
    return component_sources(stat, counted_column)


def noise_block(block: int, truth: Mapping[str, np.ndarray], plans: list[tuple[str, Any]],
                driver_key: bytes, stat: str, lower: float | None,
                upper: float | None, confidence: float | None = None) -> Any:
    """The released values of one block's cells (``truth``: per component, the block's
    cells in increasing index order); with ``confidence``, also their error bars
    ``(values, low, high)`` -- computed from the noisy components and public plans only,
    by the driver path's own function (:func:`dpnoise.session.session.interval_function`)."""
    from .answers import combine_variance, interval_function

    rng = KeyedRandom(block_key(driver_key, block))
    noisy = {role: p.release(np.asarray(truth[role]), rng) for role, p in plans}
    if stat in ("variance", "stddev"):
        values = combine_variance(noisy, float(lower), float(upper))  # type: ignore[arg-type]
        values = np.sqrt(values) if stat == "stddev" else values
    else:
        values = combine(stat, noisy, lower, upper)
    if confidence is None:
        return values
    col_range = None if lower is None else [float(lower), float(upper)]  # type: ignore[arg-type]
    low, high = interval_function(stat, col_range, plans, noisy, np.shape(values))(confidence)
    return values, low, high


def output_schema(q: Query, schema: Schema) -> str:
    """The DDL schema of the written release: key columns, then the statistic."""
    fields = []
    for g in q.group_by:
        col = schema.column(g)
        if col.categories is None:
            kind = "bigint"
        else:
            kind = "string" if isinstance(col.categories[0], str) else "double"
        fields.append(f"`{g}` {kind}")
    fields.append(f"`{q.stat}` {'bigint' if q.stat == 'count' else 'double'}")
    fields += ["`low` double", "`high` double"]  # error bars (output + public params)
    return ", ".join(fields)


def make_noise_function(q: Query, schema: Schema, plan: AggregatePlan,
                        plans: list[tuple[str, Any]], driver_key: bytes,
                        block_cells: int, confidence: float = 0.95
                        ) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInPandas`` function; ``driver_key`` lives only in its closure."""
    roles = sources(q.stat, q.column is not None)
    sum_grid, mean_grid = plan.grids()
    scale = {"n": 1.0, "nv": 1.0, "s": sum_grid, "c": mean_grid}
    for a in plan.aggregates:
        if isinstance(a, PowerSum):  # powers of two: exact
            scale[a.name] = a.fixed.grid1 if a.power == 1 else a.fixed.grid2
    lower = upper = None
    if q.stat in ("mean", "variance", "stddev"):
        col = schema.numeric(q.column)  # type: ignore[arg-type]
        lower, upper = col.lower, col.upper
    labels = []
    for k in plan.keys:
        col = schema.column(k.column)
        labels.append(None if col.categories is None else np.asarray(col.categories))
    offsets = [0 if k.offset is None else int(k.offset) for k in plan.keys]
    strides, sizes = plan.strides, plan.shape
    names = [*q.group_by, q.stat]

    def noise(batches: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        frames = list(batches)
        if not frames:
            return
        df = pd.concat(frames, ignore_index=True)
        for block, part in df.groupby("block", sort=True):
            part = part.sort_values("cell", kind="stable")
            cells = part["cell"].to_numpy(dtype=np.int64)
            truth = {}
            for role, src in roles.items():
                v = part[src].to_numpy(dtype=np.float64) * scale[src]  # powers of two
                truth[role] = v.astype(np.int64) if src in ("n", "nv") else v
            values, low, high = noise_block(int(block), truth, plans, driver_key, q.stat,
                                            lower, upper, confidence)
            out = {}
            for i, name in enumerate(names[:-1]):
                code = (cells // strides[i]) % sizes[i]
                out[name] = labels[i][code] if labels[i] is not None else code + offsets[i]
            out[names[-1]] = values
            out["low"], out["high"] = low, high
            yield pd.DataFrame(out, columns=[*names, "low", "high"])

    noise.__name__ = "dpnoise_executor_noise"
    noise.__qualname__ = "dpnoise_executor_noise"
    return noise


def noise_input(engine: Any, plan: AggregatePlan) -> Any:
    """Every public cell with its true aggregates (0 where no row), its block, and a
    partitioning by block fixed before the noise stage (no job runs here)."""
    from pyspark.sql import functions as F  # noqa: N812

    groups = engine.cell_groups(plan)
    cell = F.lit(0).cast("bigint")
    for i, stride in enumerate(plan.strides):
        cell = cell + F.col(f"k{i}") * F.lit(int(stride))
    outs = [a.name for a in plan.aggregates]
    groups = groups.select(cell.alias("cell"), *outs)
    n_cells = plan.n_cells
    n_blocks = max(1, math.ceil(n_cells / engine.block_cells))
    cells = engine.spark.range(0, n_cells, 1, numPartitions=n_blocks) \
        .withColumnRenamed("id", "cell")
    joined = cells.join(groups, "cell", "left").fillna(0, subset=outs)
    block = F.floor(F.col("cell") / F.lit(int(engine.block_cells))).cast("bigint")
    return joined.withColumn("block", block).repartition(n_blocks, "block"), n_blocks


def write_release(engine: Any, q: Query, plan: AggregatePlan, plans: Mapping[str, Any],
                  output: str, driver_key: bytes, confidence: float = 0.95) -> dict[str, Any]:
    """Noise every cell on the executors and write the release to ``output``."""
    ordered = list(plans.items())
    df, n_blocks = noise_input(engine, plan)
    fn = make_noise_function(q, engine.schema, plan, ordered, driver_key,
                             engine.block_cells, confidence)
    out = df.mapInPandas(fn, schema=output_schema(q, engine.schema))
    out.write.mode("errorifexists").parquet(output)
    return {"output": output, "cells": plan.n_cells, "blocks": n_blocks,
            "block_cells": engine.block_cells, "noise": "executors",
            "confidence": confidence}
