"""Room for each view (#43 item 1): `z` gives any pane the screen and gives it back, the review queue lists six or
more proposals at 120x35, the body stacks below 100 columns so an entry and its diff read whole at 80x24, and the
layout chosen is the next start's, kept in the person's state folder (never the memory's).

Driven through the real app with Textual's pilot on a real git memory holding ten proposals an agent queued through
the one write path (tests/support/ten_proposals.py): nine pending and one conflict.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widget import Widget

from app_support import demo_template, wait_for  # noqa: F401 (fixture)
from memtui.tui import layout as layouts
from memtui.tui.app import MemtuiApp
from support.ten_proposals import ten_in_own_home

AGE = re.compile(r"^\s*\d+[mhdw] |^\s*now ")  # a proposal's first line in the list starts with its age


@pytest.fixture
def ten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ten_in_own_home(tmp_path, monkeypatch)


def rendered(widget: Widget) -> list[str]:
    return [strip.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]


def words(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def _types_text(widget: Widget) -> bool:
    return any(cls.__name__ in ("Input", "TextArea") for cls in type(widget).__mro__)


def ready(app: MemtuiApp) -> bool:
    return bool(app.synced and app.review.loaded and app.review.proposals and app.review.selected is not None)


def shown(app: MemtuiApp) -> set[str]:
    """The screen's panes on screen now (shown, with cells)."""
    return {name for name in layouts.PANES
            if (w := app.base.query_one(f"#{name}")).display and w.size.area and w.region.area}


async def test_each_pane_takes_the_screen_with_z_and_gives_it_back(ten: Path) -> None:
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: ready(app), what="the queue")
        assert shown(app) == {"tree", "main", "review", "feed"}
        focus = {"tree": lambda: app.tree, "review": lambda: app.review.option_list, "feed": lambda: app.feed}
        for pane, widget in focus.items():
            widget().focus()
            await pilot.press("z")
            await wait_for(pilot, lambda: shown(app) == {pane}, what=f"{pane} alone on screen")
            assert app.base.query_one(f"#{pane}").size.width == 120, pane
            await pilot.press("z")
            await wait_for(pilot, lambda: shown(app) == {"tree", "main", "review", "feed"}, what="every pane back")
        # A file, Today, Search and Chat, each in the main area: zoomed there, the whole width and the body's height.
        for key in ("", "t", "slash", "c"):
            if key:
                await pilot.press(key)
                await pilot.pause(0.3)
            # Keys go to a widget of the pane that is not a text box (where `z` is a letter typed).
            pane = app.main.active_pane
            target = next(w for w in pane.query("*") if w.focusable and not _types_text(w))
            target.focus()
            await pilot.pause()
            assert app.room.pane_of(app.focused) == "main", (key, app.focused)
            await pilot.press("z")
            await wait_for(pilot, lambda: shown(app) == {"main"}, what=f"the main area alone ({key or 'a file'})")
            assert app.main.size.width == 120 and app.main.size.height == 33  # all but the header and footer
            await pilot.press("z")
            await wait_for(pilot, lambda: "review" in shown(app), what="every pane back")
            assert app.main.size.width < 60


async def test_focus_moving_into_a_hidden_pane_gives_that_pane_the_screen(ten: Path) -> None:
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: ready(app), what="the queue")
        app.review.option_list.focus()
        await pilot.press("z")
        await wait_for(pilot, lambda: shown(app) == {"review"}, what="the queue alone")
        await pilot.press("t")  # Today opens in the main area, hidden behind the queue: it is shown instead
        await wait_for(pilot, lambda: shown(app) == {"main"}, what="Today alone")
        assert app.main.active_pane is not None and "Today" in str(app.main.strip.tabs)


async def test_the_queue_lists_six_or_more_at_120x35(ten: Path) -> None:
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: ready(app) and len(app.review.proposals) == 10, what="ten proposals")
        await pilot.pause(0.3)
        rows = rendered(app.review.option_list)
        heads = [r for r in rows if AGE.match(r)]
        assert len(heads) >= 6, rows
        # Each names what, where and who, with its age; the next line starts its entry.
        assert heads[0].split() == ["3h", "add", "MEMORY.md", "§", "Projects", "·", "agent-claude"], heads[0]
        assert "Kestrel has 2 open" in rows[rows.index(heads[0]) + 1]
        # And the selected one's diff beside it, not starved: as tall as the list, give or take the detail line.
        diff = app.review.query_one("#review-diff")
        assert diff.size.height >= 8 and diff.size.width >= 40


async def test_at_80x24_the_body_stacks_and_an_entry_and_its_diff_read_whole(ten: Path) -> None:
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: ready(app), what="the queue")
        diff = app.review.query_one("#review-diff")
        await wait_for(pilot, lambda: diff.drawn, what="the diff")
        await pilot.pause(0.3)
        assert "-narrow" in app.base.classes and "tree" not in shown(app)
        assert app.review.size.width == 80  # below the main area, the screen's width
        entry = app.review.selected.entry
        assert entry and entry in words(rendered(diff)), rendered(diff)  # the added line, whole, wrapped
        # Wider, the three columns come back.
        await pilot.resize_terminal(120, 35)
        await wait_for(pilot, lambda: "-narrow" not in app.base.classes and "tree" in shown(app), what="columns")


