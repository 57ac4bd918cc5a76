"""No release is lost, rolled back or spent twice -- shown with real processes and files.

Every scenario ends by copying ONLY the main ledger file (what a backup, a sync or a move
to another machine does) or by removing the journal files, and checks what the copy
holds: each reservation that may have drawn noise is charged in the main file, each
answer returned is recorded there, and a restored older copy is refused when the ledger
is anchored.  Processes are killed with SIGKILL at the four moments of a release; the
kill points are set by the test script itself (patching the ledger's methods in the child
process), not by any hook in dpnoise.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dpnoise import Budget, BudgetExceededError, LedgerError, ParameterError, Session
from dpnoise.cli import main
from dpnoise.ledger import verify_ledger
from dpnoise.randomness import CryptoRandom, KeyedRandom, SeededRandom
from dpnoise.session import Ledger

SRC = str(Path(__file__).resolve().parents[1] / "src")
SIDE_FILES = ("-wal", "-shm", "-journal")


def _data(tmp: Path) -> Path:
    (tmp / "d.toml").write_text("[columns.x]\nlower = 0\nupper = 10\n")
    p = tmp / "d.csv"
    p.write_text("x\n" + "\n".join(str(i % 10) for i in range(60)) + "\n")
    return p


def _run(code: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          text=True, capture_output=True, input=stdin, timeout=300)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return _run("import sys\nfrom dpnoise.cli import main\nsys.exit(main(sys.argv[1:]))",
                *args)


def _copy_main_file_only(ledger: Path, where: Path) -> Path:
    where.mkdir()
    shutil.copyfile(ledger, where / ledger.name)  # no -journal, -wal or -shm
    return where / ledger.name


def _remove_side_files(ledger: Path) -> None:
    for suffix in SIDE_FILES:
        Path(f"{ledger}{suffix}").unlink(missing_ok=True)


# ------------------------------------------------------- kill -9 at each moment
KILLED = """
import os, signal, sys
from dpnoise.ledger import ledger as L
from dpnoise.ledger import reservations as R

point = sys.argv[1]


def die(*_, **__):
    os.kill(os.getpid(), signal.SIGKILL)


if point == "before_reserve_commit":  # the reserve event inserted, not committed
    insert = R.append_event

    def append_event(con, st, **kw):
        row = insert(con, st, **kw)
        if kw["kind"] == "reserve":
            die()
        return row

    R.append_event = append_event
elif point == "after_reserve_before_draw":  # committed, nothing drawn yet
    reserve = L.Ledger.reserve

    def reserved(self, **kw):
        reserve(self, **kw)
        die()

    L.Ledger.reserve = reserved
elif point == "after_draw_before_complete":  # the answer computed, not recorded
    L.Ledger.complete = die
elif point == "after_complete_before_output":  # recorded, not yet written or printed
    complete = L.Ledger.complete

    def completed(self, *a, **kw):
        complete(self, *a, **kw)
        die()

    L.Ledger.complete = completed
