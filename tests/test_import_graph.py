"""The import graph of memtui: no cycle anywhere in memtui/, and in memtui/core none by module or by package; its
packages in layers, the stores below the write path; no UI in the core; memtui's own packages importing one way. And
no class past ~800 lines.

Every import counts, wherever it is written: at the top, inside a function (a lazy import is still a dependency)
and under `if TYPE_CHECKING:` (a type named from above is a design that reaches up, even if it costs nothing at
run time). The graph is read with `ast` from the source files, so nothing is imported to check it.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

MEMTUI = Path(__file__).resolve().parents[1] / "memtui"
CORE = MEMTUI / "core"
PACKAGE = "memtui.core"

# The core is the bottom of the stack: the UI, the agent loop, the CLI and the integrations are built on it.
FORBIDDEN_IN_CORE = ("textual", "rich", "memtui.tui", "memtui.agent", "memtui.commands", "memtui.cli",
                     "memtui.integrations")
# memtui/core's packages from the ground up, in the order data takes: a package imports only packages on the layers
# below its own (docs/internals.md says what each holds). The stores are below the write path; what reads memory
# back (recall) and what tells its past (timeline) are above it, beside each other; keeping a memory sound, and the
# ways callers reach it, are on top.
LAYERS = (("basics",), ("grammar",), ("storage",), ("writing",), ("recall", "timeline"), ("hygiene", "access"))
LAYER = {package: n for n, layer in enumerate(LAYERS) for package in layer}


def imports_of(path: Path, package: str, modules: set[str]) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file at `path`, a module of `package`. A name imported from
    a package (`from memtui.core.writing import guard`) is that module when `modules` has it."""
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


def modules(root: Path) -> dict[str, Path]:
    """Each module under `root`, by its dotted name below it (`folder`, `storage.folder`); `__init__` files hold only
    a package's docstring and are left out."""
    return {".".join(p.relative_to(root).with_suffix("").parts): p for p in sorted(root.rglob("*.py"))
            if p.stem != "__init__" and "__pycache__" not in p.parts}


def graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """Each module under `root`, the folder of `package` (by its dotted name below it) -> the modules under `root`
    it imports, with a line of each."""
    files = modules(root)
    full = {f"{package}.{name}" for name in files}
    edges: dict[str, dict[str, int]] = {name: {} for name in files}
    for name, path in files.items():
        own = ".".join([package, *name.split(".")[:-1]])  # what its relative imports start from
        for target, line in imports_of(path, own, full):
            short = target[len(package) + 1:]
            if target.startswith(package + ".") and short in files and short != name:
                edges[name].setdefault(short, line)
    return edges


@cache
def core_graph() -> dict[str, dict[str, int]]:
    """memtui/core's graph, read once for the tests that only look at it."""
    return graph(CORE, PACKAGE)


def by_package(edges: dict[str, dict[str, int]], unit) -> dict[str, dict[str, str]]:
    """The module graph folded into `unit(module)`'s: each unit -> the units it imports, with one import that ties
    them (`module:line imports module`)."""
    out: dict[str, dict[str, str]] = {unit(m): {} for m in edges}
    for a, targets in edges.items():
        for b, line in sorted(targets.items()):
            if unit(a) != unit(b):
                out[unit(a)].setdefault(unit(b), f"{a}:{line} imports {b}")
    return out


def core_package(module: str) -> str:
    """The package of memtui/core a module (`storage.folder`) is in; "" for one at the top of memtui/core."""
    return module.split(".")[0] if "." in module else ""


