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

import json
import os
import stat
from pathlib import Path
from typing import Callable

from memtui.core.store import Store, StoreError

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
        from memtui.core.actors import skeleton

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
        from memtui.core.actors import skeleton
        from memtui.core.proposals import Proposal, unsealed_reason

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
            from memtui.core.seal import verifier

            self._verifier = verifier()
        return self._verifier if self._verifier is not None else (lambda *_: False)

    def _path(self) -> Path | None:
        root = self.store.local_root
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
        from memtui.core.seal import mac

        try:
            body = json.dumps({"v": CACHE_VERSION, "decided": sorted(decided), "open": known_open},
                              separators=(",", ":")).encode()
            seal = mac(_domain(path) + body)
            if seal is None:
                return  # no key: a cache no one can vouch for is not kept
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(body + b"\n" + seal.encode())
            os.replace(tmp, path)
        except (OSError, ValueError):
            pass
