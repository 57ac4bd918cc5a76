"""A durable privacy-budget ledger in one SQLite file.

Every release is a row: the query as typed and in canonical form, the data set, the
mechanism, its parameters and guarantee, the (epsilon, delta) charged, the time, and the
answer.  The protocol that makes it crash-safe and concurrency-safe:

1. **Reserve** (one ``BEGIN IMMEDIATE`` transaction, which takes SQLite's write lock, so
   reservations of concurrent processes are serialised): sum what is already charged,
   refuse with :class:`~dpnoise.errors.BudgetExceededError` if the new charge would exceed
   the total (nothing is written: a refused release costs nothing), else insert the row
   with ``status = 'reserved'`` and commit (``synchronous = FULL``, WAL journal).
2. Only then is noise drawn.
3. **Complete**: one transaction stores the answer (table ``answers``, kept apart so the
   budget scan of ``releases`` stays small) and sets ``status = 'released'``.

A process killed at any point leaves either no row (killed before the reservation
committed: nothing was drawn) or a ``reserved`` row, which stays charged forever because
the noise may have been drawn and seen.  A ``released`` row always has its answer (both are
written in one transaction, and opening a ledger checks it), so there are no half-written
releases.

Accounting: basic sequential composition -- the charges add up -- computed exactly in
rational arithmetic from the stored doubles, so rounding can never let the sum of
charges exceed the total.  (Tighter accountants such as advanced composition or RDP are
not used: they only pay off for many approximate-DP releases and would need per-mechanism
RDP curves we have not verified.)

Failure modes raise :class:`~dpnoise.errors.LedgerError` with the file name: a locked
ledger (another process holds the write lock longer than ``timeout``), a file that is not
SQLite or fails ``PRAGMA quick_check``, a SQLite file that is not a dpnoise ledger, a total
that differs from the one the ledger was created with, charges that exceed the total.
The ledger never recreates or resets an existing file.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import BudgetExceededError, LedgerError, ParameterError
from ..params import check_delta, check_finite

FORMAT = "dpnoise-ledger"
VERSION = "1"
_MEMORY = ":memory:"
QUICK_CHECK_LIMIT = 256 << 20  # bytes; larger ledgers are checked as they are read

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE releases (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at    TEXT NOT NULL,
    completed_at  TEXT,
    status        TEXT NOT NULL CHECK (status IN ('reserved', 'released', 'aborted')),
    query         TEXT NOT NULL,
    canonical     TEXT NOT NULL,
    query_key     TEXT NOT NULL,
    dataset       TEXT NOT NULL,
    mechanism     TEXT NOT NULL,
    parameters    TEXT NOT NULL,
    guarantee     TEXT NOT NULL,
    epsilon       REAL NOT NULL CHECK (epsilon >= 0),
    delta         REAL NOT NULL CHECK (delta >= 0 AND delta <= 1),
    answer_text   TEXT,
    pid           INTEGER
);
CREATE INDEX releases_key ON releases (query_key, status);
CREATE TABLE answers (
    release_id    INTEGER PRIMARY KEY REFERENCES releases (id),
    answer        BLOB NOT NULL
);
"""


