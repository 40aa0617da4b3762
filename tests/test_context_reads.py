"""`memtui context` reads only what it loads: MEMORY.md, two logs and the live scratch notes, their committed
versions read in process (loose or packed objects) or from one git process, whatever the size of the memory; and
it agrees with the context the full memory builds (the agent's tool and session use `Memory`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memtui.core.recall.context import build_context
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.reading import MemoryReader
from memtui.core.writing.memory import Memory


def _populate(mem: Memory, now) -> None:
    now("2026-08-20T09:00")
    mem.update("Preferences", "add", "[stated] Prefers short answers")
    mem.log("Reviewed the deploy runbook")
    mem.scratch("handoff", "halfway through the migration\n", ttl_minutes=120)


def _git_logging(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose `git` is a wrapper that logs each invocation, then runs the real git."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "git.log"
    wrapper = bindir / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}, log


def test_the_reader_and_the_memory_build_the_same_context(root: Path, mem: Memory, now) -> None:
    _populate(mem, now)
    assert build_context(MemoryReader(root)).text == build_context(mem).text
    assert "halfway through the migration" in build_context(MemoryReader(root)).text


def test_context_starts_at_most_one_git_for_its_files_and_none_for_the_rest_of_the_memory(
        root: Path, mem: Memory, now, tmp_path: Path) -> None:
    _populate(mem, now)
    for k in range(300):  # topic files context must never look at
        path = root / "notes" / f"topic-{k}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# Topic {k}\n\n## Facts\n- [stated] fact {k}\n")
    env, log = _git_logging(tmp_path)
    env["MEMTUI_NOW"] = "2026-08-20T10:00"
    (root / "MEMORY.md").write_text("written past memtui: not reviewed, not loaded\n")

    def context() -> list[str]:
        log.write_text("")
        done = subprocess.run([sys.executable, "-m", "memtui", "context", "--root", str(root), "--json"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        text = json.loads(done.stdout)["text"]
        assert "halfway through the migration" in text and "Prefers short answers" in text
        assert "written past memtui" not in text  # the committed MEMORY.md, not the disk's
        return log.read_text().splitlines()

    # memtui's commits leave loose objects: the branch, the config, MEMORY.md, the logs and the scratch note are
    # read from them in process, with no git at all.
    assert context() == []
    # Packed by git (a person's `git gc`): read from the pack in process, still no git.
    subprocess.run(["git", "-C", str(root), "gc", "-q", "--prune=now"], check=True)
    assert not list((root / ".git" / "objects").glob("??/*"))
    assert context() == []
    # Objects in an alternate object folder: only git knows where they are, so one batch for all of them.
    store = root.parent / "alternate"
    (root / ".git" / "objects" / "pack").rename(store)
    (store.parent / "objects").mkdir()
    store.rename(store.parent / "objects" / "pack")
    (root / ".git" / "objects" / "pack").mkdir()
    (root / ".git" / "objects" / "info" / "alternates").write_text(f"{store.parent / 'objects'}\n")
    assert context() == ["cat-file --batch"]


def test_review_bases_are_the_committed_bytes_in_one_batch(root: Path, mem: Memory, now) -> None:
    _populate(mem, now)
    (root / "MEMORY.md").write_text("written past memtui\n")  # not reviewed: not what a session loads
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "new.md").write_text("never committed\n")
    store = FolderStore(root)
    rels = ["MEMORY.md", "notes/new.md", "log/2026-08-20.md", "log/1999-01-01.md"]
    got = store.review_bases(rels)
    assert got == {rel: FolderStore(root).review_base(rel) for rel in rels}
    assert b"written past memtui" not in got["MEMORY.md"] and got["notes/new.md"] is None
    assert got["log/1999-01-01.md"] is None and b"Reviewed the deploy runbook" in got["log/2026-08-20.md"]


def test_review_bases_without_a_commit_are_the_files_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "MEMORY.md").write_text("# Memory\n")
    assert FolderStore(root).review_bases(["MEMORY.md", "gone.md"]) == {"MEMORY.md": b"# Memory\n", "gone.md": None}


def test_a_listing_under_a_folder_walks_only_that_folder(root: Path) -> None:
    store = FolderStore(root)
    (root / "scratch").mkdir(exist_ok=True)
    (root / "scratch" / "1-a.md").write_text("a\n")
    (root / "scratch" / "deeper").mkdir()
    (root / "scratch" / "deeper" / "2-b.md").write_text("b\n")
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "x.md").write_text("x\n")
    everything = store.list_files("**/*.md")
    assert store.list_files("scratch/**/*.md") == [r for r in everything if r.startswith("scratch/")] \
        == ["scratch/1-a.md", "scratch/deeper/2-b.md"]
    assert store.list_files("nowhere/**/*.md") == [] and store.list_files(".git/**/*") == []


def test_external_changes_by_plumbing_are_gitpythons(root: Path, mem: Memory) -> None:
    """Before GitPython is opened (the app's first sync) external changes come from the git CLI; the same as
    GitPython's, for an edit, a new file, a deletion, a link and an ignored file."""
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "- [stated] edited by hand\n")
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "new topic.md").write_text("# New\n")
    (root / "notes" / "link.md").symlink_to("../MEMORY.md")
    (root / ".gitignore").write_text((root / ".gitignore").read_text() + "hidden.md\n")
    (root / "hidden.md").write_text("ignored but memory\n")
    FolderStore(root).commit([".gitignore"], "ignore hidden.md", "wes")
    fresh = FolderStore(root)
    by_plumbing = fresh.external_changes()
    assert not fresh._git.opened  # GitPython was not needed
    opened = FolderStore(root)
    with opened.git() as repo:
        assert repo is not None
    assert opened.external_changes() == by_plumbing
    assert {c.path for c in by_plumbing} == {"MEMORY.md", "notes/new topic.md", "notes/link.md", "hidden.md"}
    assert "git" not in {m.split(".")[0] for m in _modules_of_a_fresh_sync(root)}


def _modules_of_a_fresh_sync(root: Path) -> list[str]:
    probe = ("import sys; from memtui.core.writing.memory import Memory; m = Memory(sys.argv[1]); "
             "m.external_proposals(); m.proposals(external=False); print('\\n'.join(sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe, str(root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_context_imports_the_toml_parser_only_for_a_memory_with_a_config(root: Path, mem: Memory, now) -> None:
    """tomllib's regexes cost every start-up ~1.5 ms; a memory without `.memtui/config.toml` has nothing to parse.
    With one, its policy still applies (a typo there fails closed, `tests/test_core_config_cache.py`)."""
    _populate(mem, now)

    def imported() -> set[str]:
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memtui", "context", "--root", str(root)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "short answers" in done.stdout
        return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)

    config = root / ".memtui" / "config.toml"
    kept = config.read_bytes()
    git("rm", "-q", ".memtui/config.toml")  # the policy is read as committed, not as the working file says
    git("commit", "-q", "-m", "no config")
    assert "tomllib" not in imported()
    config.write_bytes(kept)
    git("add", ".memtui/config.toml")
    git("commit", "-q", "-m", "config again")
    assert "tomllib" in imported()
