"""The queue as a person reads it: the open proposals, oldest first, each read from its queue file and checked (memtui's
seal, the record of memtui's own queue writes, its id), the rest counted, and the external changes as proposals to
review. One job: reading what waits for a decision; deciding is memtui.core.writing.memory's. Problems found while
reading (an unreadable or unsealed queue file) are kept in `queue_problems` for the listing to show.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable

from memtui.core.basics import clock
from memtui.core.basics.patches import unified_diff
from memtui.core.basics.visible import code_points, hidden
from memtui.core.storage.store import ExternalChange, Store, content_hash
from memtui.core.writing.proposals import CONFLICT, EXTERNAL_PREFIX, PENDING, Proposal, unsealed_reason

if TYPE_CHECKING:
    from memtui.core.writing.queue_page import QueueHead, QueuePage

# Open queue files without memtui's seal named one by one in a listing's problems; past these, one line counts them.
FOREIGN_NAMED = 10


class NotFound(LookupError):
    pass


class QueueListing:
    """The queue of the memory `memory` (memtui.core.writing.memory.Memory, not imported: it imports this), read through
    its store; what was learnt of each queue file is kept while its stamp stays, so listing again reads what changed."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory
        self.queue_problems: list[str] = []
        # An external change's diff by (file, hash before, hash after): the app lists external changes on every
        # sync, and decoding and diffing a 20 MB log again each time a writer touched another file held the GIL
        # the app's thread needed for the keys.
        self._external_diffs: dict[tuple[str, str, str], tuple[str, list[str]]] = {}
        # Decided proposals by id, with the stamp their queue file had when read (`Store.queue_stamps`): queue
        # files are never removed, so listing the open ones reads only the files that changed, not every
        # proposal ever made.
        self._decided: dict[str, tuple[int, ...]] = {}
        # Open proposals a listing only counted (`queue_page`), with their stamp: listed again, they are not read.
        self._heads: dict[str, tuple[tuple[int, ...], QueueHead]] = {}

    @property
    def store(self) -> Store:
        return self.memory.store

    def proposals(self, *, include_decided: bool = False, external: bool = True) -> list[Proposal]:
        """Pending (and conflicting) proposals, oldest first, then external changes. Every one, read in full: a
        listing a person reads takes `queue_page` (the oldest few, the rest counted)."""
        from memtui.core.writing.queue_page import oldest_first
        from memtui.core.basics.seal import verifier

        out = []
        self.queue_problems = []
        check = verifier()
        unsealed_open: list[str] = []
        unsealed_decided = 0
        stamps = None if include_decided else self.store.queue_stamps()
        for pid in sorted(stamps if stamps is not None else self.store.queue_ids(), key=oldest_first):
            stamp = stamps.get(pid) if stamps is not None else None
            if stamp and self._decided.get(pid) == stamp:
                continue
            data = self.store.queue_load(pid)
            p = self._queued(pid, data)
            if p is None:
                continue
            foreign = self._unvouched(pid, data, check)
            if foreign is not None and p.open:
                self._foreign(pid, foreign, unsealed_open)
                continue
            if foreign is not None and include_decided:
                unsealed_decided += 1  # history memtui cannot vouch for (most often: decided before the seal)
                continue
            if include_decided or p.open:
                out.append(_shown(p))
            elif stamp:
                self._decided[pid] = stamp
        self._foreign_count(unsealed_open)
        if unsealed_decided:
            self.queue_problems.append(f"{unsealed_decided} decided queue file(s) without memtui's seal (decided "
                                       "before memtui sealed queue files, or written outside it) are not listed")
        if external:
            out.extend(self.external_proposals())
        return out

    def _foreign(self, pid: str, why: str, unsealed_open: list[str]) -> None:
        """An open queue file without memtui's seal: not memtui's proposal, never listed or counted as one, so
        never approved as one (`memtui queue show` still reads it, and a person may reject it). Named one by one up
        to a few: a folder of forged files must not become a flood of problems (each one a notice in the app)."""
        unsealed_open.append(pid)
        if len(unsealed_open) <= FOREIGN_NAMED:
            self.queue_problems.append(f"{pid}: {why}; not listed and cannot be approved. Read it with "
                                       f"`memtui queue show {pid}`; reject it, and have it proposed again "
                                       "if it is wanted")

    def _foreign_count(self, unsealed_open: list[str]) -> None:
        if len(unsealed_open) > FOREIGN_NAMED:
            more = unsealed_open[FOREIGN_NAMED:]
            self.queue_problems.append(f"{len(more)} more open queue files without memtui's seal ({more[0]} … "
                                       f"{more[-1]}) are not listed and cannot be approved; `memtui doctor` names "
                                       "each")

    def _queued(self, pid: str, data: bytes | None) -> Proposal | None:
        """The proposal queue file `pid` holds, or None with the reason in `queue_problems`."""
        try:
            p = Proposal.from_json(data or b"")
        except (ValueError, TypeError, json.JSONDecodeError):
            self.queue_problems.append(f"{pid}: unreadable queue file (half-written or corrupt); skipped")
            return None
        if p.id != pid:  # a queue file is anyone's to write: its name, not its content, says which it is
            self.queue_problems.append(f"{pid}: its queue file names another id ({p.id!r}); skipped")
            return None
        if pid.startswith(EXTERNAL_PREFIX):  # memtui never queues one: it would pass for the external change
            self.queue_problems.append(f"{pid}: a queue file with an external change's kind of id (memtui "
                                       "queues p-…); skipped")
            return None
        return p

    def queue_page(self, limit: int | None = None, *, stop: Callable[[], bool] | None = None,
                   count: bool = True, after: QueuePage | None = None) -> QueuePage:
        """The oldest `limit` open proposals (None: `queue_page.PAGE`; 0: every one) read in full and
        checked as `proposals` reads them, and every open one counted by actor and status: what a listing shows
        with 100,000 proposals queued (memtui/core/writing/queue_page.py). The others are parsed one at a time for their
        id, actor and status and let go; where the store stamps its queue files, what was learnt of each is kept
        while its stamp stays, so listing again reads only what changed. External changes are not in it.

        `stop` is asked now and then (every few hundred files); once it says yes, `queue_page.Stopped` is raised:
        an app quitting does not wait for a reader of 100,000 files. Without `count` the reading ends with the page
        (its first screen does not wait for the count); `after` such a page, the count reuses its listing."""
        from memtui.core.writing.queue_page import PAGE, QueueHead, QueuePage, Stopped, head, oldest_first, ranked
        from memtui.core.basics.seal import verifier

        limit = PAGE if limit is None else limit
        self.queue_problems = []
        check = verifier()
        unsealed_open: list[str] = []
        if stop is not None and stop():
            raise Stopped("stopped reading the queue")
        stamps = after.stamps if after is not None and after.stamps is not None else self.store.queue_stamps()
        pids = sorted(stamps if stamps is not None else self.store.queue_ids(), key=oldest_first)
        known: dict[str, Any] = {}
        if stamps is not None:
            kept = []
            for n, pid in enumerate(pids):
                if stop is not None and not n % 4096 and stop():
                    raise Stopped("stopped reading the queue")
                stamp = stamps[pid]
                if stamp and self._decided.get(pid) == stamp:
                    continue
                was = self._heads.get(pid)
                if stamp and was is not None and was[0] == stamp:
                    known[pid] = was[1]
                kept.append(pid)
            pids = kept
        reads = self.store.queue_read(pid for pid in pids if pid not in known)
        shown: list[Proposal] = []
        by_actor: Counter[str] = Counter()
        by_status: Counter[str] = Counter()
        for n, pid in enumerate(pids):
            if stop is not None and not n % 256 and stop():
                raise Stopped("stopped reading the queue")
            full = not limit or len(shown) < limit
            if not full and not count:
                break
            stamp = stamps.get(pid) if stamps is not None else None
            h = known.get(pid)
            data = None if h is not None else next(reads)[1]
            if full:
                if data is None:
                    data = self.store.queue_load(pid)
                p = self._queued(pid, data)
                if p is None:
                    continue
                foreign = self._unvouched(pid, data, check)
                if foreign is not None:  # neither shown nor counted (nor kept: it is checked again next time)
                    if p.open:
                        self._foreign(pid, foreign, unsealed_open)
                    continue
                if p.open:
                    shown.append(_shown(p))
                h = QueueHead(p.id, p.actor, p.status)
            elif h is None:  # `known` holds only sealed ones
                h = head(data)
                if h is None:
                    self.queue_problems.append(f"{pid}: unreadable queue file (half-written or corrupt); skipped")
                    continue
                if h.id != pid or pid.startswith(EXTERNAL_PREFIX):
                    self._queued(pid, data)  # says which, as a listing that reaches it would
                    continue
                foreign = self._unvouched(pid, data, check)
                if foreign is not None:
                    if h.status in (PENDING, CONFLICT):
                        self._foreign(pid, foreign, unsealed_open)
                    continue
            if h.status in (PENDING, CONFLICT):
                by_actor[h.actor] += 1
                by_status[h.status] += 1
                if stamp:
                    self._heads[pid] = (stamp, h)
            elif stamp:
                self._decided[pid] = stamp
                self._heads.pop(pid, None)
        self._foreign_count(unsealed_open)
        page = QueuePage(shown, sum(by_status.values()), ranked(by_actor), ranked(by_status),
                         list(self.queue_problems), counted=count or not limit or len(shown) < limit)
        page.stamps = stamps
        return page

    def external_proposals(self, paths: Collection[str] | None = None,
                           previous: Iterable[Proposal] = ()) -> list[Proposal]:
        """The pending external changes (files changed outside memtui), one proposal each. With `paths`, only those
        files are read again: `previous` (a whole listing read before) stands for every other file, as it was."""
        by_entry = self.memory._by_entry()
        if paths is None:
            out = [_external_proposal(ch, self._external_diffs, by_entry) for ch in self.store.external_changes()
                   if not (by_entry and _tool_state(ch))]
        else:
            fresh = {ch.path: _external_proposal(ch, self._external_diffs, by_entry)
                     for ch in self.store.external_changes(paths) if not (by_entry and _tool_state(ch))}
            out = []
            for p in previous:  # in the order listed, each file read again in its place (or gone)
                if p.file not in paths:
                    out.append(p if p.id == external_id(p.file) else p.replace(id=external_id(p.file)))
                elif p.file in fresh:
                    out.append(fresh.pop(p.file))
            out += fresh.values()
        ids = Counter(p.id for p in out)
        for i, p in enumerate(out):
            if ids[p.id] > 1:  # two names whose ids (6 hex digits of a hash) are the same: each its own, in full
                out[i] = p.replace(id=external_id(p.file, full=True))
        if paths is not None:
            return out  # the diffs of the files not read again are still listed: none is forgotten
        listed = {(p.file, p.base_hash, p.after_hash) for p in out}
        for key in list(self._external_diffs):  # a copy: another thread may list them at the same time
            if key not in listed:
                self._external_diffs.pop(key, None)  # only the changes listed now are kept
        return out

    def get(self, pid: str) -> Proposal:
        if pid.startswith(EXTERNAL_PREFIX):
            for p in self.external_proposals():
                if p.id == pid:
                    return p
            raise NotFound(f"no pending external change {pid}; `memtui queue list` shows what is pending")
        data = self.store.queue_load(pid)
        if data is None:
            raise NotFound(f"no proposal {pid}; `memtui queue list` shows what is pending")
        try:
            p = _shown(Proposal.from_json(data))
        except (ValueError, TypeError, json.JSONDecodeError):
            raise NotFound(f"proposal {pid} is unreadable (half-written or corrupt); `memtui doctor` repairs it")
        if p.id != pid:
            raise NotFound(f"proposal {pid}'s queue file names another id ({p.id!r}); it is not {pid}")
        p.foreign = self._unvouched(pid, data, None)
        return p

    def _unvouched(self, pid: str, data: bytes | None, check: object) -> str | None:
        """Why queue file `data` of `pid` is not memtui's own latest here: no seal of this person's memtui over
        its bytes (`unsealed_reason`), or not the version memtui last wrote in this memory (`Store.queue_vouched`:
        an earlier version put back, or one copied from another memory)."""
        return unsealed_reason(data or b"", check) or self.store.queue_vouched(pid, data or b"")


