"""The import graph of memtui/core: no cycle, no UI, and no store reaching up into the modules that use it.

Every import counts, wherever it is written: at the top, inside a function (a lazy import is still a dependency)
and under `if TYPE_CHECKING:` (a type named from above is a design that reaches up, even if it costs nothing at
run time). The graph is read with `ast` from the source files, so nothing is imported to check it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "memtui" / "core"
PACKAGE = "memtui.core"

# The core is the bottom of the stack: the UI, the agent loop, the CLI and the integrations are built on it.
FORBIDDEN_IN_CORE = ("textual", "rich", "memtui.tui", "memtui.agent", "memtui.commands", "memtui.cli",
                     "memtui.integrations")
# The stores hold bytes, history and the queue; the write path, the policies and the readers are above them.
STORES = ("folder", "folder_commit", "folder_external", "folder_index", "gittree", "redis_store", "redis_history",
          "redis_legacy", "store", "gitcall")
ABOVE_STORES = ("memory", "queue_listing", "admission", "guard", "consolidate", "recurrence", "history", "layout",
                "tools", "search", "today", "context", "doctor", "planning", "update", "stores")


def imports_of(path: Path, package: str, modules: set[str]) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file at `path`, a module of `package`. A name imported from
    the package itself (`from memtui.core import guard`) is that module when `modules` has it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            named = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            out += [(name, node.lineno) for name in named] or [(base, node.lineno)]
    return out


def graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """Each module of the package (by short name) -> the package's modules it imports, with a line of each."""
    files = {p.stem: p for p in sorted(root.glob("*.py")) if p.stem != "__init__"}
    full = {f"{package}.{name}" for name in files}
    edges: dict[str, dict[str, int]] = {name: {} for name in files}
    for name, path in files.items():
        for target, line in imports_of(path, package, full):
            if target.startswith(package + ".") and target[len(package) + 1:] in files and target != f"{package}.{name}":
                edges[name].setdefault(target[len(package) + 1:], line)
    return edges


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
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

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def describe(component: list[str], edges: dict[str, dict[str, int]]) -> str:
    inside = set(component)
    return ", ".join(f"{a}→{b} ({a}.py:{line})" for a in component for b, line in sorted(edges[a].items())
                     if b in inside)


def test_the_checker_finds_a_cycle_through_a_function_level_and_a_type_checking_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg import b\n    return b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\n")
    (pkg / "c.py").write_text("from .a import f\n")
    (pkg / "d.py").write_text("import pkg.a\n")  # imports into the cycle, is not part of it
    edges = graph(pkg, "pkg")
    assert edges == {"a": {"b": 2}, "b": {"c": 3}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles(edges) == [["a", "b", "c"]]
    (pkg / "c.py").write_text("")
    assert cycles(graph(pkg, "pkg")) == []


def test_memtui_core_has_no_import_cycle() -> None:
    edges = graph(CORE, PACKAGE)
    assert len(edges) > 30, f"read only {len(edges)} modules from {CORE}"
    found = cycles(edges)
    assert not found, "import cycles in memtui/core:\n" + "\n".join(
        f"  {{{', '.join(c)}}}: {describe(c, edges)}" for c in found)


def test_memtui_core_imports_no_ui_agent_or_cli() -> None:
    full = {f"{PACKAGE}.{p.stem}" for p in CORE.glob("*.py")}
    bad = [f"{path.name}:{line} imports {target}" for path in sorted(CORE.glob("*.py"))
           for target, line in imports_of(path, PACKAGE, full)
           if any(target == f or target.startswith(f + ".") for f in FORBIDDEN_IN_CORE)]
    assert not bad, "memtui/core must stay below the UI, the agent and the CLI:\n  " + "\n  ".join(bad)


def reached(edges: dict[str, dict[str, int]], start: str) -> dict[str, list[str]]:
    """Every module `start` imports, directly or through others, with the chain of imports that gets there."""
    chains = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(edges[v]):
            if w not in chains:
                chains[w] = chains[v] + [w]
                todo.append(w)
    del chains[start]
    return chains


@pytest.mark.parametrize("store", STORES)
def test_a_store_imports_nothing_above_it(store: str) -> None:
    edges = graph(CORE, PACKAGE)
    assert store in edges, f"no {store}.py in {CORE}"
    up = [" → ".join(chain) for target, chain in sorted(reached(edges, store).items()) if target in ABOVE_STORES]
    assert not up, f"{store}.py reaches up into the modules above the stores:\n  " + "\n  ".join(up)
