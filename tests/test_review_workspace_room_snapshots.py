"""SVG snapshots of the review workspace (#43): ten proposals an agent queued (nine pending, one that conflicts on
approval) at 80x24, 120x35 and 200x50, and Today, Search and Chat each given the screen with `z` at 120x35.

Deterministic as tests/test_app_snapshots.py: a hand-written memory built with the clock pinned, HOME, the state
folder and the config pinned, the watcher off. Update with `pytest --snapshot-update`, then look at each SVG.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import wait_for
from memtui.tui.app import MemtuiApp
from support.ten_proposals import ten_in_own_home


@pytest.fixture
def ten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ten_in_own_home(tmp_path, monkeypatch)


def ready(app: MemtuiApp) -> bool:
    from memtui.tui.diff import DiffView

    return bool(app.synced and app.folder_synced and app.tree.root.children and len(app.review.proposals) == 10
                and all(d.drawn for d in app.query(DiffView)))


async def settle(pilot) -> None:
    await wait_for(pilot, lambda: ready(pilot.app), what="the ten proposals")
    await pilot.pause(0.3)
    pilot.app.review.option_list.scroll_to_highlight(top=True)
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", [(80, 24), (120, 35), (200, 50)], ids=["80x24", "120x35", "200x50"])
def test_ten_proposals(snap_compare, ten: Path, size: tuple[int, int]) -> None:
    assert snap_compare(MemtuiApp(ten, watch=False), terminal_size=size, run_before=settle)


def _zoomed(key: str, ready_when):
    async def run(pilot) -> None:
        await settle(pilot)
        app = pilot.app
        await pilot.press(key)
        await wait_for(pilot, lambda: app.main.active_pane is not None and ready_when(app), what=f"{key}'s pane")
        pane = app.main.active_pane
        target = next(w for w in pane.query("*") if w.focusable
                      and not any(c.__name__ in ("Input", "TextArea") for c in type(w).__mro__))
        target.focus()
        await pilot.pause()
        await pilot.press("z")
        await wait_for(pilot, lambda: app.main.size.width == pilot.app.size.width, what="the main area zoomed")
        await pilot.pause(0.5)
    return run


def _today_loaded(app) -> bool:
    from memtui.tui.today import TodayPane

    return any(getattr(p, "report", None) is not None for p in app.query(TodayPane))


def test_today_zoomed(snap_compare, ten: Path) -> None:
    assert snap_compare(MemtuiApp(ten, watch=False), terminal_size=(120, 35), run_before=_zoomed("t", _today_loaded))


def test_search_zoomed(snap_compare, ten: Path) -> None:
    async def run(pilot) -> None:
        await _zoomed("slash", lambda app: True)(pilot)
        app = pilot.app
        from textual.widgets import Input

        box = app.main.active_pane.query_one(Input)
        box.value = "Kestrel"
        # Its hits come after the typing pause and a search in a thread (which builds the index first): a fixed
        # second was not always enough beside other work, and the snapshot then showed the empty pane.
        search = app.panes["search"]
        await wait_for(pilot, lambda: search.results and search._shown == search._seq, what="Kestrel's hits")
        app.main.active_pane.query(Input).first().blur()
        await pilot.pause(0.3)
    assert snap_compare(MemtuiApp(ten, watch=False), terminal_size=(120, 35), run_before=run)


def test_chat_zoomed(snap_compare, ten: Path) -> None:
    assert snap_compare(MemtuiApp(ten, watch=False), terminal_size=(120, 35),
                        run_before=_zoomed("c", lambda app: True))
