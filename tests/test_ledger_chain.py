"""The ledger's lifecycle and tamper evidence: explicit creation, empty/missing files, a file
deleted or replaced under a live session, edits with the ``sqlite3`` module (update,
delete, reorder), anchors, format-1 migration, abort codes, the seed rule, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpnoise import Budget, DpnoiseError, LedgerError, ParameterError, Session
from dpnoise.cli import main
from dpnoise.ledger import encode_answer, verify_ledger
from dpnoise.ledger.chain import (
    EVENT_COLUMNS,
    GENESIS,
    basic_state,
    event_hash,
    sha256_hex,
)
from dpnoise.ledger.migrate import migrate
from dpnoise.randomness import CryptoRandom, SeededRandom
from dpnoise.session import Ledger

KW: dict[str, Any] = dict(query="q", canonical="q", query_key="k", dataset="d", mechanism="m",
                          parameters={}, guarantee={})
DATA = {"x": np.arange(10.0)}
SCHEMA = {"columns": {"x": {"lower": 0, "upper": 10}}}


def _ledger(p: Path, n: int = 3, total: float = 10.0) -> None:
    """A ledger with n completed releases of epsilon 0.5: events 1 (init), 2k (reserve k),
    2k + 1 (complete k)."""
    with Ledger(p, budget=Budget(total), create=True) as led:
        for i in range(n):
            led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([i]))


def _sql(p: Path, *statements: str) -> None:
    """Edit the file as an outsider would with the sqlite3 module (append-only triggers
    dropped first, as a determined editor would)."""
    con = sqlite3.connect(p)
    for t in ("events_no_update", "events_no_delete", "blobs_no_update", "blobs_no_delete"):
        con.execute(f"DROP TRIGGER IF EXISTS {t}")
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()


# -------------------------------------------------------------------- lifecycle
def test_a_ledger_is_created_only_explicitly(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    with pytest.raises(LedgerError, match=r"does not exist.*dpnoise ledger init"):
        Ledger(p, budget=Budget(1.0))
    with pytest.raises(LedgerError, match="does not exist"):
        Session(DATA, Budget(1.0), p, schema=SCHEMA)
    assert not p.exists()
    with pytest.raises(ParameterError, match="create=True needs budget"):
        Ledger(p, create=True)
    Ledger(p, budget=Budget(1.0), create=True).close()
    with pytest.raises(LedgerError, match="already exists"):
        Ledger(p, budget=Budget(1.0), create=True)
    with pytest.raises(LedgerError, match="already exists"):
        Session(DATA, Budget(1.0), p, schema=SCHEMA, create_ledger=True)
    led = Ledger(p)
    assert led.budget == Budget(1.0) and led.accountant == "basic" and led.head_seq == 1
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".creating")]


def test_empty_file_is_never_a_fresh_budget(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    _ledger(p, 2)
    p.write_bytes(b"")  # truncated to 0 bytes
    for p_wal in (tmp_path / "l.sqlite-wal", tmp_path / "l.sqlite-shm"):
        p_wal.unlink(missing_ok=True)
    with pytest.raises(LedgerError, match=r"empty \(0 bytes\)"):
        Ledger(p, budget=Budget(1.0))
    with pytest.raises(LedgerError, match="empty"):
        Session(DATA, Budget(1.0), p, schema=SCHEMA)
    assert p.stat().st_size == 0
    assert main(["release", "--data", str(_csv(tmp_path)), "--ledger", str(p), "--budget", "1",
                 "--query", "count", "--epsilon", "0.1"]) == 2
    assert p.stat().st_size == 0


def test_session_creates_its_ledger_only_when_asked(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    with Session(DATA, Budget(1.0), p, schema=SCHEMA, create_ledger=True) as s:
        r = s.release("count", epsilon=0.25)
        assert r.ledger_head == s.ledger.head and r.ledger_id == 1
    with Session(DATA, None, p, schema=SCHEMA) as s:  # reopened: the stored total
        assert s.budget == Budget(1.0) and s.spent.epsilon == 0.25
    with pytest.raises(LedgerError, match="cannot change"):
        Session(DATA, Budget(2.0), p, schema=SCHEMA)


def test_deleted_ledger_under_a_live_session(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    s = Session(DATA, Budget(1.0), p, schema=SCHEMA, create_ledger=True)
    s.release("count", epsilon=0.5)
    for f in tmp_path.glob("l.sqlite*"):
        f.unlink()
    with pytest.raises(LedgerError, match="deleted while in use"):
        s.release("count", epsilon=0.5)
    s.close()
    with pytest.raises(LedgerError, match="does not exist"):  # no fresh start from zero
        Session(DATA, Budget(1.0), p, schema=SCHEMA)


def test_replaced_ledger_under_a_live_session(tmp_path: Path) -> None:
    p, other = tmp_path / "l.sqlite", tmp_path / "other.sqlite"
    s = Session(DATA, Budget(1.0), p, schema=SCHEMA, create_ledger=True)
    s.release("count", epsilon=0.5)
    Ledger(other, budget=Budget(1.0), create=True).close()
    os.replace(other, p)  # a fresh ledger (same total) moved over the spent one
    with pytest.raises(LedgerError, match="replaced by another file"):
        s.release("count", epsilon=0.5)
    s.close()


def test_edit_under_a_live_ledger_is_seen_at_the_next_reservation(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    led = Ledger(p, budget=Budget(1.0), create=True)
    led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([1]))
    _sql(p, "UPDATE events SET epsilon = 0.001 WHERE kind = 'reserve'")
    with pytest.raises(LedgerError, match="changed since"):
        led.reserve(epsilon=0.5, delta=0, **KW)
    led.close()


def test_truncated_events_are_seen_by_a_live_ledger(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    led = Ledger(p, budget=Budget(2.0), create=True)
    for _ in range(2):
        led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([1]))
    _sql(p, "DELETE FROM events WHERE seq > 3", "DELETE FROM blobs WHERE seq > 3")
    with pytest.raises(LedgerError, match="changed since"):
        led.reserve(epsilon=0.5, delta=0, **KW)
    led.close()


# ------------------------------------------------------------ edits (sqlite3 module)
def test_naive_edits_are_refused_by_the_file_itself(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    _ledger(p, 1)
    con = sqlite3.connect(p)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE events SET epsilon = 0")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM events WHERE seq = 2")
    con.close()
    assert verify_ledger(p).ok


@pytest.mark.parametrize(("edit", "seq", "what"), [
    (["UPDATE events SET epsilon = 0.0 WHERE seq = 4"], 4, "content does not match its hash"),
    (["UPDATE events SET body = replace(body, '\"q\"', '\"r\"') WHERE seq = 2"], 2,
     "content does not match"),
    (["DELETE FROM events WHERE seq = 4", "DELETE FROM blobs WHERE seq = 4"], 4,
     "event 4 is missing"),
    (["UPDATE events SET seq = -1 WHERE seq = 2", "UPDATE events SET seq = 2 WHERE seq = 4",
      "UPDATE events SET seq = 4 WHERE seq = -1"], 2, "link to the previous event"),
    (["UPDATE blobs SET data = x'00' WHERE seq = 3"], 3, "answer blob does not match"),
    (["UPDATE events SET query_key = 'other' WHERE seq = 6"], 6, "content does not match"),
])
def test_edits_are_detected_on_open_and_located_by_verify(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: list[str], seq: int,
        what: str) -> None:
    p = tmp_path / "l.sqlite"
    _ledger(p, 3)
    _sql(p, *edit)
    if "blobs" not in edit[0]:  # answers are hashed when read, and by verify
        with pytest.raises(LedgerError, match=f"event {seq}"):
            Ledger(p)
    rep = verify_ledger(p)
    assert not rep.ok and rep.seq == seq and what in str(rep.problem)
    assert rep.events == seq - 1  # everything before the break was verified
    assert main(["ledger", "verify", str(p)]) == 1
    out = capsys.readouterr().out
    assert f"BROKEN at event {seq}" in out and what in out


def test_a_forged_hash_breaks_the_next_link(tmp_path: Path) -> None:
    """Recomputing one edited event's hash is not enough: the next event links to the old."""
    p = tmp_path / "l.sqlite"
    _ledger(p, 2)
    rows = _rows(p)
    rows[1]["epsilon"] = 0.0001
    rows[1]["state_sha256"] = sha256_hex(basic_state(Fraction(0.0001), Fraction(0), 1))
    rows[1]["hash"] = event_hash(rows[0]["hash"], rows[1])
    _write_rows(p, rows[1:2])
    rep = verify_ledger(p)
    assert not rep.ok and rep.seq == 3 and "link" in str(rep.problem)


