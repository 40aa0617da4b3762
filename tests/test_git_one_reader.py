"""Who may reach git, and docs whose words match the code.

GitPython is imported only where it is listed below, and `git` is run as a program only there too: the list is the
debt still owed to "one owner of git reads" (issue #44, part 4) and may only shrink. A module that starts reaching
git fails here; a listed module that stops doing so fails too, so the list says what is true now. The sources are
read with `ast`, nothing is imported.

Every `memtui/...py` path and every `memtui.x.y` dotted name that docs/*.md and README.md name must exist, so a
moved module cannot leave its old address behind in the docs (part 5).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEMTUI = ROOT / "memtui"
OWNER = "memtui/core/storage/gitcall.py"
# Modules that still import GitPython themselves, besides the owner, each to write: GitPython's index commit. Shrink it;
# never grow it.
GITPYTHON_DEBT = {
    "memtui/core/access/redis_transfer.py": "exporting a Redis memory makes a new repository and commits each "
                                            "recorded change through GitPython's index (its import reads "
                                            "through the owner: first_parent_commits, commit_changes, Batch)",
    "memtui/core/storage/folder_commit.py": "the former commit through GitPython's index, kept as the reference the "
                                            "in-process commit path is tested against",
}
# Modules that still read git by running it themselves, besides the owner. Must shrink to nothing.
READ_DEBT: dict[str, str] = {}
# Modules that run git to change the repository: each git program they name is one of WRITING (a read in a writer
# goes through the owner, `gitcall.read_git`). argv built from a variable (`["git", *args]`) is checked by its callers.
WRITERS = {
    "memtui/core/storage/folder.py": "history beside a folder starts by fast-import, read-tree, update-index; "
                                     "moving it in unsets core.worktree",
    "memtui/core/storage/folder_commit.py": "hash-object -w for files whose filters only git applies; commit-tree -S "
                                            "where the person's git signs its commits",
    "memtui/core/storage/folder_index.py": "update-index where the index is not one the in-process writer writes",
    "memtui/core/storage/git_hooks.py": "a temporary index (read-tree, write-tree) for the person's hooks to run on",
    "memtui/core/storage/gitobjects.py": "update-ref where refs are not plain files (a reftable)",
    "memtui/core/storage/places.py": "sets core.worktree on the repository memtui keeps beside a folder",
    "memtui/core/writing/sync.py": "fetch, push, notes add, update-ref and commit-tree of `memtui sync` (its "
                                   "reads go through gitcall.read_git: test_git_reads_rest.py checks which)",
}
WRITING = {"fast-import", "read-tree", "update-index", "hash-object", "update-ref", "config", "write-tree",
           "commit-tree", "fetch", "push", "notes", "symbolic-ref", "remote"}
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def sources() -> dict[str, ast.Module]:
    return {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in sorted(MEMTUI.rglob("*.py"))}


def imports_gitpython(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "git" or a.name.startswith("git.") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "git":
            return True
    return False


def runs_git(tree: ast.Module) -> bool:
    """A list or tuple whose first item is the string "git": an argv for a subprocess."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                return True
    return False


