"""A diff, drawn by memtui itself: a proposal's unified diff, or a file against its last commit.

What is drawn is bounded, not the diff: its first rows are parsed in a worker thread and drawn, and a line at
its top and end says how many were left out and how to see them in the viewer. A 259,000-line diff of a 20 MB log drawn whole
froze the app for a minute and grew it past a gigabyte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memtui.core.patches import diff_left_out, unified_diff
from memtui.tui.messages import OpenFile

from memtui.tui.plain import visible
from memtui.tui.worddiff import line_spans, split_text, styled, unified_wrapped

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
SHOWN_ROWS = 500  # rows of a diff drawn; the rest are counted
SHOWN_CHARS = 200_000
ROW_CHARS = 1_000  # characters of one row drawn (a minified file is one very long line)


def unified(rel: str, before: str | None, after: str | None, context: int = 3) -> str:
    """A file against its last commit, bounded like every diff shown (memtui/core/update.py)."""
    return unified_diff(rel, before, after, context=context)


@dataclass
class Rows:
    """The drawn part of a diff: its first rows, and how many lines of it are not drawn."""

    rows: list[tuple[str, int | None, int | None, str]] = field(default_factory=list)
    left_out: int = 0


def bounded_rows(diff: str, max_rows: int = SHOWN_ROWS, max_chars: int = SHOWN_CHARS) -> Rows:
    """The first rows of `diff` (up to `max_rows` rows or about `max_chars` characters), the rest counted; the
    core's own `\\ N more lines` line is counted with them, not drawn."""
    core_left = diff_left_out(diff)
    end, chars, n = 0, 0, 0
    while n < max_rows and chars < max_chars and end < len(diff):
        nl = diff.find("\n", end)
        nl = len(diff) if nl < 0 else nl + 1
        chars += nl - end
        end = nl
        n += 1
    head = diff[:end]
    rest = diff.count("\n", end) + (1 if not diff.endswith("\n") and end < len(diff) else 0)
    rows = diff_rows(head)
    if core_left:
        if rest:
            rest -= 1  # the core's count line, among the lines not drawn
        elif rows and rows[-1][0] == "note" and diff_left_out(rows[-1][3]):
            rows.pop()
    return Rows(rows, rest + core_left)


def diff_rows(diff: str) -> list[tuple[str, int | None, int | None, str]]:
    """(kind, old line no, new line no, text) per row; kind is file, hunk, add, remove, context or note."""
    rows: list[tuple[str, int | None, int | None, str]] = []
    old = new = 0
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            rows.append(("file", None, None, line))
            continue
        m = _HUNK.match(line)
        if m:
            old, new = int(m[1]), int(m[2])
            rows.append(("hunk", None, None, line))
        elif line.startswith("+"):
            rows.append(("add", None, new, line[1:]))
            new += 1
        elif line.startswith("-"):
            rows.append(("remove", old, None, line[1:]))
            old += 1
        elif line.startswith(" "):
            rows.append(("context", old, new, line[1:]))
            old += 1
            new += 1
        else:
            rows.append(("note", None, None, line))
    return rows


Line = tuple[str, str, str]  # (kind, gutter, text) of one drawn line


def layout(drawn: Rows, rel: str | None, empty: str) -> tuple[list[Line], int]:
    """The lines a DiffView draws (the rows, and the count of those left out at the top and the end), and the
    widest one's cells; plain strings, so a worker thread makes them."""
    rows = drawn.rows
    if not rows:
        out: list[Line] = [("empty", "", visible(empty))]
    else:
        width = max((len(str(n)) for _, a, b, _ in rows for n in (a, b) if n is not None), default=1)
        out = []
        for kind, a, b, text in rows:
            if len(text) > ROW_CHARS:
                text = text[:ROW_CHARS] + f" … ({len(text) - ROW_CHARS:,} more characters)"
            text = visible(text).expandtabs(4)  # a file's bytes, never an escape sequence or a raw tab
            if kind in ("file", "hunk", "note"):
                out.append((kind, "", text))
            else:
                sign = {"add": "+", "remove": "-", "context": " "}[kind]
                out.append((kind, f"{'' if a is None else a:>{width}} {'' if b is None else b:>{width}} ",
                            f"{sign} {text}"))
        if drawn.left_out:
            # At the top, where it is seen, and again at the end, where a reader scrolling down arrives.
            where = f"open {rel} in the viewer (o)" if rel else "open the file in the viewer"
            noun = "line" if drawn.left_out == 1 else "lines"
            more = ("more", "", f"… {drawn.left_out:,} more {noun} of this diff — {where}")
            out = [more, *out, more]
    return out, max((len(g) + cell_len(t) for _, g, t in out), default=0)


