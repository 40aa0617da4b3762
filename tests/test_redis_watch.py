"""The app's Redis watcher: a change made by another process arrives as the same FilesChanged the folder watcher
posts; an outage arrives as StoreConnection."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from memtui.core.access.stores import init_store
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory
from memtui.tui.messages import FilesChanged
from memtui.tui.redis_watch import RedisWatcher, watcher_for
from memtui.tui.watch import MemoryWatcher
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)


def test_another_process_change_reaches_the_app_as_files_changed(redis_url: str) -> None:
    store = RedisStore(redis_url)
    init_store(store, author="wes")
    posted: list[object] = []
    got = threading.Event()

    def post(msg: object) -> None:
        posted.append(msg)
        # The queue's event and the file's may come in two bursts under load: wait for both.
        changed = [m for m in posted if isinstance(m, FilesChanged)]
        if any("MEMORY.md" in m.paths for m in changed) and any(m.audit for m in changed):
            got.set()

    watcher = watcher_for(Memory(store), post)
    assert isinstance(watcher, RedisWatcher)
    watcher.start()
    try:
        assert watcher._sub.connected.wait(5)
        subprocess.run([sys.executable, "-m", "memtui", "update", "Facts", "add", "[stated] Seen live", "--store",
                        redis_url], check=True, env={**os.environ, "MEMTUI_USER": "wes"}, timeout=60)
        assert got.wait(5), posted
    finally:
        watcher.stop()


def test_a_folder_memory_keeps_the_folder_watcher(mem: Memory) -> None:
    assert isinstance(watcher_for(mem, lambda m: None), MemoryWatcher)
