"""An entry's lineage: the versions it replaced, read from the struck lines memtui keeps directly above it.

A revise strikes the old line (`~~old~~ superseded DATE`) and writes the new one directly below it, so the run of
superseded lines just above a current entry is what it replaced, oldest first. Shown to the person deciding a
revise, so they see the whole history of the entry they are about to change.

A layout that keeps no struck lines (an OpenClaw workspace, `Layout.strikes`) changes a line in place, so there the
versions come from history (`from_history`): the file's recorded versions, newest first, followed back line by line
through each change that rewrote it. They are shown in the same struck form, and never written into the file.
"""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Any

from memtui.core.grammar.document import Document
from memtui.core.grammar.update import Refused, current_entry

MAX_VERSIONS = 20  # a lineage longer than this is cut to its newest versions (the viewer shows all of it)


def earlier(text: str, section: str, replaces: str, path: str = "MEMORY.md") -> list[str]:
    """The struck lines `replaces`' entry (a current entry of `section`) replaced, oldest first; [] when it
    replaced nothing or cannot be found (the proposal then shows as a conflict)."""
    try:
        sec, i, _ = current_entry(Document(text, path), section, replaces)
    except Refused:
        return []
    by_line = dict(sec.entries)
    out: list[str] = []
    k = i - 1
    while k in by_line and by_line[k].struck and by_line[k].struck_kind == "superseded" and len(out) < MAX_VERSIONS:
        out.append(by_line[k].raw.strip())
        k -= 1
    return out[::-1]


def traced(versions: list[tuple[str, str]], lines: list[int]) -> dict[int, list[tuple[str, str]]]:
    """line → (date, text) of each earlier text of that line of `versions[0]`, newest first. `versions` is a file's
    (date it was written, text) newest first; a line is followed back through each change that rewrote it in place
    (a changed run of lines of the same length, or a run it is the first line of), and stops where it was added.
    Each pair of versions is diffed once for all `lines`."""
    out: dict[int, list[tuple[str, str]]] = {n: [] for n in lines}
    at = {n: n for n in lines}  # where each followed line is in the version being read
    for (day, newer), (_, older) in zip(versions, versions[1:]):
        if not at:
            break
        old_lines = older.splitlines()
        ops = difflib.SequenceMatcher(None, old_lines, newer.splitlines(), autojunk=False).get_opcodes()
        for n, k in list(at.items()):
            for op, o1, o2, n1, n2 in ops:
                if not n1 <= k < n2:
                    continue
                if op == "equal":
                    at[n] = o1 + (k - n1)
                elif op == "replace" and (o2 - o1 == n2 - n1 or k == n1):
                    at[n] = o1 + (k - n1)
                    out[n].append((day, old_lines[at[n]]))
                else:
                    del at[n]  # the line was added by this change: nothing older
                break
            else:
                at.pop(n, None)
            if n in at and len(out[n]) >= MAX_VERSIONS:
                del at[n]
    return out


def _versions(store: Any, rel: str, limit: int) -> list[tuple[str, str]]:
    """(day, text) of `rel` as recorded, newest first, each distinct text once with the day it was written."""
    versions: list[tuple[str, str]] = []
    for c in store.history(rel)[:limit]:
        data = store.file_at(rel, c.sha)
        if data is None:
            break
        text = data.decode("utf-8", errors="replace")
        day = datetime.fromtimestamp(c.time).strftime("%Y-%m-%d")
        if versions and versions[-1][1] == text:
            versions[-1] = (day, text)  # the same text recorded again: the older day is when it was written
        else:
            versions.append((day, text))
    return versions


HISTORY_LIMIT = 50  # recorded versions of a file read back: an entry last changed before them shows no history
_HISTORIES: dict[tuple[str, str, bytes | None], tuple[Document | None, dict[int, list[str]]]] = {}