def test_a_recomputed_chain_is_only_caught_by_an_anchor(tmp_path: Path) -> None:
    """The chain is tamper evidence, not a signature: whoever recomputes every hash after an
    edit gets a valid chain.  An anchor kept elsewhere still catches it."""
    p, anchor = tmp_path / "l.sqlite", tmp_path / "elsewhere.anchor"
    _ledger(p, 3)
    Ledger(p, anchor=None).write_anchor(anchor)
    rows = _rows(p)
    rows[3]["epsilon"] = 0.0001  # the second charge, nearly erased
    rows[3]["state_sha256"] = None  # (a forger would recompute this too; see below)
    _rechain(rows)
    _write_rows(p, rows)
    assert "composed-state hash" in str(verify_ledger(p).problem)
    _rechain(rows, fix_states=True)
    _write_rows(p, rows)
    assert "cached composed state" in str(verify_ledger(p).problem)
    state = basic_state(Fraction(0.5) * 2 + Fraction(0.0001), Fraction(0), 3)
    _sql(p, "DELETE FROM composed")  # ... so a forger rewrites that cache too
    con = sqlite3.connect(p)
    con.execute("INSERT INTO composed VALUES (1, 6, ?)", (state,))
    con.commit()
    con.close()
    assert verify_ledger(p).ok  # undetectable inside the file ...
    assert Ledger(p).spent().epsilon < 1.01
    with pytest.raises(LedgerError, match="different chain"):  # ... but not with the anchor
        Ledger(p, anchor=anchor)
    assert "different chain" in str(verify_ledger(p, anchor=anchor).problem)


