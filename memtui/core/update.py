"""memory_update and the file-level writes as pure functions from a file's text to its next text.

Each function validates and either returns the new text or raises `Refused` with a message written for an
agent to act on: what was wrong and what to send instead.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field

from memtui.core.dedupe import near_duplicate
from memtui.core.document import Document, FormatSpec, Section
from memtui.core.entries import TAGS, Entry, format_body, split_inline, strike

# Zero-width, bidi controls and other invisible characters an entry may never carry.
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\u180e]")


class Refused(ValueError):
    def __init__(self, message: str, candidates: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.candidates = candidates or []


@dataclass
class Outcome:
    text: str
    line: int | None = None  # where the new or struck line now is
    entry: str | None = None  # the line written, as it stands in the file
    replaced: str | None = None  # the line that was struck
    warnings: list[str] = field(default_factory=list)
    # Other files the same change writes, as rel -> (text before, text after): a consolidation's archive file.
    also: dict[str, tuple[str | None, str]] = field(default_factory=dict)


def clean_entry_text(raw: str) -> str:
    """Refuse what cannot be one entry line; return it stripped."""
    if raw is None or not raw.strip():
        raise Refused("the entry is empty: send the fact as one line, e.g. '[stated] Prefers dark mode'")
    if "\n" in raw.strip() or "\r" in raw.strip():
        raise Refused("an entry is one line: send one fact per memory_update, without line breaks")
    hidden = INVISIBLE.findall(raw)
    if hidden:
        names = ", ".join(sorted({f"U+{ord(c):04X}" for c in hidden}))
        raise Refused(f"the entry contains invisible characters ({names}); send it as plain visible text")
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") and c != "\t" for c in raw):
        raise Refused("the entry contains control characters or line separators; send it as plain text")
    return raw.strip().lstrip("-*+ ").strip() if raw.strip()[:2] in ("- ", "* ", "+ ") else raw.strip()


def _resolve_tag(inline: str | None, given: str | None, fallback: str | None) -> str | None:
    if given is not None:
        given = given.strip().strip("[]").lower()
        if given not in TAGS:
            raise Refused(f"unknown provenance {given!r}: use one of {', '.join(TAGS)}")
    if inline and given and inline != given:
        raise Refused(f"the entry is tagged [{inline}] but provenance says {given!r}: send one of them")
    return inline or given or fallback


def _require_section(doc: Document, section: str) -> Section:
    sec = doc.section(section) if section else None
    if sec is None:
        names = ", ".join(doc.section_names) or "(this file has no sections)"
        raise Refused(f"no section {section!r} in {doc.path}; sections are: {names}")
    return sec


def _cap_warning(doc: Document, sec: Section, spec: FormatSpec) -> list[str]:
    # A cap counts a section's entry lines, struck history included (002's "30 lines each"): struck lines are
    # what consolidation moves to archive/, so they are what brings a section back under its cap.
    cap = spec.cap_for(sec.title)
    n = len(sec.entries)
    if cap is not None and n > cap:
        return [f"section {sec.title} is over its cap ({n}/{cap}); consolidation is due"]
    return []


def _file_warnings(text: str, spec: FormatSpec) -> list[str]:
    out = []
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    size = len(text.encode())
    if spec.file_lines is not None and lines > spec.file_lines:
        out.append(f"file is over its line cap ({lines}/{spec.file_lines}); consolidation is due")
    if spec.file_bytes is not None and size > spec.file_bytes:
        out.append(f"file is over its size cap ({size}/{spec.file_bytes} bytes); consolidation is due")
    return out


def find_current(sec: Section, replaces: str) -> tuple[int, Entry]:
    """The one current entry `replaces` names: exact line, body or text, else a unique substring."""
    want = replaces.strip()
    if not want:
        raise Refused("replaces is empty: send the current entry's text (or a unique part of it)")
    _, want_text, _, _ = split_inline(want)
    current = sec.current
    exact = [
        (i, e)
        for i, e in current
        if want in (e.raw.strip(), e.body, e.text) or (want_text and want_text.casefold() == e.text.casefold())
    ]
    if len(exact) == 1:
        return exact[0]
    folded = want_text.casefold() or want.casefold()
    hits = exact or [(i, e) for i, e in current if folded in e.body.casefold()]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        listing = [e.raw.strip() for _, e in current]
        struck = [e for _, e in sec.struck if folded in e.body.casefold()]
        hint = " (it matches only struck history, which cannot be changed)" if struck else ""
        raise Refused(
            f"replaces {replaces!r} matches no current entry of {sec.title}{hint}; "
            "send the exact text of one of the current entries",
            listing,
        )
    raise Refused(
        f"replaces {replaces!r} matches {len(hits)} current entries of {sec.title}; send more of the text so it "
        "matches exactly one",
        [e.raw.strip() for _, e in hits],
    )


def _new_line(
    raw: str, provenance: str | None, source: str | None, today: str, spec: FormatSpec, fallback_tag: str | None,
    bullet: str = "-", indent: str = "",
) -> tuple[str, Entry]:
    text = clean_entry_text(raw)
    inline_tag, body, date, inline_source = split_inline(text)
    tag = _resolve_tag(inline_tag, provenance, fallback_tag)
    if tag is None:
        raise Refused(
            "the entry has no provenance tag: start it with [stated] (the user said it), [observed] (seen in a "
            "tool result, file or log), [inferred] (your conclusion) or [suggested] (your idea), or pass provenance"
        )
    if not body:
        raise Refused("the entry has a tag but no text: send the fact itself")
    line_body = format_body(tag, body, date or today, inline_source or source)
    if len(line_body) > spec.entry_max:
        raise Refused(
            f"the entry is {len(line_body)} characters, over entry-max {spec.entry_max}: shorten it to one fact "
            f"of at most {spec.entry_max} characters (tag, date and source included)"
        )
    entry = Entry(raw=f"{indent}{bullet} {line_body}", indent=indent, bullet=bullet, tag=tag, text=body,
                  date=date or today, source=inline_source or source)
    return entry.raw, entry


def add(doc: Document, section: str, entry: str, *, provenance: str | None, source: str | None, today: str,
        spec: FormatSpec, after: str | None = None) -> Outcome:
    """Add an entry at the end of `section`, or just below the current entry `after` names (a person's `o` in
    the app); when that entry is gone by the time the write applies, at the section's end."""
    sec = _require_section(doc, section)
    line, new = _new_line(entry, provenance, source, today, spec, None)
    for _, e in sec.current:
        if near_duplicate(e.body, new.body):
            raise Refused(
                f"a current entry of {sec.title} already says this: {e.raw.strip()!r}. If the fact changed, send "
                f"action 'revise' with replaces set to that entry; otherwise nothing needs writing",
                [e.raw.strip()],
            )
    below = _below(sec, after)
    if below is not None:
        doc.insert_line(below, line)
        text = doc.render()
        after_doc = Document(text, doc.path)
        warnings = _cap_warning(after_doc, after_doc.section(sec.title) or sec, spec) + _file_warnings(text, spec)
        return Outcome(text, below, line, None, warnings)
    at = doc.insertion_point(sec)
    blank_after_heading = not sec.entries and at == sec.start and at < len(doc.lines) and not doc.lines[at].strip()
    if blank_after_heading:
        at += 1
    doc.insert_line(at, line)
    if blank_after_heading and at + 1 < len(doc.lines) and doc.lines[at + 1].lstrip().startswith("#"):
        doc.insert_line(at + 1, "")
    text = doc.render()
    after = Document(text, doc.path)
    warnings = _cap_warning(after, after.section(sec.title) or sec, spec) + _file_warnings(text, spec)
    return Outcome(text, at, line, None, warnings)


