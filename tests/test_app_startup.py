"""What the app does before its first screen: it imports only what that screen needs, and reads the whole folder
(git status, the file count) after it (the figures themselves live in benches/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import MEMORY_FILE
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader

# Heavy modules the first frame does not need: RichLog's rich.pretty and attrs, the lazily opened panes and dialogs.
# The palette's commands and the panes' registry come when the palette or a pane first opens.
NOT_AT_START = ("rich.pretty", "attr", "memtui.tui.today", "memtui.tui.search", "memtui.tui.chat",
                "memtui.tui.dialogs", "memtui.tui.help", "anthropic", "git", "memtui.tui.commands",
                "memtui.tui.panes")


def test_importing_the_app_leaves_what_the_first_frame_does_not_need() -> None:
    code = ("import json, sys; import memtui.tui.app; "
            f"print(json.dumps([m for m in {list(NOT_AT_START)!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


class Recorded(MemtuiApp):
    """The app, noting what was on screen when each whole-folder sync (git status, the count) was asked for."""

    asked: list[dict[str, object]]

    def sync(self, changed: frozenset[str] = frozenset(), initial: bool = False, *,  # type: ignore[override]
             folder: bool = True):
        if folder:
            viewer = self.viewer_for(MEMORY_FILE)
            self.asked.append({"queue shown": self.synced, "tree": "" in self.tree.loaded,
                               "MEMORY.md": viewer is not None and viewer.state is not None,
                               "header": self.query_one(MemtuiHeader).counts.get("files")})
        return super().sync(changed, initial, folder=folder)


async def test_the_whole_folder_is_read_after_the_first_screen_and_its_results_arrive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = Recorded(root, watch=False)
    app.asked = []
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the whole-folder sync")
        # Asked for once, with MEMORY.md, the tree's top level and the queue already shown, the count not yet.
        assert app.asked[0] == {"queue shown": 1, "tree": True, "MEMORY.md": True, "header": None}
        # Its results arrive: the demo's external change (people/alex.md, edited without memtui) in the review
        # panel, the tree's badge, the feed, and the file count in the header.
        assert any(p.external and p.file == "people/alex.md" for p in app.review.proposals)
        assert "people/alex.md" in app.tree.external
        assert any("people/alex.md: waiting for review" in t for t in app.feed.texts())
        header = app.query_one(MemtuiHeader)
        assert header.counts["files"] == len(app.memory.files()) and header.counts["external"] == 1


async def test_the_first_focus_is_memory_md_s_viewer_and_nothing_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """Each focus move restyles the widget it leaves and the one it reaches: before the first frame the keys go to
    MEMORY.md's viewer once, not to the first focusable widget and then on."""
    from textual.widget import Widget

    from memtui.tui.viewer import MemoryViewer

    root = demo_root(tmp_path, monkeypatch, demo_template)
    moves: list[tuple[str, bool]] = []
    watch = Widget.watch_has_focus
    monkeypatch.setattr(Widget, "watch_has_focus",
                        lambda self, focused: (moves.append((type(self).__name__, focused)), watch(self, focused)))
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.focused, MemoryViewer)
        assert moves == [("MemoryViewer", True)]


FIRST_SCREEN_CSS = {"app.tcss", "header.tcss", "tree.tcss", "viewer.tcss", "diff.tcss", "review.tcss", "feed.tcss",
                    "curate.tcss"}


async def test_the_first_screen_parses_its_own_stylesheets_and_a_dialog_or_a_pane_brings_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The dialogs' and the panes' stylesheets are not parsed before the first frame: the dialogs' (and help's)
    come as the first screen is pushed over the main one, a pane's as its first tab opens, and what they style is
    styled as before (help's width over the dialogs' in the same order; the search pane's height)."""
    from textual.widgets import Input

    from memtui.tui.search import SearchPane

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)

    def sheets() -> set[str]:
        return {Path(path).name for path, _ in app.stylesheet.source if path.endswith(".tcss")}

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        assert sheets() == FIRST_SCREEN_CSS
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen.has_class("help-screen"), what="the help")
        assert sheets() == FIRST_SCREEN_CSS | {"dialogs.tcss", "help.tcss"}
        dialog = app.screen.query_one(".dialog")
        assert (dialog.styles.width.value, dialog.styles.border_top[0]) == (110, "thick")  # .help over .dialog
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.base, what="the help to close")
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(app.focused, Input), what="the search pane")
        assert sheets() == FIRST_SCREEN_CSS | {"dialogs.tcss", "help.tcss", "search.tcss"}
        assert str(app.query_one(SearchPane).styles.height) == "1fr"


