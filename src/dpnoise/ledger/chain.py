"""The ledger's hash chain: canonical serialisation of events and their verification.

A ledger (format version 2) is an append-only sequence of **events**, numbered
``seq = 1, 2, 3, ...`` without gaps.  Kinds:

``init``      (always event 1) the header: format, version, accountant, total
              ``epsilon``/``delta``/``rho``;
``migrate``   the source format of a converted ledger: event 2 of one converted from format 1
              (with its row count), or any later event of one converted from format 2;
``reserve``   a release's charge, written before any noise is drawn (query, data set,
              mechanism, parameters, guarantee, charge, optional accounting object, hash of
              the composed state after it);
``complete``  the answer of an open reservation (its SHA-256; the blob sits in ``blobs``)
              and its record of noisy components and released keys (in the body);
``abort``     an open reservation whose release failed, with a fixed reason code;
``anchor``    (format 3) the ledger is anchored from here on: the body names the anchor by a
              random ``anchor_id`` that the anchor file also records.  A ledger created
              with an anchor carries the id in its init event instead.  There is at most
              one anchoring; once the chain has it, reservations need the anchor file.

An event is never updated or deleted: completing a release appends an event.

**Hash definition.**  Each event row has the columns ``seq, kind, release, at, query_key,
epsilon, delta, body, accounting_sha256, answer_sha256, state_sha256, prev, hash``.  Its hash
is ::

    hash = SHA-256( b"dpnoise-ledger-event/2\\n" + canonical_json(F) )

where ``F`` is the object of every column except ``hash``, plus ``"ledger"``: the hash of
the init event ("" for the init event itself, which therefore binds the total and the
accountant into every later hash).  ``epsilon`` and ``delta`` enter as ``float.hex`` strings
(exact), absent values as ``null``, ``body`` (a JSON text of the event's other fields) as the
stored string, and the blobs by their SHA-256 hex digests.  ``prev`` is the previous event's
hash (64 zeros for event 1).  ``canonical_json`` is ``json.dumps(F, sort_keys=True,
separators=(",", ":"), ensure_ascii=True)``; every value of ``F`` is a string, an integer or
``null``, so the serialisation is unambiguous.

**What a verification checks** (:class:`ChainState.apply`, event by event): the numbering
has no gap, ``prev`` equals the previous hash, the hash recomputes, the kinds follow the
rules (init first; a ``reserve`` takes the next release number and a positive finite
charge; ``complete``/``abort`` close an open reservation exactly once; abort reasons are
codes from :data:`ABORT_REASONS`), the composed state hash of a reserve event is the
state the verifier computes, and the charges never exceed the total.  So an UPDATE of any
column, a DELETE of an event that is not the last, an inserted event and a reordering are
detected.  Truncating the last events, or restoring an older copy of the whole file, leaves
a valid (shorter) chain: only an anchor kept outside the file (:func:`read_anchor`) or a
live session that has seen a later head detects that.  This is tamper *evidence* against
accidental or naive edits, not a signature: someone who can write the file and recompute
SHA-256 can forge a consistent chain (the anchor still detects a rewrite of anything it
covered).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import LedgerError

GENESIS = "0" * 64
EVENT_DOMAIN = b"dpnoise-ledger-event/2\n"
KINDS = ("init", "migrate", "reserve", "complete", "abort", "anchor")
ACCOUNTANTS = ("basic", "pld", "zcdp")  # one format (2) for all three
ABORT_REASONS = frozenset({"noise_failed", "interrupted", "release_failed"})

# the event columns, in the order they are selected for verification
EVENT_COLUMNS = ("seq", "kind", "release", "at", "query_key", "epsilon", "delta", "body",
                 "accounting_sha256", "answer_sha256", "state_sha256", "prev", "hash")


def canonical_json(obj: Any) -> str:
    """Sorted-key, compact, ASCII JSON (the form that is hashed)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=True, default=json_default)


def json_default(o: Any) -> Any:
    """JSON for numpy scalars and arrays and tuples (as Python numbers and lists), else the
    object's ``str``: the ledger's canonical form, and the CLI's ``--json``."""
    import numpy as np

    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    return str(o)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hex(x: Any) -> str | None:
    return None if x is None else float(x).hex()


def event_hash(ledger_id: str, row: dict[str, Any]) -> str:
    """The hash of one event (``row`` maps EVENT_COLUMNS except ``hash`` to values)."""
    f = {k: row[k] for k in EVENT_COLUMNS if k != "hash"}
    f["epsilon"] = _hex(f["epsilon"])
    f["delta"] = _hex(f["delta"])
    f["ledger"] = ledger_id
    return sha256_hex(EVENT_DOMAIN + canonical_json(f).encode("ascii"))