def revise(doc: Document, section: str, entry: str, replaces: str, *, provenance: str | None,
           source: str | None, today: str, spec: FormatSpec) -> Outcome:
    sec = _require_section(doc, section)
    if replaces is None:
        raise Refused("revise needs replaces: the current entry's text (or a unique part of it)")
    i, old = find_current(sec, replaces)
    line, new = _new_line(entry, provenance, source, today, spec, old.tag, old.bullet, old.indent)
    if new.body == old.body:
        raise Refused(f"the revised entry is the same as the current one ({old.raw.strip()!r}); nothing to change")
    for j, e in sec.current:
        if j != i and near_duplicate(e.body, new.body):
            raise Refused(
                f"another current entry of {sec.title} already says this: {e.raw.strip()!r}; remove one of them "
                "instead of revising into a duplicate",
                [e.raw.strip()],
            )
    doc.replace_line(i, strike(old, "superseded", today))
    doc.insert_line(i + 1, line)
    text = doc.render()
    after = Document(text, doc.path)
    warnings = _cap_warning(after, after.section(sec.title) or sec, spec) + _file_warnings(text, spec)
    return Outcome(text, i + 1, line, old.raw.strip(), warnings)


def _below(sec: Section, after: str | None) -> int | None:
    if not after:
        return None
    try:
        i, _ = find_current(sec, after)
    except Refused:
        return None
    return i + 1


