"""The app's watcher for a Redis memory: the store's event channel, through the memory's change event
(`memtui.core.writing.changes.StoreFeed`), as the same `FilesChanged` messages the folder's watcher gives; an outage and
the return of the server arrive as `FilesChanged` with `connected` False or True.

`watcher_for(memory, post)` picks the right watcher for a memory, so the app needs no other change to live-diff
a Redis memory exactly as it does a folder.
"""

from __future__ import annotations

from typing import Any, Callable

from memtui.core.writing import changes
from memtui.tui.messages import FilesChanged
from memtui.tui.watch import ChangeWatcher, MemoryWatcher


class RedisWatcher(ChangeWatcher):
    """Subscribe to a RedisStore's change event; post one `FilesChanged` per burst of events, like `MemoryWatcher`."""

    def __init__(self, store: Any, post: Callable[[FilesChanged], object], *, watch: bool = True) -> None:
        super().__init__(changes.for_store(store), post, watch=watch)
        self.store = store


def watcher_for(memory: Any, post: Callable[[FilesChanged], object], *, watch: bool = True) -> ChangeWatcher:
    """The folder's `MemoryWatcher` for a memory on disk, else a `RedisWatcher` on the store's events."""
    root = memory.store.local_root
    if root is None:
        return RedisWatcher(memory.store, post, watch=watch)
    return MemoryWatcher(root, post, watch=watch)
