"""Answers that came back after the person had moved on, and still reach them.

A write started from a tab runs in a thread: an entry removed, retagged or undone from a file tab, an undo in Today.
The person may close that tab before the write comes back; its answer (made, or refused and why) was posted to the
closed tab and dropped, so nobody heard whether memory changed. And as the app quits, the layout or theme chosen a
moment before is written in a thread: a failure there was lost without a word, where the app's other failures at
quit are printed on stderr once the screen is restored (memtui/tui/crash.py). Each test holds the real write until
the tab is closed (or the app has quit), as a loaded machine or a slow disk does by chance.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path

import git
import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.viewer import MemoryViewer

PERSON = "ana"
ALEX = "people/alex.md"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def toasts(app: MemtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def held(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> threading.Event:
    """Hold `owner.name` (the real one, called once the returned gate is set): the write is under way meanwhile."""
    gate, real = threading.Event(), getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *a, **k: (gate.wait(20), real(*a, **k))[1])
    return gate


async def open_alex(pilot, app: MemtuiApp) -> MemoryViewer:
    await wait_for(pilot, lambda: settled(app), what="the app to settle")
    app.open_file(ALEX)
    await wait_for(pilot, lambda: (v := app.viewer_for(ALEX)) is not None and v.state is not None, what=ALEX)
    viewer = app.viewer_for(ALEX)
    assert viewer is not None
    viewer.focus()
    await pilot.press("j")  # the first entry: "Alex owns the payments integration"
    await wait_for(pilot, lambda: viewer.cursor is not None, what="the entry cursor")
    return viewer


async def remove_and_close_the_tab(pilot, app: MemtuiApp, viewer) -> None:
    """`x` `y` on the entry under the cursor, then `w` while its write is under way: the tab is gone before it ends."""
    await pilot.press("x")
    await pilot.pause()
    await pilot.press("y")
    await wait_for(pilot, lambda: viewer.entry_cursor._in_flight, what="the removal under way")
    await pilot.press("w")
    await wait_for(pilot, lambda: app.viewer_for(ALEX) is None and not viewer.is_attached, what="the tab closed")


async def test_an_entry_removed_from_a_tab_closed_before_the_write_came_back_is_said_in_a_toast(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_alex(pilot, app)
        before = git.Repo(demo).head.commit.hexsha
        gate = held(monkeypatch, app.memory, "update")
        try:
            await remove_and_close_the_tab(pilot, app, viewer)
        finally:
            gate.set()
        await wait_for(pilot, lambda: git.Repo(demo).head.commit.hexsha != before, what="the removal's commit")
        await wait_for(pilot, lambda: any(t.startswith(f"{ALEX}: {PERSON}: committed") for t in toasts(app)),
                       what="the removal said in a toast", timeout=10)
    assert "~~[stated] Alex owns the payments integration" in (demo / ALEX).read_text()


async def test_a_refused_edit_from_a_tab_closed_before_it_came_back_says_why(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused, too, the person hears it: here the entry was removed by someone else while the removal ran."""
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_alex(pilot, app)
        gate, real = threading.Event(), app.memory.update

        def first_someone_else(*args, **kwargs):
            gate.wait(20)
            real("Facts", "remove", replaces="Alex owns the payments integration", file=ALEX, actor="wes")
            return real(*args, **kwargs)

        monkeypatch.setattr(app.memory, "update", first_someone_else)
        try:
            await remove_and_close_the_tab(pilot, app, viewer)
        finally:
            gate.set()
        await wait_for(pilot, lambda: any(t.startswith(f"{ALEX}: ") and "Alex owns the payments" in t
                                          for t in toasts(app)), what="the refusal said in a toast", timeout=10)
        assert [n.severity for n in app._notifications if "Alex owns" in str(n.message)][-1] == "error"


