"""A proposed add against what memory already says: the current entries it gives another value of.

The pairing is lint's "two current versions of one fact" (memtui/core/hygiene/lint.py): the same words but one swapped
for another, within one section. A review shows the current entry beside the add and can turn the add into a
revise of it (`Memory.approve(..., replaces=...)`), so the old line is struck as superseded instead of memory
holding two current answers. `context_after` plans a proposal against the reviewed files in memory, writing
nothing, and builds the context from that plan, so a person sees what the next session would load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memtui.core.grammar.dedupe import tokens, words_of
from memtui.core.grammar.document import Document
from memtui.core.grammar.entries import Entry, split_inline
from memtui.core.hygiene.lint import _two_versions_of

if TYPE_CHECKING:
    from memtui.core.storage.reading import MemoryReader
    from memtui.core.writing.proposals import Proposal


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
    # Each current entry's words from the cache a write's own checks fill (dedupe.words_of): a sync pairing 200
    # pending adds with one section tokenizes its entries once, not 200 times.
    return [e for _, e in sec.current if e.text and _two_versions_of(mine, words_of(e.text).set)]


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