def move(doc: Document, section: str, replaces: str, to_section: str, *, to_doc: Document | None, today: str,
         to_spec: FormatSpec) -> Outcome:
    """Move a current entry to another section, of this file (`to_doc` None) or of `to_doc`.

    The entry keeps its tag, date and source (the fact did not change, only where it is kept). Where it was, it
    is struck ``superseded DATE (moved to FILE § Section)``: history stays where a reader last saw it. With
    `to_doc`, the returned Outcome's `also` holds the other file's new text, so both files go in one commit."""
    sec = _require_section(doc, section)
    if replaces is None:
        raise Refused("move needs replaces: the current entry's text (or a unique part of it)")
    i, old = find_current(sec, replaces)
    target_doc = doc if to_doc is None else to_doc
    target = _require_section(target_doc, to_section)
    if to_doc is None and target.heading == sec.heading:
        raise Refused(f"the entry is already in {sec.title}; choose another section or file")
    where = f"{target_doc.path} § {target.title}"
    body = format_body(old.tag, old.text, old.date, old.source, old.time)
    if len(body) > to_spec.entry_max:
        raise Refused(f"the entry is {len(body)} characters, over {target_doc.path}'s entry-max "
                      f"{to_spec.entry_max}: revise it shorter first")
    for _, e in target.current:
        if near_duplicate(e.body, old.body):
            raise Refused(f"{where} already says this: {e.raw.strip()!r}; remove this one instead", [e.raw.strip()])
    doc.replace_line(i, strike(old, "superseded", today) + f" (moved to {where})")
    line = f"{old.indent}{old.bullet} {body}"
    if to_doc is None:
        again = Document(doc.render(), doc.path)
        dest = again.section(to_section)
        assert dest is not None
        at = again.insertion_point(dest)
        again.insert_line(at, line)
        text = again.render()
        return Outcome(text, at, line, old.raw.strip(), _file_warnings(text, to_spec))
    before = to_doc.render()
    at = to_doc.insertion_point(target)
    to_doc.insert_line(at, line)
    after = to_doc.render()
    return Outcome(doc.render(), at, line, old.raw.strip(), _file_warnings(after, to_spec),
                   also={to_doc.path: (before, after)})


def remove(doc: Document, section: str, replaces: str, *, today: str, spec: FormatSpec) -> Outcome:
    sec = _require_section(doc, section)
    if replaces is None:
        raise Refused("remove needs replaces (or entry): the current entry's text (or a unique part of it)")
    i, old = find_current(sec, replaces)
    struck = strike(old, "removed", today)
    doc.replace_line(i, struck)
    return Outcome(doc.render(), i, struck, old.raw.strip())


