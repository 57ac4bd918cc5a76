"""The durable, hash-chained, anchored privacy-budget ledger (one SQLite file).

    ledger    the Ledger: budget, reservations, completions, replay, anchors, views
    chain     the hash chain: events, their canonical form, anchors
    store     the SQLite file: tables, atomic creation, reading format 1
    verify    re-hashing and re-composing a whole ledger (``dpnoise ledger verify``)
    migrate   formats 1 and 2 to the current one (``dpnoise ledger migrate``)

It sits above the accountants (a reservation composes the release's charge) and below the
custodian session, the CLI and the report, which all use it on their own.
"""

from .ledger import (
    RECORD_MAX_CELLS,
    Budget,
    Entry,
    Ledger,
    VerifyReport,
    check_rng_for_ledger,
    decode_answer,
    decode_record,
    encode_answer,
    encode_record,
    migrate,
    verify_ledger,
)

__all__ = ["RECORD_MAX_CELLS", "Budget", "Entry", "Ledger", "VerifyReport",
           "check_rng_for_ledger", "decode_answer", "decode_record", "encode_answer",
           "encode_record", "migrate", "verify_ledger"]
