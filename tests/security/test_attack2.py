"""attack2: an outsider's attacks on the in-process commit's index steps, stale-lock clearing, rejecting an external
change under a refused name, the recurrence gate and the diff view's worker. Real git is the judge."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core.folder import FolderStore, clear_stale_git_locks
from memtui.core.store import StoreError


def sh(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=False, capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def fsck(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "fsck", "--full", "--strict", "--no-dangling"],
                          check=False, capture_output=True, text=True)
    return f"{done.returncode}:{done.stdout}{done.stderr}".strip()


def status(root: Path) -> str:
    return "".join(line + "\n" for line in sh(root, "status", "--porcelain").splitlines() if line != "?? .memtui/")


def repo(path: Path) -> Path:
    path.mkdir(parents=True)
    sh(path, "init", "-q", "-b", "main")
    sh(path, "config", "user.name", "person")
    sh(path, "config", "user.email", "person@example.com")
    (path / "base.md").write_text("base\n")
    (path / "mem.md").write_text("mem\n")
    sh(path, "add", ".")
    sh(path, "commit", "-qm", "base")
    return path


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".git").iterdir() if p.name.startswith("memtui-index-")
                  or p.name == "index.lock")


# --- the index steps -------------------------------------------------------------------------------------------

def test_a_corrupt_index_fails_the_commit_cleanly_and_leaves_no_lock_or_staged_copy(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    head = sh(root, "rev-parse", "HEAD").strip()
    (root / ".git/index").write_bytes(b"DIRC" + b"\xff" * 40)
    (root / "mem.md").write_text("memtui\n")
    with pytest.raises(StoreError):
        FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert sh(root, "rev-parse", "HEAD").strip() == head  # the branch did not move past an index it cannot make
    assert leftovers(root) == []


def test_an_unmerged_entry_of_the_committed_path_is_resolved_by_the_commit(tmp_path: Path) -> None:
    """A person's merge left mem.md in conflict (stages 1-3); memtui commits mem.md: the index must hold the
    committed entry at stage 0 only, git status clean for it, fsck clean."""
    root = repo(tmp_path / "m")
    sh(root, "switch", "-qc", "side")
    (root / "mem.md").write_text("side\n")
    sh(root, "commit", "-qam", "side")
    sh(root, "switch", "-q", "main")
    (root / "mem.md").write_text("main\n")
    sh(root, "commit", "-qam", "main")
    subprocess.run(["git", "-C", str(root), "merge", "-q", "side"], capture_output=True)
    assert "UU mem.md" in status(root)
    (root / "mem.md").write_text("resolved by memtui\n")
    try:
        FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    except StoreError as exc:  # refusing is fine too, if nothing moved and nothing is left behind
        assert leftovers(root) == [], exc
        return
    stages = sh(root, "ls-files", "-s", "mem.md").splitlines()
    assert len(stages) == 1 and stages[0].split()[2] == "0", stages
    assert "mem.md" not in status(root)
    assert fsck(root) == "0:"
    assert leftovers(root) == []


@pytest.mark.xfail(strict=True, reason="git_lock_files lists a lock with Path.exists(), which follows a link: a "
                   "dangling symlink planted as .git/index.lock is never seen, never cleared, and blocks every "
                   "memtui (and git) commit forever")
def test_a_dangling_symlink_planted_as_index_lock_is_cleared_as_stale(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    os.symlink(str(tmp_path / "nowhere"), root / ".git/index.lock")
    (root / "mem.md").write_text("memtui\n")
    store = FolderStore(root)
    store.index_wait = 0.2
    store.commit(["mem.md"], "memtui write", "wes")
    assert sh(root, "log", "-1", "--format=%s").strip() == "memtui write"


def test_a_symlinked_index_lock_to_an_outside_file_is_removed_not_its_target(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(str(victim), root / ".git/index.lock")
    (root / "mem.md").write_text("memtui\n")
    FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert victim.read_text() == "precious\n"
    assert fsck(root) == "0:"
    assert status(root) == ""


def test_a_fake_git_process_keeps_a_stale_lock_and_the_refusal_says_so(tmp_path: Path) -> None:
    """An agent starts `sleep` named 'git' in the repository and leaves a stale index.lock: memtui cannot tell it
    from a person's git at work, so the lock stays (a denial of writes an agent with a shell can cause anyway);
    the person must be told what holds the writes up and that nothing was committed."""
    root = repo(tmp_path / "m")
    (root / ".git/index.lock").write_bytes(b"")
    fake = subprocess.Popen(["bash", "-c", "exec -a git sleep 60"], cwd=root)
    try:
        time.sleep(0.2)
        (root / "mem.md").write_text("memtui\n")
        store = FolderStore(root)
        store.index_wait = 0.2
        head = sh(root, "rev-parse", "HEAD").strip()
        t0 = time.monotonic()
        with pytest.raises(StoreError) as err:
            store.commit(["mem.md"], "memtui write", "wes")
        spent = time.monotonic() - t0
        assert "index.lock" in str(err.value) and "nothing was committed" in str(err.value)
        assert sh(root, "rev-parse", "HEAD").strip() == head
        assert spent < 10
    finally:
        fake.kill()
        fake.wait()
    # once the fake git is gone the stale lock is cleared at the next write
    FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert fsck(root) == "0:" and status(root) == ""


def test_clear_stale_locks_never_follows_a_memtui_index_symlink_out_of_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(str(victim), root / ".git/memtui-index-evil")
    clear_stale_git_locks(root / ".git", wait=0.1)
    assert victim.read_text() == "precious\n"
