"""Memories on a real Redis Cluster (3 masters + 3 replicas on loopback, persistence off, one cluster for the
module): import, writes by people and agents, history, today, undo, live events, memories kept apart and spread
over the masters, many writers losing no update, wrong-URL errors, and a master killed with its replica promoted."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis as redis_py

from memtui.cli import main
from memtui.core.access.redis_transfer import import_memory
from memtui.core.access.stores import init_store, open_memory
from memtui.core.storage.init import init_root
from memtui.core.storage.redis_store import RedisStore, list_memories
from memtui.core.storage.store import StoreError, StoreUnavailable
from memtui.core.timeline.history import history, undo_last
from memtui.core.timeline.today import today
from memtui.core.writing.memory import Memory
from support.redis_server import RedisClusterServers, redis_server  # noqa: F401  (fixture)

AGENT = "agent-claude"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    servers = RedisClusterServers(tmp_path_factory.mktemp("cluster"), masters=3, replicas=1).start()
    yield servers
    servers.stop()


def fresh(cluster: RedisClusterServers, prefix: str | None = None, **options: object) -> tuple[str, Memory]:
    url = cluster.url(prefix, **options)
    store = RedisStore(url)
    init_store(store, author="wes")
    return url, Memory(store)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEMTUI_USER": "wes"})


def test_a_memory_lives_in_one_slot_and_a_person_writes_to_it(cluster: RedisClusterServers) -> None:
    url, mem = fresh(cluster)
    store = mem.store
    assert store.cluster and url.startswith("redis+cluster://")
    r = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor="wes")
    assert r.status == "applied" and r.commit
    slot = store.client.keyslot(store.key("MEMORY.md"))
    assert {store.client.keyslot(k) for k in (store.k_changes, store.k_lock, store.k_queue, store.k_audit,
                                               store.channel, f"{store.base}:blob:x")} == {slot}
    # the bytes are where a plain client on the slot's master finds them under the documented key
    master = redis_py.Redis(port=cluster.port_of_slot(slot))
    assert b"Prefers dark mode" in master.get(f"{{{store.prefix}}}:file:MEMORY.md")
    out = run_cli("show", "MEMORY.md", "--store", url)
    assert out.returncode == 0 and "Prefers dark mode" in out.stdout, out.stderr


def test_an_agent_proposal_is_queued_then_approved(cluster: RedisClusterServers) -> None:
    url, mem = fresh(cluster)
    q = mem.update("Facts", "add", "[stated] Lives in Lisbon", actor=AGENT)
    assert q.status == "queued" and q.id
    out = run_cli("queue", "list", "--json", "--store", url)
    assert q.id in out.stdout, out.stderr
    out = run_cli("queue", "approve", q.id, "--store", url)
    assert out.returncode == 0, out.stderr
    assert "Lives in Lisbon" in (mem.read_text("MEMORY.md") or "")
    assert [c.author for c in mem.store.history()][:1] == [AGENT]


def test_import_history_today_and_undo_on_a_cluster(cluster: RedisClusterServers, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    init_root(root)
    folder = Memory(root)
    for fact in ("Uses Postgres", "Ships on Tuesdays"):
        assert folder.update("Facts", "add", f"[stated] {fact}").status == "applied"
    url = cluster.url()
    res = import_memory(root, RedisStore(url))
    assert res.changes == 3
    mem = open_memory(url=url)
    assert mem.store.read("MEMORY.md") == (root / "MEMORY.md").read_bytes()
    own = mem.update("Decisions", "add", "[stated] Public API uses tRPC", actor="wes")
    assert own.status == "applied"
    commits = history(mem, "MEMORY.md")
    assert commits[0].commit == own.commit and len(commits) == 4
    report = today(mem, since="2000-01-01")
    assert any(c.commit == own.commit for c in report.changes)
    undone = undo_last(mem, "wes")
    assert undone.status == "applied", undone.message
    assert "tRPC" not in (mem.read_text("MEMORY.md") or "") and "Ships on Tuesdays" in (mem.read_text("MEMORY.md")
                                                                                           or "")
    out = run_cli("history", "MEMORY.md", "--json", "--store", url)
    assert out.returncode == 0 and undone.commit in out.stdout, out.stderr
    # and back out to a folder: one git commit per recorded change
    out = run_cli("export", "--to", str(tmp_path / "exported"), "--store", url)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "exported" / "MEMORY.md").read_bytes() == mem.store.read("MEMORY.md")
    assert len(list(history(Memory(tmp_path / "exported"), "MEMORY.md"))) == len(history(mem, "MEMORY.md"))


def test_live_events_arrive_through_sharded_pubsub(cluster: RedisClusterServers) -> None:
    url, mem = fresh(cluster)
    store = mem.store
    events: list[dict] = []
    got = threading.Event()

    def seen(event: dict) -> None:
        events.append(event)
        if event.get("kind") == "change":
            got.set()

    sub = store.subscribe(seen)
    try:
        assert sub.connected.wait(5)
        master = redis_py.Redis(port=cluster.port_of_slot(store.client.keyslot(store.channel)))
        assert master.execute_command("PUBSUB", "SHARDNUMSUB", store.channel)[1] == 1
        out = run_cli("update", "Facts", "add", "[stated] Seen live", "--store", url)
        assert out.returncode == 0, out.stderr
        assert got.wait(5), events
    finally:
        sub.stop()
    change = next(e for e in events if e.get("kind") == "change")
    assert change["files"] == ["MEMORY.md"] and change["actor"] == "wes"
    assert any(e.get("kind") == "write" and e.get("file") == "MEMORY.md" for e in events)


def test_live_events_on_a_cluster_without_sharded_pubsub_use_plain_publish(cluster: RedisClusterServers) -> None:
    """The path for a cluster older than Redis 7 (no SPUBLISH): PUBLISH, heard on the slot's master."""
    url, mem = fresh(cluster)
    store = mem.store
    assert store.sharded
    store.sharded = False
    store._register_publishers()
    got = threading.Event()
    events: list[dict] = []
    sub = store.subscribe(lambda e: (events.append(e), e.get("kind") == "change" and got.set()))
    try:
        assert sub.connected.wait(5)
        master = redis_py.Redis(port=cluster.port_of_slot(store.client.keyslot(store.channel)))
        assert master.execute_command("PUBSUB", "NUMSUB", store.channel)[1] == 1
        assert mem.update("Facts", "add", "[stated] Heard without shards", actor="wes").status == "applied"
        assert got.wait(5), events
    finally:
        sub.stop()


