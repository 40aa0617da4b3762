"""A newcomer's first screen at 80 columns, on a memory memtui did not make: the header keeps what waits for a
person (a long path gives way first), and an empty review queue, stacked under the file, is its title alone, so the
file gets the room."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import wait_for
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader
from memtui.tui.review import ReviewPanel
from support.fixtures_claude_code import memory_folder, write_memory
from support.foreign import listing


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return write_memory(memory_folder(tmp_path, "/home/wes/src/a-project-with-a-long-name/billing"))


def header_text(app: MemtuiApp) -> str:
    return str(app.query_one(MemtuiHeader).render())


async def test_at_80_columns_the_header_keeps_the_counts_and_an_empty_queue_gives_the_file_the_room(folder: Path) -> None:
    before = listing(folder)
    app = MemtuiApp(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(ReviewPanel)
        await wait_for(pilot, lambda: panel.loaded and "0 pending" in header_text(app), what="the header's count")
        text = header_text(app).rstrip()
        assert len(text) <= 80 and "…" in text and text.endswith("/memory  ·  0 pending  ·  history beside the folder")
        await wait_for(pilot, lambda: panel.has_class("-empty") and panel.size.height <= 2, what="the empty queue")
        main = app.query_one("#main")
        assert main.size.height >= 16, main.size  # the file, not an empty list, has the screen
        # Something arrives: the queue opens again.
        from memtui.core.writing.memory import Memory

        r = Memory(folder).update("", "add", "Prefers short answers", actor="agent:claude", file="user_role.md")
        assert r.status == "queued", r.message
        await wait_for(pilot, lambda: not panel.has_class("-empty") and panel.size.height > 6, what="the queue")
        await wait_for(pilot, lambda: "·  1 pending  ·" in header_text(app), what="the new count")
    after = listing(folder)
    assert after == before  # a proposal waits beside the folder: nothing in it changed


async def test_at_120_columns_the_header_is_whole(folder: Path) -> None:
    app = MemtuiApp(folder)
    async with app.run_test(size=(140, 30)) as pilot:
        panel = app.query_one(ReviewPanel)
        await wait_for(pilot, lambda: panel.loaded and " files" in header_text(app), what="the header")
        text = header_text(app)
        assert "…" not in text and "a-project-with-a-long-name-billing/memory" in text and " files" in text
        assert not app.screen.has_class("-narrow") and panel.size.height > 6  # side by side: nothing collapses