async def test_an_undo_in_today_whose_tab_closed_before_it_came_back_is_said_and_in_the_feed(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memtui.tui.today as today

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await pilot.press("t")
        await wait_for(pilot, lambda: "today" in app.panes and app.panes["today"].report is not None,
                       what="the Today tab")
        pane = app.panes["today"]
        await wait_for(pilot, lambda: app.focused is pane.tree, what="the keys on Today's tree")
        before = git.Repo(demo).head.commit.hexsha
        lines = len(app.feed.records)
        gate = held(monkeypatch, today, "core_undo_last")
        try:
            await pilot.press("u")
            await wait_for(pilot, lambda: any(w.group == "today-undo" and w.is_running for w in app.workers),
                           what="the undo under way")
            await pilot.press("w")
            await wait_for(pilot, lambda: "today" not in app.panes and not pane.is_attached, what="the tab closed")
        finally:
            gate.set()
        await wait_for(pilot, lambda: git.Repo(demo).head.commit.hexsha != before, what="the undo's commit")
        await wait_for(pilot, lambda: any(n.title == "Undo" for n in app._notifications),
                       what="the undo said in a toast", timeout=10)
        await wait_for(pilot, lambda: any(r.kind == "undo" for r in app.feed.records[lines:]), what="the feed line")


def buffered(app: MemtuiApp) -> io.StringIO:
    """The app's error console pointed at a buffer, as memtui/tui/crash.py does for `memtui` (which prints it on
    stderr once the screen is restored)."""
    from rich.console import Console

    buffer = io.StringIO()
    app.error_console = Console(file=buffer, markup=False, highlight=False, color_system=None, width=200)
    return buffer


async def test_a_layout_that_cannot_be_saved_as_the_app_quits_is_said_after_it_exits(
        demo: Path, tmp_path: Path) -> None:
    from memtui.tui import layout as layouts

    layouts.state_file().mkdir(parents=True)  # a folder where the layout's file goes: it cannot be written
    app = MemtuiApp(demo, watch=False, user=PERSON)
    printed = buffered(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await pilot.press("Z")  # stacked at every width, chosen just before quitting: written again as it quits
        await pilot.press("q")
    said = " ".join(printed.getvalue().split())
    assert f"the layout was not saved to {layouts.state_file()}" in said, said
    assert "until memtui quits" not in said  # it has quit: what holds is the layout saved before


async def test_a_theme_chosen_just_before_quitting_is_saved_or_its_failure_said_after_the_app_exits(
        demo: Path) -> None:
    from support.by_hand import write_committed

    config = demo / ".memtui" / "config.toml"
    # Chosen and quit at once (its save waits a moment for a picker's previews to pass): saved all the same.
    app = MemtuiApp(demo, watch=False, user=PERSON)
    printed = buffered(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        app.action_switch_theme("memtui-light")
        await pilot.press("q")
    assert 'theme = "memtui-light"' in config.read_text() and printed.getvalue() == ""
    # A config with a person's own error is not rewritten: the choice is lost, and said so after the app exits.
    broken = config.read_text().replace("[app]", '[app]\ncolour = "red"')
    write_committed(demo, ".memtui/config.toml", broken)
    app = MemtuiApp(demo, watch=False, user=PERSON)
    printed = buffered(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        app.action_switch_theme("memtui-contrast")
        await pilot.press("q")
    assert config.read_text() == broken
    said = " ".join(printed.getvalue().split())  # as one line (the console wraps at its width)
    assert "memtui: theme memtui-contrast was not saved" in said and "colour" in said, said
    assert "the next start has the theme saved before" in said
    # While the app runs, the same failure is a toast, and said once: not again at quit.
    app = MemtuiApp(demo, watch=False, user=PERSON)
    printed = buffered(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        app.action_switch_theme("memtui-contrast")
        await wait_for(pilot, lambda: any("Theme memtui-contrast is used now but was not saved" in t and "colour" in t
                                          for t in toasts(app)), what="the toast")
        await pilot.press("q")
    assert printed.getvalue() == ""


async def test_a_theme_save_under_way_as_the_app_quits_is_waited_for_and_its_failure_said_after(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.writing.memory import Memory

    app = MemtuiApp(demo, watch=False, user=PERSON)
    printed = buffered(app)
    gate, started = threading.Event(), threading.Event()

    def set_theme(self, name, **kwargs):
        started.set()
        gate.wait(20)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Memory, "set_theme", set_theme)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        app.action_switch_theme("memtui-light")
        await wait_for(pilot, started.is_set, what="the theme's save under way")
        await pilot.press("q")
        threading.Timer(0.5, gate.set).start()  # the disk answers after the app began to quit
    said = " ".join(printed.getvalue().split())
    assert "memtui: theme memtui-light was not saved: [Errno 28] No space left on device" in said, said


async def test_escape_while_an_added_entry_is_written_waits_for_it_and_the_edit_is_said(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """o, an entry, enter, then escape before the write came back: the dialog closed (its hint says escape closes
    without writing), the write's answer was dropped with it, and the entry was added unannounced. A second enter
    meanwhile started a second write: the entry was added twice."""
    from textual.widgets import Input

    from memtui.tui.curate import EntryEditScreen

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_alex(pilot, app)
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, EntryEditScreen), what="the add dialog")
        dialog = app.screen
        dialog.query_one("#entry-text", Input).value = "[stated] Alex is on leave in September"
        gate = held(monkeypatch, app.memory, "update")
        try:
            await pilot.press("enter")
            await wait_for(pilot, lambda: viewer.entry_cursor._in_flight, what="the add under way")
            await pilot.press("enter", "escape")
            assert app.screen is dialog
            assert "cannot be stopped now" in str(dialog.query_one("#entry-error").render())
        finally:
            gate.set()
        await wait_for(pilot, lambda: app.screen is not dialog, what="the dialog closed by the write's answer")
        await wait_for(pilot, lambda: any(t.startswith(f"{PERSON}: committed") for t in toasts(app)),
                       what="the add said")
    assert (demo / ALEX).read_text().count("Alex is on leave in September") == 1