async def test_the_layout_chosen_is_the_next_starts_and_kept_out_of_the_memory(ten: Path, tmp_path: Path) -> None:
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: ready(app), what="the queue")
        app.review.option_list.focus()
        await pilot.press("z", "Z")  # the queue zoomed; stacked at every width
        await wait_for(pilot, lambda: layouts.state_file().is_file()
                       and json.loads(layouts.state_file().read_text()) == {"maximized": "review", "stack": "on"},
                       what="the layout saved")
    assert layouts.state_file() == tmp_path / "state" / "memtui" / "layout.json"
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=ten, capture_output=True, text=True)
    assert "layout" not in status.stdout  # nothing of it in the memory folder

    again = MemtuiApp(ten, watch=False)
    async with again.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: ready(again), what="the queue")
        await wait_for(pilot, lambda: shown(again) == {"review"}, what="the queue alone, as left")
        assert {"-narrow", "-max-review"} <= again.base.classes, again.base.classes
        # The keys are the pane's that is shown.
        await wait_for(pilot, lambda: again.focused is again.review.option_list, timeout=10,
                       what=f"the queue focused, not {again.focused} ({again.base.focused}, {again.screen})")
        await pilot.press("z")
        await wait_for(pilot, lambda: "main" in shown(again), what="every pane back")
    assert json.loads(layouts.state_file().read_text())["maximized"] is None


async def test_the_last_layout_chosen_is_kept_when_saves_finish_out_of_order(ten: Path, monkeypatch) -> None:
    """`z` on then off quickly starts two saving threads; the first one slowed (a busy disk) finishes last. The
    file keeps the later choice, and a choice made just before quitting is written before the app is gone."""
    import threading
    import time

    real_save, calls, first = layouts.save, [], threading.Event()

    def slow_first(layout, path=None):
        calls.append(layout)
        if len(calls) == 1:
            first.set()
            time.sleep(0.6)  # the first thread still writing while the second choice is made and saved
        return real_save(layout, path)

    monkeypatch.setattr(layouts, "save", slow_first)
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: ready(app), what="the queue")
        app.review.option_list.focus()
        await pilot.press("z")
        await wait_for(pilot, first.is_set, what="the first save under way")
        await pilot.press("z")  # every pane back, while the first thread still writes "review"
        await wait_for(pilot, lambda: "main" in shown(app), what="every pane back")
        await pilot.pause(1.0)
    assert json.loads(layouts.state_file().read_text())["maximized"] is None

    quick = MemtuiApp(ten, watch=False)
    async with quick.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: ready(quick), what="the queue")
        quick.review.option_list.focus()
        calls.clear()
        await pilot.press("z")  # and quit at once, its save slowed
    assert json.loads(layouts.state_file().read_text())["maximized"] == "review"


@pytest.mark.parametrize("text", [
    '{"maximized": "body", "stack": "sideways"}',  # names no pane, no choice
    '{"maximized": "review -max-tree", "stack": ["on"]}',  # a class smuggled in a name; a list
    "[1, 2]", "not json", '{"maximized": "' + "x" * 5000 + '"}',
])
def test_a_state_file_memtui_did_not_write_is_the_default_layout(tmp_path: Path, monkeypatch, text: str) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    layouts.state_file().parent.mkdir(parents=True)
    layouts.state_file().write_text(text)
    assert layouts.load() == layouts.Layout()


def test_a_state_folder_that_cannot_be_written_says_so_and_what_still_holds(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "file"))  # a file where the folder should be
    problem = layouts.save(layouts.Layout("main", "on"))
    assert problem and "not saved" in problem and "until memtui quits" in problem


async def test_the_format_comment_folds_to_one_line_and_opens_with_f_or_a_click(tmp_path: Path, monkeypatch,
                                                                                demo_template: Path) -> None:
    from app_support import demo_root
    from memtui.tui.viewer import MemoryViewer

    root = demo_root(tmp_path, monkeypatch, demo_template)
    comment = (root / "MEMORY.md").read_text().split("-->")[0].count("\n") + 1
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        viewer = app.base.query_one(MemoryViewer)
        await wait_for(pilot, lambda: viewer.state is not None and viewer.state.comment, what="MEMORY.md")
        await pilot.pause(0.2)
        first = rendered(viewer)
        assert f"▸ memtui:format ({comment} lines, F shows them)" in words(first), first
        assert "memtui:format" in first[0] and "-->" not in words(first)  # folded: the rules are not drawn
        await pilot.press("F")
        await wait_for(pilot, lambda: "-->" in words(rendered(viewer)), what="the comment whole")
        assert "▸" not in words(rendered(viewer))
        await pilot.press("F")
        await wait_for(pilot, lambda: "-->" not in words(rendered(viewer)), what="folded again")
        assert await pilot.click(viewer, offset=(6, 0))
        await wait_for(pilot, lambda: "-->" in words(rendered(viewer)), what="opened by a click")
        await pilot.press("v")  # raw shows the file as it is, the comment whole, folded or not
        viewer.format_folded = True
        await pilot.pause(0.1)
        assert not viewer._folded_lines()


def test_a_planted_link_in_place_of_the_state_file_is_replaced_not_written_through(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    target = tmp_path / "bashrc"
    target.write_text("export PATH=/usr/bin\n")
    layouts.state_file().parent.mkdir(parents=True)
    layouts.state_file().symlink_to(target)
    assert layouts.save(layouts.Layout("review", "off")) is None
    assert target.read_text() == "export PATH=/usr/bin\n"
    assert not layouts.state_file().is_symlink()
    assert layouts.load() == layouts.Layout("review", "off")
