"""A Redis server restarted in the middle of a run: clear errors while it is down, nothing acknowledged lost,
writers and live subscribers carry on once it is back."""

from __future__ import annotations

import threading
import time

from memtui.core.access.stores import init_store
from memtui.core.storage.redis_store import RedisStore
from memtui.core.storage.store import StoreUnavailable
from memtui.core.writing.memory import Memory
from support.redis_server import RedisServer


def test_restart_mid_run_loses_nothing_acknowledged(tmp_path) -> None:
    server = RedisServer(tmp_path / "redis", persist=True).start()  # AOF, fsync always: an OK is on disk
    try:
        url = server.url("restart")
        store = RedisStore(url)
        init_store(store, author="wes")
        mem = Memory(store)
        assert mem.create("notes.md", "# notes\n\n## Log\n\n").status == "applied"
        events: list[str] = []
        sub = RedisStore(url).subscribe(lambda ev: events.append(ev["kind"]))
        assert sub.connected.wait(5)

        applied: list[str] = []
        errors: list[str] = []
        stop = threading.Event()

        def writer() -> None:
            i = 0
            while not stop.is_set():
                entry = f"[observed] restart event r{i}"
                try:
                    r = mem.update("Log", "add", entry, file="notes.md")
                except StoreUnavailable as exc:
                    errors.append(str(exc))
                    time.sleep(0.05)
                    continue
                if r.status == "applied":
                    applied.append(entry)
                else:
                    errors.append(r.message)
                i += 1

        t = threading.Thread(target=writer)
        t.start()
        time.sleep(0.4)
        server.stop(kill=True)  # no goodbye: the AOF is all that is left
        deadline = time.monotonic() + 15
        while not errors and time.monotonic() < deadline:  # the writer has met the outage
            time.sleep(0.05)
        down_count = len(errors)
        acknowledged = len(applied)
        server.start()
        deadline = time.monotonic() + 15
        while len(applied) < acknowledged + 5 and time.monotonic() < deadline:  # and carried on after it
            time.sleep(0.05)
        # The subscriber comes back on its own backoff (up to 2 s between tries), not when the writer does: a
        # restart during its pause has five writes done before it reconnects. Wait for it, not for the writer.
        deadline = time.monotonic() + 15
        while not ("disconnected" in events and "connected" in events[events.index("disconnected"):]) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        t.join(30)
        assert not t.is_alive()
        text = mem.read_text("notes.md") or ""
        sub.stop()
    finally:
        server.stop()
    assert down_count > 0 and any("cannot be reached" in e and "redis-server is running" in e for e in errors)
    assert len(applied) >= acknowledged + 5
    missing = [e for e in applied if e.split("] ")[1] not in text]
    assert missing == []
    after_restart = applied[-1].split("] ")[1]
    assert after_restart in text
    assert "disconnected" in events and "connected" in events[events.index("disconnected"):]
