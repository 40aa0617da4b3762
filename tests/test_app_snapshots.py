"""SVG snapshots of the app: the main view, the review panel with a diff, a live diff, and each theme.

Deterministic: the demo memory is copied from one build with the clock pinned, HOME makes the header show
~/memory, the terminal size is fixed, the watcher is off (the live diff is driven by the same message the
watcher sends), and nothing in these views has a blinking cursor. Update with `pytest --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.messages import FilesChanged
from memtui.tui.viewer import MemoryViewer


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


async def settle(pilot) -> None:
    await wait_for(pilot, lambda: settled(pilot.app), what="the app to settle")
    await pilot.pause(0.1)


async def steady_review_list(pilot) -> None:
    """Where the review list scrolls to show its selection depends on when its wrapped rows were measured (under
    load, a frame later): once they are, put the selection at the top, so the picture is the same every run."""
    await pilot.pause(0.3)
    options = pilot.app.review.option_list
    options.scroll_to_highlight(top=True)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause(0.1)
    options.scroll_to_highlight(top=True)
    await pilot.pause(0.1)


def test_main_view(snap_compare, demo: Path) -> None:
    assert snap_compare(MemtuiApp(demo, watch=False), terminal_size=SIZE, run_before=settle)


def test_review_panel_with_diff(snap_compare, demo: Path) -> None:
    async def select_revision(pilot) -> None:
        await settle(pilot)
        pilot.app.review.select("p-0002")
        pilot.app.review.option_list.focus()
        await pilot.pause(0.1)

    assert snap_compare(MemtuiApp(demo, watch=False), terminal_size=SIZE, run_before=select_revision)


def test_live_diff(snap_compare, demo: Path) -> None:
    async def change_on_disk(pilot) -> None:
        await settle(pilot)
        synced = pilot.app.folder_synced
        memory = demo / "MEMORY.md"
        memory.write_text(memory.read_text().replace(
            "- Orion dashboard is paused until Q4\n",
            "- [stated] Orion dashboard restarts in Q4 (2026-08-20, chat)\n"
            "- [observed] Orion has 3 open incidents (2026-08-20, pagerduty)\n"))
        pilot.app.post_message(FilesChanged(frozenset({"MEMORY.md"})))
        viewer = pilot.app.query_one(MemoryViewer)
        await wait_for(pilot, lambda: viewer.state.ghosts and pilot.app.folder_synced > synced, what="the live diff")
        await pilot.pause(0.1)

    assert snap_compare(MemtuiApp(demo, watch=False), terminal_size=SIZE, run_before=change_on_disk)


@pytest.mark.parametrize("theme", ["memtui-dark", "memtui-light", "memtui-contrast"])
def test_theme(snap_compare, demo: Path, theme: str) -> None:
    assert snap_compare(MemtuiApp(demo, theme=theme, watch=False), terminal_size=SIZE, run_before=settle)


def test_revise_word_highlight(snap_compare, demo: Path) -> None:
    """A revise: the changed words of the old and the new entry marked, the strike's additions marked."""
    async def select_revision(pilot) -> None:
        await settle(pilot)
        pilot.app.review.select("p-0002")
        pilot.app.review.option_list.focus()
        await pilot.pause(0.1)

    assert snap_compare(MemtuiApp(demo, watch=False), terminal_size=(120, 42), run_before=select_revision)


def test_revise_side_by_side(snap_compare, demo: Path) -> None:
    async def split(pilot) -> None:
        await settle(pilot)
        pilot.app.review.select("p-0002")
        pilot.app.review.option_list.focus()
        await pilot.press("S")
        await pilot.pause(0.1)

    assert snap_compare(MemtuiApp(demo, watch=False), terminal_size=(160, 42), run_before=split)


def test_revise_wrapped_at_100_columns(snap_compare, demo: Path) -> None:
    """The diff's long lines wrap (from the start; W cuts them) under their text, numbers and signs in their own
    column, nothing cut. (It was order-dependent: the tree's sideways scrollbar came in some runs and not others;
    tests/test_tree_fit.py.)"""
    async def wrap(pilot) -> None:
        await settle(pilot)
        pilot.app.review.select("p-0002")
        pilot.app.review.option_list.focus()
        await pilot.pause(0.1)
        await steady_review_list(pilot)

    assert snap_compare(MemtuiApp(demo, watch=False), terminal_size=(100, 42), run_before=wrap)


def test_viewer_wrapped_at_100_columns(snap_compare, demo: Path) -> None:
    """The viewer wraps (from the start; W cuts): two long entries (one struck superseded) wrap under their text, the provenance symbol in
    the gutter of their first row only, the struck one readable to its `superseded DATE`."""
    from support.by_hand import write_committed
    from test_viewer_wrap import NEW, OLD

    text = (demo / "MEMORY.md").read_text()
    write_committed(demo, "MEMORY.md", text.replace(
        "- [stated] Uses uv, never pip, for Python projects (2026-04-18, chat)\n", OLD + NEW))

    async def wrap(pilot) -> None:
        await settle(pilot)
        viewer = pilot.app.query_one(MemoryViewer)
        viewer.go_to_line(next(i for i, ln in enumerate(viewer.state.lines) if ln == "## User"))
        await pilot.pause(0.1)
        await steady_review_list(pilot)

    assert snap_compare(MemtuiApp(demo, watch=False), terminal_size=(100, 42), run_before=wrap)
