"""A new user's first day with a memory memtui did not write, found walking it in a real terminal and kept here as
pilot tests: each failed before its fix.

Claude Code's MEMORY.md is an index of lines with no heading: the entry cursor stood on each line and offered e, x,
p, o, but every key said "this entry sits above the first heading" while the command line edits the same lines
(its body is one section, named ""). Only what the person approved changes in the folder, each time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from support.fixtures_claude_code import memory_folder, write_memory
from support.foreign import changed, listing

BUG_TRACKER = "- [Bug tracker](reference_linear.md) — Pipeline bugs are tracked in Linear project INGEST"
MERGE_FREEZE = "- [Merge freeze](project_freeze.md) — Merge freeze for the mobile release starts 2026-03-05"


@pytest.fixture
def claude_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return write_memory(memory_folder(tmp_path))


async def cursor_on(pilot, viewer, text: str) -> None:
    await pilot.press("j")
    for _ in range(20):
        entry = viewer.entry_cursor.entry_at(viewer.cursor)
        if entry is not None and text in entry.raw:
            return
        await pilot.press("j")
    raise AssertionError(f"the cursor never reached {text!r}")


def toasts(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_the_lines_of_claude_codes_index_are_edited_from_the_keyboard(claude_code: Path) -> None:
    from memtui.tui.app import MemtuiApp
    from memtui.tui.curate import EntryEditScreen
    from memtui.tui.dialogs import ConfirmScreen
    from memtui.tui.viewer import MemoryViewer

    folder = claude_code
    before = listing(folder)
    app = MemtuiApp(folder, watch=False, user="wes")
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        viewer = app.query_one(MemoryViewer)
        viewer.focus()
        # x: asked first, in this layout's terms (no struck line is kept in the file), then gone from the file.
        await cursor_on(pilot, viewer, "Bug tracker")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        question = app.screen.question
        assert "struck" not in question and "§" not in question and "MEMORY.md" in question, question
        await pilot.press("y")
        await wait_for(pilot, lambda: BUG_TRACKER not in (folder / "MEMORY.md").read_text(), what="the removal")
        assert not any("above the first heading" in t for t in toasts(app)), toasts(app)
        # e: the line's own text to edit, no tag to start with (Claude Code's lines carry none).
        await cursor_on(pilot, viewer, "Merge freeze")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EntryEditScreen), what="the revise dialog")
        field = app.screen.query_one("#entry-text")
        assert field.value == MERGE_FREEZE[2:], field.value
        field.value = "[Merge freeze](project_freeze.md) — Merge freeze for the mobile release starts 2026-03-09"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "starts 2026-03-09" in (folder / "MEMORY.md").read_text(), what="the revise")
    text = (folder / "MEMORY.md").read_text()
    assert MERGE_FREEZE not in text and "~~" not in text
    assert set(changed(before, folder)) == {"MEMORY.md"}  # what the person did, nothing else


async def test_an_entry_above_the_first_heading_of_a_file_with_headings_is_still_left_to_editor(
        claude_code: Path) -> None:
    """The refusal stays where it is right: a file with headings has no section for a line above them."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.viewer import MemoryViewer

    folder = claude_code
    (folder / "MEMORY.md").write_text("- Loose line above the headings\n\n## Team\n- Wes leads the platform team\n")
    app = MemtuiApp(folder, watch=False, user="wes")
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        viewer = app.query_one(MemoryViewer)
        viewer.focus()
        await cursor_on(pilot, viewer, "Loose line")
        await pilot.press("x")
        await wait_for(pilot, lambda: any("above the first heading" in t for t in toasts(app)), what="the refusal")


