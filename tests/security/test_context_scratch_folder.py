"""Walking only the scratch folder keeps every rule of the whole walk: a scratch folder that is a link (out of the
memory, or into git's files) or a nested repository is not entered, so nothing there reaches a session's context."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memtui.core.recall.context import build_context
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.reading import MemoryReader
from memtui.core.writing.memory import Memory

FUTURE = "9999999999999"  # an expiry far ahead: a live note if it were listed


def _replace_with_link(folder: Path, target: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    folder.symlink_to(target, target_is_directory=True)


def test_a_scratch_folder_linked_out_of_the_memory_is_not_walked(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{FUTURE}-secret.md").write_text("the ssh key is hunter2\n")
    _replace_with_link(root / "scratch", outside)
    assert FolderStore(root).list_files("scratch/**/*.md") == []
    assert "hunter2" not in build_context(MemoryReader(root)).text


def test_a_scratch_folder_linked_into_git_is_not_walked(root: Path) -> None:
    _replace_with_link(root / "scratch", root / ".git")
    assert FolderStore(root).list_files("scratch/**/*") == []
    assert "[core]" not in build_context(MemoryReader(root)).text


def test_a_scratch_folder_that_is_its_own_repository_is_not_walked(root: Path, mem: Memory) -> None:
    nested = root / "scratch"
    nested.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / f"{FUTURE}-other.md").write_text("another repository's note\n")
    assert FolderStore(root).list_files("scratch/**/*.md") == [] == \
        [r for r in FolderStore(root).list_files("**/*.md") if r.startswith("scratch/")]
    assert "another repository" not in build_context(MemoryReader(root)).text


def test_a_hostile_scratch_name_in_the_batch_is_not_a_second_request(root: Path, mem: Memory) -> None:
    """A name the batch would split (a newline) cannot be a scratch note memtui lists; the batch refuses it whole
    rather than ask git for a path the name smuggles in."""
    store = FolderStore(root)
    assert store._plumbing_batch(["MEMORY.md\nHEAD:.memtui/config.toml"]) is None
    assert store.review_bases(["MEMORY.md"]) == {"MEMORY.md": store.review_base("MEMORY.md")}
