"""Each line's provenance from history, for formats that carry no tags: who wrote it, through what, who approved it.

memtui's own format writes provenance into the line (`[stated]`, `[inferred]`…). Claude Code's, OpenClaw's, Hermes'
and Cline's files have no such tags, and memtui must not write any into files another tool loads; there the
provenance comes from history instead: git blame of the file joined with the audit log memtui writes with every
change it commits.

Trust: only the audit log is believed. A commit's `Memtui-*` trailers are text anyone who can run `git commit` in
the person's repository can write ("Memtui-Approved-By: wes"), so a commit with no applied audit line of its own is
an outside writer's, not reviewed, whatever its message says. An approved external change is recorded with the
approving person as its actor (memtui/core/writing/memory.py `_approve_external`); it is told apart by its proposal id
(`x-…`) and shown as the outside writer's line, approved by that person, never as the person's own words. When one
commit has audit lines of several writers for the file, the least trusted one is shown.

The mapping onto the tags' colours and symbols (the same theme variables, so it needs no new colours):
person ↔ `stated` ◆; an agent's line a person approved ↔ `inferred` ▲; an outside writer's line a person approved,
or a line brought back by an undo ↔ `observed` ●; an agent's line applied without review (the daily-log fast lane)
↔ `suggested` ○; an outside writer's unreviewed line (not committed, or committed outside memtui) ↔ untagged ⚑.

Computed once per version: the result is cached by the file's HEAD commit and the bytes on disk, so the viewer
asks again on every reload for free.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable

from memtui.core.basics.actors import clean_actor
from memtui.core.storage.store import NoHistory, content_hash
from memtui.core.writing.proposals import EXTERNAL_PREFIX

if TYPE_CHECKING:
    from memtui.core.storage.store import Commit
    from memtui.core.writing.memory import Memory

PERSON, AGENT, OUTSIDE, RESTORED, BEFORE = "person", "agent", "outside", "restored", "before"
# Least trusted first: of several writers behind one commit of a file, the first in this order is shown.
DISTRUST = (OUTSIDE, AGENT, RESTORED, PERSON)
FILE_TOOLS = ("create", "edit", "delete", "rename")  # the Anthropic memory tool's actions (memtui/agent/memory_tool.py)
HOOK_ACTOR = "claude-code"  # memtui/integrations/claude_code.py ACTOR (core does not import integrations)
SYMBOLS = {"stated": "◆", "observed": "●", "inferred": "▲", "suggested": "○", None: "⚑"}  # as the viewer's tags
LEGEND = (("stated", "person"), ("inferred", "agent, approved"), ("observed", "outside writer or undo, approved"),
          ("suggested", "agent, not reviewed"), (None, "outside writer, not reviewed"),
          ("before", "there before memtui began keeping this memory"))
# A line already in history when memtui first kept this folder: neither reviewed nor a warning, the starting point.
SYMBOLS["before"] = "·"


@dataclass(frozen=True)
class LineProvenance:
    """Who wrote one line (`writer`: person, agent, outside or restored; `who`: the name) through which surface
    (`via`), who approved it and when, from which commit and proposal."""

    writer: str
    who: str
    via: str
    approved_by: str | None
    time: str | None
    commit: str | None
    proposal: str | None

    @property
    def reviewed(self) -> bool:
        return self.writer == PERSON or self.approved_by is not None

    @property
    def tag(self) -> str | None:
        """The tag whose colour and symbol this line is drawn with (None: the untagged warning; "before": the
        starting point, drawn plain with `·`)."""
        if self.writer == BEFORE:
            return "before"
        if self.writer == PERSON:
            return "stated"
        if not self.reviewed:
            return "suggested" if self.writer == AGENT else None
        return "inferred" if self.writer == AGENT else "observed"

    def label(self) -> str:
        """One line for a person: `agent mcp:claude via MCP, approved by wes 2026-12-06`."""
        if self.commit is None:
            return "outside writer, not reviewed: changed on disk, not committed"
        day = f" {self.time[:10]}" if self.time else ""
        if self.writer == BEFORE:
            return f"there before memtui began keeping this memory: commit {self.commit[:8]} by {self.who}{day}"
        if self.writer == PERSON:
            return f"{self.who} (person) via {self.via}{day}"
        if self.writer == RESTORED:
            return f"an earlier version brought back by {self.who} ({self.via}){day}"
        what = f"agent {self.who}" if self.writer == AGENT else "outside writer"
        if self.writer == OUTSIDE and self.proposal is None:
            return (f"written outside memtui, not reviewed here: commit {self.commit[:8]} by {self.who} has no "
                    f"review record{day}")
        if self.approved_by is None:
            return f"{what} via {self.via}, not reviewed (applied at once){day}"
        return f"{what} via {self.via}, approved by {self.approved_by}{day}"

    def brief(self) -> str:
        """The words beside a line in the viewer: `agent mcp:claude via MCP, approved by wes` (no date, no commit)."""
        if self.writer == BEFORE:  # memtui's own first record of a folder names no writer: it only took a copy
            return "there before memtui" + (f" (committed by {self.who})" if self.who != "memtui" else "")
        if self.writer == PERSON:
            return f"{self.who} (person)"
        if self.writer == RESTORED:
            return f"brought back by {self.who} ({self.via})"
        what = f"agent {self.who} via {self.via}" if self.writer == AGENT else "outside writer"
        if self.approved_by:
            return f"{what}, approved by {self.approved_by}"
        if self.writer == OUTSIDE and self.commit is None:
            return f"{what}, not reviewed (not committed)"
        if self.writer == OUTSIDE:
            return f"written outside memtui, not reviewed here (committed by {self.who})"
        return f"{what}, not reviewed"

    def short(self) -> str:
        """A blame column: `wes`, `mcp:claude ✓wes`, `outside ✓wes`, `outside, unreviewed`, `before memtui`."""
        if self.writer == BEFORE:
            return "before memtui"
        if self.writer == PERSON:
            return self.who
        if self.writer == RESTORED:
            return f"{self.via} by {self.who}"
        who = self.who if self.writer == AGENT else "outside"
        return f"{who} ✓{self.approved_by}" if self.approved_by else f"{who}, unreviewed"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reviewed": self.reviewed, "tag": self.tag, "label": self.label()}


NOT_COMMITTED = LineProvenance(OUTSIDE, "outside writer", "an edit on disk", None, None, None, None)

_cache: dict[tuple[str, str], tuple[tuple[str | None, str], list[LineProvenance]]] = {}
_lock = threading.Lock()
CACHE_FILES = 64


def of_file(memory: Memory, rel: str, *, cached_only: bool = False) -> list[LineProvenance] | None:
    """Each line's provenance, for the file as it is on disk now (one per line, in order); with `cached_only`,
    None unless it is known for this version already (a look, no blame). Raises `NoHistory` where the store keeps
    none, FileNotFoundError for a missing file."""
    store = memory.store
    rel = store.check_path(rel)
    if not cached_only:
        store.ensure_history()  # a folder memtui did not make: its history beside it starts at the first look
    if not store.keeps_history:
        raise NoHistory(f"{memory.location} has no history; run `memtui init --git` to start one")
    data = store.served(rel)  # a hard link (maybe a file outside) is refused, never quoted
    if data is None:
        raise FileNotFoundError(f"{rel} does not exist")
    head = store.head()
    key, version = (str(memory.location), rel), (head.sha if head else None, content_hash(data))
    with _lock:
        hit = _cache.get(key)
    if hit is not None and hit[0] == version:
        return hit[1]
    if cached_only:
        return None
    lines = _compute(memory, rel, data)
    with _lock:
        if len(_cache) >= CACHE_FILES:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (version, lines)
    return lines


def _compute(memory: Memory, rel: str, data: bytes) -> list[LineProvenance]:
    count = len(data.decode("utf-8", errors="replace").splitlines())
    chunks = memory.store.blame_chunks(rel)
    if chunks is None:
        return [NOT_COMMITTED] * count
    records = _applied_by_commit(memory.store.audit_records(), rel)
    is_agent = memory.config.policy.is_agent
    init = _init_record(memory.store)
    seen: dict[str | None, LineProvenance] = {None: NOT_COMMITTED}
    out: list[LineProvenance] = []
    for commit, lines in chunks:
        sha = commit.sha if commit is not None else None
        prov = seen.get(sha)
        if prov is None:
            assert commit is not None
            prov = seen[sha] = _of_commit(commit, records.get(commit.sha, []), is_agent, memory.store.before_memtui,
                                          init)
        out.extend([prov] * len(lines))
    return out[:count] + [NOT_COMMITTED] * (count - len(out))


def _applied_by_commit(records: Iterable[dict[str, Any]], rel: str) -> dict[str, list[dict[str, Any]]]:
    """The applied audit lines that wrote `rel` (or renamed a file to it), by commit."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        sha = rec.get("commit")
        if sha and rec.get("status") == "applied" and (rec.get("file") == rel or rec.get("to") == rel):
            out.setdefault(str(sha), []).append(rec)
    return out


