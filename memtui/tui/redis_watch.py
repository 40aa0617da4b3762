"""The app's watcher for a Redis memory: the store's event channel turned into the same `FilesChanged` bursts
the folder watcher (memtui/tui/watch.py) posts, plus `StoreConnection` when the server goes away and comes back.

`watcher_for(memory, post)` picks the right watcher for a memory, so the app needs no other change to live-diff
a Redis memory exactly as it does a folder.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from textual.message import Message

from memtui.tui.messages import FilesChanged
from memtui.tui.watch import CEILING, QUIET, MemoryWatcher


class StoreConnection(Message):
    """The Redis memory was lost (`connected` False, with what to do) or is back (True; the app should resync)."""

    def __init__(self, connected: bool, message: str = "") -> None:
        super().__init__()
        self.connected = connected
        self.message = message


class RedisWatcher:
    """Subscribe to a RedisStore; post one `FilesChanged` per burst of events, like `MemoryWatcher`."""

    def __init__(self, store: Any, post: Callable[[Message], object]) -> None:
        self.store = store
        self.post = post
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._paths: set[str] = set()
        self._queue = self._audit = False
        self._first = self._last = 0.0
        self._sub: Any = None
        self._flusher: threading.Thread | None = None

    def start(self) -> None:
        self._flusher = threading.Thread(target=self._run, name="memtui-redis-watch-flush", daemon=True)
        self._flusher.start()
        self._sub = self.store.subscribe(self.note, keyspace=True)

    def note(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "disconnected":
            self.post(StoreConnection(False, str(event.get("message", ""))))
            return
        if kind == "connected":
            self.post(StoreConnection(True))
        now = time.monotonic()
        with self._lock:
            files = event.get("files") or ([event["file"]] if event.get("file") else [])
            self._paths.update(f for f in files if f)
            if kind in ("change", "connected"):
                # A recorded change means an audit line and maybe a decided proposal; after an outage, anything.
                self._queue = self._audit = True
            if not self._first:
                self._first = now
            self._last = now
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            while not self._stop.is_set():
                with self._lock:
                    first, last = self._first, self._last
                now = time.monotonic()
                if now - last >= QUIET or now - first >= CEILING:
                    break
                time.sleep(min(QUIET - (now - last), CEILING - (now - first), QUIET) + 0.001)
            with self._lock:
                paths, queue, audit = frozenset(self._paths), self._queue, self._audit
                self._paths, self._queue, self._audit, self._first = set(), False, False, 0.0
            if (paths or queue or audit) and not self._stop.is_set():
                self.post(FilesChanged(paths, queue=queue, audit=audit))

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._sub is not None:
            self._sub.stop()
        if self._flusher is not None:
            self._flusher.join(timeout=2)


def watcher_for(memory: Any, post: Callable[[Message], object]) -> Any:
    """A `RedisWatcher` for a memory in Redis, else the folder's `MemoryWatcher`."""
    from memtui.core.redis_store import RedisStore

    if isinstance(memory.store, RedisStore):
        return RedisWatcher(memory.store, post)
    return MemoryWatcher(memory.store.root, post)
