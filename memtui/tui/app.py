"""MemtuiApp: wiring only. Widgets live in their own modules; IO runs in thread workers that post messages.

Layout (like JupyterLab): header; memory tree | tabbed main area | review panel; activity feed; footer.
"""

# ruff: noqa: E402
from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
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

from memtui.core import clock
from memtui.core.config import ENTRY_ACTIONS
from memtui.core.memory import MEMORY_FILE, Memory, default_actor
from memtui.core.proposals import CHANGED_SINCE_SEEN, CONFLICT, PENDING, Proposal
from memtui.core.store import StoreUnavailable
from memtui.core.queue_page import Stopped
from memtui.core.visible import shown_name
from memtui.tui import layout as layouts
from memtui.tui import theme_files
from memtui.tui.diff import DiffView, unified
from memtui.tui.for_people import decided
from memtui.tui.feed import ActivityFeed, AuditTail, activity_from_audit
from memtui.tui.header import MemtuiHeader
from memtui.tui.keys import KeyFooter
from memtui.tui.messages import (
    Activity, CommittedLoaded, Consolidated, ConsolidationDue, Decided, FilesChanged, LogActivity, MemoryChanged,
    OpenFile, ProposalsChanged, QueueCounted, SessionEnded, StateSynced, approving,
)
from memtui.tui.plain import visible
from memtui.tui.review import ReviewPanel
from memtui.tui.sync_view import SyncView
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

# The keys that decide what the review panel has selected: they act only while the panel is what the person looks
# at, never while a text box has focus (there the letters are text) nor from inside a Chat or Search tab.
THEME_SAVE_AFTER = 0.8  # seconds a chosen theme stays before it is saved to the config
REVIEW_ACTIONS = frozenset({"approve", "revise", "reject", "approve_all", "next_proposal", "prev_proposal",
                            "revise_of_current"})
# After a burst of changes the sync (queue, audit, `git status` over every file) waits this long, so the open
# viewer re-reads and paints its live diff first instead of sharing the GIL and the cores with git.
REVIEW_PAGE = 200  # proposals the review list holds in full; the others are counted in its title
SYNC_AFTER = 0.1
SYNC_POLL = 0.01  # while a viewer re-reads, the sync looks again this often
SYNC_WAIT_MAX = 1.0  # and starts anyway after this long
# A sync after files changed reads their external changes only (git status of those paths); the whole folder's
# (a quarter of a second of lstat at 100,000 files, which delayed the next append's live diff) is read again once
# no change came for this long: a change no event names (a commit made outside memtui) is shown then.
FOLDER_READ_QUIET = 2.0


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
        apply = getattr(self.app, "apply_layout", None)
        if apply is not None:
            apply(event.size.width)

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