# -------------------------------------------------------------------------- anchors
def test_anchor_detects_truncation_and_rollback(tmp_path: Path) -> None:
    p, anchor = tmp_path / "l.sqlite", tmp_path / "a.json"
    led = Ledger(p, budget=Budget(5.0), create=True, anchor=anchor)
    assert json.loads(anchor.read_text())["seq"] == 1
    led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([1]))
    old = tmp_path / "old.sqlite"
    led._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(p, old)  # a backup copy taken now, at event 3
    led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([2]))
    head = led.head
    led.close()
    text = json.loads(anchor.read_text())
    assert len(text.pop("anchor")) == 32  # the anchor id, which the init event names too
    assert text == {
        "format": "dpnoise-ledger-anchor", "ledger": Ledger(p).chain_id, "seq": 5, "head": head}
    Ledger(p, anchor=anchor).close()  # the anchored ledger opens
    for f in tmp_path.glob("l.sqlite-*"):
        f.unlink()
    shutil.copy(old, p)  # the older copy restored: 0.5 of budget "refunded"
    assert Ledger(p).spent().epsilon == 0.5  # a shorter chain is valid on its own ...
    with pytest.raises(LedgerError, match=r"ends at event 3 but anchor .* records event 5"):
        Ledger(p, anchor=anchor)  # ... but behind the anchor
    rep = verify_ledger(p, anchor=anchor)
    assert not rep.ok and "older copy" in str(rep.problem)
    # the last events deleted with SQL (leaving the composed-state cache) are seen even
    # without an anchor; a careful truncation that also rewinds the cache is the same as
    # restoring an older copy
    _ledger(q := tmp_path / "q.sqlite", 2)
    _sql(q, "DELETE FROM events WHERE seq > 3", "DELETE FROM blobs WHERE seq > 3")
    with pytest.raises(LedgerError, match="cached composed state"):
        Ledger(q)


