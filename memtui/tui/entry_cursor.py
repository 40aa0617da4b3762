"""The viewer's entry cursor and the person's edits on the entry under it (a helper each `MemoryViewer` holds).

The cursor walks the current entries (struck history is read, not edited), or only those a review filter shows.
It appears when the person first moves it (j/k, the arrows, a filter); until then the viewer scrolls as a reader
and the app's review keys (e, d) act as before. Every edit is one call on the one write path as the person
(`Memory.update`, `Memory.move`, `history.undo_last`), in a thread; the viewer then reloads quietly (no live-diff
marks for your own edit) and tells the app the files changed, so the tree, the feed and Today follow.

`EntryCursor` is given the memory and the person it writes as; the viewer keeps the keys (its bindings and
`action_*` methods hand each key to the cursor) and draws what the cursor says.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import shlex
import subprocess
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Protocol, cast

from textual.app import SuspendNotSupported
from textual.binding import Binding
from textual.message import Message
from textual.notifications import SeverityLevel

from memtui.core.basics import clock
from memtui.core.grammar.entries import Entry
from memtui.core.hygiene import curate
from memtui.core.timeline.provenance import SYMBOLS
from memtui.core.writing.changes import touched
from memtui.core.writing.proposals import WriteResult
from memtui.tui.for_people import typed
from memtui.tui.keys import HELP_FIRST

if TYPE_CHECKING:
    from textual.geometry import Offset, Region

    from memtui.core.writing.memory import Memory
    from memtui.tui.entry_bar import EntryBar
    from memtui.tui.host import Host
    from memtui.tui.messages import ViewerState

EDIT_ACTIONS = {"revise_entry", "remove_entry", "retag_entry", "move_entry", "add_entry"}
CURSOR_ACTIONS = {"cursor_down", "cursor_up", "next_section", "previous_section", "cycle_filter"}

CURSOR_BINDINGS = [
    HELP_FIRST,  # with the cursor's keys the footer is wider than 120 columns
    Binding("j", "cursor_down", "Next entry", id="viewer.next_entry", show=False,
            tooltip="Move the cursor to the next entry (down does the same)"),
    Binding("k", "cursor_up", "Previous entry", id="viewer.previous_entry", show=False,
            tooltip="Move the cursor to the previous entry (up does the same)"),
    Binding("J,right_curly_bracket", "next_section", "Next section", id="viewer.next_section", show=False,
            tooltip="Jump to the first entry of the next section"),
    Binding("K,left_curly_bracket", "previous_section", "Previous section", id="viewer.previous_section",
            show=False, tooltip="Jump to the first entry of the previous section"),
    # With the cursor showing `e` revises the entry, not the selected proposal: the footer names it "Revise entry".
    # Removing has its own key (x), so `d` is the diff wherever you are.
    Binding("e", "revise_entry", "Revise entry", id="viewer.revise_entry",
            tooltip="Revise the entry under the cursor (the old line is struck superseded)"),
    Binding("x", "remove_entry", "Remove entry", id="viewer.remove_entry",
            tooltip="Remove the entry under the cursor, after a confirmation (struck removed)"),
    Binding("p", "retag_entry", "Tag", id="viewer.retag_entry",
            tooltip="Change the entry's provenance: promote an agent's guess to [stated], or demote"),
    Binding("m", "move_entry", "Move", id="viewer.move_entry",
            tooltip="Move the entry to another section or file (struck where it was)"),
    Binding("o", "add_entry", "Add below", id="viewer.add_entry",
            tooltip="Add a new entry just below the cursor, in its section"),
    Binding("E", "open_editor", "$EDITOR", id="viewer.editor", show=False,
            tooltip="Open the file in $EDITOR at this line; the change then waits in review as external"),
    Binding("u", "undo_own", "Undo mine", id="viewer.undo",
            tooltip="Undo your own last edit, as a new commit"),
    Binding("f", "cycle_filter", "Filter", id="viewer.filter",
            tooltip="Show only [inferred]/[suggested], untagged, or stale entries; again for the next"),
    # The same keys while there is no cursor yet: they work, but the footer stays a reader's until the cursor
    # shows (a second binding per key, because a binding's `show` cannot change).
    Binding("u", "undo_own(True)", "Undo mine", id="viewer.undo.reading", show=False,
            tooltip="u before the cursor shows: undo your own last edit"),
    Binding("f", "cycle_filter(True)", "Filter", id="viewer.filter.reading", show=False,
            tooltip="f before the cursor shows: start a review filter"),
]


@dataclass
class BlameLoaded(Message):
    version: str
    lines: list[Any] | str
    # An entry line → its earlier versions, struck, where the layout keeps them in history, not in the file.
    earlier: dict[str, list[str]] = field(default_factory=dict)


def version_of(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", errors="replace")).hexdigest()


def section_at(st: ViewerState, line: int) -> str:
    """The title of the section `line` is in, by bisection (a walk of every heading per entry made a section
    jump in a file of 1,000 sections cost millions of steps)."""
    sections = st.extra.get("sections", [])
    heads = st.extra.get("section_heads")
    if heads is None or len(heads) != len(sections):
        heads = st.extra["section_heads"] = [h for h, _ in sections]
    k = bisect.bisect_right(heads, line) - 1
    return sections[k][1] if k >= 0 else ""


class CursorView(Protocol):
    """The viewer as its entry cursor drives it (memtui/tui/viewer.py's MemoryViewer is the one): named here, not
    imported, since the viewer makes its cursor."""

    rel: str
    state: ViewerState | None
    loads: int
    wrap: bool

    @property
    def app(self) -> Any: ...

    @property
    def scroll_offset(self) -> Offset: ...

    @property
    def scrollable_content_region(self) -> Region: ...

    def _build_rows(self) -> None: ...

    def _invalidate(self) -> None: ...

    def _row_of(self, line: int) -> int: ...

    def keep_in_view(self, line: int) -> None: ...

    def scroll_to(self, *args: Any, **kwargs: Any) -> None: ...

    def run_worker(self, *args: Any, **kwargs: Any) -> Any: ...

    def post_message(self, message: Message) -> bool: ...

    def refresh_bindings(self) -> None: ...

    def notify(self, message: str, **kwargs: Any) -> None: ...

    @property
    def is_attached(self) -> bool: ...


class EntryCursor:
    """Cursor state and the edits on the entry under it, for one viewer (`view`), written as `person`."""

    def __init__(self, view: CursorView, memory: Memory, person: str) -> None:
        self.view = view
        self.memory = memory
        self.person = person
        self.cursor: int | None = None
        self.entry_filter: str | None = None
        self.bar: EntryBar | None = None  # mounted under the viewer by the viewer
        self._cursor_target: str | None = None
        self._cursor_wanted: int | None = None
        self._shown_key: tuple | None = None
        self._shown: list[int] = []
        self._reading = True
        self._loads_at_write = 0  # the viewer's load count when its latest write began
        self._blame: dict[str, list[Any] | str] = {}
        self._earlier: dict[str, list[str]] = {}  # lineage.superseded_lines of the file, with the blame
        self._tags: bool | None = None
        self._blame_asked: set[str] = set()
        self.own_versions: set[str] = set()  # versions of files this viewer's own writes left
        self._in_flight = 0
        self._in_flight_lock = threading.Lock()

    @property
    def app(self) -> Host:
        return cast("Host", self.view.app)

    @property
    def rel(self) -> str:
        return self.view.rel

    # what the cursor can stand on ---------------------------------------------------------------------------
    def entries_known(self) -> bool:
        st = self.view.state
        return st is not None and "current" in st.extra

    def shown_lines(self) -> list[int]:
        """Current entry lines the active filter shows, in file order (cached per loaded state and filter)."""
        st = self.view.state
        key = (id(st), self.entry_filter)
        if key != self._shown_key:
            current: dict[int, Entry] = st.extra.get("current", {}) if st is not None else {}
            today = clock.today()
            after = curate.stale_days(self.memory.config) if self.entry_filter == "stale" else 0
            self._shown = sorted(i for i, e in current.items()
                                 if curate.shows(e, self.entry_filter, today=today, stale_after=after))
            self._shown_key = key
        return self._shown

    def entry_at(self, line: int | None) -> Entry | None:
        st = self.view.state
        if line is None or st is None:
            return None
        return st.extra.get("current", {}).get(line)

    def section_at(self, line: int) -> str:
        st = self.view.state
        return section_at(st, line) if st is not None else ""

    def filtered_rows(self) -> list[int]:
        """The lines a filtered view shows: each section heading that has a shown entry, then those entries."""
        st = self.view.state
        heads = [h for h, _ in st.extra.get("sections", [])] if st is not None else []
        out: list[int] = []
        last = None
        for i in self.shown_lines():
            k = bisect.bisect_right(heads, i) - 1
            if k >= 0 and heads[k] != last:
                last = heads[k]
                out.append(last)
            out.append(i)
        return out

    # moving -------------------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "retag_entry" and not self._layout_tags():
            return False  # the layout's files carry no tags (OpenClaw): a tag would not be written
        if action in EDIT_ACTIONS:
            return self.cursor is not None and self.entry_at(self.cursor) is not None
        if action in ("undo_own", "cycle_filter"):  # the shown binding with a cursor, the hidden one without
            reading = self.cursor is None and self.entry_filter is None
            if bool(parameters) != reading:
                return False
        if action in CURSOR_ACTIONS:
            return self.entries_known()
        return True

    def _layout_tags(self) -> bool:
        """Whether entries of this memory carry tags (`Layout.tags`), asked once: bindings are checked often."""
        if self._tags is None:
            self._tags = self.memory.layout().tags
        return self._tags

    def set_cursor(self, line: int | None) -> None:
        view = self.view
        self.cursor = line
        view._invalidate()
        reading = line is None and self.entry_filter is None
        if reading != self._reading:  # the footer switches between a reader's keys and the curate keys
            self._reading = reading
            view.refresh_bindings()
        if line is not None and view.wrap:
            view.keep_in_view(line)  # the whole of the line's wrapped rows, not only its first
        elif line is not None:
            row = view._row_of(line)
            top = view.scroll_offset.y
            height = max(1, view.scrollable_content_region.height)
            if row < top or row >= top + height:
                view.scroll_to(y=max(0, row - height // 3), animate=False)
        self.update_bar()

    def _first_visible(self) -> int | None:
        shown = self.shown_lines()
        if not shown:
            return None
        top = self.view.scroll_offset.y
        return next((i for i in shown if self.view._row_of(i) >= top), shown[-1])

    def step(self, delta: int) -> None:
        shown = self.shown_lines()
        if not shown:
            self.set_cursor(None)
            self.notify_filter_empty()
            return
        if self.cursor is None or self.cursor not in shown:
            self.set_cursor(self._first_visible() if self.cursor is None else self._nearest(self.cursor))
            return
        k = shown.index(self.cursor)
        self.set_cursor(shown[max(0, min(len(shown) - 1, k + delta))])

    def _nearest(self, line: int) -> int | None:
        shown = self.shown_lines()
        if not shown:
            return None
        return next((i for i in shown if i >= line), shown[-1])

    def jump_section(self, delta: int) -> None:
        shown = self.shown_lines()
        if not shown:
            return
        if self.cursor is None:
            self.set_cursor(self._first_visible())
            return
        here = self.section_at(self.cursor)
        order = shown if delta > 0 else list(reversed(shown))
        start = order.index(self.cursor) if self.cursor in order else 0
        for i in order[start:]:
            if self.section_at(i) != here:
                if delta < 0:  # to the first entry of that section
                    there = self.section_at(i)
                    i = next(j for j in shown if self.section_at(j) == there)
                self.set_cursor(i)
                return
        self.set_cursor(order[-1] if delta > 0 else shown[0])

    def cycle_filter(self) -> None:
        self.entry_filter = curate.next_filter(self.entry_filter)
        self.view._build_rows()
        shown = self.shown_lines()
        if self.entry_filter is None:
            self.set_cursor(self.cursor)
        elif not shown:
            self.set_cursor(None)
            self.notify_filter_empty()
        else:
            self.set_cursor(self._nearest(self.cursor) if self.cursor is not None else shown[0])
        self.view.scroll_to(y=max(0, self.view._row_of(self.cursor or 0) - 3), animate=False)
        self.update_bar()

    def notify_filter_empty(self) -> None:
        if self.entry_filter is not None:
            self.view.notify(markup=False, message=(
                f"No entry of {self.rel} is {curate.FILTER_LABELS[self.entry_filter].removesuffix(' only')}"
                " — press f for the next filter"))

    def leave(self) -> bool:
        """escape: drop the filter, then the cursor; False when there was neither."""
        if self.entry_filter is not None:
            self.entry_filter = None
            self.view._build_rows()
            self.set_cursor(self.cursor)
            return True
        if self.cursor is not None:
            self.set_cursor(None)
            return True
        return False

    def cursor_on(self, line: int) -> None:
        """Open at a line (a search hit): the cursor on it once the file's entries are known, when it is a current
        entry; a hit in struck history or a heading is only scrolled to (the cursor walks current entries)."""
        self._cursor_wanted = line
        self._place_wanted()

    def _place_wanted(self) -> None:
        line = self._cursor_wanted
        if line is None or not self.entries_known():
            return
        self._cursor_wanted = None
        if line in self.shown_lines():
            self.set_cursor(line)

    def restore_cursor(self) -> None:
        """After a reload: onto the entry an edit wrote, else the same place (the next entry, if it went)."""
        self._place_wanted()
        if self.cursor is None and self.entry_filter is None:
            return
        shown = self.shown_lines()
        target, self._cursor_target = self._cursor_target, None
        if target:
            hit = next((i for i in shown if target in (self.entry_at(i) or Entry("")).raw), None)
            if hit is not None:
                self.set_cursor(hit)
                return
        if self.cursor is None:
            self.update_bar()
            return
        self.set_cursor(self._nearest(self.cursor))

    # the entry bar ------------------------------------------------------------------------------------------
    def update_bar(self) -> None:
        bar = self.bar
        if bar is None:
            return
        active = self.cursor is not None or self.entry_filter is not None
        bar.display = active
        if not active:
            return
        st = self.view.state
        entry = self.entry_at(self.cursor)
        shown = self.shown_lines()
        where = f"{shown.index(self.cursor) + 1}/{len(shown)}" if self.cursor in shown else f"–/{len(shown)}"
        who: Any = None
        marks = st.extra.get("provenance") if st is not None else None
        if entry is not None and marks is not None and self.cursor is not None and self.cursor < len(marks):
            who = marks[self.cursor]  # a format without tags: who wrote it, by memtui's record (the viewer read it)
            version = st.extra.get("version", "") if st is not None else ""
            if version not in self._blame_asked:  # the entry's earlier versions, from history: no blame needed
                self._blame_asked.add(version)
                self.load_blame(version, blame_too=False)
        elif entry is not None and st is not None:
            version = st.extra.get("version", "")
            blame = self._blame.get(version)
            if isinstance(blame, str):
                who = blame
            elif blame is not None and self.cursor is not None:
                who = blame[self.cursor] if self.cursor < len(blame) else "not committed yet"
            elif version not in self._blame_asked:
                self._blame_asked.add(version)
                self.load_blame(version)
        label = None if self.entry_filter is None else curate.FILTER_LABELS[self.entry_filter]
        bar.show_entry(entry, self.section_at(self.cursor) if self.cursor is not None else "",
                       SYMBOLS.get(entry.tag if entry else None, "⚑"), who=who, filter_label=label,
                       position=f"entry {where}", earlier=self._earlier.get(entry.raw) if entry else None)

    def load_blame(self, version: str, *, blame_too: bool = True) -> None:
        """Read the file's blame and (in a layout that keeps no struck lines) its entries' earlier versions in a
        thread; `blame_too` False where the viewer has each line's provenance already and only the earlier
        versions are wanted."""
        self.view.run_worker(partial(self._read_blame, version, blame_too), name="load_blame", group="blame",
                             thread=True, exit_on_error=False)

    def _read_blame(self, version: str, blame_too: bool = True) -> None:
        from memtui.core.timeline.history import NoHistory, blame

        try:
            # Under the store's lock: git objects are read through one shared repository, which a write's commit
            # in another thread must not be using at the same moment.
            with self.memory.store.lock():
                data = self.memory.store.read(self.rel)
                if data is None or version_of(data.decode("utf-8", errors="replace")) != version:
                    return  # the file moved on; the next load asks again
                lines: list[Any] | str = blame(self.memory, self.rel) if blame_too else []
                earlier: dict[str, list[str]] = {}
                if not self.memory.layout().strikes:
                    from memtui.core.timeline.lineage import superseded_lines

                    earlier = superseded_lines(self.memory.store, self.rel)
        except NoHistory:
            lines = "no git history: who wrote it is unknown"
        except Exception as exc:  # blame is a nicety: the bar says why it is missing
            lines = f"who wrote it: unavailable ({exc})"
        self.view.post_message(BlameLoaded(version, lines, earlier if isinstance(lines, list) else {}))

    def blame_loaded(self, message: BlameLoaded) -> None:
        self._blame = {message.version: message.lines}  # one version kept: the file as it is now
        self._earlier = message.earlier
        self.update_bar()

    # edits --------------------------------------------------------------------------------------------------
    def _here(self) -> tuple[Entry, str] | None:
        entry = self.entry_at(self.cursor)
        if entry is None:
            return None
        section = self.section_at(self.cursor or 0)
        # A file with no heading at all (Claude Code's MEMORY.md index) is one section, named "" as the core names
        # it; in a file with headings, an entry above the first one is in none.
        if not section and (self.view.state is None or self.view.state.extra.get("sections")):
            self.view.notify("This entry sits above the first heading; only entries in a section can be edited "
                             "here. Press E to edit the file in $EDITOR.", severity="warning")
            return None
        return entry, section

    def _where(self, section: str) -> str:
        return f"{self.rel} § {section}" if section else self.rel

    def own_write(self, state: ViewerState) -> bool:
        """Is this load the person's own edit from here (drawn without live-diff marks)?

        The watcher sees the file change before the write has committed and returned, so a load while one of
        this viewer's writes is in flight counts as its own, as does a version a finished write left."""
        return bool(self._in_flight) or state.extra.get("version") in self.own_versions

    def _writing(self, write: Callable[..., WriteResult], *args: Any) -> WriteResult:
        """Run a write (in a thread), then remember the versions it left."""
        with self._in_flight_lock:
            self._in_flight += 1
        self._loads_at_write = self.view.loads
        try:
            result = write(*args)
            if result.status == "applied":
                for rel in {self.rel, *result.files}:
                    data = self.memory.store.read(rel)
                    if data is not None:
                        self.own_versions.add(version_of(data.decode("utf-8", errors="replace")))
            return result
        finally:
            with self._in_flight_lock:
                self._in_flight -= 1

    def run_write(self, write: Callable[[], WriteResult], target: str | None = None) -> None:
        app = self.view.app

        def run() -> None:
            result = self._writing(write)
            # Handed to the app's loop, not posted to the viewer: a tab closed while the write ran dropped what it
            # was sent, and the person never heard whether their edit was made or refused (`wrote` says it still).
            app.call_later(self.wrote, result, target)

        self.view.run_worker(run, name="run_write", group="curate", thread=True, exit_on_error=False)

    def dialog_write(self, write: Callable[..., WriteResult]) -> Callable[..., WriteResult]:
        """Wrap a dialog's write (run in the dialog's thread) so the viewer knows it is its own."""
        return lambda *args: self._writing(write, *args)

    def wrote(self, result: WriteResult, target: str | None) -> None:
        """An edit returned: say so (in a toast from the app, also when its tab was closed meanwhile); when applied
        and the tab is still open, reload onto `target` and let the app catch up."""
        r = result
        severity: SeverityLevel = "information" if r.status == "applied" else (
            "warning" if r.status == "queued" else "error")
        # A refusal of what the person typed is said to them (memtui/tui/for_people.py), not to an agent.
        said = typed(r.message) if r.status in ("refused", "conflict") else r.message
        said = said if r.status != "applied" else f"{self.person}: {r.message}"
        open_ = self.view.is_attached
        # With its tab closed, the toast names the file it was about.
        self.view.notify(said if open_ else f"{self.rel}: {said}", severity=severity, markup=False)
        if r.status not in ("applied", "queued") or not open_:
            return
        self._cursor_target = target
        # The write's change event reloads this viewer once; if that load came first, or there is none, the
        # cursor goes onto `target` now.
        if self.view.loads > self._loads_at_write or self.rel not in touched(r):
            self.restore_cursor()

    def revise_entry(self) -> None:
        from memtui.tui.curate import EntryEditScreen

        here = self._here()
        if here is None:
            return
        entry, section = here
        memory, person, raw = self.memory, self.person, entry.raw.strip()

        def write(text: str) -> WriteResult:
            # The entry's source stays unless the person wrote another inline "(date, source)", which wins.
            return memory.update(section, "revise", entry=text, replaces=raw, file=self.rel,
                                 source=entry.source, actor=person)

        def done(result: WriteResult | None) -> None:
            if result is not None:
                self.wrote(result, result.entry)

        tags = self._layout_tags()
        self.app.push_screen(EntryEditScreen(
            f"Revise ({self._where(section)}); " + (f"the old line stays, struck superseded {clock.today()}" if tags
                                                   else "the old line is replaced (memtui's history keeps it)"),
            curate.editable_text(entry), self.dialog_write(write),
            hint="enter revise · escape cancel" + (" · start with [stated], [observed], [inferred] or [suggested]"
                                                   if tags else "")), done)

    def add_entry(self) -> None:
        from memtui.tui.curate import EntryEditScreen

        here = self._here()
        if here is None:
            return
        entry, section = here
        memory, person, after = self.memory, self.person, entry.raw.strip()

        def write(text: str) -> WriteResult:
            return memory.update(section, "add", entry=text, file=self.rel, actor=person, after=after)

        def done(result: WriteResult | None) -> None:
            if result is not None:
                self.wrote(result, result.entry)

        tags = self._layout_tags()
        self.app.push_screen(EntryEditScreen(
            f"Add to {self._where(section)}, below the cursor",
            "[stated] " if tags else "", self.dialog_write(write),
            hint="enter add · escape cancel" + (" · start with a [tag]: [stated] you said it, [observed] seen"
                                                if tags else "")), done)

    def remove_entry(self) -> None:
        from memtui.tui.dialogs import ConfirmScreen

        here = self._here()
        if here is None:
            return
        entry, section = here
        memory, person, raw = self.memory, self.person, entry.raw.strip()

        def done(yes: bool | None) -> None:
            if yes:
                self.run_write(lambda: memory.update(section, "remove", replaces=raw, file=self.rel,
                                                     actor=person))

        question = f"Remove from {self._where(section)}? " + (
            f"It stays as history, struck “removed {clock.today()}”." if self._layout_tags() else
            "The line goes from the file; memtui's history keeps it.") + f"\n\n{raw}"
        self.app.push_screen(ConfirmScreen(question), done)

    def retag_entry(self) -> None:
        from memtui.tui.curate import TagScreen

        here = self._here()
        if here is None:
            return
        entry, section = here
        memory, person, raw = self.memory, self.person, entry.raw.strip()

        def done(tag: str | None) -> None:
            if tag is None:
                return
            if tag == entry.tag:
                self.view.notify(f"It is [{tag}] already; nothing to change", markup=False)
                return
            new = curate.retagged(entry, tag)
            self.run_write(lambda: memory.update(section, "revise", entry=new, replaces=raw, file=self.rel,
                                                 source=entry.source, actor=person), target=new)

        self.app.push_screen(TagScreen(entry), done)

    def move_entry(self) -> None:
        from memtui.tui.curate import MoveScreen

        here = self._here()
        if here is None:
            return
        entry, section = here
        memory, person, raw, rel = self.memory, self.person, entry.raw.strip(), self.rel

        def write(to: str, to_section: str) -> WriteResult:
            return memory.move(section, raw, to_section, file=rel, to=to, actor=person)

        def done(result: WriteResult | None) -> None:
            if result is not None:
                self.wrote(result, None)

        self.app.push_screen(MoveScreen(memory, rel, section, entry, self.dialog_write(write)), done)

    def undo_own(self) -> None:
        from memtui.core.timeline.history import NoHistory, undo_last

        memory, person = self.memory, self.person

        def undo() -> WriteResult:
            try:
                return undo_last(memory, by=person, actor=person)
            except NoHistory as exc:
                return WriteResult("refused", str(exc))

        self.run_write(undo)

    # $EDITOR ------------------------------------------------------------------------------------------------
    def open_editor(self) -> None:
        root = self.memory.store.local_root
        if root is None:
            self.view.notify("This memory is not a folder on disk (a Redis store?): there is no file for $EDITOR",
                             severity="warning")
            return
        path = root / self.rel
        line = (self.cursor if self.cursor is not None else self.view.scroll_offset.y) + 1
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        before = path.read_bytes() if path.exists() else None
        try:
            with self.app.suspend():
                code = subprocess.call([*shlex.split(editor), f"+{line}", str(path)])
        except SuspendNotSupported:
            self.view.notify("This terminal cannot hand over to $EDITOR (the web or a headless run); "
                             "edit the file outside memtui and approve the change in review", severity="warning")
            return
        except OSError as exc:
            self.view.notify(markup=False, severity="error",
                             message=f"cannot run {editor!r}: {exc}. Set $EDITOR to your editor.")
            return
        after = path.read_bytes() if path.exists() else None
        if after == before:
            self.view.notify(markup=False,
                             message=f"{self.rel} is unchanged" + (f" ({editor} exited with {code})" if code else ""))
            return
        from memtui.core.writing.memory import external_id

        self.focus_external_change(external_id(self.rel), after)

    def focus_external_change(self, pid: str, after: bytes | None = None) -> None:
        """Select the edit in review once the app's sync lists it, however long the sync takes, and say so then (a
        poll of 5 s left a slow sync's edit unselected and unannounced). Only a listing of the bytes the editor
        left (`after`, else the file's now) is the person's edit: the file may be rewritten before a sync lists it."""
        from memtui.core.storage.store import content_hash

        if after is None:
            root = self.memory.store.local_root
            try:
                after = None if root is None else (root / self.rel).read_bytes()
            except OSError:
                after = None
        self.app.select_when_listed(pid, f"Your edit of {self.rel} waits in review as {pid}: a approve (commit) · r "
                                    "reject (restore)", None if after is None else content_hash(after))
