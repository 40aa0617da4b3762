"""Planning a write: a proposal's next file text against the text it is planned on, its caps, files and diff.

Functions of plain data. What planning needs to know about the memory it plans for (a file's caps, another file's
text, whether a path is taken, where archives go, the file a path really names) comes in a `Planner`, so the
policies that plan (guard, consolidate) depend on this module and not on `Memory`, and nothing here writes.
"""

from __future__ import annotations

from typing import Callable

from memtui.core.basics import clock
from memtui.core.basics.patches import unified_diff
from memtui.core.basics.record import Frozen
from memtui.core.grammar import update
from memtui.core.grammar.config import ENTRY_ACTIONS, FILE_ACTIONS
from memtui.core.grammar.document import Document, FormatSpec
from memtui.core.grammar.entries import split_inline
from memtui.core.grammar.layout import Layout
from memtui.core.grammar.update import Outcome, Refused
from memtui.core.writing.proposals import Proposal


def _same(rel: str) -> str:
    return rel


def _archive() -> str:
    return "archive"


def _memtui(rel: str) -> str:
    return "memtui"
def _memtui_layout() -> Layout:
    return Layout()


class Planner(Frozen):
    """What planning reads about one memory, as functions of it (called only when a plan needs them)."""

    spec_for: Callable[[Document], FormatSpec]  # a file's caps
    read: Callable[[str], str | None]  # the text of another file a write touches (a move's target)
    on_disk: Callable[[str], bytes | None]  # a path's bytes as they are now
    committed: Callable[[str], bytes | None]  # a path's bytes as reviewed (committed), where history is kept
    real: Callable[[str], str]  # the file a path names, through a symlink: what a diff shows
    archive_dir: Callable[[], str]  # where a consolidation moves struck history
    grammar: Callable[[str], str]  # the format a file's entries are written in: memtui's own, or "hermes"
    layout: Callable[[], Layout]  # the grammar a write follows: tags, and struck lines or changes in place

    def __init__(self, spec_for: Callable[[Document], FormatSpec], read: Callable[[str], str | None],
                 on_disk: Callable[[str], bytes | None], committed: Callable[[str], bytes | None],
                 real: Callable[[str], str] = _same, archive_dir: Callable[[], str] = _archive,
                 grammar: Callable[[str], str] = _memtui, layout: Callable[[], Layout] = _memtui_layout) -> None:
        put = object.__setattr__
        put(self, "spec_for", spec_for)
        put(self, "read", read)
        put(self, "on_disk", on_disk)
        put(self, "committed", committed)
        put(self, "real", real)
        put(self, "archive_dir", archive_dir)
        put(self, "grammar", grammar)
        put(self, "layout", layout)

    def reading(self, read: Callable[[str], str | None]) -> Planner:
        """This planner, reading the other files a write touches with `read` instead."""
        return self.replace(read=read)

    def plan(self, p: Proposal, before: str | None) -> Outcome | None:
        return plan(self, p, before)


def plan(planner: Planner, p: Proposal, before: str | None) -> Outcome | None:
    """The file's next text for `p` against `before`; raises Refused. None means the file is deleted."""
    outcome = _plan(planner, p, before)
    if outcome is not None and p.action in ("edit", "create", "append") and planner.grammar(p.file) == "hermes":
        from memtui.core.grammar.formats import hermes  # a whole-file write to a Hermes file: held to the entry rules

        outcome.warnings += hermes.checked_write(p.file, before, outcome.text)
    return outcome


