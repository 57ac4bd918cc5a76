"""Migrating a ledger of format 1 or 2 to the current format (``dpnoise ledger migrate``).

Its own module because it uses both the file layer (:mod:`~dpnoise.ledger.store`)
and the chain verification (:mod:`~dpnoise.ledger.verify`), which reads that layer.
"""

from __future__ import annotations

import json
import os
import sqlite3
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from .chain import (
    ChainState,
    basic_state,
)
from .store import (
    FORMAT,
    V1,
    V1_COLS,
    V1_FROM,
    V1_REASON,
    V2,
    VERSION,
    V1Header,
    append_event,
    create_tables,
    header_body,
    use_rollback_journal,
    v1_check,
)


def migrate(path: str | Path, *, timeout: float = 30.0) -> Path | None:
    """Convert a format-1 or format-2 ledger to format 3 in place; returns the path of the
    backup of a format-1 ledger (``FILE.v1.bak``, made first under the write lock), or
    ``None`` for a format-2 ledger (its events are kept as they are: nothing is rewritten).

    Format 1: each row becomes a ``reserve`` event (its id kept as the release number)
    followed by ``complete`` (with its answer) or ``abort`` (reason ``release_failed``: the
    exception text format 1 stored is not carried over; it stays in the backup only), in id
    order, after an ``init`` event with the stored total and a ``migrate`` event.
    Format 2: the WAL is checkpointed into the main file and the journal switched (which
    needs every other connection to the file closed), the whole chain is verified, and a
    ``migrate`` event is appended; the version changes in the same transaction.
    """
    p = Path(path)
    name = str(p)
    if not p.is_file() or p.stat().st_size == 0:
        raise LedgerError(f"ledger {name!r} does not exist or is empty: nothing to migrate")
    con = sqlite3.connect(name, timeout=timeout, isolation_level=None)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall()) \
            if "meta" in tables else {}
        if meta.get("format") != FORMAT:
            raise LedgerError(f"{name!r} is not a dpnoise ledger: nothing to migrate")
        version = meta.get("version")
        if version == V2 and {"events", "blobs", "composed"} <= tables:
            _migrate_v2(con, name)
            return None
        if version != V1 or not {"releases", "answers"} <= tables:
            raise LedgerError(f"ledger {name!r} has format version {version!r}, not "
                              f"{V1!r} or {V2!r}: nothing to migrate")
        return _migrate_v1(con, p, timeout)
    except sqlite3.Error as exc:
        raise LedgerError(f"cannot migrate ledger {name!r}: {exc}") from exc
    finally:
        con.close()


def _migrate_v2(con: sqlite3.Connection, name: str) -> None:
    import time

    from .chain import verify_rows
    from .verify import verify_all

    use_rollback_journal(con, name)  # the WAL's events into the main file, first
    con.execute("BEGIN IMMEDIATE")
    try:
        st = verify_all(con, name, hash_answers=True)
        con.execute("UPDATE meta SET value = ? WHERE key = 'version'", (VERSION,))
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + f" ({time.time():.6f})"
        verify_rows(st, [append_event(con, st, kind="migrate", at=at,
                                      body={"from_version": V2})])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _migrate_v1(con: sqlite3.Connection, p: Path, timeout: float) -> Path:
    name = str(p)
    backup = p.with_name(p.name + ".v1.bak")
    if backup.exists():
        raise LedgerError(f"backup {str(backup)!r} already exists: move it away first (it is "
                          "never overwritten)")
    use_rollback_journal(con, name)
    con.execute("PRAGMA secure_delete=ON")  # the dropped format-1 rows are zeroed
    con.execute("BEGIN IMMEDIATE")
    try:
        head = v1_check(con, name)
        # copy what is committed through a second connection (a reader: the write lock
        # still lets it read, and nothing can change meanwhile)
        reader = sqlite3.connect(name, timeout=timeout)
        bak = sqlite3.connect(str(backup))
        try:
            reader.backup(bak)
        finally:
            bak.close()
            reader.close()
        with open(backup, "rb+") as fh:
            os.fsync(fh.fileno())
        _convert(con, name, head)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    # the old rows' pages were zeroed (secure_delete): rebuild the file so that no
    # format-1 text (e.g. an old exception message) survives in a free page
    con.execute("VACUUM")
    return backup


def _convert(con: sqlite3.Connection, name: str, head: V1Header) -> None:
    from .chain import verify_rows

    rows = con.execute(f"SELECT {V1_COLS} FROM {V1_FROM} ORDER BY r.id").fetchall()
    con.execute("DROP TABLE meta")
    create_tables(con)
    st = ChainState(name)

    def add(**kw: Any) -> None:
        nonlocal st
        st = verify_rows(st, [append_event(con, st, **kw)])

    add(kind="init", at=head.created_at or "unknown",
        body=header_body(head.epsilon, head.delta, None, "basic"))
    add(kind="migrate", at=head.created_at or "unknown",
        body={"from_version": V1, "releases": len(rows)})
    eps, dl = Fraction(0), Fraction(0)
    for (rid, created, completed, status, query, canonical, key, dataset, mech, params,
         guarantee, e, d, answer, text, pid) in rows:
        eps, dl = eps + Fraction(e), dl + Fraction(d)
        try:
            body = {"query": query, "canonical": canonical, "dataset": dataset,
                    "mechanism": mech, "parameters": json.loads(params),
                    "guarantee": json.loads(guarantee), "pid": pid}
        except (TypeError, ValueError) as exc:
            raise LedgerError(f"ledger {name!r} row {rid} is corrupted: {exc}") from exc
        add(kind="reserve", at=created, release=rid, query_key=key, epsilon=e, delta=d,
            body=body, composed=basic_state(eps, dl, rid))
        if status == "released":
            add(kind="complete", at=completed or created, release=rid,
                body={"answer_text": text or ""}, answer=answer)
        elif status == "aborted":
            add(kind="abort", at=completed or created, release=rid,
                body={"reason": V1_REASON})
    con.execute("DROP TABLE answers")
    con.execute("DROP TABLE releases")
