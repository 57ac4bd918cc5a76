"""The ledger's SQLite file: tables, atomic creation and reading format 1 (migration:
:mod:`dpnoise.ledger.migrate`).

Format 3 (current) tables -- the same as format 2's:

``meta(key, value)``
    ``format = 'dpnoise-ledger'``, ``version = '3'`` (recognition only; the authoritative
    header is the hashed init event).
``events(seq, kind, release, at, query_key, epsilon, delta, body, accounting_sha256,
answer_sha256, state_sha256, prev, hash)``
    the append-only, hash-chained log (see :mod:`dpnoise.ledger.chain`).
    ``epsilon``/``delta`` are set on ``reserve`` events only and hold, under the ``basic``
    accountant, the charge: what this release adds to the spent budget by basic sequential
    composition.  (Under a tighter accountant they keep the release's own calibrated
    (epsilon, delta), i.e. what basic composition would have charged; the accountant's
    spend is then the composition of the accounting objects.)
``blobs(seq, role, data)``
    ``role = 'answer'`` (compressed numpy array of a ``complete`` event) or
    ``'accounting'`` (a reserve event's serialised accounting object); each is covered by the
    SHA-256 recorded in its event.
``composed(id = 1, seq, state)``
    a cache of the composed state after the last reserve event ``seq``; its SHA-256 must
    equal that event's ``state_sha256``, so the cache is covered by the chain.

Triggers make ``events`` and ``blobs`` refuse UPDATE and DELETE, so a naive edit with an
SQLite client fails loudly; the chain detects the edits of someone who drops them.

**Durability.**  Format 3 runs SQLite with a rollback journal (``journal_mode=DELETE``)
and ``synchronous=EXTRA``: when a transaction's COMMIT returns, its events are in the main
database file, fsynced, and the journal's removal is fsynced too.  Format 2 ran in WAL
mode, where a committed event could live only in the ``-wal`` file (lost with it, or when
only the main file is copied) and a checkpoint from a process that missed a deleted WAL
could overwrite another's events; format 3 is the same chain with the journal switched
and a ``migrate`` event, and an older dpnoise (which would switch it back to WAL) refuses
it by its version.

Format 1 (``releases`` + ``answers`` tables, rows updated in place) is read by the
ledger read-only and converted by :func:`migrate`; format 2 is read (and verified)
read-only and converted by :func:`migrate`.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from .chain import (
    EVENT_COLUMNS,
    ChainState,
    canonical_json,
    event_hash,
    fsync_dir,
    sha256_hex,
)

FORMAT = "dpnoise-ledger"
VERSION = "3"
V2 = "2"
V1 = "1"
JOURNAL_MODE = "delete"  # a rollback journal: a commit is in the main file when it returns
V1_REASON = "release_failed"  # what a format-1 'aborted' row becomes (its text is dropped)

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (
    seq               INTEGER PRIMARY KEY,
    kind              TEXT NOT NULL,
    release           INTEGER,
    at                TEXT NOT NULL,
    query_key         TEXT,
    epsilon           REAL,
    delta             REAL,
    body              TEXT NOT NULL,
    accounting_sha256 TEXT,
    answer_sha256     TEXT,
    state_sha256      TEXT,
    prev              TEXT NOT NULL,
    hash              TEXT NOT NULL
);
CREATE INDEX events_key ON events (query_key, release);
CREATE INDEX events_release ON events (release, kind);
CREATE TABLE blobs (
    seq   INTEGER NOT NULL,
    role  TEXT NOT NULL,
    data  BLOB NOT NULL,
    PRIMARY KEY (seq, role)
);
CREATE TABLE composed (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL,
                       state BLOB NOT NULL);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'dpnoise ledger events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'dpnoise ledger events are append-only'); END;
CREATE TRIGGER blobs_no_update BEFORE UPDATE ON blobs
    BEGIN SELECT RAISE(ABORT, 'dpnoise ledger blobs are append-only'); END;
CREATE TRIGGER blobs_no_delete BEFORE DELETE ON blobs
    BEGIN SELECT RAISE(ABORT, 'dpnoise ledger blobs are append-only'); END
"""

SELECT_EVENTS = f"SELECT {', '.join(EVENT_COLUMNS)} FROM events"


def create_tables(con: sqlite3.Connection) -> None:
    for stmt in DDL.strip().split(";\n"):
        if stmt.strip():
            con.execute(stmt)
    con.executemany("INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("version", VERSION)])


def use_rollback_journal(con: sqlite3.Connection, path: str) -> None:
    """Outside a transaction: switch ``con``'s database to the rollback journal (from WAL:
    SQLite checkpoints the WAL into the main file and removes it, which needs every other
    connection closed) and make every commit durable in the main file."""
    mode = str(con.execute(f"PRAGMA journal_mode={JOURNAL_MODE}").fetchone()[0]).lower()
    if mode != JOURNAL_MODE:
        raise LedgerError(
            f"ledger {path!r} is in journal mode {mode!r} and cannot be switched to "
            f"{JOURNAL_MODE!r} while another process has it open (an older dpnoise or an "
            "SQLite client): close it and try again")
    con.execute("PRAGMA synchronous=EXTRA")


def append_event(con: sqlite3.Connection, state: ChainState, *, kind: str, at: str,
                 body: dict[str, Any], release: int | None = None,
                 query_key: str | None = None, epsilon: float | None = None,
                 delta: float | None = None, accounting: bytes | None = None,
                 answer: bytes | None = None, composed: bytes | None = None
                 ) -> tuple[Any, ...]:
    """Insert the next event after ``state`` (and its blobs); returns the row as stored."""
    row: dict[str, Any] = {
        "seq": state.seq + 1, "kind": kind, "release": release, "at": at,
        "query_key": query_key,
        "epsilon": None if epsilon is None else float(epsilon),
        "delta": None if delta is None else float(delta),
        "body": canonical_json(body),
        "accounting_sha256": None if accounting is None else sha256_hex(accounting),
        "answer_sha256": None if answer is None else sha256_hex(answer),
        "state_sha256": None if composed is None else sha256_hex(composed),
        "prev": state.head,
    }
    row["hash"] = event_hash(state.ledger_id, row)
    values = tuple(row[c] for c in EVENT_COLUMNS)
    con.execute(f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) VALUES "
                f"({', '.join('?' * len(EVENT_COLUMNS))})", values)
    for role, data in (("accounting", accounting), ("answer", answer)):
        if data is not None:
            con.execute("INSERT INTO blobs (seq, role, data) VALUES (?, ?, ?)",
                        (row["seq"], role, data))
    if composed is not None:
        con.execute("INSERT OR REPLACE INTO composed (id, seq, state) VALUES (1, ?, ?)",
                    (row["seq"], composed))
    return values


