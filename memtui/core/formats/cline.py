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
