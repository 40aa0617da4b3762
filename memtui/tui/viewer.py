"""The memory file viewer: provenance in colour and symbol, struck history, section caps, and live diffs.

Built on the Line API so a 50 MB daily log opens at once: the file is read and scanned in a thread, and only
the visible lines are styled (each into a `Strip`, kept in an LRU cache). When the file changes on disk the
viewer diffs it against what it showed: added lines are marked and removed ones stay as ghost lines until the
person presses escape or the file changes again.

With wrap on (the app's W) long lines wrap under their text, the gutter blank on continuation rows. The scroll
unit stays one line (as in vim): a frame wraps only the lines it shows, so a file of any size costs what is on
screen, never a pass over all of it to count wrapped rows.
"""

from __future__ import annotations

import datetime
import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memtui.core.basics.patches import common_ends
from memtui.core.grammar.document import Document
from memtui.core.grammar.entries import TAGS, Entry, parse_entry
from memtui.core.grammar.paths import PathRefused
from memtui.core.storage.store import StoreError
from memtui.core.timeline.provenance import SYMBOLS  # provenance is never colour alone: each has its own shape
from memtui.tui import provenance_marks
from memtui.tui.entry_bar import EntryBar
from memtui.tui.entry_cursor import CURSOR_BINDINGS, BlameLoaded, EntryCursor, version_of
from memtui.tui.messages import ViewerState
from memtui.tui.plain import visible

if TYPE_CHECKING:
    from memtui.core.writing.memory import Memory

TAB_SIZE = 4
FULL_PARSE_LIMIT = 1_000_000  # bytes; bigger files get a light line scan instead of a markdown parse
DIFF_LIMIT = 20_000  # lines; bigger files are diffed only when the change is an append
AUTOJUNK_OVER = 2_000  # lines changed (both versions) above which difflib's autojunk heuristic is on
_TAG = re.compile(r"\[(" + "|".join(TAGS) + r")\]", re.I)
_META = re.compile(r"\(\d{4}-\d{2}-\d{2}(?:,[^()]*)?\)\s*$")
_STRUCK = re.compile(r"^(?P<pre>\s*(?:[-*+]|\d{1,9}[.)])\s+)~~(?P<inner>.*)~~(?P<tail>.*)$")


def scan(rel: str, text: str, previous: list[str] | None, grammar: str = "memtui") -> ViewerState:
    """Everything the viewer needs from a file's text; runs in a worker thread. A Hermes file (`grammar`) is read
    as Hermes reads it: entries between `§` lines, no headings, tags or struck history."""
    if grammar == "hermes" and len(text) <= FULL_PARSE_LIMIT:
        return _scan_hermes(rel, text, previous)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    headings: dict[int, tuple[str, int, int, int | None]] = {}
    entries: set[int] | None
    comment: set[int] = set()
    extra: dict = {}
    if len(text) <= FULL_PARSE_LIMIT:
        doc = Document(text, rel)
        for sec in doc.sections:
            if sec.heading is not None:
                headings[sec.heading] = (sec.title, sec.level, len(sec.current), doc.spec.cap_for(sec.title))
        entries = {i for i, _ in doc.entries()}
        # For the entry cursor (memtui/tui/entry_cursor.py): what it can stand on, and the file's version.
        extra = {"current": {i: e for i, e in doc.entries() if e.current},
                 "sections": [(s.heading, s.title) for s in doc.sections if s.heading is not None],
                 "version": version_of(text)}
        if doc.front_matter is not None:
            # A Claude Code topic file's metadata: drawn as such, never as text of the body or a heading.
            fm = doc.front_matter
            extra["front_matter"] = (fm.end, fm.fields.get("type"), fm.fields.get("name"))
        start = next((i for i, ln in enumerate(lines[:200]) if "<!-- memtui:format" in ln), None)
        if start is not None:
            end = next((i for i in range(start, len(lines)) if "-->" in lines[i]), start)
            comment = set(range(start, end + 1))
    else:
        entries = None
        headings = _light_headings(text)
    # Tabs are drawn expanded: the widest line is measured the same way, so it scrolls to its end.
    width = max((len(ln.expandtabs(TAB_SIZE)) for ln in lines) if "\t" in text else map(len, lines), default=0)
    state = ViewerState(rel, lines, width, headings, entries, comment, extra=extra)
    if previous is not None and previous != lines:
        _mark_changes(state, previous)
    return state


def _scan_hermes(rel: str, text: str, previous: list[str] | None) -> ViewerState:
    """A Hermes file's lines, each marked as an entry's first line (with its number), one of its further lines, a
    separator, or a line that only looks like one; the file's usage against Hermes' limit goes on the first."""
    from memtui.core.grammar.formats import hermes

    text = hermes.lf(text)
    lines = text.split("\n")
    marks: dict[int, tuple[str, int]] = {}
    found = hermes.spans(text)
    for n, sp in enumerate(found, 1):
        marks[sp.first_line] = ("first", n)
        marks.update({i: ("more", n) for i in range(sp.first_line + 1, sp.last_line + 1)})
    for i in hermes.lookalikes(text):
        marks[i] = ("fake", marks[i][1])
    seps = {i for i, ln in enumerate(lines) if ln == hermes.SIGN and i not in marks}
    cap, used = hermes.limit(rel), hermes.usage(text)
    width = max(map(len, lines), default=0)
    extra = {"hermes": {"marks": marks, "seps": seps, "usage": hermes.usage_line(rel, text),
                        "over": cap is not None and used > cap, "count": len(found)}, "current": {}, "sections": []}
    state = ViewerState(rel, lines, width, {}, set(), extra=extra)
    if previous is not None and previous != lines:
        _mark_changes(state, previous)
    return state