def basic_state(eps: Fraction, delta: Fraction, releases: int) -> bytes:
    """The composed state under the ``basic`` accountant: exact sums of the charges."""
    return canonical_json({"accountant": "basic", "epsilon": str(eps), "delta": str(delta),
                           "releases": releases}).encode("ascii")


class ChainError(LedgerError):
    """A ledger's chain is broken at event ``seq`` (``None``: not tied to one event)."""

    def __init__(self, path: str, seq: int | None, what: str) -> None:
        self.seq = seq
        self.what = what
        where = f"event {seq}" if seq is not None else "the chain"
        super().__init__(f"ledger {path!r} fails verification at {where}: {what} -- it was "
                         "edited outside dpnoise or damaged; restore it from a backup")


@dataclass
class Header:
    """The init event's fields: the ledger's total and accountant."""

    accountant: str
    epsilon: float
    delta: float
    rho: float | None
    created_at: str


@dataclass
class ChainState:
    """What a verifier knows after the events ``1..seq``: it is extended one event at a time,
    so a live ledger re-verifies only the events appended since it last looked."""

    path: str
    seq: int = 0
    head: str = GENESIS
    ledger_id: str = ""
    header: Header | None = None
    eps: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    releases: int = 0  # highest release number
    open: set[int] = field(default_factory=set)
    closed: set[int] = field(default_factory=set)
    state_sha256: str | None = None  # composed state after the last reserve
    state_seq: int = 0
    composed: dict[str, Any] | None = None  # pld/zcdp: the composed guarantee after it
    anchor_id: str | None = None  # the anchoring event's (or init's) anchor id
    anchor_seq: int = 0  # the event that anchored the chain (1: created anchored)
    migrated_from: tuple[str, ...] = ()  # the formats named by migrate events

    def copy(self) -> ChainState:
        return ChainState(self.path, self.seq, self.head, self.ledger_id, self.header,
                          self.eps, self.delta, self.releases, set(self.open),
                          set(self.closed), self.state_sha256, self.state_seq,
                          self.composed, self.anchor_id, self.anchor_seq,
                          self.migrated_from)

    def _fail(self, seq: int | None, what: str) -> ChainError:
        return ChainError(self.path, seq, what)

    def apply(self, row: dict[str, Any]) -> None:
        """Verify one event against everything before it and extend the state."""
        seq = row["seq"]
        expected = self.seq + 1
        if seq != expected:
            what = (f"event {expected} is missing (the next event is {seq}): events were "
                    "deleted or reordered") if isinstance(seq, int) and seq > expected else \
                f"unexpected event number {seq!r} after event {self.seq}"
            raise self._fail(expected, what)
        if row["prev"] != self.head:
            raise self._fail(seq, "its link to the previous event does not match (events "
                                  "were deleted, inserted or reordered before it)")
        try:
            computed = event_hash(self.ledger_id, row)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self._fail(seq, f"a field has the wrong type ({exc})") from exc
        if row["hash"] != computed:
            raise self._fail(seq, f"its content does not match its hash (a field of this "
                                  f"{row['kind']!r} event was edited)")
        try:
            body = json.loads(row["body"])
        except (TypeError, ValueError) as exc:
            raise self._fail(seq, "its body is not JSON") from exc
        if not isinstance(body, dict):
            raise self._fail(seq, "its body is not a JSON object")
        kind = row["kind"]
        if kind not in KINDS:
            raise self._fail(seq, f"unknown event kind {kind!r}")
        if (kind == "init") != (seq == 1):
            raise self._fail(seq, "the init event must be event 1, and only event 1")
        getattr(self, f"_apply_{kind}")(seq, row, body)
        self.seq = seq
        self.head = row["hash"]
        if kind == "init":
            self.ledger_id = row["hash"]

    # -------------------------------------------------------- one rule per kind
    def _apply_init(self, seq: int, row: dict[str, Any], body: dict[str, Any]) -> None:
        try:
            acc = body["accountant"]
            eps = float.fromhex(body["epsilon_total"])
            dl = float.fromhex(body["delta_total"])
            rho = None if body.get("rho_total") is None else float.fromhex(body["rho_total"])
        except (KeyError, TypeError, ValueError) as exc:
            raise self._fail(seq, f"the header is incomplete ({exc})") from exc
        if acc not in ACCOUNTANTS:
            raise self._fail(seq, f"accountant {acc!r} is not supported by this dpnoise "
                                  f"(it knows {', '.join(ACCOUNTANTS)})")
        if rho is not None:
            if acc != "zcdp" or not (math.isfinite(rho) and rho >= 0):
                raise self._fail(seq, f"the total rho={rho!r} is invalid (zcdp only, >= 0)")
        elif not (math.isfinite(eps) and eps >= 0 and 0 <= dl < 1):
            raise self._fail(seq, f"the total (epsilon={eps!r}, delta={dl!r}) is invalid")
        self.header = Header(acc, eps, dl, rho, row["at"])
        if body.get("anchor_id") is not None:
            self._set_anchor(seq, body["anchor_id"])

    def _set_anchor(self, seq: int, anchor_id: Any) -> None:
        if self.anchor_id is not None:
            raise self._fail(seq, f"a second anchoring (the chain was anchored at event "
                                  f"{self.anchor_seq})")
        if not (isinstance(anchor_id, str) and len(anchor_id) == 32
                and all(c in "0123456789abcdef" for c in anchor_id)):
            raise self._fail(seq, f"anchor id {anchor_id!r} is not 32 hex digits")
        self.anchor_id, self.anchor_seq = anchor_id, seq

    def _apply_anchor(self, seq: int, row: dict[str, Any], body: dict[str, Any]) -> None:
        self._set_anchor(seq, body.get("anchor_id"))

    def _apply_migrate(self, seq: int, row: dict[str, Any], body: dict[str, Any]) -> None:
        source = str(body.get("from_version"))
        if source in self.migrated_from or source not in ("1", "2"):
            raise self._fail(seq, f"a migrate event from format {source!r} (again)")
        if source == "1" and seq != 2:
            raise self._fail(seq, "a migrate event from format 1 can only follow the init "
                                  "event")
        self.migrated_from += (source,)

    def _apply_reserve(self, seq: int, row: dict[str, Any], body: dict[str, Any]) -> None:
        assert self.header is not None
        rel, e, d = row["release"], row["epsilon"], row["delta"]
        if not isinstance(rel, int) or rel <= self.releases:
            raise self._fail(seq, f"release number {rel!r} does not follow "
                                  f"{self.releases} (reservations reordered or duplicated)")
        if not (isinstance(e, float) and isinstance(d, float) and math.isfinite(e)
                and e > 0 and 0 <= d <= 1):
            raise self._fail(seq, f"the charge (epsilon={e!r}, delta={d!r}) is invalid")
        if not isinstance(row["query_key"], str):
            raise self._fail(seq, "a reserve event without its query key")
        eps, dl = self.eps + Fraction(e), self.delta + Fraction(d)
        if self.header.accountant == "basic":
            if eps > Fraction(self.header.epsilon) or dl > Fraction(self.header.delta):
                raise self._fail(seq, f"the charges (epsilon={float(eps):.6g}, delta="
                                      f"{float(dl):.3g}) exceed the total")
            state = sha256_hex(basic_state(eps, dl, rel))
            if row["state_sha256"] != state:
                raise self._fail(seq, "its composed-state hash is not the composition of the "
                                      "charges before it")
        else:
            state = self._apply_composed(seq, row, body)
        self.eps, self.delta, self.releases = eps, dl, rel
        self.open.add(rel)
        self.state_sha256, self.state_seq = state, seq

    def _apply_composed(self, seq: int, row: dict[str, Any], body: dict[str, Any]) -> str:
        """pld / zcdp: the event names its charge (accounting blob) and the composed state
        after it, and records the composed guarantee, which must lie within the total.
        (That the state IS the composition of the charges is checked by recomposing them:
        ``dpnoise ledger verify``; at every reservation the cached state is hash-checked.)"""
        assert self.header is not None
        h = self.header
        if not isinstance(row["accounting_sha256"], str) or not isinstance(
                row["state_sha256"], str):
            raise self._fail(seq, f"a {h.accountant} reserve event without its accounting "
                                  "object or composed-state hash")
        comp = body.get("composed")
        try:
            ce, cd = float(comp["epsilon"]), float(comp["delta"])
            cr = float(comp["rho"])
        except (KeyError, TypeError, ValueError) as exc:
            raise self._fail(seq, f"its composed guarantee is missing ({exc})") from exc
        fits = cr <= h.rho if h.rho is not None else (ce <= h.epsilon or cd <= h.delta)
        if not fits or any(math.isnan(x) for x in (ce, cd, cr)):
            raise self._fail(seq, f"its composed guarantee (epsilon={ce:.6g}, delta={cd:.3g}, "
                                  f"rho={cr:.6g}) exceeds the total")
        self.composed = {"epsilon": ce, "delta": cd, "rho": cr}
        return str(row["state_sha256"])

    def _close(self, seq: int, row: dict[str, Any]) -> None:
        rel = row["release"]
        if rel not in self.open:
            what = "closes it a second time" if rel in self.closed else \
                "it was never reserved before this event"
            raise self._fail(seq, f"{row['kind']} of release {rel!r}, but {what}")
        self.open.discard(rel)
        self.closed.add(rel)

    def _apply_complete(self, seq: int, row: dict[str, Any], body: dict[str, Any]) -> None:
        if not isinstance(row["answer_sha256"], str):
            raise self._fail(seq, "a complete event without the hash of its answer")
        self._close(seq, row)

    def _apply_abort(self, seq: int, row: dict[str, Any], body: dict[str, Any]) -> None:
        if body.get("reason") not in ABORT_REASONS:
            raise self._fail(seq, f"abort reason {body.get('reason')!r} is not a code")
        self._close(seq, row)


