"""git's split index (memtui/core/storage/gitindex.py `Split`): a big index is written split by memtui, so a commit
rewrites a few kilobytes instead of every entry; a split index git wrote is read and edited in process. Checked with git
2.39 itself reading the result: `git status`, `git diff --cached`, `git fsck`, `git ls-files -s`, and a person's `git
add` between memtui's commits. Real repositories, real git."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from memtui.core.storage import folder_index, gitindex
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import StoreError

PAST = time.time() - 3 * 86400


def sh(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True,
                          env={**os.environ, **(env or {})})
    return done.stdout.decode("utf-8", "surrogateescape")


def repo(root: Path, count: int) -> Path:
    root.mkdir(parents=True)
    sh(root, "init", "-q", "-b", "main")
    for k in range(count):
        path = root / f"d{k % 7}" / f"f{k}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"{k}\n")
        os.utime(path, (PAST, PAST))
    sh(root, "add", "-A")
    sh(root, "commit", "-qm", "start")
    return root


@pytest.fixture
def small_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """memtui writes any index over 4 KB split (100,000 files' worth is what the default is for)."""
    monkeypatch.setattr(gitindex, "SPLIT_AT", 4096)


def index_bytes(root: Path) -> bytes:
    return (root / ".git" / "index").read_bytes()


def shared_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".git").glob("sharedindex.*"))


def git_agrees(root: Path) -> None:
    """git reads the index as HEAD's tree: nothing staged, nothing changed, every entry the committed object."""
    assert sh(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert sh(root, "diff", "--cached", "--name-only") == ""
    assert subprocess.run(["git", "-C", str(root), "fsck", "--strict"], capture_output=True).returncode == 0
    staged = sorted(line.split(" ", 1)[1].replace(" 0\t", "\t") for line in sh(root, "ls-files", "-s").splitlines())
    committed = sorted(f"{line.split()[2]}\t{line.split(chr(9), 1)[1]}" for line in
                       sh(root, "ls-tree", "-r", "HEAD").splitlines())
    assert staged == committed


def write(root: Path, rel: str, text: str) -> None:
    """A file written in the past: a `git status` between commits then records no racily clean entry (which the
    next commit would leave to git, as it does for a plain index)."""
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)
    os.utime(root / rel, (PAST, PAST))


def test_git_reads_memtui_s_split_index_after_many_commits(tmp_path: Path, small_split: None) -> None:
    root = repo(tmp_path / "m", 300)
    plain = len(index_bytes(root))
    store = FolderStore(root)
    rng = random.Random(5)
    for k in range(40):
        roll = rng.random()
        if roll < 0.5:
            rel = f"d{k % 7}/f{rng.randrange(300)}.md"
            if not (root / rel).exists():
                continue
            write(root, rel, f"changed {k}\n")
        elif roll < 0.8:
            rel = f"new/{k % 3}/n{k}.md"
            write(root, rel, f"new {k}\n")
        else:
            rel = f"d{k % 7}/f{rng.randrange(300)}.md"
            if not (root / rel).exists():
                continue
            (root / rel).unlink()
        assert store.commit([rel], f"write {k}", "wes")
        known = store.commits.index._index_known[-1]
        assert isinstance(known, gitindex.Split) and known.data == index_bytes(root)  # written in process
        if k % 10 == 0:
            git_agrees(root)
    git_agrees(root)
    assert gitindex.link_of(index_bytes(root)) is not None
    assert len(index_bytes(root)) < plain / 4  # a few entries and two bitmaps, not every entry
    assert len(shared_files(root)) == 1
    # git keeps it split (core.splitIndex unset) and a person's commit works on it
    write(root, "person.md", "mine\n")
    sh(root, "add", "person.md")
    sh(root, "commit", "-qm", "person")
    assert gitindex.link_of(index_bytes(root)) is not None
    git_agrees(root)


def test_a_person_s_git_add_between_two_memtui_commits_is_kept(tmp_path: Path, small_split: None) -> None:
    root = repo(tmp_path / "m", 300)
    store = FolderStore(root)
    write(root, "mem.md", "one\n")
    assert store.commit(["mem.md"], "memtui one", "wes")
    assert gitindex.link_of(index_bytes(root)) is not None
    write(root, "d1/f1.md", "the person's edit\n")
    write(root, "person.md", "the person's new file\n")
    sh(root, "add", "d1/f1.md", "person.md")  # git rewrites the split index (a replaced and an added entry)
    staged = sh(root, "diff", "--cached", "--name-only")
    assert staged.split() == ["d1/f1.md", "person.md"]
    write(root, "mem.md", "two\n")
    assert store.commit(["mem.md"], "memtui two", "wes")
    assert isinstance(store.commits.index._index_known[-1], gitindex.Split)  # git's split index was read in process
    assert sh(root, "show", "--name-only", "--format=", "HEAD").split() == ["mem.md"]  # not the person's files
    assert sh(root, "diff", "--cached", "--name-only") == staged  # still staged, as the person left them
    assert sh(root, "status", "--porcelain", "--untracked-files=no").split() == ["M", "d1/f1.md", "A", "person.md"]
    sh(root, "commit", "-qm", "person")
    git_agrees(root)


