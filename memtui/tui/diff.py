"""A diff, drawn by memtui itself: a proposal's unified diff, or a file against its last commit.

What is drawn is bounded, not the diff: its first rows are parsed in a worker thread and drawn, and a line at
its top and end says how many were left out and how to see them in the viewer. A 259,000-line diff of a 20 MB log drawn whole
froze the app for a minute and grew it past a gigabyte.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memtui.core.basics.patches import diff_left_out, unified_diff
from memtui.core.basics.visible import reveal
from memtui.tui.keys import HELP_FIRST
from memtui.tui.messages import OpenFile
from memtui.tui.worddiff import line_spans, split_text, styled, unified_wrapped

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
SHOWN_ROWS = 500  # rows of a diff drawn; the rest are counted
SHOWN_CHARS = 200_000
ROW_CHARS = 1_000  # characters of one row drawn (a minified file is one very long line)


def unified(rel: str, before: str | None, after: str | None, context: int = 3) -> str:
    """A file against its last commit, bounded like every diff shown (memtui/core/grammar/update.py)."""
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
    left = 0  # lines the current hunk's header says are still to come: an added "++ b/x" is no file header
    # Split at newlines only: str.splitlines also splits at \r, \x85, U+2028…, which a file's line can carry,
    # and the piece after one would be read as a row of its own (a forged removal or header).
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        line = line.removesuffix("\r")
        if left and line[:1] in ("+", "-", " "):
            left = max(0, left - (2 if line[0] == " " else 1))  # a context line is one of each side's
        elif line.startswith(("--- ", "+++ ")):
            rows.append(("file", None, None, line))
            continue
        m = None if left else _HUNK.match(line)
        if m:
            old, new = int(m[1]), int(m[3])
            left = (1 if m[2] is None else int(m[2])) + (1 if m[4] is None else int(m[4]))
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
        out: list[Line] = [("empty", "", reveal(empty))]
    else:
        width = max((len(str(n)) for _, a, b, _ in rows for n in (a, b) if n is not None), default=1)
        out = []
        for kind, a, b, text in rows:
            if len(text) > ROW_CHARS:
                text = text[:ROW_CHARS] + f" … ({len(text) - ROW_CHARS:,} more characters)"
            text = reveal(text).expandtabs(4)  # a file's bytes, never an escape sequence or a raw tab
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


COMPONENTS = ("diff--add", "diff--remove", "diff--context", "diff--hunk", "diff--file", "diff--lineno",
              "diff--add-word", "diff--remove-word")


@dataclass(frozen=True)
class Look:
    """How a diff is styled: the theme's styles of its parts, side by side or wrapped, and the width it wraps to.
    Plain data taken on the main thread, so a worker thread styles the lines."""

    styles: tuple[tuple[str, Style], ...]
    split: bool = False
    wrap: bool = False
    width: int = 0  # the cells it wraps to (side by side or wrapped); 0 when it is cut at the edge

    def style(self, name: str) -> Style:
        return dict(self.styles).get(name, Style())

    def of(self, kind: str) -> Style:
        name = f"diff--{kind}" if kind in ("add", "remove", "context", "file") else \
            "diff--context" if kind == "empty" else "diff--hunk"
        return self.style(name)


def styled_lines(rows: Rows, lines: list[Line], look: Look) -> list[Text]:
    """The drawn lines, styled: the changed words of a changed line marked (a revise reads old → new), side by
    side or wrapped when asked. At most SHOWN_ROWS rows; pure, so it runs in a worker thread."""
    style = look.style
    body = [(kind, a, b, reveal(text).expandtabs(4)) for kind, a, b, text in rows.rows]

    def plain_line(line: Line) -> Text:
        kind, gutter, text = line
        if kind in ("add", "remove", "context"):
            return Text.assemble((gutter, style("diff--lineno")), (text, look.of(kind)))
        return Text(text, look.of(kind))

    notes = [plain_line(line) for line in lines if line[0] == "more"]
    if not body:
        return [plain_line(line) for line in lines]
    if look.split or look.wrap:
        width = max(24, look.width)
        whole = split_text(body, style, width) if look.split else unified_wrapped(body, style, width)
        # The "N more lines" notes wrap too: cut at the edge, they lost the key that opens the rest.
        console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
        wrapped = [list(note.wrap(console, width, overflow="fold")) for note in notes]
        return [*(wrapped[0] if wrapped else []), *whole.split("\n"), *(row for note in wrapped[1:] for row in note)]
    spans = iter(line_spans(body))
    texts = []
    for line in lines:
        kind = line[0]
        if kind in ("add", "remove", "context", "file", "hunk", "note"):
            marks = next(spans, None)
            if kind in ("add", "remove") and marks is not None:
                base = look.of(kind)
                texts.append(Text.assemble((line[1], style("diff--lineno")), (line[2][:2], base),
                                           styled("", marks, base, style(f"diff--{kind}-word"))))
                continue
        texts.append(plain_line(line))
    return texts


class DiffView(ScrollView, can_focus=True):
    """A scrolling diff: line numbers on both sides, additions and removals marked by sign and colour.

    `rel` is the file it shows (o opens it in the viewer). `show` parses, lays out and styles the diff's first
    rows in a thread, so moving through a review list of big diffs never waits on them; only the rows on screen
    are rendered (the Line API): a Static of 500 rows took a second to lay out and paint."""

    COMPONENT_CLASSES = set(COMPONENTS)
    BINDINGS = [HELP_FIRST, Binding("o", "open_file", "Open in viewer", id="diff.open",
                                    tooltip="Open the file this diff is about in the viewer, all of it")]

    @dataclass
    class Parsed(Message):
        view: DiffView
        seq: int
        key: tuple
        drawn: tuple[Rows, list[Line], int]
        look: Look
        texts: list[Text]
        home: bool

    def __init__(self, diff: str = "", *, empty: str = "no changes", id: str | None = None,
                 classes: str | None = None, rel: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.diff = diff
        self.empty = empty
        self.rel = rel
        self.rows: Rows | None = None  # the drawn part of `diff`, once parsed
        self._lines: list[Line] = []
        self._cache: LRUCache[tuple, Strip] = LRUCache(512)
        # The last few diffs drawn, parsed and styled, so moving back and forth in the review list does neither
        # again.
        self._drawn: LRUCache[tuple, tuple[Rows, list[Line], int]] = LRUCache(8)
        self._styled: LRUCache[tuple, list[Text]] = LRUCache(8)
        self._seq = 0
        self._drawn_key: tuple | None = None
        self._theme = 0  # counts theme changes: styled lines of an older theme are not reused
        self.split = False  # side by side (the app's S key) rather than unified
        self.wrap = False  # long lines wrapped (the app's W key) rather than cut at the edge
        self._texts: list[Text] | None = None  # the lines on screen, styled (word marks included)
        self._look: Look | None = None  # how they were styled

    def on_mount(self) -> None:
        self.split = bool(getattr(self.app, "diff_split", False))
        self.wrap = bool(getattr(self.app, "diff_wrap", False))
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._retheme())
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

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        # Told its size by a layout, just before that layout's frame is painted. The empty text (what the review
        # panel shows at start) is styled then and there for the width, in the frame itself: styled on the Resize
        # that follows, as a diff is, it was painted again a frame later (the first frame of every start).
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        if changed and not self.diff and self._texts is not None and (self.split or self.wrap):
            key, look = (self.diff, self.rel, self.empty), self.look()
            drawn = self._drawn.get(key)
            if drawn is not None and look != self._look:
                texts = styled_lines(drawn[0], drawn[1], look)
                self._styled[(key, look, self._theme)] = texts
                if len(texts) == len(self._texts or []):  # the same rows: no layout of its own is changed
                    self._texts, self._look = texts, look
                    self._cache.clear()
        return changed

    def _retheme(self) -> None:
        self._theme += 1
        self._restyle()

    def _restyle(self) -> None:
        if self.is_mounted:
            self._parse_later(home=False)  # the lines styled before stay on screen until these arrive

    def look(self) -> Look:
        """How the diff is styled now (read on the main thread: the theme's styles of its parts)."""
        styles = tuple((name, self._part_style(name)) for name in COMPONENTS)
        width = max(24, (self.size.width or 81) - 1) if self.split or self.wrap else 0  # less the scrollbar
        return Look(styles, self.split, self.wrap, width)

    def _part_style(self, name: str) -> Style:
        """A part's style with a background only where the theme gives the part one (an added line's): the rest
        sit on the widget's own background, taken when the row is painted. Read whole, a part's background is
        the widget's as it was when the style was first read, and a diff styled while its card was still
        taking focus painted its file and hunk lines in the card's colour."""
        whole = self.get_component_rich_style(name)
        if self.get_component_rich_style(name, partial=True).bgcolor is not None:
            return whole
        return whole.without_color + Style.from_color(whole.color)

    def show(self, diff: str, empty: str | None = None, rel: str | None = None) -> None:
        if self._seq and (diff, rel, self.empty if empty is None else empty) == (self.diff, self.rel, self.empty):
            return  # the diff on screen (or being parsed) again: not restyled, and not scrolled back to its top
        self.diff = diff
        self.rel = rel
        if empty is not None:
            self.empty = empty
        if self.is_mounted:
            self._parse_later()

    def _parse_later(self, *, home: bool = True) -> None:
        self._seq += 1
        key = (self.diff, self.rel, self.empty)
        look = self.look()
        drawn = self._drawn.get(key)
        texts = self._styled.get((key, look, self._theme))
        if drawn is not None and texts is not None:
            self._draw(key, drawn, look, texts, home=home)
            return
        if home and self._texts is not None:  # another diff: never shown under this one's name, not even briefly
            self._texts = self._look = None
            self._cache.clear()
            self.refresh()
        if not self.diff:
            # Only the empty text (the review panel's "No proposal selected." at start and between proposals): a
            # line or two, styled here at once, so it is in the frame that shows the panel; from a worker it came a
            # frame later, and laid the screen out again.
            self.on_diff_view_parsed(self._parsed(self._seq, key, drawn, look, home))
            return
        self._parse(self._seq, key, drawn, look, home)

    @work(thread=True, exclusive=True, group="diff-rows", exit_on_error=False)
    def _parse(self, seq: int, key: tuple, drawn: tuple[Rows, list[Line], int] | None, look: Look,
               home: bool) -> None:
        self.post_message(self._parsed(seq, key, drawn, look, home))

    def _parsed(self, seq: int, key: tuple, drawn: tuple[Rows, list[Line], int] | None, look: Look,
                home: bool) -> Parsed:
        if drawn is None:
            diff, rel, empty = key
            rows = bounded_rows(diff)
            drawn = (rows, *layout(rows, rel, empty))
        texts = styled_lines(drawn[0], drawn[1], look)
        return self.Parsed(self, seq, key, drawn, look, texts, home)

    def on_diff_view_parsed(self, message: Parsed) -> None:
        if message.view is not self:
            return
        message.stop()
        self._drawn[message.key] = message.drawn
        if message.look == self.look():
            self._styled[(message.key, message.look, self._theme)] = message.texts
        if message.seq == self._seq:
            self._draw(message.key, message.drawn, message.look, message.texts, home=message.home)

    def action_open_file(self) -> None:
        if self.rel:
            self.post_message(OpenFile(self.rel))
        else:
            self.notify("This diff is not about one file; open the file from the tree")

    def render_text(self) -> Text:
        """Every drawn row as one Text, styled as it is now (for tests and screen readers); the widget paints
        them a row at a time."""
        return Text("\n").join(self._styled_lines())

    def _styled_lines(self) -> list[Text]:
        """The lines as they are styled now: those drawn when they are current, else styled here and now."""
        look = self.look()
        if self._texts is not None and self._look == look and self.drawn:
            return self._texts
        key = (self.diff, self.rel, self.empty)
        drawn = self._drawn.get(key)
        if drawn is None:
            rows = bounded_rows(self.diff)
            drawn = (rows, *layout(rows, self.rel, self.empty))
        return styled_lines(drawn[0], drawn[1], look)

    def _size_to(self, texts: list[Text]) -> None:
        self.virtual_size = Size(max((t.cell_len for t in texts), default=0), len(texts))

    @property
    def drawn(self) -> bool:
        """The diff last shown is on screen (its rows were parsed, laid out and styled)."""
        return self._drawn_key == (self.diff, self.rel, self.empty)

    def _draw(self, key: tuple, drawn: tuple[Rows, list[Line], int], look: Look, texts: list[Text], *,
              home: bool) -> None:
        if not home and key == self._drawn_key and look == self._look and self._texts is not None:
            return  # on screen as it is (a Resize to the width it was drawn at: the first layout sends one)
        self.rows, self._lines, _width = drawn
        self._drawn_key = key
        self._texts, self._look = texts, look
        self._cache.clear()
        self._size_to(texts)
        if home:
            self.scroll_home(animate=False, immediate=True)  # now: a scroll the person asks for next is kept
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style  # what shows through: a parent's focus colour, where this view has no background
        key = (row, scroll_x, width, base)
        strip = self._cache.get(key)
        if strip is None:
            fill = base
            texts = self._texts or []  # until the first are styled (in a worker), blank
            if row < len(texts):
                segments = texts[row].render(self.app.console, end="")
                strip = Strip(list(segments)).crop(scroll_x, scroll_x + width)
                look = self._look
                unified = look is not None and not (look.split or look.wrap) and len(texts) == len(self._lines)
                if unified and self._lines[row][0] != "empty":
                    # A row's colour runs to the edge, as a marked line does.
                    fill = base + look.of(self._lines[row][0])
            else:
                strip = Strip.blank(0)
            strip = strip.extend_cell_length(width, fill).apply_style(base)
            self._cache[key] = strip
        return strip
