"""The viewer wraps long lines (from the start; W cuts them and wraps them again) under their text, the provenance symbol on the first row only, struck
history readable to its end; the cursor, paging and the end of the file stay in view; a huge file stays cheap."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.viewer import SYMBOLS, MemoryViewer
from support.by_hand import write_committed

OLD = ("- ~~[stated] Uses uv for every Python project and never pip, because the lockfile keeps the CI builds "
       "reproducible across the whole team (2026-04-18, chat)~~ superseded 2026-08-20\n")
NEW = ("- [stated] Uses uv for every Python project and never pip or poetry, because the lockfile keeps the CI "
       "builds reproducible across the whole team and on every laptop (2026-08-20, chat)\n")


def long_entries(root: Path) -> None:
    """Two long entries of Preferences in place of a short one: the old struck superseded, the new current."""
    text = (root / "MEMORY.md").read_text()
    short = "- [stated] Uses uv, never pip, for Python projects (2026-04-18, chat)\n"
    assert short in text
    write_committed(root, "MEMORY.md", text.replace(short, OLD + NEW))


@pytest.fixture
def long_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    root = demo_root(tmp_path, monkeypatch, demo_template)
    long_entries(root)
    return root


async def viewer_of(pilot) -> MemoryViewer:
    await wait_for(pilot, lambda: settled(pilot.app), what="the app to settle")
    return pilot.app.query_one(MemoryViewer)


def rows_holding(screen: list[str], start: str, nth: int = 0) -> list[str]:
    """The screen rows of the (nth) entry whose first row holds `start`, its continuation rows after it."""
    first = [k for k, row in enumerate(screen) if start in row][nth]
    out = [screen[first]]
    for row in screen[first + 1:]:
        if row[:3].strip() or not row.strip():  # a gutter with a mark or symbol, or a blank line: the next line
            break
        out.append(row)
    return out


async def test_the_viewer_wraps_from_the_start_and_w_cuts_then_wraps_again(long_demo: Path) -> None:
    async with MemtuiApp(long_demo, watch=False).run_test(size=(100, 64)) as pilot:
        viewer = await viewer_of(pilot)
        assert viewer.wrap and pilot.app.diff_wrap  # on from the start: nothing is cut at the edge
        screen = viewer.screen_text().split("\n")
        width = viewer.scrollable_content_region.width
        assert all(len(row) <= width for row in screen)
        old = rows_holding(screen, "[stated] Uses uv for every Python")
        new = rows_holding(screen, "[stated] Uses uv for every Python", 1)
        assert len(old) > 1 and len(new) > 1
        # The symbol in the gutter of the first row, a blank gutter under it; the text reads to its end.
        assert old[0][1] == SYMBOLS["stated"] and new[0][1] == SYMBOLS["stated"]
        assert all(row[:3] == "   " for row in old[1:] + new[1:])
        # Struck history is drawn struck through, without its `~~`, and reads to its `superseded DATE`.
        assert " ".join(row[3:].strip() for row in old) == " ".join(OLD.replace("~~", "").strip().split())
        assert " ".join(row[3:].strip() for row in new) == " ".join(NEW.strip().split())
        assert viewer.max_scroll_x == 0  # nothing to scroll sideways to
        wrapped = viewer.screen_text()
        await pilot.press("W")
        assert not viewer.wrap and not pilot.app.diff_wrap
        await pilot.pause(0.1)
        cut = viewer.screen_text()
        assert "superseded 2026-08-20" not in cut and "every laptop" not in cut  # cut at the edge
        assert viewer.max_scroll_x > 0  # and there to scroll sideways to
        await pilot.press("W")
        assert viewer.wrap
        await pilot.pause(0.1)
        assert viewer.screen_text() == wrapped


async def test_a_viewer_opened_while_wrap_is_on_wraps(long_demo: Path) -> None:
    async with MemtuiApp(long_demo, watch=False).run_test(size=(100, 42)) as pilot:
        await viewer_of(pilot)
        await pilot.press("W", "W")  # off and on again: the setting a viewer opened later starts with
        pilot.app.open_file("decisions/2026-api.md")
        await wait_for(pilot, lambda: len(pilot.app.query(MemoryViewer)) == 2
                       and all(v.state is not None for v in pilot.app.query(MemoryViewer)), what="the second viewer")
        other = [v for v in pilot.app.query(MemoryViewer) if v.rel == "decisions/2026-api.md"][0]
        await pilot.pause(0.1)
        assert other.wrap
        assert "one TypeScript client, no schema drift (2026-08-20, meeting/api-review)" in " ".join(
            row[3:].strip() for row in other.screen_text().split("\n"))


async def test_the_cursor_stays_whole_on_screen_when_lines_wrap(long_demo: Path) -> None:
    async with MemtuiApp(long_demo, watch=False).run_test(size=(100, 30)) as pilot:
        viewer = await viewer_of(pilot)
        for _ in range(len(viewer.entry_cursor.shown_lines()) + 2):
            await pilot.press("j")
            await pilot.pause(0)
            screen = viewer.screen_text().split("\n")
            entry = viewer.entry_cursor.entry_at(viewer.cursor)
            mine = [k for k, row in enumerate(screen) if row.startswith("▌")]
            assert mine, f"the cursor's line {entry.raw!r} is off the screen"
            shown = rows_holding(screen[mine[0]:], "▌")
            # The whole entry, then what the viewer flags after it (untagged, …).
            assert " ".join(row[3:].strip() for row in shown).startswith(" ".join(entry.raw.strip().split())), screen
        await pilot.press("end")
        await pilot.pause(0.1)
        assert "[stated] Public API uses tRPC" in viewer.screen_text()


async def test_page_down_in_wrap_skips_no_row(long_demo: Path) -> None:
    async with MemtuiApp(long_demo, watch=False).run_test(size=(100, 24)) as pilot:
        viewer = await viewer_of(pilot)
        await pilot.pause(0.1)
        seen = viewer.screen_text().split("\n")
        for _ in range(10):
            viewer.action_page_down()
            await pilot.pause(0)
            page = viewer.screen_text().split("\n")
            seen += page
        words = " ".join(" ".join(row[3:] for row in seen).split())
        for line in (long_demo / "MEMORY.md").read_text().splitlines():
            if line.startswith("- "):
                assert " ".join(line.replace("~~", "").split()) in words, line


async def test_wrapping_a_huge_file_costs_the_screen_not_the_file(tmp_path: Path, monkeypatch,
                                                                  demo_template: Path) -> None:
    """A 20 MB log of long lines: wrapped (from the start, and again after W twice), scrolled to its end and paged,
    only what shows is wrapped."""
    root = demo_root(tmp_path, monkeypatch, demo_template)
    line = "- 09:12 [observed] " + "the nightly invoice job wrote another long line of its log " * 3 + "\n"
    (root / "log" / "huge.md").write_text("# huge\n\n" + line * (20_000_000 // len(line)))
    async with MemtuiApp(root, watch=False).run_test(size=(100, 40)) as pilot:
        await viewer_of(pilot)
        pilot.app.open_file("log/huge.md")
        await wait_for(pilot, lambda: any(v.rel == "log/huge.md" and v.state is not None
                                          for v in pilot.app.query(MemoryViewer)), what="the huge log")
        viewer = next(v for v in pilot.app.query(MemoryViewer) if v.rel == "log/huge.md")
        await pilot.pause(0.2)
        await pilot.press("W", "W", "end", "pageup", "end")
        await pilot.press("end")
        await pilot.pause(0.05)
        screen = viewer.screen_text().split("\n")
        # Each line of this log wraps to 4 rows: the screen's dozen or so lines are the ones wrapped, not 300,000.
        assert len(viewer._heights) < 200, "wrap counted rows of lines that never showed"
        assert viewer.max_scroll_y > len(viewer.state.lines) - 40
        # The file's last line whole at the bottom (below it at most the rows a whole line more would not fit in).
        shown = [row for row in screen if row.strip()]
        assert shown[-1].rstrip().endswith("of its log") and len(screen) - len(shown) < 6
        assert all(len(row) <= viewer.scrollable_content_region.width for row in screen)


async def test_a_wider_terminal_wraps_the_lines_again_and_a_same_size_resize_keeps_them(long_demo: Path) -> None:
    # The viewer keeps its wrapped rows through a resize that changes nothing (Textual sends one as the layout
    # settles at start-up); a real change of width wraps every line again.
    async with MemtuiApp(long_demo, watch=False).run_test(size=(100, 64)) as pilot:
        viewer = await viewer_of(pilot)
        narrow = rows_holding(viewer.screen_text().split("\n"), "[stated] Uses uv for every Python", 1)
        await pilot.resize_terminal(100, 64)
        await pilot.pause(0.1)
        assert rows_holding(viewer.screen_text().split("\n"), "[stated] Uses uv for every Python", 1) == narrow
        await pilot.resize_terminal(200, 64)
        await wait_for(pilot, lambda: len(rows_holding(viewer.screen_text().split("\n"),
                                                       "[stated] Uses uv for every Python", 1)) < len(narrow),
                       what="the entry wrapped in fewer rows")
        width = viewer.scrollable_content_region.width
        wide = rows_holding(viewer.screen_text().split("\n"), "[stated] Uses uv for every Python", 1)
        assert all(len(row) <= width for row in wide)
        assert " ".join(row[3:].strip() for row in wide) == " ".join(NEW.strip().split())
