"""The package's imports point down its layers, and no modules import each other in a circle.

The import graph is built from the source with :mod:`ast`: every ``import`` and ``from ...
import`` counts, also inside functions (a lazy import is still a dependency); only imports
under ``if TYPE_CHECKING:`` do not (they never run).  The layer order is the one
docs/architecture.md draws.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "dpnoise"

#: lowest first; a module may import its own layer and the layers below it.  "ground" holds
#: the top-level modules that every layer may use (errors, parameters, randomness, grids).
LAYERS: list[set[str]] = [
    {"errors", "params", "randomness", "keystream", "domain", "grid", "progress", "kernels",
     "parallel", "verify", "verify_models", "verify_continuous", "verify_renyi", "audit", "views",
     "profile"},
    {"exact"},
    {"laws"},
    {"mechanisms"},
    {"accounting"},
    {"ledger"},
    {"session", "compare", "audit_targets"},
    {"report"},
    {"cli", "reproduce", "demo", "examples", "__init__", "__main__"},
]

#: the checkers may import only the ground floor: they must never trust what they check
CHECKERS = {"verify", "verify_models", "verify_continuous", "verify_renyi", "audit"}


def _layer_of(unit: str) -> int:
    for i, names in enumerate(LAYERS):
        if unit in names:
            return i
    raise AssertionError(f"dpnoise.{unit} is in no layer: add it to LAYERS and to "
                         "docs/architecture.md")


def _module_name(path: Path, src: Path = SRC) -> str:
    rel = path.relative_to(src.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _is_module(name: str, src: Path) -> bool:
    base = src.parent / name.replace(".", "/")
    return base.is_dir() or base.with_suffix(".py").is_file()


def _imports(path: Path, src: Path = SRC) -> set[str]:
    """Every dpnoise module ``path`` imports (absolute names), TYPE_CHECKING blocks aside."""
    tree = ast.parse(path.read_text(), str(path))
    me = _module_name(path, src)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "dpnoise")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == "dpnoise":
                # ``from .. import kernels`` imports the module dpnoise.kernels; ``from
                # ..laws import Law`` imports a name of the package dpnoise.laws
                for a in node.names:
                    sub = f"{mod}.{a.name}"
                    found.add(sub if _is_module(sub, src) else mod)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in found if m != me}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(SRC.rglob("*.py"))}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


GRAPH = _graph()


def test_every_unit_has_a_layer() -> None:
    for module in GRAPH:
        _layer_of(_unit(module))


def test_no_import_points_up() -> None:
    upward = sorted(
        f"{a} -> {b}" for a, deps in GRAPH.items() for b in deps
        if b in GRAPH and _layer_of(_unit(b)) > _layer_of(_unit(a))
    )
    assert upward == []


def test_the_checkers_import_only_the_ground_floor() -> None:
    bad = sorted(f"{a} -> {b}" for a, deps in GRAPH.items() if _unit(a) in CHECKERS
                 for b in deps if b in GRAPH and _layer_of(_unit(b)) > 0)
    assert bad == []


def _circle() -> list[str] | None:
    """One import circle among the modules (a package's __init__ counts as a module), or
    None.  Imports of a package's own __init__ by its submodules are how Python loads a
    package and are not counted."""
    edges = {a: {b for b in deps if b in GRAPH and not a.startswith(b + ".")}
             for a, deps in GRAPH.items()}
    colour: dict[str, int] = {}
    stack: list[str] = []

    def dfs(v: str) -> list[str] | None:
        colour[v] = 1
        stack.append(v)
        for w in sorted(edges[v]):
            if colour.get(w) == 1:
                return [*stack[stack.index(w):], w]
            if w not in colour and (found := dfs(w)) is not None:
                return found
        colour[v] = 2
        stack.pop()
        return None

    for v in sorted(edges):
        if v not in colour and (found := dfs(v)) is not None:
            return found
    return None


def test_no_import_circle() -> None:
    assert _circle() is None


@pytest.mark.parametrize("source, expected", [
    ("from ..report import x\n", {"dpnoise.report"}),
    ("if TYPE_CHECKING:\n    from ..report import x\n", set()),
    ("def f():\n    from ..report import x\n", {"dpnoise.report"}),
])
def test_the_graph_counts_lazy_imports_and_skips_type_checking(
        tmp_path: Path, source: str, expected: set[str]) -> None:
    pkg = tmp_path / "dpnoise" / "laws"
    pkg.mkdir(parents=True)
    (tmp_path / "dpnoise" / "report").mkdir()
    (pkg / "m.py").write_text(source)
    assert _imports(pkg / "m.py", tmp_path / "dpnoise") == expected
