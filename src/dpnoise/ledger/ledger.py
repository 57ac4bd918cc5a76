"""A durable privacy-budget ledger in one SQLite file: an append-only, hash-chained log.

**Lifecycle.**  A ledger file is created only by an explicit act -- ``dpnoise ledger init
FILE --budget EPS[,DELTA]`` or ``Ledger(path, budget=..., create=True)`` -- and creation is
atomic and never touches an existing path.  Opening a path that is missing, empty (0 bytes),
not SQLite, not a dpnoise ledger or whose chain does not verify is a
:class:`~dpnoise.errors.LedgerError`: a ledger is never created, reset or repaired
implicitly.  ``Ledger(None, budget=...)`` is an in-memory ledger (tests, throw-away
sessions; nothing is recorded).

**Protocol** (crash- and concurrency-safe):

1. **Reserve**, in one ``BEGIN IMMEDIATE`` transaction (SQLite's write lock, so reservations
   of concurrent processes are serialised): check that the file is still the one opened
   (device and inode, a size no smaller than last seen), that the events this object
   already verified are unchanged (a cheap fingerprint: count, charges, lengths and the
   head hash), verify the events other processes appended since (hash chain and rules,
   :mod:`~dpnoise.ledger.chain`), refuse an anchored ledger opened without its
   anchor, refuse with :class:`~dpnoise.errors.BudgetExceededError` if the charge would
   exceed the total (nothing is written), else append a ``reserve`` event and commit: with
   the rollback journal and ``synchronous = EXTRA`` the event is in the main database file
   when the commit returns (:mod:`~dpnoise.ledger.store`).
2. Only then is noise drawn.
3. **Complete** appends a ``complete`` event with the answer's hash (the answer itself in
   ``blobs``) and, in its body, the release's ``record`` (:func:`encode_record`: the noisy
   components of a mean / variance / quantile and the released keys of groups chosen by
   partition selection -- released values only, so that error bars of past releases can
   be recomputed), or **abort** appends an ``abort`` event with a fixed reason code
   (:data:`~dpnoise.ledger.chain.ABORT_REASONS`; never an exception text, which
   could quote data).  Nothing is ever updated in place.
4. With an anchor file, the anchor is then advanced under the write lock (a second, empty
   transaction), so two processes never move it backwards.

A process killed at any point leaves either no event (killed before the reservation
committed: nothing was drawn) or an open reservation, which stays charged forever because
the noise may have been drawn and seen.

Accounting: the header records the accountant (``"basic"``: sequential composition, the
charges add up) and the total; the sums are exact rationals of the stored doubles, so
rounding never lets the charges exceed the total.  Each reserve event records the hash of
the composed state after it, and may carry a serialised accounting object (stored with its
SHA-256), so a tighter accountant can be added without a format change.

The tables and the hash are defined in :mod:`~dpnoise.ledger.store` and
:mod:`~dpnoise.ledger.chain`; the latter also states what the chain detects and what
it does not (the last events truncated, or an older copy restored, is detected only with an
anchor -- ``anchor=FILE`` -- or by a live session).  Anchoring is an event of the chain
(:meth:`Ledger.write_anchor`, or ``create=True`` with ``anchor``), so an anchored ledger
knows it needs its anchor.  Ledgers of format 1 (table ``releases``) and 2 (WAL journal)
open read-only until converted with ``dpnoise ledger migrate FILE``.

This module holds opening, checking and completing; the other steps are mixed in from
``reservations`` (reserve), ``accounts`` (spent, remaining, charges), ``anchoring`` and
``entries`` (reading releases back); the chain, the SQLite store and whole-file
verification live in ``chain``, ``store`` and ``verify``.
"""


from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from numpy.typing import NDArray

from ..errors import BudgetExceededError, LedgerError, ParameterError
from ..params import as_real_scalar
from .accounts import LedgerAccounts
from .anchoring import LedgerAnchoring
from .budget import (
    Budget,
    budget_of,
    check_new_total,
)
from .chain import (
    ABORT_REASONS,
    Anchor,
    ChainState,
    new_anchor_id,
    verify_rows,
    write_anchor,
)
from .entries import LedgerReading
from .migrate import migrate
from .records import (
    RECORD_MAX_CELLS,
    Entry,
    decode_answer,
    decode_record,
    encode_answer,
    encode_record,
    timestamp,
)
from .reservations import LedgerReservations
from .rng_rule import check_rng_for_ledger
from .store import (
    SELECT_EVENTS,
    V1,
    V2,
    VERSION,
    append_event,
    create_file,
    create_tables,
    fingerprint,
    header_body,
    use_rollback_journal,
    v1_check,
)
from .verify import VerifyReport, check_blobs, ledger_version, verify_all, verify_ledger

