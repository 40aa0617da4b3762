"""The app on Hermes' memories, with Hermes' own memory tool writing while it watches: the viewer shows entries as
entries (an entry's lines under one mark, `§` lines as rules) with the file's usage against Hermes' limit; Hermes'
writes arrive as external changes reviewed by entry; `a` commits one, `r` puts the approved bytes back exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import settled, wait_for
from memtui.core.grammar.formats import hermes as grammar
from memtui.tui.app import MemtuiApp
from memtui.tui.viewer import MemoryViewer
from support.fixtures_hermes import hermes, hermes_home, unchanged
from support.foreign import listing

SIZE = (120, 35)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    return hermes_home(tmp_path)


async def test_the_app_shows_hermes_entries_and_reviews_hermes_own_writes(folder: Path) -> None:
    from memtui.cli import start_history

    before = listing(folder)
    start_history(folder)  # what `memtui PATH` does before the app starts: history beside the folder
    approved_user = (folder / "USER.md").read_bytes()
    app = MemtuiApp(folder, user="wes")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.watcher is not None, timeout=30, what="the app")
        viewer = app.query_one(MemoryViewer)
        used = grammar.usage((folder / "MEMORY.md").read_text())
        rows = [viewer.row_text(r) for r in range(8)]
        assert rows[0] == f" • Project memtui: Python 3.11, Textual app.  {used} / 2,200 characters"
        assert rows[1] == " │ Run tests with: pytest -q -p no:cacheprovider"
        assert rows[2] == "   § ────────────"
        assert rows[3].startswith(" • Deploys go through GitHub Actions § release workflow")
        assert "untagged" not in "\n".join(rows)

        got = hermes(folder.parent, ("add", "memory", "CI cache key: uv.lock hash"),
                     ("replace", "user", "UTC+1", "Works in UTC+2 since March"))
        assert all(r["success"] for r in got), got
        await wait_for(pilot, lambda: {p.file for p in app.review.proposals} == {"MEMORY.md", "USER.md"},
                       timeout=20, what="Hermes' writes in the review")
        mem_change = next(p for p in app.review.proposals if p.file == "MEMORY.md")
        assert "\n@@ -6,0 +8,1 @@ added entry 4 · " in mem_change.diff, mem_change.diff
        await wait_for(pilot, lambda: viewer.row_text(0).endswith(f"{grammar.usage((folder / 'MEMORY.md').read_text())}"
                                                                   " / 2,200 characters"), what="the new usage")
        assert app.review.select(mem_change.id)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.memory.store.committed("MEMORY.md") == (folder / "MEMORY.md").read_bytes(),
                       what="Hermes' add committed")
        user_change = next(p for p in app.review.proposals if p.file == "USER.md")
        assert "replaced entry 2" in user_change.diff
        assert app.review.select(user_change.id)
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(*"not what I said", "enter")
        await wait_for(pilot, lambda: (folder / "USER.md").read_bytes() == approved_user, what="USER.md restored")
        await wait_for(pilot, lambda: not app.review.proposals, what="nothing left to review")
    unchanged(before, folder, {"MEMORY.md": (folder / "MEMORY.md").read_bytes()})
