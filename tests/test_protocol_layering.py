"""Outside ``dpnoise/mechanisms/`` no code knows a mechanism by its class.

The accountants, the planner and the error-bar code read a mechanism's privacy profile
(``privacy_profile()``); a new mechanism joins them by implementing it.  This test parses
every module of the package (outside ``mechanisms/``) and fails on

* ``isinstance`` / ``issubclass`` against a concrete mechanism class, and ``type(x) is C``
  / ``type(x) == C`` with such a class;
* a string constant spelling a concrete mechanism class name (a name table such as
  ``("Gaussian", "TruncatedLaplace")`` or ``name == "Laplace"``), except in the package's
  lazy export table (``dpnoise/__init__.py``);
* a comparison involving ``.__name__`` (dispatch on class names), except where listed in
  ``NAME_COMPARISONS`` with the reason.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import dpnoise
import dpnoise.mechanisms as mechanisms_pkg
from dpnoise.mechanisms.base import Mechanism

ROOT = Path(dpnoise.__file__).parent
EXPORT_TABLE = "__init__.py"
#: (module path relative to the package, reason) of allowed ``__name__`` comparisons
NAME_COMPARISONS = {
    "session/source.py": "pandas' missing-value types (NAType, NaTType), not a mechanism",
}


def _concrete_mechanism_names() -> set[str]:
    names = set()
    for info in pkgutil.iter_modules(mechanisms_pkg.__path__):
        module = importlib.import_module(f"dpnoise.mechanisms.{info.name}")
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, Mechanism) and \
                    obj.__module__ == module.__name__ and not inspect.isabstract(obj):
                names.add(obj.__name__)
    return names


def _class_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _violations(rel: str, source: str, names: set[str]) -> list[str]:
    """The forbidden forms in the module ``rel`` (path relative to the package)."""
    tree = ast.parse(source)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                    ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        where = f"{rel}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            target = node.args[1]
            for el in target.elts if isinstance(target, ast.Tuple) else [target]:
                if _class_name(el) in names:
                    out.append(f"{where}: {node.func.id}(..., {_class_name(el)})")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "__name__" for s in sides) \
                    and rel not in NAME_COMPARISONS:
                out.append(f"{where}: comparison on __name__")
            is_type = any(isinstance(s, ast.Call) and isinstance(s.func, ast.Name)
                          and s.func.id == "type" for s in sides)
            for s in sides:
                if is_type and _class_name(s) in names:
                    out.append(f"{where}: type(...) compared with {_class_name(s)}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value in names and rel != EXPORT_TABLE and id(node) not in docstrings:
            out.append(f"{where}: the class name {node.value!r} as a string")
    return out


def test_the_scan_knows_the_concrete_mechanisms() -> None:
    names = _concrete_mechanism_names()
    assert {"Laplace", "DiscreteGaussian", "Staircase", "CountNoise", "RangeLaplace"} <= names
    assert "Mechanism" not in names  # abstract bases are not dispatch targets


def test_the_scan_catches_dispatch_on_names() -> None:
    """The checker itself fails on each forbidden form (so the next test can fail)."""
    names = _concrete_mechanism_names()
    cases = ['if type(m).__name__ == "Laplace":\n    pass\n',
             'REFUSED = ("Gaussian", "CountNoise")\n',
             'from dpnoise import Laplace\nok = isinstance(m, (int, Laplace))\n',
             'from dpnoise import Staircase\nok = type(m) is Staircase\n']
    for src in cases:
        assert _violations("accounting/probe.py", src, names), src
    assert not _violations("accounting/probe.py", '"""Laplace"""\nx = m.privacy_profile()\n',
                           names)


def test_no_code_outside_mechanisms_knows_a_mechanism_by_its_class() -> None:
    names = _concrete_mechanism_names()
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if "mechanisms" in path.relative_to(ROOT).parts:
            continue
        found += _violations(path.relative_to(ROOT).as_posix(),
                             path.read_text(encoding="utf-8"), names)
    assert not found, "dispatch on mechanism classes outside mechanisms/:\n" + "\n".join(found)