from dpnoise.cli import main
sys.exit(main(sys.argv[2:]))
"""

POINTS = ("before_reserve_commit", "after_reserve_before_draw", "after_draw_before_complete",
          "after_complete_before_output")


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_at_each_moment_then_copy_only_the_main_file(tmp_path: Path, point: str) -> None:
    data = _data(tmp_path)
    ledger, out = tmp_path / "l.sqlite", tmp_path / "out.csv"
    Ledger(ledger, budget=Budget(1.0), create=True).close()
    r = _run(KILLED, point, "release", "--data", str(data), "--ledger", str(ledger),
             "--query", "count", "--epsilon", "1", "--output", str(out))
    assert r.returncode == -9, r.stderr  # killed, not exited
    assert not out.exists() and r.stdout == ""  # no answer left the process
    assert not Path(f"{ledger}-wal").exists()  # never a write-ahead log
    copy = _copy_main_file_only(ledger, tmp_path / "copy")
    assert verify_ledger(copy).ok
    with Ledger(copy) as led:
        rows = led.entries()
        if point == "before_reserve_commit":
            # nothing committed, so nothing was drawn: nothing is charged either
            assert rows == [] and led.spent().epsilon == 0
            led.reserve(epsilon=1.0, delta=0, query="q", canonical="q", query_key="k",
                        dataset="d", mechanism="m", parameters={}, guarantee={})
            with Ledger(ledger) as orig:  # the original's hot journal is rolled back too
                assert orig.entries() == [] and verify_ledger(ledger).ok
            return
        (e,) = rows  # the reservation is in the main file: charged, never given back
        assert led.spent().epsilon == 1.0 and led.remaining().epsilon == 0
        if point == "after_complete_before_output":
            assert e.status == "released" and e.answer is not None  # nothing lost
        else:
            assert e.status == "reserved" and e.answer is None
    # nothing re-spent: the copy refuses the same release (and so does the original)
    for where in (copy, ledger):
        r = _cli("release", "--data", str(data), "--ledger", str(where), "--query", "count",
                 "--epsilon", "1")
        assert r.returncode == 2 and "nothing spent" in r.stderr, r.stderr
        assert Ledger(where).spent().epsilon == 1.0


# ------------------------------------------- two processes, journal files removed
LIVE = """
import sys
from dpnoise import BudgetExceededError, LedgerError, Session
with Session(sys.argv[1], None, sys.argv[2]) as s:
    for line in sys.stdin:
        try:
            r = s.release("count", epsilon=1.0)
            print("released", r.ledger_id, flush=True)
        except (BudgetExceededError, LedgerError) as exc:
            print("refused", type(exc).__name__, flush=True)
