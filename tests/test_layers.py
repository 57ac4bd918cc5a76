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
    {"errors", "params", "randomness", "checked_source", "keystream", "domain", "grid",
     "progress", "kernels", "float_sum",
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


# ------------------------------------------------------------------ sizes
#: the longest source file, in lines: a file that grows past it has more than one job
MAX_FILE_LINES = 600
#: the longest function body (its docstring aside) without a reason in its docstring
MAX_FUNCTION_LINES = 80
#: how a docstring gives the reason for a longer function
LONG_REASON = "Long on purpose"


def _long_files(src: Path = SRC) -> list[str]:
    return sorted(f"{p.relative_to(src.parent)}: {n} lines"
                  for p in src.rglob("*.py")
                  if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES)


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    n = (node.end_lineno or node.lineno) - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
            isinstance(first.value.value, str):
        n -= (first.end_lineno or first.lineno) - first.lineno + 1
    return n


def _long_functions(src: Path = SRC) -> list[str]:
    found = []
    for p in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    _body_lines(node) > MAX_FUNCTION_LINES and \
                    LONG_REASON not in (ast.get_docstring(node) or ""):
                found.append(f"{p.relative_to(src.parent)}:{node.lineno} {node.name} "
                             f"({_body_lines(node)} lines)")
    return found


def test_no_source_file_is_longer_than_the_limit() -> None:
    assert _long_files() == [], f"split these by job (at most {MAX_FILE_LINES} lines)"


def test_no_long_function_without_a_reason() -> None:
    assert _long_functions() == [], (
        f"shorten these to {MAX_FUNCTION_LINES} lines or say why in the docstring "
        f"({LONG_REASON!r})")


def test_the_size_checks_catch_a_long_file_and_a_long_function(tmp_path: Path) -> None:
    pkg = tmp_path / "dpnoise"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES + 1))
    (pkg / "long.py").write_text(f'def f():\n    """Short."""\n{body}\n'
                                 + "\n" * MAX_FILE_LINES)
    (pkg / "ok.py").write_text(f'def g():\n    """{LONG_REASON}: one table."""\n{body}\n')
    assert _long_files(pkg) == [f"dpnoise/long.py: {MAX_FILE_LINES + MAX_FUNCTION_LINES + 3}"
                                " lines"]
    assert [s.split(" ")[1] for s in _long_functions(pkg)] == ["f"]
