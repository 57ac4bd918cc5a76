"""``dpnoise ledger``: create, show, verify and migrate privacy-budget ledgers.

    dpnoise ledger init FILE --budget EPS[,DELTA] [--accountant basic|pld|zcdp] [--anchor A]
    dpnoise ledger init FILE --rho RHO                           a zCDP total (accountant zcdp)
    dpnoise ledger FILE [--anchor A | --no-anchor] [--json]      total, spent, releases, head
    dpnoise ledger verify FILE [--anchor A | --no-anchor] [--write-anchor A]
                                                                 check the whole hash chain
    dpnoise ledger migrate FILE [--anchor A]                     format 1 or 2 -> 3

An anchored ledger (``init --anchor``, or anchored by the first ``verify --write-anchor``)
is shown or verified with its anchor, or with ``--no-anchor``: then the output says
"rollback not checked" and the status is 1.
(A ledger file literally named ``init``, ``verify`` or ``migrate`` is written ``./init``.)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from .command import subcommand
from .output import emit_json

ACTIONS = ("init", "verify", "migrate")


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("words", nargs="+", metavar="[init|verify|migrate] FILE",
                   help="the ledger file, optionally after an action")
    p.add_argument("--budget", metavar="EPS[,DELTA]", default=None,
                   help="init: the ledger's total, fixed for ever")
    p.add_argument("--accountant", choices=("basic", "pld", "zcdp"), default=None,
                   help="init: how releases compose (default basic; pld: exact privacy-loss "
                        "distributions of the laws sampled; zcdp: rho adds up)")
    p.add_argument("--rho", type=float, default=None,
                   help="init: a zCDP total instead of --budget (accountant zcdp)")
    p.add_argument("--anchor", metavar="FILE", default=None,
                   help="anchor file outside the ledger: init creates it (never an existing "
                        "file); show/verify/migrate compare it")
    p.add_argument("--no-anchor", action="store_true",
                   help="show or verify an anchored ledger without its anchor: a restored "
                        "older copy is not detected (prints 'rollback not checked', status 1)")
    p.add_argument("--write-anchor", metavar="FILE", default=None,
                   help="verify: after a successful check, record the head in FILE")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--show", type=int, metavar="N", default=None,
                   help="print release N with its error bars (recomputed from its answer, "
                        "its recorded noisy components and public recipe) and its keys")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the error bars printed by --show (default 0.95)")


@subcommand("ledger", "create (init), show, verify or migrate a privacy-budget ledger", _args)
def cmd_ledger(args: argparse.Namespace) -> int:
    from ..errors import ParameterError

    words = list(args.words)
    if len(words) == 2 and words[0] in ACTIONS:
        action, path = words
    elif len(words) == 1 and words[0] not in ACTIONS:
        action, path = "show", words[0]
    else:
        raise ParameterError(
            "usage: dpnoise ledger [init|verify|migrate] FILE (got "
            f"{' '.join(words)!r}); a file named like an action is written ./NAME")
    if (args.budget is not None or args.accountant is not None or args.rho is not None) \
            and action != "init":
        raise ParameterError("--budget, --rho and --accountant are only for `dpnoise ledger "
                             "init FILE ...` (a ledger's total never changes)")
    if args.write_anchor is not None and action != "verify":
        raise ParameterError("--write-anchor is only for `dpnoise ledger verify`")
    if args.no_anchor and (args.anchor is not None or action in ("init", "migrate")
                           or args.write_anchor is not None):
        raise ParameterError("--no-anchor is for viewing or verifying without the anchor: "
                             "not with --anchor, --write-anchor, init or migrate")
    if args.confidence != 0.95 or args.show is not None:
        check_confidence(args.confidence)
    return {"init": _init, "show": _show, "verify": _verify, "migrate": _migrate}[action](
        path, args)


def check_confidence(level: float) -> float:
    """``--confidence`` in (0, 1), as ``release`` requires."""
    from ..errors import ParameterError

    if not 0 < level < 1:
        raise ParameterError(f"--confidence must be in (0, 1), got {level!r}")
    return level


NOT_CHECKED = ("rollback not checked: the ledger is anchored and was read without its anchor "
               "(--no-anchor), so a restored older copy would not be detected")


def anchor_required(led: Any, path: str, args: argparse.Namespace) -> bool:
    """For a read-only view: True when the ledger is anchored but was read without the
    anchor (allowed only with --no-anchor; then the view ends with status 1)."""
    from ..errors import LedgerError

    if not led.anchored or args.anchor is not None:
        return False
    if not args.no_anchor:
        raise LedgerError(f"ledger {path!r} is anchored: give its anchor (--anchor FILE), or "
                          "--no-anchor to read it without detecting a restored older copy")
    return True


def _init(path: str, args: argparse.Namespace) -> int:
    from ..errors import ParameterError
    from ..session import Budget, Ledger
    from .data_args import parse_budget

    if args.rho is not None:
        if args.budget is not None:
            raise ParameterError("give --budget EPS[,DELTA] or --rho RHO, not both")
        budget = Budget(rho=args.rho, accountant=args.accountant or "zcdp")
    else:
        budget = parse_budget(args.budget, args.accountant)
    if budget is None:
        raise ParameterError(f"dpnoise ledger init {path} needs --budget EPS[,DELTA] or --rho "
                             "RHO (the total, fixed for ever)")
    with Ledger(path, budget=budget, create=True, anchor=args.anchor) as led:
        info = {"ledger": path, "total": _total_json(budget),
                "accountant": led.accountant, "head": {"event": led.head_seq, "hash": led.head},
                "anchor": args.anchor}
    if args.json:
        emit_json(info)
        return 0
    print(f"created ledger {path}: total {budget}, accountant {led.accountant}")
    print(f"head:      event {led.head_seq} {led.head}")
    if args.anchor:
        print(f"anchor:    {args.anchor} (keep it outside the ledger's directory/backups)")
    return 0


def _total_json(b: Any) -> dict[str, Any]:
    if b.rho is not None:
        return {"rho": b.rho}
    return {"epsilon": b.epsilon, "delta": b.delta}


def _show(path: str, args: argparse.Namespace) -> int:
    import warnings

    from ..session import Ledger

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the read-only note is printed below instead
        led = Ledger(path, anchor=args.anchor)
    with led:
        unchecked = anchor_required(led, path, args)
        status = _show_ledger(led, path, args)
    if unchecked:
        print(NOT_CHECKED, file=sys.stderr if args.json else sys.stdout)
        return 1
    return status


def _show_ledger(led: Any, path: str, args: argparse.Namespace) -> int:
    from ..session.release import printable  # a query on one line

    rows = led.entries()
    spent, left, basic = led.spent(), led.remaining(), led.spent_basic()
    if getattr(args, "show", None) is not None:
        return _show_release(rows, args)
    if args.json:
        emit_json({
            "format": led.version, "read_only": led.read_only,
            "accountant": led.accountant,
            "total": _total_json(led.budget),
            "spent": _total_json(spent),
            "remaining": _total_json(left),
            "basic": {"spent": {"epsilon": basic.epsilon, "delta": basic.delta}},
            "head": {"event": led.head_seq, "hash": led.head},
            "anchored": led.anchored, "rollback_checked": led.rollback_checked,
            "releases": [_entry_json(e) for e in rows],
        })
        return 0
    print(f"ledger:    {path}")
    if led.read_only:
        print(f"format:    {led.version} -- {led.read_only_message()}")
    else:
        print(f"format:    {led.version} (hash-chained, verified on open), accountant "
              f"{led.accountant}")
        print(f"head:      event {led.head_seq} {led.head}")
    print(f"total:     {led.budget}")
    if led.accountant == "basic" or led.version == "1":
        print(f"spent:     {spent}  ({len(rows)} releases, basic sequential composition)")
        print(f"remaining: {left}\n")
    else:
        how = "rho adds up" if led.accountant == "zcdp" else \
            "composed privacy-loss distributions"
        at = "" if led.budget.rho is not None else \
            f"  (epsilon at delta={led.budget.delta:.3g}" + (
                f"; delta at epsilon={led.budget.epsilon:.6g})" if led.budget.delta
                else ")")
        print(f"spent:     {spent}{at}  ({len(rows)} releases, {led.accountant}: {how})")
        print(f"remaining: {left}")
        b_left = max(0.0, (led.budget.epsilon or 0.0) - basic.epsilon) \
            if led.budget.rho is None else None
        print(f"basic:     would have charged {basic}" + (
            f", leaving epsilon={b_left:.6g}" if b_left is not None else "") + "\n")
    for e in rows:
        ans = "" if e.answer is None else np.array2string(
            e.answer.ravel()[:6], precision=6, separator=", ")
        status = e.status if e.reason is None else f"{e.status} ({e.reason})"
        comp = "" if led.accountant == "basic" or e.composed_epsilon is None else (
            f" rho_total={e.composed_rho:<8.4g}" if led.budget.rho is not None else
            f" eps_total={e.composed_epsilon:<8.4g}")
        print(f"{e.id:>5d}  {e.created_at[:20]}  {status:8s}  eps={e.epsilon:<8.4g}{comp} "
              f"{printable(e.query)}  ->  {ans}")
    return 0


#: the error-bar columns of a release, by its interval kind
BAR_COLUMNS = {"level": ("level_low", "level_high"), "rank": ("rank_error", "level_slack")}


def _show_release(rows: list[Any], args: argparse.Namespace) -> int:
    """One past release with its error bars, from its answer, the noisy components
    recorded in its complete event and its public recipe only; cells labelled with their
    public keys (or, for groups chosen by partition selection, the released keys)."""
    from ..errors import ParameterError
    from ..session.answers import entry_cells, entry_interval
    from ..session.release import printable  # keys and the query: one line each

    match = [e for e in rows if e.id == args.show]
    if not match:
        raise ParameterError(f"the ledger has no release {args.show}")
    e = match[0]
    if e.answer is None:
        raise ParameterError(f"release {e.id} has no answer ({e.status})")
    ans = np.asarray(e.answer).ravel()
    group_by, keys = entry_cells(e)
    labels = _labels(group_by, keys, ans.size)
    params = e.parameters or {}
    kind = str((params.get("interval") or {}).get("kind") or "value")
    level = kind == "level"
    note = None
    try:
        low, high = entry_interval(e, args.confidence)
        lo, hi = np.asarray(low).ravel(), np.asarray(high).ravel()
    except ParameterError as exc:
        lo = hi = None
        note = str(exc)
    sel = (params.get("plans") or {}).get("selection")
    if args.json:
        emit_json({**_entry_json(e), "confidence": args.confidence,
                   "group_by": list(group_by), "interval_kind": kind,
                   "error_bars": note or "recomputed",
                   "rows": [[*lab, a.item(), *((b.item(), c.item()) if lo is not None else ())]
                            for lab, a, b, c in zip(labels, ans,
                                                    lo if lo is not None else ans,
                                                    hi if hi is not None else ans,
                                                    strict=True)]})
        return 0
    print(f"release {e.id}: {printable(e.query)}  (eps={e.epsilon:.4g}, {e.mechanism})")
    if lo is None:
        print(f"no error bars: {note}")
    elif kind == "rank":
        from ..session.rank_bar import rank_bar_note

        print(f"error bars at {args.confidence:g} confidence, from public parameters only; "
              + rank_bar_note())
    else:
        print(f"error bars at {args.confidence:g} confidence, from the released answer, its "
              "recorded noisy components and public parameters only (test inversion, union "
              "bound; conservative)")
        if level:
            print("level_low/level_high: the released value is an empirical p-quantile (data "
                  "snapped to the public grid) for p in [level_low, level_high]")

    if sel:
        print(f"groups selected by DP partition selection (threshold {sel['threshold']} "
              "persons): groups near the threshold appear only when their selection noise "
              "was high, so the released set is biased upward")
    heads = [*(group_by or ("cell",)), "answer",
             *(BAR_COLUMNS.get(kind, ("low", "high")) if lo is not None else ())]
    table = [[*(printable(str(x)) for x in lab or (str(i),)), _num(a),
              *((_num(b), _num(c)) if lo is not None else ())]
             for i, (lab, a, b, c) in enumerate(zip(
                 labels, ans, lo if lo is not None else ans, hi if hi is not None else ans,
                 strict=True))]
    widths = [max([len(h), *(len(r[k]) for r in table)]) for k, h in enumerate(heads)]
    print("  ".join(h.rjust(w) for h, w in zip(heads, widths, strict=True)))
    for r in table:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
    return 0


def _num(v: Any) -> str:
    return format(v.item() if hasattr(v, "item") else v, ".6g")


def _labels(group_by: tuple[str, ...], keys: tuple[Any, ...], n: int) -> list[tuple[str, ...]]:
    """The cell labels (C order over the keys); numbered cells when the keys are unknown."""
    if not group_by:
        return [()] * n
    shape = tuple(len(k) for k in keys)
    if len(shape) != len(group_by) or int(np.prod(shape, dtype=np.int64)) != n:
        return [(f"cell {i + 1}", *([""] * (len(group_by) - 1))) for i in range(n)]
    return [tuple(str(k[j]) for k, j in zip(keys, np.unravel_index(i, shape), strict=True))
            for i in range(n)]


def _entry_json(e: Any) -> dict[str, Any]:
    return {"id": e.id, "time": e.created_at, "status": e.status, "reason": e.reason,
            "query": e.query, "mechanism": e.mechanism, "epsilon": e.epsilon,
            "delta": e.delta, "head": e.head,
            "composed": {"epsilon": e.composed_epsilon, "delta": e.composed_delta,
                         "rho": e.composed_rho},
            "basic": {"epsilon": e.basic_epsilon, "delta": e.basic_delta},
            "answer": None if e.answer is None else e.answer.ravel()[:20].tolist()}


def _verify(path: str, args: argparse.Namespace) -> int:
    from ..errors import LedgerError
    from ..ledger import verify_ledger

    rep = verify_ledger(path, anchor=args.anchor)
    unchecked = bool(rep.anchored_at) and args.anchor is None
    if unchecked and args.write_anchor:
        raise LedgerError(f"ledger {path!r} is anchored (event {rep.anchored_at}): its anchor "
                          "is copied only after checking it (--anchor A --write-anchor B)")
    if unchecked and not args.no_anchor:
        raise LedgerError(f"ledger {path!r} is anchored: give its anchor (--anchor FILE), or "
                          "--no-anchor to verify it without detecting a restored older copy")
    written = _write_anchor(path, rep, args) if rep.ok and args.write_anchor else None
    tables = _table_charges(path, rep, args) if rep.ok and not unchecked else None
    if args.json:
        emit_json({"ledger": rep.path, "ok": rep.ok, "format": rep.version,
                   "events": rep.events, "releases": rep.releases, "head": rep.head,
                   "chain": rep.chain_id, "problem": rep.problem, "event": rep.seq,
                   "anchor": rep.anchor, "anchored": bool(rep.anchored_at or written),
                   "rollback_checked": rep.ok and rep.anchor is not None,
                   "anchor_written": None if written is None else
                   {"file": args.write_anchor, "event": written[0], "hash": written[1]},
                   **({} if tables is None else {"table_charges": {
                       "releases": list(tables[0].releases), "draws": tables[0].draws,
                       "total_variation": tables[0].tv, "spent_with_allowance": {
                           "epsilon": tables[1][0], "delta": tables[1][1]}}})})
        if unchecked:
            print(NOT_CHECKED, file=sys.stderr)
        return 0 if rep.ok and not unchecked else 1
    print(f"ledger:   {path}")
    if rep.version:
        print(f"format:   {rep.version}")
    if rep.ok:
        print(f"events:   {rep.events} ({rep.releases} releases), every hash recomputed, "
              "every link and blob checked")
        print(f"head:     event {rep.events} {rep.head}")
        if rep.anchor:
            print(f"anchor:   {rep.anchor}: the chain reaches the anchored head")
        if written is not None:
            print(f"anchor written: {args.write_anchor} (head event {written[0]} "
                  f"{written[1]}); releases from this ledger now need it")
        if unchecked:
            print(NOT_CHECKED)
            return 1
        if tables is not None:
            print(f"FLAGGED:  {tables[0].message()}")
            print(f"spent with the allowance: epsilon={tables[1][0]:.6g}, "
                  f"delta={tables[1][1]:.3g}")
        print("result:   OK")
        return 0
    where = f" at event {rep.seq}" if rep.seq is not None else ""
    print(f"verified: events 1..{rep.events} are intact" if rep.events else
          "verified: nothing")
    print(f"result:   BROKEN{where}: {rep.problem}")
    if unchecked:
        print(NOT_CHECKED)
    return 1


def _write_anchor(path: str, rep: Any, args: argparse.Namespace) -> tuple[int, str]:
    """Anchor the verified ledger in ``args.write_anchor`` (the first time: an anchoring
    event is appended) or copy its checked anchor there; returns the head recorded."""
    from ..ledger import Ledger

    with Ledger(path, anchor=args.anchor if rep.anchored_at else None) as led:
        led.write_anchor(args.write_anchor)
        return led.head_seq, str(led.head)


def _table_charges(path: str, rep: Any, args: argparse.Namespace) -> Any:
    """(TableCharges, spent with the allowance) of a zCDP ledger charged for discrete
    Gaussian alias tables, else None (:mod:`dpnoise.session.table_charges`)."""
    from ..ledger import Ledger
    from ..session.table_charges import shown_spent, table_charges

    with Ledger(path, anchor=args.anchor if rep.anchored_at else None) as led:
        found = table_charges(led)
        return None if found is None else (found, shown_spent(led, found))


def _migrate(path: str, args: argparse.Namespace) -> int:
    from ..ledger import Ledger, migrate

    backup = migrate(path)
    with Ledger(path) as led:
        if args.anchor is not None:  # a new anchor file, or this ledger's older anchor
            led.write_anchor(args.anchor)
        n = len(led.entries())
        if args.json:
            emit_json({"ledger": path, "backup": None if backup is None else str(backup),
                       "releases": n, "head": {"event": led.head_seq, "hash": led.head},
                       "anchor": args.anchor})
            return 0
        print(f"migrated ledger {path} to format {led.version}: {n} releases"
              + (" chained in order" if backup is not None else
                 ", rollback journal (every commit in the main file)"))
        if backup is not None:
            print(f"backup:    {backup} (format 1, untouched)")
        print(f"head:      event {led.head_seq} {led.head}")
        if args.anchor is not None:
            print(f"anchor:    {args.anchor} (releases from this ledger now need it)")
    return 0