def _histories(store: Any, rel: str) -> tuple[Document | None, dict[int, list[str]]]:
    """`rel` as committed, and each of its current entries' (by line) earlier versions, struck, oldest first.
    Kept while the file's committed bytes stay the same: the app asks on every sync, and reading 50 versions of a
    400-entry MEMORY.md and diffing them took 0.3 s under the store's lock."""
    if not store.keeps_history:
        return None, {}
    key = (str(store.location), rel, store.committed(rel))
    hit = _HISTORIES.get(key)
    if hit is not None:
        return hit
    versions = _versions(store, rel, HISTORY_LIMIT)
    doc = Document(versions[0][1], rel) if versions else None
    found: dict[int, list[str]] = {}
    if doc is not None and len(versions) > 1:
        traced_lines = traced(versions, [i for i, e in doc.entries() if e.current])
        found = {i: _struck(f) for i, f in traced_lines.items() if f}
    if len(_HISTORIES) >= 8:
        _HISTORIES.pop(next(iter(_HISTORIES)))
    _HISTORIES[key] = (doc, found)
    return doc, found


def _struck(found: list[tuple[str, str]]) -> list[str]:
    """Earlier texts (newest first) as memtui shows superseded lines, oldest first; the day beside each is the day
    of the change that replaced it."""
    return [f"- ~~{old.strip().lstrip('-*+').strip()}~~ superseded {day}" for day, old in found][::-1]


def superseded_lines(store: Any, rel: str) -> dict[str, list[str]]:
    """Each current entry line of `rel` as committed → the versions it had before, oldest first, struck: what the
    viewer shows for an entry in a layout that keeps no struck lines. Keyed by the line's text (the viewer's file
    may have moved on from the committed one); entries with no earlier version are left out."""
    doc, found = _histories(store, rel)
    return {} if doc is None else {doc.lines[i].rstrip("\r\n"): v for i, v in found.items()}


def from_history(store: Any, rel: str, section: str, replaces: str) -> list[str]:
    """The versions the current entry `replaces` names (of `section` in `rel`, as committed) had before, oldest
    first, each struck as memtui shows a superseded line (``- ~~old~~ superseded DATE``), DATE being the day the
    change that replaced it was recorded; [] where nothing is recorded or the entry is not found."""
    doc, found = _histories(store, rel)
    if doc is None:
        return []
    try:
        _, i, _ = current_entry(doc, section, replaces)
    except Refused:
        return []
    return found.get(i, [])


def entry_changes(diff: str) -> list[str]:
    """An edit made outside memtui (OpenClaw's own write), entry by entry, from its unified diff: each run of
    removed bullets paired in order with the run of added ones that replaces it (``changed: old → new``), the rest
    ``added:`` or ``removed:``. Lines that are not bullets (headings, prose) are left to the diff."""
    out: list[str] = []
    gone: list[str] = []
    came: list[str] = []

    def flush() -> None:
        for old, new in zip(gone, came):
            out.append(f"changed: {old} → {new}")
        out.extend(f"removed: {old}" for old in gone[len(came):])
        out.extend(f"added: {new}" for new in came[len(gone):])
        gone.clear()
        came.clear()

    for line in diff.splitlines()[2:]:
        sign, text = line[:1], line[1:].strip()
        bullet = text[:2] in ("- ", "* ", "+ ")
        if sign == "-" and bullet:
            if came:
                flush()
            gone.append(text)
        elif sign == "+" and bullet:
            came.append(text)
        elif sign not in ("-", "+"):
            flush()
    flush()
    return out[:MAX_VERSIONS * 5]


def lineages(memory, proposals) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """proposal id → the versions its revise target replaced, for the pending revises among `proposals` (each
    file read once): from the struck lines above it, or from history where the layout keeps none."""
    texts: dict[str, str | None] = {}
    out: dict[str, list[str]] = {}
    strikes = memory.layout().strikes
    for p in proposals:
        if p.external and not strikes:
            found = entry_changes(p.diff)
            if found:
                out[p.id] = found
            continue
        if p.action != "revise" or not p.replaces or not p.section or p.external:
            continue
        if not strikes:
            found = from_history(memory.store, p.file, p.section, p.replaces)
            if found:
                out[p.id] = found
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