@pytest.mark.parametrize("after", [[], ["add"], ["rm"], ["add", "rm"]])
def test_memtui_reads_a_split_index_git_wrote(tmp_path: Path, after: list[str]) -> None:
    """Without memtui splitting anything (default SPLIT_AT): git's own split index, with replaced, added and
    deleted entries in its bitmaps, is edited in process and git reads the result."""
    root = repo(tmp_path / "m", 200)
    sh(root, "-c", "core.splitIndex=true", "update-index", "--split-index")
    link = gitindex.link_of(index_bytes(root))
    assert link is not None
    if "add" in after:
        write(root, "d2/f2.md", "changed by the person\n")
        write(root, "added.md", "added by the person\n")
        sh(root, "add", "d2/f2.md", "added.md")
        sh(root, "commit", "-qm", "person")
    if "rm" in after:
        sh(root, "rm", "-q", "d3/f3.md", "d4/f4.md")
        sh(root, "commit", "-qm", "person rm")
    assert gitindex.link_of(index_bytes(root)) == link  # still over git's shared index
    store = FolderStore(root)
    for k in range(3):
        write(root, "d5/f5.md" if k != 1 else "brand/new.md", f"memtui {k}\n")
        assert store.commit(["d5/f5.md" if k != 1 else "brand/new.md"], f"memtui {k}", "wes")
        assert isinstance(store.commits.index._index_known[-1], gitindex.Split)
        git_agrees(root)
    assert shared_files(root) == [f"sharedindex.{link.hex()}"]  # git's shared index, no new one


@pytest.mark.parametrize("damage", ["flip", "cut", "missing"])
def test_a_damaged_shared_index_is_refused_and_nothing_is_lost(tmp_path: Path, small_split: None,
                                                               damage: str) -> None:
    root = repo(tmp_path / "m", 300)
    write(root, "mem.md", "one\n")
    assert FolderStore(root).commit(["mem.md"], "memtui one", "wes")
    (shared,) = (root / ".git").glob("sharedindex.*")
    if damage == "flip":
        data = bytearray(shared.read_bytes())
        data[200] ^= 1
        shared.write_bytes(bytes(data))
    elif damage == "cut":
        shared.write_bytes(shared.read_bytes()[:-40])
    else:
        shared.unlink()
    head = sh(root, "rev-parse", "HEAD")
    index = index_bytes(root)
    write(root, "mem.md", "two\n")
    with pytest.raises(StoreError, match="shared index") as refused:
        FolderStore(root).commit(["mem.md"], "memtui two", "wes")
    assert "nothing was committed" in str(refused.value)
    assert sh(root, "rev-parse", "HEAD") == head and index_bytes(root) == index
    assert not (root / ".git" / "index.lock").exists()
    assert (root / "mem.md").read_text() == "two\n"
    if damage != "flip":
        # git refuses these too; a flipped byte it does not see (it checks an index's checksum only in fsck), and
        # memtui does not write it on under a sound checksum
        assert subprocess.run(["git", "-C", str(root), "status"], capture_output=True).returncode != 0


def test_a_shared_index_changed_under_a_running_store_is_checked_again(tmp_path: Path, small_split: None) -> None:
    root = repo(tmp_path / "m", 300)
    store = FolderStore(root)
    write(root, "mem.md", "one\n")
    assert store.commit(["mem.md"], "memtui one", "wes")
    (shared,) = (root / ".git").glob("sharedindex.*")
    data = bytearray(shared.read_bytes())
    data[300] ^= 1
    shared.write_bytes(bytes(data))
    write(root, "mem.md", "two\n")
    with pytest.raises(StoreError, match="shared index"):
        store.commit(["mem.md"], "memtui two", "wes")  # not edited from the copy the store keeps


