"""Anchors: a file outside the ledger holding a head of its chain (detects a rollback).

Anchoring is an event of the chain, so an anchored ledger knows it needs its anchor; the
anchor is written under the ledger's write lock and its directory fsynced.
"""


from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import LedgerError, ParameterError
from .chain import (
    Anchor,
    ChainState,
    check_anchor,
    new_anchor_id,
    read_anchor,
    verify_rows,
    write_anchor,
)
from .records import (
    timestamp,
)
from .store import (
    append_event,
    fingerprint,
)


class LedgerAnchoring:
    """Writing and comparing a ledger's anchor; mixed into
    :class:`~dpnoise.ledger.ledger.Ledger`."""

    def write_anchor(self, path: str | Path | None = None) -> Path:
        """Anchor the ledger, or copy its anchor, to ``path`` (default: this ledger's anchor
        file), under the write lock.

        Not yet anchored: appends the anchoring event with a fresh random anchor id and
        writes the anchor file (a new file, or an anchor of this ledger written before
        anchors had ids, checked first); from then on reservations need it.  Anchored: a
        copy of the anchor at the current head -- only by an object opened with the anchor
        (else a restored older copy could be given a matching anchor).

        Parameters
        ----------
        path : str, pathlib.Path or None, default None
            The anchor file (None: this ledger's).

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        ParameterError
            If there is no path, or the ledger is in memory or read-only.
        """
        target = path if path is not None else self.anchor
        if target is None:
            raise ParameterError("write_anchor needs a path (this ledger has no anchor file)")
        if not self.durable or self.read_only:
            raise LedgerError(f"ledger {self.path!r} has no chain to anchor (in memory, or "
                              f"format {self.version}: run `dpnoise ledger migrate` first)")
        with self._write("anchoring") as con:
            st = self._sync(con)
            old = self._anchor_to_replace(con, st, Path(target))
            if st.anchor_id is None:
                row = append_event(con, st, kind="anchor", at=timestamp(),
                                   body={"anchor_id": new_anchor_id()})
                st = verify_rows(st, [row])
                # the file first: if the commit then fails, the anchor names an event the
                # ledger lacks and is refused (delete it and anchor again) -- never an
                # anchored ledger without its anchor file
                write_anchor(target, Anchor(st.ledger_id, st.seq, st.head, st.anchor_id),
                             new=old is None)
            elif self.anchor is None:
                raise LedgerError(
                    f"ledger {self.path!r} is anchored (event {st.anchor_seq}): its anchor is "
                    "copied only by a ledger opened with it (anchor=... / --anchor FILE)")
            else:
                write_anchor(target, Anchor(st.ledger_id, st.seq, st.head, st.anchor_id),
                             new=old is None)
            fp = fingerprint(con, st.seq)
        self._state, self._fp = st, fp
        self._size = max(self._size, self._file_size())
        return Path(target)

    def _anchor_to_replace(self, con: sqlite3.Connection, st: ChainState,
                           target: Path) -> Anchor | None:
        """An existing ``target`` may be replaced only if it is an anchor of this ledger
        (same chain, same anchor id or none yet) that the chain satisfies."""
        if not (target.exists() or target.is_symlink()):
            return None
        old = read_anchor(target)
        if old.anchor_id != st.anchor_id:
            raise LedgerError(f"anchor file {str(target)!r} already exists and is not an "
                              "anchor of this ledger's anchoring: it is never overwritten")
        at = con.execute("SELECT hash FROM events WHERE seq = ?", (old.seq,)).fetchone()
        check_anchor(self.path, old, target, at and at[0], st)
        return old

    def _compare_anchor(self, con: sqlite3.Connection) -> None:
        """At open: the chain reaches the anchor's head, with the anchor's id."""
        assert self.anchor is not None
        if not Path(self.anchor).exists():
            raise LedgerError(
                f"anchor file {self.anchor!r} does not exist; it is written when a ledger is "
                "created with an anchor, or by `dpnoise ledger verify "
                f"{self.path} --write-anchor {self.anchor}`")
        a = read_anchor(self.anchor)
        at = con.execute("SELECT hash FROM events WHERE seq = ?", (a.seq,)).fetchone()
        check_anchor(self.path, a, self.anchor, at and at[0], self._state)
        if a.anchor_id is None and not self.read_only:
            raise LedgerError(
                f"anchor file {self.anchor!r} was written before anchors had ids: anchor the "
                f"ledger with `dpnoise ledger verify {self.path} --anchor {self.anchor} "
                f"--write-anchor {self.anchor}` (it checks the old anchor first)")
