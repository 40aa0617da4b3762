"""Attacks on the in-process index edit (memtui/core/storage/gitindex.py): names and file data that imitate another
entry, paths that are prefixes of others, a broken index, a lock a person's git holds. Real git is the judge."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memtui.core.storage import gitindex
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import StoreError
from support.git_judge import fsck, sh, status
from security.test_attack2 import fake_git
from test_gitindex import PAST, git_sets, index_of, same_as_git


def person_repo(path: Path, files: dict[str, bytes]) -> Path:
    path.mkdir(parents=True)
    sh(path, "init", "-q", "-b", "main")
    sh(path, "config", "user.name", "person")
    sh(path, "config", "user.email", "person@example.com")
    for rel, data in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(data)
        os.utime(path / rel, (PAST, PAST))
    sh(path, "add", ".")
    sh(path, "commit", "-qm", "base")
    return path


def edited_in_process(store: FolderStore, root: Path) -> bool:
    known = store.commits.index._index_known
    return bool(known) and known[-1].data == (root / ".git" / "index").read_bytes()


# A name holding another entry's flags and name: bytes 80 04 "b.md" NUL read as "b.md", stage 0, assume-valid.
DECOY_NAME = "zz\u0080\u0004b.md"


def committed_in_process(root: Path, rel: str, text: str) -> None:
    """memtui commits `rel` written with `text`, its index edited in process, and git finds the result sound."""
    (root / rel).write_text(text)
    store = FolderStore(root)
    assert store.commit([rel], "memtui write", "wes")
    assert edited_in_process(store, root)
    assert status(root) == "" and fsck(root) == "0:"


@pytest.mark.parametrize("real", [True, False])
def test_a_name_that_holds_another_entry_s_flags_and_name_is_not_taken_for_it(tmp_path: Path, real: bool) -> None:
    files = {DECOY_NAME: b"decoy\n", "a.md": b"a\n"}
    if real:
        files["b.md"] = b"b\n"
    root = person_repo(tmp_path / "m", files)
    data, mtime = index_of(root)
    assert b"\x80\x04b.md\0" in data
    sha = bytes(range(40, 60))
    for changes in [{"b.md": (sha, 0o100644)}, {"b.md": None}, {"b.md": (sha, 0o100755), "a.md": None}]:
        assert same_as_git(root, data, mtime, changes) is not None, changes
    committed_in_process(root, "b.md", "memtui's b\n")
    assert sh(root, "ls-files", "-s", DECOY_NAME).split()[1] == sh(root, "rev-parse", f"HEAD:{DECOY_NAME}").strip()


def test_file_size_and_mtime_that_spell_another_entry_s_flags_and_name_are_not_taken_for_it(tmp_path: Path) -> None:
    """An agent's file of 90,880 bytes, its mtime set to 90,880 s: its entry's size and mtime fields are
    00 01 'c' 00, the flags and name of an entry "c". A reader searching the index for that pattern would edit the
    middle of this entry."""
    root = person_repo(tmp_path / "m", {"aaa.md": b"x" * 0x00016300, "zzz.md": b"z\n"})
    os.utime(root / "aaa.md", (0x00016300, 0x00016300))
    sh(root, "update-index", "--refresh")
    data, mtime = index_of(root)
    assert data.count(b"\x00\x01c\x00") >= 2
    sha = bytes(range(60, 80))
    for changes in [{"c": (sha, 0o100644)}, {"c": None}, {"aaa.md": (sha, 0o100644), "c": (sha, 0o100644)}]:
        assert same_as_git(root, data, mtime, changes) is not None, changes
    committed_in_process(root, "c", "c\n")
    assert sh(root, "ls-files", "-s", "aaa.md").split()[1] == sh(root, "rev-parse", "HEAD:aaa.md").strip()


def test_paths_that_are_prefixes_of_others_each_get_their_own_entry(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m", {"notes/a.md.bak": b"bak\n", "notes/a.mdx": b"x\n", "notes/a-md/y.md": b"y\n",
                                        "notes.md": b"n\n", "notes/a.m": b"m\n"})
    store = FolderStore(root)
    for rel in ["notes/a.md", "notes/a", "note", "notes/a.md.ba"]:
        (root / rel).write_text(f"{rel}\n")
        os.utime(root / rel, (PAST, PAST))  # `git status` below stats it: not racily clean in its index
        assert store.commit([rel], f"add {rel}", "wes")
        assert edited_in_process(store, root), rel
        assert status(root) == ""
    (root / "notes/a.md").unlink()
    assert store.commit(["notes/a.md"], "drop notes/a.md", "wes")
    assert edited_in_process(store, root)
    assert status(root) == "" and fsck(root) == "0:"
    assert "notes/a.md.bak" in sh(root, "ls-files") and "notes/a.md\n" not in sh(root, "ls-files")


def test_a_file_where_a_folder_is_tracked_is_left_to_git(tmp_path: Path) -> None:
    """git drops the entries a new path clashes with (a file `x` for `x/y.md`): left to git itself."""
    root = person_repo(tmp_path / "m", {"x": b"x\n", "base.md": b"b\n"})
    data, mtime = index_of(root)
    index = gitindex.Index.parse(data, mtime)
    assert gitindex.set_entries(index, {"x/y.md": (bytes(range(20)), 0o100644)}, mtime) is None
    assert gitindex.set_entries(index, {"base.md/z": (bytes(range(20)), 0o100644)}, mtime) is None


@pytest.mark.parametrize("damage", ["flipped", "truncated", "no trailer"])
def test_a_broken_index_is_not_fixed_silently(tmp_path: Path, damage: str) -> None:
    """A corrupt index must reach git, which refuses it and says so; memtui must not write a sound one over it."""
    root = person_repo(tmp_path / "m", {"mem.md": b"mem\n", "base.md": b"base\n"})
    path = root / ".git" / "index"
    data = bytearray(path.read_bytes())
    if damage == "flipped":
        data[70] ^= 0x20
    elif damage == "truncated":
        data = data[:len(data) // 2]
    else:
        data = data[:-20]
    path.write_bytes(bytes(data))
    head = sh(root, "rev-parse", "HEAD").strip()
    store = FolderStore(root)
    (root / "mem.md").write_text("memtui\n")
    with pytest.raises(StoreError) as err:
        store.commit(["mem.md"], "memtui write", "wes")
    assert "index" in str(err.value) and "nothing was committed" in str(err.value).lower()
    assert sh(root, "rev-parse", "HEAD").strip() == head
    (root / "mem.md").write_text("mem\n")  # the same tree: only git's index would be set
    with pytest.raises(StoreError):
        store.commit(["mem.md"], "memtui write", "wes")
    assert path.read_bytes() == bytes(data)
    assert not (root / ".git" / "index.lock").exists() and not list((root / ".git").glob("memtui-index-*"))


def test_an_index_lock_a_person_s_git_holds_is_waited_for_then_refused(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m", {"mem.md": b"mem\n", "base.md": b"base\n"})
    fake = fake_git(root)  # a live git in the repository: its lock is not cleared as stale
    try:
        _held_lock(root)
    finally:
        fake.kill()
        fake.wait()


def _held_lock(root: Path) -> None:
    store = FolderStore(root)
    store.index_wait = 0.2
    (root / "mem.md").write_text("first\n")
    assert store.commit(["mem.md"], "first", "wes")
    assert edited_in_process(store, root)
    before = (root / ".git" / "index").read_bytes()
    head = sh(root, "rev-parse", "HEAD").strip()
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"a person's git is writing this\n")
    (root / "mem.md").write_text("second\n")
    t0 = time.monotonic()
    with pytest.raises(StoreError) as err:
        store.commit(["mem.md"], "second", "wes")
    assert time.monotonic() - t0 >= 0.2
    assert "index.lock" in str(err.value) and "nothing was committed" in str(err.value)
    assert sh(root, "rev-parse", "HEAD").strip() == head
    assert (root / ".git" / "index").read_bytes() == before
    assert lock.read_bytes() == b"a person's git is writing this\n"
    # The same tree (only the index to set): the entry waits for the next commit, the person's lock untouched.
    (root / "mem.md").write_text("first\n")
    assert store.commit(["mem.md"], "nothing new", "wes") is None
    assert (root / ".git" / "index").read_bytes() == before and store.commits.index.behind
    assert lock.read_bytes() == b"a person's git is writing this\n"
    lock.unlink()
    (root / "base.md").write_text("changed\n")
    assert store.commit(["base.md"], "next", "wes")
    assert not store.commits.index.behind and edited_in_process(store, root)
    assert status(root) == "" and fsck(root) == "0:"


def test_an_index_a_person_changed_after_memtui_wrote_it_is_walked_again(tmp_path: Path) -> None:
    """The walk memtui keeps is used only while the file's bytes are exactly the ones it wrote."""
    root = person_repo(tmp_path / "m", {"mem.md": b"mem\n", "base.md": b"base\n"})
    store = FolderStore(root)
    (root / "mem.md").write_text("first\n")
    assert store.commit(["mem.md"], "first", "wes")
    (root / "person.md").write_text("staged by a person\n")
    os.utime(root / "person.md", (PAST, PAST))
    sh(root, "add", "person.md")  # a new entry before mem.md's: every offset memtui kept is now wrong
    (root / "mem.md").write_text("second\n")
    assert store.commit(["mem.md"], "second", "wes")
    assert edited_in_process(store, root)
    assert sh(root, "diff", "--cached", "--name-only") == "person.md\n"  # still staged, not in memtui's commit
    assert sh(root, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == ["mem.md"]
    assert status(root) == "A  person.md\n" and fsck(root) == "0:"
    data, mtime = index_of(root)
    expected = git_sets(root, data, mtime, {"mem.md": (bytes(range(20)), 0o100644)})
    known = store.commits.index._index_known
    assert gitindex.set_entries(known[-1], {"mem.md": (bytes(range(20)), 0o100644)}, mtime).data \
        == expected