def memtui_unit(module: str) -> str:
    """memtui's own packages as one unit each (`tui`, `commands`, ...), the core's by package (`core.storage`)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "core" and len(parts) > 2 else parts[0]


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
    return ", ".join(f"{a}→{b} ({a.replace('.', '/')}.py:{line})" for a in component
                     for b, line in sorted(edges[a].items()) if b in inside)


def describe_packages(component: list[str], ties: dict[str, dict[str, str]]) -> str:
    inside = set(component)
    return ", ".join(f"{a}→{b} ({tie})" for a in component for b, tie in sorted(ties[a].items()) if b in inside)


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


def test_the_checker_reads_subpackages_and_finds_a_cycle_between_packages_that_no_module_closes(
        tmp_path: Path) -> None:
    """low.a imports high.b and high.c imports low.d: no module is in a cycle, but the two packages are, which is
    what a reader of the folders sees. A relative import in a subpackage resolves from that subpackage."""
    pkg = tmp_path / "pkg"
    for sub in ("low", "high"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text('"""A package."""\n')
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("def f():\n    from pkg.high import b\n")
    (pkg / "low" / "d.py").write_text("")
    (pkg / "high" / "b.py").write_text("from . import c\n")
    (pkg / "high" / "c.py").write_text("from ..low.d import X\n")
    edges = graph(pkg, "pkg")
    assert edges == {"high.b": {"high.c": 1}, "high.c": {"low.d": 1}, "low.a": {"high.b": 2}, "low.d": {}}
    assert cycles(edges) == []
    ties = by_package(edges, core_package)
    assert ties == {"high": {"low": "high.c:1 imports low.d"}, "low": {"high": "low.a:2 imports high.b"}}
    assert cycles(ties) == [["high", "low"]]
    (pkg / "high" / "c.py").write_text("")
    assert cycles(by_package(graph(pkg, "pkg"), core_package)) == []


def test_memtui_core_has_no_import_cycle() -> None:
    edges = core_graph()
    assert len(edges) > 30, f"read only {len(edges)} modules from {CORE}"
    found = cycles(edges)
    assert not found, "import cycles in memtui/core:\n" + "\n".join(
        f"  {{{', '.join(c)}}}: {describe(c, edges)}" for c in found)


def test_every_core_module_is_in_a_package_of_a_layer() -> None:
    """A module at the top of memtui/core, or in a package no layer names, shows nothing of where it stands."""
    edges = core_graph()
    loose = sorted(m for m in edges if core_package(m) not in LAYER)
    assert not loose, ("memtui/core modules outside the layered packages (move each into the package of what it "
                       f"does, or name a new package in LAYERS and docs/internals.md): {', '.join(loose)}")
    assert {core_package(m) for m in edges} == set(LAYER), "a package in LAYERS that memtui/core does not have"


def test_memtui_core_packages_have_no_import_cycle() -> None:
    ties = by_package(core_graph(), core_package)
    found = cycles(ties)
    assert not found, "memtui/core's packages import each other in a circle:\n" + "\n".join(
        f"  {{{', '.join(c)}}}: {describe_packages(c, ties)}" for c in found)


def test_memtui_core_packages_import_only_the_layers_below() -> None:
    ties = by_package(core_graph(), core_package)
    up = [f"{a} imports {b} ({tie}): {a} is on layer {LAYER[a]}, {b} on {LAYER[b]}"
          for a, targets in sorted(ties.items()) for b, tie in sorted(targets.items())
          if a in LAYER and b in LAYER and LAYER[b] >= LAYER[a]]
    assert not up, ("memtui/core packages reaching up or across (move the code to the layer that owns it, or pass "
                    "what it needs down as an argument):\n  " + "\n  ".join(up))


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


STORES = sorted(m for m in core_graph() if core_package(m) == "storage")


@pytest.mark.parametrize("store", STORES)
def test_a_store_reaches_nothing_of_the_write_path_or_above(store: str) -> None:
    """The stores hold bytes, history and the queue; the write path, the policies and the readers are above them:
    no store module gets, through any chain of imports, to a module outside basics, grammar and storage."""
    edges = core_graph()
    up = [" → ".join(chain) for target, chain in sorted(reached(edges, store).items())
          if LAYER.get(core_package(target), -1) > LAYER["storage"]]
    assert not up, f"{store} reaches up into the modules above the stores:\n  " + "\n  ".join(up)


def test_the_stores_are_the_ones_memtui_writes_through() -> None:
    """The list the store test runs over is read from the folder: it must hold the stores, or that test proves
    nothing."""
    assert {"storage.store", "storage.folder", "storage.redis_store", "storage.gitcall"} <= set(STORES)


def test_memtui_core_imports_no_ui_agent_or_cli() -> None:
    files = modules(CORE)
    full = {f"{PACKAGE}.{name}" for name in files}
    bad = [f"{path.relative_to(CORE)}:{line} imports {target}" for name, path in files.items()
           for target, line in imports_of(path, ".".join([PACKAGE, *name.split(".")[:-1]]), full)
           if any(target == f or target.startswith(f + ".") for f in FORBIDDEN_IN_CORE)]
    assert len(files) > 30, f"read only {len(files)} modules from {CORE}"
    assert not bad, "memtui/core must stay below the UI, the agent and the CLI:\n  " + "\n  ".join(bad)


def test_memtuis_packages_import_one_way() -> None:
    """memtui's own packages (tui, commands, agent, integrations, cli, and the core's packages each) form no
    circle: the core is below the agent, the agent below the app and the commands, the CLI on top."""
    edges = graph(MEMTUI, "memtui")
    ties = by_package(edges, memtui_unit)
    assert {"tui", "commands", "agent", "cli", "core.storage", "core.writing"} <= set(ties)
    found = cycles(ties)
    assert not found, "memtui's packages import each other in a circle:\n" + "\n".join(
        f"  {{{', '.join(c)}}}: {describe_packages(c, ties)}" for c in found)


# The whole package: every module under memtui/ by its dotted name, subpackages included, so a circle between the
# app and its commands, or between two folders, is found wherever it runs.
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


def test_the_internals_page_names_every_core_package_in_its_layer_order() -> None:
    """docs/internals.md is where a newcomer learns the layers: each package in its table, ground floor first."""
    text = (MEMTUI.parent / "docs" / "internals.md").read_text(encoding="utf-8")
    rows = [m.group(1) for m in re.finditer(r"^\| `(\w+)/` \|", text, re.M)]
    assert rows == [package for layer in LAYERS for package in layer], (
        f"docs/internals.md's package table lists {rows}; LAYERS in this test has {LAYERS}: make them agree")
