"""The SQLite budget ledger: exact accounting, refusals cost nothing, replay, clear
errors for locked / corrupted / foreign files, and no silent reset.  (Creation, the hash
chain, anchors and migration: tests/test_ledger_chain.py.)"""

from __future__ import annotations

import sqlite3
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from dpnoise import Budget, BudgetExceededError, LedgerError, ParameterError, Session
from dpnoise.session import Ledger

from .helpers import run_threads

KW = dict(query="q", canonical="q", query_key="k", dataset="d", mechanism="m",
          parameters={}, guarantee={})


def test_reserve_complete_and_exact_accounting(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite", budget=Budget(1.0), create=True) as led:
        rid = led.reserve(epsilon=0.25, delta=0.0, **KW)
        assert led.entries()[0].status == "reserved"
        led.complete(rid, np.array([1, 2, 3]))
        e = led.entries()[0]
        assert e.status == "released" and e.answer.tolist() == [1, 2, 3]
        assert led.spent().epsilon == 0.25 and led.remaining().epsilon == 0.75
        with pytest.raises(LedgerError, match="not an open reservation"):
            led.complete(rid, np.array([0]))
        led.reserve(epsilon=0.75, delta=0.0, **KW)
        with pytest.raises(BudgetExceededError, match="nothing spent"):
            led.reserve(epsilon=2.0**-50, delta=0.0, **KW)
        assert len(led.entries()) == 2


def test_accounting_is_exact_not_float() -> None:
    # three doubles 0.1 sum to MORE than the double 0.3: the third must be refused, although
    # float addition rounds 0.1 + 0.1 + 0.1 back under 0.3 + 1 ulp and would grant it
    led = Ledger(None, budget=Budget(0.3))
    led.reserve(epsilon=0.1, delta=0, **KW)
    led.reserve(epsilon=0.1, delta=0, **KW)
    with pytest.raises(BudgetExceededError, match="nothing spent"):
        led.reserve(epsilon=0.1, delta=0, **KW)
    assert len(led.entries()) == 2  # the refusal left no trace
    left = led.remaining().epsilon
    assert Fraction(left) <= Fraction(0.3) - 2 * Fraction(0.1)  # rounded down, never up
    assert left > 0  # ... but what is left is still offered
    led.reserve(epsilon=left, delta=0, **KW)
    assert led.remaining().epsilon == 0


def test_ten_charges_of_a_tenth_fill_a_budget_of_one_exactly(tmp_path: Path) -> None:
    """The ledger's arithmetic: ten charges of 0.1 against 1.0 are granted only when their
    exact (rational) sum fits; the session snaps the tenth to the exact remainder, so all
    ten are granted, the total is never exceeded, and an eleventh is refused."""
    p = tmp_path / "l.sqlite"
    data = {"x": np.arange(10.0)}
    schema = {"columns": {"x": {"lower": 0, "upper": 10}}}
    with Session(data, Budget(1.0), p, schema=schema, create_ledger=True) as s:
        for _ in range(10):
            s.release("count", epsilon=0.1)
        with pytest.raises(BudgetExceededError, match="nothing spent"):
            s.release("count", epsilon=0.1)
    led = Ledger(p)
    charges = [Fraction(e.epsilon) for e in led.entries()]
    assert len(charges) == 10 and sum(charges) <= 1
    assert led.remaining().epsilon < 1e-15  # nothing usable is left unspent
    with pytest.raises(BudgetExceededError):
        led.reserve(epsilon=2.0**-60, delta=0, **KW)


def test_session_spends_exact_remainder_of_decimal_budget(tmp_path: Path) -> None:
    data = {"x": np.arange(10.0)}
    schema = {"columns": {"x": {"lower": 0, "upper": 10}}}
    with Session(data, Budget(1.0), schema=schema) as s:
        for _ in range(10):
            s.release("count", epsilon=0.1)
        assert s.remaining.epsilon == 0
        assert Fraction(s.spent.epsilon) <= 1  # the tenth was calibrated at the remainder
        with pytest.raises(BudgetExceededError):
            s.release("count", epsilon=0.01)


def test_delta_is_accounted(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite", budget=Budget(1.0, 1e-6), create=True)
    led.reserve(epsilon=0.1, delta=6e-7, **KW)
    with pytest.raises(BudgetExceededError, match="delta"):
        led.reserve(epsilon=0.1, delta=6e-7, **KW)


def test_budget_is_fixed_at_creation(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    with pytest.raises(LedgerError, match="does not exist"):
        Ledger(p, budget=Budget(1.0))
    Ledger(p, budget=Budget(1.0), create=True).close()
    assert Ledger(p).budget == Budget(1.0)
    with pytest.raises(LedgerError, match="cannot change"):
        Ledger(p, budget=Budget(2.0))


def test_invalid_budget() -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        Budget(float("nan"))
    with pytest.raises(ParameterError, match="delta"):
        Budget(1.0, 1.0)


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b"\x00" * 4096,
                                     b"SQLite format 3\x00" + b"\xff" * 4000])
def test_garbage_file_is_a_clear_error_and_not_reset(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "l.sqlite"
    p.write_bytes(content)
    with pytest.raises(LedgerError, match=r"l\.sqlite"):
        Ledger(p, budget=Budget(1.0))
    with pytest.raises(LedgerError, match="already exists"):
        Ledger(p, budget=Budget(1.0), create=True)
    assert p.read_bytes() == content  # never reset or rewritten


def _ledger_with_rows(p: Path, n: int = 200) -> None:
    with Ledger(p, budget=Budget(1000.0), create=True) as led:
        for i in range(n):
            rid = led.reserve(epsilon=0.5, delta=0, **KW)
            led.complete(rid, np.arange(i + 50, dtype=np.float64))
        con = sqlite3.connect(p)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()


def test_truncated_ledger_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    _ledger_with_rows(p)
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(LedgerError):
        led = Ledger(p)
        led.spent()
        led.entries()


def test_scribbled_pages_are_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    _ledger_with_rows(p)
    raw = bytearray(p.read_bytes())
    page = 4096
    for k in range(1, len(raw) // page):  # keep the header page, scribble over every other
        raw[k * page + 100 : k * page + 400] = b"\xa5" * 300
    p.write_bytes(bytes(raw))
    with pytest.raises(LedgerError):
        led = Ledger(p)
        led.spent()
        led.entries()


def test_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "other.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(LedgerError, match="not a dpnoise ledger"):
        Ledger(p, budget=Budget(1.0))




def test_locked_ledger_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    led = Ledger(p, budget=Budget(1.0), create=True, timeout=0.2)
    other = sqlite3.connect(p, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the write lock, as a writer holds it
    try:
        with pytest.raises(LedgerError, match="locked by another process"):
            led.reserve(epsilon=0.1, delta=0, **KW)
        # opening only reads (the committed file): it does not wait for the writer
        assert Ledger(p, timeout=0.2).spent().epsilon == 0
    finally:
        other.execute("ROLLBACK")
        other.close()
    other = sqlite3.connect(p, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # an exclusive lock (a commit): readers wait, clearly
    try:
        with pytest.raises(LedgerError, match="locked by another process"):
            led.reserve(epsilon=0.1, delta=0, **KW)
        with pytest.raises(LedgerError, match="locked by another process"):
            Ledger(p, timeout=0.2)
    finally:
        other.execute("ROLLBACK")
        other.close()
    led.reserve(epsilon=0.1, delta=0, **KW)  # usable again once the lock is gone
    assert led.spent().epsilon == 0.1


def test_replay_serves_identical_query_without_spend(tmp_path: Path) -> None:
    data = {"x": np.arange(100.0), "g": np.arange(100) % 3}
    schema = {"columns": {"x": {"lower": 0, "upper": 100},
                          "g": {"integer": True, "lower": 0, "upper": 2}}}
    ledger = tmp_path / "l.sqlite"
    with Session(data, Budget(1.0), ledger, schema=schema, create_ledger=True) as s:
        a = s.release("mean x by g", epsilon=0.25, replay=True)
        b = s.release("SELECT g, AVG(x) FROM data GROUP BY g", epsilon=0.25, replay=True)
        assert b.replayed and not a.replayed
        assert np.array_equal(a.values, b.values) and s.spent.epsilon == 0.25
        c = s.release("mean x by g", epsilon=0.25)  # replay is opt-in
        assert not c.replayed and s.spent.epsilon == 0.5
        d = s.release("mean x by g", epsilon=0.125, replay=True)  # different epsilon
        assert not d.replayed
    # durable: a new session on the same ledger replays it too
    with Session(data, None, ledger, schema=schema, replay=True) as s:
        e = s.release("mean x by g", epsilon=0.25)
        assert e.replayed and s.spent.epsilon == 0.625


def test_the_release_that_spent_the_remainder_is_replayed_too() -> None:
    """Ten releases at 0.1 exceed 1.0 in binary, so the tenth is charged the remainder;
    it was keyed with that snapped epsilon, which the same request never computes again
    (nothing remains, nothing is snapped): its replay was refused as over budget."""
    data = {"x": np.arange(10.0)}
    schema = {"columns": {"x": {"lower": 0, "upper": 10}}}
    with Session(data, Budget(1.0), schema=schema) as s:
        for i in range(10):
            last = s.release(f"count where x > {i}", epsilon=0.1)
        assert last.epsilon < 0.1 and s.remaining.epsilon == 0
        again = s.release("count where x > 9", epsilon=0.1, replay=True)
        assert again.replayed and again.values == last.values


def test_history_records_everything(tmp_path: Path) -> None:
    data = {"x": np.arange(10.0)}
    schema = {"columns": {"x": {"lower": 0, "upper": 10}}}
    with Session(data, Budget(1.0), tmp_path / "l.sqlite", schema=schema,
                 create_ledger=True) as s:
        r = s.release("sum x where x > 2", epsilon=0.5)
    e = Ledger(tmp_path / "l.sqlite").entries()[0]
    assert e.query == "sum x where x > 2" and e.canonical == "sum x where x > 2"
    assert e.mechanism == r.mechanism and e.epsilon == 0.5 and e.status == "released"
    assert e.parameters["plans"]["sum"]["sensitivity"] == 10.0
    assert e.guarantee["epsilon"] == 0.5 and e.created_at and e.completed_at
    assert e.answer is not None and e.answer.shape == () and e.answer == r.value
    assert r.ledger_head == e.head and e.reason is None


def test_release_without_answer_is_detected(tmp_path: Path) -> None:
    p = tmp_path / "l.sqlite"
    with Ledger(p, budget=Budget(1.0), create=True) as led:
        led.complete(led.reserve(epsilon=0.5, delta=0, **KW), np.array([7]))
    con = sqlite3.connect(p)
    con.execute("DROP TRIGGER blobs_no_delete")
    con.execute("DELETE FROM blobs")
    con.commit()
    con.close()
    with pytest.raises(LedgerError, match="event 3: its answer blob is missing"):
        Ledger(p)


@pytest.mark.parametrize("kw", [{"path": 5}, {"path": ""}, {"anchor": 3},
                                {"timeout": "30"}, {"timeout": float("nan")}])
def test_ledger_arguments_of_the_wrong_type_are_a_clear_error(kw: dict) -> None:  # type: ignore[type-arg]
    """Ledger(5) raised a TypeError from os.fspath, timeout='30' a ValueError."""
    with pytest.raises(ParameterError, match="must be a"):
        Ledger(**{"path": None, **kw}, budget=Budget(1.0))


def test_threads_sharing_one_session_lose_no_release(tmp_path: Path) -> None:
    """Threads sharing one Session shared its SQLite and DuckDB connections: a BEGIN met
    another thread's open transaction ('cannot start a transaction within a transaction')
    and concurrent queries on one DuckDB connection failed -- releases refused, or failed
    after their reservation (charge kept, answer lost); and each thread released its own
    row bound N (rows_epsilon), charged again and again.  They now take turns."""
    data = {"x": np.arange(50.0)}
    schema = {"columns": {"x": {"lower": 0, "upper": 50}}}
    errors: list[BaseException] = []
    with Session(data, Budget(10.0), tmp_path / "l.db", schema=schema,
                 create_ledger=True, rows_epsilon=0.5) as s:
        def work(t: int) -> None:
            for i in range(4):
                try:
                    s.release(f"sum x where x > {t * 10 + i}", epsilon=0.1)
                except BaseException as exc:  # collected for the assert
                    errors.append(exc)

        run_threads(work, 3)
        assert errors == []
        assert [e.status for e in s.history()] == ["released"] * 13
        assert [e.query for e in s.history()].count("count") == 1  # N, once
        assert s.spent.epsilon == pytest.approx(1.7)
