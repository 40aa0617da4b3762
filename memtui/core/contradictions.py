"""A proposed add against what memory already says: the current entries it gives another value of, and the
session-start context as it would be once a proposal is applied.

The pairing is lint's "two current versions of one fact" (memtui/core/lint.py): the same words but one swapped
for another, within one section. A review shows the current entry beside the add and can turn the add into a
revise of it (`Memory.approve(..., replaces=...)`), so the old line is struck as superseded instead of memory
holding two current answers. `context_after` plans a proposal against the reviewed files in memory, writing
nothing, and builds the context from that plan, so a person sees what the next session would load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memtui.core.dedupe import tokens
from memtui.core.document import Document
from memtui.core.entries import Entry, split_inline
from memtui.core.lint import _two_versions_of

if TYPE_CHECKING:
    from memtui.core.context import ContextPack
    from memtui.core.memory import Memory
    from memtui.core.proposals import Proposal
    from memtui.core.reading import MemoryReader


def contradicted(doc: Document, section: str, entry: str) -> list[Entry]:
    """The current entries of `section` in `doc` that `entry` would make a second current version of, in file
    order. The check lint runs on two entries already written, run on one proposed and each one written."""
    sec = doc.section(section)
    if sec is None:
        return []
    _, body, _, _ = split_inline(entry.strip().lstrip("-*+ ").strip())
    mine = frozenset(tokens(body))
    if len(mine) < 3:  # lint's bound: fewer words cannot be one word swapped with two kept
        return []
    return [e for _, e in sec.current if e.text and _two_versions_of(mine, frozenset(tokens(e.text)))]


def of_proposal(memory: MemoryReader, p: Proposal, before: str | None = None) -> list[Entry]:
    """What pending add `p` contradicts in its file as reviewed now (`before`: that text, when the caller read
    it); nothing for any other action, an external change, or a file that cannot be read."""
    if p.action != "add" or p.external or p.status != "pending" or not p.entry:
        return []
    if before is None:
        try:
            before = memory.base_text(p.file)
        except Exception:  # unreadable: the review and the approval say why
            return []
    if before is None:
        return []
    return contradicted(Document(before, p.file), p.section or "", p.entry)


class _Planned:
    """A memory reader whose reviewed bytes of some files are the ones a plan would write: the context builder
    reads through it exactly as it reads a memory, and nothing is written."""

    def __init__(self, memory: MemoryReader, writes: dict[str, bytes | None]) -> None:
        self._memory = memory
        self._writes = writes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._memory, name)

    def read_text(self, rel: str) -> str | None:
        if rel in self._writes:
            data = self._writes[rel]
            return None if data is None else data.decode("utf-8")
        return self._memory.read_text(rel)

    def base_bytes(self, rels: list[str]) -> dict[str, bytes | None]:
        out = self._memory.base_bytes([r for r in rels if r not in self._writes])
        out.update({r: self._writes[r] for r in rels if r in self._writes})
        return out


def context_after(memory: Memory, p: Proposal, budget: int | None = None) -> ContextPack:
    """The session-start context as it would be with pending `p` applied: `p` planned against the reviewed text
    of its file now (as an approval would plan it), the files it writes put in place of theirs in memory only.
    Raises `Refused` when `p` cannot be applied as it is (the approval would be refused or conflict)."""
    from memtui.core import planning
    from memtui.core.context import DEFAULT_BUDGET, build_context

    before = memory.base_text(p.file)
    outcome = memory._planner().plan(p.replace(), before)
    writes = planning.writes(p, before, outcome)
    return build_context(_Planned(memory, writes), DEFAULT_BUDGET if budget is None else budget)