"""


def test_two_processes_with_the_journal_files_removed_between_them(tmp_path: Path) -> None:
    """Process A releases; the side files are removed; process B releases; A, still
    live, tries again: refused (total 2) -- the file holds exactly B's and A's first
    release, and so does a copy of the main file alone."""
    data = _data(tmp_path)
    ledger = tmp_path / "l.sqlite"
    Ledger(ledger, budget=Budget(2.0), create=True).close()
    env = {**os.environ, "PYTHONPATH": SRC}
    a = subprocess.Popen([sys.executable, "-c", textwrap.dedent(LIVE), str(data), str(ledger)],
                         env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        assert a.stdin is not None and a.stdout is not None
        a.stdin.write("go\n")
        a.stdin.flush()
        assert a.stdout.readline().split() == ["released", "1"]
        _remove_side_files(ledger)
        b = _cli("release", "--data", str(data), "--ledger", str(ledger), "--query", "count",
                 "--epsilon", "1")
        assert b.returncode == 0, b.stderr
        _remove_side_files(ledger)
        a.stdin.write("go\n")
        a.stdin.flush()
        assert a.stdout.readline().split() == ["refused", "BudgetExceededError"]
    finally:
        a.kill()  # exits without closing
        a.wait()
    for where in (ledger, _copy_main_file_only(ledger, tmp_path / "copy")):
        rep = verify_ledger(where)
        assert rep.ok and rep.releases == 2
        with Ledger(where) as led:
            assert [e.status for e in led.entries()] == ["released", "released"]
            assert led.spent().epsilon == 2.0


def test_truncated_to_zero_bytes_under_a_live_session(tmp_path: Path) -> None:
    data = _data(tmp_path)
    ledger = tmp_path / "l.sqlite"
    with Session(data, Budget(5.0), ledger, create_ledger=True) as s:
        s.release("count", epsilon=1.0)
        with open(ledger, "r+b") as fh:
            fh.truncate(0)
        with pytest.raises(LedgerError, match=r"shrank while in use"):
            s.release("count", epsilon=1.0)
        assert ledger.stat().st_size == 0  # nothing written into the empty file
    with pytest.raises(LedgerError, match=r"empty \(0 bytes\)"):
        Ledger(ledger)


def test_a_format_2_ledger_with_releases_only_in_its_wal_is_migrated(tmp_path: Path) -> None:
    """A ledger dpnoise wrote in WAL mode (format 2), by a process that exited without
    closing: its last events live only in the -wal file.  It opens read-only with every
    event; ``dpnoise ledger migrate`` moves them into the main file (format 3) and chains a
    migrate event, after which a copy of the main file alone holds all of them."""
    ledger = tmp_path / "l.sqlite"
    with Ledger(ledger, budget=Budget(3.0), create=True) as led:
        led.complete(led.reserve(epsilon=1.0, delta=0, query="q", canonical="q",
                                 query_key="k", dataset="d", mechanism="m", parameters={},
                                 guarantee={}), np.array([1.0]))
    r = _run("""
        import os, sqlite3, sys
        import numpy as np
        from dpnoise.ledger import encode_answer
        from dpnoise.ledger.store import append_event
        from dpnoise.ledger.chain import basic_state
        from dpnoise.ledger.verify import verify_all
        from fractions import Fraction
        con = sqlite3.connect(sys.argv[1], isolation_level=None)
        con.execute("UPDATE meta SET value = '2' WHERE key = 'version'")  # format 2 ...
        con.execute("PRAGMA journal_mode=WAL")                            # ... in WAL mode
        con.execute("PRAGMA wal_autocheckpoint=0")
        con.execute("BEGIN IMMEDIATE")
        st = verify_all(con, sys.argv[1], hash_answers=True)
        append_event(con, st, kind="reserve", at="t", release=2, query_key="k", epsilon=1.0,
                     delta=0.0, body={"query": "q"}, composed=basic_state(Fraction(2),
                                                                          Fraction(0), 2))
        con.execute("COMMIT")
        os._exit(0)  # no close: no checkpoint, the reservation lives in the -wal only
    """, str(ledger))
    assert r.returncode == 0, r.stderr
    assert Path(f"{ledger}-wal").stat().st_size > 0
    lost = _copy_main_file_only(ledger, tmp_path / "before")  # what format 2 risked:
    with pytest.warns(UserWarning, match="format version 2"):
        assert Ledger(lost).spent().epsilon == 1.0  # the -wal's reservation is gone
    with pytest.warns(UserWarning, match="format version 2"):
        led = Ledger(ledger)
    assert led.read_only and led.spent().epsilon == 2.0 and led.head_seq == 4
    with pytest.raises(LedgerError, match="dpnoise ledger migrate"):
        led.reserve(epsilon=0.5, delta=0, query="q", canonical="q", query_key="k",
                    dataset="d", mechanism="m", parameters={}, guarantee={})
    led.close()
    assert main(["ledger", "migrate", str(ledger)]) == 0
    assert not Path(f"{ledger}-wal").exists()
    copy = _copy_main_file_only(ledger, tmp_path / "after")
    rep = verify_ledger(copy)
    assert rep.ok and rep.version == "3" and rep.events == 5 and rep.releases == 2
    with Ledger(copy) as led:
        assert led.spent().epsilon == 2.0 and not led.read_only
        rid = led.reserve(epsilon=1.0, delta=0, query="q", canonical="q", query_key="k",
                          dataset="d", mechanism="m", parameters={}, guarantee={})
        assert rid == 3
        with pytest.raises(BudgetExceededError):
            led.reserve(epsilon=1e-9, delta=0, query="q", canonical="q", query_key="k",
                        dataset="d", mechanism="m", parameters={}, guarantee={})


# ---------------------------------------------------------------- rollback
def test_a_rolled_back_copy_with_and_without_the_anchor(tmp_path: Path) -> None:
    data = _data(tmp_path)
    ledger, anchor, old = tmp_path / "l.sqlite", tmp_path / "a.json", tmp_path / "old.sqlite"
    release = ["release", "--data", str(data), "--ledger", str(ledger), "--query", "count",
               "--epsilon", "1"]
    assert _cli("ledger", "init", str(ledger), "--budget", "2", "--anchor", str(anchor)
                ).returncode == 0
    assert _cli("ledger", "init", str(tmp_path / "m.sqlite"), "--budget", "2", "--anchor",
                str(anchor)).returncode == 2  # never over an existing anchor
    assert _cli(*release, "--anchor", str(anchor)).returncode == 0
    shutil.copyfile(ledger, old)  # a backup, taken after the first release
    assert _cli(*release, "--anchor", str(anchor)).returncode == 0  # budget exhausted
    shutil.copyfile(old, ledger)  # ... and the backup restored: 1 of 2 "spent"
    r = _cli(*release, "--anchor", str(anchor))  # with the anchor: refused
    assert r.returncode == 2 and "older copy was restored" in r.stderr, r.stderr
    r = _cli(*release)  # without it: refused too, the ledger is anchored
    assert r.returncode == 2 and "opened without its anchor" in r.stderr, r.stderr
    assert Ledger(ledger).spent().epsilon == 1.0  # nothing was re-spent
    # the read-only views: with the anchor the rollback is found; without, they must
    # be told --no-anchor and then say so, with status 1
    for view in (["ledger", str(ledger)], ["ledger", "verify", str(ledger)],
                 ["report", str(ledger), "--out", str(tmp_path / "r.html")]):
        r = _cli(*view, "--anchor", str(anchor))
        assert r.returncode != 0 and "older copy" in r.stdout + r.stderr, view
        r = _cli(*view)
        assert r.returncode == 2 and "--no-anchor" in r.stderr, view
        r = _cli(*view, "--no-anchor")
        assert r.returncode == 1 and "rollback not checked" in r.stdout, view


def test_anchoring_by_verify_and_a_copy_older_than_the_anchoring(tmp_path: Path) -> None:
    """``verify --write-anchor`` anchors an unanchored ledger with an event in its chain.
    A copy older than that event is a valid unanchored ledger -- the limit the docs
    state -- but the anchor file still refuses it."""
    ledger, anchor = tmp_path / "l.sqlite", tmp_path / "a.json"
    kw = dict(query="q", canonical="q", query_key="k", dataset="d", mechanism="m",
              parameters={}, guarantee={})
    with Ledger(ledger, budget=Budget(2.0), create=True) as led:
        led.complete(led.reserve(epsilon=1.0, delta=0, **kw), np.array([1.0]))
    old = tmp_path / "old.sqlite"
    shutil.copyfile(ledger, old)
    assert main(["ledger", "verify", str(ledger), "--write-anchor", str(anchor)]) == 0
    a = json.loads(anchor.read_text())
    with Ledger(ledger, anchor=anchor) as led:
        assert led.anchored and led.head_seq == 4 and a["seq"] == 4
        led.reserve(epsilon=1.0, delta=0, **kw)
    assert main(["ledger", "verify", str(ledger), "--write-anchor", str(anchor)]) == 2
    shutil.copyfile(old, ledger)  # restored from before the anchoring
    with pytest.raises(LedgerError, match="older copy was restored"):
        Ledger(ledger, anchor=anchor)
    with Ledger(ledger) as led:  # without the anchor it is an unanchored ledger ...
        assert not led.anchored and led.spent().epsilon == 1.0


def test_anchor_ids_bind_the_anchor_to_its_anchoring(tmp_path: Path) -> None:
    p, q = tmp_path / "p.sqlite", tmp_path / "q.sqlite"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    Ledger(p, budget=Budget(1.0), create=True, anchor=a).close()
    Ledger(q, budget=Budget(1.0), create=True).close()
    with pytest.raises(LedgerError, match="already exists"):
        Ledger(q, anchor=None).write_anchor(a)  # another ledger's anchor: not overwritten
    forged = json.loads(a.read_text())
    forged["anchor"] = "0" * 32
    b.write_text(json.dumps(forged))
    with pytest.raises(LedgerError, match="not this ledger's anchor"):
        Ledger(p, anchor=b)
    with pytest.raises(LedgerError, match="already exists"):
        Ledger(tmp_path / "r.sqlite", budget=Budget(1.0), create=True, anchor=a)
    assert not (tmp_path / "r.sqlite").exists()


# -------------------------------------------------------------- randomness
def test_only_dpnoise_os_keyed_randomness_with_a_ledger_file(tmp_path: Path) -> None:
    data = _data(tmp_path)
    ledger = tmp_path / "l.sqlite"
    Ledger(ledger, budget=Budget(5.0), create=True).close()

    class Seeded(CryptoRandom):  # a subclass whose words are seeded
        def __init__(self) -> None:
            super().__init__()
            self._inner = SeededRandom(7)

        def words(self, n: int) -> np.ndarray:
            return self._inner.words(n)

    rekeyed = CryptoRandom()
    rekeyed.words = SeededRandom(7).words  # type: ignore[method-assign]
    for rng in (Seeded(), rekeyed, KeyedRandom(bytes(32)), SeededRandom(1),
                np.random.default_rng(1)):
        with pytest.raises(ParameterError, match="not dpnoise's OS-keyed randomness"):
            Session(data, None, ledger, rng=rng)
    with Session(data, None, ledger, rng=CryptoRandom()) as s:
        s.release("count", epsilon=1.0)
        s._rng = Seeded()  # set behind the property's back: refused at the release
        with pytest.raises(ParameterError, match="OS-keyed"):
            s.release("count", epsilon=1.0)
    assert Ledger(ledger).spent().epsilon == 1.0  # nothing spent by the refusals


def test_the_dataset_fingerprint_names_the_hash_only(tmp_path: Path) -> None:
    data = _data(tmp_path)
    ledger = tmp_path / "l.sqlite"
    with Session(data, Budget(5.0), ledger, create_ledger=True, replay=True) as s:
        s.release("count", epsilon=1.0)
        (e,) = s.history()
    fmt, digest, *rest = e.dataset.split(":")
    assert (fmt, len(digest), rest) == ("csv", 32, [])
    assert str(data.stat().st_size) not in e.dataset.split(":")
    with Session(data, None, ledger, replay=True) as s:  # replay still finds it
        assert s.release("count", epsilon=1.0).replayed
    data.write_text(data.read_text() + "3\n")  # a changed file is another data set
    with Session(data, None, ledger, replay=True) as s:
        assert not s.release("count", epsilon=1.0).replayed


def test_replay_finds_releases_recorded_with_the_older_fingerprint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Releases recorded before the size was dropped (their key hashed ``csv:H:SIZE``)
    are still replayed."""
    from dpnoise.session.source import Source

    data = _data(tmp_path)
    ledger = tmp_path / "l.sqlite"
    new_file = Source._file

    def old_file(self: Source, path: Path) -> str:
        new_file(self, path)
        return str(self.legacy_fingerprint)  # what an older dpnoise stored

    with monkeypatch.context() as m:
        m.setattr(Source, "_file", old_file)
        with Session(data, Budget(5.0), ledger, create_ledger=True) as s:
            first = s.release("count", epsilon=1.0)
            assert s.history()[0].dataset.count(":") == 2
    with Session(data, None, ledger, replay=True) as s:
        again = s.release("count", epsilon=1.0)
        assert again.replayed and np.array_equal(again.values, first.values)
        assert s.spent.epsilon == 1.0


