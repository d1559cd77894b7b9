"""The layout of python/onesided (docs/design.md, "The Python side"): no
import cycle, imports that point one way between subpackages, each
subpackage saying what it holds and may import, no module over 600 lines,
and the public surface importable under its names.

Every import statement counts, at module level, inside functions and under
TYPE_CHECKING alike: a cycle is a cycle of dependence, deferred or not.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import onesided

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "onesided"

# What each subpackage may import besides itself (docs/design.md and each
# subpackage's __init__ docstring). The root's modules other than these
# three (__init__, __main__, _info, atomics_table) and bench sit on top.
ROOT = {"onesided._core", "onesided._errors", "onesided._types"}
MAY_IMPORT = {
    "boot": ROOT,
    "comm": ROOT,
    "args": ROOT | {"comm"},
    "window": ROOT | {"comm", "args"},
    "run": ROOT | {"comm"},
    "notebook": ROOT | {"comm", "run"},
}
TOP = {"onesided", "onesided.__main__", "onesided._info", "onesided.atomics_table"}


def modules(root: Path = PACKAGE) -> dict[str, Path | None]:
    """Every module of the package by dotted name; the compiled core (known
    by its stub) maps to None."""
    found: dict[str, Path | None] = {}
    for path in sorted(root.rglob("*.py*")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        if path.suffix == ".py":
            found[name] = path
        elif path.suffix == ".pyi" and not path.with_suffix(".py").exists():
            found[name] = None
    return found


def imports(mods: dict[str, Path | None]) -> dict[str, set[str]]:
    """For each module, the package's modules it imports (``from pkg import
    sub`` depends on the submodule)."""
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        if path is None:
            continue
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    anchor = ".".join(parts[: len(parts) - node.level + 1])
                    module = anchor + ("." + node.module if node.module else "")
                else:
                    module = node.module or ""
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in mods and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def subpackage(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in MAY_IMPORT) else None


def test_the_checker_finds_a_cycle() -> None:
    """The check below would see one: a two-module and a three-module cycle
    among others."""
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"e"}, "e": {"f"}, "f": {"d", "c"}}
    assert cycles(graph) == [["a", "b"], ["d", "e", "f"]]


def test_no_import_cycle() -> None:
    found = cycles(imports(modules()))
    assert not found, "import cycles in python/onesided: " + "; ".join(" <-> ".join(c) for c in found)


def test_imports_point_one_way() -> None:
    """A subpackage imports only itself, the root's _core, _errors and
    _types, and the subpackages below it."""
    wrong = []
    for name, targets in imports(modules()).items():
        own = subpackage(name)
        if name in TOP or own is None and name not in ROOT:
            continue  # the root's top modules and bench: on top of everything
        allowed = ROOT if own is None else MAY_IMPORT.get(own)
        if allowed is None:
            continue
        for target in sorted(targets):
            theirs = subpackage(target)
            if target in allowed or theirs == own or theirs in allowed:
                continue
            wrong.append(f"{name} -> {target}")
    assert not wrong, "imports against the layering of docs/design.md: " + ", ".join(wrong)


def test_every_subpackage_says_what_it_holds_and_may_import() -> None:
    for name in sorted(MAY_IMPORT):
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc and "Holds:" in doc and "May import:" in doc, f"onesided.{name}.__init__ docstring"
        for module in sorted((PACKAGE / name).glob("_*.py")):
            if module.name != "__init__.py":
                assert f"``{module.stem}``" in doc, f"onesided.{name}'s docstring does not name {module.stem}"


def test_no_module_over_600_lines() -> None:
    long = {name: len(path.read_text().splitlines()) for name, path in modules().items() if path is not None}
    assert not {name: n for name, n in long.items() if n > 600}


def test_the_public_surface_imports() -> None:
    """Every name __all__ states, and the public modules and entry points,
    import under their names."""
    missing = [name for name in onesided.__all__ if not hasattr(onesided, name)]
    assert not missing, f"onesided.__all__ names what the package lacks: {missing}"
    assert len(set(onesided.__all__)) == len(onesided.__all__)
    for name in ("COMM_WORLD", "Window", "WIN_NULL", "Layout", "Request", "Ranks", "launch", "Error", "SUM"):
        assert name in onesided.__all__
    for name in ("world", "OPS", "RMW_OPS", "RMW2_OPS", "load_ipython_extension", "__version__"):
        assert hasattr(onesided, name), name
    assert isinstance(onesided.WIN_NULL, onesided.Window) and isinstance(onesided.COMM_WORLD, onesided.Comm)


@pytest.mark.parametrize("module, attribute", [
    ("onesided.__main__", "main"),
    ("onesided.bench", "main"),
    ("onesided.bench.peers", "main"),
    ("onesided.bench.scale", "main"),
    ("onesided.atomics_table", "main"),
    ("pytest_onesided", "pytest_configure"),
])
def test_public_modules_import(module: str, attribute: str) -> None:
    assert callable(getattr(importlib.import_module(module), attribute))