class DiffView(ScrollView, can_focus=True):
    """A scrolling diff: line numbers on both sides, additions and removals marked by sign and colour.

    `rel` is the file it shows (o opens it in the viewer). `show` parses the diff's first rows in a thread; only
    the rows on screen are styled (the Line API): a Static of 500 rows took a second to lay out and paint."""

    COMPONENT_CLASSES = {"diff--add", "diff--remove", "diff--context", "diff--hunk", "diff--file", "diff--lineno",
                         "diff--add-word", "diff--remove-word"}
    BINDINGS = [Binding("o", "open_file", "Open in viewer", id="diff.open",
                        tooltip="Open the file this diff is about in the viewer, all of it")]

    @dataclass
    class Parsed(Message):
        view: DiffView
        seq: int
        key: tuple
        drawn: tuple[Rows, list[Line], int]

    def __init__(self, diff: str = "", *, empty: str = "no changes", id: str | None = None,
                 classes: str | None = None, rel: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.diff = diff
        self.empty = empty
        self.rel = rel
        self.rows: Rows | None = None  # the drawn part of `diff`, once parsed
        self._lines: list[Line] = []
        self._cache: LRUCache[tuple, Strip] = LRUCache(512)
        # The last few diffs drawn, so moving back and forth in the review list does not parse them again.
        self._drawn: LRUCache[tuple, tuple[Rows, list[Line], int]] = LRUCache(8)
        self._seq = 0
        self._drawn_key: tuple | None = None
        self.split = False  # side by side (the app's S key) rather than unified
        self.wrap = False  # long lines wrapped (the app's W key) rather than cut at the edge
        self._texts: list[Text] | None = None  # the drawn lines styled, word marks included (made on demand)

    def on_mount(self) -> None:
        self.split = bool(getattr(self.app, "diff_split", False))
        self.wrap = bool(getattr(self.app, "diff_wrap", False))
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._restyle())
        self._parse_later()

    def set_split(self, split: bool) -> None:
        self.split = split
        self._restyle()

    def set_wrap(self, wrap: bool) -> None:
        self.wrap = wrap
        self._restyle()

    def on_resize(self) -> None:
        if self.split or self.wrap:  # wrapped to the width
            self._restyle()

    def _restyle(self) -> None:
        self._texts = None
        self._cache.clear()
        if self.is_mounted:
            self._size_to(self._styled_lines())
            self.refresh()

    def show(self, diff: str, empty: str | None = None, rel: str | None = None) -> None:
        if self._seq and (diff, rel, self.empty if empty is None else empty) == (self.diff, self.rel, self.empty):
            return  # the diff on screen (or being parsed) again: not restyled, and not scrolled back to its top
        self.diff = diff
        self.rel = rel
        if empty is not None:
            self.empty = empty
        if self.is_mounted:
            self._parse_later()

    def _parse_later(self) -> None:
        self._seq += 1
        key = (self.diff, self.rel, self.empty)
        drawn = self._drawn.get(key)
        if drawn is None and not self.diff:
            drawn = (Rows(), *layout(Rows(), self.rel, self.empty))
            self._drawn[key] = drawn
        if drawn is not None:
            self._draw(drawn, key)
            return
        self._parse(self._seq, key)

    @work(thread=True, exclusive=True, group="diff-rows", exit_on_error=False)
    def _parse(self, seq: int, key: tuple) -> None:
        diff, rel, empty = key
        rows = bounded_rows(diff)
        self.post_message(self.Parsed(self, seq, key, (rows, *layout(rows, rel, empty))))

    def on_diff_view_parsed(self, message: Parsed) -> None:
        if message.view is not self:
            return
        message.stop()
        self._drawn[message.key] = message.drawn
        if message.seq == self._seq:
            self._draw(message.drawn, message.key)

    def action_open_file(self) -> None:
        if self.rel:
            self.post_message(OpenFile(self.rel))
        else:
            self.notify("This diff is not about one file; open the file from the tree")

    def render_text(self) -> Text:
        """Every drawn row as one Text (for tests and screen readers); the widget paints them a row at a time."""
        return Text("\n").join(self._styled_lines())

    def _styled_lines(self) -> list[Text]:
        """The drawn lines, styled: the changed words of a changed line marked (a revise reads old → new), side
        by side or wrapped when asked. At most SHOWN_ROWS rows, so this is cheap on the main thread."""
        if self._texts is not None:
            return self._texts
        drawn = self._drawn.get((self.diff, self.rel, self.empty))
        rows, lines = (drawn[0], drawn[1]) if drawn is not None else (bounded_rows(self.diff), None)
        if lines is None:
            lines = layout(rows, self.rel, self.empty)[0]
        style = self.get_component_rich_style
        body = [(kind, a, b, visible(text).expandtabs(4)) for kind, a, b, text in rows.rows]
        notes = [self._styled(line) for line in lines if line[0] == "more"]
        if not body:
            texts = [self._styled(line) for line in lines]
        elif self.split or self.wrap:
            width = max(24, (self.size.width or 81) - 1)  # less the scrollbar's column, shown or not
            whole = split_text(body, style, width) if self.split else unified_wrapped(body, style, width)
            # The "N more lines" notes wrap too: cut at the edge, they lost the key that opens the rest.
            notes = [list(note.wrap(self.app.console, width, overflow="fold")) for note in notes]
            texts = [*(notes[0] if notes else []), *whole.split("\n"), *(row for note in notes[1:] for row in note)]
        else:
            spans = iter(line_spans(body))
            texts = []
            for line in lines:
                kind = line[0]
                if kind in ("add", "remove", "context", "file", "hunk", "note"):
                    marks = next(spans, None)
                    if kind in ("add", "remove") and marks is not None:
                        word = style(f"diff--{kind}-word")
                        base = self._style(kind)
                        texts.append(Text.assemble((line[1], style("diff--lineno")), (line[2][:2], base),
                                                   styled("", marks, base, word)))
                        continue
                texts.append(self._styled(line))
        self._texts = texts
        return texts

    def _size_to(self, texts: list[Text]) -> None:
        self.virtual_size = Size(max((t.cell_len for t in texts), default=0), len(texts))

    def _styled(self, line: Line) -> Text:
        kind, gutter, text = line
        if kind in ("add", "remove", "context"):
            return Text.assemble((gutter, self.get_component_rich_style("diff--lineno")), (text, self._style(kind)))
        return Text(text, self._style(kind))

    def _style(self, kind: str) -> Style:
        name = f"diff--{kind}" if kind in ("add", "remove", "context", "file") else \
            "diff--context" if kind == "empty" else "diff--hunk"
        return self.get_component_rich_style(name)

    @property
    def drawn(self) -> bool:
        """The diff last shown is on screen (its rows were parsed and laid out)."""
        return self._drawn_key == (self.diff, self.rel, self.empty)

    def _draw(self, drawn: tuple[Rows, list[Line], int], key: tuple) -> None:
        self.rows, self._lines, width = drawn
        self._drawn_key = key
        self._texts = None
        self._cache.clear()
        self._size_to(self._styled_lines())
        self.scroll_home(animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        key = (row, scroll_x, width)
        strip = self._cache.get(key)
        if strip is None:
            base = self.rich_style
            fill = base
            texts = self._styled_lines()
            if row < len(texts):
                segments = texts[row].render(self.app.console, end="")
                strip = Strip(list(segments)).crop(scroll_x, scroll_x + width)
                unified = not (self.split or self.wrap) and len(texts) == len(self._lines)
                if unified and self._lines[row][0] != "empty":
                    # A row's colour runs to the edge, as a marked line does.
                    fill = base + self._style(self._lines[row][0])
            else:
                strip = Strip.blank(0)
            strip = strip.extend_cell_length(width, fill).apply_style(base)
            self._cache[key] = strip
        return strip
