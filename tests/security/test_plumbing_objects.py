"""memtui reads git's files itself (HEAD, refs, loose objects) and moves the branch itself: planted files there must
neither hang it, nor fool it into committing what it did not mean to, nor let a person's own commit be lost."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from memtui.core.storage.folder import FolderStore
from memtui.core.writing.memory import Memory


def sh(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_a_fifo_planted_as_head_hangs_neither_a_write_nor_context(root: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMTUI_GIT_TIMEOUT", "3")
    head = root / ".git" / "HEAD"
    head.unlink()
    os.mkfifo(head)
    started = time.monotonic()
    res = Memory(root).update("Decisions", "add", "[stated] Not while HEAD is a pipe")
    assert res.status == "refused" and "HEAD" in res.message
    env = {**os.environ, "MEMTUI_GIT_TIMEOUT": "3"}
    done = subprocess.run([sys.executable, "-m", "memtui", "context", "--root", str(root)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 1 and "HEAD" in done.stderr and "memtui doctor" in done.stderr, done.stderr


def test_a_fifo_planted_as_an_object_is_not_waited_on(root: Path, mem: Memory, monkeypatch) -> None:
    assert mem.update("Decisions", "add", "[stated] Before the trap").status == "applied"
    blob = sh(root, "rev-parse", "HEAD:MEMORY.md").strip()
    path = root / ".git" / "objects" / blob[:2] / blob[2:]
    path.chmod(0o644)
    path.unlink()
    os.mkfifo(path)  # git itself cannot read it either: the read fails within the time limit, never hangs
    monkeypatch.setenv("MEMTUI_GIT_TIMEOUT", "3")
    started = time.monotonic()
    res = Memory(root).update("Decisions", "add", "[stated] After the trap")
    assert res.status == "refused"
    assert time.monotonic() - started < 30


def test_a_commit_made_while_memtui_plans_is_built_on_never_overwritten(root: Path) -> None:
    store = FolderStore(root)
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n- [stated] mine\n")
    before = sh(root, "rev-parse", "HEAD").strip()
    (root / "theirs.md").write_text("# theirs\n")
    sh(root, "add", "theirs.md")
    sh(root, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "-m", "theirs")
    theirs = sh(root, "rev-parse", "HEAD").strip()
    sha = store.commit(["MEMORY.md"], "mine", "wes")
    assert sh(root, "rev-parse", f"{sha}^").strip() == theirs != before
    assert sh(root, "ls-tree", "--name-only", "HEAD").split().count("theirs.md") == 1
    # exactly the intended file in memtui's commit, nothing the person staged or changed on disk
    assert sh(root, "show", "--name-only", "--format=", sha).split() == ["MEMORY.md"]


def test_a_planted_ref_lock_held_by_no_one_is_cleared_but_one_held_open_is_waited_on(root: Path) -> None:
    lock = root / ".git" / "refs" / "heads" / "main.lock"
    held = open(lock, "w")  # a person's git in the middle of moving the branch
    try:
        store = FolderStore(root)
        (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n- [stated] waits\n")
        started = time.monotonic()
        try:
            store.commit(["MEMORY.md"], "mine", "wes")
        except Exception as exc:  # the live holder kept it past the wait: refused, with git's state unchanged
            assert "commit" in str(exc)
        assert time.monotonic() - started >= 4.5
    finally:
        held.close()
    assert sh(root, "fsck", "--no-dangling") == ""
