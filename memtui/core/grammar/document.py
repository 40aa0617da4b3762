"""A memory file as a document: its lines, its sections, its entries and its format spec.

Structure follows CommonMark (markdown-it-py, or a line scan that agrees with it where a line scan can tell), so a
``## Heading`` inside a code fence is not a section and a bullet inside a fence is not an entry. The document keeps
every line with its own line ending: rendering an untouched document gives back the same bytes, and an edit
changes only the lines it names.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from functools import lru_cache

from memtui.core.basics.record import Frozen, Record
from memtui.core.grammar.entries import Entry, parse_entry
from memtui.core.grammar.formats.claude_code import FrontMatter, front_matter

DEFAULT_ENTRY_MAX = 200
_SPEC = re.compile(r"<!--\s*memtui:format\b(?P<body>.*?)-->", re.S)
_CAP = re.compile(r"\s*(?P<name>[^=,]+?)\s*=\s*(?P<n>\d+)\s*(?:,|(?=\s)|$)")


class FormatSpec(Frozen):
    """The rules in the ``<!-- memtui:format ... -->`` comment: one source of truth for person and validator."""

    caps: dict[str, int]
    always: tuple[str, ...] = ()
    entry_max: int = DEFAULT_ENTRY_MAX
    file_lines: int | None = None
    file_bytes: int | None = None
    rules: str = ""
    present: bool = False

    def __init__(self, caps: dict[str, int] | None = None, always: tuple[str, ...] = (),
                 entry_max: int = DEFAULT_ENTRY_MAX, file_lines: int | None = None, file_bytes: int | None = None,
                 rules: str = "", present: bool = False) -> None:
        put = object.__setattr__
        put(self, "caps", {} if caps is None else caps)
        put(self, "always", always)
        put(self, "entry_max", entry_max)
        put(self, "file_lines", file_lines)
        put(self, "file_bytes", file_bytes)
        put(self, "rules", rules)
        put(self, "present", present)

    def cap_for(self, section: str) -> int | None:
        for name, n in self.caps.items():
            if name.casefold() == section.casefold():
                return n
        return self.caps.get("*")

    def is_always(self, section: str) -> bool:
        return any(a.casefold() == section.casefold() for a in self.always)


def parse_spec(text: str) -> FormatSpec:
    m = _SPEC.search(text)
    if not m:
        return FormatSpec()
    caps: dict[str, int] = {}
    always: tuple[str, ...] = ()
    entry_max = DEFAULT_ENTRY_MAX
    file_lines = file_bytes = None
    rules = []
    for raw in m["body"].splitlines():
        line = raw.strip()
        key, _, value = line.partition(":")
        key = key.strip().casefold()
        value = value.strip()
        if key == "caps" and value:
            caps = {c["name"].strip(): int(c["n"]) for c in _CAP.finditer(value)}
        elif key == "always":
            always = tuple(a.strip() for a in (value.split(",") if "," in value else [value]) if a.strip())
        elif key == "entry-max" and value.isdigit():
            entry_max = int(value)
        elif key == "file-lines" and value.isdigit():
            file_lines = int(value)
        elif key == "file-bytes" and value.isdigit():
            file_bytes = int(value)
        elif line:
            rules.append(line)
    return FormatSpec(caps, always, entry_max, file_lines, file_bytes, "\n".join(rules), True)


class Section(Record):
    """A heading and the lines under it up to the next heading of the same or a higher level."""

    title: str
    level: int
    heading: int | None  # line index of the heading; None for the preamble
    start: int  # first body line
    end: int  # one past the last body line
    entries: list[tuple[int, Entry]]

    def __init__(self, title: str, level: int, heading: int | None, start: int, end: int,
                 entries: list[tuple[int, Entry]] | None = None) -> None:
        self.title = title
        self.level = level
        self.heading = heading
        self.start = start
        self.end = end
        self.entries = [] if entries is None else entries

    @property
    def current(self) -> list[tuple[int, Entry]]:
        return [(i, e) for i, e in self.entries if e.current]

    @property
    def struck(self) -> list[tuple[int, Entry]]:
        return [(i, e) for i, e in self.entries if e.struck]


class Document:
    """A parsed memory file. `lines` keep their endings; `sections` are in reading order. `kept`: a copy of the
    parse is kept for the next Document of the same text (a write parses it several times); a reader of each file
    once (lint) keeps none."""

    def __init__(self, text: str, path: str = "MEMORY.md", kept: bool = True) -> None:
        self.path = path
        self.text = text
        self.lines: list[str] = text.splitlines(keepends=True)
        self.sections: list[Section] = []
        self.hidden: frozenset[int] = frozenset()  # lines inside fences, code and HTML blocks, and front matter
        # YAML front matter (a Claude Code topic file's name, description and type): metadata, never a section.
        self.front_matter: FrontMatter | None = None
        self._by_title: dict[str, Section] | None = None
        parsed = _parsed.get(text) if len(text) <= STRUCTURE_CACHE_MAX_CHARS else None
        if parsed is not None:
            # The same text parsed before (a write plans the text it read, and the text it leaves, when proposed
            # and again when approved): its sections are copied, so editing this document changes no other.
            self.spec, self.hidden, sections, self.front_matter = parsed
            self.sections = [Section(s.title, s.level, s.heading, s.start, s.end, list(s.entries)) for s in sections]
            return
        self.spec = parse_spec(text)
        self._parse()
        if kept and len(text) <= STRUCTURE_CACHE_MAX_CHARS:  # not `kept`: a reader of every file once (lint)
            with _structures_lock:
                _parsed[text] = (self.spec, self.hidden, tuple(
                    Section(s.title, s.level, s.heading, s.start, s.end, list(s.entries)) for s in self.sections),
                    self.front_matter)
                while len(_parsed) > PARSED_CACHE_SIZE:
                    del _parsed[next(iter(_parsed))]

    @property
    def newline(self) -> str:
        return "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"

    def render(self) -> str:
        return "".join(self.lines)

    def _parse(self) -> None:
        self.front_matter = front_matter(self.lines)
        skip = self.front_matter.end if self.front_matter else 0
        headings, hidden = _structure(_structured_text(self.text, self.lines, skip))
        self.hidden = hidden | frozenset(range(skip)) if skip else hidden
        level = 2 if any(lv == 2 for _, lv, _ in headings) else 1
        tops = [(ln, lv, title) for ln, lv, title in headings if lv == level]
        n = len(self.lines)
        first = tops[0][0] if tops else n
        self.sections.append(Section("", 0, None, skip, first))
        for k, (ln, lv, title) in enumerate(tops):
            end = tops[k + 1][0] if k + 1 < len(tops) else n
            self.sections.append(Section(title, lv, ln, ln + 1, end))
        for sec in self.sections:
            for i in range(sec.start, sec.end):
                if i in hidden:
                    continue
                e = parse_entry(self.lines[i])
                if e is not None:
                    sec.entries.append((i, e))

    def section(self, name: str) -> Section | None:
        """The first section titled `name` (case and spacing folded); one dict lookup, not a walk of them all.
        In a file without headings (a Claude Code topic file's body, a plain note) the name "" is its body."""
        if not name.strip() and len(self.sections) == 1:
            return self.sections[0]
        if self._by_title is None:
            self._by_title = {}
            for sec in self.sections:
                if sec.heading is not None:
                    self._by_title.setdefault(_fold(sec.title), sec)
        return self._by_title.get(_fold(name))

    @property
    def section_names(self) -> list[str]:
        return [s.title for s in self.sections if s.heading is not None]

    def entries(self) -> list[tuple[int, Entry]]:
        return [pair for s in self.sections for pair in s.entries]

    def replace_line(self, index: int, new: str) -> None:
        ending = _ending(self.lines[index]) or self.newline
        self.lines[index] = new + ending

    def delete_line(self, index: int) -> None:
        """Drop a line, its line end with it (a remove in a layout that keeps no struck lines)."""
        del self.lines[index]

    def insert_line(self, index: int, new: str) -> None:
        if index > 0 and not _ending(self.lines[index - 1]):
            self.lines[index - 1] += self.newline
        self.lines.insert(index, new + self.newline)

    def insertion_point(self, sec: Section) -> int:
        """Where a new entry goes: after the section's last entry, else after the heading (skipping blanks
        and the section's own prose stays above)."""
        if sec.entries:
            return sec.entries[-1][0] + 1
        i = sec.end
        while i > sec.start and not self.lines[i - 1].strip():
            i -= 1
        return i if i > sec.start else sec.start


def entries_of(text: str, known: frozenset[str] | set[str] = frozenset()) -> list[tuple[int, Entry]]:
    """`Document(text).entries()` less the entries whose line (its ending cut) is in `known`, found as `_parse`
    finds them but with no sections, format spec or cached copy made: lint reads every past version of every file
    for its entries alone (50,000 files: a second Document each), and gives the lines the file still has as
    `known` (an entry of one of them is not deleted), so only the lines that changed are parsed. The sections
    together are every line from the front matter's end but their headings (tests/test_lint_parallel.py)."""
    lines = text.splitlines(keepends=True)
    fm = front_matter(lines)
    skip = fm.end if fm else 0
    headings, hidden = _structure(_structured_text(text, lines, skip))
    level = 2 if any(lv == 2 for _, lv, _ in headings) else 1
    tops = {ln for ln, lv, _ in headings if lv == level}
    out = []
    for i in range(skip, len(lines)):
        if i in hidden or i in tops:
            continue
        line = lines[i]
        if known and line.rstrip("\r\n") in known:
            continue
        e = parse_entry(line)
        if e is not None:
            out.append((i, e))
    return out


def _structured_text(text: str, lines: list[str], skip: int) -> str:
    """The text whose structure is the document's: front matter blanked (its lines kept, so line numbers hold) and
    a byte order mark dropped, which CommonMark would read as text in front of a first heading."""
    if skip:
        return "\n" * skip + "".join(lines[skip:])
    return text[1:] if text.startswith("\ufeff") else text


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return ""


def _fold(name: str) -> str:
    return " ".join(name.casefold().split())


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    # Sections and hidden lines are block structure, settled before any inline parsing (emphasis, links, code
    # spans), which nothing here reads: skipping it halves the parse.
    md.disable(["inline", "text_join"])
    return md


# One write parses the same text several times (planning when proposed, again when approved, the file it leaves,
# MEMORY.md for its entry-max): the structure of recent texts is kept, by a digest of the text, not the text.
STRUCTURE_CACHE_SIZE = 32
STRUCTURE_CACHE_MAX_CHARS = 1_000_000  # bigger texts (a huge daily log) are parsed each time, not kept
_structures: OrderedDict[bytes, tuple[tuple[tuple[int, int, str], ...], frozenset[int]]] = OrderedDict()
_structures_lock = threading.Lock()
# Whole parses (spec, hidden lines, sections with their entries) of the last few texts, keyed by the text itself.
PARSED_CACHE_SIZE = 8
_parsed: dict[str, tuple[FormatSpec, frozenset[int], tuple[Section, ...], FrontMatter | None]] = {}
parse_count = 0  # texts markdown-it has parsed in this process (the cache's misses): what the tests count


def _structure(text: str) -> tuple[tuple[tuple[int, int, str], ...], frozenset[int]]:
    """Headings as (line, level, title), and the lines inside fences, code blocks and HTML blocks."""
    scanned = scan_structure(text)  # a line scan is cheaper than the digest that would find it in the cache
    if scanned is not None:
        return scanned
    if len(text) > STRUCTURE_CACHE_MAX_CHARS:
        return _parse_structure(text)
    import hashlib

    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
    with _structures_lock:
        found = _structures.get(key)
        if found is not None:
            _structures.move_to_end(key)
            return found
    found = _parse_structure(text)
    with _structures_lock:
        _structures[key] = found
        while len(_structures) > STRUCTURE_CACHE_SIZE:
            _structures.popitem(last=False)
    return found


def _parse_structure(text: str) -> tuple[tuple[tuple[int, int, str], ...], frozenset[int]]:
    global parse_count
    parse_count += 1
    tokens = _markdown().parse(text)
    headings: list[tuple[int, int, str]] = []
    hidden: set[int] = set()
    for k, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            title = tokens[k + 1].content.strip() if k + 1 < len(tokens) else ""
            headings.append((tok.map[0], int(tok.tag[1]), title))
        elif tok.type in ("fence", "code_block", "html_block") and tok.map:
            hidden.update(range(tok.map[0], tok.map[1]))
    return tuple(headings), frozenset(hidden)


# The usual memory file needs no markdown parser: CommonMark settles its structure line by line when no line can
# open a container, indented code or a setext heading. `scan_structure` reads such texts directly (ATX headings,
# HTML comments and fences that start in column 0, plain text in block quotes) and gives up on anything else,
# which markdown-it then parses; tests/test_structure_scan.py checks the two agree. This keeps markdown-it out of
# `memtui context` and most writes.
_LIST = r"(?:[-+*]|\d{1,9}[.)])"
_LINE = re.compile(
    r"(?P<comment><!--)"
    r"|(?P<fence>`{3,}|~{3,})"
    r"|(?P<atx> {0,3}(?P<hashes>#{1,6})(?= |$)(?P<rest>.*))"
    # Lines the scan cannot place: a block quote holding more than plain text, HTML and fences not in column 0,
    # indented lines (code, or content of a list item), a heading or block opened inside a list item, setext
    # underlines and rules.
    r"|(?P<other> {0,3}>(?! ?$| ?[^#`~<=>\-+*0-9 ])| {1,3}(?:<|```|~~~)|<| {4,}\S"
    r"| {0,3}(?:" + _LIST + r"(?: +|$))+(?:#{1,6}(?: |$)|>|<|```|~~~)"
    r"| {0,3}(?:" + _LIST + r" +)*(?:=+|-+) *$)",
)
# Only a line that starts with one of these can be anything but paragraph text or a plain list item.
_MAY_MATTER = frozenset(" #<`~>=-+*0123456789")
# A list item ("- ", "* ", "+ ") whose text starts with none of these is a plain one.
_ITEM_MATTERS = frozenset("#<`~>=-+*0123456789 ")
# Tabs (which count as up to four columns), NUL (which markdown-it replaces) and the line breaks Python's
# splitlines knows but CommonMark does not would each need the parser's own rules.
_SCAN_REFUSED = "\t\0\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_NEWLINES = re.compile(r"\r\n?")


def scan_structure(text: str) -> tuple[tuple[tuple[int, int, str], ...], frozenset[int]] | None:
    """`_parse_structure`'s answer for a text a line scan can settle, else None."""
    if any(c in text for c in _SCAN_REFUSED):
        return None
    if "\r" in text:
        text = _NEWLINES.sub("\n", text)
    lines = text.split("\n")
    if lines and not lines[-1].strip(" "):
        lines.pop()  # markdown-it's lines: a last line of nothing but spaces and no newline is not one
    headings: list[tuple[int, int, str]] = []
    hidden: set[int] = set()
    closing: re.Pattern[str] | None = None  # the end of the comment or fence the scan is inside
    opened = 0
    for i, line in enumerate(lines):
        if closing is not None:
            if closing.search(line) if closing is _COMMENT_END else closing.match(line):
                hidden.update(range(opened, i + 1))
                closing = None
            continue
        first = line[:1]
        if first not in _MAY_MATTER or not first:
            continue
        if first in "-*+" and line[1:2] == " " and line[2:3] not in _ITEM_MATTERS:
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        if m.group("other") is not None:
            return None
        if m.group("atx") is not None:
            headings.append((i, len(m.group("hashes")), _atx_title(m.group("rest"))))
            continue
        if m.group("comment") is not None:
            closing = _COMMENT_END
            # A comment can end on the line that opens it.
            if closing.search(line):
                hidden.add(i)
                closing = None
        else:
            marker = m.group("fence")
            if marker[0] == "`" and "`" in line[m.end():]:
                return None  # not a fence: a backtick fence's info string holds no backtick
            closing = re.compile(r" {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",} *$")
        opened = i
    if closing is not None:
        hidden.update(range(opened, len(lines)))  # left open: it runs to the end of the text
    return tuple(headings), frozenset(hidden)


_COMMENT_END = re.compile("-->")


def _atx_title(rest: str) -> str:
    """A heading's title as markdown-it has it: trailing spaces, then a closing run of #s after a space, cut."""
    end = len(rest.rstrip(" "))
    cut = len(rest[:end].rstrip("#"))
    if cut > 0 and rest[cut - 1] == " ":
        end = cut
    return rest[:end].strip()