def test_ledger_cli_refuses_a_bad_confidence_and_an_absurd_total(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "l.sqlite"
    for budget in ("1e-320", "5e-324", "1e-10", "1e10", "1,1e-320"):
        assert main(["ledger", "init", str(p), "--budget", budget]) == 2
        err = capsys.readouterr().err
        assert "budget" in err and "must be 0 or in" in err and "Traceback" not in err
        assert not p.exists()
    assert main(["ledger", "init", str(p), "--rho", "1e-320"]) == 2
    assert "budget rho" in capsys.readouterr().err
    assert main(["ledger", "init", str(p), "--budget", "1"]) == 0
    with Ledger(p) as led:
        led.complete(led.reserve(epsilon=0.5, delta=0, query="count", canonical="count",
                                 query_key="k", dataset="d", mechanism="m", parameters={},
                                 guarantee={}), np.array([3.0]))
    capsys.readouterr()
    for level in ("1.5", "0", "1", "-0.5", "nan"):
        assert main(["ledger", str(p), "--show", "1", "--confidence", level]) == 2
        assert "--confidence must be in (0, 1)" in capsys.readouterr().err


@pytest.mark.usefixtures("spark")
@pytest.mark.xdist_group("spark")
def test_spark_executor_output_is_written_after_the_complete_event(tmp_path: Path) -> None:
    """A release noised and written by the Spark executors: when the write job starts, the
    release's complete event is already in the main ledger file (read by a copy of it)."""
    from tests.test_custodian_attacks import write

    path = write(tmp_path, "parquet", ["x"], [[1.0], [2.0], [3.0]])
    ledger, out = tmp_path / "l.sqlite", tmp_path / "out"
    seen: list[str] = []
    with Session(str(path), Budget(1.0), ledger, create_ledger=True,
                 schema={"columns": {"x": {"lower": 0, "upper": 5}}},
                 engine="spark", engine_options={"noise": "executors"}) as s:
        release_to = s.engine.release_to

        def spy(*a: object, **kw: object) -> object:
            copy = _copy_main_file_only(ledger, tmp_path / f"copy{len(seen)}")
            seen.extend(e.status for e in Ledger(copy).entries())
            assert not out.exists()
            return release_to(*a, **kw)

        s.engine.release_to = spy  # type: ignore[method-assign]
        r = s.release("sum x", epsilon=0.5, output=str(out))
    assert seen == ["released"] and out.is_dir() and r.details["written"]["output"] == str(out)


def _legacy_anchor(p: Path, anchor: Path) -> None:
    """An anchor file as dpnoise wrote it before anchors had ids."""
    with Ledger(p) as led:
        anchor.write_text(json.dumps({"format": "dpnoise-ledger-anchor", "ledger": led.chain_id,
                                      "seq": led.head_seq, "head": led.head}))


def test_older_anchors_are_checked_then_replaced_by_migrate_or_verify(tmp_path: Path) -> None:
    kw = dict(query="q", canonical="q", query_key="k", dataset="d", mechanism="m",
              parameters={}, guarantee={})
    p, a = tmp_path / "l.sqlite", tmp_path / "a.json"
    with Ledger(p, budget=Budget(3.0), create=True) as led:
        led.complete(led.reserve(epsilon=1.0, delta=0, **kw), np.array([1.0]))
    _legacy_anchor(p, a)
    con = sqlite3.connect(p, isolation_level=None)  # ... and the ledger made format 2
    con.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    with pytest.warns(UserWarning, match="format version 2"):
        Ledger(p, anchor=a).close()  # an older anchor is compared with a format-2 chain
    assert main(["ledger", "migrate", str(p), "--anchor", str(a)]) == 0
    new = json.loads(a.read_text())
    assert len(new["anchor"]) == 32 and new["seq"] == 5  # init, 2 events, migrate, anchor
    with Ledger(p, anchor=a) as led:
        assert led.anchored and led.reserve(epsilon=1.0, delta=0, **kw) == 2
    with Ledger(p) as led, pytest.raises(LedgerError, match="opened without its anchor"):
        led.reserve(epsilon=1.0, delta=0, **kw)
    # a format-3 ledger with an older anchor: anchored by verify, after checking it
    q, b = tmp_path / "m.sqlite", tmp_path / "b.json"
    Ledger(q, budget=Budget(3.0), create=True).close()
    _legacy_anchor(q, b)
    with pytest.raises(LedgerError, match="before anchors had ids"):
        Ledger(q, anchor=b)
    assert main(["ledger", "verify", str(q), "--write-anchor", str(b)]) == 0  # it matches
    assert json.loads(b.read_text())["anchor"] is not None
    with Ledger(q, anchor=b) as led:
        assert led.reserve(epsilon=1.0, delta=0, **kw) == 1


ANCHORED_WORKER = """
import sys
from dpnoise import Session
with Session(sys.argv[1], None, sys.argv[2], anchor=sys.argv[3], timeout=120) as s:
    for _ in range(int(sys.argv[4])):
        s.release("count", epsilon=0.125)
"""


def test_concurrent_writers_never_move_the_anchor_backwards(tmp_path: Path) -> None:
    """Three processes release through the same anchor: it is advanced under the write
    lock, so at the end it records the ledger's last event, whoever wrote it."""
    data = _data(tmp_path)
    ledger, anchor = tmp_path / "l.sqlite", tmp_path / "a.json"
    Ledger(ledger, budget=Budget(10.0), create=True, anchor=anchor).close()
    env = {**os.environ, "PYTHONPATH": SRC}
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(ANCHORED_WORKER),
                               str(data), str(ledger), str(anchor), "8"], env=env, text=True,
                              stderr=subprocess.PIPE) for _ in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    rep = verify_ledger(ledger, anchor=anchor)
    assert rep.ok and rep.releases == 24 and rep.events == 49
    assert json.loads(anchor.read_text())["seq"] == 49  # the head, not an earlier event
    assert not list(tmp_path.glob(".a.json.*"))  # no temporary anchor files left