async def test_the_first_screen_s_data_is_asked_for_before_its_widgets_mount(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The queue is read in a thread started as the screen is composed, and the footer's keys are built as MEMORY.md's
    viewer takes the keys when it mounts: both used to come after the first layout had begun, and were shown in a
    second layout and frame. The tree's top level is listed once (its expansion listed it a second time)."""
    from memtui.tui.tree import MemoryTree
    from memtui.tui.viewer import MemoryViewer

    root = demo_root(tmp_path, monkeypatch, demo_template)
    order: list[object] = []
    tree_mount, viewer_mount = MemoryTree.on_mount, MemoryViewer.on_mount

    def on_tree_mount(self: MemoryTree) -> None:
        order.append("tree mounted")
        tree_mount(self)

    def on_viewer_mount(self: MemoryViewer) -> None:
        viewer_mount(self)
        order.append(("viewer mounted, focused", self.screen.focused is self))

    monkeypatch.setattr(MemoryTree, "on_mount", on_tree_mount)
    monkeypatch.setattr(MemoryViewer, "on_mount", on_viewer_mount)
    listed: list[str] = []

    class Ordered(MemtuiApp):
        def sync(self, changed: frozenset[str] = frozenset(), initial: bool = False, *,  # type: ignore[override]
                 folder: bool = True):
            order.append(("sync", folder))
            return super().sync(changed, initial, folder=folder)

    app = Ordered(root, watch=False)
    list_dir = app.memory.store.list_dir
    monkeypatch.setattr(app.memory.store, "list_dir", lambda rel: (listed.append(rel), list_dir(rel))[1])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        assert order[:3] == [("sync", False), "tree mounted", ("viewer mounted, focused", True)]
        assert app.synced >= 1 and app.review.loaded
        assert any(p.external and p.file == "people/alex.md" for p in app.review.proposals)
        assert listed.count("") == 1


async def test_no_toast_shown_at_start_changes_no_style_after_the_first_layout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """Textual tells its toast rack the notifications as the screen first shows; with none it hid itself in its inline
    style, a style change that laid the whole screen out again. It is hidden before that, and a toast still shows."""
    from textual.widgets._toast import ToastRack

    root = demo_root(tmp_path, monkeypatch, demo_template)
    shows: list[tuple[object, object]] = []
    show = ToastRack.show

    def recording(self: ToastRack, notifications) -> None:  # type: ignore[no-untyped-def]
        before = self.styles.inline.get_rule("display")
        show(self, notifications)
        shows.append((before, self.styles.inline.get_rule("display")))

    monkeypatch.setattr(ToastRack, "show", recording)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: settled(app) and shows, what="the first screen")
        assert shows[0] == ("none", "none")  # told of no notifications: no style changed
        rack = app.screen.query_one("#textual-toastrack")
        app.notify("hello")
        await wait_for(pilot, lambda: rack.display, what="the toast")


async def test_the_review_panel_s_empty_text_is_drawn_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """"No proposal selected." is a line: drawn as it is asked for, in the frame that shows the panel, not a frame
    later from a worker (which laid the screen out again). A real diff is still parsed in a worker."""
    from memtui.tui.diff import DiffView

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        # A DiffView of the test's own, in the review panel: the panel's own one is the app's to fill (its queue
        # sync shows the demo's proposal there whenever it runs, which under load was after the show below).
        diff = DiffView(id="probe-diff")
        await app.review.mount(diff)
        await pilot.pause()
        diff.show("", empty="Nothing to see here.")
        assert diff.drawn and "Nothing to see here." in diff.render_text().plain
        diff.show("--- a/x.md\n+++ b/x.md\n@@ -1 +1 @@\n-old\n+new\n", rel="x.md")
        assert not diff.drawn  # parsed in a worker
        await wait_for(pilot, lambda: diff.drawn, what="the diff")
        assert "new" in diff.render_text().plain


class FirstFrame(MemtuiApp):
    """The app, noting what its widgets held when the first frame was painted."""

    first: dict[str, object] | None = None

    def on_mount(self) -> None:  # runs before MemtuiApp's (Textual calls the subclass's handler first)
        self.call_after_refresh(self._painted)

    def _painted(self) -> None:
        viewer = self.viewer_for(MEMORY_FILE)
        self.first = {"MEMORY.md": viewer is not None and viewer.state is not None, "tree": "" in self.tree.loaded,
                      "queue": self.synced >= 1 and self.review.loaded}