def _light_headings(text: str) -> dict[int, tuple[str, int, int, int | None]]:
    """Headings of a big file with the count of current bullets under each, from C-speed `str.find`/`count`.

    A Python loop over the 600,000 lines of a 50 MB log took a quarter of a second; only lines that start with
    `#` or hold `~~` are looked at one by one here."""
    heads: list[tuple[int, int, str, int]] = []  # (line start, line end, title, level)
    starts = [0] if text.startswith("#") else []
    i = text.find("\n#")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n#", i + 1)
    for at in starts:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        ln = text[at:end].rstrip("\r")
        level = len(ln) - len(ln.lstrip("#"))
        if 0 < level <= 6 and ln[level:level + 1] == " ":
            heads.append((at, end, ln[level:].strip(), level))
    headings: dict[int, tuple[str, int, int, int | None]] = {}
    line, pos = 0, 0
    for n, (start, end, title, level) in enumerate(heads):
        line += text.count("\n", pos, start)
        pos = start
        stop = heads[n + 1][0] if n + 1 < len(heads) else len(text)
        count = sum(text.count("\n" + c, end, stop) for c in "-*+") - _struck_bullets(text, end, stop)
        headings[line] = (title, level, count, None)
    return headings


def _struck_bullets(text: str, start: int, stop: int) -> int:
    """Bullet lines holding `~~` between the newline at `start` and `stop`."""
    n = 0
    i = text.find("~~", start, stop)
    while i >= 0:
        line_start = text.rfind("\n", start, i) + 1
        line_end = text.find("\n", i, stop)
        line_end = stop if line_end < 0 else line_end
        if line_start > start and text[line_start] in "-*+":
            n += 1
        i = text.find("~~", line_end, stop)
    return n


def _changed_lines(old: ViewerState | None, new: ViewerState, raw: bool) -> set[int] | None:
    """The lines drawn differently in `new` than in `old` (text, added mark, heading count, entry or not), when
    both are drawn a row per line; None when anything else may differ (a first load, an error, ghost lines, the
    raw gutter's width, the not-UTF-8 flag) or the file is big (its lines are read on demand: not compared)."""
    if old is None or old.missing or old.error or new.missing or new.error or old.ghosts or new.ghosts:
        return None
    if old.entries is None or new.entries is None:
        return None
    if raw and len(str(len(old.lines))) != len(str(len(new.lines))):
        return None
    if old.extra.get("not_utf8") != new.extra.get("not_utf8") or old.comment != new.comment:
        return None
    if old.extra.get("hermes") != new.extra.get("hermes"):
        return None  # a Hermes file's entry marks and usage line move with any change of its entries
    if old.extra.get(provenance_marks.KEY) is not new.extra.get(provenance_marks.KEY):
        return None  # who wrote the lines was read again (an approval, a commit): any row's mark may differ
    a, b = old.lines, new.lines
    lo, hi = common_ends(a, b)
    # Lines after an insertion or a removal are drawn at other rows: from the change on, every row is new.
    changed = set(range(lo, len(b) - hi)) if len(a) == len(b) else set(range(lo, max(len(a), len(b))))
    changed |= old.added ^ new.added
    changed |= {i for i in old.headings.keys() | new.headings.keys() if old.headings.get(i) != new.headings.get(i)}
    return changed | old.entries ^ new.entries


def _mark_changes(state: ViewerState, previous: list[str]) -> None:
    lines = state.lines
    if len(lines) <= DIFF_LIMIT and len(previous) <= DIFF_LIMIT:
        # The lines both versions start and end with are set aside first: an edit in one place of a file of 5,000
        # lines was matched by difflib over all of them (most of a second, its blank lines all alike).
        lo, hi = common_ends(previous, lines)
        old, new = previous[lo:len(previous) - hi], lines[lo:len(lines) - hi]
        # Over a long middle, lines as common as blank ones anchor no match of their own (difflib's autojunk):
        # matching each of them against every other made edits at both ends of a big file cost its square.
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=len(old) + len(new) > AUTOJUNK_OVER)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            i1, i2, j1, j2 = i1 + lo, i2 + lo, j1 + lo, j2 + lo
            if tag in ("replace", "insert"):
                state.added.update(range(j1, j2))
            if tag in ("replace", "delete"):
                state.ghosts.setdefault(j1, []).extend(previous[i1:i2])
            if tag != "equal" and state.first_change is None:
                state.first_change = j1
    elif len(lines) > len(previous) and lines[: len(previous)] == previous:
        state.added.update(range(len(previous), len(lines)))
        state.first_change = len(previous)


