"""``dpnoise audit``: black-box audit of noise samplers for leaks above their claim.

    dpnoise audit numpy --epsilon 1            (also dpnoise, diffprivlib, opendp, ...)
"""

from __future__ import annotations

import argparse

from .command import subcommand
from .output import emit_json


def _audit_args(p: argparse.ArgumentParser) -> None:
    from ..audit_targets import TARGETS

    p.add_argument("target", nargs="+", choices=sorted(TARGETS), metavar="TARGET",
                   help="sampler(s) to audit: " + ", ".join(sorted(TARGETS)))
    p.add_argument("--epsilon", type=float, default=1.0, help="epsilon to configure (default 1)")
    p.add_argument("--sensitivity", type=float, default=1.0, help="sensitivity (default 1)")
    p.add_argument("--x", type=float, default=0.0, help="first input; the other is x + Δ")
    p.add_argument("--n", type=int, default=20_000, help="samples per input and phase")
    p.add_argument("--alpha", type=float, default=1e-3, help="1 - confidence (default 1e-3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the audited samplers")
    p.add_argument("--json", action="store_true", help="machine-readable output")


@subcommand("audit", "black-box audit of a noise sampler for leaks above its claim",
            _audit_args)
def cmd_audit(args: argparse.Namespace) -> int:
    from ..audit import audit
    from ..audit_targets import TargetUnavailableError, build_target

    results = {}
    status = 0
    for name in args.target:
        try:
            t = build_target(name, epsilon=args.epsilon, sensitivity=args.sensitivity,
                             seed=args.seed, x=args.x)
        except TargetUnavailableError as exc:
            results[name] = {"unavailable": str(exc)}
            if not args.json:
                print(f"== {name}: unavailable ({exc})\n")
            continue
        rep = audit(t.sampler, t.x, t.x_prime, claimed_epsilon=t.claimed_epsilon, n=args.n,
                    alpha=args.alpha, support=t.support)
        status |= 0 if rep.passed else 1
        results[name] = {"description": t.description, **rep.as_dict()}
        if not args.json:
            print(f"== {name}: {t.description}")
            print(rep.summary() + "\n")
    if args.json:
        emit_json(results)
    return status
