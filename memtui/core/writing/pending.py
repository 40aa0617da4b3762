"""How many proposals an agent has waiting: what `[review] agent_max_pending` caps, counted without reading the queue.

Queue files are never removed, so a memory that has seen 100,000 proposals keeps 100,000 of them, nearly all
decided; reading each on every agent write made a write cost seconds. A decided proposal stays decided (approve
and reject end it; only its queue file's name is needed to know it), so the ids known decided are kept, in the
process and in the local cache (the next `memtui` process, a hook, starts from them): a count lists the queue's
ids and reads only the new queue files and the ones the writing agent had open. The ids are kept beside
the queue files (`.memtui/queue/.decided`, a name neither the queue's listing nor git's nor the watcher's takes),
so they go with the memory; a store with no folder (Redis) keeps them in the process only. A queue file rewritten
outside memtui is not looked at again once decided. The cache is sealed as the queue files are (an HMAC under the
person's key): one written outside memtui (every id "decided", an agent's open proposals given to a person) is read
as empty, or an agent with file access could hide its own sealed proposals from the cap and queue without end.

Proposals are counted by their actor's skeleton, so a look-alike of an agent's name (Cyrillic, fullwidth) shares
its count with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Callable

from memtui.core.storage.store import Store, StoreError

CACHE_FILE = ".memtui/queue/.decided"
# The cache's format: a file of another shape (an older memtui, a torn write) is read as empty, never trusted.
CACHE_VERSION = 1
_CACHE_DOMAIN = b"memtui pending cache\0"  # the cache's seal vouches for nothing else (a queue file, an intent)


def _domain(path: Path) -> bytes:
    """What a cache's seal is made over besides its bytes: the domain and the folder it is for, so a sealed cache
    of another memory of this person's (whose ids are decided there, and pending here) is not taken for this one's.
    A memory moved elsewhere reads its queue once again."""
    return _CACHE_DOMAIN + os.fsencode(os.path.realpath(path.parent)) + b"\0"
_UNREAD = object()


class PendingCounter:
    """Counts the open proposals of an actor in `store`'s queue; one per Memory (the MCP server's lives long)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._decided: set[str] | None = None
        self._open: dict[str, str] = {}  # pid -> its actor's skeleton, of the proposals last read open
        self._verifier: object = _UNREAD

    def count(self, actor: str) -> int:
        """The open proposals (pending or conflict) whose actor reads as `actor`. Read again: the new queue files
        and the ones this actor had open (a person may have decided them since); another actor's open ones are
        theirs to count (a proposal's actor never changes), so 10,000 of them cost this one nothing."""
        from memtui.core.basics.actors import skeleton

        who = skeleton(actor)
        if self._decided is None:
            self._decided, self._open = self._load()
        decided, known_open = self._decided, self._open
        learnt = False
        n = 0
        for pid in self.store.queue_ids():
            if pid in decided:
                continue
            was = known_open.get(pid)
            if was is not None and was != who:
                continue
            name, is_open = self._read(pid)
            if is_open:
                n += name == who
                learnt = learnt or was is None
                known_open[pid] = name
            elif name:  # decided for good; an unreadable file is read again next time (it may be half-written)
                decided.add(pid)
                known_open.pop(pid, None)
                learnt = True
        if learnt:
            self._save(decided, known_open)
        return n

    def agents_open(self, is_agent: Callable[[str], bool], limit: int) -> int:
        """The open proposals of every agent together, as `count` last read them (call it first: it reads the new
        ones). Another agent's may have been decided since: when the total reaches `limit`, each is read again,
        so a refusal never rests on a stale count (and that costs only a queue at its limit)."""
        if self._decided is None:
            return 0
        theirs = [pid for pid, name in self._open.items() if is_agent(name)]
        if len(theirs) < limit:
            return len(theirs)
        n = 0
        for pid in theirs:
            name, is_open = self._read(pid)
            if is_open:
                n += is_agent(name)
                if n >= limit:  # enough to refuse: a flooded queue costs `limit` reads, not one per proposal
                    return n
            else:
                self._open.pop(pid, None)
                if name:
                    self._decided.add(pid)
        return n

    def _read(self, pid: str) -> tuple[str, bool]:
        """(the actor's skeleton, open) of one queue file; ("", False) for one that cannot be read or names
        another id (the review list skips those), which counts for no one."""
        from memtui.core.basics.actors import skeleton
        from memtui.core.writing.proposals import Proposal, unsealed_reason

        try:
            data = self.store.queue_load(pid) or b""
            # A queue file memtui did not seal is not listed and never approved: it counts for no one either, or
            # a forged file naming another agent would use up that agent's places.
            # Known for good (a name that is no actor's): memtui never queues under an id whose file stands.
            if unsealed_reason(data, self._check()) is not None:
                return "\0foreign", False
            p = Proposal.from_json(data)
        except (ValueError, TypeError, json.JSONDecodeError, StoreError, OSError):
            return "", False
        if p.id != pid or not isinstance(p.actor, str):
            return "", False
        return skeleton(p.actor) or "?", bool(p.open)

    def _check(self) -> object:
        """The seal's verifier, read once per counter (None: no key, and every file is foreign)."""
        if self._verifier is _UNREAD:
            from memtui.core.basics.seal import verifier

            self._verifier = verifier()
        return self._verifier if self._verifier is not None else (lambda *_: False)

    def _path(self) -> Path | None:
        root = self.store.local_root
        state = self.store.state_folder  # a folder memory's, inside (`.memtui/`) or beside it
        if state is not None:
            return state / "queue" / ".decided"
        return None if root is None else root / CACHE_FILE

    def _load(self) -> tuple[set[str], dict[str, str]]:
        path = self._path()
        if path is None:
            return set(), {}
        try:
            # Opened without blocking and only when a regular file: an agent may put a FIFO in its place.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return set(), {}
                data = f.read()
            body, _, given = data.rpartition(b"\n")
            check = self._check()
            if not body or not check(_domain(path) + body, given.decode("ascii", "replace")):  # type: ignore[operator]
                return set(), {}  # not sealed by this person's memtui: every queue file is read again
            raw = json.loads(body)
            if raw.get("v") != CACHE_VERSION or not isinstance(raw.get("decided"), list) \
                    or not isinstance(raw.get("open"), dict):
                return set(), {}
            return ({pid for pid in raw["decided"] if isinstance(pid, str)},
                    {pid: name for pid, name in raw["open"].items() if isinstance(name, str)})
        except (OSError, ValueError, TypeError, AttributeError):
            return set(), {}

    def _save(self, decided: set[str], known_open: dict[str, str]) -> None:
        """Best effort: a cache that cannot be written costs the next process a full read, nothing else."""
        path = self._path()
        if path is None or not path.parent.is_dir():
            return
        from memtui.core.basics.seal import mac

        try:
            body = json.dumps({"v": CACHE_VERSION, "decided": sorted(decided), "open": known_open},
                              separators=(",", ":")).encode()
            seal = mac(_domain(path) + body)
            if seal is None:
                return  # no key: a cache no one can vouch for is not kept
            # A new file of its own (mkstemp: O_EXCL, a name no one knows ahead): `.memtui/queue/` is in the folder an
            # agent writes, and a name known ahead (`.decided.<pid>.tmp`) planted as a symlink was written through,
            # cutting whatever file of the person's it named.
            import tempfile

            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(body + b"\n" + seal.encode())
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except (OSError, ValueError):
            pass


