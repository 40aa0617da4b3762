"""The one write transaction: journal, write, commit, audit; every change memtui makes to memory passes here.

`apply` runs one `Change` under the store's lock (the caller holds it and has planned the change against what it
read under it):

1. journal: a sealed intent (what each file holds before, what it will hold, the commit and the audit lines to
   make) is saved, then an undo point is kept;
2. write: the files get their new bytes (None deletes);
3. commit: one recorded change, with `commits` instead of the bytes on disk where a file keeps a pending
   external change on disk;
4. audit: the queue file of the proposal decided (if any) and the audit lines; then the intent is cleared.

A failed write or commit is undone from the undo point and raised. A crash at any point leaves the intent:
`recover` (run before every write, and by `memtui doctor`) undoes it when nothing was written yet and finishes
it otherwise. `retry` re-plans a write that lost a race to a writer whose lock lapsed (a `StaleWrite`).
"""

from __future__ import annotations

import base64
import json
import random
import time
from typing import Any, Callable, TypeVar

from memtui.core.basics import clock
from memtui.core.basics.jsontext import loads
from memtui.core.basics.record import Record
from memtui.core.storage.store import StaleWrite, Store, StoreError, StoreUnavailable, content_hash
from memtui.core.writing import audit
from memtui.core.writing.proposals import APPLIED, Proposal

# A write that loses a race to another writer is re-planned against the new bytes this many times.
WRITE_ATTEMPTS = 8
INTENT_NAME = ".memtui/intent.json"
T = TypeVar("T")


class Interrupted(StoreError):
    """The store went away after a change's intent was saved: some of it may be written, none of it is lost. The
    intent is finished (or undone, if nothing was written) by the next write to the memory, or `memtui doctor`."""

    def __init__(self, store: Store, change: Change, cause: StoreError) -> None:
        super().__init__(
            f"{store.location} went away in the middle of the {change.what} ({cause}). Part of it may already be "
            "written; it is kept in the memory's journal and is finished by the next write to this memory: once "
            "the store is back, run the same command again (or `memtui doctor`). Nothing of it is lost or done "
            "twice.")


class Change(Record):
    """One planned write: what to write, how to record it, and what to audit."""

    what: str  # said to a person after a crash: "add of MEMORY.md", "revert of notes.md"
    writes: dict[str, bytes | None]
    message: str
    author: str
    committer: str | None
    # What is committed for a file whose bytes on disk differ from it (a pending external change stays on disk);
    # a path here and not in `writes` is committed without being written (an external change approved).
    commits: dict[str, bytes | None]
    # The audit lines, made once the commit is known (their "commit" is set to it).
    audit: list[dict[str, Any]]
    # The proposal this change decides: its queue file is saved with the commit once it is made.
    proposal: Proposal | None
    # False when the files go back to the version last recorded (an external change rejected): nothing to commit.
    record: bool

    def __init__(self, what: str, writes: dict[str, bytes | None], message: str, author: str,
                 committer: str | None = None, commits: dict[str, bytes | None] | None = None,
                 audit: list[dict[str, Any]] | None = None, proposal: Proposal | None = None,
                 record: bool = True) -> None:
        self.what = what
        self.writes = writes
        self.message = message
        self.author = author
        self.committer = committer
        self.commits = {} if commits is None else commits
        self.audit = [] if audit is None else audit
        self.proposal = proposal
        self.record = record

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys([*self.writes, *self.commits]))


def apply(store: Store, change: Change) -> str | None:
    """Journal, write, commit and audit `change`; return the commit (None where the store keeps no history, or
    nothing changed). The caller holds the store's lock. Raises what the write or commit raised, undone."""
    # A person's merge in progress, or a version they staged, refuses the change before anything is written.
    store.check_change({**change.writes, **change.commits}, change.record)
    befores = {rel: store.read(rel) for rel in change.writes}
    from memtui.core.basics.seal import seal

    store.intent_save(seal(json.dumps(_payload(change, befores)).encode()))
    try:
        # Kept before writing, so undoing needs no new space: a full disk cannot turn "refused" into half-done.
        point = store.undo_point(list(change.writes))
    except BaseException:
        store.intent_save(None)
        raise
    try:
        for rel, data in change.writes.items():
            if data is None:
                store.delete(rel)
            else:
                store.write(rel, data)
        sha = _commit(store, change)
    except BaseException as exc:
        try:
            store.undo(point)
            store.intent_save(None)
        except (OSError, StoreError):
            # The intent stays: the next write (or `memtui doctor`) finishes or undoes it. A store that went away
            # may have taken a write whose reply was lost: the caller must not be told nothing was written.
            if isinstance(exc, StoreUnavailable):
                raise Interrupted(store, change, exc) from exc
        raise
    store.drop_undo_point(point)
    try:
        _finish(store, change, sha, change.audit)
    except StoreUnavailable as exc:  # recorded, its queue file or audit lines not yet: the intent finishes them
        raise Interrupted(store, change, exc) from exc
    return sha