async def test_the_first_frame_shows_memory_md_the_tree_and_the_queue(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """Read in workers as the screen is built, they are put on the widgets before the first layout (the app's mount
    waits for them, a moment at most): shown in the first frame, not in a second layout, paint and frame after it."""
    import memtui.tui.app as app_module

    monkeypatch.setattr(app_module, "FIRST_DATA_WAIT", 30.0)  # a loaded test machine is not what this is about
    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = FirstFrame(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first is not None, what="the first frame")
        assert app.first == {"MEMORY.md": True, "tree": True, "queue": True}
        # The queue's first sync was shown from its worker's result; its message, handled later, is not shown again.
        await wait_for(pilot, lambda: settled(app), what="the whole-folder sync")
        assert app.synced == 2 and app.folder_synced == 1


async def test_a_load_that_never_ends_does_not_hold_the_first_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """A store that does not answer (the tree's listing blocked here) holds the first frame FIRST_DATA_WAIT at most;
    the rest is shown, and the listing follows when it comes."""
    import threading
    import time

    import memtui.tui.app as app_module

    monkeypatch.setattr(app_module, "FIRST_DATA_WAIT", 0.5)
    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = FirstFrame(root, watch=False)
    release = threading.Event()
    list_dir = app.memory.store.list_dir

    def blocked(rel: str):  # type: ignore[no-untyped-def]
        if rel == "":
            release.wait(20)
        return list_dir(rel)

    monkeypatch.setattr(app.memory.store, "list_dir", blocked)
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first is not None, what="the first frame")
        assert time.monotonic() - started < 10
        assert app.first is not None and app.first["tree"] is False and app.first["MEMORY.md"] is True
        release.set()
        await wait_for(pilot, lambda: "" in app.tree.loaded and bool(app.tree.root.children), what="the tree")


async def test_a_problem_the_first_sync_finds_is_told_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The first sync is shown before the mount's own problems are told (`_first_data`): a problem it found (an
    agent's corrupt queue file) is told by the sync alone, once, not a second time with the config's."""
    import memtui.tui.app as app_module

    monkeypatch.setattr(app_module, "FIRST_DATA_WAIT", 30.0)
    root = demo_root(tmp_path, monkeypatch, demo_template)
    (root / ".memtui/queue/p-0099.json").write_text('{"id": "p-0099", "crea')
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        await pilot.pause()
        told = [n.message for n in app._notifications if "p-0099" in n.message]
        assert len(told) == 1 and "unreadable queue file" in told[0]
        assert sum("p-0099" in p for p in app.problems) == 1


async def test_the_first_sync_is_shown_once_whatever_a_subclass_s_handler_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """Textual calls a subclass's handler and MemtuiApp's for a message; the first sync shown from its worker's
    result is shown by MemtuiApp's, once, even when a subclass's handler does not call up (the wait called the
    subclass's again at every turn of its loop, and never saw the queue shown)."""
    import time

    import memtui.tui.app as app_module

    monkeypatch.setattr(app_module, "FIRST_DATA_WAIT", 30.0)
    root = demo_root(tmp_path, monkeypatch, demo_template)

    class Own(FirstFrame):
        calls = 0

        def on_state_synced(self, message) -> None:  # type: ignore[no-untyped-def]
            self.calls += 1

    app = Own(root, watch=False)
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first is not None, what="the first frame")
        assert time.monotonic() - started < 15
        assert app.first == {"MEMORY.md": True, "tree": True, "queue": True} and app.synced >= 1
        await wait_for(pilot, lambda: settled(app), what="the whole-folder sync")
        assert app.calls == 2  # the first sync's message and the whole folder's, each once