class Waiting:
    """What waits for a person, counted for a shell prompt (`memtui status`): open proposals by status and actor,
    and the oldest's id and time. No agent's string is in the line it makes (names go only to JSON), so a prompt
    or status bar never draws an agent's bytes."""

    def __init__(self, pending: int, conflicts: int, by_actor: dict[str, int], oldest: str | None,
                 oldest_created: str | None) -> None:
        self.pending = pending
        self.conflicts = conflicts
        self.by_actor = by_actor
        self.oldest = oldest
        self.oldest_created = oldest_created

    @property
    def waiting(self) -> int:
        return self.pending + self.conflicts

    def age_seconds(self, now: object = None) -> int | None:
        """How long the oldest has waited, or None (nothing waits, or its time cannot be read)."""
        from datetime import datetime

        from memtui.core.basics import clock

        if not self.oldest_created:
            return None
        try:
            then = datetime.fromisoformat(self.oldest_created)
        except ValueError:
            return None
        if then.tzinfo is not None:
            then = then.astimezone().replace(tzinfo=None)
        return max(0, int(((now or clock.now()) - then).total_seconds()))  # type: ignore[operator]

    def line(self, now: object = None) -> str:
        """"memtui: 9 pending (oldest 3h), 1 conflict", or "memtui: 0 pending"."""
        age = self.age_seconds(now)
        oldest = f" (oldest {short_age(age)})" if age is not None and self.waiting else ""
        text = f"memtui: {self.pending} pending" + (oldest if self.pending else "")
        if self.conflicts:
            text += f", {self.conflicts} conflict{'s' * (self.conflicts > 1)}" + ("" if self.pending else oldest)
        return text

    def to_dict(self, now: object = None) -> dict[str, object]:
        return {"pending": self.pending, "conflicts": self.conflicts, "waiting": self.waiting,
                "oldest": self.oldest, "oldest_created": self.oldest_created,
                "oldest_age_seconds": self.age_seconds(now) if self.waiting else None, "by_actor": self.by_actor}


