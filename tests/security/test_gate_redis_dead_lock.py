"""#41 item 9, the part left open: redis-server killed (AOF, `appendfsync always`) during `memtui queue approve`
leaves the approving process's lock on the server, and that process exits. The lock kept its 15 s lifetime across
the restart: every next write on the memory, the person's approve again included, waited for it to lapse. A lock's
holder now names its process and machine (this kernel and process namespace): a writer of the same machine whose
holder has exited takes the lock at once; one held from elsewhere, or by a live process, is still waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from memtui.core.access.stores import init_store
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory
from support.redis_server import RedisServer
from security.test_gate_redis import AGENT, ENTRY, KillingProxy, memtui


def queued(server: RedisServer) -> tuple[str, str]:
    """A memory with the default lock lifetime (15 s) and one agent proposal pending: (url, proposal id)."""
    url = server.url()
    store = RedisStore(url)
    store.client.script_flush()
    init_store(store, author="wes")
    q = Memory(store).update("Facts", "add", ENTRY, actor=AGENT)
    assert q.status == "queued" and q.id
    return url, q.id


def test_after_redis_is_killed_mid_approve_the_next_approve_does_not_wait_for_the_dead_writers_lock(tmp_path) -> None:
    server = RedisServer(tmp_path / "redis", persist=True).start()
    try:
        url, pid = queued(server)
        counting = KillingProxy(server)
        assert memtui("queue", "approve", pid, "--store", counting.url(url)).returncode == 0
        counting.close()
        # Killed just after MEMORY.md is written (the journal's intent, then the file's compare-and-set write): the
        # lock is held, the approve half-made.
        at = counting.names.index("EVALSHA", counting.names.index("SET")) + 1
        url, pid = queued(server)
        proxy = KillingProxy(server, at, "after")
        first = memtui("queue", "approve", pid, "--store", proxy.url(url))
        proxy.close()
        assert proxy.killed.is_set()
        server.start()
        store = RedisStore(url)
        held = store.client.get(store.k_lock)
        assert held is not None and store.client.pttl(store.k_lock) > 5_000, held  # the dead writer's, persisted
        assert "went away in the middle" in first.stdout, first.stdout + first.stderr
        started = time.monotonic()
        again = memtui("queue", "approve", pid, "--store", url)
        took = time.monotonic() - started
    finally:
        server.stop()
    said = again.stdout + again.stderr
    assert took < 5, (took, said)  # was 13-15 s: the dead writer's lock, waited out
    assert again.returncode == 0 and said.startswith(f"applied {pid}: finished an interrupted add"), said
    server.start()
    try:
        store = RedisStore(url)
        assert (store.committed("MEMORY.md") or b"").decode().count(ENTRY) == 1
        assert json.loads(store.queue_load(pid) or b"{}")["status"] == "applied"
        lines = [r["status"] for r in store.audit_records() if r.get("proposal") == pid and r["status"] != "queued"]
        assert lines == ["applied"], lines  # one decision, never "applied" then "conflict"
        assert store.intent_load() is None and store.external_changes() == []
    finally:
        server.stop()


def test_a_live_writers_lock_is_still_waited_for(tmp_path) -> None:
    """The same machine, a process that is alive (it holds the lock, sleeping): its lock is not taken."""
    server = RedisServer(tmp_path / "redis").start()
    try:
        url = server.url(lock_ttl=3)
        init_store(RedisStore(url), author="wes")
        holder = subprocess.Popen([sys.executable, "-c", (
            "import sys, time\n"
            "from memtui.core.storage.redis_store import RedisStore\n"
            f"s = RedisStore({url!r})\n"
            "with s.lock(timeout=5):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(2.5)\n")], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            started = time.monotonic()
            with RedisStore(url).lock(timeout=10):
                waited = time.monotonic() - started
        finally:
            holder.wait(timeout=20)
    finally:
        server.stop()
    assert waited > 1.5, waited  # it waited for the live holder to let go


@pytest.mark.parametrize("forged", ["another machine", "no machine"])
def test_a_lock_from_another_machine_is_not_broken_by_its_pid(tmp_path, forged: str) -> None:
    """A holder named with another machine's id (or none: an older memtui), with a pid that does not exist here:
    this machine cannot tell whether it lives, so its lock is waited out, not taken."""
    server = RedisServer(tmp_path / "redis").start()
    try:
        url = server.url(lock_ttl=2)
        store = RedisStore(url)
        init_store(store, author="wes")
        dead = 2 ** 22 + 12345  # above the kernel's pid_max default: no such process
        owner = f"{dead}-0123456789ab@elsewhere.1:1" if forged == "another machine" else f"{dead}-0123456789ab:1"
        store.client.set(store.k_lock, owner, px=2_000)
        started = time.monotonic()
        with RedisStore(url).lock(timeout=10):
            waited = time.monotonic() - started
    finally:
        server.stop()
    assert waited > 1.0, waited
