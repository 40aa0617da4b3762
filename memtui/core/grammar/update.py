"""memory_update and the file-level writes as pure functions from a file's text to its next text.

Each function validates and either returns the new text or raises `Refused` with a message written for an
agent to act on: what was wrong and what to send instead.
"""

from __future__ import annotations

import re

from memtui.core.grammar.dedupe import near_duplicate
from memtui.core.grammar.document import Document, FormatSpec, Section
from memtui.core.grammar.entries import TAGS, Entry, format_body, split_inline, strike
# The diff of a planned change lives with the other patch helpers, below the stores; named here too for callers
# that diff what they plan (memtui/core/basics/patches.py).
from memtui.core.basics.patches import DIFF_MAX_CHARS, DIFF_MAX_LINES, diff_left_out, unified_diff  # noqa: F401
from memtui.core.basics.record import Record
from memtui.core.basics.visible import code_points, hidden

# Markup a rendered markdown view hides: an HTML comment, or a tag (``<span hidden>``, ``<details>``, ``<img …>``).
_HTML = re.compile(r"<!--|<[A-Za-z/!?][^<>]*>")


class Refused(ValueError):
    def __init__(self, message: str, candidates: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.candidates = candidates or []


class Outcome(Record):
    """A planned write's next file text, where its line went, and what else it writes."""

    text: str
    line: int | None  # where the new or struck line now is
    entry: str | None  # the line written, as it stands in the file
    replaced: str | None  # the line that was struck
    warnings: list[str]
    # Other files the same change writes, as rel -> (text before, text after): a consolidation's archive file.
    also: dict[str, tuple[str | None, str]]

    def __init__(self, text: str, line: int | None = None, entry: str | None = None, replaced: str | None = None,
                 warnings: list[str] | None = None, also: dict[str, tuple[str | None, str]] | None = None) -> None:
        self.text = text
        self.line = line
        self.entry = entry
        self.replaced = replaced
        self.warnings = [] if warnings is None else warnings
        self.also = {} if also is None else also


def clean_entry_text(raw: str) -> str:
    """Refuse what cannot be one entry line; return it stripped."""
    if raw is None or not raw.strip():
        raise Refused("the entry is empty: send the fact as one line, e.g. '[stated] Prefers dark mode'")
    if "\n" in raw.strip() or "\r" in raw.strip():
        raise Refused("an entry is one line: send one fact per memory_update, without line breaks")
    # Every character a person cannot see (visible.hidden: controls, format and tag characters, variation selectors,
    # fillers, private use, unassigned), a zero-width joiner too: inside an emoji it only joins a picture, but
    # between two letters, or repeated, it is text no one reads, and an entry needs no emoji family to say a fact.
    unseen = hidden(raw)
    if unseen:
        raise Refused(f"the entry contains {len(unseen)} invisible or control character(s) ({code_points(unseen)}): "
                      "a person reviewing it would not see them; send it as plain visible text without them")
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
    sec = doc.section(section or "")
    if sec is None:
        if not doc.section_names:
            raise Refused(f"{doc.path} has no headings: its body is its one section; send section \"\" (empty) to "
                          "write to it")
        names = ", ".join(doc.section_names)
        raise Refused(f"no section {section!r} in {doc.path}; sections are: {names}")
    return sec


def _cap_warning(sec: Section, spec: FormatSpec) -> list[str]:
    # A cap counts a section's entry lines, struck history included (002's "30 lines each"): struck lines are
    # what consolidation moves to archive/, so they are what brings a section back under its cap.
    cap = spec.cap_for(sec.title)
    n = len(sec.entries)
    if cap is not None and n > cap:
        return [f"section {sec.title} is over its cap ({n}/{cap}); consolidation is due"]
    return []


def _written_cap_warning(text: str, path: str, sec: Section, spec: FormatSpec) -> list[str]:
    """`_cap_warning` for section `sec` as the written `text` holds it: parsed only when it has a cap to count."""
    if spec.cap_for(sec.title) is None:
        return []
    return _cap_warning(Document(text, path).section(sec.title) or sec, spec)


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


def current_entry(doc: Document, section: str, replaces: str | None, needs: str = "replaces is missing: send the "
                  "current entry's text (or a unique part of it)") -> tuple[Section, int, Entry]:
    """The grammar's one lookup of a current entry: section `section` of `doc` (which must exist) and the one current
    entry `replaces` names in it, by line (`find_current`); Refused saying what to send instead (`needs` when
    `replaces` is missing)."""
    sec = _require_section(doc, section)
    if replaces is None:
        raise Refused(needs)
    i, entry = find_current(sec, replaces)
    return sec, i, entry


def _new_line(
    raw: str, provenance: str | None, source: str | None, today: str, spec: FormatSpec, fallback_tag: str | None,
    bullet: str = "-", indent: str = "", *, tags: bool = True,
) -> tuple[str, Entry]:
    text = clean_entry_text(raw)
    if not tags:
        return _plain_line(text, provenance, source, spec, bullet, indent)
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
    if source and not inline_source:
        clean_entry_text(line_body)  # the source given beside the entry is written into the line too
    if len(line_body) > spec.entry_max:
        raise Refused(
            f"the entry is {len(line_body)} characters, over entry-max {spec.entry_max}: shorten it to one fact "
            f"of at most {spec.entry_max} characters (tag, date and source included)"
        )
    entry = Entry(raw=f"{indent}{bullet} {line_body}", indent=indent, bullet=bullet, tag=tag, text=body,
                  date=date or today, source=inline_source or source)
    return entry.raw, entry


def _plain_line(text: str, provenance: str | None, source: str | None, spec: FormatSpec, bullet: str,
                indent: str) -> tuple[str, Entry]:
    """An entry line in a layout without tags (an OpenClaw workspace): the text as sent, without memtui's tag
    and date, which that tool's files do not carry (the tag stays in the proposal and the audit log). Only an
    untrusted source is written into the line too (guard.py), so whoever reads the file sees where it came from.

    What the file's reader would take for something else is refused: a struck ``~~…~~`` line reads as history the
    person approved, and an HTML comment or tag is hidden when the markdown is rendered, yet loaded into every
    session of the tool whose file it is."""
    tag, body, _date, inline_source = split_inline(text)
    _resolve_tag(tag, provenance, None)  # an unknown provenance is still refused
    if not body:
        raise Refused("the entry has no text: send the fact itself")
    if "~~" in text:  # as sent: a whole struck line parses as its inner text, which would drop the marks unsaid
        raise Refused("the entry has strike-through (~~): this file keeps no struck history, memtui keeps it. Send "
                      "the fact as plain text; to replace an entry, send action 'revise' with replaces set to it")
    if _HTML.search(text):
        raise Refused("the entry holds HTML (a comment or a tag), which a rendered view hides but the agent still "
                      "loads: send the fact as plain text without < > markup")
    src = inline_source or source
    if src and src.startswith("untrusted:"):
        line_body = f"{body} ({src})"
    else:  # only a known tag comes off: a date or a parenthesis the agent wrote is part of what it said
        line_body = re.sub(r"^\[[A-Za-z]+\][ \t]*", "", text) if tag else text
        line_body = line_body.lstrip("-*+ ").strip() if text[:2] in ("- ", "* ", "+ ") else line_body
    if len(line_body) > spec.entry_max:
        raise Refused(f"the entry is {len(line_body)} characters, over entry-max {spec.entry_max}: shorten it to one "
                      f"fact of at most {spec.entry_max} characters")
    entry = Entry(raw=f"{indent}{bullet} {line_body}", indent=indent, bullet=bullet, text=line_body)
    return entry.raw, entry


def add(doc: Document, section: str, entry: str, *, provenance: str | None, source: str | None, today: str,
        spec: FormatSpec, after: str | None = None, tags: bool = True) -> Outcome:
    """Add an entry at the end of `section`, or just below the current entry `after` names (a person's `o` in
    the app); when that entry is gone by the time the write applies, at the section's end."""
    sec = _require_section(doc, section)
    line, new = _new_line(entry, provenance, source, today, spec, None, tags=tags)
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
        warnings = _written_cap_warning(text, doc.path, sec, spec) + _file_warnings(text, spec)
        return Outcome(text, below, line, None, warnings)
    at = doc.insertion_point(sec)
    blank_after_heading = not sec.entries and at == sec.start and at < len(doc.lines) and not doc.lines[at].strip()
    if blank_after_heading:
        at += 1
    doc.insert_line(at, line)
    if blank_after_heading and at + 1 < len(doc.lines) and doc.lines[at + 1].lstrip().startswith("#"):
        doc.insert_line(at + 1, "")
    text = doc.render()
    warnings = _written_cap_warning(text, doc.path, sec, spec) + _file_warnings(text, spec)
    return Outcome(text, at, line, None, warnings)


def revise(doc: Document, section: str, entry: str, replaces: str, *, provenance: str | None,
           source: str | None, today: str, spec: FormatSpec, tags: bool = True, strikes: bool = True) -> Outcome:
    """The current entry `replaces` names, superseded by `entry`: struck with the new line below it, or, where
    the layout keeps no struck lines (`strikes` False), changed in place."""
    sec, i, old = current_entry(doc, section, replaces,
                                "revise needs replaces: the current entry's text (or a unique part of it)")
    line, new = _new_line(entry, provenance, source, today, spec, old.tag, old.bullet, old.indent, tags=tags)
    if new.body == old.body:
        raise Refused(f"the revised entry is the same as the current one ({old.raw.strip()!r}); nothing to change")
    for j, e in sec.current:
        if j != i and near_duplicate(e.body, new.body):
            raise Refused(
                f"another current entry of {sec.title} already says this: {e.raw.strip()!r}; remove one of them "
                "instead of revising into a duplicate",
                [e.raw.strip()],
            )
    if not strikes:
        doc.replace_line(i, line)
        text = doc.render()
        return Outcome(text, i, line, old.raw.strip(), _file_warnings(text, spec))
    doc.replace_line(i, strike(old, "superseded", today))
    doc.insert_line(i + 1, line)
    text = doc.render()
    warnings = _written_cap_warning(text, doc.path, sec, spec) + _file_warnings(text, spec)
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
         to_spec: FormatSpec, strikes: bool = True) -> Outcome:
    """Move a current entry to another section, of this file (`to_doc` None) or of `to_doc`.

    The entry keeps its tag, date and source (the fact did not change, only where it is kept). Where it was, it
    is struck ``superseded DATE (moved to FILE § Section)``: history stays where a reader last saw it. With
    `to_doc`, the returned Outcome's `also` holds the other file's new text, so both files go in one commit."""
    sec, i, old = current_entry(doc, section, replaces,
                                "move needs replaces: the current entry's text (or a unique part of it)")
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
    line = f"{old.indent}{old.bullet} {body}" if strikes else old.raw
    if strikes:
        doc.replace_line(i, strike(old, "superseded", today) + f" (moved to {where})")
    else:  # the line moves as it is; where it was, history remembers it
        doc.delete_line(i)
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


def remove(doc: Document, section: str, replaces: str, *, today: str, spec: FormatSpec,
           strikes: bool = True) -> Outcome:
    """The current entry `replaces` names struck ``removed DATE``, or deleted where the layout keeps no struck
    lines (`strikes` False: history holds it)."""
    _sec, i, old = current_entry(doc, section, replaces, "remove needs replaces (or entry): the current entry's "
                                 "text (or a unique part of it)")
    if not strikes:
        doc.delete_line(i)
        return Outcome(doc.render(), i, None, old.raw.strip())
    struck = strike(old, "removed", today)
    doc.replace_line(i, struck)
    return Outcome(doc.render(), i, struck, old.raw.strip())


def append_text(text: str, line: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line.rstrip("\n") + "\n"


def edit_text(text: str, old: str, new: str) -> str:
    """Exact find-and-replace of a unique snippet, the way coding agents edit files: `old` must match exactly
    once, so an edit never lands on a guess."""
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
