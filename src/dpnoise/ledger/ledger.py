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

Why this file is long: the ledger's transaction protocol (open, verify,
reserve under the accountant, complete, abort, anchors) must read as one piece; the chain,
the SQLite store and whole-file verification already live in ``chain``,
``store`` and ``verify``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import os
import sqlite3
import time
import warnings
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
from .chain import (
    ABORT_REASONS,
    ACCOUNTANTS,
    Anchor,
    ChainError,
    ChainState,
    basic_state,
    check_anchor,
    new_anchor_id,
    read_anchor,
    sha256_hex,
    verify_rows,
    write_anchor,
)
from .migrate import migrate
from .store import (
    SELECT_EVENTS,
    V1,
    V1_COLS,
    V1_FROM,
    V2,
    VERSION,
    append_event,
    create_file,
    create_tables,
    fingerprint,
    header_body,
    use_rollback_journal,
    v1_charged,
    v1_check,
)
from .verify import VerifyReport, check_blobs, ledger_version, verify_all, verify_ledger

__all__ = ["RECORD_MAX_CELLS", "Budget", "Entry", "Ledger", "VerifyReport",
           "check_rng_for_ledger", "decode_answer", "decode_record", "encode_answer",
           "encode_record", "migrate", "verify_ledger"]

_MEMORY = ":memory:"
QUICK_CHECK_LIMIT = 256 << 20  # bytes; larger ledgers are checked as they are read


@dataclass(frozen=True)
class Budget:
    """A ledger's total under an accountant.

    ``Budget(epsilon, delta=0, accountant="basic" | "pld" | "zcdp")``: an (epsilon, delta)
    total; ``Budget(rho=...)``: a zCDP total (accountant ``"zcdp"``; epsilon is then
    infinite and unused).  ``"basic"``: the releases' (epsilon, delta) add up; ``"pld"``:
    the privacy-loss distributions of the laws sampled are composed; ``"zcdp"``: their rho
    add up (see :mod:`dpnoise.accounting` and docs/accounting.md).  The accountant defaults
    to ``"basic"``, or ``"zcdp"`` with ``rho``.

    Parameters
    ----------
    epsilon : float or None, default None
        The total ε (None with ``rho``).
    delta : float, default 0.0
        The total δ.
    rho : float or None, default None
        A zCDP total ρ (M. Bun, T. Steinke, *Concentrated Differential Privacy*, TCC 2016,
        Definition 1.1): releases compose by adding their ρ, and ρ-zCDP implies
        ``(ρ + 2·sqrt(ρ·ln(1/δ)), δ)``-DP (their Proposition 1.3).
    accountant : {"basic", "pld", "zcdp"} or None, default None
        How releases compose (None: "basic", or "zcdp" with ``rho``).

    Raises
    ------
    ParameterError
        If the accountant is unknown or a total is out of range or inconsistent with it.
    """

    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None
    accountant: str | None = None

    def __post_init__(self) -> None:
        acc = self.accountant if self.accountant is not None else (
            "zcdp" if self.rho is not None else "basic")
        if acc not in ACCOUNTANTS:
            raise ParameterError(f"budget accountant must be one of {', '.join(ACCOUNTANTS)}, "
                                 f"got {self.accountant!r}")
        if self.rho is not None:
            r = check_finite("budget rho", self.rho)
            if r < 0:
                raise ParameterError(f"budget rho must be >= 0, got {r!r}")
            if acc != "zcdp":
                raise ParameterError(f"budget rho (a zCDP total) needs accountant 'zcdp', not "
                                     f"{acc!r}")
            if (self.epsilon is not None and self.epsilon != math.inf) or self.delta:
                raise ParameterError("a rho budget has no epsilon/delta: give "
                                     "Budget(rho=...) alone, or Budget(epsilon, delta, "
                                     "accountant='zcdp') for an (epsilon, delta) total")
            object.__setattr__(self, "rho", r)
            object.__setattr__(self, "epsilon", math.inf)
            object.__setattr__(self, "delta", 0.0)
        else:
            if self.epsilon is None:
                raise ParameterError("budget epsilon is required (or rho=... for a zCDP total)")
            e = check_finite("budget epsilon", self.epsilon)
            if e < 0:
                raise ParameterError(f"budget epsilon must be >= 0, got {e!r}")
            d = check_delta(self.delta, name="budget delta", allow_zero=True)
            object.__setattr__(self, "epsilon", e)
            object.__setattr__(self, "delta", d)
        object.__setattr__(self, "accountant", acc)

    def for_accounting(self) -> Any:
        """The :class:`dpnoise.accounting.AccountingBudget` of this total.

        Returns
        -------
        AccountingBudget
            The same total in the accountants' terms.
        """
        from ..accounting import AccountingBudget

        if self.rho is not None:
            return AccountingBudget(rho=self.rho)
        return AccountingBudget(float(self.epsilon), float(self.delta))  # type: ignore[arg-type]

    def __str__(self) -> str:
        if self.rho is not None:
            return f"rho={self.rho:.6g}"
        return f"epsilon={self.epsilon:.6g}" + (f", delta={self.delta:.3g}" if self.delta else "")