def _init_record(store: Any) -> tuple[str, str] | None:
    """(first commit, person) of a memory `memtui init` made, from its sealed record (memtui/core/storage/init.py); None
    for any other memory, or a record this person's memtui did not seal."""
    places = store.places
    if places is None or not places.inside:
        return None
    import json

    from memtui.core.storage.init import init_record
    from memtui.core.basics import seal

    try:
        payload = seal.unseal(init_record(store.root).read_bytes())
        raw = json.loads(payload) if payload is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("root") != str(store.root):
        return None
    sha, by = raw.get("commit"), raw.get("by")
    return (sha, clean_actor(by)) if isinstance(sha, str) and isinstance(by, str) else None


def _of_commit(commit: Commit, records: list[dict[str, Any]], is_agent: Any,
               before: Callable[[str], bool], init: tuple[str, str] | None = None) -> LineProvenance:
    when = datetime.fromtimestamp(commit.time).isoformat(timespec="seconds")
    if not records and init is not None and commit.sha == init[0]:
        # `memtui init`'s template: written by the person who ran it (its first commit has no audit line).
        return LineProvenance(PERSON, init[1], "memtui init (the template)", None, when, commit.sha, None)
    if not records:
        # Not recorded by memtui: its trailers are not believed (anyone can write them), its author is named. A
        # commit already in history when memtui first kept this folder is the starting point, not a warning: what the
        # person's agent wrote before memtui came (memtui's first commit of a folder, or the person's own history
        # up to then). One made outside memtui since is an outside writer's, not reviewed here.
        kind, via = (BEFORE, "history before memtui") if before(commit.sha) else (OUTSIDE, "git, outside memtui")
        return LineProvenance(kind, clean_actor(commit.author), via, None, when, commit.sha, None)
    found = [_of_record(rec, is_agent, when, commit.sha) for rec in records]
    return min(found, key=lambda p: DISTRUST.index(p.writer))


