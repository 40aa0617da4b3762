"""The live diff of an external append is cheap: it scrolls in the frame that shows it, and lines that did not
change keep their rendered strips (only the new and the changed lines are styled again)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.viewer import MemoryViewer
from support.by_hand import write_committed

REL = "notes/long.md"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    root = demo_root(tmp_path, monkeypatch, demo_template)
    body = "".join(f"- [observed] Long note entry number {i} (2026-08-01, chat)\n" for i in range(120))
    write_committed(root, REL, "# Long\n\n" + body)
    return root


async def loaded_once_more(viewer: MemoryViewer, before: int) -> None:
    """Wait for the next load with no frame in between the checks: the event loop turns, nothing sleeps."""
    deadline = time.monotonic() + 5
    while viewer.loads == before:
        assert time.monotonic() < deadline, "the viewer never loaded the append"
        await asyncio.sleep(0)


async def open_at_end(app: MemtuiApp, pilot, wrap: bool) -> MemoryViewer:
    await wait_for(pilot, lambda: settled(app), what="the app to settle")
    app.diff_wrap = wrap
    app.open_file(REL)
    await wait_for(pilot, lambda: app.viewer_for(REL) is not None and app.viewer_for(REL).state is not None,
                   what="the long note")
    viewer = app.viewer_for(REL)
    viewer.wrap = wrap
    await pilot.pause()
    # Laid out first (its scrollbar shown): Textual drops a scroll asked for before the layout after a load.
    await wait_for(pilot, lambda: viewer.allow_vertical_scroll, what="the note laid out")
    viewer.scroll_end(animate=False, immediate=True)
    await wait_for(pilot, lambda: viewer.max_scroll_y > 0 and viewer.scroll_offset.y == viewer.max_scroll_y,
                   what="the end of the note")
    return viewer


@pytest.mark.parametrize("wrap", [True, False])
async def test_an_append_at_the_end_is_scrolled_to_in_the_frame_that_loads_it(demo: Path, wrap: bool) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_at_end(app, pilot, wrap)
        with (demo / REL).open("a") as fh:
            fh.write("- [observed] zqnew appended (2026-08-20, shell)\n")
        before = viewer.loads
        viewer.reload()
        await loaded_once_more(viewer, before)
        # No refresh has run since the load: the scroll that shows the new line is already done.
        assert viewer.scroll_offset.y == viewer.max_scroll_y
        last = viewer.screen_text().splitlines()[-1]
        assert "zqnew" in last and last.startswith("+")


async def append_and_load(demo: Path, viewer: MemoryViewer, line: str) -> None:
    with (demo / REL).open("a") as fh:
        fh.write(line)
    before = viewer.loads
    viewer.reload()
    await loaded_once_more(viewer, before)


@pytest.mark.parametrize("wrap", [True, False])
async def test_scrolled_by_an_append_the_other_lines_keep_their_strips(demo: Path, wrap: bool) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_at_end(app, pilot, wrap)
        height = viewer.scrollable_content_region.height
        shown = [viewer.render_line(y) for y in range(height)]
        await append_and_load(demo, viewer, "- [observed] zqmore appended (2026-08-20, shell)\n")
        again = [viewer.render_line(y) for y in range(height)]
        # Every line moved up (a row, or the rows of the top line where it wraps) and kept its strip (not styled
        # again); the new one, marked, is the last row.
        assert all(any(a is b for b in shown) for a in again[:-1])
        assert "zqmore" in again[-1].text and again[-1].text.startswith("+")
        # What the append changed out of sight is drawn anew: the heading counts the new entry.
        viewer.scroll_to(y=0, animate=False)
        assert "121" in viewer.render_line(0).text
