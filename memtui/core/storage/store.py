"""The Store interface: where memory files, history, the audit log and the review queue live.

`Memory` (the one write path) speaks only to a Store, so the folder with git and any other backend behave the
same to the CLI, the app and the agents.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator

from memtui.core.basics.record import Frozen

ABSENT = "absent"


def content_hash(data: bytes | None) -> str:
    """The hash a proposal is computed against; `ABSENT` for a file that does not exist."""
    if data is None:
        return ABSENT
    from memtui.core.basics.digests import sha256  # OpenSSL's start is not worth paying for a file's hash

    return sha256(data).hexdigest()[:16]


class StoreError(RuntimeError):
    """A store could not do what was asked; the message says what to do. Nothing unacknowledged was kept."""


class StoreUnavailable(StoreError):
    """The store (e.g. a Redis server) is down, slow or restarting."""


class StaleWrite(StoreError):
    """A write lost a race: the file changed after this writer read it. The writer re-reads and tries again."""


class LockTimeout(TimeoutError):
    pass


class NoHistory(LookupError):
    """The memory has no recorded history to read or to undo with."""


class ExternalChange(Frozen):
    """A file that changed without memtui: its committed bytes (None if new) and its bytes now (None if gone)."""

    _not_compared = ("after_hash", "stored")
    path: str
    before: bytes | None
    after: bytes | None
    after_hash: str | None = None  # content_hash(after), when the store knows it
    # `after` as git would store it, when that is other bytes (line endings or `$Id$` an attribute converts): what
    # the review diff shows against `before`, so a CRLF file under `* text=auto` shows the lines that changed
    stored: bytes | None = None
    # Why `before` is not the file's bytes, said to the person: a file deleted before memtui ever read it
    # (memtui/core/storage/baseline.py), whose deletion is reviewed though nothing can put it back.
    note: str | None = None

    def __init__(self, path: str, before: bytes | None, after: bytes | None, after_hash: str | None = None,
                 stored: bytes | None = None, note: str | None = None) -> None:
        put = object.__setattr__
        put(self, "path", path)
        put(self, "before", before)
        put(self, "after", after)
        put(self, "after_hash", after_hash)
        put(self, "stored", stored)
        put(self, "note", note)

    @property
    def kind(self) -> str:
        if self.before is None:
            return "create"
        if self.after is None:
            return "delete"
        return "edit"


# The subject of the first commit memtui makes in a history it starts (`memtui init --git`, or history kept beside a
# folder it did not write): the start of history, not a change anyone made (Today lists no such root commit).
INIT_SUBJECT = "memtui: initialise memory root"


class Commit(Frozen):
    sha: str
    author: str
    time: float
    message: str
    files: tuple[str, ...]
    parents: tuple[str, ...] = ()

    def __init__(self, sha: str, author: str, time: float, message: str, files: tuple[str, ...],
                 parents: tuple[str, ...] = ()) -> None:
        put = object.__setattr__
        put(self, "sha", sha)
        put(self, "author", author)
        put(self, "time", time)
        put(self, "message", message)
        put(self, "files", files)
        put(self, "parents", parents)


class Store(ABC):
    """Files, history, audit and queue for one memory. Paths are relative, '/'-separated, already cleaned.

    What a store can do beyond the abstract methods is declared here with a default (`local_root`, `has_git`,
    `keeps_history`, `audit_since`, `list_dir`, `past_versions`, ...), so callers ask the store, never its type."""

    location: str

    # capabilities: each store says what it has; the defaults are those of a store with no folder and no git
    @property
    def local_root(self) -> Path | None:
        """The folder on this machine that holds the memory's files (what $EDITOR opens, what a file watcher
        watches), or None for a memory kept elsewhere (Redis)."""
        return None

    @property
    def has_git(self) -> bool:
        """A git repository keeps this memory's history (so `git` commands and hooks apply to it)."""
        return False

    @property
    def git_dir(self) -> Path | None:
        """The git directory that holds this memory's history (a remote is synced through it), or None."""
        return None

    # Where a folder memory keeps its parts (memtui.core.storage.places.Places): its state, audit log and history; None
    # for a store that is not a folder.
    places: Any = None

    @property
    def keeps_history(self) -> bool:
        """Past versions can be read (`history`, `resolve_change`, `file_at`, `blame_chunks`)."""
        return False

    def ensure_history(self) -> str | None:
        """Start history where the store keeps it itself and has none yet (a folder memtui did not make: its own
        repository beside it). Called by every surface that reads history, so the first look starts it; returns
        the first change, or None (history already there, or a store whose history is not started this way)."""
        return None

    @property
    def state_folder(self) -> Path | None:
        """The folder on this machine that holds memtui's own state for this memory (queue, intents, caches):
        `.memtui/` in a folder memtui made, beside any other folder (memtui.core.storage.places); None for a store that
        keeps it elsewhere."""
        return None

    @property
    def history_kept(self) -> str | None:
        """Where history is kept, in a few words for the app's header, when it is not where a memtui memory keeps
        it (a folder memtui did not make: "history beside the folder", "history in your git"); else None."""
        return None

    def queue_vouched(self, pid: str, data: bytes) -> str | None:
        """Why the queue file `data` of `pid` is not the one memtui last wrote in this memory, or None when it is (a
        folder memory keeps that record beside it: memtui.core.storage.queue_record). A store shared between machines
        (Redis) keeps none: any of its writers may write the queue, and the seal alone vouches."""
        return None

    def before_memtui(self, sha: str) -> bool:
        """Was commit `sha` in history already when memtui first kept this memory (a folder memtui did not make):
        the starting point of what the person's agent wrote before memtui came. A memory memtui made has none."""
        return False

    @property
    def cache_name(self) -> str:
        """What names this memory in a local cache (the search index of a memory with no `local_root`)."""
        return self.location

    def other_memories(self) -> list[tuple[str, str]]:
        """(name, location) of the other memories kept where this one is (the other prefixes of a Redis server)."""
        return []

    # files
    @abstractmethod
    def read(self, rel: str) -> bytes | None: ...

    @abstractmethod
    def write(self, rel: str, data: bytes) -> None:
        """Replace the file whole, atomically: a reader sees the old bytes or the new, never a mix."""

    @abstractmethod
    def delete(self, rel: str) -> None: ...

    @abstractmethod
    def list_files(self, pattern: str = "**/*.md") -> list[str]: ...

    def served(self, rel: str) -> bytes | None:
        """The bytes `show` and an agent's read hand out (`rel` a checked path): `read`'s, where a store's file
        can be nothing but its own (a folder store refuses a file with another name, which may lie outside it)."""
        return self.read(rel)

    def read_many(self, rels: list[str]) -> list[bytes | None]:
        """Several files at once, in order (None for a missing one). Default: one `read` each."""
        return [self.read(rel) for rel in rels]

    def pinned_root(self) -> AbstractContextManager[None]:
        """Reads inside find where the memory is once, not once per file (a reader of every file: lint). A store
        with no folder has nothing to find."""
        return nullcontext()

    _real_root: str | None = None  # set by a folder store's `pinned_root`

    @property
    def pinned_real_root(self) -> str | None:
        """The root's real path while `pinned_root` holds it, for a reader that opens the files under it itself
        (lint reads a folder's files through one descriptor of it); None for a store with no folder."""
        return self._real_root

    def forked(self) -> None:
        """In a process just forked from the one that opened this store (lint's workers): let go of what belongs to
        the parent (a git process, a connection) without closing it, so this process opens its own. Nothing for a
        store that holds none."""

    def keep_unlisted(self, path: Path) -> None:
        """Keep `path`, a file of memtui's own in the state folder, out of the memory's `git status` where that
        folder is inside the memory's work tree (lint's cache); a store with no such folder has nothing to do."""

    def read_checked(self, rel: str) -> tuple[str, bytes | None]:
        """`check_path(rel)` and the bytes at that path: a store whose `read` checks the path as `check_path` does
        checks it once (a reader of every file, lint, did it twice per file)."""
        path = self.check_path(rel)
        return path, self.read(path)

    def file_states(self, paths: list[str] | None = None) -> dict[str, tuple[str, int]]:
        """{path: (content hash, length)} of every file (or of those of `paths` that exist): how a search index
        fed by this store tells which files changed. Default: hash the bytes read."""
        import hashlib

        rels = self.list_files("*") if paths is None else sorted(set(paths))
        out: dict[str, tuple[str, int]] = {}
        for rel, data in zip(rels, self.read_many(rels)):
            if data is not None:
                out[rel] = (hashlib.sha1(data).hexdigest(), len(data))
        return out

    def list_dir(self, rel: str = "") -> list[tuple[str, bool]]:
        """(name, is a folder) of the markdown files and folders directly under folder `rel` ('' for the top),
        unordered. Default: from `list_files`, so a store without folders shows the folders its paths imply."""
        prefix = rel + "/" if rel else ""
        found: dict[str, bool] = {}
        for f in self.list_files("**/*.md"):
            if f.startswith(prefix):
                head, sep, _ = f[len(prefix):].partition("/")
                if head:
                    found[head] = found.get(head, False) or bool(sep)
        return list(found.items())

    @abstractmethod
    def check_path(self, rel: str) -> str:
        """Return the cleaned path, or raise `PathRefused`."""

    def real_path(self, rel: str) -> str:
        """The file a write to `rel` really changes (a folder's symlink leads elsewhere); what a diff should name."""
        return self.check_path(rel)

    # concurrency
    @contextmanager
    def lock(self, timeout: float = 30.0) -> Iterator[None]:
        """A lock that every writer of this memory, in any process, honours: exclusive across threads too, and
        re-entrant within one thread. Subclasses set `_local` (threading.local) and `_thread_lock` (RLock) and
        provide `_process_lock`."""
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            try:
                yield
            finally:
                self._local.depth -= 1
            return
        if not self._thread_lock.acquire(timeout=timeout):
            raise LockTimeout("another thread holds the memory lock")
        try:
            with self._process_lock(timeout):
                self._local.depth = 1
                try:
                    yield
                finally:
                    self._local.depth = 0
        finally:
            self._thread_lock.release()

    @abstractmethod
    def _process_lock(self, timeout: float) -> AbstractContextManager[None]:
        """The cross-process (or cross-machine) part of `lock`."""

    # history
    @abstractmethod
    def commit(self, paths: list[str], message: str, author: str, committer: str | None = None,
               allow_empty: bool = False, contents: dict[str, bytes | None] | None = None) -> str | None:
        """Record the current state of `paths` as one change; return its id (None where there is no history).

        `contents` overrides what is recorded for some of `paths` (bytes, or None for deleted): the approved
        change of a file whose bytes in the store also carry a pending external change."""

    @abstractmethod
    def committed(self, rel: str) -> bytes | None:
        """The file as of the last recorded change."""

    def review_base(self, rel: str) -> bytes | None:
        """What a write to `rel` is planned and reviewed against: the last recorded version where there is a
        history (a pending external change is not part of it), else the current bytes."""
        return self.read(rel)

    @property
    def shows_recorded(self) -> bool:
        """`show` and the agents' reads serve the review base, not the bytes as they are: true for a store with no
        working copy of a person's (Redis), where bytes past the last recorded change are a raw write or a crashed
        writer's, not anyone's reviewed work. A folder's working copy is the person's own, shown as it is."""
        return False

    def review_bases(self, rels: list[str]) -> dict[str, bytes | None]:
        """`review_base` of each of `rels` (cleaned paths), for a reader that loads several files at once; a store
        may fetch them together (the folder asks git once)."""
        return {rel: self.review_base(rel) for rel in rels}

    @abstractmethod
    def external_changes(self, paths: Collection[str] | None = None) -> list[ExternalChange]:
        """Files whose bytes differ from their last recorded change (changed outside memtui); with `paths`, only
        those of `paths` (memory-relative files), as a full listing would show them."""

    def restore(self, rel: str) -> None:
        """Put a file back as it was last recorded (deleting it if it never was)."""
        data = self.committed(rel)
        if data is None:
            self.delete(rel)
        else:
            self.write(rel, data)

    def head(self) -> Commit | None:
        """The last recorded change (files left empty), or None where there is no history."""
        return None

    def check_change(self, contents: dict[str, bytes | None], record: bool = True) -> None:
        """Refuse (StoreError), before anything is written, a change the history's own state cannot take now:
        `contents` is what each path will hold (None: removed), `record` whether it is committed. Default: none
        (a folder with git refuses while a person's merge is in progress or a version they staged would be lost)."""

    def undo_point(self, rels: list[str]) -> Any:
        """Keep what `rels` hold now, so `undo` can put it back when a write fails halfway. Default: their bytes."""
        return {rel: self.read(rel) for rel in rels}

    def undo(self, point: Any) -> None:
        """Put back what `undo_point` kept."""
        for rel, data in point.items():
            try:
                if data is None:
                    self.delete(rel)
                else:
                    self.write(rel, data)
            except StaleWrite:
                pass  # another writer's bytes are there, not ours (our write lost the race): keep them

    def drop_undo_point(self, point: Any) -> None:
        """The write went through: forget what `undo_point` kept."""

    def intent_save(self, data: bytes | None) -> None:
        """Record (or, with None, clear) the change being applied, so a crash midway can be finished or undone.
        Default: no journal (a store whose writes are one atomic step needs none)."""

    def intent_load(self) -> bytes | None:
        return None

    def keep_rejected(self, rel: str, data: bytes, stamp: str) -> str | None:
        """Keep bytes a person rejected where they can be recovered; return where. Default: audit log only."""
        return None

    @abstractmethod
    def history(self, rel: str | None = None, since: float | None = None) -> list[Commit]: ...

    def changes_since(self, since: float, known: set[str]) -> list[Commit]:
        """The recorded changes since `since` (a timestamp) that are not in `known`, with their files, newest
        first: what happened that the caller (today's audit lines) does not account for. Default: `history`."""
        return [c for c in self.history(since=since) if c.sha not in known]

    # past versions: what history, blame and undo (memtui.core.timeline.history) read; a store without them has none
    def resolve_change(self, ref: str) -> Commit | None:
        """The recorded change `ref` names (with its parents and the files it touched), or None if there is none.
        Raises `NoHistory` where nothing is recorded."""
        raise NoHistory(f"{self.location} keeps no history of its changes")

    def file_at(self, rel: str, change: str) -> bytes | None:
        """The file as that recorded change left it (None: it did not exist then)."""
        raise NoHistory(f"{self.location} keeps no history of its changes")

    def blame_chunks(self, rel: str) -> list[tuple[Commit | None, list[str]]] | None:
        """The file as it is now, in runs of lines with the change that wrote each run (None: not recorded yet);
        None when the file was never recorded."""
        raise NoHistory(f"{self.location} keeps no history of its changes")

    def change_patches(self, changes: list[str]) -> dict[str, dict[str, str]]:
        """Each recorded change's unified diff, split per file: {change: {path: patch}}."""
        return {}

    def change_patch(self, change: str, rel: str) -> str:
        """One recorded change's diff of one file ("" when it did not touch it). Default: from `change_patches`."""
        return self.change_patches([change]).get(change, {}).get(rel, "")

    def past_versions(self, rel: str, limit: int) -> list[tuple[str, bytes]]:
        """(change, bytes) of `rel` as each of its last `limit` recorded changes left it, newest first, each
        distinct version once; [] where nothing is recorded. Default: `history` and `file_at`."""
        if not self.keeps_history:
            return []
        out: list[tuple[str, bytes]] = []
        seen: set[bytes] = set()
        for c in self.history(rel)[:limit]:
            data = self.file_at(rel, c.sha)
            if data is not None and data not in seen:
                seen.add(data)
                out.append((c.sha, data))
        return out


    def past_version_ids_many(self, rels: list[str], limit: int) -> dict[str, list[tuple[str, str]]] | None:
        """{rel: [(change id, version id), ...]}, newest first, the versions `past_versions_many` would give, named
        without reading them; None for a store that cannot name a version by its content (then a reader keeps
        nothing by version: lint's cache is not used)."""
        return None

    def past_versions_many(self, rels: list[str], limit: int, current: Callable[[str], bytes | None] | None = None,
                           found: dict[str, list[tuple[str, str]]] | None = None,
                           ) -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
        """`past_versions` of each of `rels`, in that order, one file at a time (a reader of every file's history
        holds one file's). A store that can read many histories in one walk overrides it: asked file by file, a
        folder's git parsed its whole tree again for each (lint of 8,000 files: 221 s). `current(rel)`, asked once
        a file's turn comes, is the bytes the reader holds of it: a store that can tell a version is those bytes
        by its id alone gives them back instead of reading them again (the same bytes either way). `found`, the
        answer of `past_version_ids_many` where it has one, spares that store a second walk."""
        for rel in rels:
            yield rel, self.past_versions(rel, limit)

    def merge3(self, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
        """Three-way merge of two changes to `base`; None when they touch the same lines."""
        from memtui.core.storage.merge3 import merge3

        return merge3(ours, base, theirs)

    # audit log
    @abstractmethod
    def audit_append(self, record: dict[str, Any]) -> None: ...

    @abstractmethod
    def audit_records(self) -> Iterator[dict[str, Any]]: ...

    def audit_since(self, cursor: Any, backlog: int | None = None) -> tuple[list[dict[str, Any]], Any]:
        """The audit records added after `cursor` (None: from the start; with `backlog`, only the last that many
        records), and the cursor to pass next time: how a reader tails the log without reading it whole. Default:
        the record count as the cursor (a log that shrank is read again from the top)."""
        records = list(self.audit_records())
        start = cursor if isinstance(cursor, int) and cursor <= len(records) else 0
        new = records[start:]
        return (new[-backlog:] if backlog is not None else new), len(records)

    # review queue
    @abstractmethod
    def next_proposal_number(self) -> int: ...

    def numbering(self) -> AbstractContextManager[None]:
        """Held while a proposal is numbered and its queue file saved, where the number alone does not keep it
        from another writer's (a folder's `.seq` is only a floor an agent can reset: `FolderStore`). A store whose
        numbers are atomic (Redis INCR) needs no lock for it."""
        return nullcontext()

    @abstractmethod
    def queue_save(self, pid: str, data: bytes) -> None: ...

    @abstractmethod
    def queue_load(self, pid: str) -> bytes | None: ...

    @abstractmethod
    def queue_ids(self) -> list[str]: ...

    def queue_read(self, pids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """Each of `pids` with its queue file's bytes (None as `queue_load` gives it), in the order asked and one at
        a time: a reader of 100,000 proposals holds one. A store with a cheaper way to read many overrides it."""
        for pid in pids:
            yield pid, self.queue_load(pid)

    def queue_stamps(self) -> dict[str, tuple[int, ...]] | None:
        """`queue_ids` with, for each, a stamp that changes whenever its saved bytes may have: a reader keeps what
        it learnt of a proposal (decided, so never shown as open again) for as long as the stamp stays. None
        where the store has none (every proposal is then read each time)."""
        return None

    # config
    @abstractmethod
    def config_text(self) -> str | None:
        """The text of the memory's config (`.memtui/config.toml` of a folder), or None when there is none."""

    def reviewed_config(self) -> tuple[str | None, str | None]:
        """(the config text in effect, the text of an edit not yet reviewed or None). Where the store keeps history
        the config in effect is the committed one: an edit of the file written past memtui (an agent planting an
        apply-all rule, a key map, `hooks = false`) takes effect only once a person commits it."""
        return self.config_text(), None

    @abstractmethod
    def set_config(self, text: str) -> None: ...


class StorePart:
    """A part a folder store is composed of (its commit engine, git's index, the review of changes made past memtui),
    holding the store (memtui.core.storage.folder.FolderStore, not imported: it imports its parts) and reading its
    root, git folder and history each time: `memtui init --git` moves them."""

    def __init__(self, store: Any) -> None:
        self.store = store

    @property
    def root(self) -> Path:
        return self.store.root

    @property
    def git_dir(self) -> Path:
        return self.store.git_dir

    @property
    def has_git(self) -> bool:
        return self.store.has_git
