"""The Redis store through Memory, against a real redis-server: writes, history, queue, audit, external changes,
the lock, compare-and-set writes and connection trouble."""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager

import pytest
import redis as redis_py

from memtui.cli import main
from memtui.core.access.stores import init_store, open_memory
from memtui.core.storage.folder import LockTimeout
from memtui.core.storage.redis_store import OPLOG_MAX, RedisStore, sha1
from memtui.core.storage.store import StaleWrite, StoreUnavailable, content_hash
from memtui.core.writing.memory import Memory
from support.redis_server import free_port, redis_server, redis_url  # noqa: F401  (fixtures)

AGENT = "agent-claude"
NOTES = "# notes\n\n## Log\n\n"


@pytest.fixture
def store(redis_url: str) -> RedisStore:
    s = RedisStore(redis_url)
    init_store(s, author="wes")
    return s


@pytest.fixture
def rmem(store: RedisStore) -> Memory:
    return Memory(store)


def test_writes_land_in_strings_and_each_change_in_the_stream(rmem: Memory, store: RedisStore) -> None:
    r = rmem.update("Preferences", "add", "[stated] Prefers dark mode")
    assert r.status == "applied" and r.commit
    raw = store.client.get(f"{{{store.prefix}}}:file:MEMORY.md").decode()
    assert "- [stated] Prefers dark mode" in raw
    r2 = rmem.update("Preferences", "revise", "[stated] Prefers light mode", replaces="dark mode")
    r3 = rmem.update("Preferences", "remove", replaces="light mode")
    assert [r2.status, r3.status] == ["applied", "applied"]
    text = rmem.read_text("MEMORY.md") or ""
    assert "~~[stated] Prefers dark mode" in text and "removed" in text

    entry = store.change(r3.commit)
    assert entry is not None
    assert entry["actor"] == "wes" and entry["action"] == "remove" and entry["file"] == "MEMORY.md"
    assert entry["after"] == content_hash(text.encode())
    assert entry["before"] == store.change(r2.commit)["after"]  # the history is one chain
    assert "+- ~~[stated] Prefers light mode" in entry["diff"]
    assert [c.sha for c in store.history("MEMORY.md")][:3] == [r3.commit, r2.commit, r.commit]
    assert store.committed("MEMORY.md") == text.encode()
    assert store.external_changes() == []

    ops = store.oplog()
    assert [o["op"] for o in ops[:3]] == ["remove", "revise", "add"]
    assert set(ops[0]) >= {"id", "ts", "op", "summary", "bytes"} and ops[0]["bytes"] == len(text.encode())
    applied = [a for a in store.audit_records() if a["status"] == "applied"]
    assert [a["commit"] for a in applied[-3:]] == [r.commit, r2.commit, r3.commit]


def test_oplog_is_capped(store: RedisStore) -> None:
    for i in range(OPLOG_MAX + 15):
        store.note("read", f"read {i}", 10)
    ops = store.oplog(1000)
    assert len(ops) == OPLOG_MAX and ops[0]["summary"] == f"read {OPLOG_MAX + 14}"


def test_review_queue_lives_in_redis(rmem: Memory, store: RedisStore) -> None:
    q = rmem.update("Facts", "add", "[observed] Deploys on Fridays", actor=AGENT)
    q2 = rmem.update("Facts", "add", "[observed] Uses Postgres 16", actor=AGENT)
    assert (q.status, q.id, q2.id) == ("queued", "p-0001", "p-0002")
    assert store.client.hexists(store.k_queue, "p-0001")
    # Another process sees the same queue.
    other = Memory(RedisStore(store.url))
    assert [p.id for p in other.proposals()] == ["p-0001", "p-0002"]
    a = other.approve("p-0001", by="wes")
    assert a.status == "applied" and "Deploys on Fridays" in (rmem.read_text("MEMORY.md") or "")
    j = rmem.reject("p-0002", reason="not true", by="wes")
    assert j.status == "rejected" and "Postgres" not in (rmem.read_text("MEMORY.md") or "")
    assert rmem.proposals() == []
    rejected = [a for a in store.audit_records() if a["status"] == "rejected"]
    assert rejected[-1]["reason"] == "not true" and rejected[-1]["snapshot"]["entry"].startswith("[")
    head = store.history()[0]
    assert "Memtui-Approved-By: wes" in head.message and head.author == AGENT


def test_raw_sets_that_bypass_memtui_are_external_changes(rmem: Memory, store: RedisStore) -> None:
    before = store.read("MEMORY.md")
    store.client.set(store.key("MEMORY.md"), before + b"\nhand edit\n")
    store.client.set(store.key("people/ana.md"), b"# Ana\n")
    found = {p.file: p for p in rmem.proposals()}
    assert set(found) == {"MEMORY.md", "people/ana.md"}
    assert found["people/ana.md"].action == "create" and "+hand edit" in found["MEMORY.md"].diff
    ok = rmem.approve(found["people/ana.md"].id, by="wes")
    assert ok.status == "applied" and store.committed("people/ana.md") == b"# Ana\n"
    no = rmem.reject(found["MEMORY.md"].id, reason="vandalism", by="wes")
    assert no.status == "rejected" and store.read("MEMORY.md") == before
    kept = [a for a in store.audit_records() if a["status"] == "rejected"][-1]
    assert "hand edit" in kept["kept_at"] or store.client.hlen(store.k_rejected) == 1
    store.client.delete(store.key("people/ana.md"))
    assert [(c.path, c.kind) for c in store.external_changes()] == [("people/ana.md", "delete")]
    assert rmem.proposals()[0].action == "delete"


