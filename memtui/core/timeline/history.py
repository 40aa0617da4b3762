"""A memory file's history and per-line provenance (the store's log and blame joined with the audit log), and undo.

Undo never rewrites history: `revert` and `restore` make a new commit (a new recorded change), through the one
write transaction (memtui/core/writing/journal.py: journalled, written, committed and audited under the store's lock,
finished or undone after a crash) like any other change. A revert is a three-way merge per file (the store's `merge3`:
`git merge-file` on a folder, a pure-Python merge on Redis), computed in full before anything is written, so a
revert that conflicts with later changes is refused and leaves the memory as it was.

What is store-specific (resolving a change, a file at a change, blame, patches, the merge) sits behind the Store
interface; everything here is the same for a folder with git and for Redis.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable

from memtui.core.storage.store import NoHistory, StaleWrite, StoreError, content_hash
from memtui.core.writing import audit, journal
from memtui.core.writing.own_writes import emits_change
from memtui.core.writing.proposals import EXTERNAL_PREFIX, WriteResult

if TYPE_CHECKING:
    from memtui.core.writing.memory import Memory

TRAILER = re.compile(r"^(Memtui-[A-Za-z-]+):\s*(.*)$", re.MULTILINE)
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
STREAM_ID = re.compile(r"^\d+-\d+$")

def short(change: str) -> str:
    """How a change is named to a person: a git sha's first 8 characters; a Redis stream id whole (its first 8
    characters would be a timestamp's, shared by every change in the same ~day)."""
    return change if STREAM_ID.match(change) else change[:8]


# reading ------------------------------------------------------------------------------------------------------
def trailers(message: str) -> dict[str, str]:
    """The `Memtui-*:` trailers of a commit message, keyed without the prefix, lower case (actor, proposal…)."""
    return {k[len("Memtui-"):].lower(): v.strip() for k, v in TRAILER.findall(message)}


def audit_by_commit(records: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Audit lines that made a commit, by commit id."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        sha = rec.get("commit")
        if sha and rec.get("status") == "applied":
            out.setdefault(sha, []).append(rec)
    return out


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts).isoformat(timespec="seconds")


def _actor(trailer: dict[str, str], record: dict[str, Any], author: str) -> str:
    """Who a commit's change is by. An approved external change is committed under the approver's name, but the
    lines are an outside writer's: `external` (as `memtui today` says), never the person's."""
    if str(record.get("proposal") or "").startswith(EXTERNAL_PREFIX):
        return "external"
    return trailer.get("actor") or record.get("actor") or author


@dataclass
class FileCommit:
    """One commit that touched a file, with who asked for it and the audit line behind it."""

    commit: str
    time: str
    author: str
    actor: str
    proposal: str | None
    approved_by: str | None
    subject: str
    action: str | None
    audit: list[dict[str, Any]] = field(default_factory=list)

    @property
    def short(self) -> str:
        return short(self.commit)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def unkeyed(text: str) -> str:
    """A commit's author or message as memtui shows it: a credential in it masked. A person's git (or a remote's)
    writes these; memtui's readers (`today`, `history`, the app) must not hand a key on to whoever reads them."""
    if len(text) < 12:
        return text
    from memtui.core.writing import secrets

    return secrets.mask(text)


def history(memory: Memory, rel: str) -> list[FileCommit]:
    """Every commit touching `rel`, newest first."""
    rel = memory.store.check_path(rel)
    memory.store.ensure_history()  # a folder memtui did not make: its history beside it starts at the first look
    if not memory.store.keeps_history:
        raise NoHistory(f"{memory.location} has no git history; run `memtui init --git` to start one")
    audit = audit_by_commit(memory.store.audit_records())
    out = []
    for c in memory.store.history(rel):
        c = c.replace(author=unkeyed(c.author), message=unkeyed(c.message))
        t = trailers(c.message)
        recs = [r for r in audit.get(c.sha, []) if r.get("file") in (rel, None) or r.get("to") == rel]
        first = recs[0] if recs else {}
        out.append(FileCommit(
            commit=c.sha, time=_iso(c.time), author=c.author, actor=_actor(t, first, c.author),
            proposal=t.get("proposal") or first.get("proposal"), approved_by=t.get("approved-by"),
            subject=c.message.split("\n", 1)[0], action=first.get("action"), audit=recs,
        ))
    return out


