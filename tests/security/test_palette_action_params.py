"""Names an agent wrote (a file, a section) reach the palette's actions as values: a name that reads as an action
string (`x'), quit('`) opens that file or names that section, and runs nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.commands import MemtuiCommands

HOSTILE = "x'), quit('"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


async def test_a_file_name_that_reads_as_an_action_string_opens_that_file(demo: Path) -> None:
    hostile = f"notes/{HOSTILE}.md"
    (demo / "notes").mkdir(exist_ok=True)
    (demo / hostile).write_text("# Odd\n\n- [stated] A file with an odd name (2026-01-01)\n")
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        provider = MemtuiCommands(app.screen)
        await provider.startup()
        assert hostile in provider.files
        run = next(run for name, run, _ in provider.commands() if name == f"Open file: {hostile}")
        assert await run()
        await wait_for(pilot, lambda: app.viewer_for(hostile) is not None, what="the odd file's viewer")
        assert app.is_running


async def test_a_section_name_that_reads_as_an_action_string_is_only_named(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        provider = MemtuiCommands(app.screen)
        provider.due = [HOSTILE]  # as if MEMORY.md had a section of that name over its cap
        run = next(run for name, run, _ in provider.commands() if name == f"Consolidate section: {HOSTILE}")
        assert await run()
        await pilot.pause()
        toasts = [str(t.render()) for t in app.screen.query("Toast")]
        assert any(f"Drafting a consolidation of {HOSTILE}…" in t for t in toasts), toasts
        assert app.is_running