def external_id(rel: str, *, full: bool = False) -> str:
    """The id an external change of `rel` is listed under: 6 hex digits of its name's hash, all 40 (`full`) where
    two listed changes' short ids would be the same."""
    from memtui.core.basics.digests import sha1

    digest = sha1(rel.encode()).hexdigest()
    return EXTERNAL_PREFIX + (digest if full else digest[:6])


def _shown(p: Proposal) -> Proposal:
    """`p` as read from its queue file, its candidate flag counted again from its sealed signals (a flag in the file
    is anyone's to write; `recurrence.shown`). The gate's module is read only for a proposal that has either."""
    if p.signals or any(f.startswith("candidate:") for f in p.flags):
        from memtui.core.writing import recurrence

        p = recurrence.shown(p)
    from memtui.core.writing import guard

    return guard.flag_queued_secrets(p)


def _tool_state(ch: ExternalChange) -> bool:
    """Hermes' own bookkeeping beside its memories (an empty flock file, a write's temporary file): not memory,
    so not a change to review (memtui/core/grammar/formats/hermes.py)."""
    from memtui.core.grammar.formats import hermes

    return hermes.tool_state(ch.path, ch.after)


def _external_proposal(ch: ExternalChange,
                       diffs: dict[tuple[str, str, str], tuple[str, list[str]]] | None = None,
                       by_entry: Collection[str] = ()) -> Proposal:
    """`ch` as a proposal to review; a file in `by_entry` (Hermes') is diffed by entry: added, replaced, removed."""
    def text(b: bytes | None) -> str | None:
        return None if b is None else b.decode("utf-8", errors="replace")

    before, after = content_hash(ch.before), ch.after_hash or content_hash(ch.after)
    cached = None if diffs is None else diffs.get((ch.path, before, after))
    if cached is None:
        from memtui.core.writing.guard import diff_secrets

        now = text(ch.after if ch.stored is None else ch.stored)
        if ch.path in by_entry:
            from memtui.core.grammar.formats import hermes

            diffed, extra = hermes.entry_diff(ch.path, text(ch.before), now), hermes.review_flags(ch.path, now)
        else:
            diffed, extra = unified_diff(ch.path, text(ch.before), now), []
        # A key in a file changed outside memtui is flagged, and masked in the diff a person is shown.
        cached = diff_secrets(ch.path, diffed)
        cached = (cached[0], extra + list(cached[1]))
        if diffs is not None:
            diffs[(ch.path, before, after)] = cached
    diff, flags = cached
    return Proposal(
        id=external_id(ch.path), created=clock.now().isoformat(timespec="seconds"), actor="external",
        file=ch.path, action=ch.kind, base_hash=before, after_hash=after, diff=diff,
        flags=([ch.note] if ch.note else []) + _name_secret_flags(ch.path) + _hidden_flags(diff) + list(flags),
    )


def _name_secret_flags(rel: str) -> list[str]:
    """A flag for a credential in the changed file's name (or a folder's on its path): approving commits the name
    to git history as surely as a key in its text."""
    from memtui.core.writing import secrets

    found = secrets.scan(rel)
    if not found:
        return []
    return [f"its name holds a credential: {secrets.kinds(found)} ({', '.join(s.masked for s in found)}). Reject "
            "it (the key is leaked: rotate it); committed, the name stays in git history"]


def _hidden_flags(diff: str) -> list[str]:
    """A flag for characters a person cannot see on the lines an external change adds: the diff names each
    (⟨U+E0049⟩), and the flag says so before the person reads that far."""
    found = [c for line in diff.splitlines()[2:] if line.startswith("+") for c in hidden(line[1:])]
    if not found:
        return []
    return [f"adds {len(found)} invisible or control character(s) ({code_points(found)}), drawn as ⟨U+…⟩ in the "
            "diff: text a reader does not see; reject it unless you know why they are there"]