def test_anchor_behind_is_fine_and_other_ledgers_are_refused(tmp_path: Path) -> None:
    p, q, anchor = tmp_path / "l.sqlite", tmp_path / "m.sqlite", tmp_path / "a.json"
    _ledger(p, 1)
    Ledger(p).write_anchor(anchor)  # anchoring: event 4
    with Ledger(p) as led:  # an anchored ledger releases only with its anchor
        with pytest.raises(LedgerError, match="opened without its anchor"):
            led.reserve(epsilon=0.5, delta=0, **KW)
        assert led.head_seq == 4 and led.spent().epsilon == 0.5
    shutil.copy(anchor, old := tmp_path / "old.json")
    with Ledger(p, anchor=anchor) as led:
        led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([1]))
    with Ledger(p, anchor=old) as led:  # an older copy of the anchor is behind: fine
        assert led.head_seq == 6
        led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([1]))
    assert json.loads(old.read_text())["seq"] == 8  # advanced after each write
    assert json.loads(anchor.read_text())["seq"] == 6
    _ledger(q, 5)  # another ledger, further ahead
    with pytest.raises(LedgerError, match="not the ledger recorded"):
        Ledger(q, anchor=anchor)
    with pytest.raises(LedgerError, match="does not exist"):
        Ledger(p, anchor=tmp_path / "missing.json")


