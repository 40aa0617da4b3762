"""An entry's lineage: the versions it replaced, read from the struck lines memtui keeps directly above it.

A revise strikes the old line (`~~old~~ superseded DATE`) and writes the new one directly below it, so the run of
superseded lines just above a current entry is what it replaced, oldest first. Shown to the person deciding a
revise, so they see the whole history of the entry they are about to change.
"""

from __future__ import annotations

from memtui.core.document import Document
from memtui.core.update import Refused, find_current

MAX_VERSIONS = 20  # a lineage longer than this is cut to its newest versions (the viewer shows all of it)


def earlier(text: str, section: str, replaces: str, path: str = "MEMORY.md") -> list[str]:
    """The struck lines `replaces`' entry (a current entry of `section`) replaced, oldest first; [] when it
    replaced nothing or cannot be found (the proposal then shows as a conflict)."""
    doc = Document(text, path)
    sec = doc.section(section)
    if sec is None:
        return []
    try:
        i, _ = find_current(sec, replaces)
    except Refused:
        return []
    by_line = dict(sec.entries)
    out: list[str] = []
    k = i - 1
    while k in by_line and by_line[k].struck and by_line[k].struck_kind == "superseded" and len(out) < MAX_VERSIONS:
        out.append(by_line[k].raw.strip())
        k -= 1
    return out[::-1]


def lineages(memory, proposals) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """proposal id → the versions its revise target replaced, for the pending revises among `proposals` (each
    file read once)."""
    texts: dict[str, str | None] = {}
    out: dict[str, list[str]] = {}
    for p in proposals:
        if p.action != "revise" or not p.replaces or not p.section or p.external:
            continue
        if p.file not in texts:
            data = memory.store.read(p.file)
            texts[p.file] = None if data is None else data.decode("utf-8", errors="replace")
        text = texts[p.file]
        if text is not None:
            found = earlier(text, p.section, p.replaces, p.file)
            if found:
                out[p.id] = found
    return out
