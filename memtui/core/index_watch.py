"""A file watcher for a warm search index: collects the paths that changed so a query re-checks only those.

Built on watchdog (inotify on Linux). Until the watcher has started, and whenever it cannot say exactly what
changed (a folder moved, an event overflow), `take()` answers None: re-check every file.
`observer()` is where every watchdog observer in memtui is made (this one and the app's), so all stop quietly.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any, Iterable

# watchdog logs this (at ERROR, so Python prints it to stderr) when an event arrives while an emitter is being
# stopped: its reader finds its watches already released and returns as if there were no event (watchdog PR #963).
# It is only ever logged after stop(), for an event nobody is listening for any more: not a failure to report.
STOPPED_EMITTER = "InotifyEmitter.queue_events() called when the thread is inactive"


class _StoppingEmitter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != STOPPED_EMITTER


_quiet = _StoppingEmitter()


def observer() -> Any:
    """A new watchdog Observer (a daemon thread), whose stop() leaves nothing on stderr."""
    from watchdog.observers import Observer

    log = logging.getLogger("watchdog.observers.inotify")
    if _quiet not in log.filters:
        log.addFilter(_quiet)
    made = Observer()
    made.daemon = True
    return made


class IndexWatcher:
    """`publish=True` also journals every change for other processes (`memtui.core.fsmonitor`), when no other
    watcher of this root does already: a cold `memtui search` then re-checks only what changed."""

    def __init__(self, root: str | os.PathLike[str], *, publish: bool = False) -> None:
        from watchdog.events import FileSystemEventHandler

        self.root = Path(root).expanduser().absolute()
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._full = True  # the first query walks everything once
        self.publisher: Any = None
        self._cookies = str(self.root / ".memtui" / "index.sqlite-cookies") + os.sep
        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                watcher._note(event)

        from watchdog import events as ev

        # Writes only: every process that reads the files (rg, a scan) would otherwise queue an open and a close
        # event per file in front of a reader's cookie.
        writes = [ev.FileCreatedEvent, ev.DirCreatedEvent, ev.FileModifiedEvent, ev.DirModifiedEvent,
                  ev.FileMovedEvent, ev.DirMovedEvent, ev.FileDeletedEvent, ev.DirDeletedEvent, ev.FileClosedEvent]
        self._observer = observer()
        try:
            self._observer.schedule(Handler(), str(self.root), recursive=True, event_filter=writes)
            self._observer.start()
        except OSError:
            self._observer = None
        if publish and self._observer is not None:
            from memtui.core.fsmonitor import Publisher

            # Started once the watch is in place: a reader's cookie is only ever answered by a watching process.
            publisher = Publisher(self.root)
            if publisher.start():
                self.publisher = publisher

    def _rel(self, path: str | bytes) -> str | None:
        p = os.fsdecode(path)
        try:
            rel = Path(p).relative_to(self.root).as_posix()
        except ValueError:
            return None
        if rel == "." or any(part.startswith(".") for part in rel.split("/")):
            return None
        return rel

    def _note(self, event: Any) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        publisher = self.publisher
        if publisher is not None and event.event_type == "created":
            src = os.fsdecode(event.src_path)
            if src.startswith(self._cookies):
                # A reader asking "is all before this journaled?": events arrive in order, so it is, now.
                publisher.cookie(src[len(self._cookies):])
                return
        paths = [self._rel(event.src_path)]
        if getattr(event, "dest_path", None):
            paths.append(self._rel(event.dest_path))
        paths = [p for p in paths if p]
        if not paths:
            return
        folder = event.is_directory and event.event_type in ("moved", "deleted", "created")
        with self._lock:
            if folder:
                self._full = True
            self._dirty.update(paths)
        if publisher is not None and (folder or not event.is_directory):  # a folder's "modified" names no file
            if folder:
                publisher.everything()
            else:
                publisher.changed(paths)

    def add(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._dirty.update(paths)

    def take(self) -> set[str] | None:
        """The paths changed since the last call, or None when every file must be re-checked."""
        with self._lock:
            if self._observer is None or self._full:
                self._full = False
                self._dirty.clear()
                return None
            dirty, self._dirty = self._dirty, set()
            return dirty

    def stop(self) -> None:
        if self.publisher is not None:
            self.publisher.stop()
            self.publisher = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None


class StoreWatcher:
    """The same for a memory kept in Redis: the store's events (memtui's writes, and raw SETs and DELs through
    keyspace notifications) name the files that changed. Before answering, `take()` publishes a mark and waits
    for it to come back on the same subscription, so every write made before the query has been heard; until
    the subscription is connected, after an outage, or on a server without keyspace events, it answers None."""

    MARK_WAIT = 1.0

    def __init__(self, store: Any) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._full = True
        self._marks: dict[str, threading.Event] = {}
        self._sub = store.subscribe(self._event, keyspace=True) if store.keyspace_events() else None
        if self._sub is not None:
            self._sub.connected.wait(2.0)  # events before the subscription are not heard: the first query walks

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        with self._lock:
            if kind == "mark":
                waiting = self._marks.get(str(event.get("id")))
                if waiting is not None:
                    waiting.set()
            elif kind in ("write", "external") and isinstance(event.get("file"), str):
                self._dirty.add(event["file"])
            elif kind == "change" and isinstance(event.get("files"), list):
                self._dirty.update(f for f in event["files"] if isinstance(f, str))
            elif kind in ("disconnected", "connected"):
                self._full = True  # events may have been missed meanwhile

    def add(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._dirty.update(paths)

    def take(self) -> set[str] | None:
        if self._sub is None or not self._sub.connected.is_set():
            return None
        import secrets

        token = secrets.token_hex(8)
        heard = threading.Event()
        with self._lock:
            self._marks[token] = heard
        try:
            self.store.mark(token)
            ok = heard.wait(self.MARK_WAIT)
        except Exception:
            ok = False
        finally:
            with self._lock:
                self._marks.pop(token, None)
        with self._lock:
            if not ok or self._full:
                self._full = False
                self._dirty.clear()
                return None
            dirty, self._dirty = self._dirty, set()
            return dirty

    def stop(self) -> None:
        if self._sub is not None:
            self._sub.stop()
            self._sub = None