__all__ = ["RECORD_MAX_CELLS", "Budget", "Entry", "Ledger", "VerifyReport",
           "check_rng_for_ledger", "decode_answer", "decode_record", "encode_answer",
           "encode_record", "migrate", "verify_ledger"]

_MEMORY = ":memory:"
QUICK_CHECK_LIMIT = 256 << 20  # bytes; larger ledgers are checked as they are read


def check_timeout(timeout: Any) -> float:
    """Seconds to wait for another process's lock: a finite number >= 0 (by the one
    numeric-input rule, :func:`dpnoise.params.as_real_scalar`)."""
    x = as_real_scalar("timeout", timeout)
    if not 0 <= x < float("inf"):
        raise ParameterError(f"timeout must be a finite number of seconds >= 0, got {timeout!r}")
    return x


def file_identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def create_hint(path: str) -> str:
    return (f"create a ledger explicitly with `dpnoise ledger init {path} --budget "
            "EPS[,DELTA]` (Python: Ledger(path, budget=..., create=True))")


class Ledger(LedgerAnchoring, LedgerAccounts, LedgerReservations, LedgerReading):
    """The budget ledger.

    ``path``: the SQLite file, or ``None`` / ``":memory:"`` for an in-memory ledger (which
    needs ``budget``).  ``create=True`` creates a new file with total ``budget`` (an existing
    path is an error); otherwise the file must be an existing ledger, and ``budget``, if
    given, must equal its total.  ``anchor``: a file outside the ledger holding a head of its
    chain and its anchor id -- created with the ledger (``create=True``: never an existing
    file), compared when the ledger is opened (a ledger behind it, on another chain or with
    another anchoring is an error) and advanced after every event this object writes.  An
    anchored ledger opened without its anchor can be read (:attr:`rollback_checked` is
    False) but reserves nothing.  ``timeout``: seconds to wait for another process's write
    lock.

    Parameters
    ----------
    path : str, pathlib.Path or None, default None
        The SQLite file; None or ``":memory:"``: in memory.
    budget : Budget or None, default None
        The total (required to create, or for an in-memory ledger).
    create : bool, default False
        Create a new ledger file.
    timeout : float, default 30.0
        Seconds to wait for another process's write lock.
    anchor : str, pathlib.Path or None, default None
        A file outside the ledger holding a head of its chain.

    Raises
    ------
    LedgerError
        If the file is missing, empty, foreign or broken, exists on create, or is behind
        its anchor.
    ParameterError
        If ``budget`` is not a :class:`Budget` or differs from the ledger's total.
    """

    def __init__(self, path: str | Path | None = None, *, budget: Budget | None = None,
                 create: bool = False, timeout: float = 30.0,
                 anchor: str | Path | None = None) -> None:
        for what, v in (("ledger", path), ("anchor", anchor)):
            if (v is not None and not isinstance(v, (str, os.PathLike))) or v == "":
                raise ParameterError(f"{what} must be a file path (or None), got {v!r}")
        self.path = _MEMORY if path is None or str(path) == _MEMORY else str(Path(path))
        self.timeout = check_timeout(timeout)
        # one connection: threads sharing this object take turns per transaction (SQLite
        # refuses a BEGIN inside another thread's open transaction on the same connection)
        self._lock = threading.RLock()
        self.anchor = None if anchor is None else str(anchor)
        self.version = VERSION
        self.read_only = False
        if budget is not None and not isinstance(budget, Budget):
            raise ParameterError(f"budget must be a dpnoise.Budget, got {type(budget).__name__}")
        self._ident: tuple[int, int] | None = None
        self._acc: Any = None
        self._acc_state: tuple[str | None, Any] | None = None  # (hash, composed State)
        self._state = ChainState(self.path)
        self._fp: tuple[Any, ...] = ()
        self._size = 0  # the file's size when last seen: it never shrinks under a session
        if not self.durable:
            if budget is None:
                raise LedgerError("an in-memory ledger needs its total: give a total budget "
                                  "(budget=Budget(epsilon=..., delta=...) / --budget EPS[,DELTA])")
            if self.anchor is not None:
                raise ParameterError("anchor needs a ledger file, not an in-memory ledger")
        elif create:
            if budget is None:
                raise ParameterError(f"create=True needs budget=Budget(...): the total of ledger "
                                     f"{self.path!r} is fixed when it is created")
            self._create(budget)
        else:
            self._check_path()
        if self.durable:
            self._ident = file_identity(self.path)
        try:
            self._con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                        check_same_thread=False)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open ledger {self.path!r}: {exc}") from exc
        try:
            self._open(budget, compare_anchor=not create)
        except BaseException:
            self.close()
            raise

    # ----------------------------------------------------------- opening
    def _create(self, budget: Budget) -> None:
        """Create the file; with an anchor, the init event names a fresh anchor id and the
        anchor file (which must not exist: it could be another ledger's) is written
        before the ledger appears under its name."""
        check_new_total(budget)
        init = header_body(budget.epsilon, budget.delta, budget.rho, budget.accountant)
        written: list[Path] = []

        def anchor_it(ledger_id: str) -> None:
            assert self.anchor is not None
            write_anchor(self.anchor, Anchor(ledger_id, 1, ledger_id, init["anchor_id"]),
                         new=True)
            written.append(Path(self.anchor))

        if self.anchor is not None:
            if Path(self.anchor).resolve() == Path(self.path).resolve():
                raise LedgerError(f"anchor file {self.anchor!r} is the ledger itself: the "
                                  "anchor is a separate file (kept apart from the ledger)")
            if Path(self.anchor).exists() or Path(self.anchor).is_symlink():
                raise LedgerError(f"anchor file {self.anchor!r} already exists: it may be "
                                  "another ledger's anchor and is never overwritten (choose "
                                  "a new file)")
            init["anchor_id"] = new_anchor_id()
        try:
            create_file(Path(self.path), init, timestamp(),
                        before_link=anchor_it if self.anchor is not None else None)
        except BaseException:
            for f in written:  # the ledger was not created: neither is its anchor
                with contextlib.suppress(OSError):
                    f.unlink()
            raise

    def _check_path(self) -> None:
        p = Path(self.path)
        if not p.exists():
            raise LedgerError(f"ledger {self.path!r} does not exist; a ledger is never "
                              f"created implicitly: {create_hint(self.path)}")
        if not p.is_file():
            raise LedgerError(f"ledger {self.path!r} is not a regular file")
        if p.stat().st_size == 0:
            raise LedgerError(
                f"ledger {self.path!r} is empty (0 bytes): it is not a ledger and is never "
                "re-initialised (that would reset the budget); restore it from a backup, or "
                f"if it really is new, delete it and {create_hint(self.path)}"
            )

    def _open(self, budget: Budget | None, compare_anchor: bool) -> None:
        with self._errors("open"):
            if self.durable and Path(self.path).stat().st_size <= QUICK_CHECK_LIMIT:
                row = self._con.execute("PRAGMA quick_check").fetchone()
                if row is None or row[0] != "ok":
                    raise LedgerError(
                        f"ledger {self.path!r} is corrupted (quick_check: {row and row[0]!r}); "
                        "restore it from a backup -- it is never reset automatically"
                    )
            if not self.durable:
                self._con.execute("PRAGMA synchronous=FULL")
                with self._write("initialisation") as con:
                    assert budget is not None
                    create_tables(con)
                    append_event(con, self._state, kind="init", at=timestamp(), body=header_body(
                        budget.epsilon, budget.delta, budget.rho, budget.accountant))
            with self._read("open") as con:
                version = ledger_version(con, self.path)
            if version == VERSION and self.durable:
                use_rollback_journal(self._con, self.path)  # (format 2 is left as it is)
            with self._read("open") as con:
                if version == V1:
                    self._open_v1(con, budget)
                    return
                self._state = verify_all(con, self.path, hash_answers=False)
                self._fp = fingerprint(con, self._state.seq)
                self._size = self._file_size()
                self.budget = budget_of(self._state)
                if budget is not None and budget != self.budget:
                    raise LedgerError(
                        f"ledger {self.path!r} was created with total budget {self.budget}, "
                        f"not {budget}; a ledger's total cannot change (omit the budget to "
                        "use the stored one)"
                    )
                if version == V2:
                    self.version, self.read_only = V2, True
                if self.anchor is not None and compare_anchor:
                    self._compare_anchor(con)
            if self.read_only:
                warnings.warn(self.read_only_message(), stacklevel=3)

    def _open_v1(self, con: sqlite3.Connection, budget: Budget | None) -> None:
        head = v1_check(con, self.path)
        self.version, self.read_only = V1, True
        self.budget = Budget(head.epsilon, head.delta)
        if budget is not None and budget != self.budget:
            raise LedgerError(f"ledger {self.path!r} was created with total budget "
                              f"{self.budget}, not {budget}; a ledger's total cannot change")
        if self.anchor is not None:
            raise LedgerError(f"ledger {self.path!r} has format version {V1}: it has no chain "
                              "to compare with an anchor")
        warnings.warn(self.read_only_message(), stacklevel=3)

    @property
    def _v1(self) -> bool:
        return self.version == V1

    def read_only_message(self) -> str:
        """Why a format-1 ledger is open read-only, and how to migrate it.

        Returns
        -------
        str
            The message (also given as a warning when such a ledger is opened).
        """
        if self._v1:
            return (f"ledger {self.path!r} has format version {V1} (no hash chain): it is open "
                    f"read-only -- entries, spent and remaining can be read, but reservations "
                    f"are refused; run `dpnoise ledger migrate {self.path}` to convert it "
                    f"(a backup {self.path}.v1.bak is kept)")
        return (f"ledger {self.path!r} has format version {V2} (its events could live only in "
                f"the write-ahead log): it is open read-only -- its chain is verified and can "
                f"be read, but reservations are refused; run `dpnoise ledger migrate "
                f"{self.path}` to convert it (with every other process closed)")

    # ----------------------------------------------------------- machinery
    @property
    def durable(self) -> bool:
        """True for a ledger file, False for an in-memory ledger."""
        return self.path != _MEMORY

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
        with self._lock, self._errors(what):
            self._con.execute("BEGIN IMMEDIATE")
            try:
                yield self._con
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")

    @contextmanager
    def _read(self, what: str) -> Iterator[sqlite3.Connection]:
        """One read transaction (a consistent snapshot)."""
        with self._lock, self._errors(what):
            self._con.execute("BEGIN")
            try:
                yield self._con
            finally:
                self._con.execute("COMMIT")

    def _check_identity(self) -> None:
        if self._ident is None:
            return
        try:
            ident = file_identity(self.path)
        except FileNotFoundError:
            raise LedgerError(
                f"ledger {self.path!r} was deleted while in use: nothing more is released "
                "or recorded; restore the file and open it again") from None
        if ident != self._ident:
            raise LedgerError(
                f"ledger {self.path!r} was replaced by another file while in use (its "
                "device/inode changed): nothing more is released; open it again to verify it")
        size = self._file_size()
        if size < self._size:
            raise LedgerError(
                f"ledger {self.path!r} shrank while in use ({self._size} -> {size} bytes: "
                "truncated, or rolled back to an older copy written in place): nothing more "
                f"is released -- run `dpnoise ledger verify {self.path}`")

    def _file_size(self) -> int:
        try:
            return os.stat(self.path).st_size if self.durable else 0
        except FileNotFoundError:
            raise LedgerError(
                f"ledger {self.path!r} was deleted while in use: nothing more is released "
                "or recorded; restore the file and open it again") from None

    def _sync_for_reservation(self, con: sqlite3.Connection) -> ChainState:
        """``_sync``, then: an anchored ledger reserves only with its anchor (it was
        compared when this object opened; without it, a restored older copy would hand
        spent budget back)."""
        st = self._sync(con)
        if st.anchor_id is not None and self.anchor is None:
            raise LedgerError(
                f"release refused, nothing spent: ledger {self.path!r} is anchored (event "
                f"{st.anchor_seq}) and was opened without its anchor file -- give it "
                "(--anchor FILE / anchor=...) so that a restored older copy is detected")
        return st

    def _sync(self, con: sqlite3.Connection) -> ChainState:
        """Inside a transaction: the verified state including every event appended since
        this object last looked (only those are hashed; the rest is fingerprinted)."""
        if self.read_only:
            raise LedgerError(self.read_only_message())
        self._check_identity()
        n = self._state.seq
        if fingerprint(con, n) != self._fp:
            raise LedgerError(
                f"ledger {self.path!r}: events 1..{n}, verified when it was opened, have "
                "changed since (an event was edited or deleted, or the file was rolled back "
                f"to an older copy); nothing more is released -- run `dpnoise ledger verify "
                f"{self.path}`")
        rows = con.execute(f"{SELECT_EVENTS} WHERE seq > ? ORDER BY seq", (n,)).fetchall()
        if not rows:
            return self._state
        new = verify_rows(self._state, rows)
        check_blobs(con, self.path, min(r[0] for r in rows), hash_answers=False)
        return new

    def _refresh(self) -> ChainState:
        if self.read_only:
            return self._state
        with self._read("reading") as con:
            st = self._sync(con)
            if st is not self._state:
                self._state, self._fp = st, fingerprint(con, st.seq)
        return self._state

    def _after_write(self, st: ChainState, fp: tuple[Any, ...]) -> None:
        """After a commit (the event is in the main file): remember what was verified,
        and advance the anchor -- under the write lock again, to the head as it is then,
        so that two processes never move the anchor backwards."""
        self._state, self._fp = st, fp
        self._size = max(self._size, self._file_size())
        if self.anchor is not None:
            with self._write("anchor update") as con:
                st = self._sync(con)
                self._state, self._fp = st, fingerprint(con, st.seq)
                write_anchor(self.anchor, Anchor(st.ledger_id, st.seq, st.head, st.anchor_id))

    # --------------------------------------------------------------- API
    @property
    def head(self) -> str | None:
        """The hash of the last event this object has verified or written (None: format 1)."""
        return None if self._v1 else self._state.head

    @property
    def head_seq(self) -> int:
        """The number of that event."""
        return self._state.seq

    @property
    def chain_id(self) -> str | None:
        """The hash of the init event: identifies this ledger (None: format 1)."""
        return None if self._v1 else self._state.ledger_id

    @property
    def accountant(self) -> str:
        """The accountant's name: basic, pld or zcdp."""
        return self.budget.accountant

    @property
    def anchored(self) -> bool:
        """Whether the chain carries its anchoring (then reservations need the anchor)."""
        return self._state.anchor_id is not None

    @property
    def rollback_checked(self) -> bool:
        """Whether this object compared the chain with its anchor file when it opened."""
        return self.anchor is not None and self.anchored

    def _close_release(self, what: str, rid: int, **event: Any) -> str:
        with self._write(what) as con:
            st = self._sync(con)
            if rid not in st.open:
                raise LedgerError(f"ledger row {rid} is not an open reservation")
            row = append_event(con, st, at=timestamp(), release=rid, **event)
            st = verify_rows(st, [row])
            fp = fingerprint(con, st.seq)
        self._after_write(st, fp)
        return st.head

    def complete(self, rid: int, answer: NDArray[Any], answer_text: str = "",
                 record: dict[str, Any] | None = None) -> str:
        """Record the answer of reservation ``rid``; returns the new head hash.  ``record``
        (:func:`encode_record`): its noisy components and released keys, stored in the
        complete event's body (so inside the hash chain).

        Parameters
        ----------
        rid : int
            The release number returned by :meth:`reserve`.
        answer : numpy.ndarray
            The released values.
        answer_text : str, default ""
            The answer as printed.
        record : dict or None, default None
            The release's noisy components and released keys.

        Returns
        -------
        str
            The new head hash.
        """
        blob = encode_answer(answer)
        body: dict[str, Any] = {"answer_text": str(answer_text)[:500]}
        if record is not None:
            body["record"] = record
        return self._close_release("completion", rid, kind="complete", body=body,
                                   answer=blob)

    def abort(self, rid: int, reason: str) -> str:
        """Mark a reservation whose release failed; it STAYS charged (noise may exist).
        ``reason`` is a code from ``ABORT_REASONS`` -- never an exception's text.

        Parameters
        ----------
        rid : int
            The release number returned by :meth:`reserve`.
        reason : str
            A code from ``ABORT_REASONS``.

        Returns
        -------
        str
            The new head hash.
        """
        if reason not in ABORT_REASONS:
            raise ParameterError(f"abort reason must be one of {', '.join(sorted(ABORT_REASONS))}"
                                 f", got {reason!r} (free text could quote data)")
        return self._close_release("abort", rid, kind="abort", body={"reason": reason})

    def close(self) -> None:
        """Close the SQLite connection (also on leaving a ``with`` block)."""
        with contextlib.suppress(sqlite3.Error, AttributeError):
            self._con.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _repr_html_(self) -> str:
        """Notebook display: total, spent, remaining and the releases."""
        from ..views import html_of

        return html_of("ledger", self)

    def __repr__(self) -> str:
        return f"Ledger({self.path!r}, budget={getattr(self, 'budget', None)})"