def append_text(text: str, line: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line.rstrip("\n") + "\n"


def edit_text(text: str, old: str, new: str) -> str:
    """Exact find-and-replace of a unique snippet, as agents do with code (000_bdc6405d4f27d353.txt)."""
    if not old and not text:
        return new  # an empty file has nothing to anchor on: the edit writes its whole content
    if not old:
        raise Refused("old is empty: send the exact text to replace (read the file first)")
    n = text.count(old)
    if n == 0:
        raise Refused("old text not found in the file; read the file first and send text that matches exactly")
    if n > 1:
        raise Refused(f"old text appears {n} times; include more of the surrounding text so it matches once")
    return text.replace(old, new, 1)


# A diff is for reading (the review panel, `queue show`, a tool result): past these it stops, and its last line
# says how many lines it left out. 20 MB of uncommitted log made one 259,000-line diff per queue listing.
DIFF_MAX_LINES = 2_000
DIFF_MAX_CHARS = 512_000
# Above this many lines (both sides together) the common head and tail are set aside before difflib matches;
# above MATCH_LIMIT lines left on a side, no matching is tried and one hunk replaces them.
TRIM_OVER = 2_000
MATCH_LIMIT = 20_000
_LEFT_OUT = re.compile(r"^\\ (\d+) more lines? of this diff left out", re.M)
_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(rel: str, before: str | None, after: str | None, max_lines: int | None = DIFF_MAX_LINES,
                 max_chars: int | None = DIFF_MAX_CHARS, *, context: int = 2) -> str:
    """The unified diff (`context` lines of context) of a file's text, at most `max_lines` lines and about `max_chars`
    characters (None: all of it); a bounded diff ends in ``\\ N more lines of this diff left out``."""
    a_text, b_text = before or "", after or ""
    head = [f"--- {'a/' + rel if before is not None else '/dev/null'}\n",
            f"+++ {'b/' + rel if after is not None else '/dev/null'}\n"]
    if a_text == b_text:
        return ""
    if not a_text or not b_text:
        # A new or emptied file: its lines, as many as are shown, without splitting the rest of a 20 MB text.
        return _one_sided(head, "-" if a_text else "+", a_text or b_text, bool(a_text), max_lines, max_chars)
    a = a_text.splitlines(keepends=True)
    b = b_text.splitlines(keepends=True)
    out, size, shown = list(head), sum(map(len, head)), len(head)
    groups = _grouped(a, b, context)
    for g, group in enumerate(groups):
        first, last = group[0], group[-1]
        hunk = [f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"]
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                hunk += [" " + ln for ln in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                hunk += ["-" + ln for ln in a[i1:i2]]
            if tag in ("replace", "insert"):
                hunk += ["+" + ln for ln in b[j1:j2]]
        for k, line in enumerate(hunk):
            line = line if line.endswith("\n") else line + "\n" + _NO_NEWLINE
            if _full(shown, size, line, max_lines, max_chars):
                rest = len(hunk) - k + _count_hunks(groups[g + 1:]) + _no_newlines(hunk[k:], groups[g + 1:], a, b)
                return "".join(out) + _cut(line, size, shown <= 3, max_chars) + _more(rest)
            out.append(line)
            size += len(line)
            shown += line.count("\n")
    return "".join(out) if groups else ""


def diff_left_out(diff: str) -> int:
    """How many lines a bounded diff says it left out (0 for a whole one)."""
    m = _LEFT_OUT.search(diff, max(0, len(diff) - 200))
    return int(m[1]) if m else 0


def _full(shown: int, size: int, line: str, max_lines: int | None, max_chars: int | None) -> bool:
    return (max_lines is not None and shown + line.count("\n") > max_lines) or \
        (max_chars is not None and size + len(line) > max_chars)


def _cut(line: str, size: int, nothing_yet: bool, max_chars: int | None) -> str:
    """Nothing of the diff's body shown yet (one line longer than the whole bound): its start, marked cut."""
    if not nothing_yet or max_chars is None:
        return ""
    return line[: max(80, max_chars - size)].rstrip("\n") + " …\n"


def _more(n: int) -> str:
    return f"\\ {n} more line{'' if n == 1 else 's'} of this diff left out\n"


def _one_sided(head: list[str], sign: str, text: str, removed: bool, max_lines: int | None,
               max_chars: int | None) -> str:
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    rng = f"-{_range(0, total)} +{_range(0, 0)}" if removed else f"-{_range(0, 0)} +{_range(0, total)}"
    out = [*head, f"@@ {rng} @@\n"]
    size, shown, at = sum(map(len, out)), 0, 0
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end + 1
        line = sign + text[at:end]
        line = line if line.endswith("\n") else line + "\n" + _NO_NEWLINE
        if _full(shown + 3, size, line, max_lines, max_chars):
            rest = total - shown + (0 if text.endswith("\n") else 1)
            return "".join(out) + _cut(line, size, shown == 0, max_chars) + _more(rest)
        out.append(line)
        size += len(line)
        shown += 1
        at = end
    return "".join(out)


def _range(start: int, stop: int) -> str:
    """difflib's unified range: `start,length` (1-based), `start` alone for one line."""
    length = stop - start
    begin = start + 1
    if length == 1:
        return f"{begin}"
    if not length:
        begin -= 1
    return f"{begin},{length}"


def common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines `a` and `b` share at their start, and then (not overlapping those) at their end."""
    lo = 0
    while lo < len(a) and lo < len(b) and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < len(a) - lo and hi < len(b) - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    return lo, hi


def _grouped(a: list[str], b: list[str], n: int) -> list[list[tuple[str, int, int, int, int]]]:
    """difflib's grouped opcodes; for big texts the common head and tail are set aside first (an append to a big
    log is matched in one pass, not by difflib over 200,000 lines), and a huge middle is one replace."""
    if len(a) + len(b) <= TRIM_OVER:
        return list(difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(n))
    lo, hi = common_ends(a, b)
    am, bm = a[lo:len(a) - hi], b[lo:len(b) - hi]
    if len(am) > MATCH_LIMIT or len(bm) > MATCH_LIMIT or not am or not bm:
        tag = "replace" if am and bm else "delete" if am else "insert"
        middle = [(tag, 0, len(am), 0, len(bm))]
    else:
        middle = difflib.SequenceMatcher(None, am, bm).get_opcodes()
    codes = [("equal", 0, lo, 0, lo)] if lo else []
    codes += [(t, i1 + lo, i2 + lo, j1 + lo, j2 + lo) for t, i1, i2, j1, j2 in middle]
    if hi:
        codes.append(("equal", len(a) - hi, len(a), len(b) - hi, len(b)))
    return list(_Given(codes).get_grouped_opcodes(n))


class _Given(difflib.SequenceMatcher):
    """difflib's grouping over opcodes worked out elsewhere."""

    def __init__(self, codes: list[tuple[str, int, int, int, int]]) -> None:
        super().__init__(None, [], [])
        self.opcodes = codes

    def get_opcodes(self) -> list[tuple[str, int, int, int, int]]:
        return self.opcodes


def _count_hunks(groups: list[list[tuple[str, int, int, int, int]]]) -> int:
    n = 0
    for group in groups:
        n += 1
        for tag, i1, i2, j1, j2 in group:
            n += (i2 - i1 if tag != "insert" else 0) + (j2 - j1 if tag in ("replace", "insert") else 0)
    return n


def _no_newlines(rest: list[str], groups: list[list[tuple[str, int, int, int, int]]], a: list[str],
                 b: list[str]) -> int:
    """The `\\ No newline` lines among what was left out (only a file's last line can lack its newline)."""
    n = sum(not ln.endswith("\n") for ln in rest)
    for group in groups:
        for tag, i1, i2, j1, j2 in group:
            if tag != "insert" and i2 == len(a) and i2 > i1 and not a[-1].endswith("\n"):
                n += 1
            if tag in ("replace", "insert") and j2 == len(b) and j2 > j1 and not b[-1].endswith("\n"):
                n += 1
    return n
