"""What changed in the memory since a moment: the audit log joined with git, plus what is still waiting.

The audit log (memory-log.jsonl) is the spine: it is append-only, so its order is the order things happened, and
it holds what git cannot (refused and rejected writes, who approved what, the entry an agent first proposed).
Commits made outside memtui (a person's own `git commit`) are added from git; proposals still pending and
uncommitted external changes come from the queue and the working tree.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memtui.core.basics import clock
from memtui.core.timeline.history import audit_by_commit, first_changed_line, short, trailers, unkeyed

if TYPE_CHECKING:
    from memtui.core.writing.memory import Memory
    from memtui.core.writing.proposals import Proposal

# Pending proposals `today` lists one by one; the others it counts per actor (`memtui queue list` pages them).
PENDING_LISTED = 20
RELATIVE = re.compile(r"^\s*(\d+)\s*([dhw])\s*$", re.IGNORECASE)

# What became of each change, as a person reads it.
APPLIED = "applied"          # the actor's own write, applied at once
APPROVED = "approved"        # proposed, then approved as it was by someone else
REVISED = "revised"          # proposed, revised by a person, then applied
REJECTED = "rejected"
REFUSED = "refused"          # failed validation; nothing was written
CONFLICT = "conflict"        # the file moved on; nothing was written
PENDING = "pending"          # still waiting for a person
UNCOMMITTED = "uncommitted"  # changed on disk without memtui, not yet approved or rejected


def parse_since(text: str | None, now: datetime | None = None) -> datetime:
    """Local midnight by default; `Nd`/`Nh`/`Nw` back from now; `today`, `yesterday`; or an ISO date/time."""
    now = now or clock.now()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if text is None or not text.strip() or text.strip().lower() == "today":
        return midnight
    t = text.strip().lower()
    if t == "yesterday":
        return midnight - timedelta(days=1)
    m = RELATIVE.match(t)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        return now - {"d": timedelta(days=n), "h": timedelta(hours=n), "w": timedelta(weeks=n)}[unit]
    try:
        return _local(datetime.fromisoformat(text.strip()))
    except ValueError:
        raise ValueError(f"cannot read --since {text!r}: use a date (2026-08-20), a time (2026-08-20T09:00), "
                         "or a span back from now (7d, 12h, 2w)") from None


def _local(dt: datetime) -> datetime:
    """A naive local datetime, comparable with the audit log's timestamps."""
    return dt.astimezone().replace(tzinfo=None) if dt.tzinfo else dt


def _parse_ts(ts: Any) -> datetime | None:
    try:
        return _local(datetime.fromisoformat(str(ts)))
    except ValueError:
        return None


@dataclass
class Change:
    """One thing that happened to one memory file (or is still waiting to)."""

    time: str
    actor: str
    action: str
    file: str
    status: str
    section: str | None = None
    before: str | None = None          # the entry it replaced (revise, remove)
    after: str | None = None           # the entry as written (add, revise)
    proposed: str | None = None        # what the agent first proposed, when a person revised it
    provenance: str | None = None
    source: str | None = None
    commit: str | None = None
    proposal: str | None = None
    decided_by: str | None = None
    reason: str | None = None
    to: str | None = None              # a rename's new path
    reverts: str | None = None         # the commit an undo reversed
    diff: str = ""
    line: int | None = None            # where the change lands in the file (1-based), to jump to it

    @property
    def committed(self) -> bool:
        return self.commit is not None

    @property
    def summary(self) -> str:
        what = self.after or self.before or self.to or (self.reverts and f"reverts {short(self.reverts)}") or ""
        where = f"§ {self.section} " if self.section else ""
        return f"{self.action} {where}{what}".strip()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FileChanges:
    file: str
    changes: list[Change] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "changes": [c.to_dict() for c in self.changes]}


@dataclass
class TodayReport:
    root: str
    since: str
    until: str
    files: list[FileChanges] = field(default_factory=list)
    # Open proposals in all (listed or not): waiting, more (not listed), by_actor, by_status
    # (memtui/core/writing/queue_page)
    queued: dict[str, Any] = field(default_factory=dict)

    @property
    def changes(self) -> list[Change]:
        """Every change, in the order it happened (across files)."""
        out = [c for f in self.files for c in f.changes]
        order = {id(c): i for i, c in enumerate(out)}
        return sorted(out, key=lambda c: (c.time, order[id(c)]))

    @property
    def counts(self) -> dict[str, int]:
        """How many of each outcome. A proposal counts once per outcome however often it was tried (a conflict is
        recorded at each attempt and listed again while it waits), and a commit once however many files it
        touched (it is listed under each of them)."""
        out: dict[str, int] = {}
        seen: set[tuple[str, str, str]] = set()
        for c in self.changes:
            key = ("proposal", c.proposal, c.status) if c.proposal else ("commit", c.commit, c.status) \
                if c.commit else None
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)  # type: ignore[arg-type]
            out[c.status] = out.get(c.status, 0) + 1
        listed = {s: sum(1 for c in self.changes if c.status == s and c.commit is None and c.proposal
                         and not c.proposal.startswith("x-")) for s in (self.queued.get("by_status") or {})}
        for status, n in (self.queued.get("by_status") or {}).items():  # the proposals only counted, not listed
            if n > listed[status]:
                out[status] = out.get(status, 0) + n - listed[status]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "since": self.since, "until": self.until, "counts": self.counts,
                "files": [f.to_dict() for f in self.files], "queued": self.queued}


def _status(rec: dict[str, Any]) -> str:
    status = rec.get("status") or APPLIED
    if status != "applied":
        return status
    if rec.get("revised"):
        return REVISED
    decider = rec.get("decided_by")
    if (rec.get("proposal") or "").startswith("x-") or (decider and decider != rec.get("actor")):
        return APPROVED
    return APPLIED


