"""The last reads that had two readers, now one (issue #44, part 4): external changes by the git CLI's status alone,
whether or not GitPython is open; a Redis memory's git history imported through the owner's `git log` and object
reader; `memtui sync`'s reads of fetched commits through the owner.

Every name here comes from the attacker's side: files an agent wrote past memtui (a line break, a leading dash, an
option-looking name, a big file), a damaged index. Each must be listed the same way by a store that has opened
GitPython and one that has not, and a repository git cannot read must say so with what to do.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memtui.core.storage.folder import FolderStore
from memtui.core.storage.folder_external import SEEN_MIN_BYTES
from memtui.core.storage.store import StoreError, content_hash
from support.git_judge import person_repo

HOSTILE = ["-n.md", "--output=x.md", "tab\there.md", "sp ace.md", "ünï.md", ":(glob)*.md", "q\"uote.md"]


def _listing(store: FolderStore) -> list[tuple[str, bytes | None, bytes | None, str | None]]:
    return sorted((c.path, c.before, c.after, c.after_hash) for c in store.external_changes())


def _files(root: Path) -> list[tuple[str, bytes]]:
    return sorted((p.relative_to(root).as_posix(), p.read_bytes()) for p in root.rglob("*")
                  if p.is_file() and ".git" not in p.relative_to(root).parts)


def test_external_changes_are_the_same_with_gitpython_open_or_not(tmp_path: Path) -> None:
    """Once GitPython was open, folder_external asked its `repo.git.status` and lost the big file's hash and the one
    batch; the one reader now answers both stores alike, hostile names and a big file included."""
    root = person_repo(tmp_path / "m")
    (root / "mem.md").write_text("mem, changed by hand\n")
    (root / "base.md").unlink()
    for name in HOSTILE:
        (root / name).write_text(f"written past memtui as {name!r}\n")
    big = b"- [observed] a long log line\n" * (SEEN_MIN_BYTES // 28 + 1)
    (root / "big.md").write_bytes(big)
    before = _files(root)

    fresh = FolderStore(root)
    plain = _listing(fresh)
    assert not fresh._git.opened, "listing external changes opened GitPython"
    opened = FolderStore(root)
    with opened.git() as repo:
        assert repo is not None  # GitPython open, as after a blame or a patch
    assert opened._git.opened
    assert _listing(opened) == plain

    paths = [p for p, *_ in plain]
    assert sorted(paths) == sorted(["mem.md", "base.md", "big.md", *HOSTILE])
    by_path = {p: (b, a, h) for p, b, a, h in plain}
    assert by_path["mem.md"][:2] == (b"mem\n", b"mem, changed by hand\n")
    assert by_path["base.md"][:2] == (b"base\n", None)
    assert by_path["--output=x.md"][:2] == (None, b"written past memtui as '--output=x.md'\n")
    assert by_path["big.md"][2] == content_hash(big)  # the big file's hash, kept by either store
    assert _files(root) == before  # reading wrote nothing into the folder


def test_a_committed_file_with_a_line_break_in_its_name_shows_its_committed_bytes(tmp_path: Path) -> None:
    """A name the object reader's batch cannot carry is read file by file (through GitPython's tree, the one reader
    that can name it), not shown as new; a new one beside it is listed as new."""
    root = person_repo(tmp_path / "m")
    (root / "a\nb.md").write_text("committed\n")
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "odd name"], check=True)
    (root / "a\nb.md").write_text("changed past memtui\n")
    (root / "c\rd.md").write_text("new\n")
    assert sorted((c.path, c.before, c.after) for c in FolderStore(root).external_changes()) == [
        ("a\nb.md", b"committed\n", b"changed past memtui\n"), ("c\rd.md", None, b"new\n")]


def test_a_repository_git_cannot_read_says_so_and_what_to_do(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    (root / "mem.md").write_text("changed\n")
    (root / ".git" / "index").write_bytes(b"not an index: text an agent wrote over it\n")
    before = _files(root)
    store = FolderStore(root)
    for _ in range(2):  # the second time with GitPython open: the same answer
        with pytest.raises(StoreError, match=r"git cannot read the repository at .*index.*run `memtui doctor`"):
            store.external_changes()
        with store.git():
            pass
    assert _files(root) == before