@dataclass
class BlameLine:
    """Who wrote one line of a file: the commit, its author and time, the actor and the proposal behind it."""

    line: int
    text: str
    commit: str | None
    author: str | None
    time: str | None
    actor: str | None
    proposal: str | None
    approved_by: str | None
    action: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def blame(memory: Memory, rel: str) -> list[BlameLine]:
    """Per line of the file as it is on disk now; lines not yet committed have no commit (actor "uncommitted")."""
    rel = memory.store.check_path(rel)
    memory.store.ensure_history()
    chunks = memory.store.blame_chunks(rel)  # raises NoHistory before a missing file is looked for, as before
    data = memory.store.served(rel)  # a hard link (maybe a file outside) is refused, never quoted
    if data is None:
        raise FileNotFoundError(f"{rel} does not exist")
    text_lines = data.decode("utf-8", errors="replace").splitlines()
    if chunks is None:
        return [BlameLine(i + 1, t, None, None, None, "uncommitted", None, None, None)
                for i, t in enumerate(text_lines)]
    audit = audit_by_commit(memory.store.audit_records())
    cache: dict[str | None, tuple] = {None: (None, None, None, "uncommitted", None, None, None)}
    out: list[BlameLine] = []
    for commit, lines in chunks:
        sha = commit.sha if commit is not None else None
        if sha not in cache:
            assert commit is not None
            t = trailers(commit.message)
            recs = [r for r in audit.get(sha, []) if r.get("file") == rel or r.get("to") == rel]
            first = recs[0] if recs else {}
            cache[sha] = (sha, commit.author, _iso(commit.time), _actor(t, first, commit.author),
                          t.get("proposal") or first.get("proposal"), t.get("approved-by"), first.get("action"))
        for text in lines:
            out.append(BlameLine(len(out) + 1, text, *cache[sha]))
    return out


def first_changed_line(diff: str) -> int | None:
    """The line (1-based, in the new file) a diff's first change lands on: where to jump to see it."""
    new = None
    for line in diff.splitlines():
        m = HUNK.match(line)
        if m:
            new = int(m.group(1))
            continue
        if new is None:
            continue
        if line.startswith("+"):
            return new
        if line.startswith("-"):
            return max(new, 1)
        if line.startswith(" "):
            new += 1
    return None


# undo ---------------------------------------------------------------------------------------------------------
def _person_only(memory: Memory, by: str, what: str) -> WriteResult | None:
    if memory.config.policy.is_agent(by):
        return WriteResult("refused", f"{by} is an agent; {what} is a person's decision. Propose the change instead "
                                      "(memory_update), and a person will review it.")
    return None


def _audit(memory: Memory, action: str, rel: str, by: str, status: str, **extra: Any) -> None:
    audit.append(memory.store, audit.record(status, actor=by, action=action, file=rel, decided_by=by, **extra))


def _dirty(memory: Memory, paths: Iterable[str]) -> list[str]:
    wanted = set(paths)
    return sorted(ch.path for ch in memory.store.external_changes() if ch.path in wanted)


def _refuse(memory: Memory, action: str, rel: str | None, by: str, message: str, status: str = "refused",
            **extra: Any) -> WriteResult:
    _audit(memory, action, rel or "", by, status, reason=message, **extra)
    return WriteResult(status, message, None, rel)


