"""The import graph of memtui/: no cycle anywhere; in the core no UI, and no store reaching up into the modules
that use it. And no class past ~800 lines.

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


# The whole package: every module under memtui/ by its dotted name, subpackages included, so a circle between the
# app and its commands, or between two folders, is found wherever it runs.
MEMTUI = CORE.parent
# Each folder of memtui/ (and the CLI) that must hold no circle of its own nor share one with another.
PARTS = ("memtui.core", "memtui.tui", "memtui.commands", "memtui.agent", "memtui.integrations", "memtui.cli")
MAX_CLASS_LINES = 800


def module_name(path: Path, root: Path) -> str:
    """`memtui/tui/app.py` → `memtui.tui.app`; a package's `__init__.py` is the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_graph(root: Path) -> dict[str, dict[str, int]]:
    """Each module under `root` (a package folder, read recursively) -> the modules under it that it imports, by
    dotted name, with a line of each. An import of a name from a package (`from memtui.tui import layout`) is the
    module when there is one, and of a name from a module (`from memtui.core.writing.memory import Memory`) that
    module."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    edges: dict[str, dict[str, int]] = {name: {} for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for target, line in imports_of(path, package, set(files)):
            while target and target not in files:
                target = target.rpartition(".")[0]  # `memtui.core.writing.memory.Memory` → `memtui.core.writing.memory`
            if target and target != name:
                edges[name].setdefault(target, line)
    return edges


def test_the_package_graph_reads_subpackages_and_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "top.py").write_text("from pkg.sub.low import f\n")
    (pkg / "sub" / "low.py").write_text("def f():\n    from ..top import g\n")
    (pkg / "sub" / "other.py").write_text("from . import low\nfrom .low import f\n")
    edges = package_graph(pkg)
    assert edges["pkg.top"] == {"pkg.sub.low": 1}
    assert edges["pkg.sub.low"] == {"pkg.top": 2}
    assert edges["pkg.sub.other"] == {"pkg.sub.low": 1}
    assert cycles(edges) == [["pkg.sub.low", "pkg.top"]]


def describe_dotted(component: list[str], edges: dict[str, dict[str, int]]) -> str:
    inside = set(component)
    return ", ".join(f"{a}→{b} ({a.replace('.', '/')}.py:{line})" for a in component
                     for b, line in sorted(edges[a].items()) if b in inside)


def test_memtui_has_no_import_cycle_anywhere() -> None:
    """No circle in any of memtui's folders, the UI and the commands included, nor between them."""
    edges = package_graph(MEMTUI)
    for part in PARTS:
        assert any(m == part or m.startswith(part + ".") for m in edges), f"read no module of {part}"
    found = cycles(edges)
    assert not found, "import cycles in memtui/:\n" + "\n".join(
        f"  {{{', '.join(c)}}}: {describe_dotted(c, edges)}" for c in found)


def class_lengths(root: Path) -> dict[str, int]:
    """`path:Class` → its lines (decorators to last line), for every class under `root`, nested ones too."""
    out: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out[f"{path.relative_to(root.parent).as_posix()}:{node.name}"] = node.end_lineno - start + 1
    return out


def test_no_class_in_memtui_passes_800_lines() -> None:
    """A class past ~800 lines does more than one job: the app keeps the wiring, the rest is its widgets'."""
    lengths = class_lengths(MEMTUI)
    assert "memtui/tui/app.py:MemtuiApp" in lengths
    over = {name: n for name, n in lengths.items() if n > MAX_CLASS_LINES}
    assert not over, f"classes over {MAX_CLASS_LINES} lines (split them by the jobs they do):\n  " + "\n  ".join(
        f"{name}: {n}" for name, n in sorted(over.items()))


def test_class_lengths_counts_decorators_and_nested_classes(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("import dataclasses\n\n@dataclasses.dataclass\nclass A:\n    x: int\n\n"
                              "    class B:\n        pass\n")
    assert class_lengths(pkg) == {"pkg/a.py:A": 6, "pkg/a.py:B": 2}
