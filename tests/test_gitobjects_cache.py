"""Objects read in process are kept by sha once checked (an object never changes): the same commit and blob are
inflated once, not once per read; what HEAD names is looked up afresh each time, so a commit made meanwhile (by
memtui or a person's git) is seen; big objects are not kept, and what is kept stays under its bound."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memtui.core.storage import gitobjects
from memtui.core.storage.folder import FolderStore


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "memory"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "MEMORY.md").write_text("# Memory\n\n## Facts\n\n- [stated] one\n")
    (r / "big.md").write_bytes(b"x" * (gitobjects.OBJECT_CACHE_ONE + 1))
    git(r, "add", "-A")
    git(r, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return r


@pytest.fixture
def inflated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The loose objects read from disk, by sha."""
    seen: list[str] = []
    real = gitobjects.read_file

    def counting(path: Path | str) -> bytes:
        where = Path(path)  # read_file takes a str or a Path (the loose objects' path is joined as a str)
        if where.parent.parent.name == "objects":
            seen.append(where.parent.name + where.name)
        return real(path)

    monkeypatch.setattr(gitobjects, "read_file", counting)
    return seen


def test_a_file_read_again_is_not_inflated_again(root: Path, inflated: list[str]) -> None:
    store = FolderStore(root)
    assert store.review_base("MEMORY.md") == (root / "MEMORY.md").read_bytes()
    first = list(inflated)
    assert first  # commit, tree, blob
    for _ in range(5):
        assert store.review_base("MEMORY.md") == (root / "MEMORY.md").read_bytes()
    assert inflated == first


def test_a_commit_made_meanwhile_is_seen(root: Path, inflated: list[str]) -> None:
    store = FolderStore(root)
    assert b"one" in store.review_base("MEMORY.md")
    (root / "MEMORY.md").write_text("# Memory\n\n## Facts\n\n- [stated] two\n")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")  # a person's git
    assert b"two" in store.review_base("MEMORY.md")
    git(root, "reset", "-q", "--hard", "HEAD~1")  # and back: the first commit's objects, kept, are right again
    assert b"one" in store.review_base("MEMORY.md")


def test_a_big_object_is_read_each_time_and_the_kept_ones_stay_bounded(root: Path, inflated: list[str]) -> None:
    store = FolderStore(root)
    blob = git(root, "rev-parse", "HEAD:big.md").strip()
    for _ in range(3):
        assert store.review_base("big.md") == (root / "big.md").read_bytes()
    assert inflated.count(blob) == 3
    for k in range(40):  # many objects of 200 KB: what is kept never passes the bound
        (root / f"n{k}.md").write_bytes(bytes([65 + k % 26]) * (200 << 10) + str(k).encode())
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "many")
    batch = store._objects()
    for k in range(40):
        assert store.review_base(f"n{k}.md") == (root / f"n{k}.md").read_bytes()
        assert batch._objs_bytes <= gitobjects.OBJECT_CACHE_BYTES