def _of_record(rec: dict[str, Any], is_agent: Any, when: str, sha: str) -> LineProvenance:
    actor = clean_actor(rec.get("actor"))
    decided = rec.get("decided_by")
    # Only a person's decision is an approval: an agent "deciding" its own fast-lane write approved nothing.
    approver = clean_actor(decided) if decided and not is_agent(clean_actor(decided)) else None
    proposal = str(rec["proposal"]) if rec.get("proposal") else None
    action = str(rec.get("action") or "")
    if actor == "external" or (proposal or "").startswith(EXTERNAL_PREFIX):
        return LineProvenance(OUTSIDE, "outside writer", "an edit on disk", approver, when, sha, proposal)
    if action in ("revert", "restore"):
        return LineProvenance(RESTORED, actor, "undo" if action == "revert" else "restore", approver or actor, when,
                              sha, proposal)
    if is_agent(actor):
        return LineProvenance(AGENT, actor, _surface(actor, action), approver if approver != actor else None,
                              when, sha, proposal)
    return LineProvenance(PERSON, actor, "memtui (CLI or app)", approver, when, sha, proposal)


def _surface(actor: str, action: str) -> str:
    """Which way an agent's write came in, as far as its recorded actor and action tell."""
    if actor.startswith("mcp:"):
        return "MCP"
    if actor == HOOK_ACTOR:
        return "the Claude Code hook"
    if actor.startswith("agent:"):
        return "the memory tool" if action in FILE_TOOLS else "the chat"
    return "the CLI"


def shows(memory: Memory) -> bool:
    """Whether lines are drawn by their history's provenance: in every layout whose files carry no tags."""
    return not memory.layout().strict_tags