def short_age(seconds: int | None) -> str:
    """"now", "45m", "3h", "2d", "5w": an age in the fewest characters a status bar can spare."""
    if seconds is None:
        return "?"
    for unit, size in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit == "w" else 1):
            return f"{seconds // size}{unit}"
    return "now"


def long_age(seconds: int | None) -> str:
    """"2 days", "3 hours", "under a minute": an age as a sentence says it."""
    if seconds is None:
        return "of unknown age"
    for unit, size in (("week", 7 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size * (2 if unit == "week" else 1):
            n = seconds // size
            return f"{n} {unit}{'s' * (n > 1)}"
    return "under a minute"


def waiting(store: Store) -> Waiting:
    """Every open proposal in `store`'s queue, counted: the ids known decided (`PendingCounter`'s cache) are
    skipped, so a memory with 100,000 decided proposals costs a listing of names and a read of the open ones.
    A file memtui did not seal, or one that cannot be read, counts for no one (as in `PendingCounter.count`)."""
    from memtui.core.basics.actors import skeleton
    from memtui.core.writing.proposals import Proposal, unsealed_reason
    from memtui.core.writing.queue_page import oldest_first

    counter = PendingCounter(store)
    decided, known_open = counter._load()
    learnt = False
    pending = conflicts = 0
    by_actor: dict[str, int] = {}
    oldest: tuple[tuple[int, str], str, str] | None = None
    pids = [pid for pid in store.queue_ids() if pid not in decided]
    for pid, data in store.queue_read(pids):
        try:
            if not data:
                continue
            if unsealed_reason(data, counter._check()) is not None:
                # Not memtui's (or the key cannot be read now): counted for no one, and read again next time
                # rather than kept as decided, so a key restored later finds memtui's own proposals again.
                continue
            p = Proposal.from_json(data)
        except (ValueError, TypeError, json.JSONDecodeError, StoreError, OSError):
            continue  # half-written: read again next time
        if p.id != pid or not isinstance(p.actor, str):
            continue
        if not p.open:
            decided.add(pid)
            known_open.pop(pid, None)
            learnt = True
            continue
        if known_open.get(pid) is None:
            known_open[pid] = skeleton(p.actor) or "?"
            learnt = True
        if p.status == "conflict":
            conflicts += 1
        else:
            pending += 1
        by_actor[p.actor] = by_actor.get(p.actor, 0) + 1
        key = oldest_first(pid)
        if oldest is None or (p.created, key) < (oldest[2], oldest[0]):
            oldest = (key, pid, p.created)
    if learnt:
        counter._save(decided, known_open)
    ranked = dict(sorted(by_actor.items(), key=lambda kv: (-kv[1], kv[0])))
    return Waiting(pending, conflicts, ranked, oldest[1] if oldest else None, oldest[2] if oldest else None)
