"""The app's speed-ups keep its behaviour: the watcher's settled bursts, the deferred sync, the big-file index."""

from __future__ import annotations

import os
import threading
import time

from memtui.core.init import init_root
from memtui.tui.watch import MemoryWatcher


class Recording(MemoryWatcher):
    """A watcher that records each note it adds (and still coalesces, so it behaves as the app's)."""

    def __init__(self, root, post) -> None:  # type: ignore[no-untyped-def]
        super().__init__(root, post)
        self.notes: list[tuple[frozenset[str], bool]] = []
        self.seen = threading.Event()

    def add(self, paths=(), *, queue=False, audit=False, settled=False) -> None:  # type: ignore[no-untyped-def]
        self.notes.append((frozenset(paths), settled))
        if settled:
            self.seen.set()
        super().add(paths, queue=queue, audit=audit, settled=settled)


def test_an_atomic_write_is_settled_by_its_rename(tmp_path):
    """The rename that puts a whole file in place ends the burst soon (SETTLED), not after the full QUIET."""
    init_root(tmp_path)
    posted = []
    watcher = Recording(tmp_path, posted.append)
    watcher.start()
    try:
        tmp = tmp_path / ".MEMORY.md.tmp"
        tmp.write_text((tmp_path / "MEMORY.md").read_text() + "- [observed] a new entry (2026-01-02)\n")
        os.replace(tmp, tmp_path / "MEMORY.md")
        assert watcher.seen.wait(10), f"no settled note: {watcher.notes}"
        deadline = time.monotonic() + 10
        while not posted and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watcher.stop()
    assert (frozenset({"MEMORY.md"}), True) in watcher.notes
    assert posted and "MEMORY.md" in posted[0].paths