async def test_the_screen_is_first_laid_out_and_painted_with_its_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """Textual lays a screen out as it first shows it: the main screen holds that layout (and its paint) while
    MEMORY.md, the tree and the queue load, so its first paint has them (each widget drawn once, not twice)."""
    import memtui.tui.app as app_module
    from memtui.tui.app import MainScreen

    monkeypatch.setattr(app_module, "FIRST_DATA_WAIT", 30.0)
    layouts: list[dict[str, bool]] = []

    class Recording(MainScreen):
        def _refresh_layout(self, size=None, scroll=False):  # type: ignore[no-untyped-def]
            if not self.hold_layout:
                app = self.app
                viewer = app.viewer_for(MEMORY_FILE)
                layouts.append({"MEMORY.md": viewer is not None and viewer.state is not None,
                                "tree": "" in app.tree.loaded, "queue": app.review.loaded})
            super()._refresh_layout(size, scroll)

    class App(MemtuiApp):
        def get_default_screen(self):  # type: ignore[no-untyped-def]
            screen = Recording(id="_default")
            screen.hold_layout = True  # as MemtuiApp's own
            return screen

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = App(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        assert layouts and layouts[0] == {"MEMORY.md": True, "tree": True, "queue": True}, layouts
        assert "Preferences" in app.viewer_for(MEMORY_FILE).screen_text()


async def test_the_review_list_keeps_its_drawn_options_on_a_resize_to_the_same_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The first layout sends every widget a Resize after painting it: the queue's list kept the options it had just
    drawn (Textual's list forgets them on every Resize and was painted again a frame later). A real resize still
    draws them for the new width."""
    from textual import events

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        options = app.review.option_list
        await wait_for(pilot, lambda: len(options._option_render_cache) > 0, what="the options drawn")
        size = options.size
        options.post_message(events.Resize(size, options.virtual_size, options.container_size))
        await pilot.pause()
        assert len(options._option_render_cache) > 0
        width = options.scrollable_content_region.width
        await pilot.resize_terminal(SIZE[0] - 30, SIZE[1])
        await wait_for(pilot, lambda: options.scrollable_content_region.width != width, what="the list resized")
        await pilot.pause()
        assert options._drawn_for == options.scrollable_content_region.size  # drawn again, for the new size
        drawn = [options.render_line(y).text for y in range(options.scrollable_content_region.height)]
        assert all(len(line) == options.scrollable_content_region.width for line in drawn), (
            [len(line) for line in drawn], options.scrollable_content_region, options.size)


async def test_the_review_panel_s_empty_text_is_styled_for_its_width_in_the_first_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The empty diff text is wrapped to the panel's width: styled as the layout tells the view its size, before
    that layout's frame, not on the Resize after it (a second paint of the panel)."""
    from memtui.tui.diff import DiffView

    seen: list[tuple[int, int]] = []
    render_line = DiffView.render_line

    def recording(self, y):  # type: ignore[no-untyped-def]
        if y == 0 and self._look is not None and self.wrap:
            seen.append((self._look.width, max(24, self.size.width - 1)))
        return render_line(self, y)

    monkeypatch.setattr(DiffView, "render_line", recording)
    root = tmp_path / "plain"  # a memory memtui did not write: no queue, no git, so nothing selected
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n\n## Preferences\n- [stated] Tea (2026-12-05)\n", encoding="utf-8")
    app = MemtuiApp(root, watch=False)
    assert app.diff_wrap  # wrapped: the empty text is styled for a width
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        view = app.review.query_one(DiffView)
        assert not view.diff and view.drawn
        assert seen and all(look == width for look, width in seen), seen


async def test_the_first_layout_settles_at_once_not_at_the_next_frame_tick(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """After the first layout every widget it sized asks for a layout (and some repaint): Textual paces those passes
    at its frame tick (up to 1/60 s each). In the moment after the first layout (SETTLE_WINDOW) the main screen
    does them when it is next idle: its frame timer is not started then. After it, Textual's pacing, as always."""
    import time

    from textual.timer import Timer

    import memtui.tui.app as app_module
    from memtui.tui.app import MainScreen

    resumed: list[float] = []
    released: list[float] = []
    resume = Timer.resume

    def recording(timer: Timer) -> None:
        if timer.name == "screen_update" and isinstance(timer._target(), MainScreen):
            resumed.append(time.monotonic())
        resume(timer)

    release = MainScreen.release_layout

    def releasing(screen: MainScreen) -> None:
        release(screen)
        released.append(time.monotonic())

    monkeypatch.setattr(Timer, "resume", recording)
    monkeypatch.setattr(MainScreen, "release_layout", releasing)
    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        await pilot.pause(app_module.SETTLE_WINDOW)
        assert released
        screen = app.screen
        assert isinstance(screen, MainScreen) and not screen._layout_required and not screen._dirty_widgets
        deadline = screen._settle_until  # the window, as the screen keeps it from its first layout
        started = deadline - app_module.SETTLE_WINDOW
        assert released and deadline > 0
        assert not [t for t in resumed if started <= t < deadline], (started, deadline, resumed)
        app.tree.refresh()  # later changes are paced by Textual's timer, as always
        await pilot.pause()
        assert any(t >= deadline for t in resumed)


async def test_the_whole_folder_is_read_once_after_the_first_screen_even_if_its_poll_ticks_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The poll that starts the whole-folder read after the first screen is a timer: a tick already queued when it
    is stopped (a busy app, a loaded CI machine) ran it again, and the folder was read twice (a third sync that a
    test counting syncs saw)."""
    monkeypatch.setattr("memtui.tui.syncing.SYNC_AFTER", 30.0)
    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    asked: list[int] = []
    sync = app.sync

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(1)
        return sync(*args, **kwargs)

    monkeypatch.setattr(app, "sync", counting)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app._first_screen_done, what="the first screen")
        app._after_first_screen()  # the queued tick
        app._after_first_screen()
        await wait_for(pilot, lambda: settled(app), what="the whole folder")
        await pilot.pause(0.3)
        assert app.folder_synced == 1 and app.synced == 2 and len(asked) == 2, (app.synced, asked)  # queue, folder