def test_files_paths_and_config(rmem: Memory, store: RedisStore) -> None:
    assert rmem.create("people/ana.md", "# Ana\n").status == "applied"
    assert rmem.files() == ["MEMORY.md", "people/ana.md"]
    for bad in ("../etc/passwd", "/abs.md", ".git/config", ".memtui/config.toml"):
        assert rmem.create(bad, "x").status == "refused"
    assert "[review]" in (store.config_text() or "")
    assert rmem.log("deploy went fine").status == "applied"
    assert any(f.startswith("log/") for f in rmem.files())


def test_lock_excludes_other_writers_and_times_out(store: RedisStore) -> None:
    other = RedisStore(store.url)
    with store.lock():
        with store.lock():  # re-entrant in one thread
            pass
        with pytest.raises(LockTimeout, match="locked by another writer"):
            with other.lock(timeout=0.3):
                pass
    with other.lock(timeout=1):
        assert store.client.get(store.k_lock).decode().startswith(other._owner)


def test_a_lapsed_lock_never_releases_the_next_holders_lock(redis_url: str) -> None:
    first = RedisStore(redis_url, lock_ttl_ms=150)
    first._renew_loop = lambda: None  # type: ignore[method-assign]  # no renewal: the lock lapses
    second = RedisStore(redis_url)
    with first.lock():
        time.sleep(0.3)
        with second.lock(timeout=1):
            pass
        with second.lock(timeout=1):
            token = second.client.get(second.k_lock)
    assert token is not None and first.client.get(first.k_lock) is None


def test_a_writer_that_lost_the_race_gets_stale_write(store: RedisStore) -> None:
    other = RedisStore(store.url)
    with store.lock():
        data = store.read("MEMORY.md")
        other.write("MEMORY.md", data + b"- [stated] other writer\n")  # e.g. its lock had lapsed
        with pytest.raises(StaleWrite):
            store.write("MEMORY.md", data + b"- [stated] mine\n")
    assert store.read("MEMORY.md").endswith(b"other writer\n")


class UnlockedStore(RedisStore):
    """A store whose lock does nothing, as if every lock had lapsed: only compare-and-set guards the files.

    (The crash journal is one per memory and assumes the lock, so it is left out here.)"""

    def intent_save(self, data: bytes | None) -> None:
        pass

    def intent_load(self) -> bytes | None:
        return None

    @contextmanager
    def lock(self, timeout: float = 30.0):
        depth = getattr(self._local, "depth", 0)
        if not depth:
            self._local.seen = {}
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth -= 1
            if not self._local.depth:
                self._local.seen = None


def test_compare_and_set_alone_loses_no_update(store: RedisStore) -> None:
    Memory(store).create("notes.md", NOTES)
    results: list[str] = []

    def writer(n: int) -> None:
        mem = Memory(UnlockedStore(store.url))
        for i in range(12):
            r = mem.update("Log", "add", f"[observed] writer event w{n}x{i}", file="notes.md")
            results.append(r.status if r.status == "applied" else r.message)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = store.read("notes.md").decode()
    # A write that kept losing is reported (and nothing of it written); every applied one is in the file.
    reported = [r for r in results if r != "applied"]
    assert all("kept changing under this write" in r and "try again" in r for r in reported), reported
    assert results.count("applied") >= 40
    assert sum(1 for line in text.splitlines() if line.startswith("- [observed] writer")) == results.count("applied")


def test_unreachable_redis_says_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0?prefix=gone"
    with pytest.raises(StoreUnavailable, match="redis-server is running"):
        Memory(RedisStore(url)).read_text("MEMORY.md")
    assert main(["update", "Facts", "add", "[stated] x", "--store", url]) == 1
    err = capsys.readouterr().err
    assert "cannot be reached" in err and "Traceback" not in err


def test_slow_redis_times_out_with_a_clear_error(store: RedisStore) -> None:
    slow = RedisStore(store.url + "&timeout=0.2")
    pauser = redis_py.Redis.from_url(store.url.split("?")[0])
    # The server stops answering everyone for a second; the store gives up after its 0.2 s, not after the pause.
    paused = time.monotonic()
    pauser.execute_command("CLIENT", "PAUSE", "1000", "ALL")
    with pytest.raises(StoreUnavailable, match="did not answer within 0.2 s"):
        slow.read("MEMORY.md")
    assert time.monotonic() - paused < 0.8
    pauser.ping()  # held until the pause ends (a sleep of 1.1 s from `paused` was short if the PAUSE came late)
    assert slow.read("MEMORY.md") is not None  # once it answers again, the same store just works


def test_store_chosen_by_flag_env_or_config(store: RedisStore, tmp_path, monkeypatch, capsys) -> None:
    assert main(["update", "Facts", "add", "[stated] Flag works", "--store", store.url]) == 0
    monkeypatch.setenv("MEMTUI_STORE", store.url)
    assert main(["show", "--section", "Facts"]) == 0
    assert "Flag works" in capsys.readouterr().out
    monkeypatch.delenv("MEMTUI_STORE")
    root = tmp_path / "pointer"
    (root / ".memtui").mkdir(parents=True)
    (root / ".memtui" / "config.toml").write_text(f'[store]\nurl = "{store.url}"\n')
    assert isinstance(open_memory(root).store, RedisStore)
    assert main(["show", "--root", str(root), "--section", "Facts", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["sections"][0]["entries"][0]["text"].startswith("- [stated] Flag works")


def test_sha1_matches_the_servers(store: RedisStore) -> None:
    data = "ünïcode\n".encode()
    store.write("x.md", data)
    assert store.client.eval("return redis.sha1hex(redis.call('GET', KEYS[1]))", 1, store.key("x.md")).decode() \
        == sha1(data)