# ------------------------------------------------------------------------ abort codes
def test_abort_stores_a_code_never_a_message(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "l.sqlite"
    led = Ledger(p, budget=Budget(1.0), create=True)
    rid = led.reserve(epsilon=0.25, delta=0, **KW)
    with pytest.raises(ParameterError, match="abort reason must be one of"):
        led.abort(rid, "ValueError: person 123 is Male")
    led.abort(rid, "noise_failed")
    e = led.entries()[0]
    assert (e.status, e.reason, led.spent().epsilon) == ("aborted", "noise_failed", 0.25)
    with pytest.raises(LedgerError, match="not an open reservation"):
        led.abort(rid, "release_failed")
    led.close()

    from dpnoise.session import adapter

    def boom(self: Any, true_values: Any, rng: Any) -> Any:
        raise RuntimeError("secret-cell-value-4242")

    monkeypatch.setattr(adapter.Plan, "release", boom)
    with Session(DATA, None, p, schema=SCHEMA) as s, pytest.raises(DpnoiseError) as exc:
        s.release("count", epsilon=0.25)
    assert "secret-cell-value" not in str(exc.value) and exc.value.__cause__ is None
    e = Ledger(p).entries()[1]
    assert (e.status, e.reason, e.epsilon) == ("aborted", "release_failed", 0.25)
    assert b"secret-cell-value" not in b"".join(f.read_bytes() for f in tmp_path.iterdir())


def test_accounting_object_is_stored_and_covered(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    with Ledger(p, budget=Budget(1.0), create=True) as led:
        led.reserve(epsilon=0.25, delta=0, accounting=b'{"pld": [1, 2, 3]}', **KW)
    assert verify_ledger(p).ok
    _sql(p, "UPDATE blobs SET data = CAST('{\"pld\": [0]}' AS BLOB) WHERE role = 'accounting'")
    with pytest.raises(LedgerError, match="event 2: its accounting blob does not match"):
        Ledger(p)


# ------------------------------------------------------------------------- format 1
V1_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, completed_at TEXT,
    status TEXT NOT NULL, query TEXT NOT NULL, canonical TEXT NOT NULL,
    query_key TEXT NOT NULL, dataset TEXT NOT NULL, mechanism TEXT NOT NULL,
    parameters TEXT NOT NULL, guarantee TEXT NOT NULL, epsilon REAL NOT NULL,
    delta REAL NOT NULL, answer_text TEXT, pid INTEGER);
CREATE TABLE answers (release_id INTEGER PRIMARY KEY REFERENCES releases (id),
                      answer BLOB NOT NULL);
"""


def _v1_ledger(p: Path) -> None:
    """A ledger as dpnoise wrote it before the hash chain (format 1)."""
    con = sqlite3.connect(p)
    con.executescript(V1_DDL)
    con.executemany("INSERT INTO meta VALUES (?, ?)", [
        ("format", "dpnoise-ledger"), ("version", "1"), ("epsilon_total", (2.0).hex()),
        ("delta_total", (0.0).hex()), ("composition", "basic"), ("created_at", "t0")])
    rows = [("released", 0.5, "k1"), ("aborted", 0.25, "k2"), ("reserved", 0.125, "k3"),
            ("released", 0.5, "k1")]
    for i, (status, eps, key) in enumerate(rows, 1):
        text = "ValueError: secret-v1-text" if status == "aborted" else "[7]"
        con.execute("INSERT INTO releases (created_at, completed_at, status, query, canonical,"
                    " query_key, dataset, mechanism, parameters, guarantee, epsilon, delta,"
                    " answer_text, pid) VALUES (?, ?, ?, 'count', 'count', ?, 'd', 'laplace',"
                    " '{\"a\": 1}', '{\"epsilon\": 0.5}', ?, 0.0, ?, 1)",
                    (f"t{i}", f"t{i}c", status, key, eps, text))
        if status == "released":
            con.execute("INSERT INTO answers VALUES (?, ?)", (i, encode_answer(np.array([i]))))
    con.commit()
    con.close()


def test_format_1_opens_read_only_and_migrates(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "old.sqlite"
    _v1_ledger(p)
    with pytest.warns(UserWarning, match=r"read-only.*dpnoise ledger migrate"):
        led = Ledger(p)
    assert led.read_only and led.version == "1" and led.head is None
    before = [(e.id, e.status, e.epsilon, None if e.answer is None else e.answer.tolist())
              for e in led.entries()]
    assert [b[1] for b in before] == ["released", "aborted", "reserved", "released"]
    assert led.spent().epsilon == 1.375 and led.remaining().epsilon == 0.625
    assert led.find("k1") is not None and led.find("k1").id == 4  # type: ignore[union-attr]
    with pytest.raises(LedgerError, match=r"read-only.*dpnoise ledger migrate"):
        led.reserve(epsilon=0.1, delta=0, **KW)
    led.close()
    with pytest.warns(UserWarning), \
            pytest.raises(LedgerError, match="read-only"):
        Session(DATA, None, p, schema=SCHEMA).release("count", epsilon=0.1)
    assert main(["ledger", str(p)]) == 0
    assert "read-only" in capsys.readouterr().out
    assert main(["ledger", "verify", str(p)]) == 1
    assert "migrate" in capsys.readouterr().out

    assert main(["ledger", "migrate", str(p)]) == 0
    assert "backup" in capsys.readouterr().out
    bak = tmp_path / "old.sqlite.v1.bak"
    assert sqlite3.connect(bak).execute("SELECT count(*) FROM releases").fetchone()[0] == 4
    led = Ledger(p)
    assert not led.read_only and led.version == "3"
    after = [(e.id, e.status, e.epsilon, None if e.answer is None else e.answer.tolist())
             for e in led.entries()]
    assert after == before and led.spent().epsilon == 1.375
    assert [e.reason for e in led.entries()] == [None, "release_failed", None, None]
    rid = led.reserve(epsilon=0.5, delta=0, **KW)  # usable now
    assert rid == 5 and verify_ledger(p).ok
    led.close()
    assert b"secret-v1-text" not in p.read_bytes()  # the exception text is not carried over
    with pytest.raises(LedgerError, match="nothing to migrate"):  # (the backup is kept)
        migrate(p)
    assert bak.exists()
    bak.unlink()
    with pytest.raises(LedgerError, match="nothing to migrate"):
        migrate(p)


# ------------------------------------------------------------------------ seeds
def test_seeded_randomness_never_touches_a_ledger_file(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    for rng in (SeededRandom(1), np.random.default_rng(1)):
        with pytest.raises(ParameterError, match="seeded randomness is for tests"):
            Session(DATA, Budget(1.0), p, schema=SCHEMA, rng=rng, create_ledger=True)
        assert not p.exists()  # refused before anything was created
    with Session(DATA, Budget(1.0), schema=SCHEMA, rng=SeededRandom(1)) as s:  # in memory
        a = s.release("count", epsilon=0.5).value
    with Session(DATA, Budget(1.0), schema=SCHEMA, rng=SeededRandom(1)) as s:
        assert s.release("count", epsilon=0.5).value == a  # reproducible
    with Session(DATA, Budget(1.0), p, schema=SCHEMA, create_ledger=True,
                 rng=CryptoRandom()) as s:
        with pytest.raises(ParameterError, match="seeded"):
            s.rng = SeededRandom(2)
        led = s.ledger
    with pytest.raises(ParameterError, match="seeded"):
        Session(DATA, None, Ledger(p), schema=SCHEMA, rng=SeededRandom(3))
    assert led is not None


def _csv(tmp: Path) -> Path:
    d = tmp / "d.csv"
    d.write_text("x\n" + "\n".join(str(i % 10) for i in range(50)) + "\n")
    (tmp / "d.toml").write_text("[columns.x]\nlower = 0\nupper = 10\n")
    return d


def test_cli_seed_and_in_memory_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    data = str(_csv(tmp_path))
    base = ["release", "--data", data, "--query", "count", "--epsilon", "0.5"]
    assert main(["ledger", "init", "l.sqlite", "--budget", "1"]) == 0
    capsys.readouterr()
    assert main([*base, "--ledger", "l.sqlite", "--seed", "1"]) == 2
    assert "seeded randomness" in capsys.readouterr().err
    assert main([*base, "--seed", "1"]) == 2  # the default ledger file too
    assert "seeded randomness" in capsys.readouterr().err
    outs = []
    for _ in range(2):  # the notice, every time
        assert main([*base, "--ledger", ":memory:", "--budget", "1", "--seed", "1"]) == 0
        cap = capsys.readouterr()
        assert "nothing is recorded" in cap.err
        outs.append(cap.out.split("head:")[0])
    assert outs[0] == outs[1]  # seeded: reproducible
    assert not Path(":memory:").exists() and Ledger("l.sqlite").spent().epsilon == 0
    assert main([*base, "--ledger", ":memory:", "--epsilon", "0.5"]) == 2  # needs --budget
    assert "nothing is recorded" not in capsys.readouterr().err


def test_cli_lifecycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    data = str(_csv(tmp_path))
    base = ["release", "--data", data, "--query", "count", "--epsilon", "0.25"]
    assert main([*base, "--ledger", "l.sqlite", "--budget", "1"]) == 2
    assert "dpnoise ledger init l.sqlite" in capsys.readouterr().err
    assert not Path("l.sqlite").exists()
    assert main(["ledger", "init", "l.sqlite"]) == 2
    assert "needs --budget" in capsys.readouterr().err
    assert main(["ledger", "init", "l.sqlite", "--budget", "1,1e-6", "--anchor", "a.json"]) == 0
    assert "created ledger l.sqlite" in capsys.readouterr().out
    assert main(["ledger", "init", "l.sqlite", "--budget", "1"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main([*base, "--ledger", "l.sqlite", "--budget", "2"]) == 2  # --budget is a check
    assert "cannot change" in capsys.readouterr().err
    assert main([*base, "--ledger", "l.sqlite", "--anchor", "a.json", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    head = out["ledger_head"]
    assert head["event"] == 3 and len(head["hash"]) == 64 and out["recorded"]
    assert json.loads(Path("a.json").read_text())["head"] == head["hash"]
    # created with an anchor: releases and views need it
    assert main([*base, "--ledger", "l.sqlite", "--budget", "1,1e-6"]) == 2
    assert "opened without its anchor" in capsys.readouterr().err
    assert main([*base, "--ledger", "l.sqlite", "--anchor", "a.json"]) == 0
    text = capsys.readouterr().out
    assert "head:       event 5 " in text and "release 2" in text
    assert main(["ledger", "l.sqlite"]) == 2
    assert "--no-anchor" in capsys.readouterr().err
    assert main(["ledger", "l.sqlite", "--no-anchor"]) == 1
    text = capsys.readouterr().out
    assert "head:      event 5" in text and "rollback not checked" in text
    assert main(["ledger", "l.sqlite", "--anchor", "a.json"]) == 0
    text = capsys.readouterr().out
    assert "head:      event 5" in text and "hash-chained" in text
    assert "rollback not checked" not in text
    assert main(["ledger", "verify", "l.sqlite", "--anchor", "a.json"]) == 0
    assert "result:   OK" in capsys.readouterr().out
    assert main(["ledger", "verify", "l.sqlite"]) == 2
    assert main(["ledger", "verify", "l.sqlite", "--no-anchor"]) == 1
    assert "rollback not checked" in capsys.readouterr().out
    assert main(["ledger", "verify", "l.sqlite", "--no-anchor", "--write-anchor", "b.json"]) == 2
    assert main(["ledger", "verify", "l.sqlite", "--anchor", "a.json",
                 "--write-anchor", "b.json"]) == 0
    capsys.readouterr()
    assert json.loads(Path("b.json").read_text())["seq"] == 5
    assert json.loads(Path("b.json").read_text())["anchor"] == \
        json.loads(Path("a.json").read_text())["anchor"]  # a copy of the same anchor
    assert main(["ledger", "l.sqlite", "--budget", "1"]) == 2
    assert main(["ledger", "frobnicate", "l.sqlite"]) == 2
    assert main(["ledger", "verify", "missing.sqlite"]) == 1


# --------------------------------------------------------------------- performance
def _synchronous(mode: str, *ledgers: Ledger) -> None:
    for led in ledgers:
        led._con.execute(f"PRAGMA synchronous={mode}")


def _events_checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the sequence number of every event a verifier applies from now on."""
    from dpnoise.ledger import chain

    seen: list[int] = []
    original = chain.ChainState.apply

    def counting(self: chain.ChainState, row: dict[str, Any]) -> None:
        seen.append(int(row["seq"]))
        original(self, row)

    monkeypatch.setattr(chain.ChainState, "apply", counting)
    return seen


def test_reserving_after_1000_releases_checks_only_new_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-reservation check is incremental: after 1000 releases (2001 events) a
    reservation verifies only the events appended since it last looked (here the other
    writer's reservation and its own), never the whole chain; opening a ledger verifies
    every event.  Counted, not timed (the time is a benchmark:
    benchmarks/reserve_after_1000.py)."""
    p = tmp_path / "l.sqlite"
    led = Ledger(p, budget=Budget(10_000.0), create=True)
    _synchronous("OFF", led)  # build fast
    for i in range(1000):
        led.complete(led.reserve(epsilon=1.0, delta=0, **KW), np.array([i]))
    other = Ledger(p)
    _synchronous("OFF", other)
    seen = _events_checked(monkeypatch)
    for _ in range(5):
        other.reserve(epsilon=1.0, delta=0, **KW)
        before = len(seen)
        led.reserve(epsilon=1.0, delta=0, **KW)
        checked = seen[before:]
        assert 1 <= len(checked) <= 3, checked  # the other's event (+ its own), not 2000
        assert min(checked) > 2000, checked
    seen.clear()
    assert Ledger(p).head_seq == 2011  # opening verifies the whole chain
    assert sorted(set(seen)) == list(range(1, 2012))


# ----------------------------------------------------------------------- helpers
def _rows(p: Path) -> list[dict[str, Any]]:
    con = sqlite3.connect(p)
    rows = [dict(zip(EVENT_COLUMNS, r, strict=True)) for r in
            con.execute(f"SELECT {', '.join(EVENT_COLUMNS)} FROM events ORDER BY seq")]
    con.close()
    return rows


def _rechain(rows: list[dict[str, Any]], fix_states: bool = False) -> None:
    """What a forger who knows the format does: recompute every link and hash."""
    prev, ledger_id, eps = GENESIS, "", Fraction(0)
    for r in rows:
        if r["kind"] == "reserve":
            eps += Fraction(r["epsilon"])
            if fix_states:
                r["state_sha256"] = sha256_hex(basic_state(eps, Fraction(0), r["release"]))
        r["prev"] = prev
        r["hash"] = event_hash(ledger_id, r)
        prev = r["hash"]
        ledger_id = ledger_id or r["hash"]


def _write_rows(p: Path, rows: list[dict[str, Any]]) -> None:
    sets = ", ".join(f"{c} = :{c}" for c in EVENT_COLUMNS if c != "seq")
    con = sqlite3.connect(p)
    for t in ("events_no_update", "events_no_delete"):
        con.execute(f"DROP TRIGGER IF EXISTS {t}")
    for r in rows:
        con.execute(f"UPDATE events SET {sets} WHERE seq = :seq", r)
    con.commit()
    con.close()


def test_an_anchor_naming_the_ledger_itself_is_refused(tmp_path: Path) -> None:
    """``ledger init L --anchor L``: the anchor was written first under the ledger's name,
    and the ledger then refused as 'already exists' about a file that did not exist."""
    p = tmp_path / "l.sqlite"
    for anchor in (p, tmp_path / "." / "l.sqlite"):
        with pytest.raises(LedgerError, match="is the ledger itself"):
            Ledger(p, budget=Budget(1.0), create=True, anchor=anchor)
        assert not p.exists()