def test_two_memories_are_kept_apart_and_listed_with_their_masters(cluster: RedisClusterServers) -> None:
    names = [f"apart-{i}" for i in range(12)]
    mems = {n: fresh(cluster, n)[1] for n in names}
    mems["apart-0"].update("Facts", "add", "[stated] Only in zero", actor="wes")
    mems["apart-1"].update("Facts", "add", "[stated] Only in one", actor="wes")
    assert "Only in zero" in (mems["apart-0"].read_text("MEMORY.md") or "")
    assert "Only in zero" not in (mems["apart-1"].read_text("MEMORY.md") or "")
    assert "Only in one" not in (mems["apart-0"].read_text("MEMORY.md") or "")
    found = {m["prefix"]: m for m in list_memories(cluster.url("ignored"))}
    assert set(names) <= set(found)
    assert found["apart-0"]["changes"] == 2 and found["apart-2"]["changes"] == 1
    assert len({found[n]["node"] for n in names}) == 3  # twelve memories land on all three masters
    out = run_cli("list", "--json", "--store", cluster.url("ignored"))
    listed = {m["prefix"]: m for m in json.loads(out.stdout)["memories"]}
    assert out.returncode == 0 and set(names) <= set(listed)
    assert RedisStore(listed["apart-0"]["url"]).read("MEMORY.md") == mems["apart-0"].store.read("MEMORY.md")


def test_many_writers_lose_no_update(cluster: RedisClusterServers) -> None:
    url, mem = fresh(cluster, lock_ttl=5)
    procs, each = 4, 6
    # each entry a distinct token, so no two look alike to the near-duplicate check
    code = ("import hashlib, sys\nfrom memtui.core.access.stores import open_memory\n"
            "m = open_memory(url=sys.argv[1])\n"
            "for i in range(int(sys.argv[3])):\n"
            "    token = hashlib.sha1(f'{sys.argv[2]}-{i}'.encode()).hexdigest()\n"
            "    r = m.update('Facts', 'add', f'[stated] Token {token}', actor='wes')\n"
            "    assert r.status == 'applied', r.message\n")
    ps = [subprocess.Popen([sys.executable, "-c", code, url, str(n), str(each)], env=os.environ)
          for n in range(procs)]
    threads = [threading.Thread(target=lambda n=n: [mem.update("Log", "add", f"[observed] q{n}z{i} happened",
                                                               file="log.md") for i in range(each)])
               for n in range(2)]
    mem.create("log.md", "# log\n\n## Log\n\n")
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(120) for p in ps] == [0] * procs
    text = mem.read_text("MEMORY.md") or ""
    tokens = [hashlib.sha1(f"{n}-{i}".encode()).hexdigest() for n in range(procs) for i in range(each)]
    missing = [t for t in tokens if t not in text]
    assert missing == []
    log = mem.read_text("log.md") or ""
    assert all(f"q{n}z{i} happened" in log for n in range(2) for i in range(each))
    assert mem.store.external_changes() == []


