"""The entry grammar: one bullet line of a memory file, parsed and formatted.

An entry is ``- [tag] text (YYYY-MM-DD, source)``; a daily-log entry puts ``HH:MM`` before the tag; a
superseded or removed entry is struck through whole and followed by ``superseded DATE`` or ``removed DATE``.
Parsing never loses bytes: an `Entry` keeps its raw line, and only lines that a write touches are re-formatted.
"""

from __future__ import annotations

import re
from typing import Any

from memtui.core.basics.record import Frozen

TAGS = ("stated", "observed", "inferred", "suggested")
STRUCK_KINDS = ("superseded", "removed")

# `rest` runs to its last character that is no blank: what a lazy `.*?` before `[ \t]*$` finds, without trying the end
# after each character (8x faster; every line of every file is asked: tests/test_lint_parallel.py compares the two).
_BULLET = re.compile(r"^(?P<indent>[ \t]*)(?P<bullet>[-*+]|\d{1,9}[.)])(?P<gap>[ \t]+)(?P<rest>(?:.*[^ \t\n])?)[ \t]*$")
_STRUCK = re.compile(
    r"^~~(?P<inner>.*)~~(?:[ \t]+(?P<kind>superseded|removed)(?:[ \t]+(?P<date>\d{4}-\d{2}-\d{2}))?)?(?P<tail>.*)$"
)
_TIME = re.compile(r"^(?P<time>[0-2]\d:[0-5]\d)[ \t]+")
_TAG = re.compile(r"^\[(?P<tag>[A-Za-z]+)\][ \t]*")
_META = re.compile(r"[ \t]*\((?P<date>\d{4}-\d{2}-\d{2})(?:,[ \t]*(?P<source>[^()]*?))?[ \t]*\)$")
_META_AT = re.compile(_META.pattern[len("[ \\t]*"):])  # `_META` from its "(": `parse_entry` finds where that is


class Entry(Frozen):
    """One bullet line, with its parts; `raw` is the line exactly as it was read (no newline)."""

    __slots__ = ("raw", "indent", "bullet", "time", "tag", "text", "date", "source", "struck", "struck_kind",
                 "struck_date")
    raw: str
    indent: str
    bullet: str
    time: str | None
    tag: str | None
    text: str
    date: str | None
    source: str | None
    struck: bool
    struck_kind: str | None
    struck_date: str | None

    def __init__(self, raw: str, indent: str = "", bullet: str = "-", time: str | None = None,
                 tag: str | None = None, text: str = "", date: str | None = None, source: str | None = None,
                 struck: bool = False, struck_kind: str | None = None, struck_date: str | None = None) -> None:
        put = object.__setattr__
        put(self, "raw", raw)
        put(self, "indent", indent)
        put(self, "bullet", bullet)
        put(self, "time", time)
        put(self, "tag", tag)
        put(self, "text", text)
        put(self, "date", date)
        put(self, "source", source)
        put(self, "struck", struck)
        put(self, "struck_kind", struck_kind)
        put(self, "struck_date", struck_date)

    def __getstate__(self) -> tuple[Any, ...]:  # slots and frozen: pickle and copy go through these
        return tuple(getattr(self, f) for f in self._fields)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for f, value in zip(self._fields, state):
            object.__setattr__(self, f, value)

    @property
    def current(self) -> bool:
        return not self.struck

    @property
    def body(self) -> str:
        """The entry without bullet or strike marks: ``[tag] text (date, source)``."""
        return format_body(self.tag, self.text, self.date, self.source, self.time)


def parse_entry(line: str) -> Entry | None:
    """Parse one line; None when it is not a bullet. Tolerant of `*`, `+`, `1.` bullets and missing tags.

    Every line of every file is asked (lint, at 50,000 files, 600,000 times): a part is looked for only where the
    text can hold it (a strike starts with ``~~``, a time with a digit, a tag with ``[``, the date's parenthesis ends
    the text, and `_META` is tried at the text's last "(" alone), and the entry is made through its slots, not `Entry.__init__`'s
    keywords (tests/test_entries_fast.py compares both with the plain reading of the regexes)."""
    line = line.rstrip("\r\n")
    m = _BULLET.match(line)
    if not m:
        return None
    indent, bullet, rest = m.group("indent", "bullet", "rest")
    struck = False
    kind = sdate = None
    if rest.startswith("~~"):
        s = _STRUCK.match(rest)
        if s and s["inner"].strip():
            struck = True
            kind, sdate = s["kind"], s["date"]
            rest = s["inner"]
    time = None
    if rest[:1] in _TIME_STARTS:
        t = _TIME.match(rest)
        if t:
            time, rest = t["time"], rest[t.end() :]
    tag = None
    if rest.startswith("["):
        g = _TAG.match(rest)
        if g and g["tag"].lower() in TAGS:
            tag, rest = g["tag"].lower(), rest[g.end() :]
    date = source = None
    if rest.endswith(")"):
        # `_META.search`, from the last "(" (the meta holds no other parenthesis), its blanks before it cut too
        at = rest.rfind("(")
        mm = _META_AT.match(rest, at) if at >= 0 else None
        if mm:
            date = mm["date"]
            source = (mm["source"] or "").strip() or None
            rest = rest[:at].rstrip(" \t")
    e = _new(Entry)
    _SET_RAW(e, line)
    _SET_INDENT(e, indent)
    _SET_BULLET(e, bullet)
    _SET_TIME(e, time)
    _SET_TAG(e, tag)
    _SET_TEXT(e, rest.strip())
    _SET_DATE(e, date)
    _SET_SOURCE(e, source)
    _SET_STRUCK(e, struck)
    _SET_STRUCK_KIND(e, kind)
    _SET_STRUCK_DATE(e, sdate)
    return e


