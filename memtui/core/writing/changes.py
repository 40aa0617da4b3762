"""The memory's one change event: `subscribe(callback)`, fed by one watcher per root and by memtui's own writes.

Three sources say that a memory changed: a watch on a folder (another process, an editor, git: `direct_watch`), the
event channel of a Redis memory (other processes' writes and raw SETs), and this process's own writes through
`Memory`. They all arrive here, per memory location, as `Change` events:

- `subscribe(callback)` gets one `Change` per burst (an atomic write is several file events; an agent's burst of
  writes is many), from a background thread. A person's own write is exactly one event, delivered when it has
  committed: while it runs, what the watcher sees of it is held back and folded into that one event.
- `subscribe(callback, raw=True)` gets every classified file event at once, in the watcher's thread and in order:
  what a search index needs to re-check only what changed (and the change journal for other processes).

There is one watcher per root in the process however many subscribe (the app, its Search pane, an MCP server's
index): it starts with the first subscriber that asks to watch and stops with the last. Nothing here knows
about Textual; the app turns each event into one message.
"""

from __future__ import annotations

import os
import secrets
import stat
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from memtui.core.basics.record import Frozen
from memtui.core.writing.own_writes import emits_change  # noqa: F401  (where it was)

STATE_DIR = ".memtui"
COOKIES = STATE_DIR + "/index.sqlite-cookies"  # shared with memtui.core.storage.fsmonitor's readers
OWN_COOKIE = "own-"  # a writer's barrier cookie (see `FolderFeed.barrier`), never a journal reader's

QUIET = 0.04  # seconds without events that end a burst
SETTLED = 0.003  # the quiet that ends a burst whose last event finished a write (a rename into place, a close)
CEILING = 0.25  # a burst is flushed at the latest this long after its first event
HOLD_MAX = 2.0  # what the watcher saw is held back for an own write at most this long (counted from the first
# thing it saw: a write waiting for the memory's lock, behind the app's own read of the folder, has written nothing)
BARRIER_WAIT = 1.5  # seconds a finished write waits for the watcher to have seen all of it (the watch holds an
# unpaired rename's first half, and every event behind it, for up to 0.5 s: `inotify_watch.PAIRING`)



class Change(Frozen):
    """What changed in a memory.

    `paths` are memory files (relative, '/'-separated; a folder ends with '/'); `queue`: a proposal was queued or
    decided; `audit`: the audit log grew; `own`: this process's write through `Memory`; `everything`: what changed
    cannot be named file by file (a folder moved, a reconnect, the watcher just started); `connected` is False when
    a store was lost (with `message`) and True when it is back. `cookie` is for raw subscribers only."""

    paths: frozenset[str]
    queue: bool
    audit: bool
    own: bool
    everything: bool
    connected: bool | None
    message: str
    cookie: str

    def __init__(self, paths: frozenset[str] = frozenset(), queue: bool = False, audit: bool = False,
                 own: bool = False, everything: bool = False, connected: bool | None = None, message: str = "",
                 cookie: str = "") -> None:
        put = object.__setattr__
        put(self, "paths", paths)
        put(self, "queue", queue)
        put(self, "audit", audit)
        put(self, "own", own)
        put(self, "everything", everything)
        put(self, "connected", connected)
        put(self, "message", message)
        put(self, "cookie", cookie)


Callback = Callable[[Change], object]


def classify(root: Path, path: str) -> tuple[str, str] | None:
    """The one rule for which paths under a memory root matter: ("file"|"queue"|"audit"|"cookie"|"intent", rel),
    else None.

    "file" is any path outside hidden folders (a search index re-checks it); the app shows the `.md` ones. The
    "intent" file stands while any memtui process writes (memtui.core.writing.memory's intent journal)."""
    from memtui.core.storage.folder import AUDIT_FILE, INTENT_FILE  # imported here: a Redis memory has none

    try:
        rel = Path(path).relative_to(root).as_posix()
    except ValueError:
        return None
    if rel in (".", ""):
        return None
    name = rel.rsplit("/", 1)[-1]
    if rel == AUDIT_FILE:
        return ("audit", rel)
    if rel == STATE_DIR + "/queue":
        # The queue folder appears with the first proposal; its file can land before the new folder is watched.
        return ("queue", rel)
    if rel.startswith(STATE_DIR + "/queue/"):
        return ("queue", rel) if name.endswith(".json") and not name.startswith(".") else None
    if rel.startswith(COOKIES + "/"):
        return ("cookie", rel[len(COOKIES) + 1:])
    if rel == f"{STATE_DIR}/{INTENT_FILE}":
        return ("intent", rel)
    if rel.startswith((".git/", STATE_DIR + "/")) or rel in (".git", STATE_DIR):
        return None
    if name.startswith(".") or any(part.startswith(".") for part in rel.split("/")[:-1]):
        return None
    return ("file", rel)


