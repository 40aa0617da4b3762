"""Claude Code's auto memory: topic files' YAML front matter, the MEMORY.md index's link lines, and its load cut.

A topic file opens with front matter (``---``, ``name:``, ``description:``, ``type:`` one of user, feedback, project,
reference, ``---``) and then a body. The front matter is the memory's metadata, never a section: read as plain
markdown its closing ``---`` is a setext underline that turns ``type: user`` into a heading, so a document hides
those lines from its structure (memtui/core/grammar/document.py) and keeps them byte for byte. MEMORY.md is an index of
``- [Title](file.md) — hook`` lines, of which Claude Code loads the first 200 lines or 25 KB
(memtui/core/recall/next_session.py measures the cut). Everything here reads text only: no file is opened.
"""

from __future__ import annotations

import re

from memtui.core.basics.record import Frozen, Record

TYPES = ("user", "feedback", "project", "reference")
FIELDS = ("name", "description", "type")
# Claude Code loads the first 200 lines or 25 KB of MEMORY.md at session start, whichever comes first.
LOAD_LINES, LOAD_BYTES = 200, 25_000
# Claude Code's memory scan reads a topic file's first 30 lines for its front matter: fields below are not seen.
SCANNED_LINES = 30
_FENCE = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n?\Z")
_CLOSE = re.compile(r"\A(?:---|\.\.\.)[ \t]*\r?\n?\Z")
_KEY = re.compile(r"\A(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(?P<value>.*?))?[ \t]*\r?\n?\Z")
# What else a YAML mapping's lines can be: blank, a comment, a continuation or a list item under a key.
_OTHER = re.compile(r"\A(?:[ \t]*(?:#.*)?|[ \t]+\S.*|-(?:[ \t].*)?)\r?\n?\Z")
# A link's text may hold brackets in balanced pairs, as markdown allows: `[Notes [draft]](file.md)`.
INDEX_LINE = re.compile(r"\A[ \t]*[-*+][ \t]+\[(?P<title>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\((?P<target>[^)\s]*)\)(?:[ \t]*[-—–:][ \t]*"
                        r"(?P<hook>.*?))?[ \t]*\r?\n?\Z")


class FrontMatter(Frozen):
    """A file's front matter: lines 0 to `end` (one past the closing ``---``), its `fields` as written (values
    unquoted; a key given twice keeps its first value), its `size` in characters, and the lines in it that are no
    YAML a mapping holds (`malformed`, 0-based): still metadata, so one bad line cannot turn the block into
    headings, but named for the person to fix."""

    end: int
    fields: dict[str, str]
    size: int
    malformed: tuple[int, ...]

    def __init__(self, end: int, fields: dict[str, str], size: int, malformed: tuple[int, ...] = ()) -> None:
        put = object.__setattr__
        put(self, "end", end)
        put(self, "fields", fields)
        put(self, "size", size)
        put(self, "malformed", malformed)

    @property
    def type(self) -> str | None:
        return self.fields.get("type")

    def problems(self) -> list[str]:
        """What Claude Code's rules would miss in this front matter, each said so a person can fix it."""
        out = [f"front matter has no {k!r}: add '{k}: …' between the --- lines" for k in FIELDS if not self.fields.get(k)]
        if self.malformed:
            lines = ", ".join(str(i + 1) for i in self.malformed[:10]) + (" …" if len(self.malformed) > 10 else "")
            out.append(f"front matter line(s) {lines} are not 'key: value': YAML readers (Claude Code's among them) "
                       "may not read this file's metadata; write one 'key: value' a line")
        kind = self.fields.get("type")
        if kind and kind not in TYPES:
            out.append(f"type {kind!r} is not one of Claude Code's types: use {', '.join(TYPES)}")
        if self.end > SCANNED_LINES:
            out.append(f"front matter runs to line {self.end}; Claude Code reads only the first {SCANNED_LINES} "
                       "lines for it, so keep it to name, description and type")
        return out


def front_matter(lines: list[str]) -> FrontMatter | None:
    """The front matter that opens `lines` (each with its ending), or None.

    It is front matter when a ``---`` line opens the file, another closes the block and the block's first line
    is a ``key:``: a thematic break followed by prose stays markdown. A line between that no YAML mapping holds
    (a setext underline, a heading) does not end it: it is named in `malformed`, and never read as structure.
    The closing fence is searched for line by line, so a huge block costs one pass and nothing more."""
    if len(lines) < 3 or not _FENCE.match(lines[0]) or not _KEY.match(lines[1]):
        return None
    fields: dict[str, str] = {}
    malformed: list[int] = []
    size = len(lines[0])
    for i in range(1, len(lines)):
        line = lines[i]
        size += len(line)
        if _CLOSE.match(line):
            return FrontMatter(i + 1, fields, size, tuple(malformed))
        m = _KEY.match(line)
        if m:
            fields.setdefault(m["key"], _unquote(m["value"] or ""))
        elif not _OTHER.match(line):
            malformed.append(i)
    return None


