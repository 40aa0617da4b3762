"""A warm search index's view of the memory's change event: collects the paths that changed so a query
re-checks only those.

It subscribes to the location's one watcher (`memtui.core.writing.changes`, shared with the app and its Search pane).
Until that watcher has started, and whenever it cannot say exactly what changed (a folder moved, an outage),
`take()` answers None: re-check every file.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Iterable

from memtui.core.writing import changes

class _Changed:
    """The paths a raw subscriber to a memory's change event heard changed since the last `take()`; a change that
    cannot be named file by file (or no subscription) makes the next answer None: re-check every file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._full = True  # the first query walks everything once
        self._unsubscribe: Any = None

    def _note(self, change: changes.Change) -> None:
        with self._lock:
            if change.everything:
                self._full = True  # events may have been missed meanwhile
            self._dirty.update(change.paths)

    def add(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._dirty.update(paths)

    def take(self) -> set[str] | None:
        """The paths changed since the last call, or None when every file must be re-checked."""
        with self._lock:
            if self._unsubscribe is None or self._full:
                self._full = False
                self._dirty.clear()
                return None
            dirty, self._dirty = self._dirty, set()
            return dirty

    def vouches(self) -> bool:
        """Is it subscribed, so that `take()` can name what changed (not every file, every time)?"""
        return self._unsubscribe is not None

    def stop(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()


class IndexWatcher(_Changed):
    """The changed paths of a folder memory, from its one watcher. `publish=True` also journals every change for
    other processes (`memtui.core.storage.fsmonitor`), when no other process does already: a cold `memtui search` then
    re-checks only what changed."""

    def __init__(self, root: str | os.PathLike[str], *, publish: bool = False) -> None:
        super().__init__()
        self.root = Path(root).expanduser().absolute()
        self.hub = changes.for_folder(self.root)
        try:
            self._unsubscribe = self.hub.subscribe(self._note, raw=True)
        except OSError:
            pass
        self._published = publish and self._unsubscribe is not None
        # Started once the watch is in place: a reader's cookie is only ever answered by a watching process.
        self.publisher: Any = self.hub.publish() if self._published else None

    def take(self) -> set[str] | None:
        """The paths changed since the last call, every event before this call included: a barrier cookie (see
        `FolderFeed.barrier`) comes back only after the watcher has handled every change made before it, so a
        write that ended just before the query is not missed. None (re-check every file) when no barrier can be
        raised: no watcher, a read-only memory, or no answer in time."""
        feed = self.hub.feed
        if self._unsubscribe is None or feed is None or not feed.barrier():
            with self._lock:
                self._full = False
                self._dirty.clear()
            return None
        return super().take()

    def stop(self) -> None:
        if self._published:
            self._published = False
            self.hub.unpublish()
        self.publisher = None
        super().stop()


class StoreWatcher(_Changed):
    """The same for a memory kept in Redis, from its one event subscription: the store's events (memtui's writes,
    and raw SETs and DELs through keyspace notifications) name the files that changed. Before answering, `take()`
    publishes a mark and waits for it to come back on that subscription, so every write made before the query has
    been heard; until the subscription is connected, after an outage, or on a server without keyspace events, it
    answers None."""

    MARK_WAIT = 1.0

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = store
        self.hub = changes.for_store(store)
        # Without keyspace events a raw SET is never heard: nobody vouches, every query re-checks.
        self._unsubscribe = self.hub.subscribe(self._note, raw=True) if store.keyspace_events() else None

    def take(self) -> set[str] | None:
        feed = self.hub.feed
        if self._unsubscribe is None or feed is None or not feed.barrier(self.MARK_WAIT):
            return None
        if not self.store.keyspace_events():
            # Turned off since it subscribed: raw SETs are no longer heard, so nothing it heard can be vouched for
            # (one CONFIG GET per query; it stays unsure until it is made again).
            self.stop()
            return None
        return super().take()
