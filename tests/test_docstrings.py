"""Every public name has a numpydoc docstring: Parameters, Returns and Raises where they apply.

Public names: everything in ``dpnoise.__all__``, the custodian's ``Ledger`` and ``Release``,
the example-file helpers, and the public methods and properties of every public class
(those defined in dpnoise; an override without a docstring shows its base's, as in the API
reference built by Sphinx, so the base's docstring is the one checked).

The check parses each docstring with numpydoc's own parser:

* a one-line summary;
* a ``Parameters`` section naming exactly the signature's parameters (a class documents its
  constructor's), so a renamed or added parameter fails here;
* a ``Returns`` (or ``Yields``) section when the callable returns something (its return
  annotation is not ``None``; classes and properties return nothing to document);
* a ``Raises`` section on every constructor and function of ``dpnoise.__all__`` that takes
  parameters and can refuse them (its source raises or calls a ``check_``/``_supported``
  helper: bad input is refused with ``ParameterError`` before any noise is drawn).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

numpydoc = pytest.importorskip("numpydoc.docscrape")

import dpnoise  # noqa: E402
import dpnoise.examples  # noqa: E402
import dpnoise.session  # noqa: E402

EXTRA: dict[str, Any] = {
    "Ledger": dpnoise.session.Ledger,
    "Release": dpnoise.session.Release,
    "examples.path": dpnoise.examples.path,
    "examples.copy_to": dpnoise.examples.copy_to,
}


def _top_level() -> dict[str, Any]:
    names = [n for n in dpnoise.__all__ if n != "__version__"]
    return {n: getattr(dpnoise, n) for n in names} | EXTRA


def _members(cls: type) -> Iterator[tuple[str, Any]]:
    """Public methods and properties of ``cls`` that dpnoise defines (inherited ones too)."""
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if name in k.__dict__), None)
        if owner is None or not owner.__module__.startswith("dpnoise"):
            continue
        raw = owner.__dict__[name]
        if isinstance(raw, staticmethod | classmethod):
            raw = raw.__func__
        if inspect.isfunction(raw) or isinstance(raw, property):
            yield name, raw


def _is_record(cls: type) -> bool:
    """Exceptions and plain data records: their constructor refuses nothing to document."""
    return issubclass(cls, BaseException) or (
        dataclasses.is_dataclass(cls) and "__post_init__" not in cls.__dict__)


def _targets() -> list[tuple[str, Any, bool]]:
    """(name, object, Raises required) for every public name."""
    out = []
    for name, obj in _top_level().items():
        top = name in dpnoise.__all__
        if inspect.isclass(obj):
            out.append((name, obj, top and not _is_record(obj)))
            if not issubclass(obj, BaseException):
                out += [(f"{name}.{m}", raw, False) for m, raw in _members(obj)]
        else:
            out.append((name, obj, top))
    return out


def _doc(obj: Any) -> str:
    return inspect.getdoc(obj) or ""


def _signature_params(obj: Any) -> list[str]:
    target: Callable[..., Any] = obj
    if inspect.isclass(obj):
        if issubclass(obj, BaseException) or getattr(obj, "_is_protocol", False):
            return []  # a Protocol has no constructor of its own
        target = obj.__init__
        if target is object.__init__:
            return []
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    names = []
    for i, p in enumerate(sig.parameters.values()):
        if (i == 0 and p.name in ("self", "cls")) or p.name.startswith("_"):
            continue  # the instance, and private fields of a record
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        names.append(prefix + p.name)
    return names


def _can_raise(obj: Any) -> bool:
    """Whether the callable (a class: its constructor) raises or calls a checking helper."""
    parts = [obj.__dict__.get(n) for n in ("__init__", "__post_init__", "__new__")] \
        if inspect.isclass(obj) else [obj]
    try:
        source = "".join(inspect.getsource(p) for p in parts if inspect.isfunction(p))
    except (OSError, TypeError):
        return True
    return any(word in source for word in ("raise ", "check_", "_supported(", "as_domain("))


def _returns_something(obj: Any) -> bool:
    if inspect.isclass(obj) or isinstance(obj, property):
        return False
    ann = inspect.signature(obj).return_annotation
    return ann not in (None, "None", inspect.Signature.empty) or ann is inspect.Signature.empty


def _problems(name: str, obj: Any, needs_raises: bool) -> list[str]:
    text = _doc(obj)
    if not text.strip():
        return ["no docstring"]
    doc = numpydoc.NumpyDocString(text)
    problems = []
    if not doc["Summary"]:
        problems.append("no summary line")
    if isinstance(obj, property):
        return problems
    params = _signature_params(obj)
    documented = [p.name.split(":")[0].strip() for p in doc["Parameters"]]
    documented = [n for part in documented for n in (s.strip() for s in part.split(","))]
    missing = [p for p in params if p not in documented and p.lstrip("*") not in documented]
    unknown = [p for p in documented if p.lstrip("*") not in {q.lstrip("*") for q in params}]
    if missing:
        problems.append(f"Parameters does not document {missing}")
    if unknown:
        problems.append(f"Parameters documents {unknown}, which the signature does not have")
    if _returns_something(obj) and not (doc["Returns"] or doc["Yields"]):
        problems.append("no Returns section")
    if needs_raises and params and _can_raise(obj) and not doc["Raises"]:
        problems.append("no Raises section")
    return problems


TARGETS = _targets()


@pytest.mark.parametrize(("name", "obj", "needs_raises"), TARGETS, ids=[t[0] for t in TARGETS])
def test_public_name_has_numpydoc_sections(name: str, obj: Any, needs_raises: bool) -> None:
    problems = _problems(name, obj, needs_raises)
    assert not problems, f"{name}: " + "; ".join(problems)


def test_the_check_fails_on_a_bare_docstring() -> None:
    def f(x: float, *, y: int = 1) -> float:
        """Add."""
        if x != x:
            raise ValueError("x is NaN")
        return x + y

    def g(x: float) -> float:
        """Add one.

        Parameters
        ----------
        x : float
            A number.
        z : int
            Not a parameter.

        Returns
        -------
        float
            ``x + 1``.

        Raises
        ------
        ParameterError
            Never.
        """
        return x + 1

    assert _problems("f", f, True) == ["Parameters does not document ['x', 'y']",
                                       "no Returns section", "no Raises section"]
    assert _problems("g", g, True) == [
        "Parameters documents ['z'], which the signature does not have"]