def classify_state(state: Path, path: str) -> str | None:
    """For a memory whose state is kept beside it (memtui.core.storage.places): what a path in its state folder is, as
    `classify` names the same paths under `.memtui/` ("queue", "audit", "intent"), else None."""
    from memtui.core.storage.folder import AUDIT_FILE, INTENT_FILE

    try:
        rel = Path(path).relative_to(state).as_posix()
    except ValueError:
        return None
    name = rel.rsplit("/", 1)[-1]
    if rel == AUDIT_FILE:
        return "audit"
    if rel == "queue" or (rel.startswith("queue/") and name.endswith(".json") and not name.startswith(".")):
        return "queue"
    return "intent" if rel == INTENT_FILE else None


def shown(rel: str, is_dir: bool) -> bool:
    """Does the app show this path (a memory file or a folder of them)?"""
    return is_dir or rel.endswith(".md")


# watchdog logs this (at ERROR, so Python prints it to stderr) when an event arrives while an emitter is being
# stopped: its reader finds its watches already released and returns as if there were no event (watchdog PR #963).
# It is only ever logged after stop(), for an event nobody is listening for any more: not a failure to report.
STOPPED_EMITTER = "InotifyEmitter.queue_events() called when the thread is inactive"


def _quiet(record: Any) -> bool:
    """A logging filter (a callable is one): logging is imported with watchdog, not by every write's process."""
    return record.getMessage() != STOPPED_EMITTER


def _quiet_stops() -> None:
    import logging

    log = logging.getLogger("watchdog.observers.inotify")
    if _quiet not in log.filters:
        log.addFilter(_quiet)


def observer() -> Any:
    """A new watchdog Observer (a daemon thread), whose stop() leaves nothing on stderr."""
    from watchdog.observers import Observer

    _quiet_stops()
    made = Observer()
    made.daemon = True
    return made


SUB_EVENTS = 256  # files and folders named one by one under a folder moved in or renamed; past that, "everything"


