"""Reading the releases recorded in a ledger (both the event log and format 1).
"""


from __future__ import annotations

import dataclasses
import json
import sqlite3
from fractions import Fraction
from typing import Any

from ..errors import LedgerError
from .budget import (
    float_up,
)
from .chain import (
    ChainError,
    sha256_hex,
)
from .records import (
    Entry,
    decode_answer,
    decode_record,
)
from .store import (
    V1_COLS,
    V1_FROM,
)


class LedgerReading:
    """Reading a ledger: its releases (:meth:`entries`), replay lookup (:meth:`find`) and
    the integrity summary; mixed into :class:`~dpnoise.ledger.ledger.Ledger`."""

    def find(self, query_key: str) -> Entry | None:
        """The most recent completed release with this key (for opt-in replay).

        Parameters
        ----------
        query_key : str
            The canonical key of a query on a data set.

        Returns
        -------
        Entry or None
            The release, or None.
        """
        if self._v1:
            with self._read("lookup") as con:
                row = con.execute(
                    f"SELECT {V1_COLS} FROM {V1_FROM} WHERE r.query_key = ? AND "
                    "r.status = 'released' ORDER BY r.id DESC LIMIT 1", (query_key,)).fetchone()
            return None if row is None else entry_v1(row)
        st = self._refresh()
        with self._read("lookup") as con:
            row = con.execute(
                "SELECT r.release FROM events r JOIN events c ON c.release = r.release AND "
                "c.kind = 'complete' WHERE r.kind = 'reserve' AND r.query_key = ? AND "
                "c.seq <= ? ORDER BY r.release DESC LIMIT 1", (query_key, st.seq)).fetchone()
            if row is None:
                return None
            found = read_entries(con, self.path, st.seq, release=int(row[0]))
        return found[0] if found else None

    def entries(self) -> list[Entry]:
        """Every release, in order of reservation.

        Returns
        -------
        list of Entry
            One row per release.
        """
        if self._v1:
            with self._read("reading") as con:
                rows = con.execute(f"SELECT {V1_COLS} FROM {V1_FROM} ORDER BY r.id").fetchall()
            out, e, d = [], Fraction(0), Fraction(0)
            for r in rows:
                entry = entry_v1(r)
                e, d = e + Fraction(entry.epsilon), d + Fraction(entry.delta)
                be, bd = float_up(e), min(1.0, float_up(d))
                out.append(dataclasses.replace(entry, composed_epsilon=be, composed_delta=bd,
                                               basic_epsilon=be, basic_delta=bd))
            return out
        st = self._refresh()
        with self._read("reading") as con:
            return read_entries(con, self.path, st.seq)

    def integrity(self) -> str:
        """SQLite's own ``PRAGMA integrity_check`` of the file.

        Returns
        -------
        str
            "ok", or SQLite's description of the damage.
        """
        with self._errors("integrity check"):
            return str(self._con.execute("PRAGMA integrity_check").fetchone()[0])


def read_entries(con: sqlite3.Connection, path: str, upto: int,
             release: int | None = None) -> list[Entry]:
    """Releases rebuilt from the events 1..upto (one release, or all)."""
    where = "e.seq <= ? AND e.kind IN ('reserve', 'complete', 'abort')"
    args: tuple[Any, ...] = (upto,)
    if release is not None:
        where += " AND e.release = ?"
        args += (release,)
    rows = con.execute(
        "SELECT e.seq, e.kind, e.release, e.at, e.query_key, e.epsilon, e.delta, e.body,"
        " e.answer_sha256, e.hash, b.data FROM events e LEFT JOIN blobs b"
        f" ON b.seq = e.seq AND b.role = 'answer' WHERE {where} ORDER BY e.seq", args)
    out: dict[int, dict[str, Any]] = {}
    run_e, run_d = Fraction(0), Fraction(0)
    if release is not None:  # the running sums need the releases before it
        run_e, run_d = (Fraction(x) for x in sums_before(con, release))
    for seq, kind, rel, at, key, eps, dl, body_text, digest, h, blob in rows:
        try:
            body = json.loads(body_text)
        except (TypeError, ValueError) as exc:
            raise ChainError(path, seq, "its body is not JSON") from exc
        if kind == "reserve":
            run_e, run_d = run_e + Fraction(eps), run_d + Fraction(dl)
            be, bd = float_up(run_e), min(1.0, float_up(run_d))
            comp = body.get("composed")
            ce, cd, cr = (float(comp["epsilon"]), float(comp["delta"]), float(comp["rho"])) \
                if isinstance(comp, dict) else (be, bd, None)
            out[rel] = {"composed_epsilon": ce, "composed_delta": cd, "composed_rho": cr,
                        "basic_epsilon": be, "basic_delta": bd,
                        "id": rel, "created_at": at, "completed_at": None,
                        "status": "reserved", "query": body.get("query", ""),
                        "canonical": body.get("canonical", ""), "query_key": key,
                        "dataset": body.get("dataset", ""),
                        "mechanism": body.get("mechanism", ""),
                        "parameters": body.get("parameters", {}),
                        "guarantee": body.get("guarantee", {}), "epsilon": eps, "delta": dl,
                        "answer": None, "reason": None, "head": h,
                        "components": None, "released_keys": None, "record_note": None}
            continue
        e = out.get(rel)
        if e is None:
            raise ChainError(path, seq, f"{kind} of release {rel} which was never reserved")
        e["completed_at"], e["head"] = at, h
        if kind == "abort":
            e["status"], e["reason"] = "aborted", body.get("reason")
        else:
            if blob is None or sha256_hex(blob) != digest:
                raise ChainError(path, seq, "its answer blob is missing or does not match "
                                            "its hash")
            e["status"], e["answer"] = "released", decode_answer(blob)
            e["components"], e["released_keys"], e["record_note"] = decode_record(
                body.get("record"))
    return [Entry(**e) for e in out.values()]


def sums_before(con: sqlite3.Connection, release: int) -> tuple[float, float]:
    e, d = Fraction(0), Fraction(0)
    for x, y in con.execute("SELECT epsilon, delta FROM events WHERE kind = 'reserve' AND "
                            "release < ?", (release,)):
        e, d = e + Fraction(x), d + Fraction(y)
    return e, d  # type: ignore[return-value]


def entry_v1(row: tuple[Any, ...]) -> Entry:
    try:
        params = json.loads(row[9])
        guarantee = json.loads(row[10])
    except (TypeError, ValueError) as exc:
        raise LedgerError(f"ledger row {row[0]} is corrupted: {exc}") from exc
    reason = "release_failed" if row[3] == "aborted" else None  # v1 stored exception text
    return Entry(*row[:9], params, guarantee, row[11], row[12], decode_answer(row[13]),
                 reason, None)
