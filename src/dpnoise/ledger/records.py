"""What a ledger records of a release: its :class:`Entry`, its answer and its components.

Answers are stored as ``.npy`` bytes; a release's ``record`` holds the released noisy
components (and the keys of groups chosen by partition selection) so that error bars of
past releases can be recomputed -- released values only.
"""


from __future__ import annotations

import io
import time
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import LedgerError


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



def timestamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + f" ({time.time():.6f})"