def header_body(epsilon: float, delta: float, rho: float | None, accountant: str) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "accountant": accountant,
            "epsilon_total": float(epsilon).hex(), "delta_total": float(delta).hex(),
            "rho_total": None if rho is None else float(rho).hex()}


def fingerprint(con: sqlite3.Connection, upto: int) -> tuple[Any, ...]:
    """A cheap summary of events 1..upto (count, charges, lengths, last hash), compared at
    every reservation to notice changes to events already verified."""
    agg = con.execute(
        "SELECT count(*), total(epsilon), total(delta), total(release),"
        " total(length(body) + length(at) + length(hash) + ifnull(length(query_key), 0))"
        " FROM events WHERE seq <= ?", (upto,)).fetchone()
    last = con.execute("SELECT hash FROM events WHERE seq = ?", (upto,)).fetchone()
    return (*agg, None if last is None else last[0])


def create_file(path: Path, init: dict[str, Any], at: str,
                before_link: Callable[[str], None] | None = None) -> None:
    """Create a new ledger at ``path`` atomically; never touches an existing path.
    ``before_link(ledger_id)`` runs once the file is complete, before it appears under its
    name (an exception there leaves nothing behind)."""
    if path.exists() or path.is_symlink():
        raise LedgerError(f"ledger {str(path)!r} already exists: a ledger is never re-created "
                          "or reset (open it without create, or choose a new file)")
    if not path.parent.is_dir():
        raise LedgerError(f"cannot create ledger {str(path)!r}: directory "
                          f"{str(path.parent)!r} does not exist")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.creating")
    try:
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            use_rollback_journal(con, str(path))
            con.execute("BEGIN IMMEDIATE")
            create_tables(con)
            row = append_event(con, ChainState(str(path)), kind="init", at=at, body=init)
            con.execute("COMMIT")
        finally:
            con.close()
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        if before_link is not None:
            before_link(str(row[EVENT_COLUMNS.index("hash")]))
        try:
            os.link(tmp, path)  # atomic, and fails if the path appeared meanwhile
        except FileExistsError as exc:
            raise LedgerError(f"ledger {str(path)!r} already exists: a ledger is never "
                              "re-created or reset") from exc
        fsync_dir(path.parent)
    except (OSError, sqlite3.Error) as exc:
        raise LedgerError(f"cannot create ledger {str(path)!r}: {exc}") from exc
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{tmp}{suffix}")


# ------------------------------------------------------------------ format 1
V1_COLS = ("r.id, r.created_at, r.completed_at, r.status, r.query, r.canonical, r.query_key,"
           " r.dataset, r.mechanism, r.parameters, r.guarantee, r.epsilon, r.delta, a.answer,"
           " r.answer_text, r.pid")
V1_FROM = "releases r LEFT JOIN answers a ON a.release_id = r.id"


@dataclass(frozen=True)
class V1Header:
    epsilon: float
    delta: float
    created_at: str


def v1_header(con: sqlite3.Connection, path: str) -> V1Header:
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    try:
        return V1Header(float.fromhex(meta["epsilon_total"]), float.fromhex(meta["delta_total"]),
                        meta.get("created_at", ""))
    except (KeyError, ValueError) as exc:
        raise LedgerError(f"ledger {path!r} has a corrupted budget: {exc}") from exc


def v1_charged(con: sqlite3.Connection, path: str) -> tuple[Fraction, Fraction]:
    eps, dl = Fraction(0), Fraction(0)
    for e, d in con.execute("SELECT epsilon, delta FROM releases"):
        if not (isinstance(e, float) and isinstance(d, float)) or math.isnan(e + d):
            raise LedgerError(f"ledger {path!r} has a non-numeric charge: it is corrupted")
        eps += Fraction(e)
        dl += Fraction(d)
    return eps, dl


def v1_check(con: sqlite3.Connection, path: str) -> V1Header:
    """The checks format 1 had: charges within the total, every release with its answer."""
    head = v1_header(con, path)
    eps, dl = v1_charged(con, path)
    if eps > Fraction(head.epsilon) or dl > Fraction(head.delta):
        raise LedgerError(f"ledger {path!r} records charges (epsilon={float(eps):.6g}, "
                          f"delta={float(dl):.3g}) above its total: it has been tampered with")
    orphan = con.execute(
        f"SELECT count(*) FROM {V1_FROM}"
        " WHERE (r.status = 'released') <> (a.release_id IS NOT NULL)").fetchone()[0]
    if orphan:
        raise LedgerError(f"ledger {path!r} is inconsistent: {orphan} release(s) without "
                          "their answer or answers without a release")
    return head
