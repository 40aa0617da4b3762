"""A big file's lines as a line-offset index over its bytes: the viewer decodes only the lines it draws.

Splitting a 50 MB daily log into 600,000 Python strings, and counting its bullets per heading, took most of a
second before the first frame. Here the line count comes from one `bytes.count` (memchr speed), the offsets of
the first lines from splitting one chunk, and the viewer paints at once; the worker then indexes the rest in
chunks and counts each heading's bullets, and the viewer repaints with the counts (toolong's approach).
"""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import overload

from memtui.tui.messages import ViewerState

CHUNK = 1 << 21  # bytes indexed per step: about 25,000 lines of a daily log, a few milliseconds
BREATHE = 0.001  # the background pass sleeps this long between chunks, so scrolling keeps its frame rate


class BigLines(Sequence):
    """The lines of `data` (without their endings, like `text.split("\\n")` minus a final empty line)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        self._starts = array("q", [0])  # start offset of each indexed line
        self._scanned = 0  # bytes before this offset are indexed
        self._lock = threading.Lock()
        self._cache: dict[int, str] = {}

    def __len__(self) -> int:
        return self.count

    @property
    def indexed(self) -> bool:
        return self._scanned >= len(self.data)

    def index_chunk(self) -> bool:
        """Index the next chunk of lines; False once the whole file is indexed. Safe from any thread."""
        with self._lock:
            data, start = self.data, self._scanned
            if start >= len(data):
                return False
            end = data.find(b"\n", min(len(data), start + CHUNK))
            end = len(data) if end < 0 else end + 1
            lengths = map(len, data[start:end].split(b"\n"))
            # Each piece but the last ends in a newline; the next line starts one byte after it.
            offsets = list(accumulate(lengths, lambda at, n: at + n + 1, initial=start))[1:-1]
            self._starts.extend(offsets)
            self._scanned = end
            return end < len(data)

    def index_all(self) -> None:
        while self.index_chunk():
            time.sleep(BREATHE)

    def _span(self, i: int) -> tuple[int, int]:
        while i + 1 >= len(self._starts) and not self.indexed:
            self.index_chunk()
        start = self._starts[i]
        end = self._starts[i + 1] - 1 if i + 1 < len(self._starts) else len(self.data)
        return start, end

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.count))]
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(i)
        line = self._cache.get(i)
        if line is None:
            start, end = self._span(i)
            line = self.data[start:end].decode("utf-8", errors="replace")
            line = line.removesuffix("\r")
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[i] = line
        return line

    def __iter__(self) -> Iterator[str]:
        for i in range(self.count):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BigLines):
            return self.data == other.data
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == self.count and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def widest(self) -> int:
        """The longest line in bytes (an upper bound on its characters), once indexed."""
        self.index_all()
        starts = self._starts
        if len(starts) < 2:
            return len(self.data)
        step, gaps = 1 << 15, 0  # slices, so the thread drawing the app gets the GIL in between
        for a in range(0, len(starts) - 1, step):
            part = starts[a:a + step + 1]
            gaps = max(gaps, max(map(int.__sub__, part[1:], part[:-1])) - 1)
        return max(gaps, len(self.data) - starts[-1])


def _finds(data: bytes, needle: bytes, start: int, stop: int) -> Iterator[int]:
    """Offsets of `needle` in data[start:stop], searched a chunk at a time: one C call over 50 MB holds the GIL for
    a tenth of a second, which the app's thread would feel as a frozen frame."""
    for a in range(start, stop, CHUNK):
        if a > start:
            time.sleep(BREATHE)
        end = min(a + CHUNK + len(needle) - 1, stop)
        i = data.find(needle, a, end)
        while i >= 0:
            yield i
            i = data.find(needle, i + 1, end)


def _count(data: bytes, needle: bytes, start: int, stop: int) -> int:
    n = 0
    for a in range(start, stop, CHUNK):
        if a > start:
            time.sleep(BREATHE)
        n += data.count(needle, a, min(a + CHUNK + len(needle) - 1, stop))
    return n


def headings(lines: BigLines, stop: int | None = None) -> dict[int, tuple[str, int, int, int | None]]:
    """Headings (line index → title, level, current bullets, cap None) up to byte `stop`, their counts 0."""
    data, found = lines.data, {}
    stop = len(data) if stop is None else stop
    starts = [0] if data.startswith(b"#") else []
    starts += [i + 1 for i in _finds(data, b"\n#", 0, stop)]
    line, pos = 0, 0
    for at in starts:
        end = data.find(b"\n", at)
        text = data[at:len(data) if end < 0 else end].decode("utf-8", errors="replace").rstrip("\r")
        level = len(text) - len(text.lstrip("#"))
        line += _count(data, b"\n", pos, at)
        pos = at
        if 0 < level <= 6 and text[level:level + 1] == " ":
            found[line] = (text[level:].strip(), level, 0, None)
    return found


def count_bullets(lines: BigLines, heads: dict[int, tuple[str, int, int, int | None]]) -> None:
    """Fill in each heading's count of current bullets (bullet lines not struck through with `~~`)."""
    lines.index_all()
    order = sorted(heads)
    starts, data = lines._starts, lines.data
    for n, h in enumerate(order):
        begin = starts[h + 1] - 1 if h + 1 < len(starts) else len(data)
        stop = starts[order[n + 1]] if n + 1 < len(order) else len(data)
        count = sum(_count(data, b"\n" + c, begin, stop) for c in (b"-", b"*", b"+"))
        title, level, _, cap = heads[h]
        heads[h] = (title, level, count - _struck_bullets(data, begin, stop), cap)


def _struck_bullets(data: bytes, start: int, stop: int) -> int:
    n, after = 0, start
    for i in _finds(data, b"~~", start, stop):
        if i < after:
            continue  # a second `~~` on a line already counted
        line_start = data.rfind(b"\n", start, i) + 1
        line_end = data.find(b"\n", i, stop)
        after = stop if line_end < 0 else line_end
        if line_start > start and data[line_start:line_start + 1] in (b"-", b"*", b"+"):
            n += 1
    return n


def scan_big(rel: str, data: bytes, previous: Sequence[str] | None, post: Callable[[ViewerState], object],
             repaint: Callable[[], object]) -> None:
    """Post the state of a big file at once (first chunk indexed, headings without counts), then index the rest,
    count each heading's bullets and call `repaint` (the state is updated in place). Runs in a worker thread."""
    lines = BigLines(data)
    lines.index_chunk()
    heads = headings(lines, lines._scanned)  # the first chunk's: enough for the first frame
    shown = min(len(lines), 200)
    width = max((len(lines[i]) for i in range(shown)), default=0)
    state = ViewerState(rel, lines, width, heads, None)  # type: ignore[arg-type]
    if previous is not None and len(previous) and len(previous) < len(lines):
        # A big file is marked only when the change is an append (a diff of 600,000 lines would freeze the app).
        grew = data.startswith(previous.data) and previous.data.endswith(b"\n") if isinstance(previous, BigLines) \
            else lines[:len(previous)] == list(previous)
        if grew:
            state.added.update(range(len(previous), len(lines)))
            state.first_change = len(previous)
    post(state)
    every = headings(lines)
    count_bullets(lines, every)
    heads.update(every)
    state.width = lines.widest()
    repaint()