def verify_rows(state: ChainState, rows: Iterable[tuple[Any, ...]]) -> ChainState:
    """Extend a copy of ``state`` with ``rows`` (tuples in EVENT_COLUMNS order)."""
    new = state.copy()
    for r in rows:
        new.apply(dict(zip(EVENT_COLUMNS, r, strict=True)))
    return new


# ----------------------------------------------------------------------- anchors
@dataclass(frozen=True)
class Anchor:
    """A head of the chain recorded outside the ledger file, and the random id of the
    anchoring event (``None`` in an anchor file written before format 3)."""

    ledger: str  # the init event's hash: which ledger
    seq: int
    head: str
    anchor_id: str | None = None


def new_anchor_id() -> str:
    """A random 128-bit anchor id (32 hex digits)."""
    import secrets

    return secrets.token_hex(16)


def read_anchor(path: str | Path) -> Anchor:
    try:
        obj = json.loads(Path(path).read_text())
        aid = obj.get("anchor")
        return Anchor(str(obj["ledger"]), int(obj["seq"]), str(obj["head"]),
                      None if aid is None else str(aid))
    except FileNotFoundError as exc:
        raise LedgerError(f"anchor file {str(path)!r} does not exist (write one with "
                          "`dpnoise ledger verify LEDGER --write-anchor FILE`)") from exc
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LedgerError(f"anchor file {str(path)!r} is not a dpnoise anchor: {exc}") from exc