def test_a_single_server_url_on_a_cluster_node_says_to_use_the_cluster_url(cluster: RedisClusterServers) -> None:
    port = cluster.master_ports()[0]
    # find a prefix whose slot is on another master, so the plain client gets MOVED
    probe = RedisStore(cluster.url("probe"))
    prefix = next(f"moved-{i}" for i in range(100)
                  if cluster.port_of_slot(probe.client.keyslot(f"{{moved-{i}}}:config")) != port)
    plain = RedisStore(f"redis://127.0.0.1:{port}/0?prefix={prefix}")
    with pytest.raises(StoreError) as err:
        plain.read("MEMORY.md")
    assert "redis+cluster://" in str(err.value) and "node of a Redis Cluster" in str(err.value)
    out = run_cli("show", "MEMORY.md", "--store", f"redis://127.0.0.1:{port}/0?prefix={prefix}")
    assert out.returncode == 1 and "redis+cluster://" in out.stderr and "Traceback" not in out.stderr
    # a memory whose slot is on that very node is refused too (when opened), rather than half working
    local = next(f"here-{i}" for i in range(100)
                 if cluster.port_of_slot(probe.client.keyslot(f"{{here-{i}}}:config")) == port)
    url = f"redis://127.0.0.1:{port}/0?prefix={local}"
    for args in (["show", "MEMORY.md"], ["update", "Facts", "add", "[stated] Half working"]):
        out = run_cli(*args, "--store", url)
        assert out.returncode == 1 and f"redis+cluster://HOST:PORT/?prefix={local}" in out.stderr, out.stderr
    with pytest.raises(StoreError) as err:
        list_memories(f"redis://127.0.0.1:{port}/0")
    assert "redis+cluster://HOST:PORT/ " in str(err.value)


def test_a_cluster_url_on_a_single_server_says_so(redis_server) -> None:  # noqa: F811
    with pytest.raises(StoreError) as err:
        RedisStore(f"redis+cluster://127.0.0.1:{redis_server.port}/?prefix=x")
    assert "single server, not a cluster" in str(err.value) and f"redis://HOST:PORT/0?prefix=x" in str(err.value)


def test_a_cluster_url_with_a_database_or_a_brace_in_the_prefix_is_refused() -> None:
    with pytest.raises(StoreError, match="only database 0"):
        RedisStore("redis+cluster://127.0.0.1:1/3?prefix=x")
    with pytest.raises(StoreError, match="may not hold"):
        RedisStore("redis://127.0.0.1:1/0?prefix=a{b}")


async def test_mcp_servers_on_two_memories_of_the_cluster_at_once(cluster: RedisClusterServers) -> None:
    from support.mcp_client import mcp_client, text_of

    (url_a, mem_a), (url_b, mem_b) = fresh(cluster, "mcp-a"), fresh(cluster, "mcp-b")
    env = {"MEMTUI_USER": "wes", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--store", url_a], env) as a, \
            mcp_client(sys.executable, ["-m", "memtui", "mcp", "--store", url_b], env) as b:
        qa = await a.call_tool("memory_update", {"section": "Facts", "action": "add", "entry": "[stated] Alpha"})
        qb = await b.call_tool("memory_update", {"section": "Facts", "action": "add", "entry": "[stated] Beta"})
        assert not qa.is_error and not qb.is_error, (text_of(qa), text_of(qb))
        assert qa.structured_content["status"] == qb.structured_content["status"] == "queued"
        assert mem_a.approve(qa.structured_content["id"], by="wes").status == "applied"
        read = await a.call_tool("memory_read", {"path": "MEMORY.md", "section": "Facts"})
        assert "Alpha" in text_of(read) and "Beta" not in text_of(read)
    assert ["Beta" in (p.entry or "") for p in mem_b.proposals()] == [True] and mem_a.proposals() == []


async def test_the_app_on_a_cluster_memory_shows_another_process_change_live(cluster: RedisClusterServers,
                                                                             monkeypatch, tmp_path) -> None:
    from app_support import SIZE, wait_for

    from memtui.tui.app import MemtuiApp
    from memtui.tui.viewer import MemoryViewer

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    url, mem = fresh(cluster)
    app = MemtuiApp(memory=mem, watch=True)

    def shown() -> str:
        viewer = app.viewer_for("MEMORY.md")
        return "\n".join(viewer.state.lines) if isinstance(viewer, MemoryViewer) and viewer.state else ""

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.synced and app.watcher is not None and app.watcher._sub.connected.is_set(),
                       what="the app on the cluster to start")
        out = run_cli("update", "Facts", "add", "[stated] Seen through the cluster", "--store", url)
        assert out.returncode == 0, out.stderr
        await wait_for(pilot, lambda: "Seen through the cluster" in shown(), timeout=10, what="the live change")
        queued = run_cli("update", "Facts", "add", "[stated] Waits for review", "--by", AGENT, "--store", url)
        assert queued.returncode == 4, queued.stdout + queued.stderr
        await wait_for(pilot, lambda: any("Waits for review" in (p.entry or "") for p in app.review.proposals),
                       timeout=10, what="the proposal in the review panel")


