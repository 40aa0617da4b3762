"""Repository config an agent might have written cannot make memtui's own git run a program: every hook git offers
(fsmonitor, filter drivers, textconv, signature checks, post-index-change, the pager) points at a script that
leaves a sentinel file, and no memtui command leaves one. A detached HEAD refuses writes before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.storage.folder import FolderStore
from memtui.core.writing.memory import Memory
from support.hostile import tree_digest


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def cli(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120, input=stdin)


def arm(root: Path, tmp_path: Path) -> Path:
    """Point every program-running git setting of the repository at a script that writes a sentinel."""
    sentinel = tmp_path / "pwned"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {sentinel}\ncat\n")
    script.chmod(0o755)
    for key, value in {
        "core.fsmonitor": str(script), "filter.evil.clean": str(script), "filter.evil.smudge": str(script),
        "filter.evil.process": str(script), "filter.evil.required": "true", "diff.evil.textconv": str(script),
        "diff.evil.command": str(script), "diff.external": str(script), "log.showSignature": "true",
        "gpg.program": str(script), "core.pager": str(script), "blame.ignoreRevsFile": str(script),
        "core.untrackedCache": "true",
    }.items():
        git(root, "config", key, value)
    included = tmp_path / "included.config"  # a driver defined only in an included file is found too
    included.write_text(f"[filter \"inc\"]\n\tclean = {script}\n\trequired = true\n")
    git(root, "config", "include.path", str(included))
    (root / ".gitattributes").write_text("* filter=evil diff=evil\nMEMORY.md filter=inc\n")
    hooks = root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-index-change", "pre-auto-gc", "reference-transaction", "post-checkout"):
        (hooks / hook).write_text(f"#!/bin/sh\necho hook {hook} >> {sentinel}\n")
        (hooks / hook).chmod(0o755)
    return sentinel


def test_the_armed_repository_does_run_the_script_for_plain_git(root: Path, tmp_path: Path) -> None:
    """The fixture is live: git without memtui's overrides runs it (else the test below proves nothing)."""
    sentinel = arm(root, tmp_path)
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n")
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True)
    assert sentinel.exists()


def test_no_memtui_command_runs_the_repository_s_programs(root: Path, tmp_path: Path) -> None:
    sentinel = arm(root, tmp_path)
    mem = Memory(root)
    # an external edit makes git status re-read (and filter) the file; a new file is untracked
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n- [stated] hand edit (2026-01-01)\n")
    (root / "notes.md").write_text("## Notes\n- [stated] untracked (2026-01-01)\n")
    steps = [
        cli(root, "queue", "list"),
        cli(root, "update", "Facts", "add", "[stated] Written by the person"),
        cli(root, "update", "Facts", "add", "[stated] Proposed by an agent", "--by", "agent-x"),
        cli(root, "log", "a line for today"),
        cli(root, "doctor"),
        cli(root, "today"),
        cli(root, "history", "MEMORY.md"),
        cli(root, "blame", "MEMORY.md"),
        cli(root, "context"),
        cli(root, "init", "--git"),
    ]
    for out in steps:
        assert "Traceback" not in out.stderr, out.stderr
    # the app's sync path, in process: external changes, proposals, history, blame, diffs, revert's merge
    store = mem.store
    assert isinstance(store, FolderStore)
    assert {c.path for c in store.external_changes()} >= {"notes.md"}
    mem.external_proposals()
    head = store.head()
    assert head is not None
    store.history("MEMORY.md")
    store.blame_chunks("MEMORY.md")
    store.change_patches([c.sha for c in store.history()])
    store.resolve_change(head.sha)
    assert store.merge3(b"a\nb\n", b"a\n", b"a\n") == b"a\nb\n"
    assert mem.update("Facts", "add", "[stated] Once more in process").status == "applied"
    diagnose(mem, fix=True)
    from memtui.core.timeline.today import today

    today(mem)
    assert not sentinel.exists(), sentinel.read_text()


def test_core_worktree_in_the_repository_config_does_not_move_memtui_s_git(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "bait.md").write_text("not part of this memory\n")
    git(root, "config", "core.worktree", str(elsewhere))
    store = FolderStore(root)
    assert [c.path for c in store.external_changes()] == []
    (root / "n.md").write_text("# n\n")
    assert [c.path for c in store.external_changes()] == ["n.md"]


def test_a_detached_head_refuses_writes_and_writes_nothing(root: Path) -> None:
    sha = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "--detach")
    # refusals are audited (that is what an audit log is for): everything else must stay as it was
    before = tree_digest(root, skip=("memory-log.jsonl",))
    mem = Memory(root)
    for res in (mem.update("Facts", "add", "[stated] Lands on no branch"), mem.log("nor this line"),
                mem.create("notes/new.md", "# new\n")):
        assert res.status == "refused", res
        assert f"HEAD is detached at {sha[:8]}" in res.message and "git switch main" in res.message
    out = cli(root, "update", "Facts", "add", "[stated] Nor from the CLI")
    assert out.returncode != 0 and "HEAD is detached" in out.stderr + out.stdout and "Traceback" not in out.stderr
    assert tree_digest(root, skip=("memory-log.jsonl",)) == before
    assert git(root, "rev-parse", "HEAD").strip() == sha
    git(root, "switch", "-q", "main")
    assert Memory(root).update("Facts", "add", "[stated] Lands on main").status == "applied"


@pytest.mark.parametrize("name", [".git", ".GIT", ".Git", "git~1", ".git.", ".git "])
def test_no_commit_records_a_tree_entry_named_git(root: Path, name: str) -> None:
    store = FolderStore(root)
    before = git(root, "rev-parse", "HEAD")
    (root / "log").mkdir(exist_ok=True)
    target = root / "log" / name
    target.mkdir(exist_ok=True)
    (target / "config").write_text("[core]\n\tfsmonitor = /bin/sh\n")
    mem = Memory(root)
    for res in (mem.create(f"log/{name}/config", "[core]\n"), mem.create(f"{name}/x.md", "# x\n")):
        assert res.status == "refused", res
    with pytest.raises(Exception, match="refused to commit"):
        store.commit([f"log/{name}/config"], "sneak", "agent")
    assert git(root, "rev-parse", "HEAD") == before
    names = {part.casefold().rstrip(". ") for rel in git(root, "ls-tree", "-r", "--name-only", "HEAD").split()
             for part in rel.split("/")}
    assert not names & {".git", "git~1"}, names


def test_init_on_a_folder_with_a_git_look_alike_commits_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "adopted"
    (root / ".GIT").mkdir(parents=True)
    (root / ".GIT" / "config").write_text("[core]\n")
    os.symlink(".GIT/config", root / "leak.md")
    (root / "MEMORY.md").write_text("# Memory\n\n## Facts\n- [stated] Adopted folder (2026-01-01)\n")
    store = FolderStore(root)
    assert store.init_git("wes")
    tracked = git(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "MEMORY.md" in tracked and not any(t.startswith(".GIT") or t == "leak.md" for t in tracked), tracked
