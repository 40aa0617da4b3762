"""The command palette runs the app's actions (`run_action`) like the keys do: a decision chosen by name works from
any tab (tests/security/test_palette_action_params.py: names reach the actions as values)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, palette_choose, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def status(root: Path, pid: str) -> str:
    return json.loads((root / ".memtui/queue" / f"{pid}.json").read_text())["status"]


async def choose(app: MemtuiApp, pilot, name: str) -> None:
    await pilot.press("ctrl+p")
    await palette_choose(pilot, name)
    await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="the palette to close")


async def test_the_palette_approves_from_inside_the_search_tab_where_the_a_key_does_not(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        pid = app.review.selected.id
        assert status(demo, pid) == "pending"
        await pilot.press("slash")
        await wait_for(pilot, lambda: app.active_plugin() is not None, what="the Search tab")
        assert app.check_action("approve", ()) is None  # the key is dimmed here: `a` is the search's text
        await choose(app, pilot, "Approve the selected proposal")
        await wait_for(pilot, lambda: status(demo, pid) == "applied", what=f"{pid} applied")
        assert app.chosen_action is None and app.check_action("approve", ()) is None  # only for that one run