def test_a_memory_whose_slot_moves_to_another_master_keeps_working_and_live(cluster: RedisClusterServers) -> None:
    url, mem = fresh(cluster)
    store = mem.store
    slot = store.client.keyslot(store.k_changes)
    events: list[dict] = []
    sub = store.subscribe(events.append)
    try:
        assert sub.connected.wait(5)
        assert mem.update("Facts", "add", "[stated] Before the move", actor="wes").status == "applied"
        source = cluster.port_of_slot(slot)
        cluster.move_slot(slot, next(p for p in cluster.master_ports() if p != source))
        assert cluster.port_of_slot(slot) != source
        assert mem.update("Facts", "add", "[stated] After the move", actor="wes").status == "applied"
        out = run_cli("update", "Facts", "add", "[stated] From another process", "--store", url)
        assert out.returncode == 0, out.stderr
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
                e.get("kind") == "change" and e.get("actor") == "wes" and "connected" in [x.get("kind") for x in
                                                                                         events[:events.index(e)]]
                for e in events):
            time.sleep(0.05)
    finally:
        sub.stop()
    kinds = [e.get("kind") for e in events]
    assert "disconnected" in kinds and "connected" in kinds, kinds
    assert "slot moved" in next(e["message"] for e in events if e.get("kind") == "disconnected")
    assert kinds.index("connected") < len(kinds) - 1 and "change" in kinds[kinds.index("connected"):]
    text = mem.read_text("MEMORY.md") or ""
    assert all(f in text for f in ("Before the move", "After the move", "From another process"))
    assert len(store.changes()) == 4 and store.external_changes() == []


def test_a_master_killed_mid_run_loses_no_acknowledged_write(cluster: RedisClusterServers) -> None:
    """Last in the module: it leaves the cluster with one master replaced by its replica."""
    url, mem = fresh(cluster, "failover", wait=1, timeout=2)
    store = mem.store
    victim = cluster.port_of_slot(store.client.keyslot(store.k_changes))
    acknowledged: list[str] = []
    told: list[str] = []
    events: list[dict] = []
    sub = store.subscribe(events.append)
    assert sub.connected.wait(5)
    stop = time.monotonic() + 60

    def writer() -> None:
        i = 0
        while time.monotonic() < stop and len(acknowledged) < 40:
            entry = f"[stated] Token {hashlib.sha1(str(i).encode()).hexdigest()}"
            try:
                r = mem.update("Facts", "add", entry, actor="wes")
            except StoreUnavailable as exc:
                told.append(str(exc))
                time.sleep(0.2)
                continue
            if r.status == "applied":
                acknowledged.append(entry)
                i += 1
            elif "already says this" in r.message:
                i += 1  # a write told "not confirmed" that did land: it was never acknowledged, so not counted
            else:
                told.append(r.message)
                time.sleep(0.2)

    t = threading.Thread(target=writer)
    t.start()
    while len(acknowledged) < 10 and t.is_alive():
        time.sleep(0.01)
    cluster.kill(victim)
    # wait=1 refuses to call a write done while the promoted replica has no replica of its own: once the replica
    # has taken over, the killed node comes back (as an operator would bring it) and rejoins as its replica. (Back
    # before the takeover, a master without persistence would return empty, and its replica would copy that.)
    cluster.wait_takeover(store.client.keyslot(store.k_changes), victim)
    cluster.restart(victim)
    t.join(90)
    try:
        assert len(acknowledged) >= 40, (acknowledged, told[-3:])
        assert told, "the writer was never told of the failover"
        assert all("Traceback" not in m for m in told)
        cluster.wait_ok()
        assert victim not in cluster.master_ports()
        fresh_store = RedisStore(cluster.url("failover"))
        text = (fresh_store.read("MEMORY.md") or b"").decode()
        assert [e for e in acknowledged if e[len("[stated] "):] not in text] == []
        assert fresh_store.external_changes() == []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not any(e.get("kind") == "connected" for e in events):
            time.sleep(0.1)
        kinds = [e.get("kind") for e in events]
        assert "disconnected" in kinds and "connected" in kinds
        lost = next(e for e in events if e.get("kind") == "disconnected")
        assert "reconnecting" in lost["message"]
    finally:
        sub.stop()

