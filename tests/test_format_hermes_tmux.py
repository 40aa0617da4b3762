"""`memtui open --hermes` in a real terminal under tmux, as a newcomer runs it: Hermes' memories (~/.hermes/memories,
written by Hermes' own memory tool) shown as entries with their usage; Hermes writes while the app watches, the
review lists that write by entry, and `a` commits it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from support.fixtures_hermes import hermes, hermes_home, unchanged
from support.foreign import listing
from support.tmux import start_app, wait_screen

pytestmark = pytest.mark.tmux


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
def test_open_hermes_shows_entries_and_reviews_hermes_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            size: tuple[int, int]) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = hermes_home(tmp_path)  # HOME is tmp_path in the app, and no HERMES_HOME: ~/.hermes/memories
    before = listing(folder)
    tmux = start_app("memtui-hermes", tmp_path, "open --hermes", size, "2026-08-20T14:05")
    try:
        screen = wait_screen(tmux, lambda s: "• Project memtui: Python 3.11" in s and "/ 2,200 characters" in s,
                             "MEMORY.md's first entry with its usage")
        assert "~/.hermes/memories" in screen and "untagged" not in screen
        if size[0] >= 100:  # side by side: the whole file is on screen
            assert "│ Run tests with: pytest -q -p" in screen and "§ ────" in screen
        assert all(r["success"] for r in hermes(folder.parent, ("add", "memory", "CI cache key: uv.lock hash")))
        wait_screen(tmux, lambda s: "1 external" in s and "added entry 4" in s, "Hermes' add in the review")
        subprocess.run([*tmux, "send-keys", "-t", "app", "a"], check=True)
        wait_screen(tmux, lambda s: "1 external" not in s and "approving x-" in s, "the add approved")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert Memory(folder).store.committed("MEMORY.md") == (folder / "MEMORY.md").read_bytes()
    assert (folder / "MEMORY.md").read_text().endswith("\n§\nCI cache key: uv.lock hash")
    unchanged(before, folder, {"MEMORY.md": (folder / "MEMORY.md").read_bytes()})