async def test_a_search_left_open_is_one_line_in_the_feed_however_often_memory_changes_under_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The Search tab runs its query again as memory changes (so its hits stay true); each run put another
    "wes search 'dark'" in the activity feed, as if the person had searched again, between the approvals."""
    import asyncio

    from memtui.tui.app import MemtuiApp
    from memtui.tui.search import SearchPane

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False, user="wes")
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await pilot.press("slash")
        await wait_for(pilot, lambda: app.query(SearchPane), what="the Search tab")
        pane = app.query_one(SearchPane)
        await wait_for(pilot, lambda: app.focused is pane.input, what="the search box")
        await pilot.press(*"dark")
        searches = lambda: [r.text for r in app.feed.records if r.kind == "search"]  # noqa: E731
        await wait_for(pilot, searches, what="the search in the feed")  # (none of the demo's lines says it yet)
        for n in range(3):  # three writes, each heard by the open tab, which searches again
            shown = pane._shown
            await asyncio.to_thread(app.memory.update, "Preferences", "add", f"[stated] Dark theme {n} everywhere",
                                    actor="wes")
            await wait_for(pilot, lambda: pane._shown > shown, what="the query run again")
        await wait_for(pilot, lambda: any("Dark theme 2" in r.text for r in pane.results), what="the new hits")
        assert searches() == ["'dark': 0 sources"], searches()
        # A query the person types is said again, even one typed before.
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await wait_for(pilot, lambda: "Type to search" in str(pane.query_one("#search-summary").render()),
                       what="the box cleared")
        await pilot.press(*"dark")
        await wait_for(pilot, lambda: len(searches()) == 2, what="the new search in the feed")


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
async def test_the_search_box_says_how_to_search_whole_and_help_says_how_to_leave_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path, size: tuple[int, int]) -> None:
    """At 120x35 the Search tab sits beside the review panel, and its box's hint was cut at "ctrl+"; the help, a
    screen with no footer, said how to close it only at the end of its list."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.help import HelpScreen, KeyTable
    from memtui.tui.search import SearchPane

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False, user="wes")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await pilot.press("slash")
        await wait_for(pilot, lambda: app.query(SearchPane), what="the Search tab")
        box = app.query_one(SearchPane).input
        await wait_for(pilot, lambda: app.focused is box, what="the search box")
        await pilot.pause(0.2)
        drawn = "".join(s.text for s in box.render_lines(box.region.reset_offset)).strip(" ▊▎▔▁")
        assert "ctrl+r regex)" in drawn, drawn
        await pilot.press("escape", "question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        await pilot.pause(0.2)
        table = app.screen.query_one(KeyTable)
        first = ["".join(seg.text for seg in line) for line in table._lines(table.size.width)[:4]]
        assert any("esc closes" in line for line in first), first


def test_the_root_given_before_the_command_is_the_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`memtui --root DIR` opens the app on DIR, so a newcomer types `memtui --root DIR queue list` next: it was
    refused with "unrecognized arguments: list" (the root taken as the app's, `queue` as a folder to open)."""
    from memtui.cli import main
    from memtui.core.storage.init import init_root

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("MEMTUI_ROOT", raising=False)
    root = tmp_path / "memory"
    init_root(root)
    assert main(["--root", str(root), "update", "--by", "agent-claude", "Preferences", "add",
                 "[observed] Prefers dark mode"]) == 4  # queued, in this root
    capsys.readouterr()
    assert main([f"--root={root}", "queue", "list"]) == 0
    assert "p-0001" in capsys.readouterr().out
    assert main(["--root", str(root), "search", "--json", "--", "dark mode"]) == 0
    assert '"results"' in capsys.readouterr().out


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
async def test_a_footer_too_long_for_the_screen_shows_whole_keys_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path, size: tuple[int, int]) -> None:
    """At 120 columns the footer ended "q Q▏^p palette", at 80 "t T▏": a key cut in its name, naming what no key
    does. The keys that do not fit whole are left out; the palette's stays at the right edge."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.keys import KeyFooter

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False, user="wes")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        footer = app.screen.query_one(KeyFooter)
        await pilot.pause(0.2)
        line = footer.render().plain
        keys = [k for k in footer.keys if k.description != "palette"]
        assert len(footer.visible()) < len(footer.keys)  # too long: some are left out
        for k in footer.visible():
            assert f"{k.display} {k.description}" in line, (k, line)
        before_palette = line[:line.rindex("▏")].rstrip()
        last = [k for k in keys if k.end > k.x][-1]
        assert before_palette.endswith(last.description), line