def _plan(planner: Planner, p: Proposal, before: str | None) -> Outcome | None:
    today = clock.today()
    if p.action == "consolidate":
        from memtui.core.writing import consolidate  # only a consolidation needs it: not loaded for every start

        layout = planner.layout()
        return consolidate.plan(p, before, spec_for=planner.spec_for,
                                archive=lambda file, section, day: consolidate.archive_path(
                                    file, section, day, archive_dir=planner.archive_dir(),
                                    taken=lambda rel: planner.on_disk(rel) is not None),
                                strikes=layout.strikes, tags=layout.tags)
    if p.action in ENTRY_ACTIONS and planner.grammar(p.file) == "hermes":
        from memtui.core.grammar.formats import hermes  # §-separated entries, no sections or tags

        return hermes.plan(p.action, p.file, before, p.entry, p.replaces)
    if p.action in ENTRY_ACTIONS:
        if before is None:
            raise Refused(f"{p.file} does not exist; create it first (or use a file that has sections)")
        doc = Document(before, p.file)
        spec = planner.spec_for(doc)
        layout = planner.layout()
        if not layout.tags and p.provenance is None and p.entry and len(p.entry.strip().splitlines()) == 1:
            # The file will not carry the tag the entry was sent with: the proposal (and so the audit) keeps it.
            # An entry of several lines is not one entry: the write below refuses it with the reason.
            p.provenance = split_inline(p.entry)[0]
        if p.action == "add":
            return update.add(doc, p.section or "", p.entry or "", provenance=p.provenance, source=p.source,
                              today=today, spec=spec, after=p.after, tags=layout.tags)
        if p.action == "revise":
            return update.revise(doc, p.section or "", p.entry or "", p.replaces, provenance=p.provenance,
                                 source=p.source, today=today, spec=spec, tags=layout.tags, strikes=layout.strikes)
        return update.remove(doc, p.section or "", p.replaces or p.entry, today=today, spec=spec,
                             strikes=layout.strikes)
    if p.action == "move":
        if before is None:
            raise Refused(f"{p.file} does not exist; nothing to move")
        to_doc = None
        if p.to:
            to_text = planner.read(p.to)
            if to_text is None:
                raise Refused(f"{p.to} does not exist; create it with a section first")
            to_doc = Document(to_text, p.to)
        return update.move(Document(before, p.file), p.section or "", p.replaces or "", p.to_section or "",
                           to_doc=to_doc, today=today, to_spec=planner.spec_for(to_doc or Document(before, p.file)),
                           strikes=planner.layout().strikes)
    if p.action == "append":
        start = new_log_header(p.file) if before is None else before
        return capped(planner, p.file, update.append_text(start, p.content or ""))
    if p.action == "create":
        if before is not None:
            raise Refused(f"{p.file} already exists; edit it instead, or choose another name")
        return capped(planner, p.file, p.content or "")
    if p.action == "edit":
        if before is None:
            raise Refused(f"{p.file} does not exist; create it first")
        return capped(planner, p.file, update.edit_text(before, p.old or "", p.content or ""))
    if p.action == "delete":
        if before is None:
            raise Refused(f"{p.file} does not exist; nothing to delete")
        return None
    if p.action == "rename":
        if before is None:
            raise Refused(f"{p.file} does not exist; nothing to rename")
        if not p.to or planner.on_disk(p.to) is not None or planner.committed(p.to) is not None:
            raise Refused(f"cannot rename to {p.to!r}: it exists already or is empty")
        return Outcome(before)
    raise Refused(f"unknown action {p.action!r}: use one of {', '.join(ENTRY_ACTIONS + FILE_ACTIONS)}")


def capped(planner: Planner, rel: str, text: str) -> Outcome:
    """A file-level write's outcome, warned when it leaves a file over its whole-file or section caps."""
    doc = Document(text, rel)
    spec = planner.spec_for(doc)
    warnings = [w for sec in doc.sections if sec.heading is not None
                for w in update._cap_warning(sec, spec)]
    return Outcome(text, warnings=warnings + update._file_warnings(text, spec))


def writes(p: Proposal, before: str | None, outcome: Outcome | None) -> dict[str, bytes | None]:
    """The files `p` writes, planned against `before`: path -> new bytes, None for a file deleted."""
    if p.action == "delete":
        return {p.file: None}
    if p.action == "rename":
        assert p.to and before is not None
        return {p.to: before.encode(), p.file: None}
    assert outcome is not None
    out: dict[str, bytes | None] = {p.file: outcome.text.encode()}
    out.update({rel: after.encode() for rel, (_, after) in outcome.also.items()})
    return out


def diff(planner: Planner, p: Proposal, before: str | None, outcome: Outcome | None) -> str:
    """The diff a person reviews for `p`: every file it writes, each named as the file really written."""
    if p.action == "rename":
        return f"rename {p.file} → {p.to}\n"
    if outcome is not None and not outcome.also and planner.grammar(p.file) == "hermes":
        from memtui.core.grammar.formats import hermes  # reviewed by entry, as Hermes reads the file

        return hermes.entry_diff(planner.real(p.file), before, outcome.text)
    # A write through a symlink changes (and commits) the file it names: the diff says which.
    out = unified_diff(planner.real(p.file), before, outcome.text if outcome else None)
    for rel, (was, now) in (outcome.also.items() if outcome else ()):
        out += unified_diff(planner.real(rel), was, now)
    return out


def new_log_header(rel: str) -> str:
    """The first lines of a daily log an append creates."""
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return f"# {stem}\n\n"
