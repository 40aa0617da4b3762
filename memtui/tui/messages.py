"""Typed messages between the change event, the workers, the widgets and plugin panes.

Data flows one way: threads (the memory's change subscription, IO workers) post these to the app; the app updates its
widgets and forwards `MemoryChanged` and `ProposalsChanged` to every open plugin pane. Messages forwarded to
panes do not bubble, so a pane that ignores them never sends them back up to the app.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from textual.message import Message

from memtui.core.writing.changes import Change
from memtui.core.writing.proposals import Proposal, WriteResult


class FilesChanged(Message):
    """The memory changed: one `Change` of memtui.core.writing.changes (one per burst the watcher saw, one per own
    write), as a Textual message. Its fields are the change's: `paths` (memory files, relative, '/'-separated), `queue`
    (a proposal was written or decided by any process), `audit` (the audit log grew), `own` (this process's write),
    `everything`, and `connected`/`message` (a Redis memory lost, or back: then anything may have changed)."""

    def __init__(self, paths: frozenset[str] = frozenset(), *, change: Change | None = None, **fields: Any) -> None:
        super().__init__()
        self.change = change if change is not None else Change(frozenset(paths), **fields)

    def __getattr__(self, name: str) -> Any:
        if name in _CHANGE_FIELDS:
            return getattr(self.__dict__["change"], name)
        raise AttributeError(name)


_CHANGE_FIELDS = frozenset(Change._fields)


@dataclass
class Activity:
    """One line of the activity feed: when, who, what kind (write, approve, reject, external, search, …)."""

    time: str
    actor: str
    kind: str
    text: str
    file: str | None = None


@dataclass
class StateSynced(Message):
    """A sync worker read the queue, the new audit records and the external changes, under the store's lock.

    `seq` orders syncs: the app drops a result older than one it already showed. `external` is None from a sync
    that did not read the whole folder (the app's first, for its first screen): the last ones shown still hold."""

    seq: int
    _: KW_ONLY
    proposals: list[Proposal]
    external: list[Proposal] | None
    activity: list[Activity]
    changed: frozenset[str]
    file_count: int | None
    problems: list[str]
    lineage: dict[str, list[str]] = field(default_factory=dict)  # revise id → versions its target replaced
    # add id → the current entries it gives another value of (memtui/core/hygiene/contradictions.py); None: not read
    # (the first screen's sync), the last ones shown still hold.
    contradicts: dict[str, list[str]] | None = None
    # Open proposals past `proposals` (`Memory.queue_page`); None: more than a page, counted next (QueueCounted).
    more: int | None = 0


@dataclass
class QueueCounted(Message):
    """The sync numbered `seq` counted the open proposals past the page it showed."""

    seq: int
    more: int


@dataclass
class Decided(Message):
    """A decision (approve, revise, reject) ran in a worker; `result` is what the core said."""

    verb: str
    pid: str
    result: WriteResult


@dataclass
class CommittedLoaded(Message):
    """A file against its last commit, read and diffed (bounded) in a worker, for the diff tab."""

    rel: str
    diff: str
    committed: bool  # False: the file has no history yet


@dataclass
class OpenFile(Message):
    """Ask the app to open a memory file in a viewer tab (panes post this, e.g. a search result).

    `line` is 1-based, as grep and the search results count; None opens the file at the top."""

    rel: str
    line: int | None = None


@dataclass
class LogActivity(Message):
    """Ask the app to add a line to the activity feed (panes post this, e.g. after a search)."""

    kind: str
    text: str
    actor: str | None = None
    file: str | None = None


def approving(p: Any) -> str:
    """The feed line a keyboard approval writes before it runs, naming what it approves: id, file, entry.
    `p` is a Proposal or a chat card (both carry id, action, file, section, entry and replaces)."""
    where = p.file + (f" § {p.section}" if p.section else "")
    what = p.entry or p.replaces or getattr(p, "to", None) or ""
    kind = "external change to" if getattr(p, "external", False) else p.action
    return " ".join((f"approving {p.id}: {kind} {where}" + (f": {what}" if what else "")).split())


@dataclass
class MemoryChanged(Message, bubble=False):
    """Forwarded to open panes: these memory files changed on disk (by anyone)."""

    paths: frozenset[str]


@dataclass
class ProposalsChanged(Message, bubble=False):
    """Forwarded to open panes: the pending proposals and external changes as they are now."""

    proposals: list[Proposal]


@dataclass
class ViewerState:
    """What a viewer worker computed from a file: lines, headings with counts, and the live diff marks."""

    rel: str
    lines: list[str]
    width: int
    headings: dict[int, tuple[str, int, int, int | None]]  # line -> (title, level, current count, cap)
    entries: set[int] | None  # lines that are entries; None = every bullet line (big files skip the parse)
    comment: set[int] = field(default_factory=set)  # lines of the memtui:format comment
    added: set[int] = field(default_factory=set)
    ghosts: dict[int, list[str]] = field(default_factory=dict)  # removed lines shown before line index
    first_change: int | None = None
    missing: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class SessionEnded(Message):
    """An agent session in the app ended (the Chat pane closed): the app offers a consolidation if one is due."""


@dataclass
class ConsolidationDue(Message):
    """Sections of MEMORY.md over their cap (read in a worker, after a session); empty when nothing is due."""

    sections: list[str]


@dataclass
class Consolidated(Message):
    """`Memory.consolidate` ran in a worker; one result per section (queued, refused, …)."""

    results: list[WriteResult]
