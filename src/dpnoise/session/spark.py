"""The Spark engine: the same plan, the same typed view, on Apache Spark.

``Session(data, ..., engine="spark")`` takes a ``pyspark.sql.DataFrame`` (classic or
Spark Connect), a path Spark can read (a parquet file, a csv file, or -- with
``partitioned=True`` -- a partitioned parquet directory read as one data set) or the
name of a *table* in the session's catalog.  Nothing runs on the data when the session
opens: the typed view is a lazy DataFrame, and the first Spark job that reads any row is
the one a release starts *after* its charge is reserved in the ledger (on the driver).
Reading a parquet footer, a csv header line or the catalog is metadata, fixed before any
query.

The custodian-hardening rules, redone for Spark:

* **the typed view** is :mod:`dpnoise.session.source`'s, written with Spark expressions
  that cannot fail even with ANSI mode on (PySpark 4's default): ``try_cast`` to text,
  ASCII whitespace stripped (``\\A``/``\\z`` anchored, so a Unicode line separator is
  not a line end), the same decimal-literal regular expression, ``try_cast`` to double,
  non-finite values missing; categories by text or number; integer keys; person ids
  whose text is empty or ``nan`` dropped.  The text form of a *typed* (non-string) value
  is Spark's (``1.0E20`` where DuckDB writes ``1e+20``); numbers parse back to the same
  double either way, so only a string category compared against a non-string column
  could differ between the engines (documented);
* **no globbing**: Spark (Hadoop) expands ``* ? [ ] { }`` in paths, and ``\\`` escapes,
  so a path containing any of them is refused (rename the file); a directory is read
  only with ``partitioned=True``;
* **CSV schema inference never runs**: the header is parsed by dpnoise (the same RFC 4180
  dialect as the embedded engine) and Spark is given that schema with every column as
  text, ``enforceSchema``, ``PERMISSIVE`` (short rows padded with missing values);
* **catalog views are refused** (temporary or permanent): only tables are read;
* no query text is ever spliced into Spark SQL: the plan becomes column expressions with
  literal values, and query identifiers were checked against the schema first.

Contribution bounding uses a window (``row_number`` over ``PARTITION BY person ORDER BY
sha2(encoding, 256), encoding``), the exact sums ``DECIMAL(38, 0)`` sums of the
fixed-point integers (see :mod:`dpnoise.session.aggregation`).

**Noise** (:mod:`dpnoise.session.spark_noise`): up to ``driver_cells`` (10^7) cells the
per-group aggregates come back to the driver, are scattered onto all public cells and
noised there by exactly the embedded engine's code; beyond that (or with
``noise="executors"``) every public cell is generated in Spark and noised on the
executors, the release is written to ``output`` and nothing is collected.

**Spark Connect** (``spark_remote="sc://host:port"``, ``"local[N]"``, or a DataFrame of
a Connect session): the same plan, built with the Connect client's own ``functions`` and
``Window`` (PySpark chooses between classic and Connect per process from an environment
variable; dpnoise chooses per session, so one process may hold both).  The noise is then
ALWAYS added on the client, from the collected aggregates, whatever the number of cells:
``noise="executors"`` is refused, because the executors' key would travel in the task
closure over the client-server channel, which is not encrypted unless the URL asks for
TLS.

Timing is not claimed here either: Spark's running time depends on the data.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ParameterError
from .aggregation import (
    ENCODING_TAG,
    GROUP_TAG,
    AggregatePlan,
    Aggregates,
    CentredSum,
    CodeIn,
    CountPersons,
    CountRows,
    CountValues,
    FixedSum,
    IsMissing,
    Junction,
    Negation,
    NumBetween,
    NumCompare,
    NumIn,
    PowerSum,
    Token,
    TypedPredicate,
    compile_query,
    encoding_parts,
    merge_persons,
    persons_plan,
    scatter,
    text_parts,
)
from .columns import Column
from .files import absent_message, csv_header, open_regular
from .query import Query
from .schema import Schema
from .source import (
    _MISSING_IDS,
    CSV_SUFFIXES,
    NUMBER_REGEX,
    PARQUET_SUFFIXES,
    frame_kind,
)

#: characters Hadoop's path globbing interprets (and its escape character)
GLOB_CHARACTERS = frozenset("*?[]{}\\")
#: ASCII whitespace stripped from text at both ends, as in the embedded engine
_WS_CLASS = r"[ \t\n\x0B\f\r]"
_TRIM_REGEX = rf"\A{_WS_CLASS}+|{_WS_CLASS}+\z"
_NUMBER_FULL = rf"\A(?:{NUMBER_REGEX})\z"
#: why a Spark Connect session never noises on the executors
CONNECT_NOISE = (
    "noise=\"executors\" is refused with a Spark Connect session: the executors' noise "
    "key would travel in the task closure over the client-server channel; with Spark "
    "Connect the aggregates come back to this process and the noise is added here")
#: cells up to which the aggregates are collected and noised on the driver
DRIVER_CELLS = 10**7
NOISE_MODES = ("auto", "driver", "executors")
#: source types whose text form parses back to exactly the value's nearest double (not
#: float: its shortest text '0.1' parses to the double 0.1, not to the float's value)
_EXACT_NUMBER_TYPES = frozenset({"double", "long", "integer", "short", "byte"})


def _backtick(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


#: PySpark's notice that it is not yet tested with pandas 3 (emitted on import and on
#: every Arrow conversion): dpnoise uses pandas only for the executors' noise batches
#: (numeric columns built by dpnoise), which it tests with the installed pandas
PANDAS_NOTICE = "PySpark does not yet fully support pandas"


def quiet_pyspark() -> None:
    """Silence :data:`PANDAS_NOTICE` (a FutureWarning about PySpark's own support
    matrix, the same on every release: nothing a custodian can act on)."""
    import warnings

    warnings.filterwarnings("ignore", message=PANDAS_NOTICE, category=FutureWarning)


def _functions(remote: bool = False) -> Any:
    """``pyspark.sql.functions``, or for a Spark Connect session the Connect client's own
    functions (PySpark picks between the two per process, from an environment variable
    its Connect builder sets; a process may hold both kinds of session)."""
    quiet_pyspark()
    try:
        if remote:
            from pyspark.sql.connect import functions as F  # noqa: N812
        else:
            from pyspark.sql import functions as F  # noqa: N812
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ParameterError(
            'engine="spark" needs pyspark: pip install "dpnoise[spark]"'
            + (" (Spark Connect: the client's grpcio, zstandard)" if remote else "")
        ) from None
    return F


def _window(remote: bool) -> Any:
    if remote:
        from pyspark.sql.connect.window import Window
    else:
        from pyspark.sql import Window
    return Window


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (a client of a remote server)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def get_spark(master: str | None = None, remote: str | None = None) -> Any:
    """The active SparkSession, else a new one (``remote``: a Spark Connect URL such as
    ``sc://host:15002``, or ``local[N]`` to let PySpark start a local Spark Connect
    server; ``master``: e.g. ``local[*]`` or ``spark://host:7077``)."""
    _functions()
    from pyspark.sql import SparkSession

    if master is not None and remote is not None:
        raise ParameterError("give spark_master or spark_remote, not both")
    if remote is not None:
        if not isinstance(remote, str) or not remote.startswith(("sc://", "local")):
            raise ParameterError(f"spark_remote must be a Spark Connect URL (sc://host:port"
                                 f") or local[N], got {remote!r}")
        if remote.startswith("sc://"):  # the Connect client itself: no process-wide mode
            from pyspark.sql.connect.session import SparkSession as ConnectSession

            return ConnectSession.builder.remote(remote).getOrCreate()
        return SparkSession.builder.remote(remote).getOrCreate()
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName("dpnoise").master(master or "local[*]")
    if (master or "local[*]").startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        builder = builder.config("spark.pyspark.python", sys.executable)  # this venv
    return builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()


class _Expr:
    """The Spark visitor: one method per plan node, Column expressions only."""

    def __init__(self, remote: bool = False) -> None:
        self.F = _functions(remote)
        self.Window = _window(remote)

    def lit(self, v: float) -> Any:
        return self.F.lit(float(v))

    def dec(self, v: int) -> Any:
        return self.F.lit(str(int(v))).cast("decimal(38,0)")

    def predicate(self, p: TypedPredicate) -> Any:
        F = self.F
        if isinstance(p, Negation):
            return ~self.predicate(p.arg)
        if isinstance(p, Junction):
            out = self.predicate(p.args[0])
            for a in p.args[1:]:
                out = (out & self.predicate(a)) if p.op == "AND" else (out | self.predicate(a))
            return out
        c = F.col(_backtick(p.column))
        if isinstance(p, IsMissing):
            return c.isNotNull() if p.negate else c.isNull()
        if isinstance(p, CodeIn):
            return c.isin(list(p.codes)) if p.codes else (c != c)
        if isinstance(p, NumCompare):
            v = self.lit(p.value)
            return {"=": c == v, "<>": c != v, "<": c < v, "<=": c <= v, ">": c > v,
                    ">=": c >= v}[p.op]
        if isinstance(p, NumIn):
            inside = c.isin([self.lit(v) for v in p.values])
            return ~inside if p.negate else inside
        assert isinstance(p, NumBetween)
        inside = (c >= self.lit(p.low)) & (c <= self.lit(p.high))
        return ~inside if p.negate else inside

    def token(self, t: Token) -> Any:
        F = self.F
        c = F.col(_backtick(t.column))
        if t.fixed is None:
            return c.cast("bigint")
        lo, hi = self.lit(t.lower), self.lit(t.upper)  # type: ignore[arg-type]
        clamped = F.when(c < lo, lo).when(c > hi, hi).otherwise(c)
        return F.floor(clamped * self.lit(t.fixed.scale)).cast("bigint")

    def round_to_grid(self, x: Any, shift: int) -> Any:
        """Round half up onto multiples of 2^shift (exact decimals), as DOUBLE."""
        if shift == 0:
            return x.cast("double")
        F = self.F
        m = self.dec(1 << shift)
        y = x + self.dec((1 << shift) >> 1)
        # y - pmod(y, m) is a multiple of m, so the decimal quotient is an exact integer
        return ((y - F.pmod(y, m)) / m).cast("bigint").cast("double")

    def clamp(self, x: Any, lo: int, hi: int) -> Any:
        return self.F.greatest(self.F.least(x, self.dec(hi)), self.dec(lo))

    def aggregate(self, a: Any, persons: bool = False) -> Any:
        F = self.F
        if isinstance(a, CountRows):
            return F.count(F.lit(1))
        if isinstance(a, CountValues):
            return F.count(F.col("tok"))
        if isinstance(a, CountPersons):
            return F.countDistinct(F.col("__dp_uid")) if persons else F.count(F.lit(1))
        if isinstance(a, PowerSum):
            pf = a.fixed
            w = F.shiftright(F.col("tok") - F.lit(int(a.token.fixed.lo_q)), pf.shift)
            c = (F.lit(2) * w - F.lit(int(pf.width))).cast("decimal(38,0)")
            term = c if a.power == 1 else (c * c).cast("decimal(38,0)")
            total = F.coalesce(F.sum(term), self.dec(0)).cast("decimal(38,0)")
            if a.power == 1:
                lim = pf.rows * pf.width
                return self.round_to_grid(self.clamp(total, -lim, lim), pf.s1)
            return self.round_to_grid(self.clamp(total, 0, pf.rows * pf.width ** 2), pf.s2)
        fixed = a.token.fixed
        total = F.coalesce(F.sum(F.col("tok").cast("decimal(38,0)")), self.dec(0)) \
            .cast("decimal(38,0)")
        if isinstance(a, FixedSum):
            lo, hi = fixed.sum_limits
            return self.round_to_grid(self.clamp(total, lo, hi), fixed.sum_shift)
        assert isinstance(a, CentredSum)
        lim = fixed.centred_limit
        centred = (self.dec(2) * total).cast("decimal(38,0)") - \
            (F.count(F.col("tok")).cast("decimal(38,0)")
             * self.dec(fixed.lo_q + fixed.hi_q)).cast("decimal(38,0)")
        return self.round_to_grid(self.clamp(centred.cast("decimal(38,0)"), -lim, lim),
                                  fixed.mean_shift)

    def rows(self, view: Any, plan: AggregatePlan) -> Any:
        """The selected, bounded rows: key indices ``k0..``, ``tok``."""
        F = self.F
        Window = self.Window
        df = view
        if plan.where is not None:
            df = df.filter(self.predicate(plan.where))
        cols = []
        for i, k in enumerate(plan.keys):
            c = F.col(_backtick(k.column))
            df = df.filter(c.isNotNull())
            if k.private:
                expr = c
            else:
                expr = c.cast("bigint") if k.offset is None else (c - self.lit(k.offset)) \
                    .cast("bigint")
            cols.append(expr.alias(f"k{i}"))
        if plan.token is not None:
            cols.append(self.token(plan.token).alias("tok"))
            if plan.values_only:
                df = df.filter(F.col(_backtick(plan.token.column)).isNotNull())
        if plan.bounding is not None:
            cols.append(F.col("__dp_uid"))
        df = df.select(*cols) if cols else df.select(F.lit(1).alias("__dp_one"))
        if plan.bounding is not None:
            texts = text_parts(plan)

            def part(p: str) -> Any:
                if p in texts:
                    return F.concat(F.lit("|"), F.length(F.col(p)).cast("string"),
                                    F.lit(":"), F.col(p))
                return F.concat(F.lit("|"), F.coalesce(F.col(p).cast("string"), F.lit("N")))

            enc = F.concat(F.lit(ENCODING_TAG), *[part(p) for p in encoding_parts(plan)])
            df = df.withColumn("__dp_enc", enc)
            b = plan.bounding
            if b.groups is None:
                w = Window.partitionBy("__dp_uid").orderBy(
                    F.sha2(F.col("__dp_enc"), 256), F.col("__dp_enc"))
                df = df.withColumn("__dp_rn", F.row_number().over(w)) \
                    .filter(F.col("__dp_rn") <= int(b.k)).drop("__dp_rn", "__dp_enc")
            else:
                genc = F.concat(F.lit(GROUP_TAG),
                                *[part(f"k{i}") for i in range(len(plan.keys))])
                df = df.withColumn("__dp_genc", genc)
                wg = Window.partitionBy("__dp_uid").orderBy(
                    F.sha2(F.col("__dp_genc"), 256), F.col("__dp_genc"))
                wr = Window.partitionBy("__dp_uid", "__dp_genc").orderBy(
                    F.sha2(F.col("__dp_enc"), 256), F.col("__dp_enc"))
                df = df.withColumn("__dp_gr", F.dense_rank().over(wg)) \
                    .withColumn("__dp_rn", F.row_number().over(wr)) \
                    .filter((F.col("__dp_gr") <= int(b.groups))
                            & (F.col("__dp_rn") <= int(b.per_group)))  # type: ignore[arg-type]
                df = df.drop("__dp_rn", "__dp_gr", "__dp_enc", "__dp_genc")
        if plan.buckets is not None:
            g = plan.buckets
            df = df.withColumn("kb", F.shiftright(
                F.col("tok") - F.lit(int(g.lo_q)) + F.lit((1 << g.shift) - 1), g.shift))
        return df

    def groups(self, view: Any, plan: AggregatePlan) -> Any:
        """One row per non-empty group: ``k0..`` and the aggregates' outputs."""
        df = self.rows(view, plan)
        persons = plan.bounding is not None
        aggs = [self.aggregate(a, persons).alias(a.name) for a in plan.aggregates]
        keys = [f"k{i}" for i in range(len(plan.keys))]
        if plan.buckets is not None:
            keys.append("kb")
        return df.groupBy(*keys).agg(*aggs) if keys else df.agg(*aggs)


class SparkEngine:
    """The typed view of one data set as a lazy Spark DataFrame (see the module doc)."""

    name = "spark"

    def __init__(self, data: Any, schema: Schema, *, spark: Any = None,
                 spark_master: str | None = None, spark_remote: str | None = None,
                 partitioned: bool = False, noise: str = "auto",
                 driver_cells: int = DRIVER_CELLS, block_cells: int = 1 << 20) -> None:
        _functions()  # pyspark installed? (a clear error before anything else)
        if noise not in NOISE_MODES:
            raise ParameterError(f"noise must be one of {', '.join(NOISE_MODES)}, got "
                                 f"{noise!r}")
        for name, v in (("driver_cells", driver_cells), ("block_cells", block_cells)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ParameterError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(partitioned, bool):
            raise ParameterError(f"partitioned must be a boolean, got {partitioned!r}")
        self.schema = schema
        self.noise = noise
        self.driver_cells = driver_cells
        self.block_cells = block_cells
        self.needed = sorted({c.header for c in schema.columns.values()}
                             | ({schema.user_header()} - {None}))  # type: ignore[arg-type]
        if noise == "executors" and (is_connect(spark) or spark_remote is not None):
            raise ParameterError(CONNECT_NOISE)
        if frame_kind(data) == "spark":
            self.spark = data.sparkSession
            raw, ident = data, "dataframe:" + data.schema.json()
        elif isinstance(data, (str, Path)):
            self.spark = spark if spark is not None else get_spark(spark_master, spark_remote)
            raw, ident = self._read(str(data), partitioned)
        else:
            raise ParameterError(
                'engine="spark" reads a pyspark DataFrame, a parquet or csv path, or a '
                f"catalog table name; got {type(data).__name__}")
        self.remote = is_connect(self.spark)
        if self.remote and noise == "executors":
            raise ParameterError(CONNECT_NOISE)
        self.view = self._typed_view(raw, _functions(self.remote))
        try:
            files = sorted(raw.inputFiles())  # metadata: the file listing
        except Exception:
            files = []
        self.fingerprint = "spark:" + hashlib.sha256(
            repr((ident, files)).encode()).hexdigest()[:32]

    # ------------------------------------------------------------------ inputs
    def _read(self, path: str, partitioned: bool) -> tuple[Any, str]:
        bad = sorted(set(path) & GLOB_CHARACTERS)
        if bad:
            raise ParameterError(
                f"data path {path!r} contains {''.join(bad)!r}: Spark expands glob "
                "characters in paths, so it could read other files -- rename it")
        if "\x00" in path or not path:
            raise ParameterError("data path must be a non-empty path without NUL")
        suffix = Path(path).suffix.lower()
        local = "://" not in path and not path.startswith("file:")
        reader = self.spark.read
        if suffix in PARQUET_SUFFIXES or (partitioned and suffix == ""):
            if local and os.path.isdir(path) and not partitioned:
                raise ParameterError(
                    f"data path {path!r} is a directory: pass partitioned=True to read a "
                    "partitioned parquet directory as one data set")
            if local and not os.path.exists(path):
                raise ParameterError(f"data file {path!r} does not exist")
            if local and not (os.path.isdir(path) or os.path.isfile(path)):
                raise ParameterError(f"data file {path!r} is not a regular file (a FIFO, "
                                     "device or socket is never read)")
            if local and os.path.isfile(path) and partitioned:
                raise ParameterError(f"partitioned=True needs a directory, {path!r} is a file")
            try:
                return reader.parquet(path), f"parquet:{path}"
            except Exception:
                raise ParameterError(
                    f"data {path!r} could not be read as parquet by Spark (the reader's "
                    "message is withheld because it may quote the data)") from None
        if suffix in CSV_SUFFIXES or path.lower().endswith((".csv.gz", ".tsv.gz")):
            if partitioned:
                raise ParameterError("partitioned=True is for parquet directories only")
            return self._csv(path, local), f"csv:{path}"
        if suffix == "" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*",
                                         path) and not os.path.exists(path):
            return self._table(path), f"table:{path}"
        raise ParameterError(
            f"data {path!r}: use a .parquet or .csv path, a partitioned parquet directory "
            "(partitioned=True) or a catalog table name")

    def _csv(self, path: str, local: bool) -> Any:
        from pyspark.sql.types import StringType, StructField, StructType

        gz = path.lower().endswith(".gz")
        tsv = ".tsv" in path.lower()
        delim = "\t" if tsv else ","
        if not local:
            raise ParameterError(
                "engine=\"spark\" reads csv from a local path only (its header is parsed by "
                "dpnoise); convert remote data to parquet or pass a DataFrame")
        fd = open_regular(path, "data file")
        try:
            headers = csv_header(fd, gz, delim, Path(path))
        finally:
            os.close(fd)
        # the fields carry the header's names (Spark compares them with the header line
        # and logs a mismatch otherwise); a repeated name gets a positional name
        names = [h if headers.count(h) == 1 and h.lower() not in
                 {x.lower() for x in headers if x != h} else f"c{i}\x00"
                 for i, h in enumerate(headers)]
        schema = StructType([StructField(n, StringType(), True) for n in names])
        raw = self.spark.read.csv(
            os.path.abspath(path), schema=schema, header=True, enforceSchema=True,
            sep=delim, quote='"', escape='"', mode="PERMISSIVE", multiLine=True,
            encoding="UTF-8")
        return raw.toDF(*headers) if len(set(headers)) == len(headers) else \
            raw.toDF(*[h if headers.count(h) == 1 else f"{h}\x00{i}"
                       for i, h in enumerate(headers)])

    def _table(self, name: str) -> Any:
        try:
            table = self.spark.catalog.getTable(name)
        except Exception:
            raise ParameterError(f"no table {name!r} in the Spark catalog") from None
        kind = str(getattr(table, "tableType", "") or "").upper()
        if table.isTemporary or "VIEW" in kind:
            raise ParameterError(
                f"{name!r} in the Spark catalog is a view, not a table: only tables are read "
                "(a view could read other data)")
        return self.spark.read.table(name)

    # ------------------------------------------------------------- typed view
    def _typed_view(self, raw: Any, F: Any) -> Any:
        headers = list(raw.columns)
        missing = [h for h in self.needed if h not in headers]
        if missing:
            raise ParameterError(absent_message(missing, "the data"))
        dup = sorted({h for h in self.needed if headers.count(h) > 1})
        if dup:
            raise ParameterError(f"column(s) {dup} appear more than once in the data")
        texts, numbers = {}, {}
        types = {f.name: f.dataType.typeName() for f in raw.schema.fields}
        for h in self.needed:
            t = F.regexp_replace(F.col(_backtick(h)).try_cast("string"), _TRIM_REGEX, "")
            texts[h] = t
            if types.get(h) in _EXACT_NUMBER_TYPES:
                # the text of a double or an integer parses back to exactly its value
                # (nearest double): skip the round trip, keep "finite, else missing"
                v = F.col(_backtick(h)).cast("double")
            else:
                v = F.when(t.rlike(_NUMBER_FULL), t.try_cast("double"))
            numbers[h] = F.when(F.abs(v) < F.lit(float("inf")), v)
        outs = []
        for name, col in sorted(self.schema.columns.items()):
            outs.append(self._typed(col, texts[col.header], numbers[col.header], F)
                        .alias(name))
        uh = self.schema.user_header()
        view = raw.select(*outs, *([texts[uh].alias("__dp_uid")] if uh else []))
        if uh is not None:
            uid = F.col("__dp_uid")
            view = view.filter(uid.isNotNull() & ~F.lower(uid).isin(list(_MISSING_IDS)))
        return view

    @staticmethod
    def _typed(col: Column, text: Any, number: Any, F: Any) -> Any:
        if col.text:  # a private key: the stripped text, missing when empty
            return F.when(text != F.lit(""), text)
        if col.categories is not None:
            out = None
            for i, c in enumerate(col.categories):
                cond = (text == F.lit(c)) if isinstance(c, str) else \
                    (number == F.lit(float(c)))
                out = F.when(cond, F.lit(i)) if out is None else out.when(cond, F.lit(i))
            return out.cast("int")  # type: ignore[union-attr]
        if col.integer:
            return F.when((number == F.floor(number).cast("double"))
                          & (number >= F.lit(float(col.lower)))  # type: ignore[arg-type]
                          & (number <= F.lit(float(col.upper))), number)  # type: ignore[arg-type]
        return number

    # ------------------------------------------------------------------ queries
    def plan(self, q: Query) -> AggregatePlan:
        return compile_query(q, self.schema)

    def groups(self, q: Query) -> Any:
        """The lazy DataFrame of per-group aggregates of ``q`` (no job runs)."""
        return _Expr(self.remote).groups(self.view, self.plan(q))

    def aggregate(self, q: Query) -> Aggregates:
        """Run ``q`` and scatter its groups onto the public cells, on the driver."""
        plan = self.plan(q)
        table = _Expr(self.remote).groups(self.view, plan).toArrow()
        agg = scatter(plan, {n: table.column(n).to_numpy() for n in table.column_names})
        if plan.buckets is not None and plan.private:
            t2 = _Expr(self.remote).groups(self.view, persons_plan(plan)).toArrow()
            agg = merge_persons(agg, {n: t2.column(n).to_numpy() for n in t2.column_names})
        return agg

    def noise_on_executors(self, q: Query) -> bool:
        """Whether a release of ``q`` is noised on the executors (public facts only).
        Quantiles and groups whose keys are not public are always noised on the driver,
        from the collected aggregates (:func:`noise_site`), whatever ``noise`` says."""
        plan = self.plan(q)
        if self.noise_site(q) == "driver-only" or self.remote:
            return False
        if self.noise != "auto":
            return self.noise == "executors"
        return plan.n_cells > self.driver_cells

    def noise_site(self, q: Query) -> str:
        """``"driver-only"`` for a quantile (the exponential mechanism on each cell's
        lattice: rows per lattice index are collected) or groups whose keys are not public
        (partition selection decides which cells exist: the per-group aggregates are
        collected), else ``"either"``.  Public facts only."""
        from .spark_noise import EXECUTOR_STATS

        if self.plan(q).private or q.stat not in EXECUTOR_STATS or self.remote:
            return "driver-only"
        return "either"

    def cell_groups(self, plan: AggregatePlan) -> Any:
        """The grouped true aggregates of ``plan`` over the view, one row per non-empty
        cell (a lazy DataFrame: no job runs here)."""
        return _Expr(self.remote).groups(self.view, plan)

    def release_to(self, q: Query, plans: Mapping[str, Any], output: str,
                   driver_key: bytes, confidence: float = 0.95) -> dict[str, Any]:
        """Noise every public cell on the executors and write the release to ``output``
        (parquet); see :mod:`dpnoise.session.spark_noise`."""
        from .spark_noise import write_release

        return write_release(self, q, self.plan(q), plans, output, driver_key, confidence)

    def close(self) -> None:
        """The SparkSession belongs to the caller (or is shared): it is left running."""