def _contradicts(memory: Memory, proposals: list[Proposal],
                 known: dict[tuple[str, str, str | None, str | None], list[str]]) -> dict[str, list[str]]:
    """Each pending add's id → the current entries of its section it gives another value of, each file's reviewed
    text read once. Read with the queue, off the app's thread, but not for the first screen (see `sync`). `known`
    holds the pairs of the last sync by (file text, id, section, entry) and is refilled: a sync after a log
    line pairs nothing again (200 adds against a section of 1,000 entries took 0.27 s)."""
    from memtui.core import contradictions
    from memtui.core.store import StoreUnavailable

    texts: dict[str, str | None] = {}
    out: dict[str, list[str]] = {}
    seen: dict[tuple[str, str, str | None, str | None], list[str]] = {}
    for p in proposals:
        if p.action != "add" or p.external or p.status != "pending":
            continue
        if p.file not in texts:
            try:
                texts[p.file] = memory.base_text(p.file)
            except StoreUnavailable:
                raise
            except Exception:  # unreadable: the review and the approval say why
                texts[p.file] = None
        text = texts[p.file]
        if text is None:
            continue
        key = (hashlib.sha1(text.encode()).hexdigest(), p.id, p.section, p.entry)
        found = known.get(key)
        if found is None:
            found = [e.raw.strip() for e in contradictions.of_proposal(memory, p, text)]
        seen[key] = found
        if found:
            out[p.id] = found
    known.clear()
    known.update(seen)
    return out


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
    BINDINGS = [
        Binding("a", "approve", "Approve", id="approve", tooltip="Apply the selected proposal and commit it"),
        Binding("e", "revise", "Revise", id="revise", tooltip="Edit the selected proposal's entry, then approve"),
        Binding("r", "reject", "Reject", id="reject", tooltip="Reject the selected proposal (asks for a reason)"),
        Binding("A", "approve_all", "Approve all", id="approve_all", tooltip="Approve every pending proposal"),
        Binding("R", "revise_of_current", "As revise", id="revise_of_current", show=False,
                tooltip="Approve the selected add as a revise of the current entry it contradicts (struck as "
                "superseded)"),
        Binding("N", "open_pane('next_session')", "Next session", id="next_session", show=False,
                tooltip="The context the next agent session receives, and how the selected proposal changes it"),
        Binding("right_square_bracket", "next_proposal", "Next", id="next_proposal", show=False,
                tooltip="Select the next proposal in the review panel"),
        Binding("left_square_bracket", "prev_proposal", "Previous", id="prev_proposal", show=False,
                tooltip="Select the previous proposal in the review panel"),
        Binding("slash", "open_pane('search')", "Search", id="search", tooltip="Search the memory"),
        Binding("t", "open_pane('today')", "Today", id="today", tooltip="Today's log and changes"),
        Binding("c", "open_pane('chat')", "Chat", id="chat", tooltip="Chat with the embedded agent"),
        Binding("v", "toggle_raw", "Raw", id="toggle_raw", tooltip="Toggle between rendered and raw source"),
        Binding("d", "diff_commit", "Diff", id="diff_commit", tooltip="Diff the open file against its last commit"),
        # Not in the footer (nor W): at 120 columns it cut "? Keys" off the end; both are in the ? help.
        Binding("S", "toggle_split", "Side by side", id="toggle_split", show=False,
                tooltip="Show diffs side by side (old left, new right), or unified again"),
        Binding("W", "toggle_wrap", "Wrap", id="toggle_wrap", show=False,
                tooltip="Wrap long lines in files and diffs (symbols, line numbers and signs stay in their column), "
                "or cut them at the edge again"),
        Binding("w", "close_tab", "Close tab", id="close_tab", show=False, tooltip="Close the current tab"),
        # Priority: an input's scrolling ancestors bind these keys to sideways paging, which no tab here needs.
        Binding("ctrl+pagedown", "switch_tab(1)", "Next tab", id="next_tab", show=False, priority=True,
                tooltip="Show the next tab (also from inside a text box)"),
        Binding("ctrl+pageup", "switch_tab(-1)", "Previous tab", id="previous_tab", show=False, priority=True,
                tooltip="Show the previous tab (also from inside a text box)"),
        Binding("C", "consolidate", "Consolidate", id="consolidate", show=False,
                tooltip="Propose one reviewed rewrite of each MEMORY.md section over its cap"),
        Binding("P", "sync_remote", "Sync", id="sync_remote", show=False,
                tooltip="Sync with the memory's git remote: fetch, queue what came in for review, push what was "
                "approved (memtui/tui/sync_view.py)"),
        Binding("z", "toggle_maximize", "Zoom", id="maximize",
                tooltip="Give the focused pane the whole screen, or give it back"),
        Binding("Z", "toggle_stack", "Stack", id="toggle_stack", show=False,
                tooltip="Stack the panes (main area above the review queue) below 100 columns, always or never"),
        Binding("question_mark", "help", "Keys", id="help", tooltip="Show every key"),
        Binding("q", "quit", "Quit", id="quit", tooltip="Quit memtui"),
        # Not a priority: a dialog's escape (cancel) and the viewer's (clear diff marks) come first, and a running
        # chat turn's (cancel it). Elsewhere it leaves a text box, then goes back one level (`action_back`).
        Binding("escape", "back", "Back", id="back", show=False,
                tooltip="Leave the text box; again: back to the tab before (or the tree)"),
        # Textual's ctrl+c copies in a text box and only says "press ctrl+q" elsewhere: here it quits from anywhere
        # (ctrl+q too, Textual's), unless text is selected, which it copies as before.
        Binding("ctrl+c", "quit_or_copy", "Quit", id="quit_ctrl_c", show=False, priority=True,
                tooltip="Quit memtui (copies instead while text is selected)"),
    ]

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
        self._select_after_sync: str | None = None  # a proposal the app just made, selected once it is listed
        self._focus_after_sync: str | None = None  # and then the review list focused, and this said (see below)
        self._hash_after_sync: str | None = None  # and only when listed with these bytes (select_when_listed)
        self.consolidation_offer: list[str] = []
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
        self._external: list[Any] = []  # the external changes last read
        self._files: set[str] | None = None  # the memory files last counted (by the sync thread)
        self.problems: list[str] = []
        self._seq = itertools.count(1)
        self._shown_seq = 0
        # Proposals this app applied or rejected → the first sync number that read the queue after the decision:
        # an older sync's listing (read before the decision was written) must not bring one back.
        self._settled: dict[str, int] = {}
        self.arrivals: Any = None  # the ids listed so far (memtui/tui/arrivals.py), made at the first sync shown
        # Proposals a decision of this app is under way on: a key pressed again before it comes back must not act
        # on the same proposal a second time (it would be refused as already applied, and say "not applied").
        self._deciding: set[str] = set()
        self._sync_lock = threading.Lock()
        self._layout_lock = threading.Lock()
        self._quitting = threading.Event()
        self._sync_files: set[str] | None = None  # files changed since a deferred sync was scheduled
        self._sync_whole = False  # and a change among them that names no files (the whole folder is read again)
        self._external_read: list[Any] | None = None  # the external changes the last sync read (its thread's)
        self._paired: dict[Any, list[str]] = {}  # the last sync's contradiction pairs (its thread's, `_contradicts`)
        self._folder_timer: Any = None  # the whole folder's read, once changes stop coming
        self._audit = AuditTail(self.memory.store)
        config = self.memory.config
        for problem in (config.error, config.pending):
            if problem:
                self.problems.append(problem)
        self.keymap_config = {str(k): str(v) for k, v in config.section("keys").items()}
        # The person's layout (a pane given the screen, stacked or not), from their state folder: one small read,
        # so the first frame has it (memtui/tui/layout.py).
        self.layout = layouts.load()
        self._layout_saved = self.layout  # the layout the state folder holds (the last one written)
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
                    viewer.focus_when_mounted = self.layout.maximized in (None, "main")
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
        self.apply_layout(self.size.width, screen)  # before the first layout: the first frame has the person's
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
        self._theme_timer = None
        # Any way the person picks a theme (memtui's "Switch theme", Textual's theme picker) is saved; the picker
        # previews each theme it passes, so only the one that stays a moment is written.
        self.theme_changed_signal.subscribe(self, self._theme_chosen)
        # A pane the person gave the screen last time has the keys (the viewer is hidden behind it): given now, and
        # again after the first frame, when a focus the viewer took as it mounted may have been dropped as hidden.
        if self.layout.maximized in (None, "main"):
            self.base.query_one(MemoryViewer).focus()
        else:
            self._focus_shown_pane()
            self.call_after_refresh(self._focus_shown_pane)
        # From then on focus moving into a hidden pane gives it the screen (the focus moves above are done first).
        self.call_after_refresh(setattr, self, "_layout_live", True)
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
        viewer = MemoryViewer(self.root, rel, read=self.memory.store.read, memory=self.memory, person=self.by)
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
        self._quitting.set()
        super().exit(*args, **kwargs)

    async def on_unmount(self) -> None:
        # Stopped and joined here, off the event loop: a watcher left running would still be reading when the
        # interpreter tears down.
        _settle_gc()
        if self._layout_saved != self.layout:
            await asyncio.to_thread(self._write_layout)  # a layout chosen just before quitting is still kept
        watcher, self.watcher, self.changes = self.changes, None, None
        if watcher is not None:
            await asyncio.to_thread(watcher.stop)

    def alive(self) -> bool:
        """False while the app shuts down: a worker's late message finds no widgets to update."""
        return bool(self.screen_stack) and bool(self.screen_stack[0].query(ActivityFeed))

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

    # state from disk --------------------------------------------------------------------------------------
    @work(thread=True, group="sync", exit_on_error=False)
    def sync(self, changed: frozenset[str] = frozenset(), initial: bool = False, *, folder: bool = True,
             whole: bool = True) -> StateSynced | None:
        """Read the queue, the new audit records and the external changes, consistently, under the lock.

        Without `folder` only what the queue needs is read (the first screen's): the external changes (`git
        status` over every file) and the file count stay as they were shown (None: not read yet). Without `whole`
        only the `changed` files' external changes are read again, the others' kept from the last read."""
        with self._sync_lock:
            if self._quitting.is_set():
                return None
            seq = next(self._seq)
            try:
                with self.memory.store.lock():
                    records = self._audit.read_new(initial)
                    # The oldest page in full, the rest counted: 100,000 proposals read and drawn took 27 s and
                    # 1.36 GB; a quit stops the reading (`exit`).
                    page = self.memory.queue_page(REVIEW_PAGE, stop=self._quitting.is_set, count=False)
                    proposals = page.proposals
                    problems = list(self.memory.queue_problems)
                    if folder and not whole and changed and self._external_read is not None:
                        external = self.memory.external_proposals(changed, self._external_read)
                    else:
                        external = self.memory.external_proposals() if folder else None
                    if external is not None:
                        self._external_read = external
                    from memtui.core.lineage import lineages

                    # External changes too: in a layout that keeps no struck lines they are shown entry by entry.
                    lineage = lineages(self.memory, [*proposals, *(self._external_read or [])])
                # A pending proposal whose file moved on is shown as the conflict approving it would be, out of
                # the lock (its queue file is left alone: the approval checks again and records it).
                proposals = [p if why is None else p.replace(status=CONFLICT, reason=why)
                             for p, why in zip(proposals, self.memory.conflicts(proposals))]
                # Not for the first screen (nothing more before its first paint): the folder's sync brings them.
                contradicts = _contradicts(self.memory, proposals, self._paired) if folder else None
                count = self._file_count(changed) if folder else None
                # MEMORY.md is what every session loads: if it cannot be read, the person hears it here.
                if initial or MEMORY_FILE in changed:
                    from memtui.core.readable import problems as read_problems

                    problems += read_problems(self.memory.store, [MEMORY_FILE])
            except StoreUnavailable:
                # The store is down: the header already says so, and reconnecting syncs again.
                return None
            except Stopped:
                return None  # quitting
            synced = StateSynced(seq, proposals=proposals, external=external,
                                 activity=[activity_from_audit(r) for r in records], changed=changed,
                                 file_count=count, problems=problems, lineage=lineage, contradicts=contradicts,
                                 more=page.more if page.counted else None)
            self.post_message(synced)
            if not page.counted:  # shown first; the rest counted after, out of the store's lock
                try:
                    counted = self.memory.queue_page(REVIEW_PAGE, stop=self._quitting.is_set, after=page)
                except (Stopped, StoreUnavailable):
                    return synced
                self.post_message(QueueCounted(seq, counted.more))
            return synced  # the first screen's is shown from here (`_first_data`)

    def _file_count(self, changed: frozenset[str]) -> int | None:
        """The header's count of memory files, or None when it stands: each changed file was counted and its
        folder still lists it (one scandir each), so an append to MEMORY.md does not walk all 10,000 files."""
        known = self._files
        if known is not None and not changed:
            return None
        if known is not None and all(rel in known and self._listed(rel) for rel in changed):
            return None
        files = self.memory.files()
        self._files = set(files)
        return len(files)

    def _listed(self, rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        return (name, False) in self.memory.store.list_dir(folder)

    def on_state_synced(self, message: StateSynced) -> None:
        if message.seq <= self._shown_seq or not self.alive():  # older, or shown already (`_first_data`)
            return
        initial = self.folder_synced == 0 and message.external is not None  # the external changes, first read
        self._shown_seq = message.seq
        self.synced += 1
        for item in message.activity:
            self.feed.add(item)
        if message.external is None:
            external = self._external
        else:
            external = self._external = message.external
            self.folder_synced += 1
        if self._settled:  # an external change approved or rejected here: its id is its file's, listed the same
            external = [p for p in external if self._settled.get(p.id, 0) <= message.seq]
        written = {a.file for a in message.activity}
        now = clock.now().strftime("%H:%M")
        for p in message.external or ():
            if initial:
                self.feed.add(Activity(now, "external", "external", f"{p.id} {p.action} {p.file}: waiting for review",
                                       p.file))
            elif p.file in message.changed and p.file not in written:
                told = Activity(now, "external", "external", f"{p.file} changed on disk ({p.action}, not through "
                                "memtui)", p.file)
                last = self.feed.records[-1] if self.feed.records else None
                if last is None or (last.kind, last.text) != (told.kind, told.text):  # a log appended to, again
                    self.feed.add(told)
        for problem in message.problems:
            if problem not in self.problems:
                self.problems.append(problem)
                self.feed.add(Activity(now, "memtui", "problem", problem))
                self.notify(problem, severity="warning", timeout=10, markup=False)
        proposals = message.proposals
        if self._settled:
            proposals = [p for p in proposals if self._settled.get(p.id, 0) <= message.seq]
            self._settled = {pid: mark for pid, mark in self._settled.items() if mark > message.seq}
        everything = proposals + external
        self._announce(proposals, message, now)
        self.review.lineage = message.lineage
        if message.contradicts is not None:
            self.review.contradicts = message.contradicts
        # Not counted yet (more than a page): the last count stands until this sync's comes (`on_queue_counted`).
        more = message.more if message.more is not None else self.review.more or None
        self.review.set_proposals(everything, more=more)
        if self._select_after_sync and self._listed_as_expected() and self.review.select(self._select_after_sync):
            self._select_after_sync = self._hash_after_sync = None
            if self._focus_after_sync is not None:
                self.review.option_list.focus()
                if self._focus_after_sync:
                    self.notify(self._focus_after_sync, markup=False)
                self._focus_after_sync = None
        self._count_listed(message.file_count)
        self.base.query_one(SyncView).changed()  # ahead/behind and incoming in the header
        for pane in self.panes.values():
            pane.post_message(ProposalsChanged(list(everything)))

    def _announce(self, proposals: list[Any], message: StateSynced, now: str) -> None:
        """A proposal that arrived since the last sync (another process queued it): a feed line and a toast
        naming who proposed what where (memtui/tui/arrivals.py). Ones this app queued and told of already are
        not told again."""
        from memtui.tui.arrivals import Arrivals, feed_lines, toasts

        if self.arrivals is None:
            self.arrivals = Arrivals()
        told = {r.text.split(" ", 1)[0] for r in self.feed.records[-200:] if r.kind == "queued"}
        fresh = [p for p in self.arrivals.new(proposals) if p.id not in told]
        if not fresh:
            return
        for line in feed_lines(fresh, now):
            self.feed.add(line)
        waiting = len(proposals) + (message.more or 0)
        for title, text in toasts(fresh, waiting):
            self.notify(text, title=title, timeout=8, markup=False)

    def on_queue_counted(self, message: QueueCounted) -> None:
        if message.seq == self._shown_seq and self.alive():  # the count of the page shown, not of an older one
            self.review.set_proposals(self.review.proposals, more=message.more)

    def on_files_changed(self, message: FilesChanged) -> None:
        """The memory changed (one message per change event): reload what shows the changed files, then sync."""
        if not self.alive():
            return
        if message.connected is not None:
            self.store_connection(message.connected, message.message)
            if not message.connected:
                return
        files = frozenset(p for p in message.paths if not p.endswith("/"))
        self.changed_since_open |= files
        for viewer in self.base.query(MemoryViewer):
            if viewer.rel in files:
                viewer.reload()
        self.tree.reload_paths(message.paths)
        if files or message.queue or message.audit:
            if self._sync_files is None:
                self._sync_files = set()
                self.set_timer(SYNC_AFTER, self._sync_deferred)
            self._sync_files |= files
            self._sync_whole = self._sync_whole or bool(message.everything) or not files
        if files:
            for pane in self.panes.values():
                pane.post_message(MemoryChanged(files))

    def _sync_deferred(self, waited: float = 0.0) -> None:
        if not self.alive():
            self._sync_files = None
            return
        # An open viewer still re-reading its file: its live diff is painted first, then the sync starts.
        reading = any(w.group == "viewer-read" and w.is_running for w in self.workers)
        if reading and waited < SYNC_WAIT_MAX:
            self.set_timer(SYNC_POLL, lambda: self._sync_deferred(waited + SYNC_POLL))
            return
        files, self._sync_files = frozenset(self._sync_files or ()), None
        whole, self._sync_whole = self._sync_whole, False
        self.call_after_refresh(self.sync, files, whole=whole)
        if not whole:
            if self._folder_timer is not None:
                self._folder_timer.stop()
            self._folder_timer = self.set_timer(FOLDER_READ_QUIET, self._read_folder)

    def _read_folder(self) -> None:
        """Changes stopped coming: the whole folder's external changes are read again (see FOLDER_READ_QUIET)."""
        self._folder_timer = None
        if self.alive() and self._sync_files is None:
            self.sync()

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

    def _selected(self, verb: str):
        p = self.review.selected
        if p is None:
            self.notify(markup=False, message=f"Nothing to {verb}: no proposal is selected in the review panel")
        elif self._under_way(p.id):
            return None
        return p

    def _under_way(self, pid: str) -> bool:
        """Is a decision of this app on `pid` under way? Said to the person when it is."""
        if pid in self._deciding:
            self.notify(markup=False, message=f"{pid} is being decided; the list moves on once it is")
            return True
        return False

    def claim_decision(self, pid: str) -> bool:
        """Mark `pid` as being decided here (the review keys, a chat card); False, said to the person, when a
        decision on it is under way already. The mark goes when its decision comes back (`on_decided`)."""
        if self._under_way(pid):
            return False
        self._deciding.add(pid)
        return True

    def release_decision(self, pid: str) -> None:
        """A decision on `pid` ended with no result to come back (its worker failed): the keys act on it again."""
        self._deciding.discard(pid)

    def announce(self, p) -> None:
        """Say in the feed exactly which proposal an approval acts on, before it runs: id, file, entry."""
        self.feed.add(Activity(clock.now().strftime("%H:%M"), self.by, "approve", approving(p), p.file))

    def action_approve(self) -> None:
        p = self._selected("approve")
        if p is not None and self.claim_decision(p.id):
            self.announce(p)
            self.review.decided(p.id)
            # Bound to the proposal as drawn (its digest): one changed since is refused, not approved unseen. An
            # external change is approved as the bytes its diff was made from, or not at all.
            self.decide("approve", p.id, expect=p.after_hash if p.external else None, seen=p.digest())

    def on_review_panel_shown(self, message: ReviewPanel.Shown) -> None:
        pane = self.panes.get("next_session")
        if pane is not None:
            pane.show_for(message.proposal)  # type: ignore[attr-defined]

    def action_revise_of_current(self) -> None:
        """Approve the selected add as a revise of the one current entry it contradicts: that line is struck as
        superseded and the new one added below it. The approval plans it against the file as it is now."""
        p = self._selected("approve as a revise")
        if p is None:
            return
        current = self.review.contradicts.get(p.id, [])
        if p.action != "add" or p.external or len(current) != 1:
            why = (f"{p.id} contradicts {len(current)} current entries: revise it with e and name the one it replaces"
                   if len(current) > 1 else f"{p.id} contradicts no current entry: approve it with a, or revise it "
                   "with e")
            self.notify(why, severity="warning", markup=False)
            return
        if self.claim_decision(p.id):
            self.announce(p.replace(action="revise"))  # the feed says what it will be: a revise, not an add
            self.review.decided(p.id)
            self.decide("approve", p.id, seen=p.digest(), replaces=current[0])

    def action_reject(self) -> None:
        from memtui.tui.dialogs import RejectScreen

        p = self._selected("reject")
        if p is None:
            return
        seen = p.digest()  # the proposal the dialog names, as drawn

        def done(reason: str | None) -> None:
            if reason and self.claim_decision(p.id):  # a chat card may have started one meanwhile
                self.review.decided(p.id)
                self.decide("reject", p.id, reason, seen=seen)

        self.push_screen(RejectScreen(p), done)

    def action_revise(self) -> None:
        from memtui.tui.dialogs import ReviseScreen

        p = self._selected("revise")
        if p is None:
            return
        if p.external or p.action not in ENTRY_ACTIONS:
            self.notify(markup=False, severity="warning",
                        message=f"{p.id} is a whole-file {p.action}: approve or reject it (revise works on one entry)")
            return

        def done(result) -> None:
            if result is not None:
                self.review.decided(p.id)
                self.post_message(Decided("revise", p.id, result))

        self.push_screen(ReviseScreen(self.memory, p, self.by), done)

    def action_approve_all(self) -> None:
        from memtui.tui.dialogs import ConfirmScreen

        chosen = [p for p in self.review.proposals
                  if p.status == PENDING and not p.external and p.id not in self._deciding]
        ids = [p.id for p in chosen]
        seen = {p.id: p.digest() for p in chosen}  # each as listed when the person confirmed
        if not ids:
            self.notify("No pending proposals to approve")
            return

        def done(yes: bool | None) -> None:
            if yes:
                for p in chosen:
                    self.announce(p)
                self._deciding.update(ids)
                self.decide_all(ids, seen)

        self.push_screen(ConfirmScreen(f"Approve all {len(ids)} pending proposals ({', '.join(ids)})?"), done)

    @work(thread=True, group="decide", exit_on_error=False)
    def decide(self, verb: str, pid: str, reason: str | None = None, expect: str | None = None,
               seen: str | None = None, replaces: str | None = None) -> None:
        try:
            if verb == "reject":
                result = self.memory.reject(pid, reason=reason or "", by=self.by, seen=seen)
            else:
                result = self.memory.approve(pid, by=self.by, expect=expect, seen=seen, replaces=replaces)
        except BaseException:
            self.release_decision(pid)  # no decision comes back (the failure is shown)
            raise
        self.post_message(Decided(verb, pid, result))

    @work(thread=True, group="decide", exit_on_error=False)
    def decide_all(self, ids: list[str], seen: dict[str, str] | None = None) -> None:
        for k, pid in enumerate(ids):
            try:
                result = self.memory.approve(pid, by=self.by, seen=(seen or {}).get(pid))
            except BaseException:
                self._deciding.difference_update(ids[k:])
                raise
            self.post_message(Decided("approve", pid, result))

    def on_decided(self, message: Decided) -> None:
        if not self.alive():
            return
        self._deciding.discard(message.pid)
        r = message.result
        severity = {"applied": "information", "rejected": "information", "conflict": "warning"}.get(r.status, "error")
        # A decision that went through is in the feed too: its notice goes soon, so notices of a quick run of
        # decisions do not pile up over the next proposal's diff. One that did not go through stays to be read.
        timeout = 1.5 if r.status in ("applied", "rejected") else self.NOTIFICATION_TIMEOUT
        if r.status in ("applied", "rejected"):
            # Gone from the list now, not at the sync the write brings (~0.1 s on): a key pressed in between
            # would act on a proposal already decided, and be refused.
            self._settled[message.pid] = next(self._seq)
            self.review.settled(message.pid)
            self._count_listed()
        elif r.status == "refused" and CHANGED_SINCE_SEEN in r.message:
            # Nothing was decided: the feed says so (its "approving …" line named what was seen, not what is
            # there now). The change of its queue file is a change event of its own, whose sync draws the proposal
            # as it is now: kept selected, not moved on from, for the person to look again.
            self.feed.add(Activity(clock.now().strftime("%H:%M"), self.by, "refused",
                                   f"{message.verb} of {message.pid} refused: {CHANGED_SINCE_SEEN}; nothing was "
                                   "written", r.file))
            self.review.look_again(message.pid)
            self.select_when_listed(message.pid)
        self.notify(decided(message.pid, r.status, r.message), severity=severity,  # type: ignore[arg-type]
                    timeout=timeout)

    def _count_listed(self, file_count: int | None = None) -> None:
        """The header's counts and the tree's badges as the review list stands: after each sync, and after a
        decision took a proposal off the list before the sync its write brings."""
        listed = self.review.proposals
        queued = [p for p in listed if not p.external]
        pending: dict[str, int] = {}
        for p in queued:
            pending[p.file] = pending.get(p.file, 0) + 1
        self.tree.set_badges(pending=pending, external={p.file for p in listed if p.external},
                             changed=set(self.changed_since_open))
        counts: dict[str, int | None] = {"pending": sum(p.status == PENDING for p in queued),
                                         "conflict": sum(p.status == CONFLICT for p in queued)}
        if self.folder_synced:  # the external changes are known once the whole folder was read
            counts["external"] = sum(p.external for p in listed)
        if file_count is not None:
            counts["files"] = file_count
        self.base.query_one(MemtuiHeader).set_counts(**counts)

    def action_sync_remote(self) -> None:
        self.base.query_one(SyncView).start()

    # consolidation ----------------------------------------------------------------------------------------
    def action_consolidate(self, section: str | None = None) -> None:
        self.notify(markup=False, message=f"Drafting a consolidation of {section or 'every section over its cap'}…")
        self.consolidate(section)

    @work(thread=True, group="consolidate", exit_on_error=False)
    def consolidate(self, section: str | None = None) -> None:
        self.post_message(Consolidated(self.memory.consolidate(section, actor=self.by)))

    def select_when_listed(self, pid: str, notice: str = "", after_hash: str | None = None) -> None:
        """Select and focus `pid` in review, then say `notice`: now if it is listed, else once the sync that lists
        it is shown. Said only then: a notice naming a key (`a approve`) must not come while the key would still
        act on another proposal. With `after_hash`, only a listing of those bytes counts: an external change's id
        is its file's, so an older listing, or an agent's rewrite of the file, must not be announced as the
        person's edit."""
        self._select_after_sync, self._focus_after_sync, self._hash_after_sync = pid, notice, after_hash
        if self._listed_as_expected() and self.review.select(pid):
            self._select_after_sync = self._focus_after_sync = self._hash_after_sync = None
            self.review.option_list.focus()
            if notice:
                self.notify(notice, markup=False)

    def _listed_as_expected(self) -> bool:
        if self._hash_after_sync is None:
            return True
        return any(p.id == self._select_after_sync and p.after_hash == self._hash_after_sync
                   for p in self.review.proposals)

    def on_consolidated(self, message: Consolidated) -> None:
        if not self.alive():
            return
        now = clock.now().strftime("%H:%M")
        for r in message.results:
            where = f"{r.file} § {r.section}" if r.section else (r.file or MEMORY_FILE)
            if r.status == "queued" and r.id:
                self._select_after_sync, self._focus_after_sync, self._hash_after_sync = r.id, None, None
                self.feed.add(Activity(now, self.by, "queued", f"{r.id} consolidate {where}: waiting for review",
                                       r.file))
                self.notify(f"{r.id}: consolidation of {where} waits for review", timeout=6, markup=False)
            else:
                self.notify(r.message, severity="information" if r.status == "applied" else "warning", timeout=8)

    def on_session_ended(self, message: SessionEnded) -> None:
        """An agent session ended: if MEMORY.md is over its caps, offer the consolidation (never applied unasked)."""
        if self.alive():
            self.check_consolidation()

    @work(thread=True, group="consolidate", exit_on_error=False)
    def check_consolidation(self) -> None:
        self.post_message(ConsolidationDue(self.memory.consolidation_due()))

    def on_consolidation_due(self, message: ConsolidationDue) -> None:
        if not self.alive() or not message.sections:
            return
        from memtui.tui.help import key_names

        key = key_names(self.keymap_config.get("consolidate", "C"))
        text = (f"{MEMORY_FILE} is over its cap in {', '.join(message.sections)}: press {key} to propose a "
                "consolidation (you review it before it applies)")
        self.consolidation_offer = message.sections
        self.feed.add(Activity(clock.now().strftime("%H:%M"), "memtui", "problem", text, MEMORY_FILE))
        self.notify(text, severity="warning", timeout=15)

    # room for each view ---------------------------------------------------------------------------------------
    def apply_layout(self, width: int | None = None, screen: Screen | None = None) -> None:
        """Set the main screen's classes for `self.layout` at `width` (app.tcss): which pane has the screen, and
        whether the body stacks. Classes already set are no change (no layout)."""
        screen = screen or self.base
        width = self.size.width if width is None else width
        pane = self.layout.maximized
        screen.set_class(self.layout.stacked(width), "-narrow")
        screen.set_class(pane is not None, "-max")
        for name in layouts.PANES:
            screen.set_class(pane == name, f"-max-{name}")

    def pane_of(self, widget: Widget | None) -> str | None:
        """The screen pane (layouts.PANES, by id) `widget` is in."""
        while widget is not None:
            if widget.id in layouts.PANES and widget.parent is not None and widget.screen is self.base:
                return widget.id
            widget = widget.parent  # type: ignore[assignment]
        return None

    def _focus_shown_pane(self) -> None:
        name = self.layout.maximized
        if name is None or self.pane_of(self.base.focused) == name:
            return
        pane = self.base.query_one(f"#{name}")
        # Asked by can_focus: before the first layout `focusable` is not yet known for the pane's widgets.
        target = pane if pane.can_focus else next((w for w in pane.query("*") if w.can_focus), None)
        if target is not None:
            target.focus()

    def set_layout(self, new: layouts.Layout) -> None:
        if new == self.layout:
            return
        self.layout = new
        self.apply_layout()
        self.save_layout(new)

    @work(thread=True, group="layout", exit_on_error=False)
    def save_layout(self, chosen: layouts.Layout) -> None:
        """The layout chosen is the next start's too: saved to the person's state folder, never the memory's."""
        problem = self._write_layout()
        if problem:
            self.call_from_thread(self.notify, problem, severity="warning", markup=False)

    def _write_layout(self) -> str | None:
        """Write the layout in force now (not the one a thread was started for: `z` pressed twice starts two
        threads, which may finish in either order, and the later choice must be the one kept)."""
        with self._layout_lock:
            current = self.layout
            if current == self._layout_saved:
                return None
            problem = layouts.save(current)
            if problem is None:
                self._layout_saved = current
            return problem

    def action_toggle_maximize(self) -> None:
        """`z`: the focused pane (Today, Search, Chat or a file in the main area, the review queue, the tree, the
        feed) takes the body's whole width and height; again, every pane is shown (JupyterLab's single-document
        mode, tmux's zoom)."""
        if self.layout.maximized is not None:
            self.set_layout(self.layout.with_maximized(None))
            return
        pane = self.pane_of(self.base.focused) or "main"
        self.set_layout(self.layout.with_maximized(pane))

    def action_toggle_stack(self) -> None:
        """`Z`: stack the body below layouts.NARROW columns (the default), always, or never; said in a toast."""
        order = layouts.STACK_CHOICES
        new = order[(order.index(self.layout.stack) + 1) % len(order)]
        self.set_layout(layouts.Layout(self.layout.maximized, new))
        said = {"auto": f"stacked below {layouts.NARROW} columns", "on": "stacked at every width",
                "off": "side by side at every width"}[new]
        self.notify(f"Layout: {said} (Z changes it)", timeout=3, markup=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Focus moved (Tab, a key that opens a pane, a click) into a pane hidden by another's zoom: that pane is
        given the screen instead, so the focused widget is always in view."""
        pane = self.layout.maximized
        if pane is None or not getattr(self, "_layout_live", False):
            return
        where = self.pane_of(event.widget)
        if where is not None and where != pane:
            self.set_layout(self.layout.with_maximized(where))

    # keys and themes --------------------------------------------------------------------------------------
    def all_bindings(self) -> list[Binding]:
        from memtui.tui.dialogs import ConfirmScreen, RejectScreen, ReviseScreen

        out = [b for b in self.BINDINGS if isinstance(b, Binding)]
        for cls in (MemoryViewer, ReviseScreen, RejectScreen, ConfirmScreen):
            out += [b for b in cls.BINDINGS if isinstance(b, Binding)]
        return out

    def key_scopes(self) -> list[tuple[str, list[Binding]]]:
        """Every pane's keys, in the screen's order, from the bindings themselves (help cannot drift from them):
        the review keys are the app's, listed under the review panel where they act. The pane modules are imported
        here, as help first opens, not at start."""
        from textual.widgets import Tree

        from memtui.tui.chat import ChatPane, ProposalCardView
        from memtui.tui.dialogs import ConfirmScreen, RejectScreen, ReviseScreen
        from memtui.tui.search import SearchPane
        from memtui.tui.today import TodayPane

        def own(*classes: type) -> list[Binding]:
            return [b for cls in classes for b in cls.BINDINGS if isinstance(b, Binding)]

        app = own(type(self))
        return [("tree", own(MemoryTree) or own(Tree)), ("viewer", own(MemoryViewer)),
                ("review", [b for b in app if b.action in REVIEW_ACTIONS] + own(DiffView)),
                ("Today", own(TodayPane)), ("search", own(SearchPane)), ("chat", own(ChatPane, ProposalCardView)),
                ("app", [b for b in app if b.action not in REVIEW_ACTIONS]), ("revise", own(ReviseScreen)),
                ("reject", own(RejectScreen)), ("confirm", own(ConfirmScreen))]

    def key_rows(self, lit: set[int] | None = None) -> list[tuple[str, str, str, str]]:
        """(pane, keys, binding id, what it does) for every key; `lit`, if given, gets the indexes of the rows
        whose key works now on the main screen (Textual's active bindings: the focused widget's, its ancestors',
        the app's, each enabled by `check_action`, a key shadowed by a nearer widget's not)."""
        now = {(b.binding.id or b.binding.action) for b in self.base.active_bindings.values() if b.enabled}
        everywhere = [("app", "ctrl+p", "command_palette", "Command palette: open files, decide, switch theme"),
                      ("app", "tab", "-", "Move focus: tree, main area (its tab bar, then the tab), review list, "
                                          "diff, activity feed; shift+tab back")]
        rows: list[tuple[str, str, str, str]] = []
        listed: set[str] = set()
        for scope, bindings in self.key_scopes():
            if scope == "app":
                if lit is not None:
                    lit.update(range(len(rows), len(rows) + len(everywhere)))
                rows += everywhere
            for b in bindings:
                if not (b.id or b.description):
                    continue  # a key Textual's widget keeps to itself, undescribed
                if b.id in listed or b.action.startswith("app."):
                    continue  # the same binding again, or the app's (a pane's `?`, first in its footer): the app's
                listed.add(b.id or "")
                keys = self.keymap_config.get(b.id or "", b.key)
                if lit is not None and (b.id or b.action) in now:
                    lit.add(len(rows))
                rows.append((scope, keys, b.id or "-", b.tooltip or b.description))
        return rows

    def focus_name(self) -> str:
        """The pane the focus is in, by the names help uses."""
        focused = self.base.focused
        if focused is None:
            return ""
        ancestors = focused.ancestors_with_self
        plugin = next((kind for kind, w in self.panes.items() if w in ancestors), None)
        if plugin is not None:
            return {"today": "Today"}.get(plugin, plugin)
        for widget, name in ((self.tree, "tree"), (self.review, "review"), (self.feed, "activity feed")):
            if widget in ancestors:
                return name
        return "viewer" if isinstance(focused, MemoryViewer) else "main area"

    def action_help(self) -> None:
        lit: set[int] = set()
        rows = self.key_rows(lit)  # as the keys are now: which work changes with the focus
        if not self.is_screen_installed("help"):  # made once and kept (laid-out tables are cached by their rows)
            from memtui.tui.help import HelpScreen

            self.install_screen(HelpScreen(rows, frozenset(lit), self.focus_name()), "help")
        help_screen = self.get_screen("help")
        if help_screen not in self.screen_stack:  # asked for again from the palette over the help
            help_screen.show(rows, frozenset(lit), self.focus_name())
            self.push_screen(help_screen)

    def action_switch_theme(self, name: str) -> None:
        self.theme = name
        self.notify(f"Theme: {name}", markup=False)

    def _theme_chosen(self, theme: Any) -> None:
        if self._theme_timer is not None:
            self._theme_timer.stop()
        self._theme_timer = self.set_timer(THEME_SAVE_AFTER, lambda: self.save_theme(theme.name))

    @work(thread=True, group="theme", exit_on_error=False)
    def save_theme(self, name: str) -> None:
        """The chosen theme is the next start's too: saved to the root's config as the person's write."""
        try:
            result = self.memory.set_theme(name, by=self.by)
        except Exception as exc:  # a store that cannot write: the theme still applies to this session
            self.call_from_thread(self.notify, f"Theme {name} not saved: {exc}", severity="warning")
            return
        if result.status != "applied":
            self.call_from_thread(self.notify, f"Theme {name} is used now but was {result.message}",
                                  severity="warning")