def _undo_write(memory: Memory, action: str, by: str, what: str, results: dict[str, bytes | None], message: str,
                **extra: Any) -> tuple[str, str] | WriteResult:
    """Write every file's new bytes (None deletes it) and make one commit, as one transaction with an audit line
    per file; returns (commit, diff), or the refusal when the write failed (and was undone)."""
    from memtui.core.basics.patches import unified_diff

    store = memory.store
    diff = "".join(unified_diff(rel, _text(store.read(rel)), _text(data)) for rel, data in results.items())
    change = journal.Change(what, results, message, by, audit=[
        audit.record("applied", actor=by, action=action, file=rel, decided_by=by, **extra,
                     after_hash=content_hash(data)) for rel, data in results.items()])
    try:
        sha = journal.apply(store, change)
    except StaleWrite:
        raise
    except (OSError, StoreError) as exc:
        return _refuse(memory, action, next(iter(results)), by, f"could not write {', '.join(results)}: {exc}; "
                       "nothing was changed", **extra)
    return sha or "", diff


def _lost(memory: Memory, action: str, rel: str | None, by: str) -> Callable[[StaleWrite], WriteResult]:
    return lambda exc: _refuse(memory, action, rel, by, f"the files kept changing under this {action} ({exc}); "
                               "nothing was written, try again")


def _unfinished(memory: Memory, action: str, rel: str | None, by: str) -> WriteResult | None:
    """Finish a write a crash left half-done before planning this one; the refusal when that cannot be done."""
    try:
        journal.recover(memory.store)
    except (OSError, StoreError) as exc:
        return _refuse(memory, action, rel, by, f"an earlier interrupted write could not be finished ({exc}); "
                       "nothing was written")
    return None


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", errors="replace")


@emits_change
def revert(memory: Memory, commit: str, by: str | None = None) -> WriteResult:
    """A new commit that reverses `commit` for the memory files it touched; refused if later changes conflict."""
    from memtui.core.writing.memory import default_actor

    by = by or default_actor()
    if (refusal := _person_only(memory, by, "undo")) is not None:
        return refusal
    return journal.retry(lambda: _revert(memory, commit, by), _lost(memory, "revert", None, by))


def _revert(memory: Memory, commit: str, by: str) -> WriteResult:
    store = memory.store
    with store.lock():
        if (refusal := _unfinished(memory, "revert", None, by)) is not None:
            return refusal
        target = store.resolve_change(commit)  # NoHistory where nothing is recorded
        if target is None:
            return _refuse(memory, "revert", None, by, f"no commit {commit!r}; `memtui history FILE` lists them",
                           reverts=commit)
        sha = target.sha
        if len(target.parents) != 1:
            why = "it is the first commit (nothing before it to go back to; use restore)" if not target.parents \
                else "it is a merge commit"
            return _refuse(memory, "revert", None, by, f"cannot revert {short(sha)}: {why}", reverts=sha)
        parent = target.parents[0]
        files = []
        for rel in target.files:
            try:
                files.append(store.check_path(rel))
            except Exception:
                continue  # memtui's own bookkeeping (.memtui/…) is not memory: undo leaves it alone
        if not files:
            return _refuse(memory, "revert", None, by, f"{short(sha)} changed no memory files", reverts=sha)
        dirty = _dirty(memory, files)
        if dirty:
            return _refuse(memory, "revert", dirty[0], by,
                           f"{', '.join(dirty)} has uncommitted changes; approve or reject them first "
                           "(`memtui queue list`), then revert", reverts=sha)
        results: dict[str, bytes | None] = {}
        conflicts = []
        for rel in files:
            base, theirs, ours = store.file_at(rel, sha), store.file_at(rel, parent), store.committed(rel)
            if ours == theirs:
                continue  # already as it was before that change
            if ours == base:
                results[rel] = theirs
            elif ours is None or base is None or theirs is None:
                conflicts.append(rel)
            else:
                merged = store.merge3(ours, base, theirs)
                if merged is None:
                    conflicts.append(rel)
                elif merged != ours:  # equal: the change was undone already, with later changes on top
                    results[rel] = merged
        subject = target.message.split("\n", 1)[0]
        if conflicts:
            return _refuse(
                memory, "revert", conflicts[0], by,
                f"cannot revert {short(sha)} ({subject}): {', '.join(conflicts)} changed since in the same lines. "
                "Nothing was written; restore an earlier version (`memtui restore`) or edit by hand.",
                status="conflict", reverts=sha)
        if not results:
            return WriteResult("applied", f"{short(sha)} is already undone; nothing to change", None, files[0])
        message = (f"revert {short(sha)}: {subject}"[:200] + f"\n\nMemtui-Actor: {by}\nMemtui-Reverts: {sha}\n")
        done = _undo_write(memory, "revert", by, f"revert of {short(sha)}", results, message, reverts=sha)
        if isinstance(done, WriteResult):
            return done
        new, diff = done
    return WriteResult("applied", f"reverted {short(sha)} ({subject}) as {short(new)}.", None, next(iter(results)),
                       None, None, new, diff, files=list(results))