def opens_with_fence(text: str) -> bool:
    """The text starts with a ``---`` line, as front matter does: lint asks when `front_matter` found none."""
    first = text.split("\n", 1)[0] + "\n"
    return bool(_FENCE.match(first))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


class IndexLink(Frozen):
    """One MEMORY.md line that links a topic file: its line index, title, target as written, and hook."""

    line: int
    title: str
    target: str
    hook: str

    def __init__(self, line: int, title: str, target: str, hook: str) -> None:
        put = object.__setattr__
        put(self, "line", line)
        put(self, "title", title)
        put(self, "target", target)
        put(self, "hook", hook)


def index_links(lines: list[str], hidden: frozenset[int] = frozenset()) -> list[IndexLink]:
    """The index's link lines, in order (lines in fences, code and comments left out)."""
    out = []
    for i, line in enumerate(lines):
        if i in hidden or "](" not in line:
            continue
        m = INDEX_LINE.match(line)
        if m:
            out.append(IndexLink(i, m["title"], m["target"], m["hook"] or ""))
    return out


def is_index_line(text: str) -> bool:
    return bool(INDEX_LINE.match(text))


def linked_file(target: str) -> str | None:
    """The root-relative topic file an index link names, or None when it leaves the folder or is a URL: a link
    `](../../etc/passwd)` names nothing memtui reads."""
    from memtui.core.grammar.paths import join_link

    target = target.split("#", 1)[0]
    if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
        return None
    return join_link("", target)


# the load cut ---------------------------------------------------------------------------------------------------
class FileCut(Record):
    """A file an agent tool loads only the start of: `kept_lines` of `lines` lines, `kept_bytes` of `size`."""

    file: str
    lines: int
    size: int
    kept_lines: int
    kept_bytes: int
    limit_lines: int
    limit_bytes: int

    def __init__(self, file: str, lines: int, size: int, kept_lines: int, kept_bytes: int, limit_lines: int,
                 limit_bytes: int) -> None:
        self.file, self.lines, self.size = file, lines, size
        self.kept_lines, self.kept_bytes = kept_lines, kept_bytes
        self.limit_lines, self.limit_bytes = limit_lines, limit_bytes

    @property
    def cut(self) -> bool:
        return self.kept_lines < self.lines

    def describe(self) -> str:
        limits = f"the first {self.limit_lines} lines or {self.limit_bytes:,} bytes"
        if not self.cut:
            return (f"Claude Code loads {limits} of {self.file}: all {self.lines} lines ({self.size:,} bytes) fit")
        return (f"Claude Code loads {limits} of {self.file}: lines {self.kept_lines + 1}-{self.lines} "
                f"({self.size - self.kept_bytes:,} of {self.size:,} bytes) are cut; move them to topic files")


def loaded_start(file: str, data: bytes, limit_lines: int, limit_bytes: int) -> FileCut:
    """How much of `data` a loader that stops at `limit_lines` lines or `limit_bytes` bytes keeps: whole lines."""
    lines = data.splitlines(keepends=True)
    kept = used = 0
    for line in lines[:limit_lines]:
        if used + len(line) > limit_bytes:
            break
        kept, used = kept + 1, used + len(line)
    return FileCut(file, len(lines), len(data), kept, used, limit_lines, limit_bytes)


def cut_warnings(before: str | None, after: str, warnings: list[str]) -> list[str]:
    """A write's warnings about a Claude Code memory's MEMORY.md, said in Claude Code's terms: when the write puts
    lines past what Claude Code loads (more than were), which ones. The generic whole-file cap warning is that same
    fact, so it goes."""
    was = loaded_start("MEMORY.md", (before or "").encode(), LOAD_LINES, LOAD_BYTES)
    now = loaded_start("MEMORY.md", after.encode(), LOAD_LINES, LOAD_BYTES)
    out = [w for w in warnings if not w.startswith("file is over its")]
    if now.cut and now.lines - now.kept_lines > was.lines - was.kept_lines:
        out.append(f"with this change, {now.describe()}")
    return out
