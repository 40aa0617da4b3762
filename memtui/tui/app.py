"""MemtuiApp: wiring only. Widgets live in their own modules; IO runs in thread workers that post messages.

Layout (like JupyterLab): header; memory tree | tabbed main area | review panel; activity feed; footer. The app's
keys are keys.py's; the jobs it wires are helpers it holds, each beside what it serves: `state_sync` (syncing.py),
`deciding` (deciding.py), `room` (room.py), `consolidating` (consolidating.py). Its actions and message handlers keep
their names (the keymap, help and the palette know them) and hand each on.
"""

# ruff: noqa: E402
from __future__ import annotations

import asyncio
import gc
import hashlib
import threading
import time
from pathlib import Path
from typing import Any

# Until the first screen is shown, Python's cycle collector runs after this many allocations, not 700: building the
# screen allocates ~150,000 objects, few of them garbage, and its ~200 collections (one of them a full one over every
# module and widget) took ~25 ms of the first screen's ~300. Put back a moment after it is shown (or as the app quits).
# Raised as this module is imported too: importing Textual and memtui is ~80 collections more.
START_GC_THRESHOLD = 100_000
GC_SETTLE_AFTER = 1.0  # seconds after the first screen is shown
_gc_threshold: tuple[int, ...] | None = None  # Python's thresholds while the first screen's are in force


def _start_gc() -> None:
    global _gc_threshold
    if _gc_threshold is None:
        _gc_threshold = gc.get_threshold()
    gc.set_threshold(max(START_GC_THRESHOLD, _gc_threshold[0]), *_gc_threshold[1:])


def _settle_gc() -> None:
    global _gc_threshold
    if _gc_threshold is not None:
        gc.set_threshold(*_gc_threshold)
        _gc_threshold = None


_start_gc()  # before Textual is imported (the imports below follow it: E402 is meant)

from textual import events, on, work
from textual.actions import ActionParseResult
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from memtui.core.basics import clock
from memtui.core.basics.visible import shown_name
from memtui.core.writing.memory import MEMORY_FILE, Memory, default_actor
from memtui.tui import theme_files
from memtui.tui.consolidating import Consolidating
from memtui.tui.deciding import Deciding
from memtui.tui.diff import DiffView, unified
from memtui.tui.feed import ActivityFeed
from memtui.tui.header import MemtuiHeader
from memtui.tui.keys import APP_BINDINGS, REVIEW_ACTIONS, KeyFooter
from memtui.tui.messages import (
    Activity, CommittedLoaded, Consolidated, ConsolidationDue, Decided, FilesChanged, LogActivity, OpenFile,
    QueueCounted, SessionEnded, StateSynced,
)
from memtui.tui.plain import visible
from memtui.tui.review import ReviewPanel
from memtui.tui.room import Room
from memtui.tui.sync_view import SyncView
from memtui.tui.syncing import StateSync
from memtui.tui.tabs import Tabbed, TabPane
from memtui.tui.tree import MemoryTree
from memtui.tui.viewer import MemoryViewer

CSS_DIR = Path(__file__).parent
DIALOG_CSS = ("dialogs.tcss", "help.tcss")  # every screen pushed over the main one (dialogs, help, the palette)
FIRST_SCREEN_WAIT = 2.0  # seconds the whole-folder sync waits for the first screen (MEMORY.md may never load)
# Seconds the first layout waits for MEMORY.md, the tree's top level and the queue (read in workers as the screen is
# built): shown in the first frame, not in a second layout, paint and frame after it (~60 ms of a ~300 ms start).
# Past it (a slow store, one that is down) the first frame is painted without them and they follow as they come.
FIRST_DATA_WAIT = 0.3
SETTLE_WINDOW = 0.1  # seconds after the first layout in which its settling pass is not paced (MainScreen)

THEME_SAVE_AFTER = 0.8  # seconds a chosen theme stays before it is saved to the config