def git_programs(tree: ast.Module) -> list[str]:
    """The git program of each argv spelled with constants (`["git", "-c", "k=v", "update-ref", ...]`: update-ref)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            first = node.elts[0]
            if not (isinstance(first, ast.Constant) and first.value == "git"):
                continue
            rest = iter(node.elts[1:])
            for item in rest:
                if not isinstance(item, ast.Constant) or not isinstance(item.value, str):
                    break  # a variable part: the program is its callers'
                if item.value in ("-c", "--git-dir", "-C"):
                    next(rest, None)
                elif not item.value.startswith("-"):
                    out.append(_config_read(item.value, rest))
                    break
    return out


def _config_read(program: str, rest: Iterator[ast.expr]) -> str:
    """`config` sets a value; `config --get` (and the other lookups) reads one: named "config --get" so a writer's
    read of its config counts as the read it is."""
    if program != "config":
        return program
    for item in rest:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return program
        if item.value in ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "get", "list"):
            return "config --get"
        if not item.value.startswith("-"):
            return program
    return program


def test_config_lookups_count_as_reads() -> None:
    code = ast.parse('a = ["git", "config", "core.worktree", "x"]\nb = ["git", "-c", "k=v", "config", "--int", '
                     '"--get", "gc.auto"]\nc = ["git", "config", "--unset", "core.worktree"]')
    assert git_programs(code) == ["config", "config --get", "config"]


def test_only_the_owner_and_listed_debt_import_gitpython() -> None:
    found = {path for path, tree in sources().items() if imports_gitpython(tree)}
    assert OWNER in found, "the owner of git reads no longer imports GitPython: update OWNER in this test"
    assert found - {OWNER} - set(GITPYTHON_DEBT) == set(), (
        "these modules import GitPython themselves: read git through memtui/core/storage/gitcall.py instead")
    assert set(GITPYTHON_DEBT) - found == set(), "these no longer import GitPython: take them off GITPYTHON_DEBT"


def test_only_the_owner_and_listed_debt_run_git() -> None:
    found = {path for path, tree in sources().items() if runs_git(tree)}
    assert found - {OWNER} - set(READ_DEBT) - set(WRITERS) == set(), (
        "these modules run `git` themselves: read through memtui/core/storage/gitcall.py (read_git, log_commits, "
        "status_porcelain) instead")
    assert (set(READ_DEBT) | set(WRITERS)) - found == set(), "these no longer run `git`: take them off the lists"


def test_writers_spell_only_writing_git_programs() -> None:
    """A writer that starts reading git by its own argv is read debt again: it goes through the owner instead."""
    trees = sources()
    reads = {path: sorted(set(git_programs(trees[path])) - WRITING) for path in set(WRITERS) - set(READ_DEBT)}
    assert {path: found for path, found in reads.items() if found} == {}, (
        "these writers run git programs that read: call memtui/core/storage/gitcall.py's read_git instead")


def test_git_programs_finds_the_program_past_options() -> None:
    tree = ast.parse('a = ["git", "-c", "x=y", "--git-dir", d, "fast-import"]\nb = ["git", *args, "log"]\n'
                     'c = ("git", "rev-parse", "HEAD")')
    assert sorted(git_programs(tree)) == ["fast-import", "rev-parse"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_module_path_in_the_docs_exists(doc: Path) -> None:
    named = set(re.findall(r"memtui/[A-Za-z0-9_/]+\.py", doc.read_text(encoding="utf-8")))
    missing = sorted(p for p in named if not (ROOT / p).is_file())
    assert missing == [], f"{doc.name} names modules that do not exist (moved? fix the path): {missing}"


def resolves(dotted: str) -> bool:
    """`memtui.a.b.name...`: the longest prefix that is a module or package, then a name defined at its top."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if not module.is_file():
            continue
        rest = parts[cut:]
        if not rest:
            return True
        tree = ast.parse(module.read_text(encoding="utf-8"))
        names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        names |= {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
        names |= {a.asname or a.name for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        return rest[0] in names
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_dotted_module_name_in_the_docs_resolves(doc: Path) -> None:
    named = set(re.findall(r"\bmemtui(?:\.[a-z_][a-z0-9_]*)+", doc.read_text(encoding="utf-8")))
    missing = sorted(n for n in named if not resolves(n))
    assert missing == [], f"{doc.name} names modules or functions that do not exist (moved? fix the name): {missing}"


def test_reads_through_the_owner_answer_bad_names_without_importing_gitpython_elsewhere(mem, root: Path) -> None:
    """The error paths that now catch the owner's `errors()`: a name an agent sends that resolves to nothing (or
    reads as an option) is "not found", never a crash and never a file written; a real commit still resolves."""
    from memtui.core.storage.folder import FolderStore

    store = mem.store
    assert isinstance(store, FolderStore)
    head = store.head()
    assert head is not None and store.resolve_change(head.sha) is not None and store.in_history(head.sha)
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git" not in p.parts)
    for hostile in ("no-such-ref", "HEAD~9999", "--output=pwned", "0" * 40, "deadbeef" * 5):
        assert store.resolve_change(hostile) is None, hostile
        assert store.in_history(hostile) is False, hostile
        assert store.change_patch(hostile, "MEMORY.md") == "", hostile
    (root / "new.md").write_text("never committed\n", encoding="utf-8")
    assert store.blame_chunks("new.md") is None
    after = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git" not in p.parts)
    assert after == sorted(before + ["new.md"]) and not (root / "pwned").exists()