@emits_change
def restore(memory: Memory, rel: str, commit: str, by: str | None = None) -> WriteResult:
    """Put one file back to its version at `commit`, as a new commit."""
    from memtui.core.writing.memory import default_actor

    by = by or default_actor()
    if (refusal := _person_only(memory, by, "restoring a file")) is not None:
        return refusal
    rel = memory.store.check_path(rel)
    return journal.retry(lambda: _restore(memory, rel, commit, by), _lost(memory, "restore", rel, by))


def _restore(memory: Memory, rel: str, commit: str, by: str) -> WriteResult:
    store = memory.store
    with store.lock():
        if (refusal := _unfinished(memory, "restore", rel, by)) is not None:
            return refusal
        target = store.resolve_change(commit)  # NoHistory where nothing is recorded
        if target is None:
            return _refuse(memory, "restore", rel, by, f"no commit {commit!r}; `memtui history {rel}` lists them")
        sha = target.sha
        data = store.file_at(rel, sha)
        if data is None:
            return _refuse(memory, "restore", rel, by,
                           f"{rel} did not exist at {short(sha)}; `memtui history {rel}` lists its versions",
                           restored_from=sha)
        if _dirty(memory, [rel]):
            return _refuse(memory, "restore", rel, by, f"{rel} has uncommitted changes; approve or reject them "
                                                        "first (`memtui queue list`)", restored_from=sha)
        if store.read(rel) == data:
            return WriteResult("applied", f"{rel} is already as it was at {short(sha)}", None, rel)
        message = f"restore {rel} to {short(sha)}\n\nMemtui-Actor: {by}\nMemtui-Restored-From: {sha}\n"
        done = _undo_write(memory, "restore", by, f"restore of {rel}", {rel: data}, message, restored_from=sha)
        if isinstance(done, WriteResult):
            return done
        new, diff = done
    return WriteResult("applied", f"restored {rel} to {short(sha)} as {short(new)}.", None, rel, None, None,
                       new, diff, files=[rel])


def last_change(memory: Memory, actor: str | None = None) -> dict[str, Any] | None:
    """The newest applied change (by `actor`, when given) that is not itself an undo and not undone already."""
    records = list(memory.store.audit_records())
    undone = {r.get("reverts") for r in records if r.get("action") == "revert" and r.get("status") == "applied"}
    for rec in reversed(records):
        if rec.get("status") != "applied" or not rec.get("commit") or rec.get("action") == "revert":
            continue
        if rec["commit"] in undone:
            continue
        if actor is not None and rec.get("actor") != actor:
            continue
        return rec
    return None


@emits_change
def undo_last(memory: Memory, by: str | None = None, actor: str | None = None) -> WriteResult:
    """Revert the last applied change (the last by `actor`, when given). Pressing it again undoes the one before."""
    rec = last_change(memory, actor)
    if rec is None:
        who = f" by {actor}" if actor else ""
        return WriteResult("refused", f"no applied change{who} to undo")
    return revert(memory, rec["commit"], by)
