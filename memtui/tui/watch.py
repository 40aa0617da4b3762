"""The app's end of the memory's change event: each `Change` becomes one `FilesChanged` message, posted from
the subscription's thread. This is the only place in the UI that makes a `FilesChanged`.

The watching itself (one watcher per root, one classifier, bursts, memtui's own writes as one event each) is
`memtui.core.writing.changes`; a Redis memory's event channel feeds the same event (memtui/tui/redis_watch.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from memtui.core.writing import changes
from memtui.core.writing.changes import Change, classify  # noqa: F401  (the one classifier, for callers of this module)
from memtui.tui.messages import FilesChanged


def message_for(change: Change) -> FilesChanged:
    return FilesChanged(change=change)


class ChangeWatcher:
    """Subscribes `post` to a location's change event: `start()` (in a thread: the watcher walks the folder),
    `stop()`. With `watch=False` only this process's own writes are heard and no watcher is started."""

    def __init__(self, hub: changes.Changes, post: Callable[[FilesChanged], object], *, watch: bool = True) -> None:
        self.hub = hub
        self.post = post
        self.watch = watch
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> None:
        self._unsubscribe = self.hub.subscribe(self._changed, watch=self.watch)

    def _changed(self, change: Change) -> None:
        self.post(message_for(change))

    @property
    def _sub(self) -> Any:
        """The Redis subscription under the watcher (for a Redis memory), else None."""
        return getattr(self.hub.feed, "_sub", None)

    def stop(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()


class MemoryWatcher(ChangeWatcher):
    """Watch the folder memory at `root`; call `post(FilesChanged)` once per burst and once per own write."""

    def __init__(self, root: Path, post: Callable[[FilesChanged], object], *, watch: bool = True) -> None:
        super().__init__(changes.for_folder(root), post, watch=watch)
        self.root = Path(root).absolute()