def write_anchor(path: str | Path, anchor: Anchor, *, new: bool = False) -> None:
    """Atomically replace ``path`` (never moving it backwards on the same chain), then
    fsync its directory.  ``new``: the file must not exist (it is created, never
    overwritten: it could be another ledger's anchor).  The caller holds the ledger's
    write lock, so two writers cannot interleave."""
    p = Path(path)
    if new and (p.exists() or p.is_symlink()):
        raise LedgerError(f"anchor file {str(p)!r} already exists: it may be another "
                          "ledger's anchor and is never overwritten (choose a new file)")
    if not new:
        try:
            old = read_anchor(p) if p.exists() else None
        except LedgerError:
            old = None
        if old is not None and old.ledger == anchor.ledger and old.seq > anchor.seq:
            return  # a later head is recorded already
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{new_anchor_id()[:8]}.tmp")
    text = json.dumps({"format": "dpnoise-ledger-anchor", "ledger": anchor.ledger,
                       "anchor": anchor.anchor_id, "seq": anchor.seq, "head": anchor.head},
                      indent=1) + "\n"
    try:
        try:
            with open(tmp, "x") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if new:
                os.link(tmp, p)  # atomic, and fails if the path appeared meanwhile
            else:
                os.replace(tmp, p)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        fsync_dir(p.parent)
    except FileExistsError as exc:
        raise LedgerError(f"anchor file {str(p)!r} already exists: it is never "
                          "overwritten") from exc
    except OSError as exc:
        raise LedgerError(f"cannot write anchor file {str(p)!r}: {exc}") from exc


def fsync_dir(d: Path) -> None:
    """fsync a directory (a created, renamed or removed entry becomes durable)."""
    with contextlib.suppress(OSError):
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def check_anchor(path: str, anchor: Anchor, anchor_path: str | Path,
                 hash_at_anchor: str | None, state: ChainState) -> None:
    """Refuse a ledger whose chain is behind the anchor, is not the anchored chain, or
    does not carry the anchoring event the anchor names."""
    where = f"anchor {str(anchor_path)!r}"
    if anchor.ledger != state.ledger_id:
        raise LedgerError(f"ledger {path!r} is not the ledger recorded in {where} (another "
                          "ledger, or one re-created from scratch)")
    if state.anchor_id is not None and anchor.anchor_id != state.anchor_id:
        raise LedgerError(f"{where} is not this ledger's anchor: the ledger was anchored "
                          f"(event {state.anchor_seq}) with another anchor id")
    if state.seq < anchor.seq:
        raise LedgerError(
            f"ledger {path!r} ends at event {state.seq} but {where} records event "
            f"{anchor.seq}: its last events were removed or an older copy was restored"
        )
    if hash_at_anchor != anchor.head:
        raise LedgerError(f"ledger {path!r} has a different event {anchor.seq} than {where}: "
                          "it is on a different chain (history was rewritten)")
    if state.anchor_id is None and anchor.anchor_id is not None:
        raise LedgerError(f"ledger {path!r} has no anchoring event but {where} names one: a "
                          "copy older than the anchoring was restored")