@dataclass(frozen=True)
class Budget:
    """A privacy budget (epsilon, delta) under basic sequential composition."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        e = check_finite("budget epsilon", self.epsilon)
        if e < 0:
            raise ParameterError(f"budget epsilon must be >= 0, got {e!r}")
        d = check_delta(self.delta, name="budget delta", allow_zero=True)
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)

    def __str__(self) -> str:
        return f"epsilon={self.epsilon:.6g}" + (f", delta={self.delta:.3g}" if self.delta else "")


@dataclass(frozen=True)
class Entry:
    """One ledger row (``answer`` decoded to a numpy array when present)."""

    id: int
    created_at: str
    completed_at: str | None
    status: str
    query: str
    canonical: str
    query_key: str
    dataset: str
    mechanism: str
    parameters: dict[str, Any]
    guarantee: dict[str, Any]
    epsilon: float
    delta: float
    answer: NDArray[Any] | None


def encode_answer(values: NDArray[Any]) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array(values, order="C"), allow_pickle=False)  # keeps 0-d shape
    return zlib.compress(buf.getvalue(), 1)  # fast: 10^6 cells in ~0.1 s


def decode_answer(blob: bytes | None) -> NDArray[Any] | None:
    if blob is None:
        return None
    try:
        return np.load(io.BytesIO(zlib.decompress(blob)), allow_pickle=False)
    except (zlib.error, ValueError, OSError) as exc:
        raise LedgerError(f"ledger answer blob is corrupted: {exc}") from exc


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + f" ({time.time():.6f})"


class Ledger:
    """The budget ledger.  ``path=None`` keeps it in memory (tests, throw-away sessions).

    ``budget`` is required to create a ledger and, for an existing one, must equal the
    total it was created with (or be omitted).
    """

    def __init__(self, path: str | Path | None = None, *, budget: Budget | None = None,
                 timeout: float = 30.0) -> None:
        self.path = _MEMORY if path is None else str(Path(path))
        self.timeout = float(timeout)
        if budget is not None and not isinstance(budget, Budget):
            raise ParameterError(f"budget must be a dpnoise.Budget, got {type(budget).__name__}")
        exists = self.path != _MEMORY and Path(self.path).exists() and \
            Path(self.path).stat().st_size > 0
        try:
            self._con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                        check_same_thread=False)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open ledger {self.path!r}: {exc}") from exc
        with self._errors("open"):
            if exists and Path(self.path).stat().st_size <= QUICK_CHECK_LIMIT:
                row = self._con.execute("PRAGMA quick_check").fetchone()
                if row is None or row[0] != "ok":
                    raise LedgerError(
                        f"ledger {self.path!r} is corrupted (quick_check: {row and row[0]!r}); "
                        "restore it from a backup -- it is never reset automatically"
                    )
            if self.path != _MEMORY:
                self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=FULL")
            self._con.execute("PRAGMA foreign_keys=ON")
            self.budget = self._init_or_check(budget, exists)

    # ----------------------------------------------------------- machinery
    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except (LedgerError, BudgetExceededError, ParameterError):
            raise
        except sqlite3.OperationalError as exc:
            msg = str(exc)
            if "locked" in msg or "busy" in msg:
                raise LedgerError(
                    f"ledger {self.path!r} is locked by another process (waited "
                    f"{self.timeout:g} s during {what}); try again or raise timeout"
                ) from exc
            raise LedgerError(f"ledger {self.path!r} failed during {what}: {msg}") from exc
        except sqlite3.DatabaseError as exc:
            raise LedgerError(
                f"ledger {self.path!r} is not a readable dpnoise ledger ({exc}); it is never "
                "reset automatically -- restore it or choose another file"
            ) from exc

    @contextmanager
    def _write(self, what: str) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: committed on success, rolled back on any error."""
        with self._errors(what):
            self._con.execute("BEGIN IMMEDIATE")
            try:
                yield self._con
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")

    def _init_or_check(self, budget: Budget | None, exists: bool) -> Budget:
        with self._write("initialisation") as con:
            tables = {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                if budget is None:
                    raise LedgerError(
                        f"ledger {self.path!r} does not exist yet: give a total budget "
                        "(budget=Budget(epsilon=..., delta=...) / --budget EPS[,DELTA])"
                    )
                for stmt in _DDL.strip().split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                con.executemany("INSERT INTO meta VALUES (?, ?)", [
                    ("format", FORMAT), ("version", VERSION),
                    ("epsilon_total", float(budget.epsilon).hex()),
                    ("delta_total", float(budget.delta).hex()),
                    ("composition", "basic"), ("created_at", _now()),
                ])
                return budget
            if not {"meta", "releases", "answers"} <= tables:
                raise LedgerError(f"{self.path!r} is an SQLite file but not a dpnoise ledger")
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != FORMAT:
                raise LedgerError(f"{self.path!r} is an SQLite file but not a dpnoise ledger")
            if meta.get("version") != VERSION:
                raise LedgerError(f"ledger {self.path!r} has unsupported version "
                                  f"{meta.get('version')!r} (this dpnoise reads {VERSION})")
            try:
                stored = Budget(float.fromhex(meta["epsilon_total"]),
                                float.fromhex(meta["delta_total"]))
            except (KeyError, ValueError, ParameterError) as exc:
                raise LedgerError(f"ledger {self.path!r} has a corrupted budget: {exc}") from exc
            if budget is not None and budget != stored:
                raise LedgerError(
                    f"ledger {self.path!r} was created with total budget {stored}, not {budget}; "
                    "a ledger's total cannot change (omit the budget to use the stored one)"
                )
            self._check_spent(con, stored)
            orphan = con.execute(
                "SELECT count(*) FROM releases r LEFT JOIN answers a ON a.release_id = r.id"
                " WHERE (r.status = 'released') <> (a.release_id IS NOT NULL)").fetchone()[0]
            if orphan:
                raise LedgerError(f"ledger {self.path!r} is inconsistent: {orphan} release(s) "
                                  "without their answer or answers without a release")
            return stored

    @staticmethod
    def _charged(con: sqlite3.Connection) -> tuple[Fraction, Fraction]:
        eps, dl = Fraction(0), Fraction(0)
        for e, d in con.execute("SELECT epsilon, delta FROM releases"):
            if not (isinstance(e, float) and isinstance(d, float)) or math.isnan(e + d):
                raise LedgerError("ledger has a non-numeric charge: it is corrupted")
            eps += Fraction(e)
            dl += Fraction(d)
        return eps, dl

    def _check_spent(self, con: sqlite3.Connection, total: Budget) -> tuple[Fraction, Fraction]:
        eps, dl = self._charged(con)
        if eps > Fraction(total.epsilon) or dl > Fraction(total.delta):
            raise LedgerError(
                f"ledger {self.path!r} records charges (epsilon={float(eps):.6g}, "
                f"delta={float(dl):.3g}) above its total {total}: it has been tampered with"
            )
        return eps, dl

    # --------------------------------------------------------------- API
    def spent(self) -> Budget:
        """Total charged so far (reserved and released rows alike)."""
        with self._errors("reading"):
            eps, dl = self._charged(self._con)
        return Budget(float(eps), min(1.0, float(dl)))

    def remaining(self) -> Budget:
        with self._errors("reading"):
            eps, dl = self._charged(self._con)
        r_eps = Fraction(self.budget.epsilon) - eps
        r_dl = Fraction(self.budget.delta) - dl
        # round DOWN so the reported remainder is never more than what is left
        return Budget(_float_down(r_eps), _float_down(r_dl))

    def reserve(self, *, epsilon: float, delta: float, query: str, canonical: str,
                query_key: str, dataset: str, mechanism: str, parameters: dict[str, Any],
                guarantee: dict[str, Any]) -> int:
        """Charge (epsilon, delta) durably before any noise is drawn; returns the row id."""
        epsilon = check_finite("epsilon", epsilon)
        delta = check_delta(delta, allow_zero=True)
        if epsilon <= 0:
            raise ParameterError(f"epsilon must be > 0, got {epsilon!r}")
        with self._write("reservation") as con:
            eps, dl = self._check_spent(con, self.budget)
            new_eps, new_dl = eps + Fraction(epsilon), dl + Fraction(delta)
            if new_eps > Fraction(self.budget.epsilon) or new_dl > Fraction(self.budget.delta):
                left = Budget(_float_down(Fraction(self.budget.epsilon) - eps),
                              _float_down(Fraction(self.budget.delta) - dl))
                raise BudgetExceededError(
                    f"release refused, nothing spent: it needs epsilon={epsilon:g}"
                    + (f", delta={delta:g}" if delta else "")
                    + " but only "
                    + (f"epsilon={left.epsilon:.6g}, delta={left.delta:.3g}" if delta
                       else str(left))
                    + f" of the total {self.budget} remains"
                )
            cur = con.execute(
                "INSERT INTO releases (created_at, status, query, canonical, query_key, dataset,"
                " mechanism, parameters, guarantee, epsilon, delta, pid)"
                " VALUES (?, 'reserved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (_now(), query, canonical, query_key, dataset, mechanism,
                 json.dumps(parameters, default=_json_default),
                 json.dumps(guarantee, default=_json_default), epsilon, delta, os.getpid()),
            )
            rid = cur.lastrowid
        assert rid is not None
        return int(rid)

    def complete(self, rid: int, answer: NDArray[Any], answer_text: str = "") -> None:
        """Record the answer of reservation ``rid`` (one transaction)."""
        blob = encode_answer(answer)
        with self._write("completion") as con:
            cur = con.execute(
                "UPDATE releases SET status = 'released', answer_text = ?,"
                " completed_at = ? WHERE id = ? AND status = 'reserved'",
                (answer_text, _now(), rid),
            )
            if cur.rowcount != 1:
                raise LedgerError(f"ledger row {rid} is not an open reservation")
            con.execute("INSERT INTO answers (release_id, answer) VALUES (?, ?)", (rid, blob))

    def abort(self, rid: int, reason: str) -> None:
        """Mark a reservation whose release failed.  It STAYS charged (noise may exist)."""
        with self._write("abort") as con:
            con.execute("UPDATE releases SET status = 'aborted', answer_text = ?,"
                        " completed_at = ? WHERE id = ? AND status = 'reserved'",
                        (reason[:500], _now(), rid))

    def find(self, query_key: str) -> Entry | None:
        """The most recent completed release with this key (for opt-in replay)."""
        with self._errors("lookup"):
            row = self._con.execute(
                f"SELECT {_COLS} FROM {_FROM} WHERE r.query_key = ? AND r.status = 'released'"
                " ORDER BY r.id DESC LIMIT 1", (query_key,)).fetchone()
        return None if row is None else _entry(row)

    def entries(self) -> list[Entry]:
        with self._errors("reading"):
            rows = self._con.execute(f"SELECT {_COLS} FROM {_FROM} ORDER BY r.id").fetchall()
        return [_entry(r) for r in rows]

    def integrity(self) -> str:
        with self._errors("integrity check"):
            return str(self._con.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._con.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({self.path!r}, budget={self.budget})"


_COLS = ("r.id, r.created_at, r.completed_at, r.status, r.query, r.canonical, r.query_key,"
         " r.dataset, r.mechanism, r.parameters, r.guarantee, r.epsilon, r.delta, a.answer")
_FROM = "releases r LEFT JOIN answers a ON a.release_id = r.id"


def _entry(row: tuple[Any, ...]) -> Entry:
    try:
        params = json.loads(row[9])
        guarantee = json.loads(row[10])
    except (TypeError, ValueError) as exc:
        raise LedgerError(f"ledger row {row[0]} is corrupted: {exc}") from exc
    return Entry(*row[:9], params, guarantee, row[11], row[12], decode_answer(row[13]))


def _float_down(x: Fraction) -> float:
    """The largest double <= x (>= 0)."""
    if x <= 0:
        return 0.0
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, 0.0)
    return f


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