class MainScreen(Screen):
    """The app's main screen: it gives the keys to MEMORY.md's viewer as it is composed (see get_default_screen),
    and is not styled twice before its first frame."""

    AUTO_FOCUS = "MemoryViewer"
    _shown = False
    # Set while the first data loads (MemtuiApp._first_data): the screen is laid out and painted once, with it.
    hold_layout = False
    _layout_held = False
    _laid_out = False
    _settle_until = 0.0  # until then (SETTLE_WINDOW after the first layout) pending passes are done when idle

    def _refresh_layout(self, size: Any = None, scroll: bool = False) -> None:
        # Textual lays the screen out as it first shows, and paints it empty; MEMORY.md, the tree and the queue,
        # loading meanwhile, were then painted in a second frame, each widget drawn twice. Held, the first layout
        # is the one that shows them (at most FIRST_DATA_WAIT later).
        if self.hold_layout:
            self._layout_held = True
            return
        super()._refresh_layout(size, scroll)
        if not self._laid_out and self.is_attached:
            self._laid_out = True
            self._settle_until = time.monotonic() + SETTLE_WINDOW

    def release_layout(self) -> None:
        """Lay the screen out and paint it, if that was asked for while held."""
        self.hold_layout = False
        if self._layout_held and self.is_attached:
            self._layout_held = False
            self._refresh_layout(self.app.size)

    async def _on_idle(self, event: events.Idle) -> None:
        # Every widget the first layout sized asks for a layout of its own (Textual's virtual sizes start at 0x0),
        # and a few repaint once told their size: passes that settle scrollbars and widths, which Textual paces at
        # its frame tick, up to 1/60 s each. Done when the screen is next idle, the first screen is complete that
        # much sooner. Only in the moment after the first layout; then Textual's pacing, as always.
        pending = self._layout_required or self._scroll_required or self._repaint_required or self._dirty_widgets
        if self._settle_until and pending and not self.app._batch_count and self.is_current:
            if time.monotonic() < self._settle_until:
                event.prevent_default()  # Screen's own handler would wait for the tick
                self._on_timer_update()

    def on_resize(self, event: events.Resize) -> None:
        """Stack below layouts.NARROW columns (or as the person chose): a class, so the same layout as the size
        changes (a class already set is no change)."""
        room = getattr(self.app, "room", None)
        if room is not None:
            room.apply(event.size.width)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Each widget on it was styled as it mounted, by the stylesheets then parsed (a widget's own CSS is added
        # before it is styled, and scoped to it): the first resume, which Textual sends as the screen first shows,
        # would style every widget again (a sixth of the first frame). Screen's own handler runs after this one.
        if not self._shown:
            self._shown = True
            event.refresh_styles = False
            # Textual's toast rack is hidden by its CSS, and the resume then tells it the notifications: with none,
            # it hides itself in its inline style, a change of style that lays the whole screen out again a frame
            # after the first. Hidden inline now, before the first layout, that is no change (a toast still shows).
            for rack in self.query_children("#textual-toastrack"):
                rack.display = False


def _is_text_area(widget: Widget | None) -> bool:
    """Is `widget` a TextArea (or made from one)? Asked without importing it (~8 ms at start), by its classes'
    names, so a Textual that moves the class to another module still keeps the review keys out of it."""
    return widget is not None and any(cls.__name__ == "TextArea" for cls in type(widget).__mro__)


def _memtui_commands() -> type:
    """memtui's palette commands, imported when the palette first opens (Textual calls a provider source that is not
    a class), not at start."""
    from memtui.tui.commands import MemtuiCommands

    return MemtuiCommands


def tab_id(prefix: str, rel: str) -> str:
    return f"{prefix}-{hashlib.sha1(rel.encode()).hexdigest()[:12]}"


def first_file(memory: Memory) -> str:
    """MEMORY.md, or in a Cline memory bank (which has none) the first of its core documents there is: a person
    opening the bank sees its files, not a MEMORY.md that does not exist."""
    try:
        layout = memory.layout()
        if layout.kind == "cline":
            return next((name for name in layout.core if memory.store.read(name) is not None), MEMORY_FILE)
    except (OSError, ValueError):
        pass
    return MEMORY_FILE

class MemtuiApp(App[None]):
    """The memtui app on one memory root."""

    TITLE = "memtui"
    # Absolute, so a subclass defined elsewhere (a test, the screenshot script) finds the same stylesheets. Those of
    # the first screen only (curate.tcss styles the viewer's entry bar): the dialogs' are read as the first screen is
    # pushed over it, a pane's as its first tab opens (`use_css`), not parsed before the first frame. No rule of
    # theirs matches a widget already shown.
    CSS_PATH = [CSS_DIR / name for name in (
        "app.tcss", "header.tcss", "tree.tcss", "viewer.tcss", "diff.tcss", "review.tcss", "feed.tcss", "curate.tcss")]
    COMMANDS = App.COMMANDS | {_memtui_commands}
    _screen_composed = False  # composed: from then on a CSS refresh re-parses, as Textual's does
    BINDINGS = APP_BINDINGS

    def __init__(self, root: str | Path | None = None, theme: str | None = None, *, watch: bool = True,
                 user: str | None = None, memory: Memory | None = None) -> None:
        _start_gc()
        super().__init__()
        if memory is None:
            if root is None:
                raise ValueError("MemtuiApp needs a memory root or a memory")
            memory = Memory(Path(root).expanduser().absolute())
        self.memory = memory
        self.first_file = first_file(memory)  # the tab the app opens on
        # A folder memory's root; a memory elsewhere (Redis) has none, and the app reads it through its store.
        folder = memory.store.local_root
        self.folder: Path | None = folder.absolute() if folder is not None else None
        self.root = self.folder or Path(root or ".").expanduser().absolute()
        self.connected = True
        self.diff_split = False  # diffs side by side (S); a diff mounted later starts the same way
        # Long lines wrapped (W) in diffs, viewers and the feed; one mounted later starts the same way. On from the
        # start: at 120 columns the review panel is 40 wide, and a change cut at its edge is a change not seen.
        self.diff_wrap = True
        self.by = user or default_actor()
        self.watch_enabled = watch
        self.chosen_action: str | None = None  # the action the palette is running (run_chosen_action)
        self.watcher: Any = None  # the subscription, when it watches for others' changes too
        self.changes: Any = None  # the subscription to the memory's change event
        self.panes: dict[str, Widget] = {}
        self._tab_trail: list[str] = [tab_id("file", self.first_file)]  # the tabs shown, the last the latest
        self.changed_since_open: set[str] = set()
        self.synced = 0  # syncs shown; the first shows the queue
        self.folder_synced = 0  # of them, those that read the whole folder too (external changes, file count)
        self.problems: list[str] = []
        self.told_at_start: list[str] = []  # news from before the app started (history begun beside the folder)
        self.state_sync = StateSync(self)  # the syncs that keep what is shown current (memtui/tui/syncing.py)
        config = self.memory.config
        for problem in (config.error, config.pending):
            if problem:
                self.problems.append(problem)
        self.keymap_config = {str(k): str(v) for k, v in config.section("keys").items()}
        self.consolidating = Consolidating(self)  # the consolidation offered and drafted (tui/consolidating.py)
        self.deciding = Deciding(self)  # the person's decisions on the review list (memtui/tui/deciding.py)
        self.room = Room(self)  # the person's layout, read now: the first frame has it (memtui/tui/room.py)
        self._theme_timer: Any = None
        self._theme_wanted: str | None = None  # a theme chosen whose save has not begun (its timer runs)
        self._theme_lock = threading.Lock()  # one theme save at a time; the quit waits for one under way
        self._theme_problem: tuple[str, str] | None = None  # (theme, why) of a failed save not yet said
        for t in theme_files.shipped_themes():
            self.register_theme(t)
        users, problems = theme_files.user_themes()
        self.problems += problems
        for t in users:
            self.register_theme(t)
        wanted = theme_files.resolve(theme) or theme_files.resolve(config.theme) or theme_files.DEFAULT_THEME
        if wanted not in self.available_themes:
            self.problems.append(f"no theme {wanted!r}; themes: {', '.join(sorted(self.available_themes))}")
            wanted = theme_files.DEFAULT_THEME
        self.theme = wanted

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Every notification is plain text: most hold a file name, an actor, an entry or a refusal, and as
        markup `[/]` would crash the toast and `[@click=…]` would be an action. `markup` is ignored."""
        super().notify(visible(str(message)), title=visible(str(title)), severity=severity, timeout=timeout,
                       markup=False)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_files.variable_defaults()

    def refresh_css(self, animate: bool = True) -> None:
        if not self._screen_composed:
            # The theme set in __init__ asks for this before anything is parsed: only the variables change. Textual
            # would parse every stylesheet now and, its parse cache not kept, all of them again at compose.
            self.stylesheet.set_variables(self.get_css_variables())
            return
        super().refresh_css(animate)

    def use_css(self, *names: str) -> None:
        """Add memtui/tui/`names` to the stylesheet, each once, before a widget they style mounts: the source
        Textual's `read` would have added at start, later in the order (which decides nothing: no widget is matched
        by one of their rules and another stylesheet's with the same specificity), and the widgets already shown
        are not styled again (no rule of theirs matches one)."""
        for name in names:
            path = str(CSS_DIR / name)
            if not self.stylesheet.has_source(path, ""):
                self.stylesheet.add_source((CSS_DIR / name).read_text(encoding="utf-8"), read_from=(path, ""))

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        """Every screen pushed over the main one (a dialog, help, the palette) has the dialogs' stylesheets."""
        self.use_css(*DIALOG_CSS)
        return super().push_screen(screen, *args, **kwargs)

    # layout -----------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        self._screen_composed = True
        # The queue (the review panel's list) is read now, in a thread, while the widgets are built and styled: read
        # from on_mount, it came after the first layout had begun and was shown in a second layout and frame. Its
        # result is shown before the first layout (`_first_data`).
        self._first_sync = self.sync(frozenset(), True, folder=False)
        yield MemtuiHeader(self.folder or self.memory.store.location, history=self.memory.store.history_kept,
                           id="header")
        with Horizontal(id="body"):
            yield MemoryTree(self.memory.store, self.root.name if self.folder else self.memory.store.location,
                             id="tree")
            with Tabbed(id="main") as main:
                # The viewer has the focus from the start: marked so now, not restyled before the first frame.
                main.strip.add_class("-focus-within")
                with TabPane(self.first_file, id=tab_id("file", self.first_file)):
                    viewer = self.viewer(self.first_file)
                    # Not when another pane has the screen: a focus the hidden viewer took as it mounted would be
                    # dropped, and the shown pane left without the keys.
                    viewer.focus_when_mounted = self.room.layout.maximized in (None, "main")
                    yield viewer
            yield ReviewPanel(id="review")
        yield ActivityFeed(id="feed")
        yield KeyFooter()
        yield SyncView(self.memory, id="git-sync")

    async def _first_data(self) -> None:
        """Wait (at most FIRST_DATA_WAIT) until MEMORY.md, the tree's top level and the queue are on the widgets, so
        the first layout and frame show them. Textual lays the screen out once the app's mount handler returns; the
        widgets' own message loops run meanwhile (the viewer's and the tree's loads arrive there), the app's does not,
        so the queue's first sync is shown here from its worker's result (its message, when it comes, is a repeat
        that `on_state_synced` drops by its number)."""
        deadline = time.monotonic() + FIRST_DATA_WAIT
        viewer, tree = self.viewer_for(self.first_file), self.tree
        loads = [w for w in (self._first_sync, getattr(viewer, "reading", None), tree.listing) if w is not None]
        ended, shown = 0, False
        while time.monotonic() < deadline:
            sync = self._first_sync
            if not shown and sync.state == WorkerState.SUCCESS and isinstance(sync.result, StateSynced):
                shown = True
                # This class's handler by name: Textual calls a subclass's and this one for a message, and a
                # subclass's that does not call up would leave the queue unshown.
                MemtuiApp.on_state_synced(self, sync.result)
            if self.synced and "" in tree.loaded and (viewer is None or viewer.state is not None):
                return
            # A load that ended without a result (a store that is down, a root that cannot be listed) posts
            # nothing: a few turns of the loop for what was posted, then the frame is painted without it.
            if all(w.is_finished for w in loads):
                ended += 1
                if ended > 5:
                    return
            await asyncio.sleep(0.002)

    def get_default_screen(self) -> Screen:
        """The main screen, which gives the keys to MEMORY.md's viewer as it is composed. Focusing it only at mount
        moved the focus twice (Textual's auto focus gave it to the activity feed first): each move restyles the
        widget it leaves and the one it reaches, before the first frame."""
        screen = MainScreen(id="_default")
        self.room.apply(self.size.width, screen)  # before the first layout: the first frame has the person's
        screen.hold_layout = True  # until the app's mount has the first data (on_mount releases it)
        return screen

    async def on_mount(self) -> None:
        # Those known before the first sync are told here: the sync's own are told as it is shown
        # (`on_state_synced`), which `_first_data` may do now.
        startup = list(self.problems)
        try:
            await self._first_data()
        finally:
            if isinstance(self.base, MainScreen):
                self.base.release_layout()
        if self.keymap_config:
            known = {b.id for b in self.all_bindings() if b.id}
            unknown = sorted(set(self.keymap_config) - known)
            if unknown:
                startup.append(f"[keys] in config.toml names unknown bindings {', '.join(unknown)}; "
                               f"known: {', '.join(sorted(known))}")
                self.problems.append(startup[-1])
            self.set_keymap({k: v for k, v in self.keymap_config.items() if k in known})
        for problem in startup:
            self.notify(problem, severity="warning", timeout=8)
        for news in self.told_at_start:  # markup off: a folder's path is no markup
            self.notify(news, timeout=12, markup=False)  # it names memtui itself: no title to say it twice
        self._theme_timer = None
        # Any way the person picks a theme (memtui's "Switch theme", Textual's theme picker) is saved; the picker
        # previews each theme it passes, so only the one that stays a moment is written.
        self.theme_changed_signal.subscribe(self, self._theme_chosen)
        # A pane the person gave the screen last time has the keys (the viewer is hidden behind it): given now, and
        # again after the first frame, when a focus the viewer took as it mounted may have been dropped as hidden.
        if self.room.layout.maximized in (None, "main"):
            self.base.query_one(MemoryViewer).focus()
        else:
            self.room.focus_shown_pane()
            self.call_after_refresh(self.room.focus_shown_pane)
        # From then on focus moving into a hidden pane gives it the screen (the focus moves above are done first).
        self.call_after_refresh(setattr, self.room, "live", True)
        # The queue is read in a thread started as the screen was composed (see compose); the whole-folder work
        # (`git status` over every file, the file count) waits until the first screen is painted: started with it,
        # its walk of every file shared the GIL with that screen's frames.
        self._first_screen_since = time.monotonic()
        self._first_screen_done = False
        self._first_screen_timer = self.set_interval(0.01, self._after_first_screen)
        self.call_after_refresh(self.start_watcher)

    def _after_first_screen(self) -> None:
        """Polled until MEMORY.md, the tree's top level and the queue are shown (they load in three workers),
        then reads the whole folder after the frame that paints them."""
        if not self.alive():  # quitting: the widgets it looks at are going
            self._first_screen_timer.stop()
            _settle_gc()
            return
        if self._first_screen_done:
            return  # a tick already queued when the timer was stopped: the folder is being read once already
        viewer = self.viewer_for(self.first_file)
        shown = self.synced and "" in self.tree.loaded and (viewer is None or viewer.state is not None)
        # A MEMORY.md that cannot be read never loads: past a moment the folder is read anyway.
        waited = time.monotonic() - self._first_screen_since > FIRST_SCREEN_WAIT
        if shown or waited or self.folder_synced:
            self._first_screen_done = True
            self._first_screen_timer.stop()
            # A moment after the frame that paints them, when the whole folder is usually shown too: the first
            # collection then (~100,000 young objects) takes 10-15 ms, and it held up that frame.
            self.set_timer(GC_SETTLE_AFTER, _settle_gc)
            if not self.folder_synced:
                self.call_after_refresh(self.sync)

    def viewer(self, rel: str) -> MemoryViewer:
        viewer = MemoryViewer(self.root, rel, read=self.memory.store.served, memory=self.memory, person=self.by)
        # Styled wrapped (or not) from the start: the class it takes at mount was a second styling of the viewer.
        return viewer.set_class(self.diff_wrap, "-wrap", update=False)

    @work(thread=True, group="watch", exit_on_error=False)
    def start_watcher(self) -> None:
        """Subscribe to the memory's change event: every write, memtui's own included, arrives as one
        `FilesChanged`. Without `watch` only this process's own writes are heard."""
        from memtui.tui.redis_watch import watcher_for

        watcher = watcher_for(self.memory, self.post_message, watch=self.watch_enabled)
        watcher.start()  # once watching, the first event says "anything may have changed": the sync catches up
        self.changes = watcher
        if self.watch_enabled:
            self.watcher = watcher
        if not self.alive():
            watcher.stop()  # the app quit while this started: on_unmount found no watcher to stop

    def store_connection(self, connected: bool, message: str) -> None:
        """The Redis memory went away (show it, keep what is on screen) or came back (reload what is shown)."""
        self.connected = connected
        self.base.query_one(MemtuiHeader).set_connected(connected)
        now = clock.now().strftime("%H:%M")
        if connected:
            self.feed.add(Activity(now, "memtui", "external", f"reconnected to {self.memory.store.location}"))
            self.notify(f"Reconnected to {self.memory.store.location}", markup=False)
            for viewer in self.base.query(MemoryViewer):
                viewer.reload()
            self.tree.reload_paths([""] + [v.rel for v in self.base.query(MemoryViewer)])
        else:
            text = message or f"lost {self.memory.store.location}; reconnecting"
            self.feed.add(Activity(now, "memtui", "problem", text))
            self.notify(markup=False, severity="warning", timeout=8, message=(
                f"Disconnected: {text}. What is shown may be out of date; writes wait for the store."))

    def action_switch_memory(self, url: str) -> None:
        """Leave for another memory on the same Redis server or cluster: `memtui.cli.run_app` opens it next."""
        self.exit(("switch-memory", url))

    def exit(self, *args: Any, **kwargs: Any) -> None:
        """Every way out: a sync still reading a big queue stops first (the process waits for its threads)."""
        self.state_sync.quitting.set()
        super().exit(*args, **kwargs)

    async def on_unmount(self) -> None:
        # Stopped and joined here, off the event loop: a watcher left running would still be reading when the
        # interpreter tears down.
        _settle_gc()
        said: list[str] = []
        problem = await asyncio.to_thread(self.room.write, quitting=True) if self.room.unsaved else None
        if problem:  # a layout chosen just before quitting is still kept, or this says it was not
            said.append(problem)
        # So is a theme chosen a moment ago (its timer had not fired), and a save under way is waited for.
        if self._theme_timer is not None:
            self._theme_timer.stop()
        wanted = self._theme_wanted
        await asyncio.to_thread(self.write_theme, wanted) if wanted else await asyncio.to_thread(self._theme_saved)
        if self._theme_problem is not None:
            name, why = self._theme_problem
            said.append(f"theme {name} was {why}; the next start has the theme saved before")
        if said:
            from rich.text import Text

            # Printed once the screen is restored (as Textual prints a crash: memtui/tui/crash.py); a toast now
            # would be taken down with the app unread.
            self._exit_renderables.append(Text("\n".join(f"memtui: {line}" for line in said)))
        watcher, self.watcher, self.changes = self.changes, None, None
        if watcher is not None:
            await asyncio.to_thread(watcher.stop)

    def alive(self) -> bool:
        """False while the app shuts down: a worker's late message finds no widgets to update. Textual clears
        `is_running` before it takes the screens down, one widget at a time (the feed may outlive the tree)."""
        return self.is_running and bool(self.screen_stack) and bool(self.screen_stack[0].query(ActivityFeed))

    @property
    def base(self):
        """The main screen, also while a dialog or the palette is on top."""
        return self.screen_stack[0]

    @property
    def main(self) -> Tabbed:
        return self.base.query_one("#main", Tabbed)

    @property
    def review(self) -> ReviewPanel:
        return self.base.query_one(ReviewPanel)

    @property
    def feed(self) -> ActivityFeed:
        return self.base.query_one(ActivityFeed)

    @property
    def tree(self) -> MemoryTree:
        return self.base.query_one(MemoryTree)

    def current_viewer(self) -> MemoryViewer | None:
        pane = self.main.active_pane
        if pane is None:
            return None
        found = pane.query(MemoryViewer)
        return found.first() if found else None

    def viewer_for(self, rel: str) -> MemoryViewer | None:
        for v in self.base.query(MemoryViewer):
            if v.rel == rel:
                return v
        return None

    # state from disk (memtui/tui/syncing.py) --------------------------------------------------------------
    @work(thread=True, group="sync", exit_on_error=False)
    def sync(self, changed: frozenset[str] = frozenset(), initial: bool = False, *, folder: bool = True,
             whole: bool = True) -> StateSynced | None:
        """Read the queue, the new audit records and the external changes (`StateSync.read`), in a thread."""
        return self.state_sync.read(changed, initial, folder=folder, whole=whole)

    def on_state_synced(self, message: StateSynced) -> None:
        self.state_sync.show(message)

    def on_queue_counted(self, message: QueueCounted) -> None:
        self.state_sync.counted(message)

    def on_files_changed(self, message: FilesChanged) -> None:
        self.state_sync.changed(message)

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and self.alive():
            error = event.worker.error
            text = f"{event.worker.name} failed: {error}"
            self.notify(text, severity="error", timeout=8)
            self.feed.add(Activity(clock.now().strftime("%H:%M"), "memtui", "problem", text))

    # files and tabs ---------------------------------------------------------------------------------------
    def open_file(self, rel: str, line: int | None = None) -> None:
        pid = tab_id("file", rel)
        main = self.main
        if pid in main.pane_ids:
            self.show_tab(pid)
            viewer = self.viewer_for(rel)
        else:
            viewer = self.viewer(rel)
            main.add_pane(TabPane(shown_name(rel), viewer, id=pid))  # `log /x.md` is not `log/x.md`
            self.show_tab(pid)
        if viewer is not None:
            if line is not None:
                viewer.go_to_line(max(0, line - 1))
                viewer.entry_cursor.cursor_on(max(0, line - 1))  # a search hit: the cursor on it, not on entry 1
            self.call_after_refresh(viewer.focus)

    @on(MemoryTree.FileSelected)
    def file_selected(self, event: MemoryTree.FileSelected) -> None:
        self.open_file(event.rel)

    def on_open_file(self, message: OpenFile) -> None:
        self.open_file(message.rel, message.line)

    def action_open_file(self, rel: str) -> None:
        self.open_file(rel)

    def on_log_activity(self, message: LogActivity) -> None:
        if not self.alive():
            return  # a pane's late note (a search answering) while the app quits
        self.feed.add(Activity(clock.now().strftime("%H:%M"), message.actor or self.by, message.kind, message.text,
                               message.file))

    @on(Tabbed.TabActivated)
    def tab_changed(self) -> None:
        """Moving to another tab counts as having seen a live diff: its marks clear.

        However the tab came up (its key, a click, the palette, ctrl+pgup/pgdn, the tab bar's arrows), a Chat or
        Search tab gets its input focused, so what the person types next lands in it and nowhere else."""
        if not self.alive():
            return  # a tab that came up as the app quits (its message bubbled up while the screen was taken down)
        current = self.current_viewer()
        for viewer in self.base.query(MemoryViewer):
            if viewer is not current and viewer.has_marks:
                viewer.action_acknowledge()
        if self.main.active and (not self._tab_trail or self._tab_trail[-1] != self.main.active):
            self._tab_trail = [*self._tab_trail[-15:], self.main.active]  # for escape's "back" (action_back)
        plugin = self.active_plugin()
        if plugin is not None:
            self.call_after_refresh(self.focus_plugin, plugin)
        # The review keys act, or not, by the tab on show (`check_action`): the footer is told the keys changed
        # once the tab has come up, not only at the focus moves around it, which can come before it.
        self.base.refresh_bindings()

    def active_plugin(self) -> Widget | None:
        """The plugin pane (Chat, Search, Today) in the tab on show, if it is one."""
        if not self.panes or not self.alive():
            return None
        pane = self.main.active_pane
        if pane is None:
            return None
        # A plugin is its TabPane's only child (action_open_pane): no walk of the pane's widgets, which the
        # footer would pay for on every focus change.
        return next((w for w in self.panes.values() if w.parent is pane), None)

    def focus_plugin(self, widget: Widget, always: bool = False) -> None:
        """Put focus in the plugin's own place (its input): always when its key asked for it, otherwise unless the
        focus is already inside the plugin (a widget in it was focused, which is what brought the tab up)."""
        if self.active_plugin() is not widget:
            return
        focused = self.base.focused
        if not always and focused is not None and (focused is widget or widget in focused.ancestors):
            return
        widget.focus()

    def show_tab(self, pane_id: str) -> None:
        """Bring a tab up from code. Focus inside the tab going away is let go first: Textual hands a hidden
        widget's focus to a sibling in the same hidden pane, and that pane would then take the screen back."""
        main = self.main
        focused = self.base.focused
        old = main.active_pane
        if focused is not None and old is not None and old.id != pane_id and old in focused.ancestors:
            self.base.set_focus(None)
        main.active = pane_id

    def focus_tab(self) -> None:
        """Focus what the active tab shows: a plugin's input, a file's viewer, a diff."""
        pane = self.main.active_pane
        if pane is None:
            return
        plugin = self.active_plugin()
        if plugin is not None:
            self.focus_plugin(plugin, True)
            return
        content = pane.query(MemoryViewer) or pane.query(DiffView)
        if content:
            content.first().focus()

    def action_back(self) -> None:
        """Escape: out of a text box first (to the results or log beside it, else the tree), so the next letter
        is a key again; then back one level: from a Chat, Search or Today tab to the tab shown before it (or the
        tree), from the review panel or the feed to the main area."""
        focused = self.focused
        if self.screen is not self.base or focused is None:
            return
        plugin = self.active_plugin()
        if isinstance(focused, Input) or _is_text_area(focused):
            inside = plugin if plugin is not None and plugin in focused.ancestors else None
            beside = [w for w in self.base.focus_chain if inside is not None and inside in w.ancestors
                      and not isinstance(w, Input) and not _is_text_area(w)]
            (beside[0] if beside else self.tree).focus()
        elif plugin is not None and plugin in focused.ancestors_with_self:
            before = next((t for t in reversed(self._tab_trail) if t != self.main.active and t in self.main.pane_ids),
                          None)
            if before is None:
                self.tree.focus()
            else:
                self.show_tab(before)
                self.call_after_refresh(self.focus_tab)
        elif focused is not self.tree and not any(w is self.main for w in focused.ancestors):
            self.focus_tab()

    def action_quit_or_copy(self) -> None:
        focused = self.focused
        if isinstance(focused, Input) and focused.selected_text:
            focused.action_copy()
        elif self.screen.get_selected_text():
            self.screen.action_copy_text()
        else:
            self.exit()

    def action_switch_tab(self, step: int) -> None:
        ids = self.main.pane_ids
        if not ids:
            return
        here = ids.index(self.main.active) if self.main.active in ids else 0
        self.show_tab(ids[(here + step) % len(ids)])
        self.call_after_refresh(self.focus_tab)

    def review_in_view(self) -> bool:
        """Whether the review keys act now: no text box has focus, and the person is not inside a Chat, Search
        or Today tab (there `a` or `r` belongs to what the tab shows) unless the focus is on the review panel."""
        if self.screen is not self.base:
            return False
        focused = self.focused
        if isinstance(focused, Input) or _is_text_area(focused):
            return False
        # Asked for every key the footer shows, at each focus move: the focus's ancestors are walked, not the DOM
        # (the base screen has one review panel).
        if focused is not None and any(isinstance(node, ReviewPanel) for node in focused.ancestors_with_self):
            return True
        plugin = self.active_plugin()
        # The Next session tab has no letter keys of its own: it shows what the selected proposal would do, so the
        # review's keys (], [, a, R …) act there, on what it shows.
        return plugin is None or plugin is self.panes.get("next_session")

    async def run_chosen_action(self, action: ActionParseResult) -> bool:
        """Run an action the person chose by name (the palette). The review keys' guard in `check_action` is for
        letters that could be text or belong to the tab on show; a command chosen by name is neither."""
        self.chosen_action = action[1]
        try:
            return await self.run_action(action)
        finally:
            self.chosen_action = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in REVIEW_ACTIONS and action != self.chosen_action and not self.review_in_view():
            return None  # shown dimmed in the footer; the key does nothing here
        if action == "switch_tab" and self.screen is not self.base:
            return False  # a priority key: over a dialog it is the dialog's
        return True

    def action_toggle_split(self) -> None:
        self.diff_split = not self.diff_split
        for view in self.base.query(DiffView):
            view.set_split(self.diff_split)
        self.notify("Diffs side by side" if self.diff_split else "Diffs unified")

    def action_toggle_wrap(self) -> None:
        self.diff_wrap = not self.diff_wrap
        for view in self.base.query(DiffView):
            view.set_wrap(self.diff_wrap)
        for viewer in self.base.query(MemoryViewer):
            viewer.wrap = self.diff_wrap
        self.feed.set_wrap(self.diff_wrap)
        self.notify("Long lines wrap (files, diffs and the activity feed)" if self.diff_wrap else
                    "Long lines are cut at the edge: scroll sideways to read them (W wraps them again)")

    def action_toggle_raw(self) -> None:
        viewer = self.current_viewer()
        if viewer is None:
            self.notify("Open a file first: the raw view shows a file's source")
            return
        viewer.raw = not viewer.raw

    def action_close_tab(self) -> None:
        pane = self.main.active_pane
        if pane is not None and pane.id:
            for kind, widget in list(self.panes.items()):
                if widget in pane.query("*"):
                    del self.panes[kind]
            self.main.remove_pane(pane.id)

    def action_diff_commit(self) -> None:
        viewer = self.current_viewer()
        if viewer is None:
            self.notify("Open a file first: the diff compares it with its last commit")
            return
        self.load_committed(viewer.rel)

    @work(thread=True, group="committed", exit_on_error=False)
    def load_committed(self, rel: str) -> None:
        before = self.memory.store.committed(rel)
        after = self.memory.store.read(rel)
        decode = lambda b: None if b is None else b.decode("utf-8", errors="replace")  # noqa: E731
        # Diffed here, not on the app's thread, and bounded: a 20 MB file's whole diff would freeze the app.
        self.post_message(CommittedLoaded(rel, unified(rel, decode(before), decode(after)), before is not None))

    def on_committed_loaded(self, message: CommittedLoaded) -> None:
        if not self.alive():
            return
        pid = tab_id("diff", message.rel)
        diff = message.diff
        empty = f"{message.rel} is as last committed." if message.committed else \
            f"{message.rel} was never committed (no history yet)."
        main = self.main
        if pid in main.pane_ids:
            main.get_pane(pid).query_one(DiffView).show(diff, empty, rel=message.rel)
        else:
            main.add_pane(TabPane(f"Δ {shown_name(message.rel)}",
                                  DiffView(diff, empty=empty, rel=message.rel), id=pid))
        self.show_tab(pid)

    def action_open_pane(self, kind: str) -> None:
        """Open a plugin tab of a kind in the registry (memtui/tui/panes.py), or bring up the one already open."""
        existing = self.panes.get(kind)
        if existing is not None:
            for pane in self.main.query(TabPane):
                if existing in pane.query("*"):
                    self.show_tab(pane.id or "")
                    # Already the active tab (focus moved away inside it): no TabActivated, so focus it here.
                    self.call_after_refresh(self.focus_plugin, existing, True)
                    return
        from memtui.tui.panes import PANES

        known = PANES.get(kind)
        if known is None:
            self.notify(f"{kind} is not available yet", severity="warning", markup=False)
            return
        self.use_css(known.css)
        widget = known.make(self.memory)
        pane_id = f"pane-{kind}"
        self.panes[kind] = widget
        self.main.add_pane(TabPane(known.title, widget, id=pane_id))
        self.show_tab(pane_id)
        self.call_after_refresh(widget.focus)

    # deciding ---------------------------------------------------------------------------------------------
    def action_next_proposal(self) -> None:
        self.review.option_list.action_cursor_down()

    def action_prev_proposal(self) -> None:
        self.review.option_list.action_cursor_up()

    def action_approve(self) -> None:
        self.deciding.approve()

    def action_revise(self) -> None:
        self.deciding.revise()

    def action_reject(self) -> None:
        self.deciding.reject()

    def action_approve_all(self) -> None:
        self.deciding.approve_all()

    def action_revise_of_current(self) -> None:
        self.deciding.revise_of_current()

    def on_decided(self, message: Decided) -> None:
        if self.alive():
            self.deciding.decided(message)

    def claim_decision(self, pid: str) -> bool:
        """Mark `pid` as being decided (a chat card's approval, as the review keys'): see `Deciding.claim`."""
        return self.deciding.claim(pid)

    def release_decision(self, pid: str) -> None:
        self.deciding.release(pid)

    def select_when_listed(self, pid: str, notice: str = "", after_hash: str | None = None) -> None:
        """Select and focus `pid` in review once it is listed, then say `notice` (`Deciding.select_when_listed`)."""
        self.deciding.select_when_listed(pid, notice, after_hash)

    def on_review_panel_shown(self, message: ReviewPanel.Shown) -> None:
        pane = self.panes.get("next_session")
        if pane is not None:
            pane.show_for(message.proposal)  # type: ignore[attr-defined]

    def action_sync_remote(self) -> None:
        self.base.query_one(SyncView).start()

    # consolidation (memtui/tui/consolidating.py) ---------------------------------------------------------
    def action_consolidate(self, section: str | None = None) -> None:
        self.consolidating.start(section)

    def on_consolidated(self, message: Consolidated) -> None:
        if self.alive():
            self.consolidating.drafted(message)

    def on_session_ended(self, message: SessionEnded) -> None:
        """An agent session ended: if MEMORY.md is over its caps, offer the consolidation (never applied unasked)."""
        if self.alive():
            self.consolidating.check()

    def on_consolidation_due(self, message: ConsolidationDue) -> None:
        if self.alive():
            self.consolidating.due(message)

    # room for each view (memtui/tui/room.py) ---------------------------------------------------------------
    def action_toggle_maximize(self) -> None:
        self.room.toggle_maximize()

    def action_toggle_stack(self) -> None:
        self.room.toggle_stack()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.room.focus_moved(event.widget)

    # keys and themes --------------------------------------------------------------------------------------
    def all_bindings(self) -> list[Binding]:
        from memtui.tui.dialogs import ConfirmScreen, RejectScreen, ReviseScreen

        out = [b for b in self.BINDINGS if isinstance(b, Binding)]
        for cls in (MemoryViewer, ReviseScreen, RejectScreen, ConfirmScreen):
            out += [b for b in cls.BINDINGS if isinstance(b, Binding)]
        return out

    def key_rows(self, lit: set[int] | None = None) -> list[tuple[str, str, str, str]]:
        from memtui.tui.help import key_rows

        return key_rows(self, lit)

    def action_help(self) -> None:
        from memtui.tui.help import HelpScreen, focus_name

        lit: set[int] = set()
        rows = self.key_rows(lit)  # as the keys are now: which work changes with the focus
        if not self.is_screen_installed("help"):  # made once and kept (laid-out tables are cached by their rows)
            self.install_screen(HelpScreen(rows, frozenset(lit), focus_name(self)), "help")
        help_screen = self.get_screen("help")
        if help_screen not in self.screen_stack:  # asked for again from the palette over the help
            help_screen.show(rows, frozenset(lit), focus_name(self))
            self.push_screen(help_screen)

    def action_switch_theme(self, name: str) -> None:
        self.theme = name
        self.notify(f"Theme: {name}", markup=False)

    def _theme_chosen(self, theme: Any) -> None:
        if self._theme_timer is not None:
            self._theme_timer.stop()
        self._theme_wanted = theme.name
        self._theme_timer = self.set_timer(THEME_SAVE_AFTER, lambda: self.save_theme(theme.name))

    @work(thread=True, group="theme", exit_on_error=False)
    def save_theme(self, name: str) -> None:
        """The chosen theme is the next start's too: saved to the root's config as the person's write."""
        if not self.write_theme(name):
            self.call_later(self._theme_not_saved)  # posted, never waited for: the app may be quitting

    def write_theme(self, name: str) -> bool:
        """Save `name` (in a thread); False when it was not saved, the reason kept in `_theme_problem` until a
        toast says it, or the quit prints it (`on_unmount`)."""
        with self._theme_lock:
            if self._theme_wanted == name:
                self._theme_wanted = None
            try:
                result = self.memory.set_theme(name, by=self.by)
            except Exception as exc:  # a store that cannot write: the theme still applies to this session
                self._theme_problem = (name, f"not saved: {exc}")
                return False
            why = result.message if result.message.startswith("not saved") else f"not saved: {result.message}"
            self._theme_problem = None if result.status == "applied" else (name, why)
            return result.status == "applied"

    def _theme_saved(self) -> None:
        """Wait for a theme save under way (in a thread)."""
        with self._theme_lock:
            pass

    def _theme_not_saved(self) -> None:
        problem = self._theme_problem
        if problem is not None and self.alive():
            self._theme_problem = None
            name, why = problem
            self.notify(f"Theme {name} is used now but was {why}", severity="warning", markup=False)