_TIME_STARTS = frozenset("012")  # `_TIME`'s first character (a time is [0-2]d:dd)
_new = object.__new__
# Each slot's own setter: `Entry.__init__`'s eleven `object.__setattr__` by name were half of making one.
(_SET_RAW, _SET_INDENT, _SET_BULLET, _SET_TIME, _SET_TAG, _SET_TEXT, _SET_DATE, _SET_SOURCE, _SET_STRUCK,
 _SET_STRUCK_KIND, _SET_STRUCK_DATE) = (getattr(Entry, f).__set__ for f in Entry._fields)


def _parse_entry_plainly(line: str) -> Entry | None:
    """`parse_entry` as the regexes read it with no shortcut: what tests compare the fast one with."""
    line = line.rstrip("\r\n")
    m = _BULLET.match(line)
    if not m:
        return None
    rest = m["rest"]
    struck = False
    kind = sdate = None
    s = _STRUCK.match(rest)
    if s and s["inner"].strip():
        struck = True
        kind, sdate = s["kind"], s["date"]
        rest = s["inner"]
    time = None
    t = _TIME.match(rest)
    if t:
        time, rest = t["time"], rest[t.end() :]
    tag = None
    g = _TAG.match(rest)
    if g and g["tag"].lower() in TAGS:
        tag, rest = g["tag"].lower(), rest[g.end() :]
    date = source = None
    mm = _META.search(rest)
    if mm:
        date = mm["date"]
        source = (mm["source"] or "").strip() or None
        rest = rest[: mm.start()]
    return Entry(raw=line, indent=m["indent"], bullet=m["bullet"], time=time, tag=tag, text=rest.strip(), date=date,
                 source=source, struck=struck, struck_kind=kind, struck_date=sdate)


_SPLITS_OFF = frozenset("-*+0123456789[~")  # what a text may start with that `split_inline` could take off


def plain_text(text: str) -> bool:
    """`text` (an entry's text as `parse_entry` gives it) is what `split_inline` gives back, for it alone and for
    its `Entry.body` too: it starts with no bullet, digit (a time), `[` (a tag) or `~` (a strike), ends with no `)`
    (a date), and is one stripped line; the tag, time and date `format_body` puts around it split off again as they
    were. lint then takes its words once, not twice through the parser (tests/test_lint_parallel.py fuzzes it)."""
    return (bool(text) and text[0] not in _SPLITS_OFF and text[-1] != ")" and "\n" not in text
            and text == text.strip())


def format_body(tag: str | None, text: str, date: str | None, source: str | None, time: str | None = None) -> str:
    parts = []
    if time:
        parts.append(time)
    if tag:
        parts.append(f"[{tag}]")
    parts.append(text)
    body = " ".join(parts)
    if date and source:
        body += f" ({date}, {source})"
    elif date:
        body += f" ({date})"
    return body


def format_entry(entry: Entry) -> str:
    """Format an entry as a line (no newline) in the canonical grammar."""
    body = format_body(entry.tag, entry.text, entry.date, entry.source, entry.time)
    if entry.struck:
        body = f"~~{body}~~"
        if entry.struck_kind:
            body += f" {entry.struck_kind}"
            if entry.struck_date:
                body += f" {entry.struck_date}"
    return f"{entry.indent}{entry.bullet} {body}"


def strike(entry: Entry, kind: str, date: str) -> str:
    """The line that replaces `entry` once it is superseded or removed: struck whole, dated."""
    if kind not in STRUCK_KINDS:
        raise ValueError(f"strike kind must be one of {STRUCK_KINDS}")
    inner = entry.raw[len(entry.indent) :].split(None, 1)[1] if entry.raw else entry.body
    return f"{entry.indent}{entry.bullet} ~~{inner.strip()}~~ {kind} {date}"


def split_inline(entry_text: str) -> tuple[str | None, str, str | None, str | None]:
    """Split an entry as a caller typed it (``[stated] text (2026-08-20, src)``, bullet optional)
    into (tag, text, date, source). An unknown ``[tag]`` stays part of the text. Text of several lines (a Hermes
    entry may span lines; anything an agent sends may) is no entry line: it is all text, with no tag, date or
    source read from it, and the write that takes it decides whether it may span lines."""
    line = entry_text.strip()
    if not _BULLET.match(line):
        line = "- " + line
    e = parse_entry(line)
    if e is None:
        return None, entry_text.strip(), None, None
    return e.tag, e.text, e.date, e.source
