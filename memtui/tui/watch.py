"""The memory root's watcher: a watchdog observer in its own thread, coalescing bursts into `FilesChanged`.

An atomic write is several events (temp file created, written, renamed over the target); an agent's burst of
writes is many. The flusher thread waits for a short quiet spell (or a ceiling, so a steady stream still shows)
and posts one message per burst. It also notices `.memtui/queue/` so proposals written by another process
appear at once, and the audit log so the feed learns who wrote what.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from memtui.core.folder import AUDIT_FILE, STATE_DIR
from memtui.tui.messages import FilesChanged

QUIET = 0.04  # seconds without events that end a burst
SETTLED = 0.008  # the quiet that ends a burst whose last event finished a write (a rename into place, a close)
CEILING = 0.25  # a burst is flushed at the latest this long after its first event


def classify(root: Path, path: str) -> tuple[str, str] | None:
    """("file"|"queue"|"audit", rel) for a path the app cares about, else None."""
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
    if rel.startswith((".git/", STATE_DIR + "/")) or rel in (".git", STATE_DIR):
        return None
    if name.startswith(".") or any(part.startswith(".") for part in rel.split("/")[:-1]):
        return None
    return ("file", rel)


class Burst:
    """Collects change notes from any thread and posts one `FilesChanged` per burst from its own flusher thread.

    Shared by the folder watcher and the Redis watcher, so both coalesce exactly alike."""

    def __init__(self, post: Callable[[FilesChanged], object]) -> None:
        self.post = post
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._paths: set[str] = set()
        self._queue = self._audit = False
        self._first = self._last = 0.0
        self._quiet = QUIET
        self._flusher: threading.Thread | None = None

    def start_flusher(self, name: str) -> None:
        self._flusher = threading.Thread(target=self._run, name=name, daemon=True)
        self._flusher.start()

    def add(self, paths: Iterable[str] = (), *, queue: bool = False, audit: bool = False,
            settled: bool = False) -> None:
        """Note changes; `settled` says this event finished a write (the file is whole), so a short quiet will do:
        an atomic write ends with its rename, a plain one with its close, and waiting 40 ms more showed nothing."""
        now = time.monotonic()
        with self._lock:
            self._paths.update(paths)
            self._queue = self._queue or queue
            self._audit = self._audit or audit
            if not self._first:
                self._first = now
            self._last = now
            self._quiet = SETTLED if settled else QUIET
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            while not self._stop.is_set():
                with self._lock:
                    first, last, quiet = self._first, self._last, self._quiet
                now = time.monotonic()
                if now - last >= quiet or now - first >= CEILING:
                    break
                time.sleep(min(quiet - (now - last), CEILING - (now - first), quiet) + 0.001)
            with self._lock:
                paths, queue, audit = frozenset(self._paths), self._queue, self._audit
                self._paths, self._queue, self._audit, self._first = set(), False, False, 0.0
                self._quiet = QUIET
            if (paths or queue or audit) and not self._stop.is_set():
                self.post(FilesChanged(paths, queue=queue, audit=audit))

    def stop_flusher(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._flusher is not None:
            self._flusher.join(timeout=2)


class MemoryWatcher(Burst):
    """Watch `root` recursively; call `post(FilesChanged)` from the flusher thread once per burst."""

    def __init__(self, root: Path, post: Callable[[FilesChanged], object]) -> None:
        super().__init__(post)
        self.root = Path(root).absolute()
        self._observer = None

    def start(self) -> None:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        from memtui.core.index_watch import observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                # A rename's destination and a closed-after-write file are whole: the burst may end soon.
                done = event.event_type == "closed"
                for p, settled in ((event.src_path, done), (getattr(event, "dest_path", ""), True)):
                    if p:
                        watcher.note(os.fsdecode(p), is_dir=event.is_directory, settled=settled)

        self._observer = observer()
        self._observer.schedule(Handler(), str(self.root), recursive=True)
        self._observer.start()
        self.start_flusher("memtui-watch-flush")

    def note(self, path: str, *, is_dir: bool = False, settled: bool = False) -> None:
        kind = classify(self.root, path)
        if kind is None:
            return
        what, rel = kind
        if what == "file" and not is_dir and not rel.endswith(".md"):
            return
        if what == "queue":
            self.add(queue=True, settled=settled)
        elif what == "audit":
            self.add(audit=True)
        else:
            self.add([rel + ("/" if is_dir else "")], settled=settled)

    def stop(self) -> None:
        """Stop watching and join both threads (the observer first: no event is noted once the flusher is gone)."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=2)
        self.stop_flusher()
