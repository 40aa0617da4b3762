"""What one memory file brings to search ranking: its kind, a bound on its rank, and its fact lineages.

Search ranks *sources* (see `memtui.core.recall.search`). Most of what that needs about a file does not depend on the
query, so the index works it out once per file version (`shape`) and search reads it back instead of parsing every
matching line again:
  kind     memory | topic | log | scratch | archive | other (from the path);
  rank     for a topic file, minus the ordinal of the newest valid date written as "(YYYY-MM-DD" in it (or 1 when
           there is none): no current entry of the file can rank above it; for a daily log, minus its day's ordinal;
  lineage  the file's *lineage blocks*: each run of struck (not removed) entries directly above the current entry
           that supersedes them, with that entry, as one line of the block's lines joined by NUL. Every matching
           line of a block belongs to one source, so the sources of a file are its matching lines minus, for each
           block, its matching lines but one. A NUL never occurs in indexed text (binary files are skipped).
Everything here runs on *folded* text, exactly as the ranking code does.
"""

from __future__ import annotations

import re
from datetime import date

from memtui.core.grammar.entries import Entry, parse_entry

MEMORY_FILE = "MEMORY.md"
_LOG_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
# Superset of an entry's date (entries.py's _META): "(" then the date, anywhere in a line.
_DATE_IN_PARENS = re.compile(r"\((\d{4}-\d{2}-\d{2})")
LINEAGE_JOIN = "\0"


def file_kind(rel: str) -> str:
    if rel == MEMORY_FILE:
        return "memory"
    if rel.startswith("archive/"):
        return "archive"
    if rel.startswith("scratch/"):
        return "scratch"
    if _LOG_NAME.match(rel.rsplit("/", 1)[-1]):
        return "log"
    return "topic" if rel.endswith(".md") else "other"


def log_day(rel: str) -> str | None:
    m = _LOG_NAME.match(rel.rsplit("/", 1)[-1])
    return m.group(1) if m and _ordinal(m.group(1)) is not None else None


def _ordinal(day: str | None) -> int | None:
    if not day:
        return None
    try:
        return date.fromisoformat(day).toordinal()
    except ValueError:
        return None


class _Lines:
    """Line access into one file's (folded) text by 0-based index, splitting on '\\n' only, lazily."""

    __slots__ = ("text", "_lines", "_fenced")

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: list[str] | None = None
        self._fenced: set[int] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def fenced(self, i: int) -> bool:
        """Is line i inside a fenced code block (where a bullet is not an entry)?"""
        if self._fenced is None:
            self._fenced = set()
            # A fence needs ``` or ~~~: looking for those first (memchr speed) spares the anchored regex its
            # walk over every line of the many files that have neither.
            if ("```" in self.text or "~~~" in self.text) and _FENCE.search(self.text):
                opener: str | None = None
                start = 0
                for k, line in enumerate(self.lines):
                    m = _FENCE.match(line)
                    if opener is None:
                        if m:
                            opener, start = m.group(1), k
                    elif m and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener):
                        self._fenced.update(range(start, k + 1))
                        opener = None
                if opener is not None:
                    self._fenced.update(range(start, len(self.lines)))
        return i in self._fenced

    def entry(self, i: int) -> Entry | None:
        lines = self.lines
        if i >= len(lines):
            return None
        e = parse_entry(lines[i])
        return None if e is None or self.fenced(i) else e


def rank_bound(kind: str, rel: str, folded: str) -> int:
    """The best (smallest) second ranking key any source of this file can have in its tier (see module doc)."""
    if kind == "log":
        day = _ordinal(log_day(rel))
        return -day if day is not None else 1
    if kind != "topic":
        return 0
    days = [n for n in map(_ordinal, set(_DATE_IN_PARENS.findall(folded))) if n is not None]
    return -max(days) if days else 1


def lineage_blocks(folded: str) -> list[tuple[int, int]]:
    """(first line, head line), 0-based, of every lineage block of a MEMORY.md or topic file's folded text.

    The same walk as ranking does from a matched struck line: down through struck, not removed, entries to the
    first current entry; a run that ends anywhere else has no current entry and each of its lines stands alone."""
    if "~~" not in folded:
        return []  # a struck entry is "~~…~~"
    lines = _Lines(folded)
    struck: list[int] = []
    pos, line, cursor = folded.find("~~"), 0, 0
    while pos >= 0:
        line += folded.count("\n", cursor, pos)
        e = lines.entry(line)
        if e is not None and e.struck and e.struck_kind != "removed":
            struck.append(line)
        cursor = folded.find("\n", pos)
        if cursor < 0:
            break
        pos = folded.find("~~", cursor)
    blocks: list[tuple[int, int]] = []
    k = 0
    while k < len(struck):
        first = last = struck[k]
        while k + 1 < len(struck) and struck[k + 1] == last + 1:
            k += 1
            last = struck[k]
        k += 1
        head = lines.entry(last + 1)
        if head is not None and head.current:
            blocks.append((first, last + 1))
    return blocks


def shape(rel: str, folded: str) -> tuple[str, int, bytes]:
    """(kind, rank bound, lineage text as UTF-8) of one file from its folded text."""
    kind = file_kind(rel)
    lineage = b""
    if kind in ("memory", "topic"):
        blocks = lineage_blocks(folded)
        if blocks:
            lines = folded.split("\n")
            lineage = "\n".join(LINEAGE_JOIN.join(lines[a : b + 1]) for a, b in blocks).encode("utf-8")
    return kind, rank_bound(kind, rel, folded), lineage