def retry(attempt: Callable[[], T], lost: Callable[[StaleWrite], T]) -> T:
    """Run `attempt` (plan and apply under the lock) again while it loses races; `lost` says so after the last."""
    for n in range(WRITE_ATTEMPTS):
        try:
            return attempt()
        except StaleWrite as exc:
            last = exc
            time.sleep(0.002 * (n + 1) * random.random())  # racing writers spread out
    return lost(last)


def recover(store: Store, wait: float = 30.0) -> str | None:
    """Finish (or undo) a write a crashed process left half-applied; say what was done, None if nothing was.
    Waits `wait` seconds at most for the lock (`LockTimeout`: a live writer holds it, or a dead one's has not
    lapsed yet).

    Files all still as they were before: the crash came before anything was written, so the intent is dropped.
    Otherwise the write is finished: the files get their new bytes, then the commit, the queue file and the audit
    lines that are missing. An intent memtui did not seal is set aside, never applied."""
    if store.intent_load() is None:
        return None
    with store.lock(timeout=wait):
        raw = store.intent_load()
        if raw is None:
            return None
        from memtui.core.basics.seal import unseal

        payload = unseal(raw)
        if payload is None:
            # Not sealed by this person's memtui: planted, altered, or another account's. Never applied.
            kept = store.keep_rejected("intent.json", raw, clock.now().strftime("%Y%m%dT%H%M%S"))
            store.intent_save(None)
            audit.append(store, audit.record(
                "refused", actor="memtui", action="recover", file=INTENT_NAME,
                reason="an intent file memtui did not seal was set aside, not applied", kept_at=kept))
            return f"set aside an intent file memtui did not seal ({kept}); nothing of it was applied"
        try:
            change, befores = _from_payload(loads(payload))
        except (ValueError, TypeError, KeyError, AttributeError):
            store.intent_save(None)
            return "dropped an unreadable intent file (a crash while saving it: nothing had been written)"
        now = {rel: content_hash(store.read(rel)) for rel in change.writes}
        # A crash leaves each file as it was or as the write made it (every write is an atomic replace). A file
        # that is neither means this intent is not the one the files were left by: a sealed intent saved before
        # and put back (a replay that would roll the files back), or an edit since. It is never applied.
        if any(now[rel] not in (befores.get(rel), content_hash(data)) for rel, data in change.writes.items()):
            kept = store.keep_rejected("intent.json", raw, clock.now().strftime("%Y%m%dT%H%M%S"))
            store.intent_save(None)
            audit.append(store, audit.record(
                "refused", actor="memtui", action="recover", file=INTENT_NAME, kept_at=kept,
                reason=f"an intent for {change.what} matches neither the files' bytes before it nor after it; set "
                       "aside, not applied"))
            return (f"set aside an intent for {change.what} that does not match the files as they are ({kept}); "
                    "nothing of it was applied")
        if change.writes and all(now[rel] == befores.get(rel) for rel in change.writes):
            store.intent_save(None)
            return f"undid an interrupted {change.what}: the crash came before anything was written"
        for rel, data in change.writes.items():
            if now[rel] != content_hash(data):
                if data is None:
                    store.delete(rel)
                else:
                    store.write(rel, data)
        sha = _commit(store, change)
        if sha is None and change.record:
            head = store.head()
            sha = head.sha if head is not None and head.message == change.message else None
        done = [(r.get("status"), r.get("action"), r.get("file"), r.get("after_hash"), r.get("proposal"))
                for r in store.audit_records()]
        missing = [dict(r, recovered=True) for r in change.audit
                   if (r.get("status"), r.get("action"), r.get("file"), r.get("after_hash"), r.get("proposal"))
                   not in done]
        _finish(store, change, sha, missing)
        return f"finished an interrupted {change.what}" + (f" (commit {sha[:8]})" if sha else "")


