"""Attacks on memtui's in-process commit (memtui/core/storage/gitobjects.py, CommitEngine._commit_in): a person's git
running at the same moment, a memtui process killed between its steps, two memtui processes, hostile paths,
messages and names. git itself is the judge: fsck, status, log and reflog."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtui.core.grammar.paths import PathRefused
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import StoreError
from support.git_judge import fsck, person_repo, sh, status

WORKTREE = Path(__file__).resolve().parents[2]


def reflog_is_a_chain(root: Path, ref: str) -> None:
    """Each reflog line's old value is the previous line's new value, and the last names the ref's sha."""
    lines = (root / ".git/logs" / ref).read_text().splitlines()
    prev = "0" * 40
    for line in lines:
        old, new = line.split(" ")[:2]
        assert old == prev, f"reflog {ref} broken at {line!r}"
        prev = new
    assert prev == sh(root, "rev-parse", ref).strip()


# --- a person's git holding its lock as a closed file --------------------------------------------------------

def test_index_lock_of_a_person_s_commit_in_its_editor_is_not_taken(tmp_path: Path) -> None:
    """Was: memtui judged a lock stale when no process had it open; `git commit -a` keeps index.lock closed while
    its editor and hooks run, so memtui deleted a live git's index.lock and wrote the index under it. Now a lock
    is stale only when no git works in the repository: memtui waits, then commits on top of the person's.

    Each step waits on a condition, not a time: mem.md changes only once the person's editor runs (git has
    staged by then; a change made as soon as index.lock appears could be staged into the person's commit), and
    the editor ends only when the test lets it, while memtui's commit is seen still waiting."""
    root = person_repo(tmp_path / "m")
    started, release = tmp_path / "editor-started", tmp_path / "editor-release"
    with open(root / "base.md", "a") as f:
        f.write("person's change\n")
    editor = f"touch '{started}'; until [ -e '{release}' ]; do sleep 0.02; done; echo person >"
    person = subprocess.Popen(["git", "-C", str(root), "commit", "-a"], env={**os.environ, "GIT_EDITOR": editor},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and person.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert started.exists(), "the person's editor did not start"
        inode = os.stat(root / ".git/index.lock").st_ino
        (root / "mem.md").write_text("memtui\n")
        seen: list[int] = []
        watcher = threading.Thread(target=lambda: seen.extend(_inodes_while(root / ".git/index.lock", person)))
        watcher.start()
        done: list[str | None | BaseException] = []

        def commit() -> None:
            try:
                done.append(FolderStore(root).commit(["mem.md"], "memtui write", "wes"))
            except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
                done.append(exc)

        committer = threading.Thread(target=commit)
        committer.start()
        committer.join(1.0)
        assert committer.is_alive(), f"memtui's commit did not wait for the person's git: {done}"
        release.touch()
        committer.join(60)
        watcher.join(60)
        assert not committer.is_alive() and not watcher.is_alive()
        assert done and not isinstance(done[0], BaseException), done
        assert set(seen) <= {inode}, "memtui replaced a live git's index.lock"
    finally:
        release.touch()
        out = person.communicate(timeout=60)[0].decode()
    assert person.returncode == 0, out
    assert sh(root, "log", "--format=%s", "-2").split("\n")[:2] == ["memtui write", "person"]
    assert status(root) == "" and fsck(root) == "0:"


def _inodes_while(lock: Path, person: subprocess.Popen) -> list[int]:
    """The inodes `lock` had while the person's git ran: one seen only when the person's git was still running
    after it was seen (a look taken just before git exits, read after memtui took the lock, is not the person's)."""
    out = []
    while True:
        try:
            inode: int | None = os.stat(lock).st_ino
        except FileNotFoundError:
            inode = None
        if person.poll() is not None:
            return out
        if inode is not None:
            out.append(inode)
        time.sleep(0.005)


def test_a_person_s_commit_during_a_memtui_write_that_changes_nothing_succeeds(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    with open(root / "base.md", "a") as f:
        f.write("person's change\n")
    person = subprocess.Popen(["git", "-C", str(root), "commit", "-a"], env={**os.environ,
                              "GIT_EDITOR": "sleep 1.5; echo person >"}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 5
    while not (root / ".git/index.lock").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert FolderStore(root).commit(["mem.md"], "nothing changed", "wes") is None
    out = person.communicate(timeout=20)[0].decode()
    assert person.returncode == 0, out
    assert status(root) == ""
    assert fsck(root) == "0:"


def test_ref_lock_held_across_a_reference_transaction_hook_is_not_stolen(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    hook = root / ".git/hooks/reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text('#!/bin/sh\n[ "$1" = prepared ] && sleep 1.5\nexit 0\n')
    hook.chmod(0o755)
    (root / "p.md").write_text("p\n")
    sh(root, "add", "p.md")
    person = subprocess.Popen(["git", "-C", str(root), "commit", "-qm", "person"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 5
    while not (root / ".git/refs/heads/main.lock").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    (root / "mem.md").write_text("memtui\n")
    try:
        FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    except StoreError:
        pass  # refusing (the branch is locked) is fine; stealing the lock is not
    out = person.communicate(timeout=20)[0].decode()
    assert person.returncode == 0, out
    reflog_is_a_chain(root, "HEAD")
    reflog_is_a_chain(root, "refs/heads/main")
    assert fsck(root) == "0:"


# --- concurrency ---------------------------------------------------------------------------------------------

# Was: the branch was moved before git's index was set (a separate `git update-index`, no index.lock across the
# two), so a `git commit` in between saw memtui's file as a staged revert and committed it. git's order is kept
# now: index lock, new index made, branch moved, index in place.


MEMTUI_LOOP = r"""
import sys, time
from pathlib import Path
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import StoreError
root, name, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
store = FolderStore(root)
for k in range(rounds):
    (root / name).write_text(f"{name} {k}\n")
    try:
        print("ok", store.commit([name], f"{name} {k}", "wes"), flush=True)
    except StoreError as exc:
        print("err", str(exc).replace("\n", " "), flush=True)
"""

PERSON_LOOP = r"""
for k in $(seq 1 $1); do
  echo "person $k" > person.md
  git add person.md
  if git commit -qm "person $k" >/dev/null 2>err.txt; then echo "ok $(git rev-parse HEAD)"; else echo "err $(tr '\n' ' ' < err.txt)"; fi
done
"""


def _memtui_loop(root: Path, name: str, rounds: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    return subprocess.Popen([sys.executable, "-c", MEMTUI_LOOP, str(root), name, str(rounds)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _check_history(root: Path, runs: dict[str, list[str]], *, pure: set[str] | None = None) -> None:
    """Every commit a writer reported is on the branch, each of `pure`'s (default: every writer's) changes only its
    writer's file, git is consistent."""
    on_branch = set(sh(root, "rev-list", "HEAD").split())
    for name, lines in runs.items():
        made = [line.split()[1] for line in lines if line.startswith("ok ") and line.split()[1] != "None"]
        assert made, f"{name}: no commit at all: {lines[:3]}"
        for sha in made:
            assert sha in on_branch, f"{name}'s commit {sha} was lost"
            files = sh(root, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split()
            if pure is None or name in pure:
                assert files == [name], f"{name}'s commit {sha} changed {files}"
    assert fsck(root) == "0:"
    reflog_is_a_chain(root, "refs/heads/main")
    reflog_is_a_chain(root, "HEAD")


def test_a_person_committing_in_a_loop_while_memtui_commits(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    (root / ".gitignore").write_text(".memtui/\nerr.txt\n")
    rounds = 60
    memtui = _memtui_loop(root, "mem.md", rounds)
    person = subprocess.Popen(["sh", "-c", PERSON_LOOP, "sh", str(rounds)], cwd=root, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    out_m, err_m = memtui.communicate(timeout=300)
    out_p, _ = person.communicate(timeout=300)
    assert memtui.returncode == 0, err_m
    m_lines, p_lines = out_m.splitlines(), out_p.splitlines()
    person_files = {"person.md"}
    # memtui's commits hold only its file. A person's may still put memtui's file back: `git commit` reads HEAD
    # after it has let go of the index lock, so two committers at once can each undo the other (git against git
    # too). That race is git's; the one memtui's own order opened (branch moved before the index) is closed and
    # tested deterministically below, and it was 52 of 76 person commits in this loop.
    _check_history(root, {"mem.md": m_lines, "person.md": p_lines}, pure={"mem.md"})
    # A person's commit may fail (memtui moved the branch first, as another git would); what it staged stays staged.
    assert set(sh(root, "diff", "--cached", "--name-only").split()) <= person_files
    assert set(sh(root, "diff", "--name-only").split()) <= person_files | {".gitignore"}
    assert [line for line in m_lines if line.startswith("err")] == []


SLOW = """#!/bin/sh
for a in "$@"; do [ "$a" = "--index-info" ] && sleep 1.5; done
exec "$REAL_GIT" "$@"
"""


def test_a_person_s_commit_while_memtui_sets_the_index_does_not_revert_memtui_s_write(tmp_path: Path) -> None:
    """The window made wide: memtui's `git update-index` is slow (a loaded disk); the person commits in it."""
    import shutil

    root = person_repo(tmp_path / "m")
    fake = tmp_path / "slowgit"
    fake.mkdir()
    (fake / "git").write_text(SLOW)
    (fake / "git").chmod(0o755)
    sh(root, "update-index", "--index-version", "4")  # an index memtui leaves to git: `git update-index` runs
    before = sh(root, "rev-parse", "HEAD").strip()
    (root / "mem.md").write_text("approved by a person\n")
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "PATH": f"{fake}:{os.environ['PATH']}",
           "REAL_GIT": shutil.which("git") or "/usr/bin/git"}
    memtui = subprocess.Popen([sys.executable, "-c", MEMTUI_LOOP, str(root), "mem.md", "1"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while sh(root, "rev-parse", "HEAD").strip() == before and time.monotonic() < deadline:
        time.sleep(0.01)
    (root / "person.md").write_text("p\n")
    sh(root, "add", "person.md")
    sh(root, "commit", "-qm", "person")
    memtui.communicate(timeout=30)
    assert sh(root, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == ["person.md"]
    assert sh(root, "show", "HEAD:mem.md") == "mem.md 0\n"


def test_reflogs_stay_in_order_while_a_person_commits_in_a_loop(tmp_path: Path) -> None:
    """memtui once appended its reflog lines after renaming the ref lock away: a 150-round run had 9 breaks in the
    branch's reflog and 12 in HEAD's. Appended under the lock, as git does, they stay in order. And it failed a
    write outright (FileExistsError on refs/heads/main.lock) when the person's git held the lock at that moment."""
    root = person_repo(tmp_path / "m")
    (root / ".gitignore").write_text(".memtui/\nerr.txt\n")
    rounds = 150
    memtui = _memtui_loop(root, "mem.md", rounds)
    person = subprocess.Popen(["sh", "-c", PERSON_LOOP, "sh", str(rounds)], cwd=root, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    out = memtui.communicate(timeout=300)[0]
    person.communicate(timeout=300)
    # A branch lock a person's git holds for a moment is waited for, as git waits, not a failed write.
    assert [line for line in out.splitlines() if "File exists" in line] == []
    reflog_is_a_chain(root, "refs/heads/main")
    reflog_is_a_chain(root, "HEAD")


def test_two_memtui_processes_writing_at_once(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    rounds = 25
    a, b = _memtui_loop(root, "a.md", rounds), _memtui_loop(root, "b.md", rounds)
    out_a, err_a = a.communicate(timeout=300)
    out_b, err_b = b.communicate(timeout=300)
    assert a.returncode == 0 and b.returncode == 0, err_a + err_b
    runs = {"a.md": out_a.splitlines(), "b.md": out_b.splitlines()}
    for lines in runs.values():
        assert len([line for line in lines if line.startswith("ok ")]) == rounds, lines
    _check_history(root, runs)
    assert status(root) == ""
    assert len(sh(root, "rev-list", "HEAD").split()) == 1 + 2 * rounds


def test_git_gc_and_repack_running_while_memtui_commits(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    memtui = _memtui_loop(root, "mem.md", 40)
    loop = "for k in 1 2 3 4 5 6; do git gc -q --auto; git repack -adq; git pack-refs --all; done"
    maint = subprocess.Popen(["sh", "-c", loop], cwd=root, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    out, err = memtui.communicate(timeout=300)
    maint.communicate(timeout=300)
    lines = out.splitlines()
    assert [line for line in lines if not line.startswith("ok ")] == [], err
    _check_history(root, {"mem.md": lines})
    assert status(root) == ""


# --- a memtui process killed between its steps ---------------------------------------------------------------

KILLER = """#!/bin/sh
for a in "$@"; do [ "$a" = "$MEMTUI_TEST_KILL_ON" ] && { kill -9 $PPID; sleep 2; exit 1; }; done
exec "$REAL_GIT" "$@"
"""


def _killed_write(root: Path, tmp_path: Path, at: str) -> None:
    """`memtui update` whose process is killed (SIGKILL) the moment it starts `git <at>`."""
    import shutil

    fake = tmp_path / "fakegit"
    fake.mkdir(exist_ok=True)
    (fake / "git").write_text(KILLER)
    (fake / "git").chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "PATH": f"{fake}:{os.environ['PATH']}",
           "MEMTUI_TEST_KILL_ON": at, "REAL_GIT": shutil.which("git") or "/usr/bin/git"}
    done = subprocess.run([sys.executable, "-m", "memtui", "update", "Facts", "add", "[stated] killed write",
                           "--root", str(root)], env=env, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, (done.returncode, done.stdout, done.stderr)


def _memtui(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], env=env, check=False,
                          capture_output=True, text=True, timeout=60)


def test_killed_while_the_index_is_made_nothing_moved_and_the_next_write_finishes_it(root: Path,
                                                                                     tmp_path: Path) -> None:
    """Was: killed after the branch moved and before `git update-index`, HEAD had the write and git's index the
    file before it (git status: MM), and a person's commit then put the old file back. The index is now made
    first, under git's index lock, and the branch moved after: killed there, nothing moved."""
    before = sh(root, "rev-parse", "HEAD").strip()
    sh(root, "update-index", "--index-version", "4")  # an index memtui leaves to git: `git update-index` runs
    _killed_write(root, tmp_path, "update-index")
    assert sh(root, "rev-parse", "HEAD").strip() == before
    assert status(root) == " M MEMORY.md\n"  # the journaled write on disk; git's index and HEAD agree
    assert _memtui(root, "log", "an unrelated write").returncode == 0  # the journal finishes the killed write
    assert "killed write" in sh(root, "show", "HEAD:MEMORY.md")
    assert status(root) == "" and fsck(root) == "0:"
    assert not (root / ".git/index.lock").exists() and not list((root / ".git").glob("memtui-index-*"))


def test_a_person_s_commit_after_such_a_kill_keeps_memtui_s_write(root: Path, tmp_path: Path) -> None:
    """Was: a person's `git commit` of another file in that window committed the index's old MEMORY.md, reverting
    the approved write in history. Now the person's commit holds only their file, and the write is finished."""
    sh(root, "update-index", "--index-version", "4")  # an index memtui leaves to git: `git update-index` runs
    _killed_write(root, tmp_path, "update-index")
    (root / ".git/index.lock").unlink()  # the killed memtui's lock: a person's git would say to remove it
    (root / "person.md").write_text("p\n")
    sh(root, "add", "person.md")
    sh(root, "commit", "-qm", "person", env={"GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@x",
                                              "GIT_COMMITTER_NAME": "p", "GIT_COMMITTER_EMAIL": "p@x"})
    assert sh(root, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == ["person.md"]
    assert _memtui(root, "log", "next write").returncode == 0
    assert "killed write" in sh(root, "show", "HEAD:MEMORY.md")
    assert status(root) == "" and fsck(root) == "0:"


def test_killed_before_the_ref_moves_is_finished_by_the_journal(root: Path, tmp_path: Path) -> None:
    """Killed in the pre-commit hook: blobs and trees are written, the commit and the ref are not."""
    hook = root / ".git/hooks/pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nkill -9 $PPID\nsleep 2\n")
    hook.chmod(0o755)
    before = sh(root, "rev-parse", "HEAD").strip()
    done = _memtui(root, "update", "Facts", "add", "[stated] killed write")
    assert done.returncode == -9, done.stderr
    hook.unlink()
    assert sh(root, "rev-parse", "HEAD").strip() == before
    assert fsck(root) == "0:"
    assert _memtui(root, "log", "next write").returncode == 0
    assert status(root) == ""
    assert "killed write" in sh(root, "show", "HEAD:MEMORY.md")
    assert fsck(root) == "0:"


# --- hostile strings -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", ["a/../b.md", "./a.md", "a//b.md", "/etc/x.md", ".git/config", ".GIT/hooks/x",
                                 "x/.git/config", ".git\u200c/config", "a\0b.md", "a\nb.md", "a/./b.md",
                                 "git~1/config", "%2e%2e/x.md", "..", ".", ".git::$INDEX_ALLOCATION/config",
                                 "notes/.GIT::$DATA", "notes/git~1::$INDEX_ALLOCATION/x.md"])
def test_a_hostile_path_never_makes_a_tree_git_fsck_flags(tmp_path: Path, rel: str) -> None:
    root = person_repo(tmp_path / "m")
    head = sh(root, "rev-parse", "HEAD").strip()
    objects_before = {p for p in (root / ".git/objects").rglob("*") if p.is_file()}
    try:
        FolderStore(root).commit([rel], "hostile", "wes", contents={rel: b"payload\n"})
    except (StoreError, PathRefused, ValueError):
        assert sh(root, "rev-parse", "HEAD").strip() == head
    assert fsck(root) == "0:"
    names = sh(root, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0")
    assert all(part not in ("", ".", "..") and part.casefold() != ".git" for n in names if n for part in n.split("/"))
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and ".git" not in p.parts and p.name == "b.md"]
    assert outside == []
    new = {p for p in (root / ".git/objects").rglob("*") if p.is_file()} - objects_before
    assert all(p.parent.parent == root / ".git/objects" and len(p.parent.name) == 2 for p in new)


@pytest.mark.parametrize("author,message", [
    ("evil\nparent 0000000000000000000000000000000000000000", "m"),
    ("evil <x@y> 1 +0000\ncommitter root <root@x>", "m"),
    ("nul\0name", "m"),
    ("wes", "subject\n\ngpgsig -----BEGIN PGP SIGNATURE-----\n fake\n -----END PGP SIGNATURE-----\n"),
    ("wes", "subject\0hidden"),
    ("<>", "only brackets"),
    ("\u202eevil", "bidi"),
])
def test_hostile_actor_or_message_cannot_add_a_commit_header(tmp_path: Path, author: str, message: str) -> None:
    root = person_repo(tmp_path / "m")
    (root / "mem.md").write_text("changed\n")
    try:
        sha = FolderStore(root).commit(["mem.md"], message, author, committer=author)
    except (StoreError, ValueError):
        return
    assert fsck(root) == "0:"
    raw = sh(root, "cat-file", "commit", sha)
    headers = raw.split("\n\n", 1)[0].splitlines()
    assert [h.split(" ", 1)[0] for h in headers] == ["tree", "parent", "author", "committer"]
    assert sh(root, "rev-parse", f"{sha}^").strip() != "0" * 40


def test_an_agent_cannot_get_an_ntfs_git_alias_committed_even_with_approval(root: Path) -> None:
    """`.git::$INDEX_ALLOCATION` names the folder `.git` on Windows: a clone there would write into it."""
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    for rel in (".git::$INDEX_ALLOCATION/hooks/post-checkout", "notes/.git::$INDEX_ALLOCATION/config.md"):
        try:
            res = mem.create(rel, "#!/bin/sh\n", actor="agent:evil")
        except (PathRefused, StoreError):
            continue
        assert res.status in ("refused", "queued"), res
        if res.status == "queued":
            try:
                mem.approve(res.id)
            except (PathRefused, StoreError):
                pass
    assert fsck(root) == "0:"
    assert "INDEX_ALLOCATION" not in sh(root, "ls-tree", "-r", "--name-only", "HEAD")


def test_a_commit_holds_only_the_paths_given_not_a_person_s_staged_file(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    (root / "staged.md").write_text("not reviewed\n")
    sh(root, "add", "staged.md")
    (root / "base.md").write_text("edited, unstaged\n")
    (root / "mem.md").write_text("memtui\n")
    sha = FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert sh(root, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split() == ["mem.md"]
    assert sh(root, "diff", "--cached", "--name-only").split() == ["staged.md"]
    assert sh(root, "diff", "--name-only").split() == ["base.md"]
    assert fsck(root) == "0:"


def test_a_symlinked_gitmodules_is_not_committed(tmp_path: Path) -> None:
    """git fsck (fsckObjects on every push and clone) rejects a `.gitmodules` that is a symlink."""
    root = person_repo(tmp_path / "m")
    os.symlink("/etc/passwd", root / ".gitmodules")
    os.symlink("../base.md", root / "GITMOD~1")
    head = sh(root, "rev-parse", "HEAD").strip()
    for name in (".gitmodules", "GITMOD~1"):
        with pytest.raises(StoreError, match="symlink named .gitmodules"):
            FolderStore(root).commit([name], "link", "wes")
    assert sh(root, "rev-parse", "HEAD").strip() == head
    assert fsck(root) == "0:"


def test_an_approved_entry_commits_only_itself_not_a_person_s_unsaved_edit_of_that_file(root: Path) -> None:
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    text = (root / "MEMORY.md").read_text()
    (root / "MEMORY.md").write_text(text.replace("## Facts\n", "## Facts\n\n- [stated] person's own draft\n", 1))
    queued = mem.update("Facts", "add", "[stated] the agent's entry", actor="agent:claude")
    assert queued.status == "queued"
    assert mem.approve(queued.id).status == "applied"
    patch = sh(root, "show", "HEAD", "--format=", "--", "MEMORY.md")
    added = [line for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
    written = [line for line in added if line.strip("+ ")]  # the section's spacing aside
    assert len(written) == 1 and "the agent's entry" in written[0], patch
    assert "person's own draft" in (root / "MEMORY.md").read_text()
    assert status(root) == " M MEMORY.md\n"
    assert fsck(root) == "0:"


@pytest.mark.parametrize("index_version", ["2", "4"])  # edited in process; left to `git update-index`
def test_a_lock_a_person_s_git_takes_the_moment_memtui_s_index_is_in_place_is_left_to_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index_version: str) -> None:
    """Once memtui's index.lock became the index, the name is free, and a person's `git add` may take it at once.
    memtui's commit then unlinked "its" lock on the way out: the person's, whose `git add` failed with "Unable to
    write new index file" (seen in CI). The person's git is made to take the lock at the first moment it can."""
    root = person_repo(tmp_path / "m")
    sh(root, "update-index", "--index-version", index_version)
    store = FolderStore(root)
    index = store.commits.index
    lock = root / ".git" / "index.lock"
    remember = index.remember

    def person_takes_the_lock(*args: object) -> object:
        lock.write_bytes(b"a person's git writing its index\n")
        return remember(*args)

    monkeypatch.setattr(index, "remember", person_takes_the_lock)
    (root / "mem.md").write_text("approved by a person\n")
    store.commit(["mem.md"], "mem", "wes")
    assert lock.read_bytes() == b"a person's git writing its index\n"
    lock.unlink()  # the person's git is done
    assert sh(root, "show", "HEAD:mem.md") == "approved by a person\n"
    assert status(root) == ""
