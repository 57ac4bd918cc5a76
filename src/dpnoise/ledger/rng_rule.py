"""The ledger's randomness rule: with a ledger file, only dpnoise's OS-keyed CSPRNG."""


from __future__ import annotations

from typing import Any

from ..errors import ParameterError


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