@dataclass(frozen=True)
class Entry:
    """One release, reconstructed from its events (``answer`` decoded when present).

    ``status``: ``reserved`` (charged, no answer: in flight or killed), ``released`` or
    ``aborted`` (charged; ``reason`` is its code).  ``head``: the hash of the release's
    latest event (an anchor for it); ``None`` for a format-1 ledger."""

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
    reason: str | None = None
    head: str | None = None
    #: the composed guarantee after this release under the ledger's accountant: epsilon at
    #: the total's delta, delta at the total's epsilon, rho (zcdp); under "basic" the
    #: running sums (rho None).  ``basic_*``: the running sums of the rows' (epsilon,
    #: delta), i.e. what basic composition would have charged.
    composed_epsilon: float | None = None
    composed_delta: float | None = None
    composed_rho: float | None = None
    basic_epsilon: float | None = None
    basic_delta: float | None = None
    #: the release's noisy components by role (a mean's ``count`` and ``centred_sum``, a
    #: variance's ``count``/``power1``/``power2``, a quantile's ``count`` and ``rank``: the
    #: released candidate's index) as recorded in its complete event; ``None`` when not
    #: recorded (older ledgers, releases written by the executors, very large tables:
    #: ``record_note`` says which)
    components: dict[str, NDArray[Any]] | None = None
    #: the released group keys of a release over keys that are not public (partition
    #: selection), one tuple per group column, aligned with ``answer``
    released_keys: tuple[tuple[str, ...], ...] | None = None
    record_note: str | None = None


#: a release's components (and released keys) are recorded in its complete event when it
#: has at most this many cells; a larger table's record would make its event megabytes
#: long (every reservation re-reads the events' lengths)
RECORD_MAX_CELLS = 1 << 17


def encode_record(components: dict[str, NDArray[Any]] | None,
                  keys: tuple[tuple[Any, ...], ...] | None, cells: int,
                  note: str | None = None) -> dict[str, Any]:
    """The ``record`` field of a complete event: the release's noisy components (each an
    uncompressed ``.npy`` in base64 -- noisy doubles do not compress: zlib saved 3 % at
    ten times the cost) and its released keys -- released (noisy) outputs only, hashed
    with the rest of the event body."""
    import base64

    if note is not None:
        return {"version": 1, "note": note}
    if cells > RECORD_MAX_CELLS:
        return {"version": 1, "note": f"components not recorded: {cells} cells (more than "
                                      f"{RECORD_MAX_CELLS})"}
    out: dict[str, Any] = {"version": 1, "components": {
        role: base64.b64encode(_npy(np.asarray(v))).decode("ascii")
        for role, v in (components or {}).items()}}
    if keys is not None:
        out["keys"] = [[str(k) for k in col] for col in keys]
    return out


def decode_record(rec: Any) -> tuple[dict[str, NDArray[Any]] | None,
                                     tuple[tuple[str, ...], ...] | None, str]:
    """``(components, released_keys, note)`` of a complete event's ``record`` field."""
    import base64
    import binascii

    if not isinstance(rec, dict):
        return None, None, ("components not recorded (a release recorded before dpnoise "
                            "stored them)")
    if "components" not in rec:
        return None, None, str(rec.get("note", "components not recorded"))
    try:
        comps = {str(r): np.load(io.BytesIO(base64.b64decode(v, validate=True)),
                                 allow_pickle=False)
                 for r, v in dict(rec["components"]).items()}
    except (binascii.Error, TypeError, ValueError, OSError, EOFError) as exc:
        raise LedgerError(f"ledger record of components is corrupted: {exc}") from exc
    keys = rec.get("keys")
    released = None if keys is None else tuple(tuple(str(k) for k in col) for col in keys)
    return comps, released, "components recorded"  # type: ignore[return-value]


