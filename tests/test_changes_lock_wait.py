"""An own write that waits for the memory's lock is still one own event; what the watcher sees meanwhile is held back
at most HOLD_MAX (memtui/core/writing/changes.py).

The hold began as the write was called, before it had the lock. In the app the lock is often held by the app's own
read of the folder (`git status` over every file, under the lock), which a loaded machine stretched past HOLD_MAX:
the write's queue file was then flushed as a change from elsewhere and its own event came second (seen failing in
tests/test_app_changes.py::test_the_agents_tool_write_in_chat_is_one_event). The bound now counts from the first
thing held back."""

from __future__ import annotations

import fcntl
import os
import threading
import time

import pytest

from memtui.core.writing import changes
from memtui.core.writing.memory import Memory
from test_changes import Events, watched  # noqa: F401 (fixture)


class LockHeld:
    """The memory's lock, held as another process holds it (an open file of its own), until `let_go`."""

    def __init__(self, mem: Memory) -> None:
        self.fd = os.open(mem.store.root / ".memtui" / "lock", os.O_RDWR)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def let_go(self) -> None:
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1


def test_a_write_that_waits_for_the_lock_longer_than_hold_max_is_one_own_event(watched) -> None:  # noqa: F811
    mem, events = watched
    n = len(events.got)
    held = LockHeld(mem)
    threading.Timer(changes.HOLD_MAX + 0.5, held.let_go).start()
    try:
        result = mem.update("Projects", "add", "[inferred] memtui could index in Postgres", actor="claude")
    finally:
        held.let_go()
    assert result.status == "queued"
    got = events.wait(n)
    assert [(c.own, c.queue) for c in got] == [(True, True)], [(c.own, c.queue, c.audit, c.paths) for c in got]


def test_a_hold_longer_than_hold_max_with_nothing_seen_in_it_is_still_one_own_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same on the burst alone, in order: held, nothing seen past the bound (the lock wait), then the write's
    file, then its release. Before, the file was flushed at once as a change from elsewhere."""
    monkeypatch.setattr(changes, "HOLD_MAX", 0.2)
    told: list[changes.Change] = []
    burst = changes.Burst(told.append)
    burst.start_flusher("test-burst")
    try:
        burst.hold()
        time.sleep(0.3)  # past HOLD_MAX, nothing seen: the write waits for the lock
        burst.add([".memtui/queue/p-0001.json"], queue=True, settled=True)
        time.sleep(0.1)  # the write's last steps (its audit line, the watcher's barrier): many quiets long
        own = burst.release(["MEMORY.md"], queue=True, audit=True)
    finally:
        burst.stop_flusher()
    assert told == [] and own is not None and own.own and own.paths == {".memtui/queue/p-0001.json", "MEMORY.md"}


def test_what_another_writer_wrote_while_an_own_write_waits_is_told_before_it_ends(watched) -> None:  # noqa: F811
    """The bound HOLD_MAX is for: a file written elsewhere while an own write is held is told as not own, without
    waiting for that write (here: until the test lets the lock go, which it does only once it was told)."""
    mem, events = watched
    n = len(events.got)
    held = LockHeld(mem)
    done: list[object] = []
    writer = threading.Thread(target=lambda: done.append(
        mem.update("Projects", "add", "[inferred] memtui could index in MySQL", actor="claude")))
    writer.start()
    try:
        deadline = time.monotonic() + 2
        while not mem.changes.feed.burst._holds and time.monotonic() < deadline:  # the write is in its hold
            time.sleep(0.005)
        assert mem.changes.feed.burst._holds
        (mem.store.root / "notes").mkdir(exist_ok=True)
        (mem.store.root / "notes" / "elsewhere.md").write_text("- [stated] written by another process\n")
        deadline = time.monotonic() + 20
        while not any("notes/elsewhere.md" in c.paths for c in events.after(n)) and time.monotonic() < deadline:
            time.sleep(0.01)
        told = [c for c in events.after(n) if "notes/elsewhere.md" in c.paths]
        assert told and not told[0].own and not done  # told while the own write still waits for the lock
    finally:
        held.let_go()
        writer.join(10)
    got = events.wait(n)
    assert done and [c.own for c in got][-1] is True  # the write's own event after it