def hardened_walk() -> bool:
    """Does the folder watch here walk without following links (memtui's own inotify watch,
    `memtui.core.storage.inotify_watch`)? On Linux it needs the `inotify_simple` binding; without it, and on other
    systems, watchdog's Observer watches (`memtui doctor` says so on Linux, where an agent's planted link can lead its
    walk astray)."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import inotify_simple  # noqa: F401
    except ImportError:
        return False
    return True


def direct_watch(feed: "FolderFeed", path: str) -> Any:
    """A started watch of `path` (recursive) telling `feed`: memtui's own inotify watch on Linux (events handled on
    its thread, a walk that follows no link), else watchdog's Observer (its public API only: FSEvents, kqueue,
    ReadDirectoryChangesW, or inotify where the binding is missing)."""
    import sys

    if sys.platform.startswith("linux"):
        try:
            from memtui.core.storage.inotify_watch import FolderWatch

            made: Any = FolderWatch(path, feed.event, unnamed=feed.overflowed,
                                    rebuilt=lambda: feed.overflowed(rebuilt=True), sub_events=SUB_EVENTS)
        except (ImportError, OSError):
            pass  # no binding, or no inotify instance to be had (max_user_instances): watchdog's Observer
        else:
            made.start()
            return made
    from watchdog import events as ev
    from watchdog.events import FileSystemEventHandler

    class Handler(FileSystemEventHandler):  # type: ignore[misc]
        def on_any_event(self, event: Any) -> None:
            try:
                feed.event(event)
            except Exception:  # noqa: BLE001 - an escaped error would end the Observer's thread, and the watch
                feed.overflowed()

    # Writes only: every process that reads the files (rg, a scan) would otherwise queue an open and a close event
    # per file in front of a reader's cookie. A chmod makes a file unreadable or readable again.
    writes = [ev.FileCreatedEvent, ev.DirCreatedEvent, ev.FileModifiedEvent, ev.DirModifiedEvent,
              ev.FileMovedEvent, ev.DirMovedEvent, ev.FileDeletedEvent, ev.DirDeletedEvent, ev.FileClosedEvent]
    writes += [getattr(ev, name) for name in ("FileAttribEvent", "DirAttribEvent") if hasattr(ev, name)]
    made = observer()
    made.schedule(Handler(), path, recursive=True, event_filter=writes)
    made.start()
    return made


class Burst:
    """Collects change notes from any thread and posts one `Change` per burst from its own flusher thread.

    `hold()` and `release()` bracket this process's own writes: while one runs nothing is flushed (what was noted
    is held back up to HOLD_MAX), and its release flushes everything noted meanwhile as that write's one event."""

    def __init__(self, post: Callback) -> None:
        self.post = post
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._paths: set[str] = set()
        self._queue = self._audit = self._everything = False
        self._first = self._last = 0.0
        self._quiet = QUIET
        self._holds = 0
        self._held_since = 0.0
        self._elsewhere = 0.0  # since when another process's write is under way (its intent file stands), or 0
        self._flusher: threading.Thread | None = None

    def start_flusher(self, name: str) -> None:
        self._stop.clear()
        self._flusher = threading.Thread(target=self._run, name=name, daemon=True)
        self._flusher.start()

    def add(self, paths: Iterable[str] = (), *, queue: bool = False, audit: bool = False,
            settled: bool = False, everything: bool = False) -> None:
        """Note changes; `settled` says this event finished a write (the file is whole), so a short quiet will do:
        an atomic write ends with its rename, a plain one with its close, and waiting 40 ms more showed nothing."""
        now = time.monotonic()
        with self._lock:
            self._paths.update(paths)
            self._queue = self._queue or queue
            self._audit = self._audit or audit
            self._everything = self._everything or everything
            if not self._first:
                self._first = now
            if self._holds and not self._held_since:
                self._held_since = now  # the first thing held back
            self._last = now
            self._quiet = SETTLED if settled else QUIET
        self._wake.set()

    def hold(self) -> None:
        with self._lock:
            if not self._holds:
                self._held_since = time.monotonic() if self._first else 0.0  # 0: nothing held back yet
            self._holds += 1

    def writing_elsewhere(self, under_way: bool) -> None:
        """Another memtui process began (or ended) a write: hold its file, audit and queue events as one burst."""
        with self._lock:
            self._elsewhere = time.monotonic() if under_way else 0.0
        if not under_way:
            self.add(settled=True)

    def _held(self) -> bool:
        now = time.monotonic()
        return bool(self._holds and (not self._held_since or now - self._held_since < HOLD_MAX)
                    or self._elsewhere and now - self._elsewhere < HOLD_MAX)

    def release(self, paths: Iterable[str] = (), *, queue: bool = False, audit: bool = False) -> Change | None:
        """End one hold; when it was the last, take what was noted (and `paths`) as one own `Change`."""
        with self._lock:
            self._holds = max(0, self._holds - 1)
            self._paths.update(paths)
            self._queue = self._queue or queue
            self._audit = self._audit or audit
            if self._holds:
                return None
            change = self._take(own=True)
        self._wake.set()  # the flusher goes back to waiting for the next burst
        return change

    def _take(self, *, own: bool = False) -> Change | None:
        paths, queue, audit, everything = frozenset(self._paths), self._queue, self._audit, self._everything
        self._paths, self._queue, self._audit, self._everything, self._first = set(), False, False, False, 0.0
        self._quiet = QUIET
        if not (paths or queue or audit or everything):
            return None
        return Change(paths, queue=queue, audit=audit, own=own, everything=everything)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            while not self._stop.is_set():
                with self._lock:
                    first, last, quiet = self._first, self._last, self._quiet
                    held = self._held()
                if not first:
                    break  # a release took the burst
                now = time.monotonic()
                if not held and (now - last >= quiet or now - first >= CEILING):
                    break
                wait = 0.01 if held else min(quiet - (now - last), CEILING - (now - first), quiet)
                # Woken by the next note: a write's close or rename shortens the quiet it waits for.
                if self._wake.wait(max(wait, 0) + 0.0005):
                    self._wake.clear()
            with self._lock:
                change = None if self._held() else self._take()
            if change is not None and not self._stop.is_set():
                self.post(change)

    def stop_flusher(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._flusher is not None:
            if self._flusher is not threading.current_thread():  # a subscriber's callback stopping the watch
                self._flusher.join(timeout=2)
            self._flusher = None


class _Kept:
    """The cookie folder's descriptor kept open, its (dev, inode), and how many barriers use it now."""

    __slots__ = ("fd", "ident", "users", "retired")

    def __init__(self, fd: int, ident: tuple[int, int]) -> None:
        self.fd, self.ident, self.users, self.retired = fd, ident, 0, False


class FolderFeed:
    """The one watch of a folder memory (`direct_watch`): classifies each event once, tells raw subscribers and the
    change journal at once, and notes it in the burst for everyone else."""

    def __init__(self, root: Path, hub: "Changes") -> None:
        self.root = Path(root).absolute()
        self.hub = hub
        self.burst = Burst(hub._deliver)
        self.publisher: Any = None
        self._publishers = 0
        self._observer: Any = None
        self._barriers: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._cookies: _Kept | None = None  # the cookie folder kept open
        self._cookie_lock = threading.Lock()
        self._state_watch: Any = None  # the state folder's watch, for a memory whose state is kept beside it
        self._cookie_path = os.path.join(str(self.root), COOKIES)
        self._state_path = os.path.join(str(self.root), STATE_DIR)
        # Files under no memory name (hidden, git's, memtui's) written and gone before their write was handled, by
        # path (the watch's one thread keeps it): see `_unnamed_write`.
        self._gone_writes: set[str] = set()
        # ... but for the search index's own files, written and removed on every refresh (its clock probe): told
        # as "everything", each refresh would make the next one a walk of every file.
        self._index_files = os.path.join(self._state_path, "index.sqlite")

    def start(self) -> None:
        try:
            from memtui.core.storage.fsmonitor import cookie_folder

            # Made before the watch: a cookie in a folder made after it could be missed while it is being watched.
            os.close(cookie_folder(self.root))
        except OSError:
            pass  # a read-only memory: no barrier, so an own write's late echo may be a second event
        self._observer = direct_watch(self, str(self.root))
        self._watch_state()
        self.burst.start_flusher("memtui-changes-flush")

    def _watch_state(self) -> None:
        """A memory whose state is kept beside its folder (memtui.core.storage.places) is heard there too: proposals,
        the audit log and the intent of another process's write land in the state folder, not under the root."""
        from memtui.core.storage.places import PlaceRefused, places_for

        places = places_for(self.root)
        if places.inside:
            return
        try:
            places.ready()
            (places.state / "queue").mkdir(exist_ok=True)  # watched from the start: its first file is heard
        except (OSError, PlaceRefused):
            return  # a state folder refused: every write says so; nothing to hear
        feed, state = self, places.state

        class StateFeed:  # what direct_watch tells: the state folder's events, and a watch that lost some
            def event(self, event: Any) -> None:
                feed.state_event(state, event)

            def overflowed(self, rebuilt: bool = False) -> None:
                feed.overflowed(rebuilt=rebuilt)

        self._state_watch = direct_watch(StateFeed(), str(state))  # type: ignore[arg-type]

    def state_event(self, state: Path, event: Any) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        src = os.fsdecode(event.src_path)
        dest = os.fsdecode(getattr(event, "dest_path", "") or "")
        for path in (src, dest):
            what = classify_state(state, path) if path else None
            if what is not None:
                self._bookkeeping(what, kind, path == dest or kind == "closed",
                                  arrived=path == dest or kind == "created")

    def _bookkeeping(self, what: str, kind: str, settled: bool, *, arrived: bool) -> None:
        """One event on memtui's own files, inside the root or in the state folder beside it: a queue file (a
        proposal or a decision), the audit log (an applied change), or another process's intent (a write under
        way while it stands)."""
        if what == "queue":
            self.burst.add(queue=True, settled=settled)
        elif what == "audit":
            self.burst.add(audit=True)
        elif what == "intent":
            if arrived:
                self.burst.writing_elsewhere(True)
            elif kind == "deleted":
                self.burst.writing_elsewhere(False)

    def overflowed(self, rebuilt: bool = False) -> None:
        """Events were dropped: what changed can no longer be named file by file. After the watches were `rebuilt`,
        the barriers waiting now are let go once that is told: every event before it is covered by it (any still
        queued came under a watch since replaced, and no watch answers to it: their cookies may be among them). An
        event this code failed to handle covers only itself: the events after it are still to come."""
        with self._lock:
            waiting = list(self._barriers.values()) if rebuilt else []
        publisher = self.publisher
        if publisher is not None:
            publisher.everything()
        self.hub._deliver_raw(Change(everything=True))
        self.burst.add(queue=True, audit=True, everything=True)
        for seen in waiting:
            seen.set()

    @property
    def running(self) -> bool:
        return self._observer is not None

    def event(self, event: Any) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        src = os.fsdecode(event.src_path)
        dest = os.fsdecode(getattr(event, "dest_path", "") or "")
        if not dest and self._barrier_event(kind, src, event.is_directory):
            return
        # A folder's chmod can hide or show every file under it.
        folder = event.is_directory and kind in ("moved", "deleted", "created", "attrib")
        # A `.git` made, removed or renamed in a folder of the memory makes that folder a nested repository or a
        # memory folder again (`memtui.core.recall.index.walk`): every file under it comes or goes, unnamed.
        unnamed = kind in ("moved", "deleted", "created") and any(
            path and os.path.basename(path) == ".git" and os.path.dirname(path) != str(self.root)
            and classify(self.root, os.path.dirname(path) + "/x") is not None for path in (src, dest))
        if not unnamed and not event.is_directory and kind in ("created", "moved"):
            # A new name for a file that has others (a hard link, here or in a hidden folder): a write through
            # one name is heard under that name only, so the index must learn every name of it (a walk does).
            unnamed = _linked(dest if kind == "moved" else src)
        if not unnamed and not event.is_directory:
            unnamed = self._unnamed_write(kind, src, dest)
        files: list[str] = []
        for path, settled in ((src, kind == "closed"), (dest, True)):
            if not path:
                continue
            found = classify(self.root, path)
            if found is None:
                continue
            what, rel = found
            if what == "queue" and event.is_directory and kind == "modified":
                # The queue folder's own mtime: what changed in it comes as its files' events. Alone it is a
                # reader's cache written beside the proposals (`pending.CACHE_FILE`), no change to the queue: told
                # as one, it came as a second event of a chat's write that counted the queue just before.
                continue
            if what == "cookie":
                if kind == "created":
                    self._cookie(rel)
                elif kind == "modified" and not event.is_directory:
                    # Bytes written into a cookie, which nobody writes (a barrier's is made read-only, a reader's is
                    # closed unwritten): a hard link to a memory file planted under a cookie's name, written
                    # through, maybe removed before its creation was handled (then `_linked` found nothing).
                    unnamed = True
            elif what in ("queue", "audit", "intent"):
                self._bookkeeping(what, kind, settled, arrived=path == dest or kind == "created")
            else:
                files.append(rel)
                if shown(rel, event.is_directory):
                    # A rename's destination and a closed-after-write file are whole: the burst may end soon.
                    self.burst.add([rel + ("/" if event.is_directory else "")], settled=settled)
        if unnamed:
            publisher = self.publisher
            if publisher is not None:
                publisher.everything()
            self.hub._deliver_raw(Change(everything=True))
        if files:
            publisher = self.publisher
            if publisher is not None and (folder or not event.is_directory):  # a folder's "modified" names no file
                if folder:
                    publisher.everything()
                else:
                    publisher.changed(files)
            self.hub._deliver_raw(Change(frozenset(files), everything=folder))

    def _unnamed_write(self, kind: str, src: str, dest: str) -> bool:
        """Was a file under no memory name written and then removed, so that it may have been a hard link to a
        memory file (made in a hidden folder, `.git` or `.memtui`, written through and removed before its creation
        was handled: `_linked` found nothing then, and the write was heard under that name only)? Every file may
        have changed then. A file found gone when its write is handled is remembered; its removal says "maybe";
        its rename (an atomic write's temporary file: `.MEMORY.md.x.tmp` to `MEMORY.md`) says nothing, the bytes
        having a name of their own. Only a watch running late pays for it: one handled in time finds the file."""
        gone = self._gone_writes
        if kind in ("modified", "closed"):
            if (classify(self.root, src) is None and not src.startswith(self._index_files)
                    and not os.path.lexists(src)):
                if len(gone) >= GONE_WRITES_MAX:
                    gone.clear()
                    return True
                gone.add(src)
            return False
        if kind == "deleted" and src in gone:
            gone.discard(src)
            return True
        if kind == "moved" and src in gone:
            gone.discard(src)
            if classify(self.root, dest) is None and not os.path.lexists(dest):
                gone.add(dest)  # moved on to another hidden name, gone too: its removal is yet to come
        return False

    def _barrier_event(self, kind: str, src: str, is_dir: bool) -> bool:
        """Handle at once what a barrier makes (the three events each costs the watcher's thread, while the query
        it waited for runs): its cookie's creation and removal, and the cookie folder's "modified". True when
        handled; a cookie with another name (a hard link planted under a cookie's name) is for `event`'s rules."""
        folder = self._cookie_path
        if not src.startswith(folder):
            return False
        if src == folder:
            return is_dir and kind == "modified"  # names no file
        name = src[len(folder) + 1:]
        if is_dir or src[len(folder)] != os.sep or not name.startswith(OWN_COOKIE) or os.sep in name:
            return False
        if kind == "deleted":
            return True
        if kind == "created":
            with self._lock:
                waiting = self._barriers.get(name)
            # Only a barrier's own, waited-for cookie: any other file under such a name (one planted by an agent,
            # or a barrier's whose wait ended) is for `event`'s rules.
            if waiting is not None and not _linked(src):
                waiting.set()
                return True
        return False

    def _cookie(self, name: str) -> None:
        if name.startswith(OWN_COOKIE):
            with self._lock:
                waiting = self._barriers.get(name)
            if waiting is not None:
                waiting.set()
            return
        publisher = self.publisher
        if publisher is not None:
            # A reader asking "is all before this journaled?": events arrive in order, so it is, now.
            publisher.cookie(name)

    def barrier(self, timeout: float = BARRIER_WAIT) -> bool:
        """Wait until the watcher has seen every event before now: a cookie file's creation comes after them."""
        made = self._observer
        if made is None:
            return False
        alive = getattr(made, "alive", None)
        if alive is not None and not alive():
            return False  # its cookie would never be heard: not a whole BARRIER_WAIT per query for nothing
        name = OWN_COOKIE + secrets.token_hex(8)
        seen = threading.Event()
        with self._lock:
            self._barriers[name] = seen
        kept: _Kept | None = None
        made = heard = False
        try:
            with self._cookie_lock:
                kept = self._cookie_folder()
                kept.users += 1
                # Opened for reading: its close is no event the watch asks for (a close after writing was one more
                # event for the watcher's thread to handle per barrier).
                os.close(os.open(name, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                                 dir_fd=kept.fd))
                made = True
            heard = seen.wait(timeout)
            return heard
        except OSError:
            return False
        finally:
            with self._lock:
                self._barriers.pop(name, None)
            with self._cookie_lock:
                if kept is not None:
                    # Through the descriptor it was made through, kept open while a barrier uses it even if another
                    # barrier let the folder go meanwhile (moved into the memory: its cookie is not left there,
                    # and a descriptor number the kernel gave again to the new folder is never taken for it).
                    if made:
                        try:
                            os.unlink(name, dir_fd=kept.fd)
                        except OSError:
                            pass
                    kept.users -= 1
                    if kept.retired and not kept.users:
                        os.close(kept.fd)
                if not heard:
                    self._forget_cookie_folder()  # moved or replaced meanwhile: the next barrier opens it again

    def _cookie_folder(self) -> "_Kept":
        """The cookie folder's descriptor, kept open between barriers while the folder at its path is still the one
        opened (one lstat, not the seven calls that reach it again without following a link,
        `fsmonitor.cookie_folder`). Under `_cookie_lock`, which every use of the descriptor holds: it is never
        closed while a barrier makes or removes its cookie through it."""
        from memtui.core.storage.fsmonitor import cookie_folder

        kept = self._cookies
        if kept is not None:
            try:
                # `.memtui` itself a folder, not a link: an lstat of the cookie folder's path follows a link on the
                # way, so `.memtui` moved into the memory (`notes/`) and replaced by a link to it would still name
                # the folder kept, and the cookie would be made (and heard) as a memory file there. A folder has
                # one parent: a real `.memtui` holding the kept folder is the place.
                state = os.lstat(self._state_path)
                st = os.lstat(self._cookie_path) if stat.S_ISDIR(state.st_mode) else None
            except OSError:
                st = None
            if st is not None and (st.st_dev, st.st_ino) == kept.ident:
                return kept
            self._forget_cookie_folder()
        if self._observer is None:
            raise OSError("the watch stopped")
        fd = cookie_folder(self.root)
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        self._cookies = _Kept(fd, (st.st_dev, st.st_ino))
        return self._cookies

    def _forget_cookie_folder(self) -> None:
        """Let the kept cookie folder go (under `_cookie_lock`): closed now, or by the last barrier using it."""
        kept, self._cookies = self._cookies, None
        if kept is not None:
            kept.retired = True
            if not kept.users:
                os.close(kept.fd)

    def publish(self) -> Any:
        """Journal every change for other processes (`memtui.core.storage.fsmonitor`) while someone asks; the Publisher,
        or None when another process already publishes for this root."""
        with self._lock:
            self._publishers += 1
            if self.publisher is None and self._observer is not None:
                from memtui.core.storage.fsmonitor import Publisher

                # Started once the watch is in place: a reader's cookie is only ever answered by a watching process.
                publisher = Publisher(self.root)
                if publisher.start():
                    self.publisher = publisher
            return self.publisher

    def unpublish(self) -> None:
        with self._lock:
            self._publishers = max(0, self._publishers - 1)
            if self._publishers or self.publisher is None:
                return
            publisher, self.publisher = self.publisher, None
        publisher.stop()

    def stop(self) -> None:
        """Stop watching and join both threads (the observer first: no event is noted once the flusher is gone)."""
        with self._lock:
            publisher, self.publisher, self._publishers = self.publisher, None, 0
        if publisher is not None:
            publisher.stop()
        made, self._observer = self._observer, None
        beside, self._state_watch = self._state_watch, None
        for watch in (made, beside):
            if watch is not None:
                watch.stop()
                try:
                    watch.join(timeout=2)
                except RuntimeError:
                    pass  # stopped from the Observer's own thread (a handler's callback): it ends as that returns
        with self._cookie_lock:
            self._forget_cookie_folder()
        self.burst.stop_flusher()


class StoreFeed:
    """The event channel of a memory kept in Redis, turned into the same bursts: memtui's writes from any process,
    raw SETs and DELs (keyspace events), and the outage and return of the server."""

    def __init__(self, store: Any, hub: "Changes") -> None:
        self.store = store
        self.hub = hub
        self.burst = Burst(hub._deliver)
        self.publisher = None
        self._sub: Any = None
        self._marks: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        self.burst.start_flusher("memtui-redis-changes-flush")
        self._sub = self.store.subscribe(self.note, keyspace=True)
        self._sub.connected.wait(2.0)  # events before the subscription are not heard: until then, walk

    @property
    def running(self) -> bool:
        return self._sub is not None

    def note(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "mark":
            with self._lock:
                waiting = self._marks.get(str(event.get("id")))
            if waiting is not None:
                waiting.set()
            return
        if kind == "disconnected":
            self.hub._deliver(Change(connected=False, message=str(event.get("message", ""))))
            self.hub._deliver_raw(Change(everything=True))
            return
        if kind == "connected":
            # After an outage anything may have changed: the audit, the queue, every file.
            self.hub._deliver_raw(Change(everything=True))
            self.hub._deliver(Change(queue=True, audit=True, everything=True, connected=True))
            return
        files = event.get("files") if isinstance(event.get("files"), list) else (
            [event["file"]] if isinstance(event.get("file"), str) else [])
        files = [f for f in files if isinstance(f, str) and f]
        if files:
            self.hub._deliver_raw(Change(frozenset(files)))
        # A recorded change means an audit line and maybe a decided proposal.
        recorded = kind in ("change", "queue")
        self.burst.add(files, queue=recorded, audit=recorded)

    def barrier(self, timeout: float = BARRIER_WAIT) -> bool:
        """Wait until every event published before now has come back on the subscription (a mark after them)."""
        sub = self._sub
        if sub is None or not sub.connected.is_set():
            return False
        token = secrets.token_hex(8)
        heard = threading.Event()
        with self._lock:
            self._marks[token] = heard
        try:
            self.store.mark(token)
            return heard.wait(timeout)
        except Exception:
            return False
        finally:
            with self._lock:
                self._marks.pop(token, None)

    def publish(self) -> None:
        return None

    def unpublish(self) -> None:
        pass

    def stop(self) -> None:
        self.burst.stop_flusher()
        sub, self._sub = self._sub, None
        if sub is not None:
            sub.stop()


class Changes:
    """The change event of one memory location, shared by every `Memory` on it in this process."""

    def __init__(self, key: str, make_feed: Callable[["Changes"], Any]) -> None:
        self.key = key
        self._make_feed = make_feed
        self._lock = threading.RLock()
        self._subs: list[Callback] = []
        self._raw: list[Callback] = []
        self._watching = 0
        self.feed: Any = None
        self.store: Any = None  # a store-kept memory's store, which its feed subscribes to
        self._local = threading.local()  # the touched files of the write this thread is in

    # subscribing ----------------------------------------------------------------------------------------------
    def subscribe(self, callback: Callback, *, watch: bool = True, raw: bool = False) -> Callable[[], None]:
        """Call `callback(Change)` from a background thread for each change; returns the unsubscribe function.

        `watch=False` hears only this process's own writes (no watcher is started for it). With `watch=True` the
        location's watcher is started if it is not running (this call returns once it is live) and the callback
        is first told `Change(everything=True, queue=True, audit=True)`: whatever changed before was not seen."""
        with self._lock:
            (self._raw if raw else self._subs).append(callback)
            if watch:
                self._watching += 1
                if self.feed is None:
                    feed = self._make_feed(self)
                    try:
                        feed.start()
                    except BaseException:
                        feed.stop()
                        self._watching -= 1
                        (self._raw if raw else self._subs).remove(callback)
                        raise
                    self.feed = feed
        if watch:
            _call(callback, Change(queue=True, audit=True, everything=True))
        done = threading.Event()

        def unsubscribe() -> None:
            if done.is_set():
                return
            done.set()
            stopping = None
            with self._lock:
                listeners = self._raw if raw else self._subs
                if callback in listeners:
                    listeners.remove(callback)
                if watch:
                    self._watching -= 1
                    if self._watching <= 0 and self.feed is not None:
                        stopping, self.feed = self.feed, None
            if stopping is not None:
                stopping.stop()

        return unsubscribe

    @property
    def watched(self) -> bool:
        return self.feed is not None and self.feed.running

    def publish(self) -> Any:
        feed = self.feed
        return feed.publish() if feed is not None else None

    def unpublish(self) -> None:
        feed = self.feed
        if feed is not None:
            feed.unpublish()

    def _deliver(self, change: Change) -> None:
        with self._lock:
            listeners = list(self._subs)
        for callback in listeners:
            _call(callback, change)

    def _deliver_raw(self, change: Change) -> None:
        with self._lock:
            listeners = list(self._raw)
        for callback in listeners:
            _call(callback, change)

    # memtui's own writes ----------------------------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[set[str]]:
        """Bracket one of this process's writes: yields a set the writer adds the files it touched to; at the end
        (after its commit) everything the watcher saw meanwhile and those files are one own `Change`. A write
        inside another on the same thread (update → submit) is part of the outer one's event."""
        outer = getattr(self._local, "touched", None)
        if outer is not None:
            yield outer
            return
        # Only what is told to subscribers needs holding back: an index (raw) hears every file at once anyway.
        feed = self.feed if self._subs else None
        if feed is not None:
            feed.burst.hold()
        touched: set[str] = set()
        self._local.touched = touched
        try:
            yield touched
        finally:
            self._local.touched = None
            self._changed(touched, feed)

    def _changed(self, paths: set[str], feed: Any) -> None:
        """memtui's own write has finished: deliver its one event. The watcher is given the time to have seen
        all of the write first (a cookie or a mark after it), so none of it arrives as a second event."""
        if feed is None:
            self._deliver(Change(frozenset(paths), queue=True, audit=True, own=True))
            return
        feed.barrier()
        change = feed.burst.release(paths, queue=True, audit=True)
        if change is not None:
            self._deliver(change)


GONE_WRITES_MAX = 4096  # files written and gone, their removal not yet handled; past it, every file may have changed


def _linked(path: str) -> bool:
    """Is `path` a regular file with more than one name?"""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return False
    return st.st_nlink > 1 and (st.st_mode & 0o170000) == 0o100000


def _call(callback: Callback, change: Change) -> None:
    try:
        callback(change)
    except Exception:  # a subscriber's bug must not end the watcher or fail a write that has committed
        pass


# one hub per location -------------------------------------------------------------------------------------------
_hubs: dict[str, Changes] = {}
_hubs_lock = threading.Lock()


def for_folder(root: str | os.PathLike[str]) -> Changes:
    """The change event of the folder memory at `root`."""
    key = str(Path(root).expanduser().absolute())
    with _hubs_lock:
        hub = _hubs.get(key)
        if hub is None:
            hub = _hubs[key] = Changes(key, lambda h: FolderFeed(Path(key), h))
        return hub


def for_store(store: Any) -> Changes:
    """The change event of the memory in `store`: its folder's, or its event channel's."""
    root = store.local_root
    if root is not None:
        return for_folder(root)
    key = "store:" + str(store.location)
    with _hubs_lock:
        hub = _hubs.get(key)
        if hub is None:
            hub = _hubs[key] = Changes(key, lambda h: StoreFeed(h.store, h))
        if hub.feed is None:
            hub.store = store  # the feed that starts next listens through the newest client
        return hub


def touched(result: Any) -> set[str]:
    """The files a write's result names: its file and the files it touched (`WriteResult.files`)."""
    from memtui.core.writing.proposals import EXTERNAL_PREFIX

    out: set[str] = set()
    status, file = getattr(result, "status", None), getattr(result, "file", None)
    restored = status == "rejected" and str(getattr(result, "id", "") or "").startswith(EXTERNAL_PREFIX)
    if status == "applied" or restored:
        if file:
            out.add(file)
        out.update(getattr(result, "files", None) or ())
    return out


def _inside(store: Any, paths: Iterable[str]) -> set[str]:
    """Only paths of the memory: a diff's header names can be forged by a file's content (a line "++ b/…")."""
    from memtui.core.grammar.paths import PathRefused

    out = set()
    for rel in paths:
        try:
            if store.check_path(rel) == rel:
                out.add(rel)
        except (PathRefused, ValueError):
            pass
    return out


