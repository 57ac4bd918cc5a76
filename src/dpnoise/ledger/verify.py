"""Verifying a whole ledger file: the chain from its first event, the blobs, the
composed-state cache, and optionally an anchor (``dpnoise ledger verify``).

What is checked and what cannot be: see :mod:`dpnoise.ledger.chain`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..errors import LedgerError
from .chain import ChainError, ChainState, check_anchor, read_anchor, sha256_hex, verify_rows
from .store import FORMAT, SELECT_EVENTS, V1, V2, VERSION, v1_check


def ledger_version(con: sqlite3.Connection, path: str) -> str:
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables:
        raise LedgerError(f"{path!r} is an SQLite file but not a dpnoise ledger")
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("format") != FORMAT:
        raise LedgerError(f"{path!r} is an SQLite file but not a dpnoise ledger")
    version = meta.get("version")
    chained = {"events", "blobs", "composed"}
    need = {V1: {"releases", "answers"}, V2: chained, VERSION: chained}.get(str(version))
    if need is None:
        raise LedgerError(f"ledger {path!r} has unsupported version {version!r} (this dpnoise "
                          f"reads {VERSION}, and {V1} and {V2} read-only)")
    if not need <= tables:
        raise LedgerError(f"ledger {path!r} (version {version}) lacks its tables "
                          f"{', '.join(sorted(need - tables))}: it is damaged")
    return str(version)


def verify_all(con: sqlite3.Connection, path: str, *, hash_answers: bool) -> ChainState:
    """Verify a whole format-2 ledger from its first event: the chain, the blobs, the
    composed-state cache.  Raises :class:`ChainError` / :class:`LedgerError`."""
    st = verify_rows(ChainState(path), con.execute(f"{SELECT_EVENTS} ORDER BY seq"))
    if st.seq == 0 or st.header is None:
        raise ChainError(path, 1, "the init event (the ledger's header) is missing")
    check_blobs(con, path, 1, hash_answers=hash_answers)
    cache = con.execute("SELECT seq, state FROM composed").fetchall()
    if st.state_seq:
        # a missing cache is rebuilt from the charges by the next reservation; a present
        # one must be the state the last reserve event names
        if len(cache) > 1 or (cache and (
                cache[0][0] != st.state_seq or not isinstance(cache[0][1], bytes)
                or sha256_hex(cache[0][1]) != st.state_sha256)):
            raise ChainError(path, st.state_seq, "the cached composed state does not match "
                                                 "the state hash of this reserve event")
    elif cache:
        raise ChainError(path, None, "a composed state is cached but nothing was reserved")
    return st


def check_blobs(con: sqlite3.Connection, path: str, from_seq: int, *,
                 hash_answers: bool) -> None:
    """Every blob an event names from ``from_seq`` on is present (and hashes to it: always
    for accounting objects, for answers when ``hash_answers``); no blob lacks its event."""
    for role, col in (("answer", "answer_sha256"), ("accounting", "accounting_sha256")):
        want_data = hash_answers or role == "accounting"
        rows = con.execute(
            f"SELECT e.seq, e.{col}, {'b.data' if want_data else 'b.seq IS NOT NULL'} "
            f"FROM events e LEFT JOIN blobs b ON b.seq = e.seq AND b.role = ? "
            f"WHERE e.seq >= ? AND e.{col} IS NOT NULL", (role, from_seq))
        for seq, digest, data in rows:
            if data is None or data == 0:
                raise ChainError(path, seq, f"its {role} blob is missing")
            if want_data and (not isinstance(data, bytes) or sha256_hex(data) != digest):
                raise ChainError(path, seq, f"its {role} blob does not match its hash")
    stray = con.execute(
        "SELECT b.seq, b.role FROM blobs b LEFT JOIN events e ON e.seq = b.seq AND "
        "((b.role = 'answer' AND e.answer_sha256 IS NOT NULL) OR "
        "(b.role = 'accounting' AND e.accounting_sha256 IS NOT NULL)) "
        "WHERE b.seq >= ? AND e.seq IS NULL LIMIT 1", (from_seq,)).fetchone()
    if stray is not None:
        raise ChainError(path, int(stray[0]), f"an {stray[1]} blob is stored for an event that "
                                              "does not name it")



# ------------------------------------------------------------------- verification
@dataclass(frozen=True)
class VerifyReport:
    """What ``dpnoise ledger verify FILE`` found."""

    path: str
    ok: bool
    version: str | None
    events: int  # events verified before the first problem (all of them when ok)
    releases: int
    head: str | None
    chain_id: str | None
    problem: str | None = None
    seq: int | None = None  # the event where the chain breaks, when known
    anchor: str | None = None  # the anchor file that was compared, if any
    #: the event that anchored the chain (1: created with an anchor; 0: not anchored)
    anchored_at: int = 0


def recompose_states(con: sqlite3.Connection, path: str, accountant: str) -> None:
    """pld / zcdp: compose the stored charges in order and check that every reserve event's
    state hash is that composition (the composition is deterministic on one platform; a
    different FFT library could round differently -- then this check, not the budget,
    fails)."""
    from ..accounting import Charge, get_accountant

    acc = get_accountant(accountant)
    state = acc.empty()
    for seq, want, blob in con.execute(
            "SELECT e.seq, e.state_sha256, b.data FROM events e JOIN blobs b ON b.seq = e.seq "
            "AND b.role = 'accounting' WHERE e.kind = 'reserve' ORDER BY e.seq"):
        try:
            state = acc.compose(state, Charge.from_bytes(blob))
        except Exception as exc:
            raise ChainError(path, seq, f"its accounting object is unreadable ({exc})") from exc
        if state.content_hash() != want:
            raise ChainError(path, seq, "its composed-state hash is not the composition of "
                                        "the charges up to it")


def verify_ledger(path: str | Path, *, anchor: str | Path | None = None,
                  recompose: bool = True) -> VerifyReport:
    """Verify a ledger file completely, without writing to it: every event's hash and link,
    the rules of the event kinds, every blob's hash, the composed-state cache, under
    ``pld``/``zcdp`` (``recompose``) that every composed state is the composition of the
    stored charges, and (with ``anchor``) that the chain reaches the anchored head.  Never
    raises for a broken chain: the report says where it breaks."""
    name = str(Path(path))
    p = Path(name)
    if not p.is_file():
        return VerifyReport(name, False, None, 0, 0, None, None, "the file does not exist")
    if p.stat().st_size == 0:
        return VerifyReport(name, False, None, 0, 0, None, None,
                            "the file is empty (0 bytes): not a ledger")
    con = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    partial = ChainState(name)
    version: str | None = None
    try:
        con.execute("BEGIN")
        row = con.execute("PRAGMA quick_check").fetchone()
        if row is None or row[0] != "ok":
            raise LedgerError(f"SQLite quick_check fails: {row and row[0]!r}")
        version = ledger_version(con, name)
        if version == V1:
            v1_check(con, name)
            return VerifyReport(name, False, V1, 0, 0, None, None,
                                f"format version 1 has no hash chain to verify; convert it "
                                f"with `dpnoise ledger migrate {name}`")
        # (a format-2 chain verifies as it is; it is refused for releases until migrated)
        for r in con.execute(f"{SELECT_EVENTS} ORDER BY seq"):
            partial = verify_rows(partial, [r])
        st = verify_all(con, name, hash_answers=True)
        if recompose and st.header is not None and st.header.accountant != "basic":
            recompose_states(con, name, st.header.accountant)
        if anchor is not None:
            a = read_anchor(anchor)
            at = con.execute("SELECT hash FROM events WHERE seq = ?", (a.seq,)).fetchone()
            check_anchor(name, a, anchor, at and at[0], st)
        return VerifyReport(name, True, version, st.seq, st.releases, st.head, st.ledger_id,
                            anchor=None if anchor is None else str(anchor),
                            anchored_at=st.anchor_seq)
    except ChainError as exc:
        good = partial.seq if exc.seq is None else min(partial.seq, exc.seq - 1)
        return VerifyReport(name, False, version, good, partial.releases,
                            partial.head if partial.seq else None,
                            partial.ledger_id or None, exc.what, exc.seq,
                            None if anchor is None else str(anchor), partial.anchor_seq)
    except (LedgerError, sqlite3.Error) as exc:
        return VerifyReport(name, False, version, partial.seq, partial.releases,
                            partial.head if partial.seq else None, partial.ledger_id or None,
                            str(exc), None, None if anchor is None else str(anchor),
                            partial.anchor_seq)
    finally:
        con.close()
