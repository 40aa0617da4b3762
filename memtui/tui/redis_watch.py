"""The app's watcher for a Redis memory: the store's event channel turned into the same `FilesChanged` bursts
the folder watcher (memtui/tui/watch.py) posts, plus `StoreConnection` when the server goes away and comes back.

`watcher_for(memory, post)` picks the right watcher for a memory, so the app needs no other change to live-diff
a Redis memory exactly as it does a folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from textual.message import Message

from memtui.tui.watch import Burst, MemoryWatcher


@dataclass
class StoreConnection(Message):
    """The Redis memory was lost (`connected` False, with what to do) or is back (True; the app should resync)."""

    connected: bool
    message: str = ""


class RedisWatcher(Burst):
    """Subscribe to a RedisStore; post one `FilesChanged` per burst of events, like `MemoryWatcher`."""

    def __init__(self, store: Any, post: Callable[[Message], object]) -> None:
        super().__init__(post)
        self.store = store
        self._sub: Any = None

    def start(self) -> None:
        self.start_flusher("memtui-redis-watch-flush")
        self._sub = self.store.subscribe(self.note, keyspace=True)

    def note(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "disconnected":
            self.post(StoreConnection(False, str(event.get("message", ""))))
            return
        if kind == "connected":
            self.post(StoreConnection(True))
        files = event.get("files") or ([event["file"]] if event.get("file") else [])
        # A recorded change means an audit line and maybe a decided proposal; after an outage, anything.
        everything = kind in ("change", "connected")
        self.add([f for f in files if f], queue=everything or kind == "queue", audit=everything or kind == "queue")

    def stop(self) -> None:
        self.stop_flusher()
        if self._sub is not None:
            self._sub.stop()


def watcher_for(memory: Any, post: Callable[[Message], object]) -> Any:
    """The folder's `MemoryWatcher` for a memory on disk, else a `RedisWatcher` on the store's events."""
    root = memory.store.local_root
    if root is None:
        return RedisWatcher(memory.store, post)
    return MemoryWatcher(root, post)
