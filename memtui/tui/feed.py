"""The activity feed: every write, approval, rejection, external change and search, with time and actor."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memtui.core.storage.store import Store
from memtui.tui.for_people import for_person
from memtui.tui.messages import Activity
from memtui.tui.plain import visible

BACKLOG = 12  # audit records shown from before the app opened

KIND_CLASS = {"write": "feed--write", "approve": "feed--approve", "reject": "feed--reject",
              "external": "feed--external", "search": "feed--search", "conflict": "feed--reject",
              "refused": "feed--reject", "queued": "feed--queued", "problem": "feed--reject"}


def activity_from_audit(record: dict[str, Any]) -> Activity:
    """One audit-log record as a feed line: who did what to which file, and how it ended."""
    def get(key: str) -> str:
        # Any JSON can sit in the log (a hand edit, another tool): every field is shown as text.
        value = record.get(key)
        return "" if value is None else str(value)

    status = get("status")
    action = get("action") or "?"
    file = get("file")
    where = file + (f" § {get('section')}" if get("section") else "")
    what = get("entry") or get("to")
    actor = get("actor") or "?"
    decided = get("decided_by")
    pid = get("proposal")
    confirmed = record.get("confirmed")
    if status == "applied" and pid and decided and isinstance(confirmed, dict):
        # A person approved an agent's lesson short of its signals: they are the gate (docs/write-path.md#trust-model).
        signals = confirmed.get("signals")
        kind, text, actor = "approve", f"approved {pid} and confirmed the lesson ({signals}): {action} {where}", \
            decided
    elif status == "applied" and pid and decided and decided != actor:
        kind, text, actor = "approve", f"approved {pid}: {action} {where}", decided
    elif status == "applied" and action == "sync":  # memtui.core.writing.sync closed a range a person decided
        how = "fast-forwarded to" if record.get("fast_forward") else "merged"
        kind, text, actor = "approve", f"{how} {get('remote')} at {get('commit')[:12]}", decided or actor
    elif status == "applied" and actor == "external":
        kind, text, actor = "approve", f"committed external {action} {file}", decided or actor
    elif status == "applied":
        kind, text = "write", f"{action} {where}"
    elif status == "rejected":
        kind, text, actor = "reject", f"rejected {pid} {action} {where}: {get('reason')}", decided or actor
    elif status == "conflict":
        kind, text, actor = "conflict", f"conflict on {pid}: {for_person(get('reason'))}", decided or actor
    else:
        kind, text = "refused", f"refused {action} {where}: {for_person(get('reason'))}"
    if what and kind in ("write", "approve"):
        text += f": {what}"
    time = get("ts")[11:16]
    return Activity(time, actor, kind, " ".join(text.split()), file or None)


class AuditTail:
    """Reads the audit log's new records since the last read (called from one sync thread at a time), through the
    store's `audit_since`: a folder tails its log file by byte offset, Redis its list by index."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cursor: Any = None

    def read_new(self, initial: bool = False) -> list[dict[str, Any]]:
        new, self.cursor = self.store.audit_since(self.cursor, BACKLOG if initial else None)
        return new


INDENT = 30  # cells of time, actor and kind before a line's text: a wrapped line's rows start under its text


