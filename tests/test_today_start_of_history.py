"""Today's changes do not include the start of history: the first commit memtui makes when it starts a history (a
Claude Code memory opened as it is, its history kept beside it; `memtui init --git`) is no change anyone made and
nothing can be undone to before it. A folder opened for the first time showed "1 applied", with `[u] undo last`
that then said there was nothing to undo. A person's own change after it is listed, and so is a later commit that
only borrows memtui's subject."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memtui.core.storage.init import init_root
from memtui.core.storage.store import INIT_SUBJECT
from memtui.core.timeline.today import today
from memtui.core.writing.memory import Memory
from support.fixtures_claude_code import memory_folder, write_memory
from support.foreign import listing


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return tmp_path


def test_a_foreign_folder_opened_today_has_no_change_until_someone_makes_one(home: Path) -> None:
    folder = write_memory(memory_folder(home))
    before = listing(folder)
    memory = Memory(folder)
    assert memory.store.ensure_history()  # as the app and the CLI do on a first open
    assert memory.store.history()[-1].message.startswith(INIT_SUBJECT)  # memtui's history beside it was started
    assert today(memory).changes == []
    assert listing(folder) == before
    done = memory.update("", "add", "Deploys go out on Tuesdays", actor="wes")
    assert done.status == "applied"
    changes = today(Memory(folder)).changes
    assert [(c.actor, c.status, c.file) for c in changes] == [("wes", "applied", "MEMORY.md")]


def test_a_new_memory_s_first_commit_is_not_listed_but_a_later_commit_with_its_subject_is(tmp_path: Path) -> None:
    root = tmp_path / "m"
    init_root(root)
    assert today(Memory(root)).changes == []
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n- [stated] hand made\n")
    subprocess.run(["git", "-C", str(root), "commit", "-qam", INIT_SUBJECT], check=True)
    changes = today(Memory(root)).changes
    assert [(c.action, c.file, c.after) for c in changes] == [("commit", "MEMORY.md", INIT_SUBJECT)]