def _from_audit(rec: dict[str, Any]) -> Change:
    pid = rec.get("proposal")
    external = bool(pid and pid.startswith("x-"))
    proposed = rec.get("proposed") or {}
    snapshot = rec.get("snapshot") or {}
    return Change(
        time=str(rec.get("ts") or ""),
        # an accepted external change is recorded under the person who accepted it; who wrote it is unknown
        actor="external" if external else str(rec.get("actor") or "?"),
        action=str(rec.get("action") or "?"), file=str(rec.get("file") or ""), status=_status(rec),
        section=rec.get("section"), before=rec.get("replaces"), after=rec.get("entry"),
        proposed=proposed.get("entry") if proposed.get("entry") != rec.get("entry") else None,
        provenance=rec.get("provenance"), source=rec.get("source"), commit=rec.get("commit"), proposal=pid,
        decided_by=rec.get("decided_by"), reason=rec.get("reason"), to=rec.get("to"), reverts=rec.get("reverts"),
        diff=str(snapshot.get("diff") or ""),
    )


def _from_proposal(p: Proposal, status: str, time: str) -> Change:
    return Change(time=time, actor=p.actor, action=p.action, file=p.file, status=status, section=p.section,
                  before=p.replaces, after=p.entry, provenance=p.provenance, source=p.source, proposal=p.id,
                  reason=p.reason, to=p.to, diff=p.diff)


def today(memory: Memory, since: str | datetime | None = None, *, diffs: bool = True,
          pending: int | None = PENDING_LISTED) -> TodayReport:
    """Changes since local midnight (or `since`), grouped by file, each file's changes in the order they happened.

    `diffs=False` skips reading each commit's patch from git (faster, for a summary). Of the proposals still
    waiting, the oldest `pending` (0: every one) are listed and the rest counted per actor in `queued`: 100,000
    queued by one agent made a report of 47 s and 860 MB that no one could read."""
    now = clock.now()
    start = since if isinstance(since, datetime) else parse_since(since, now)
    start = _local(start)
    changes: list[Change] = []
    records = list(memory.store.audit_records())
    seen_commits = set(audit_by_commit(records))
    # Commits merged from a remote: another machine's writes, not today's here.
    from memtui.core.writing.sync import arrived

    seen_commits |= arrived(memory)
    for rec in records:
        when = _parse_ts(rec.get("ts"))
        if when is None or when < start or when > now:
            continue
        changes.append(_from_audit(rec))
    # Commits made without memtui (a hand-made `git commit`) are changes too; the audit log does not know them.
    for sha, when, author, message, files in _unaudited_commits(memory, start, seen_commits):
        if when < start or when > now:
            continue
        t = trailers(message)
        for rel in files:
            if not is_memory_file(rel):
                continue
            try:
                rel = memory.store.check_path(rel)
            except Exception:
                continue
            changes.append(Change(time=when.isoformat(timespec="seconds"), actor=t.get("actor") or author,
                                  action="commit", file=rel, status=APPLIED, after=message.split("\n", 1)[0],
                                  commit=sha, proposal=t.get("proposal")))
    page = memory.queue_page(pending)
    for p in page.proposals:
        changes.append(_from_proposal(p, PENDING if p.status == "pending" else p.status, p.created))
    queued = {"waiting": page.waiting, "more": page.more, "by_actor": page.by_actor, "by_status": page.by_status}
    stamp = now.isoformat(timespec="seconds")
    for p in memory.external_proposals():
        changes.append(_from_proposal(p, UNCOMMITTED, stamp))
    if diffs:
        wanted = [ch for ch in changes if ch.commit and not ch.diff]
        # git's patches on a folder, the stream's recorded diffs on Redis
        patches = memory.store.change_patches(list(dict.fromkeys(ch.commit for ch in wanted if ch.commit)))
        for ch in wanted:
            assert ch.commit is not None
            by_file = patches.get(ch.commit, {})
            if ch.action == "rename":
                ch.diff = "".join(by_file.values())
            else:
                # a path git quotes (non-ASCII) is not a key of the split patch: ask for that file alone
                ch.diff = by_file.get(ch.file) or memory.store.change_patch(ch.commit, ch.file)
    for ch in changes:
        ch.line = first_changed_line(ch.diff) if ch.diff else None
    groups: dict[str, FileChanges] = {}
    order = {id(c): i for i, c in enumerate(changes)}
    for ch in sorted(changes, key=lambda c: (c.time, order[id(c)])):
        groups.setdefault(ch.file, FileChanges(ch.file)).changes.append(ch)
    return TodayReport(memory.location, start.isoformat(timespec="seconds"), stamp, list(groups.values()), queued)


def is_memory_file(rel: str) -> bool:
    """Is a committed path a memory file, a change a person reviews? Memory is markdown (what the app's tree
    shows, `changes.shown`); `memtui init`'s `.gitignore` and `.gitkeep`, its config and any other file in a commit
    are bookkeeping, and listing them as changes buried the memory's own under the first screen of Today."""
    return rel.lower().endswith(".md")


def _unaudited_commits(
    memory: Memory, start: datetime, seen: set[str],
) -> list[tuple[str, datetime, str, str, list[str]]]:
    """(sha, time, author, message, files) of recorded changes since `start` that no audit line accounts for."""
    since = start.astimezone().timestamp()
    return [(c.sha, datetime.fromtimestamp(c.time), unkeyed(c.author), unkeyed(c.message), list(c.files))
            for c in memory.store.changes_since(since, seen)]
