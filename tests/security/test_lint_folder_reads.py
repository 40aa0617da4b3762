"""lint reads each folder's files through one descriptor of the folder (issue 41, "bounded under flood": walking
each of 50,000 paths link by link was half of a second lint). Every path an agent can plant must read exactly as the
store reads it: a symlink out of the root or into .git, a folder that is a symlink, a nested repository, a FIFO, a
missing file, a protected name; a file or folder swapped for a symlink after its folder was opened is not followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core.hygiene.lint import _Files, lint
from memtui.core.writing.memory import Memory
from tests.security.test_lint_cache import TOKEN, _memory


def _outcome(read, rel: str) -> object:
    try:
        return read(rel)
    except Exception as exc:  # the refusal itself is the outcome compared
        return type(exc).__name__, str(exc)


def test_each_planted_path_reads_as_the_store_reads_it(tmp_path: Path) -> None:
    root = _memory(tmp_path / "m")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "k.md").write_text(f"- key {TOKEN}\n")
    (root / "notes" / "out.md").symlink_to(outside / "k.md")
    (root / "notes" / "git.md").symlink_to(root / ".git" / "config")
    (root / "notes" / "inner.md").symlink_to(root / "notes" / "n0.md")  # inside the root: followed, read
    (root / "away").symlink_to(outside, target_is_directory=True)
    (root / "nested").mkdir()
    (root / "nested" / ".git").write_text("gitdir: /elsewhere\n")
    (root / "nested" / "x.md").write_text("- [stated] in a nested repository\n")
    os.mkfifo(root / "notes" / "fifo.md")
    rels = ["notes/n0.md", "notes/out.md", "notes/git.md", "notes/inner.md", "away/k.md", "nested/x.md",
            "notes/fifo.md", "notes/missing.md", "MEMORY.md", ".git/config", "notes/.memtui/x.md", "../x.md"]
    memory = Memory(root)
    store = memory.store
    with store.pinned_root(), _Files(memory) as files:
        fast = {rel: _outcome(files.read, rel) for rel in rels}
        slow = {rel: _outcome(store.read_checked, rel) for rel in rels}
        assert files.dirs.get("notes") is not None  # the control: the folder was read through its descriptor
    assert fast == slow
    assert fast["notes/n0.md"][1] and fast["notes/inner.md"][1] == fast["notes/n0.md"][1]
    refused = [rel for rel in rels if isinstance(fast[rel], tuple) and fast[rel][0] == "PathRefused"]
    assert {"notes/out.md", "notes/git.md", "away/k.md", "nested/x.md", ".git/config", "notes/fifo.md"} <= set(
        refused), fast
    assert fast["notes/missing.md"] == ("notes/missing.md", None)


def test_a_folder_swapped_for_a_symlink_after_it_was_opened_is_not_followed(tmp_path: Path) -> None:
    """The folder is read through the descriptor opened when it was checked: renaming it away and putting a link
    to the outside in its place leads nowhere outside, and a file swapped for a link is read by the store (refused)."""
    root = _memory(tmp_path / "m")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "n1.md").write_text(f"- key {TOKEN}\n")
    (outside / "n2.md").write_text(f"- key {TOKEN}\n")
    memory = Memory(root)
    with memory.store.pinned_root(), _Files(memory) as files:
        first = files.read("notes/n0.md")[1]
        assert first is not None
        os.rename(root / "notes", root / "kept")
        (root / "notes").symlink_to(outside, target_is_directory=True)
        got = files.read("notes/n1.md")[1]
        assert got is not None and TOKEN.encode() in got  # the key is the memory's own file's (now in kept/)
        assert got == (root / "kept" / "n1.md").read_bytes() != (outside / "n1.md").read_bytes()
        (root / "kept" / "n2.md").unlink()
        (root / "kept" / "n2.md").symlink_to(outside / "n2.md")
        with pytest.raises(Exception) as refused:
            files.read("notes/n2.md")
        assert "symlink" in str(refused.value)
    assert not [f for f in lint(Memory(root)) if "outside" in f.message]