def _commit(store: Store, change: Change) -> str | None:
    if not change.record:
        return None
    return store.commit(change.paths, change.message, change.author, change.committer, contents=change.commits)


def _finish(store: Store, change: Change, sha: str | None, records: list[dict[str, Any]]) -> None:
    """The queue file and the audit lines of a change that is written and committed; the intent is cleared once
    all are saved (an audit log that cannot be written keeps it, so the next write adds them)."""
    p = change.proposal
    if p is not None:
        p.status, p.commit = APPLIED, sha
        if p.id:
            store.queue_save(p.id, p.sealed_json())
    ok = True
    for rec in records:
        ok = audit.append(store, {**rec, "ts": clock.now().isoformat(timespec="seconds"), "commit": sha}) and ok
    if ok:
        store.intent_save(None)


def _payload(change: Change, befores: dict[str, bytes | None]) -> dict[str, Any]:
    return {
        "v": 2, "what": change.what, "message": change.message, "author": change.author,
        "committer": change.committer, "before": {rel: content_hash(b) for rel, b in befores.items()},
        "after": _b64(change.writes), "commit": _b64(change.commits), "audit": change.audit,
        "proposal": None if change.proposal is None else json.loads(change.proposal.to_json()),
        "record": change.record,
    }


def _from_payload(intent: dict[str, Any]) -> tuple[Change, dict[str, str]]:
    befores = dict(intent["before"])
    writes, commits = _unb64(intent["after"]), _unb64(intent.get("commit") or {})
    p = None if intent.get("proposal") is None else Proposal(**intent["proposal"])
    if intent.get("v") != 2:
        # Journalled by a memtui before the one transaction: a proposal's write, its lines rebuilt from it.
        assert p is not None
        decided_by = intent["decided_by"]
        p.status, p.decided_by, p.decided_at = APPLIED, decided_by, clock.now().isoformat(timespec="seconds")
        recorded = {**writes, **commits}
        after = recorded.get(p.to) if p.action == "rename" and p.to else recorded.get(p.file)
        line = audit.of_proposal(p, "applied", before_hash=p.base_hash, after_hash=content_hash(after),
                                 **dict(intent.get("extra") or {}))
        return Change(f"{p.action} of {p.file}", writes, commit_message(p, decided_by), p.actor, decided_by,
                      commits, [line], p), befores
    return Change(str(intent["what"]), writes, str(intent["message"]), str(intent["author"]),
                  intent.get("committer"), commits, list(intent.get("audit") or []), p,
                  intent.get("record") is not False), befores


def commit_message(p: Proposal, decided_by: str) -> str:
    """A proposal's commit subject and trailers. Every field is put on one line first: a line break in a
    section, an entry or an id would otherwise start a trailer of its own (a forged `Memtui-Approved-By`)."""
    head = f"{p.action} {one_line(p.file)}" + (f" § {one_line(p.section)}" if p.section else "")
    if p.action == "move":
        head += f" → {one_line(p.to or p.file)} § {one_line(p.to_section)}"
    first = (p.content or "").strip().splitlines()[0:1]
    what = one_line(p.entry or p.to or (first[0] if first else ""))
    subject = f"{head}: {what}"[:200] if what else head
    trailers = [f"Memtui-Actor: {one_line(p.actor)}"]
    if p.id:
        trailers.append(f"Memtui-Proposal: {one_line(p.id)}")
    if decided_by != p.actor:
        trailers.append(f"Memtui-Approved-By: {one_line(decided_by)}")
    if p.replaces:
        trailers.append(f"Memtui-Replaces: {one_line(p.replaces)[:200]}")
    return subject + "\n\n" + "\n".join(trailers) + "\n"


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _b64(files: dict[str, bytes | None]) -> dict[str, str | None]:
    return {rel: None if b is None else base64.b64encode(b).decode() for rel, b in files.items()}


def _unb64(files: dict[str, str | None]) -> dict[str, bytes | None]:
    return {rel: None if b is None else base64.b64decode(b) for rel, b in files.items()}
