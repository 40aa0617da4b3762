"""Several processes on one Redis memory: no lost update, and each change reaches a live subscriber."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from memtui.core.access.stores import init_store
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

NOTES = "# notes\n\n## Log\n\n"
WRITER = """
import sys
from memtui.core.writing.memory import Memory
from memtui.core.storage.redis_store import RedisStore
url, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mem = Memory(RedisStore(url))
for i in range(count):
    r = mem.update("Log", "add", f"[observed] process event p{n}e{i}", file="notes.md", actor=f"writer-{n}")
    print(r.status, r.commit, flush=True)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "MEMTUI_USER": "wes"}


def _memory(url: str) -> tuple[RedisStore, Memory]:
    store = RedisStore(url)
    init_store(store, author="wes")
    mem = Memory(store)
    assert mem.create("notes.md", NOTES).status == "applied"
    return store, mem


def test_processes_updating_one_file_lose_no_update(redis_url: str) -> None:
    store, _ = _memory(redis_url)
    procs, each = 4, 15
    runs = [subprocess.Popen([sys.executable, "-c", WRITER, redis_url, str(n), str(each)], env=_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(procs)]
    outs = [p.communicate(timeout=120) for p in runs]
    assert all(p.returncode == 0 for p in runs), [o[1][-2000:] for o in outs]
    statuses = [line.split()[0] for out, _ in outs for line in out.splitlines()]
    assert statuses == ["applied"] * (procs * each)
    lines = [ln for ln in store.read("notes.md").decode().splitlines() if ln.startswith("- [observed] process")]
    assert len(lines) == procs * each and len(set(lines)) == procs * each
    # One recorded change per update, each by its own writer, chained before -> after.
    history = [c for c in store.history("notes.md") if c.author.startswith("writer-")]
    assert len(history) == procs * each
    chain = [f for _, f in store.changes() if f["file"] == "notes.md"]
    assert all(a["after"] == b["before"] for a, b in zip(chain, chain[1:]))
    assert store.external_changes() == []


def test_cli_processes_with_the_store_flag(redis_url: str) -> None:
    store, _ = _memory(redis_url)

    def run(n: int) -> int:
        return subprocess.run(
            [sys.executable, "-m", "memtui", "update", "Log", "add", f"[observed] cli event c{n}", "--file",
             "notes.md", "--store", redis_url], env=_env(), capture_output=True, timeout=60).returncode

    with ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(run, range(12)))
    assert codes == [0] * 12
    text = store.read("notes.md").decode()
    assert sorted(int(n) for n in re.findall(r"cli event c(\d+)", text)) == list(range(12))


def test_a_change_by_another_process_reaches_the_subscriber(redis_url: str) -> None:
    store, _ = _memory(redis_url)
    events: list[dict] = []
    got = threading.Event()

    def on_event(ev: dict) -> None:
        events.append(ev)
        if ev.get("kind") == "change":
            got.set()

    sub = store.subscribe(on_event)
    try:
        assert sub.connected.wait(5)
        subprocess.run([sys.executable, "-c", WRITER, redis_url, "7", "1"], env=_env(), check=True, timeout=60)
        assert got.wait(5), events
    finally:
        sub.stop()
    write = next(e for e in events if e["kind"] == "write")
    change = next(e for e in events if e["kind"] == "change")
    assert write["file"] == "notes.md" and change["files"] == ["notes.md"] and change["actor"] == "writer-7"
    assert change["id"] == store.history()[0].sha


def test_a_raw_set_reaches_a_keyspace_subscriber(redis_url: str) -> None:
    store, _ = _memory(redis_url)
    store.client.config_set("notify-keyspace-events", "K$g")
    seen = threading.Event()
    sub = store.subscribe(lambda ev: ev.get("kind") == "external" and ev["file"] == "notes.md" and seen.set(),
                          keyspace=True)
    try:
        assert sub.connected.wait(5)
        store.client.set(store.key("notes.md"), b"# notes\n\nhand edit\n")
        assert seen.wait(5)
    finally:
        sub.stop()
        store.client.config_set("notify-keyspace-events", "")
    assert [c.path for c in store.external_changes()] == ["notes.md"]