def test_a_new_shared_index_is_written_past_git_s_share_of_changed_entries(tmp_path: Path,
                                                                          small_split: None) -> None:
    root = repo(tmp_path / "m", 100)
    store = FolderStore(root)
    write(root, "mem.md", "one\n")
    assert store.commit(["mem.md"], "memtui one", "wes")
    first = shared_files(root)
    assert len(first) == 1
    for k in range(30):  # 30 new files over ~100 entries: past 20%, a new shared index
        write(root, f"new/n{k}.md", f"{k}\n")
        assert store.commit([f"new/n{k}.md"], f"new {k}", "wes")
    assert len(shared_files(root)) == 2  # the old one stays until git's expiry, as git leaves it
    assert store.commits.index._index_known[-1].base_sha.hex() != first[0].split(".")[1]
    git_agrees(root)
    # a refresh that rewrote every entry's stat data (git status after a touch): the next commit re-splits
    for rel in sh(root, "ls-files", "-z").split("\0")[:-1]:
        os.utime(root / rel, (PAST + 60, PAST + 60))
    sh(root, "status", "--porcelain")
    big = len(index_bytes(root))
    write(root, "mem.md", "two\n")
    assert FolderStore(root).commit(["mem.md"], "memtui two", "wes")
    assert len(index_bytes(root)) < big
    git_agrees(root)


def test_fsyncs_per_commit_are_the_same_split_or_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {}
    for name, split_at in (("plain", 1 << 40), ("split", 4096)):
        monkeypatch.setattr(gitindex, "SPLIT_AT", split_at)
        root = repo(tmp_path / name, 300)
        store = FolderStore(root)
        write(root, "mem.md", "zero\n")
        assert store.commit(["mem.md"], "warm", "wes")
        synced = [0]
        real = os.fsync
        monkeypatch.setattr(os, "fsync", lambda fd: synced.__setitem__(0, synced[0] + 1) or real(fd))
        for k in range(3):
            write(root, "mem.md", f"{k}\n")
            assert store.commit(["mem.md"], f"w{k}", "wes")
        monkeypatch.setattr(os, "fsync", real)
        counts[name] = synced[0]
        assert (gitindex.link_of(index_bytes(root)) is not None) == (name == "split")
    assert counts["plain"] == counts["split"]


def test_an_expired_shared_index_is_removed_when_a_new_one_is_written(tmp_path: Path, small_split: None) -> None:
    root = repo(tmp_path / "m", 100)
    old = root / ".git" / "sharedindex.0123456789012345678901234567890123456789"
    old.write_bytes(b"left by an older git")
    os.utime(old, (PAST - 30 * 86400, PAST - 30 * 86400))
    recent = root / ".git" / "sharedindex.9876543210987654321098765432109876543210"
    recent.write_bytes(b"a day old")
    os.utime(recent, (PAST, PAST))
    write(root, "mem.md", "one\n")
    assert FolderStore(root).commit(["mem.md"], "memtui one", "wes")
    assert not old.exists() and recent.exists()
    git_agrees(root)


@pytest.mark.parametrize("seed", range(5))
def test_ewah_bitmaps_read_back_as_written(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        n = rng.choice([1, 63, 64, 65, 200, 5000])
        bits = sorted(rng.sample(range(n), rng.randrange(0, min(n, 70))))
        data = gitindex.ewah_encode(bits)
        got = gitindex.ewah_decode(data, 0, len(data))
        assert got == (bits, len(data))
    assert gitindex.ewah_decode(b"\0" * 7, 0, 7) is None


def test_a_one_shot_command_leaves_a_big_split_index_to_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            small_split: None) -> None:
    """As for a plain index: a store's first commit leaves a big (split + shared) index to git."""
    root = repo(tmp_path / "m", 300)
    sh(root, "-c", "core.splitIndex=true", "update-index", "--split-index")
    monkeypatch.setattr(folder_index, "INDEX_WALK_AT_ONCE", 4096)
    store = FolderStore(root)
    write(root, "mem.md", "one\n")
    assert store.commit(["mem.md"], "one", "wes")
    assert store.commits.index._index_known == []
    write(root, "mem.md", "two\n")
    assert store.commit(["mem.md"], "two", "wes")
    assert isinstance(store.commits.index._index_known[-1], gitindex.Split)
    git_agrees(root)


def test_by_default_memtui_never_splits_a_plain_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers of .git/index other than git's CLI (libgit2, isomorphic-git, GitPython's IndexFile) refuse a split
    index: memtui keeps a plain one plain however big, and edits a split one only where a person split it."""
    assert gitindex.SPLIT_AT is None
    monkeypatch.setattr(folder_index, "INDEX_WALK_AT_ONCE", 1)  # even a big index is edited in process from the start
    root = repo(tmp_path / "m", 300)
    store = FolderStore(root)
    for k in range(5):
        write(root, "mem.md", f"{k}\n")
        assert store.commit(["mem.md"], f"w{k}", "wes")
    assert gitindex.link_of(index_bytes(root)) is None
    assert not list((root / ".git").glob("sharedindex.*"))
    import git

    assert len(git.Repo(root).index.entries) == 301  # GitPython reads it
    git_agrees(root)