class MemoryViewer(ScrollView, can_focus=True):
    """One memory file, rendered (provenance, struck history, caps) or raw; only visible lines are styled.

    With its entry cursor (`entry_cursor`, memtui/tui/entry_cursor.py) a person walks the entries and edits the one
    under it: the keys are bound here and handed to the cursor."""

    COMPONENT_CLASSES = {
        "viewer--heading", "viewer--count", "viewer--over-cap", "viewer--stated", "viewer--observed",
        "viewer--inferred", "viewer--suggested", "viewer--untagged", "viewer--struck", "viewer--meta",
        "viewer--comment", "viewer--added", "viewer--ghost", "viewer--gutter", "viewer--lineno", "viewer--cursor",
    }
    BINDINGS = [
        Binding("escape", "acknowledge", "Clear diff marks", id="viewer.acknowledge",
                tooltip="Stop showing what changed on disk since you last looked; then leave the filter, "
                "then the entry cursor", show=False),
        *CURSOR_BINDINGS,
        Binding("F", "toggle_format", "Format comment", id="viewer.format", show=False,
                tooltip="Show the memtui:format comment whole, or fold it to one line again"),
        Binding("enter", "follow_link", "Open linked file", id="viewer.follow_link", show=False,
                tooltip="On a line of Claude Code's MEMORY.md index: open the topic file it links to"),
    ]

    raw: reactive[bool] = reactive(False)
    wrap: reactive[bool] = reactive(False, init=False)

    @dataclass
    class Loaded(Message):
        viewer: MemoryViewer
        state: ViewerState

    def __init__(self, root: Path, rel: str, *, memory: Memory, person: str, id: str | None = None,
                 read: Callable[[str], bytes | None]) -> None:
        super().__init__(id=id)
        self.root = root
        self.rel = rel
        # The store's read (a folder's and a Redis memory's alike); None for a missing file.
        self.read = read
        self.state: ViewerState | None = None
        self._rows: list[tuple[int, int]] | None = None  # (line, -1) or (line, ghost k) when ghosts show
        self._row_index: dict[int, int] | None = None  # line -> its row in `_rows`
        self._cache: LRUCache[tuple, Strip] = LRUCache(2048)
        self._units = 1  # rows before wrapping: lines, or lines and ghosts, or a filter's rows
        self._content_width = 0
        self._parts: LRUCache[tuple, list[tuple[Text, Style | None]]] = LRUCache(512)  # a unit's wrapped rows
        self._heights: dict[tuple, int] = {}  # a unit's count of wrapped rows, kept while its text is
        self._frames: dict[tuple, list[tuple[int, int]]] = {}  # (unit, part) per screen row, per scroll position
        self._sized_for = (0, 0)  # the content region the wrapped size was counted for
        self._pending_line: int | None = None
        self.loads = 0
        self.reading: Any = None  # the worker reading the file (the app's first frame waits a moment for it)
        self.memory = memory
        self.grammar = memory.grammar(rel)  # "hermes": entries between § lines (memtui/core/grammar/formats/hermes.py)
        self.entry_cursor = EntryCursor(self, memory, person)
        self.focus_when_mounted = False  # the app's MEMORY.md viewer, composed with the main screen
        # The `<!-- memtui:format … -->` comment drawn as one line (`▸ memtui:format (7 lines)`): its rules are for
        # the agent and the validator, and unfolded they filled half the first screen. F or a click shows it whole.
        self.format_folded = True

    def on_mount(self) -> None:
        self.set_reactive(MemoryViewer.wrap, bool(getattr(self.app, "diff_wrap", False)))
        self.set_class(self.wrap, "-wrap")
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._invalidate())
        if self.focus_when_mounted and self.screen.focused is None:
            # Focused as it mounts, not when its screen has finished composing: the footer builds its keys when
            # the focus first gives the screen its bindings, and then they are mounted with the rest of the
            # screen and laid out in its first frame, not in a second layout after it.
            self.screen.set_focus(self)
        if self.parent is not None:
            bar = self.entry_cursor.bar = EntryBar(classes="entry-bar")
            bar.display = False
            self.parent.mount(bar, after=self)
        self.reload(first=True)

    # loading ----------------------------------------------------------------------------------------------
    def reload(self, *, first: bool = False) -> None:
        previous = None if first or self.state is None else self.state.lines
        self.reading = self._read(previous)

    @work(thread=True, exclusive=True, group="viewer-read", exit_on_error=False)
    def _read(self, previous: list[str] | None) -> None:
        try:
            data = self.read(self.rel)
        except FileNotFoundError:
            data = None
        except (OSError, StoreError, PathRefused) as exc:
            self.post_message(self.Loaded(self, ViewerState(self.rel, [], 0, {}, set(), error=str(exc))))
            return
        if data is None:
            self.post_message(self.Loaded(self, ViewerState(self.rel, [], 0, {}, set(), missing=True)))
            return
        if len(data) > FULL_PARSE_LIMIT:
            # A big file is shown from a line-offset index at once; its heading counts follow (memtui/tui/lines.py).
            from memtui.tui.lines import scan_big

            scan_big(self.rel, data, previous, lambda state: self.post_message(self.Loaded(self, state)),
                     lambda: self.call_later(lambda: (self._build_rows(), self._invalidate())))
            return
        text = data.decode("utf-8", errors="replace")
        own = self.entry_cursor.own_versions
        if previous is not None and len(text) <= FULL_PARSE_LIMIT and version_of(text) in own:
            previous = None  # the person's own edit from this viewer: no live-diff marks for it
        state = scan(self.rel, text, previous, self.grammar)
        self._claude_code_marks(state, data)
        # Formats without tags: each line's provenance from history, at once when known, else posted after the lines.
        unread = provenance_marks.attach(self.entry_cursor.memory, self.rel, state)
        if "\ufffd" in text:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                state.extra["not_utf8"] = True  # the lines with a � are flagged: their bytes are not UTF-8
        self.post_message(self.Loaded(self, state))
        if unread and (marked := provenance_marks.read(self.entry_cursor.memory, self.rel, state)) is not None:
            self.post_message(self.Loaded(self, marked))

    def _claude_code_marks(self, state: ViewerState, data: bytes) -> None:
        """In a Claude Code memory (worker thread): where Claude Code stops loading MEMORY.md, and for a topic file
        the index line that links it (its title and hook, drawn with the file's metadata) or that none does."""
        from memtui.core.grammar.formats import claude_code
        from memtui.core.grammar.layout import CLAUDE_CODE, CLAUDE_CODE_SPEC
        from memtui.core.recall.next_session import loaded_start
        from memtui.core.storage.reading import MEMORY_FILE

        try:
            kind = self.memory.layout().kind
            if kind in ("claude-code", "cline"):
                state.extra["tagless"] = True  # the format has no provenance tags: a bullet without one is fine
            if kind != CLAUDE_CODE:
                return
            if self.rel == MEMORY_FILE:
                doc = Document(data.decode("utf-8", errors="replace"), MEMORY_FILE)
                links = {link.line: claude_code.linked_file(link.target)
                         for link in claude_code.index_links(doc.lines, doc.hidden)}
                state.extra["links"] = {i: rel for i, rel in links.items() if rel is not None}
                cut = loaded_start(MEMORY_FILE, data, CLAUDE_CODE_SPEC.file_lines or 200,
                                   CLAUDE_CODE_SPEC.file_bytes or 25_000)
                if cut.cut:
                    state.extra["cut"] = (cut.kept_lines, cut.limit_lines, cut.limit_bytes)
                return
            if not self.rel.endswith(".md"):
                return
            index = (self.read(MEMORY_FILE) or b"").decode("utf-8", errors="replace")
        except (OSError, StoreError, PathRefused, ValueError):
            return
        doc = Document(index, MEMORY_FILE)
        for link in claude_code.index_links(doc.lines, doc.hidden):
            if claude_code.linked_file(link.target) == self.rel:
                state.extra["indexed"] = (link.line + 1, link.title, link.hook)
                return
        state.extra["unlinked"] = True

    def action_follow_link(self) -> None:
        """enter on an index line of a Claude Code memory: its topic file, in a tab of its own (a link out of the
        folder was never kept, so it opens nothing)."""
        links = self.state.extra.get("links", {}) if self.state is not None else {}
        if self.cursor is not None and self.cursor in links:
            from memtui.tui.messages import OpenFile

            self.post_message(OpenFile(links[self.cursor]))

    def on_memory_viewer_loaded(self, message: Loaded) -> None:
        if message.viewer is not self:
            return
        message.stop()
        previous = self.state
        at_end = self.scroll_offset.y >= self.max_scroll_y
        if self.entry_cursor.own_write(message.state):
            message.state.added, message.state.ghosts, message.state.first_change = set(), {}, None
        folded = self._folded_lines()
        # Rows that are the lines less the folded format comment (no ghosts, no filter) stay comparable line by line.
        fold_only = bool(folded) and previous is not None and not previous.ghosts and self.entry_filter is None \
            and previous.comment == message.state.comment
        rows = (self._rows is not None and not fold_only) or self.entry_filter is not None
        self.state = message.state
        self.loads += 1
        changed = None if rows else _changed_lines(previous, message.state, self.raw)
        if changed is not None and folded:
            # Drawn by row: a line below the folded comment is that many rows up.
            changed = {i - len(folded) if i > max(folded) else min(i, min(folded) - 1)
                       for i in changed}
        self._forget(changed)  # before the rows are counted again: the last screen's wrapped heights are new
        self._build_rows()
        self._repaint(changed)
        self.entry_cursor.restore_cursor()
        if previous is not None and (message.state.added or message.state.ghosts):
            self._scroll_to_change(previous, at_end)
        if self._pending_line is not None:
            self.go_to_line(self._pending_line)
            self._pending_line = None

    def _scroll_to_change(self, previous: ViewerState, at_end: bool) -> None:
        st = self.state
        if st is None or st.first_change is None:
            return
        # Wrapped, the rows on screen are not one per line: the end is where the scroll could go no further.
        was_at_end = at_end if self.wrap else self.scroll_offset.y + self.size.height >= len(previous.lines)
        row = self._row_of(st.first_change)
        if was_at_end and st.first_change >= len(previous.lines) - 1:
            self.scroll_end(animate=False, immediate=True)
        elif not self._unit_on_screen(row):
            self.scroll_to(y=max(0, row - 2), animate=False)

    def go_to_line(self, line: int) -> None:
        if self.state is None:
            self._pending_line = line
            return
        self.call_after_refresh(self.scroll_to, y=max(0, self._row_of(line) - 2), animate=False)

    def _row_of(self, line: int) -> int:
        if self._rows is None:
            return line
        if self._row_index is None:  # built once per set of rows, not walked for every line asked about
            self._row_index = {i: r for r, (i, k) in reversed(list(enumerate(self._rows))) if k < 0}
        return self._row_index.get(line, line)

    def _build_rows(self) -> None:
        self._row_index = None
        st = self.state
        self._heights.clear()
        if st is not None and self.entry_filter is not None and self.entry_cursor.entries_known():
            self._rows = [(i, -1) for i in self.entry_cursor.filtered_rows()]
            self._size_rows(st.width + 24, max(1, len(self._rows)))
            return
        folded = self._folded_lines()
        if st is None or (not st.ghosts and not folded):
            self._rows = None
            count = 1 if st is None or st.missing or st.error else len(st.lines)
        else:
            rows: list[tuple[int, int]] = []
            for i in range(len(st.lines) + 1):
                for k in range(len(st.ghosts.get(i, ()))):
                    rows.append((i, k))
                if i < len(st.lines) and i not in folded:
                    rows.append((i, -1))
            self._rows = rows
            count = len(rows)
        self._size_rows((st.width if st else 0) + 24, count)

    def _folded_lines(self) -> set[int]:
        """The format comment's lines hidden under its first (none when unfolded, raw, or it is one line)."""
        st = self.state
        if st is None or not self.format_folded or self.raw or len(st.comment) < 2:
            return set()
        return set(st.comment) - {min(st.comment)}

    def action_toggle_format(self) -> None:
        """F: the format comment whole, or folded to one line again."""
        if self.state is None or len(self.state.comment) < 2:
            return
        self.format_folded = not self.format_folded
        self._forget(None)
        self._build_rows()
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        """A click on the folded format comment's line shows it whole."""
        st = self.state
        if st is None or self._rows is None or not self._folded_lines():
            return
        region = self.scrollable_content_region
        y = event.y - (region.y - self.region.y)
        if self.wrap:
            frame = self._frame(self.scroll_offset.y, region.width, max(1, region.height))
            unit = frame[y][0] if 0 <= y < len(frame) else -1
        else:
            unit = self.scroll_offset.y + y
        if 0 <= unit < len(self._rows) and self._rows[unit] == (min(st.comment), -1):
            event.stop()
            self.action_toggle_format()

    def _size_rows(self, width: int | None = None, units: int | None = None) -> None:
        """The scrollable size: a row per unit and the widest line, or wrapped, no sideways scroll and as many
        units as let the last ones fill the screen (found from the end, so bounded by the screen's height)."""
        if width is not None:
            self._content_width = width
        if units is not None:
            self._units = units
        self._frames.clear()
        if not self.wrap:
            self.virtual_size = Size(self._content_width, self._units)
            return
        region = self.scrollable_content_region
        height = max(1, region.height)
        self._sized_for = (region.width, region.height)
        self.virtual_size = Size(1, self._last_top(height) + height)

    def _invalidate(self) -> None:
        self._cache.clear()
        self._parts.clear()
        self._frames.clear()
        self.refresh()

    def _forget(self, lines: set[int] | None) -> None:
        """Drop what was drawn of `lines` only (None: of every line). Shown a row per line (no ghosts, no
        filter), the rest of the file keeps its strips: a live append styles the new lines and the heading counts
        it changed, not the whole screen."""
        self._frames.clear()
        if lines is None:
            self._cache.clear()
            self._parts.clear()
            self._heights.clear()
            return
        for cache in (self._cache, self._parts):
            for key in [k for k in cache.keys() if k[1 if k[0] == "wrap" else 0] in lines]:
                cache.discard(key)
        for key in [k for k in self._heights if k[0] in lines]:
            del self._heights[key]

    def _repaint(self, lines: set[int] | None) -> None:
        """Refresh the rows on screen that show `lines` (None: all of them)."""
        if lines is None:
            self.refresh()
            return
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        shown = sorted(i - top for i in lines if top <= i < top + height)
        if self.wrap:
            if shown:  # a line's wrapped height may have changed: the rows under it move
                self.refresh()
        else:
            for y in shown:
                self.refresh_line(top + y)

    def watch_raw(self) -> None:
        self._heights.clear()  # the raw gutter is wider: the lines wrap elsewhere
        if self.state is not None and len(self.state.comment) > 1 and self.entry_filter is None:
            self._build_rows()  # raw shows the format comment whole
        self._size_rows()
        self._invalidate()

    def watch_wrap(self, wrap: bool) -> None:
        self.set_class(wrap, "-wrap")
        self._heights.clear()
        if wrap:
            self.scroll_to(x=0, animate=False)
        self._size_rows()
        self._invalidate()
        if self.cursor is not None:
            self.call_after_refresh(self.keep_in_view, self.cursor)

    def on_resize(self) -> None:
        region = self.scrollable_content_region
        # Textual also sends one when only the layout around settled (at start-up, after the first frame): the
        # rows wrapped for this width and height stay right, and wrapping them all again is a frame's work.
        if self.wrap and (region.width, region.height) != self._sized_for:
            self._heights.clear()
            self._size_rows()
            self._invalidate()

    def action_acknowledge(self) -> None:
        """The person has seen the change: drop the added marks and the ghost lines (then the filter, the cursor)."""
        if self.state and (self.state.added or self.state.ghosts):
            self.state.added = set()
            self.state.ghosts = {}
            self._build_rows()
            self._invalidate()
        else:
            self.entry_cursor.leave()

    def action_scroll_down(self) -> None:
        """down moves the entry cursor where the file's entries are known (a big log just scrolls)."""
        if self.entry_cursor.entries_known():
            self.entry_cursor.step(1)
        else:
            super().action_scroll_down()

    def action_scroll_up(self) -> None:
        if self.entry_cursor.entries_known():
            self.entry_cursor.step(-1)
        else:
            super().action_scroll_up()

    # the entry cursor's keys (CURSOR_BINDINGS) and messages, handed to it -----------------------------------
    @property
    def cursor(self) -> int | None:
        """The line the entry cursor is on; None until the person first moves it."""
        return self.entry_cursor.cursor

    @property
    def entry_filter(self) -> str | None:
        return self.entry_cursor.entry_filter

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.entry_cursor.check_action(action, parameters)

    def action_cursor_down(self) -> None:
        self.entry_cursor.step(1)

    def action_cursor_up(self) -> None:
        self.entry_cursor.step(-1)

    def action_next_section(self) -> None:
        self.entry_cursor.jump_section(1)

    def action_previous_section(self) -> None:
        self.entry_cursor.jump_section(-1)

    def action_cycle_filter(self, reading: bool = False) -> None:
        self.entry_cursor.cycle_filter()

    def action_revise_entry(self) -> None:
        self.entry_cursor.revise_entry()

    def action_remove_entry(self) -> None:
        self.entry_cursor.remove_entry()

    def action_retag_entry(self) -> None:
        self.entry_cursor.retag_entry()

    def action_move_entry(self) -> None:
        self.entry_cursor.move_entry()

    def action_add_entry(self) -> None:
        self.entry_cursor.add_entry()

    def action_open_editor(self) -> None:
        self.entry_cursor.open_editor()

    def action_undo_own(self, reading: bool = False) -> None:
        self.entry_cursor.undo_own()

    def on_blame_loaded(self, message: BlameLoaded) -> None:
        message.stop()
        self.entry_cursor.blame_loaded(message)

    @property
    def has_marks(self) -> bool:
        return bool(self.state and (self.state.added or self.state.ghosts))

    # rendering --------------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if self.wrap:
            return self._render_wrapped(y, scroll_y, width)
        row = scroll_y + y
        key = (row, scroll_x, width, self.raw)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        text, line_style = self._row_content(row)
        strip = self._strip(text, line_style, self._line_of(row), scroll_x, width)
        self._cache[key] = strip
        return strip

    def _line_of(self, row: int) -> int:
        if self._rows is None:
            return row
        return self._rows[row][0] if row < len(self._rows) and self._rows[row][1] < 0 else -1

    def row_text(self, row: int) -> str:
        """The plain text of one display row (gutter included), as drawn; for tests and screen readers."""
        return self._row_content(row)[0].plain

    def screen_text(self) -> str:
        """The rows on screen as drawn, wrapped or not (for tests and screen readers)."""
        return "\n".join(self.render_line(y).text.rstrip() for y in range(self.scrollable_content_region.height))

    def _strip(self, text: Text, line_style: Style | None, line: int, scroll_x: int, width: int) -> Strip:
        base = self.rich_style
        text.expand_tabs(TAB_SIZE)  # a tab written raw would move the terminal's cursor past the row's cells
        segments = list(text.render(self.app.console, end=""))
        if line_style is not None and self.cursor is not None and line == self.cursor:
            # The cursor's background goes over the provenance, meta and tag styles, not under them.
            segments = list(Segment.apply_style(segments, post_style=Style(bgcolor=line_style.bgcolor)))
        strip = Strip(segments).crop(scroll_x, scroll_x + width)
        fill = base + line_style if line_style else base
        strip = strip.apply_style(fill) if line_style else strip
        return strip.extend_cell_length(width, fill).apply_style(base)

    # wrapping -----------------------------------------------------------------------------------------------
    def _gutter_cells(self) -> int:
        st = self.state
        if st is None or st.missing or st.error:
            return 2
        return len(str(len(st.lines))) + 3 if self.raw else 3

    def _wrapped(self, unit: int, width: int) -> list[tuple[Text, Style | None]]:
        """One unit's rows wrapped in `width` cells, the gutter on the first only. A line taller than the screen
        shows what fits and says how much more there is (bounded work for a line of any length)."""
        key = (unit, width, self.raw)
        parts = self._parts.get(key)
        if parts is not None:
            return parts
        text, line_style = self._row_content(unit)
        text.expand_tabs(TAB_SIZE)
        gutter = min(self._gutter_cells(), len(text))
        head, body = text[:gutter], text[gutter:]
        body_width = max(8, width - gutter)
        most = max(3, self.scrollable_content_region.height)
        limit = most * body_width * 2  # characters: enough for `most` rows even of wide characters
        total = len(body)
        if total > limit:
            body = body[:limit]
        rows = list(body.wrap(self.app.console, body_width, overflow="fold")) or [Text("")]
        if len(rows) > most or total > limit:
            rows = rows[:most - 1]
            left = total - sum(len(r) for r in rows)
            rows.append(Text(f"… {left:,} more characters of this line: W cuts long lines (then scroll sideways)",
                             self.get_component_rich_style("viewer--untagged") + Style(italic=True)))
        blank = Text(" " * gutter)
        parts = [(head + row if n == 0 else blank + row, line_style) for n, row in enumerate(rows)]
        self._parts[key] = parts
        self._heights[key] = len(parts)
        return parts

    def _height(self, unit: int, width: int) -> int:
        height = self._heights.get((unit, width, self.raw))
        return height if height is not None else len(self._wrapped(unit, width))

    def _last_top(self, height: int) -> int:
        """The first unit of the last screenful: walked back from the end, at most a screen of units."""
        width = self.scrollable_content_region.width or 80
        unit, rows = self._units, 0
        while unit > 0:
            rows += self._height(unit - 1, width)
            if rows > height:
                break
            unit -= 1
        return max(0, min(unit, self._units - 1))

    def _frame(self, top: int, width: int, height: int) -> list[tuple[int, int]]:
        """(unit, part) for each screen row from unit `top` down; only the units that show are wrapped."""
        key = (top, width, height, self.raw)
        frame = self._frames.get(key)
        if frame is None:
            frame = []
            unit = top
            while len(frame) < height and unit < self._units:
                frame += [(unit, n) for n in range(self._height(unit, width))]
                unit += 1
            frame = frame[:height]
            self._frames[key] = frame
        return frame

    def _render_wrapped(self, y: int, top: int, width: int) -> Strip:
        if (width, self.scrollable_content_region.height) != self._sized_for:
            self._heights.clear()  # the region changed under the rows counted for the end: count them again
            self._size_rows()
        frame = self._frame(top, width, self.scrollable_content_region.height)
        if y >= len(frame):
            return Strip.blank(width, self.rich_style)
        unit, n = frame[y]
        # Keyed by the unit's row, not the screen's: scrolled by a line, every other row keeps its strip.
        key = ("wrap", unit, n, width, self.raw)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        text, line_style = self._wrapped(unit, width)[n]
        strip = self._strip(text.copy(), line_style, self._line_of(unit), 0, width)
        self._cache[key] = strip
        return strip

    def _unit_on_screen(self, unit: int) -> bool:
        """All of the unit's rows show (or it is the top one, when it is taller than the screen)."""
        top, height = self.scroll_offset.y, max(1, self.scrollable_content_region.height)
        if not self.wrap:
            return top <= unit < top + height
        if unit == top:
            return True
        width = self.scrollable_content_region.width
        shown = sum(1 for u, _ in self._frame(top, width, height) if u == unit)
        return unit > top and shown == self._height(unit, width)

    def keep_in_view(self, line: int) -> None:
        """Wrapped: scroll so every row of `line` shows, about a third of the screen below the top."""
        unit = self._row_of(line)
        if not self.wrap or self._unit_on_screen(unit):
            return
        width, height = self.scrollable_content_region.width, max(1, self.scrollable_content_region.height)
        room = max(0, min(height // 3, height - self._height(unit, width)))  # rows above it
        top, above = unit, 0
        while top > 0 and above + self._height(top - 1, width) <= room:
            above += self._height(top - 1, width)
            top -= 1
        self.scroll_to(y=top, animate=False)

    def action_scroll_home(self) -> None:
        # A jump, not an animation: each animated frame of a wrapped 20 MB log would wrap the lines it passes.
        self.scroll_home(animate=False, x_axis=False)

    def action_scroll_end(self) -> None:
        self.scroll_end(animate=False, x_axis=False)

    def action_page_down(self) -> None:
        if not self.wrap:
            super().action_page_down()
            return
        top, width = self.scroll_offset.y, self.scrollable_content_region.width
        frame = self._frame(top, width, max(1, self.scrollable_content_region.height))
        if frame:
            last, n = frame[-1]
            whole = n == self._height(last, width) - 1
            self.scroll_to(y=max(top + 1, last + 1 if whole else last), animate=False)

    def action_page_up(self) -> None:
        if not self.wrap:
            super().action_page_up()
            return
        top, width = self.scroll_offset.y, self.scrollable_content_region.width
        height, rows = max(1, self.scrollable_content_region.height), 0
        while top > 0 and rows + self._height(top - 1, width) <= height:
            rows += self._height(top - 1, width)
            top -= 1
        self.scroll_to(y=min(top, max(0, self.scroll_offset.y - 1)), animate=False)

    def _row_content(self, row: int) -> tuple[Text, Style | None]:
        st = self.state
        style = self.get_component_rich_style
        if st is None:
            return Text(""), None
        if st.missing or st.error:
            if row:
                return Text(""), None
            said = f"  {self.rel} does not exist (deleted on disk?)" if st.missing else \
                f"  cannot read {self.rel}: {st.error}"
            return Text(visible(said), style("viewer--untagged")), None
        if self._rows is not None:
            if not self._rows and self.entry_filter is not None and row == 0:
                return Text(f"  no entry here is {self.entry_filter}: f for the next filter, escape for all",
                            style("viewer--untagged")), None
            if row >= len(self._rows):
                return Text(""), None
            i, k = self._rows[row]
            if k >= 0:
                ghost = style("viewer--ghost")
                gutter = Text("-  ", style("viewer--gutter")) if not self.raw else Text(
                    " " * (len(str(len(st.lines))) + 1) + "- ", style("viewer--lineno"))
                return gutter + Text(visible(st.ghosts[i][k]), ghost), ghost
        else:
            i = row
        if i >= len(st.lines):
            return Text(""), None
        line = st.lines[i]
        added = i in st.added
        mark = "+" if added else "▌" if i == self.cursor else " "
        line_style = style("viewer--cursor") if i == self.cursor else style("viewer--added") if added else None
        if self.raw:
            n = len(str(len(st.lines)))
            return Text.assemble((f"{i + 1:>{n}} ", style("viewer--lineno")), (f"{mark} ", style("viewer--gutter")),
                                 visible(line)), line_style
        body, symbol = self._styled(i, line)
        if "\ufffd" in line and st.extra.get("not_utf8"):
            body.append("  not UTF-8 (shown as �)", style("viewer--untagged") + Style(italic=True))
        return Text.assemble((mark, style("viewer--gutter")), symbol, " ", body), line_style

    def _styled(self, i: int, line: str) -> tuple[Text, Text]:
        st = self.state
        assert st is not None
        style = self.get_component_rich_style
        shown = visible(line)
        if i in st.comment:
            if i == min(st.comment) and self._folded_lines():
                return Text(f"▸ memtui:format ({len(st.comment)} lines, F shows them)",
                            style("viewer--comment")), Text(" ")
            return Text(shown, style("viewer--comment")), Text(" ")
        if "hermes" in st.extra:
            return self._hermes_line(i, shown)
        front = st.extra.get("front_matter")
        if front is not None and i < front[0]:
            return self._front_matter(i, shown, front), Text(" ")
        if front is None and i == 0 and st.extra.get("unlinked"):
            return Text(shown).append("  ⚑ not linked from MEMORY.md", style("viewer--untagged")), Text(" ")
        cut = st.extra.get("cut")
        if cut is not None and i >= cut[0]:
            text = Text(shown, style("viewer--struck"))
            if i == cut[0]:
                text.append(f"  ✂ Claude Code stops loading here (first {cut[1]} lines or {cut[2]:,} bytes): from "
                            "this line on, no session sees MEMORY.md", style("viewer--over-cap"))
            return text, Text("✂" if i == cut[0] else " ", style("viewer--over-cap"))
        heading = st.headings.get(i)
        if heading is not None:
            title, level, count, cap = heading
            text = Text(shown, style("viewer--heading"))
            if cap is not None:
                text.append(f"  {count}/{cap}", style("viewer--count"))
                if count > cap:
                    text.append(f"  ⚠ over cap by {count - cap}", style("viewer--over-cap"))
            elif st.entries is not None or count:
                text.append(f"  {count}", style("viewer--count"))
            return text, Text("§", style("viewer--heading"))
        if line.startswith("#"):
            return Text(shown, style("viewer--heading")), Text(" ")
        marked = provenance_marks.styled(st, i, line, style)
        if marked is not None:
            return marked
        is_entry = st.entries is None or i in st.entries
        entry = parse_entry(line) if is_entry else None
        if entry is None:
            return Text(shown), Text(" ")
        return self._entry(line, entry)

    def _front_matter(self, i: int, shown: str, front: tuple[int, str | None, str | None]) -> Text:
        """A line of a topic file's front matter: the opening fence carries the type as a badge and the index
        line that links the file (or a mark that none does); the other lines are metadata, drawn quietly."""
        from memtui.core.grammar.formats.claude_code import TYPES

        st = self.state
        assert st is not None
        style = self.get_component_rich_style
        meta = style("viewer--meta")
        if i != 0:
            return Text(shown, meta)
        end, kind, _name = front
        text = Text(shown, meta)
        if kind:
            badge = style("viewer--heading") + Style(reverse=True, bold=True)
            text.append("  ")
            text.append(f" {visible(kind, newlines=False)} ", badge)
            if kind not in TYPES:
                text.append(f"  not a Claude Code type ({', '.join(TYPES)})", style("viewer--untagged"))
        indexed = st.extra.get("indexed")
        if indexed is not None:
            line, title, hook = indexed
            text.append(f"  MEMORY.md:{line} ", meta)
            text.append(visible(title, newlines=False), style("viewer--heading"))
            if hook:
                text.append(" — " + visible(hook, newlines=False))
        elif st.extra.get("unlinked"):
            text.append("  ⚑ not linked from MEMORY.md: Claude Code is never told this file exists",
                        style("viewer--untagged"))
        return text

    def _hermes_line(self, i: int, shown: str) -> tuple[Text, Text]:
        """A line of a Hermes file: an entry's lines under one mark, separators as rules, look-alikes flagged."""
        style = self.get_component_rich_style
        info = self.state.extra["hermes"] if self.state is not None else {}
        kind, n = info["marks"].get(i, ("", 0))
        if i in info["seps"]:
            return Text(f"§ {'─' * 12}", style("viewer--count")), Text(" ")
        text = Text(shown)
        if kind == "fake":
            text.append("  looks like a separator, but Hermes reads it as text of this entry",
                        style("viewer--untagged") + Style(italic=True))
        if kind == "first" and n == 1:
            text.append(f"  {info['usage']}", style("viewer--over-cap" if info["over"] else "viewer--count"))
        mark = "•" if kind == "first" else "│" if kind in ("more", "fake") else " "
        return text, Text(mark, style("viewer--meta"))

    def _entry(self, line: str, entry: Entry) -> tuple[Text, Text]:
        """An entry styled by its provenance; what breaks the grammar is flagged after it, never raised."""
        style = self.get_component_rich_style
        symbol = Text(SYMBOLS.get(entry.tag, "⚑"), style(f"viewer--{entry.tag or 'untagged'}"))
        if entry.struck:
            m = _STRUCK.match(line)
            struck = style("viewer--struck")
            if m:
                text = Text.assemble((visible(m["pre"]), struck), (visible(m["inner"]), struck + Style(strike=True)),
                                     (visible(m["tail"]), struck))
            else:
                text = Text(visible(line), struck + Style(strike=True))
            symbol.stylize(struck)
            return text, symbol
        text = Text(visible(line))
        flag = style("viewer--untagged") + Style(italic=True)
        if entry.tag is None and self.state is not None and self.state.extra.get("tagless"):
            return text, Text("·", style("viewer--meta"))
        tag = _TAG.search(line)
        if tag and entry.tag:
            text.stylize(style(f"viewer--{entry.tag}") + Style(bold=True), tag.start(), tag.end())
        elif tag:
            text.append(f"  tag not first: [{tag[1].lower()}] goes after the bullet", flag)
        else:
            text.append("  untagged", flag)
        meta = _META.search(line)
        if meta:
            text.stylize(style("viewer--meta"), meta.start(), meta.end())
        if entry.date and not _valid_date(entry.date):
            text.append(f"  invalid date {visible(entry.date)}", flag)
        if entry.time:
            at = line.find(entry.time)
            if at >= 0:
                text.stylize(style("viewer--meta"), at, at + len(entry.time))
        return text, symbol


def _valid_date(date: str) -> bool:
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        return False
    return True
