"""Cline's memory bank: a ``memory-bank/`` folder of markdown documents that Cline reads whole at the start of every
task. Six core files build on each other (projectbrief.md first, progress.md last); a bank may add files of its own
(features, integrations, testing). Each is a document whose sections are its headings; bullets carry no provenance
tags and prose is as valid as bullets, so neither is a finding. Cline writes the files itself, straight to disk:
memtui reviews those writes as external changes.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = "memory-bank"
CORE = ("projectbrief.md", "productContext.md", "activeContext.md", "systemPatterns.md", "techContext.md",
        "progress.md")
# A folder holding this many of the core files is a memory bank wherever it is: Cline creates them together.
ENOUGH = 3


def looks_like(root: Path) -> bool:
    """A folder named memory-bank holding a core file, or any folder holding `ENOUGH` of them (regular files only:
    a FIFO or a link named like one is not read, only looked at)."""
    present = sum(1 for name in CORE if _regular(root / name))
    return present >= ENOUGH or (root.name == FOLDER and present > 0)


def _regular(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


ENTRY_LINES_SHOWN = 20  # an external change's entry lines listed before "and N more" (the diff has them all)


def entry_changes(path: str, before: str | None, after: str | None) -> list[str]:
    """What a write straight to disk changed, entry by entry: per section (by heading), each bullet or prose line
    added or removed, in reading order; a person decides on these, the diff beside them. Lines are quoted with
    repr, so what an outside writer put there is shown as text, never as anything else."""
    from collections import Counter

    from memtui.core.grammar.document import Document

    def lines_of(text: str | None) -> list[tuple[str, str]]:
        if not text:
            return []
        doc = Document(text, path)
        out = []
        for sec in doc.sections:
            for i in range(sec.start, sec.end):
                line = doc.lines[i].strip()
                if line and i not in doc.hidden and not line.startswith("#"):
                    out.append((sec.title or "(top)", line))
        return out

    was, now = lines_of(before), lines_of(after)
    gone, new = Counter(was) - Counter(now), Counter(now) - Counter(was)
    out = []
    for sign, pairs, left in (("removed", was, gone), ("added", now, new)):
        for section, line in pairs:
            if left[(section, line)] > 0:
                left[(section, line)] -= 1
                out.append(f"{sign} in § {section}: {line!r}")
    if len(out) > ENTRY_LINES_SHOWN:
        out = out[:ENTRY_LINES_SHOWN] + [f"and {len(out) - ENTRY_LINES_SHOWN} more (the diff shows them all)"]
    return out