def _npy(values: NDArray[Any]) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array(values, order="C"), allow_pickle=False)
    return buf.getvalue()


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


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _create_hint(path: str) -> str:
    return (f"create a ledger explicitly with `dpnoise ledger init {path} --budget "
            "EPS[,DELTA]` (Python: Ledger(path, budget=..., create=True))")


class Ledger:
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
        self.path = _MEMORY if path is None or str(path) == _MEMORY else str(Path(path))
        self.timeout = float(timeout)
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
            self._ident = _identity(self.path)
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
        _check_new_total(budget)
        init = header_body(budget.epsilon, budget.delta, budget.rho, budget.accountant)
        written: list[Path] = []

        def anchor_it(ledger_id: str) -> None:
            assert self.anchor is not None
            write_anchor(self.anchor, Anchor(ledger_id, 1, ledger_id, init["anchor_id"]),
                         new=True)
            written.append(Path(self.anchor))

        if self.anchor is not None:
            if Path(self.anchor).exists() or Path(self.anchor).is_symlink():
                raise LedgerError(f"anchor file {self.anchor!r} already exists: it may be "
                                  "another ledger's anchor and is never overwritten (choose "
                                  "a new file)")
            init["anchor_id"] = new_anchor_id()
        try:
            create_file(Path(self.path), init, _now(),
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
                              f"created implicitly: {_create_hint(self.path)}")
        if not p.is_file():
            raise LedgerError(f"ledger {self.path!r} is not a regular file")
        if p.stat().st_size == 0:
            raise LedgerError(
                f"ledger {self.path!r} is empty (0 bytes): it is not a ledger and is never "
                "re-initialised (that would reset the budget); restore it from a backup, or "
                f"if it really is new, delete it and {_create_hint(self.path)}"
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
                    append_event(con, self._state, kind="init", at=_now(), body=header_body(
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
                self.budget = _budget_of(self._state)
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
        with self._errors(what):
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
        with self._errors(what):
            self._con.execute("BEGIN")
            try:
                yield self._con
            finally:
                self._con.execute("COMMIT")

    def _check_identity(self) -> None:
        if self._ident is None:
            return
        try:
            ident = _identity(self.path)
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
                row = append_event(con, st, kind="anchor", at=_now(),
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

    def _spent_fractions(self) -> tuple[Fraction, Fraction]:
        if self._v1:
            with self._read("reading") as con:
                return v1_charged(con, self.path)
        st = self._refresh()
        return st.eps, st.delta

    def spent(self) -> Budget:
        """Total charged so far (reserved, released and aborted releases alike), under the
        ledger's accountant: ``basic``: the sums; ``pld``/``zcdp``: the composed epsilon at
        the total's delta and the composed delta at the total's epsilon (or the composed
        rho for a rho total).  :meth:`spent_basic` gives what basic composition charges.

        Returns
        -------
        Budget
            The charged total.
        """
        if self.accountant == "basic" or self._v1:
            eps, dl = self._spent_fractions()
            return Budget(_float_up(eps), min(1.0, _float_up(dl)))
        c = self._composed_summary()
        if self.budget.rho is not None:
            return Budget(rho=c["rho"])
        return Budget(c["epsilon"], min(1.0, c["delta"]), accountant=self.accountant)

    def spent_basic(self) -> Budget:
        """What basic sequential composition charges for the same releases (the sum of the
        rows' epsilon/delta columns), whatever the accountant.

        Returns
        -------
        Budget
            The sums.
        """
        eps, dl = self._spent_fractions()
        return Budget(_float_up(eps), min(1.0, _float_up(dl)))

    def remaining(self) -> Budget:
        """The total minus :meth:`spent` (rounded down).  Under ``pld``/``zcdp`` it is an
        indication, not additive: whether a release fits is decided by composing it
        (:meth:`reserve`, ``Session.plan``).

        Returns
        -------
        Budget
            What is left.
        """
        if self.accountant == "basic" or self._v1:
            eps, dl = self._spent_fractions()
            r_eps = Fraction(self.budget.epsilon) - eps  # type: ignore[arg-type]
            r_dl = Fraction(self.budget.delta) - dl
            # round DOWN so the reported remainder is never more than what is left
            return Budget(_float_down(r_eps), _float_down(r_dl))
        c = self._composed_summary()
        if self.budget.rho is not None:
            return Budget(rho=_float_down(Fraction(self.budget.rho) - Fraction(c["rho"])))
        return Budget(_float_down(Fraction(self.budget.epsilon) - Fraction(c["epsilon"]))
                      if math.isfinite(c["epsilon"]) else 0.0,
                      _float_down(Fraction(self.budget.delta) - Fraction(min(1.0, c["delta"]))),
                      accountant=self.accountant)

    def _composed_summary(self) -> dict[str, float]:
        st = self._refresh()
        return st.composed if st.composed is not None else \
            {"epsilon": 0.0, "delta": 0.0, "rho": 0.0}

    # ------------------------------------------------------------ accounting
    def accountant_object(self) -> Any:
        """The :class:`dpnoise.accounting.Accountant` of this ledger.

        Returns
        -------
        Accountant
            The accountant that composes this ledger's charges.
        """
        from ..accounting import get_accountant

        if self._acc is None:
            self._acc = get_accountant(self.accountant)
        return self._acc

    def state(self) -> Any:
        """The composed :class:`dpnoise.accounting.State` of every release so far (for
        planning: ``accounting.largest_share(..., state=ledger.state())``).  Under
        ``basic`` a state holding the sums rounded up.

        Returns
        -------
        State
            The composed state.
        """
        from ..accounting import State

        if self.accountant == "basic" or self._v1:
            eps, dl = self._spent_fractions()
            n = len(self.entries()) if self._v1 else self._state.releases
            return State("basic", n, _float_up(eps), min(1.0, _float_up(dl)))
        st = self._refresh()
        with self._read("reading") as con:
            return self._composed_state(con, st)

    def charge_for(self, what: Any) -> Any:
        """The charge of a mechanism or :class:`~dpnoise.accounting.ReleaseSpec` under
        this ledger's accountant (raises ParameterError for a law the accountant refuses).

        Parameters
        ----------
        what : Mechanism or ReleaseSpec
            What a release samples.

        Returns
        -------
        object
            The charge the accountant composes (a privacy-loss distribution, a ρ, ...).
        """
        return self.accountant_object().charge_for(what)

    def _claimed_charge(self, epsilon: float, delta: float) -> Any:
        """A charge from a claimed (epsilon, delta) alone: the randomized-response pair
        (pld; dominates every (epsilon, delta)-DP release) or rho = epsilon^2/2 (zcdp,
        pure DP only)."""
        from ..mechanisms.base import Guarantee
        from ..profile import claimed_profile

        class Claimed:  # what the accountants read of a mechanism: its privacy profile
            guarantee = Guarantee(epsilon=epsilon, delta=delta)

            def privacy_profile(self) -> Any:
                return claimed_profile(epsilon, delta, note="a claimed (epsilon, delta)")

        return self.charge_for(Claimed())

    def _charge(self, accounting: Any, epsilon: float, delta: float) -> Any:
        from ..accounting import Charge

        if accounting is None:
            return self._claimed_charge(epsilon, delta)
        if isinstance(accounting, bytes):
            try:
                accounting = Charge.from_bytes(accounting)
            except (ParameterError, ValueError, KeyError) as exc:
                raise ParameterError(f"accounting is not a serialised charge: {exc}") from exc
        if not isinstance(accounting, Charge):
            raise ParameterError("accounting must be a dpnoise.accounting.Charge (or its bytes)")
        if accounting.accountant != self.accountant:
            raise ParameterError(f"a charge of accountant {accounting.accountant!r} given to a "
                                 f"{self.accountant!r} ledger")
        return accounting

    def _composed_state(self, con: sqlite3.Connection, st: ChainState) -> Any:
        """Inside a transaction: the composed state after the last reserve event -- this
        object's copy if its hash is the one the chain names, else the cached one (its
        SHA-256 must be the chain's), else (cache missing) rebuilt by composing the stored
        charges in order."""
        from ..accounting import Charge, State

        acc = self.accountant_object()
        if not st.state_seq:
            return acc.empty()
        if self._acc_state is not None and self._acc_state[0] == st.state_sha256:
            return self._acc_state[1]
        row = con.execute("SELECT seq, state FROM composed").fetchone()
        if row is not None:
            if row[0] != st.state_seq or not isinstance(row[1], bytes) or \
                    sha256_hex(row[1]) != st.state_sha256:
                raise ChainError(self.path, st.state_seq, "the cached composed state does "
                                 "not match the state hash of this reserve event")
            try:
                state = State.from_bytes(row[1])
            except (ParameterError, ValueError, KeyError) as exc:
                raise ChainError(self.path, st.state_seq, f"the cached composed state is "
                                 f"unreadable ({exc})") from exc
        else:
            state = acc.empty()
            for seq, blob in con.execute(
                    "SELECT e.seq, b.data FROM events e JOIN blobs b ON b.seq = e.seq AND "
                    "b.role = 'accounting' WHERE e.kind = 'reserve' AND e.seq <= ? "
                    "ORDER BY e.seq", (st.seq,)):
                try:
                    state = acc.compose(state, Charge.from_bytes(blob))
                except (ParameterError, ValueError, KeyError) as exc:
                    raise ChainError(self.path, seq, f"its accounting object is unreadable "
                                     f"({exc})") from exc
        if state.accountant != self.accountant or state.count != st.releases:
            raise ChainError(self.path, st.state_seq, "the composed state does not cover "
                             "the releases of the chain")
        self._acc_state = (st.state_sha256, state)
        return state

    def _summary(self, state: Any) -> dict[str, float]:
        """The composed guarantee of ``state`` against this ledger's total."""
        acc, total = self.accountant_object(), self.budget
        if total.rho is not None:
            return {"epsilon": math.inf, "delta": 1.0, "rho": float(state.rho)}
        return {"epsilon": float(acc.epsilon(state, total.delta)) if total.delta > 0 else
                float(acc.epsilon(state, 0.0)),
                "delta": float(acc.delta(state, total.epsilon)), "rho": float(state.rho)}

    def _fits(self, c: dict[str, float]) -> bool:
        """Strict (no tolerance): the composed guarantee within the total."""
        total = self.budget
        if total.rho is not None:
            return c["rho"] <= total.rho
        return c["delta"] <= total.delta or c["epsilon"] <= total.epsilon  # type: ignore[operator]

    def history_composed(self) -> list[dict[str, Any]]:
        """Per release, in order: the composed guarantee after it under the ledger's
        accountant and what basic composition would have charged by then (for plots).

        Returns
        -------
        list of dict
            Per release: the composed ε and δ and the basic sums.
        """
        return [{"id": e.id, "status": e.status, "epsilon": e.epsilon, "delta": e.delta,
                 "composed_epsilon": e.composed_epsilon, "composed_delta": e.composed_delta,
                 "composed_rho": e.composed_rho, "basic_epsilon": e.basic_epsilon,
                 "basic_delta": e.basic_delta} for e in self.entries()]

    def reserve(self, *, epsilon: float, delta: float, query: str, canonical: str,
                query_key: str, dataset: str, mechanism: str, parameters: dict[str, Any],
                guarantee: dict[str, Any], accounting: Any = None) -> int:
        """Charge a release durably before any noise is drawn; returns the release number.

        ``epsilon``/``delta``: the release's own calibrated guarantee (the row's columns).
        ``accounting``: under ``basic`` optional bytes stored with their SHA-256; under
        ``pld``/``zcdp`` the release's :class:`~dpnoise.accounting.Charge` (or its bytes;
        ``None``: a charge from the claimed (epsilon, delta) alone).  The composed state
        after it is computed INSIDE the transaction from the cached state, and the release
        is refused (BudgetExceededError, nothing written) if it would exceed the total.

        Parameters
        ----------
        epsilon, delta : float
            The release's own calibrated guarantee.
        query : str
            The query as asked.
        canonical : str
            Its canonical form.
        query_key : str
            The key for replay (query and data set).
        dataset : str
            The data set's fingerprint.
        mechanism : str
            The mechanism of each component.
        parameters : dict
            The public parameters (statistic, bounds, grid, ...).
        guarantee : dict
            The guarantee as a dict.
        accounting : object, default None
            The release's charge under the ledger's accountant.

        Returns
        -------
        int
            The release number.

        Raises
        ------
        BudgetExceededError
            If the release does not fit the remaining budget (nothing is written).
        LedgerError
            If the file changed under this object or its chain is broken.
        """
        epsilon = check_finite("epsilon", epsilon)
        delta = check_delta(delta, allow_zero=True)
        if epsilon <= 0:
            raise ParameterError(f"epsilon must be > 0, got {epsilon!r}")
        if self.accountant == "basic":
            if accounting is not None and not isinstance(accounting, bytes):
                accounting = accounting.to_bytes() if hasattr(accounting, "to_bytes") else \
                    accounting
                if not isinstance(accounting, bytes):
                    raise ParameterError("accounting must be bytes (a serialised accounting "
                                         "object)")
            return self._reserve_basic(epsilon, delta, accounting, query=query,
                                       canonical=canonical, query_key=query_key,
                                       dataset=dataset, mechanism=mechanism,
                                       parameters=parameters, guarantee=guarantee)
        if self.read_only:
            raise LedgerError(self.read_only_message())
        charge = self._charge(accounting, epsilon, delta)  # before the lock: public work
        charge_bytes = charge.to_bytes()
        acc, total = self.accountant_object(), self.budget
        with self._write("reservation") as con:
            st = self._sync_for_reservation(con)
            state = self._composed_state(con, st)
            new = acc.compose(state, charge)
            c = self._summary(new)
            if not self._fits(c):
                before = self._summary(state)
                raise BudgetExceededError(
                    f"release refused, nothing spent: under the {self.accountant} accountant "
                    f"it would bring the composed guarantee to {_fmt_composed(c, total)}, "
                    f"over the total {total} (spent so far: {_fmt_composed(before, total)})")
            rel = st.releases + 1
            body = {"query": query, "canonical": canonical, "dataset": dataset,
                    "mechanism": mechanism, "parameters": parameters, "guarantee": guarantee,
                    "pid": os.getpid(), "composed": c, "accountant": self.accountant,
                    "notes": list(charge.notes)}
            new_bytes = new.to_bytes()
            row = append_event(con, st, kind="reserve", at=_now(), release=rel,
                               query_key=query_key, epsilon=epsilon, delta=delta, body=body,
                               accounting=charge_bytes, composed=new_bytes)
            st = verify_rows(st, [row])
            fp = fingerprint(con, st.seq)
        self._acc_state = (st.state_sha256, new)
        self._after_write(st, fp)
        return rel

    def _reserve_basic(self, epsilon: float, delta: float, accounting: bytes | None,
                       **fields: Any) -> int:
        total = self.budget
        with self._write("reservation") as con:
            st = self._sync_for_reservation(con)
            new_eps, new_dl = st.eps + Fraction(epsilon), st.delta + Fraction(delta)
            if new_eps > Fraction(total.epsilon) or new_dl > Fraction(total.delta):  # type: ignore[arg-type]
                left = Budget(_float_down(Fraction(total.epsilon) - st.eps),  # type: ignore[arg-type]
                              _float_down(Fraction(total.delta) - st.delta))
                raise BudgetExceededError(
                    f"release refused, nothing spent: it needs epsilon={epsilon:g}"
                    + (f", delta={delta:g}" if delta else "")
                    + " but only "
                    + (f"epsilon={left.epsilon:.6g}, delta={left.delta:.3g}" if delta
                       else str(left))
                    + f" of the total {total} remains"
                )
            rel = st.releases + 1
            body = {k: fields[k] for k in ("query", "canonical", "dataset", "mechanism",
                                           "parameters", "guarantee")}
            body["pid"] = os.getpid()
            row = append_event(con, st, kind="reserve", at=_now(), release=rel,
                               query_key=fields["query_key"], epsilon=epsilon, delta=delta,
                               body=body, accounting=accounting,
                               composed=basic_state(new_eps, new_dl, rel))
            st = verify_rows(st, [row])
            fp = fingerprint(con, st.seq)
        self._after_write(st, fp)
        return rel

    def reserve_all(self, requests: list[dict[str, Any]]) -> list[int]:
        """Charge several releases in ONE transaction, all or nothing (a workload):
        each request holds :meth:`reserve`'s keyword arguments; one reserve event per
        request is appended, in order, and the whole set is refused (BudgetExceededError,
        nothing written) unless the total after all of them fits -- summed under
        ``basic``, composed under ``pld``/``zcdp``.  Returns the release numbers.

        Parameters
        ----------
        requests : list of dict
            One dict of :meth:`reserve`'s keyword arguments per release.

        Returns
        -------
        list of int
            The release numbers, in order.

        Raises
        ------
        BudgetExceededError
            If the releases do not fit together (nothing is written).
        """
        if self.read_only:
            raise LedgerError(self.read_only_message())
        basic = self.accountant == "basic"
        reqs = []
        for r in requests:  # checks and charges before the lock: public work
            eps = check_finite("epsilon", r["epsilon"])
            if eps <= 0:
                raise ParameterError(f"epsilon must be > 0, got {eps!r}")
            dl = check_delta(r["delta"], allow_zero=True)
            acc = r.get("accounting")
            charge = (acc if acc is None or isinstance(acc, bytes) else acc.to_bytes()) \
                if basic else self._charge(acc, eps, dl)
            reqs.append((eps, dl, charge, r))
        total, acc_obj = self.budget, None if basic else self.accountant_object()
        with self._write("reservation") as con:
            st = self._sync_for_reservation(con)  # an anchored ledger: only with it
            if basic:
                new_eps = st.eps + sum((Fraction(e) for e, *_ in reqs), Fraction(0))
                new_dl = st.delta + sum((Fraction(d) for _, d, *_ in reqs), Fraction(0))
                if new_eps > Fraction(total.epsilon) or new_dl > Fraction(total.delta):  # type: ignore[arg-type]
                    raise BudgetExceededError(
                        f"workload refused, nothing spent: its {len(reqs)} releases need "
                        f"epsilon={_float_up(new_eps - st.eps):g}, delta="
                        f"{_float_up(new_dl - st.delta):g} but only "
                        f"epsilon={_float_down(Fraction(total.epsilon) - st.eps):.6g}, "  # type: ignore[arg-type]
                        f"delta={_float_down(Fraction(total.delta) - st.delta):.3g} of "
                        f"the total {total} remains")
            else:
                state = self._composed_state(con, st)
                states = []
                for *_, charge, _r in reqs:
                    state = acc_obj.compose(state, charge)
                    states.append(state)
                c = self._summary(state)
                if not self._fits(c):
                    raise BudgetExceededError(
                        f"workload refused, nothing spent: under the {self.accountant} "
                        f"accountant its {len(reqs)} releases would bring the composed "
                        f"guarantee to {_fmt_composed(c, total)}, over the total {total}")
            rids = []
            for i, (eps, dl, charge, r) in enumerate(reqs):
                rel = st.releases + 1
                body = {k: r[k] for k in ("query", "canonical", "dataset", "mechanism",
                                          "parameters", "guarantee")}
                body["pid"] = os.getpid()
                if basic:
                    st_eps = st.eps + Fraction(eps)
                    composed = basic_state(st_eps, st.delta + Fraction(dl), rel)
                    acc_bytes = charge
                else:
                    body.update(composed=self._summary(states[i]), accountant=self.accountant,
                                notes=list(charge.notes))
                    composed, acc_bytes = states[i].to_bytes(), charge.to_bytes()
                row = append_event(con, st, kind="reserve", at=_now(), release=rel,
                                   query_key=r["query_key"], epsilon=eps, delta=dl, body=body,
                                   accounting=acc_bytes, composed=composed)
                st = verify_rows(st, [row])
                rids.append(rel)
            fp = fingerprint(con, st.seq)
        if not basic and states:
            self._acc_state = (st.state_sha256, states[-1])
        self._after_write(st, fp)
        return rids

    def _close_release(self, what: str, rid: int, **event: Any) -> str:
        with self._write(what) as con:
            st = self._sync(con)
            if rid not in st.open:
                raise LedgerError(f"ledger row {rid} is not an open reservation")
            row = append_event(con, st, at=_now(), release=rid, **event)
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
            return None if row is None else _entry_v1(row)
        st = self._refresh()
        with self._read("lookup") as con:
            row = con.execute(
                "SELECT r.release FROM events r JOIN events c ON c.release = r.release AND "
                "c.kind = 'complete' WHERE r.kind = 'reserve' AND r.query_key = ? AND "
                "c.seq <= ? ORDER BY r.release DESC LIMIT 1", (query_key, st.seq)).fetchone()
            if row is None:
                return None
            found = _entries(con, self.path, st.seq, release=int(row[0]))
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
                entry = _entry_v1(r)
                e, d = e + Fraction(entry.epsilon), d + Fraction(entry.delta)
                be, bd = _float_up(e), min(1.0, _float_up(d))
                out.append(dataclasses.replace(entry, composed_epsilon=be, composed_delta=bd,
                                               basic_epsilon=be, basic_delta=bd))
            return out
        st = self._refresh()
        with self._read("reading") as con:
            return _entries(con, self.path, st.seq)

    def integrity(self) -> str:
        """SQLite's own ``PRAGMA integrity_check`` of the file.

        Returns
        -------
        str
            "ok", or SQLite's description of the damage.
        """
        with self._errors("integrity check"):
            return str(self._con.execute("PRAGMA integrity_check").fetchone()[0])

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


# ------------------------------------------------------------------ helpers
#: the totals a new ledger file accepts (besides 0): a total below a billionth -- or a
#: subnormal double -- is a typo, not a budget (no release could fit in it)
TOTAL_RANGE = {"epsilon": (1e-9, 1e9), "delta": (1e-100, 1.0), "rho": (1e-18, 1e18)}


def _check_new_total(budget: Budget) -> None:
    """A new ledger's total: each part 0 or inside :data:`TOTAL_RANGE` (delta below 1)."""
    parts = {"rho": budget.rho} if budget.rho is not None else \
        {"epsilon": budget.epsilon, "delta": budget.delta}
    for name, value in parts.items():
        lo, hi = TOTAL_RANGE[name]
        if value and not lo <= value <= hi:  # type: ignore[operator]
            raise ParameterError(f"budget {name} (the ledger's total) must be 0 or in "
                                 f"[{lo:g}, {hi:g}], got {value!r}")


def _budget_of(st: ChainState) -> Budget:
    assert st.header is not None
    h = st.header
    try:
        return Budget(h.epsilon, h.delta, h.rho, h.accountant)
    except ParameterError as exc:
        raise LedgerError(f"ledger {st.path!r} has an unusable total: {exc}") from exc


def _entries(con: sqlite3.Connection, path: str, upto: int,
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
        run_e, run_d = (Fraction(x) for x in _sums_before(con, release))
    for seq, kind, rel, at, key, eps, dl, body_text, digest, h, blob in rows:
        try:
            body = json.loads(body_text)
        except (TypeError, ValueError) as exc:
            raise ChainError(path, seq, "its body is not JSON") from exc
        if kind == "reserve":
            run_e, run_d = run_e + Fraction(eps), run_d + Fraction(dl)
            be, bd = _float_up(run_e), min(1.0, _float_up(run_d))
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


def _sums_before(con: sqlite3.Connection, release: int) -> tuple[float, float]:
    e, d = Fraction(0), Fraction(0)
    for x, y in con.execute("SELECT epsilon, delta FROM events WHERE kind = 'reserve' AND "
                            "release < ?", (release,)):
        e, d = e + Fraction(x), d + Fraction(y)
    return e, d  # type: ignore[return-value]


def _entry_v1(row: tuple[Any, ...]) -> Entry:
    try:
        params = json.loads(row[9])
        guarantee = json.loads(row[10])
    except (TypeError, ValueError) as exc:
        raise LedgerError(f"ledger row {row[0]} is corrupted: {exc}") from exc
    reason = "release_failed" if row[3] == "aborted" else None  # v1 stored exception text
    return Entry(*row[:9], params, guarantee, row[11], row[12], decode_answer(row[13]),
                 reason, None)


def _fmt_composed(c: dict[str, float], total: Budget) -> str:
    if total.rho is not None:
        return f"rho={c['rho']:.6g}"
    return f"epsilon={c['epsilon']:.6g} (at delta={total.delta:.3g})" + (
        f", delta={c['delta']:.3g} (at epsilon={total.epsilon:.6g})" if total.delta else "")


def _float_up(x: Fraction) -> float:
    """The smallest double >= x."""
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def _float_down(x: Fraction) -> float:
    """The largest double <= x (>= 0)."""
    if x <= 0:
        return 0.0
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, 0.0)
    return f


# ----------------------------------------------------------------- randomness rule
def is_os_keyed(rng: Any) -> bool:
    """Whether ``rng`` is dpnoise's own OS-keyed source: ``None`` (a fresh one per
    release) or an instance of exactly :class:`~dpnoise.randomness.CryptoRandom` whose
    methods are the class's own.  A subclass (which could seed its words), a keyed or
    seeded source, a numpy generator or anything else is not."""
    from ..randomness import CryptoRandom

    if rng is None:
        return True
    if type(rng) is not CryptoRandom:
        return False
    overridden = {"words", "fill", "ints", "_rekey", "_ready"} & set(getattr(rng, "__dict__", {}))
    return not overridden


def check_rng_for_ledger(rng: Any, durable: bool, where: str) -> None:
    """Seeded randomness never touches a real budget: with a ledger FILE only dpnoise's
    OS-keyed CSPRNG is accepted (:func:`is_os_keyed`: ``rng=None`` or exactly a
    :class:`~dpnoise.randomness.CryptoRandom`); a seed (``SeededRandom``), a key
    (``KeyedRandom``), a subclass, a numpy generator or any other source is refused.
    Without a ledger file (in memory) every source is allowed, for tests and
    reproductions."""
    if not durable or is_os_keyed(rng):
        return
    raise ParameterError(
        f"rng={rng!r} is not dpnoise's OS-keyed randomness and {where} is a real budget: "
        "seeded randomness is for tests and reproductions only and is never charged to a "
        "ledger file -- use it with an in-memory ledger (ledger=None / --ledger :memory:), "
        "or drop it (rng=None: the OS-keyed CSPRNG); subclasses, keyed and seeded sources "
        "and numpy generators are refused"
    )