class ActivityFeed(ScrollView, can_focus=True):
    """A bounded log of what happened to the memory while the app was open (and just before).

    A Line API widget drawn like a RichLog, but lighter: RichLog imports rich.pretty and attrs, which cost the
    app's first frame 10-17 ms, and renders each line on write; this renders a line only when it is first shown.
    With wrap on (the app's W) a long line wraps under its text, so no message is cut at the edge; with it off,
    long lines scroll sideways."""

    COMPONENT_CLASSES = {"feed--time", "feed--actor", "feed--write", "feed--approve", "feed--reject",
                         "feed--external", "feed--search", "feed--queued"}
    MAX_LINES = 1000

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.records: list[Activity] = []
        self.lines: list[Text] = []
        self._strips: dict[int, Strip] = {}  # line index -> the line drawn, kept until the lines shift
        self._widest = 0
        self.wrap = False
        self._rows: list[tuple[int, int]] = []  # wrapped: (line, part) per row
        self._parts: dict[int, list[Text]] = {}  # wrapped: a line's rows at `_wrap_width`
        self._wrap_width = 0

    def on_mount(self) -> None:
        self.border_title = "Activity"
        self.wrap = bool(getattr(self.app, "diff_wrap", False))
        self._relayout()

    def set_wrap(self, wrap: bool) -> None:
        self.wrap = wrap
        self._relayout()

    def on_resize(self) -> None:
        # Only for a new width: the first Resize, after the first frame, is the width its rows were drawn at.
        self._relayout_if_resized()

    def _relayout(self) -> None:
        """The rows again, for a new width or wrap setting: a thousand lines at most."""
        self._strips.clear()
        self._parts.clear()
        self._wrap_width = self._width()
        self._rows = []
        for k in range(len(self.lines)):
            self._add_rows(k)
        self._set_virtual_size()
        self.refresh()

    def _add_rows(self, k: int) -> None:
        if self.wrap:
            self._rows += [(k, n) for n in range(len(self._wrapped(k)))]

    def _width(self) -> int:
        return max(40, self.scrollable_content_region.width or 80)

    def _relayout_if_resized(self) -> None:
        if self.wrap and self._width() != self._wrap_width:
            self._relayout()

    def _wrapped(self, k: int) -> list[Text]:
        width = self._wrap_width
        parts = self._parts.get(k)
        if parts is None:
            line = self.lines[k]
            head = line[:INDENT] if line.cell_len > width else line
            parts = [head] if line.cell_len <= width else [
                (head if n == 0 else Text(" " * INDENT)) + part
                for n, part in enumerate(line[INDENT:].wrap(self.app.console, width - INDENT, overflow="fold"))]
            self._parts[k] = parts
        return parts

    def _set_virtual_size(self) -> None:
        if self.wrap:
            self.virtual_size = Size(1, len(self._rows))
        else:
            self.virtual_size = Size(self._widest, len(self.lines))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def add(self, item: Activity) -> None:
        self.records.append(item)
        del self.records[:-self.MAX_LINES]
        style = self.get_component_rich_style
        line = Text.assemble(
            (visible(f"{item.time:>5} ", newlines=False), style("feed--time")),
            (visible(f"{_cut(item.actor, 14):<14} ", newlines=False), style("feed--actor")),
            (visible(f"{item.kind:<8} ", newlines=False), style(KIND_CLASS.get(item.kind, "feed--write"))),
            visible(item.text, newlines=False),
            no_wrap=True,
        )
        self.lines.append(line)
        self._widest = max(self._widest, line.cell_len)
        if len(self.lines) > self.MAX_LINES:
            del self.lines[:-self.MAX_LINES]
            self._relayout()
        elif self.wrap and self._width() != self._wrap_width:
            self._relayout()
        else:
            self._add_rows(len(self.lines) - 1)
            self._set_virtual_size()
        self.scroll_end(animate=False, immediate=False, x_axis=False)

    def render_line(self, y: int) -> Strip:
        self._relayout_if_resized()  # a scrollbar shown or hidden changes the width without a resize
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = scroll_y + y
        if index >= (len(self._rows) if self.wrap else len(self.lines)):
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(index)
        if strip is None:
            if self.wrap:
                k, n = self._rows[index]
                text = self._wrapped(k)[n]
            else:
                text = self.lines[index]
            strip = self._strips[index] = Strip(list(text.render(self.app.console, end="")))
        if self.wrap:
            scroll_x = 0
        shown = strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)
        # A line that runs on past an edge says so with … there (W wraps it; a hover shows it whole).
        more_left, more_right = scroll_x > 0, strip.cell_length > scroll_x + width
        if (more_left or more_right) and width > 2:
            mark = Strip([Segment("…", self.get_component_rich_style("feed--time"))], 1)
            parts = [mark if more_left else shown.crop(0, 1), shown.crop(1, width - 1),
                     mark if more_right else shown.crop(width - 1, width)]
            shown = Strip.join(parts)
        return shown.apply_style(self.rich_style)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """The line under the pointer, whole, as its tooltip: a line cut at the edge is read without scrolling or
        wrapping. Drawn as data (a Text, never markup), invisible characters named as on the line."""
        index = self.scroll_offset.y + event.y
        k = (self._rows[index][0] if index < len(self._rows) else -1) if self.wrap else index
        tip = None
        if 0 <= k < len(self.lines) and len(self.records) == len(self.lines):
            a = self.records[k]
            tip = visible(f"{a.time} {a.actor}  {a.kind}  {a.text}", newlines=False)
        if tip != getattr(self, "_tip", None):
            self._tip = tip
            self.tooltip = None if tip is None else Text(tip)

    def texts(self) -> list[str]:
        return [f"{a.time} {a.actor} {a.kind} {a.text}" for a in self.records]


def _cut(text: str, width: int) -> str:
    """`text` within `width` characters, with … where it was cut."""
    return text if len(text) <= width else text[:width - 1] + "…"

