"""A memory written in the Redis layout before the hash tag (``p:file:…``) is found and moved to ``{p}:…`` when
first opened, and leftovers an older memtui writes later are moved by `memtui doctor --fix`: nothing is lost."""

from __future__ import annotations

import json

from memtui.cli import main
from memtui.core.access.stores import init_store, open_memory
from memtui.core.hygiene.doctor import diagnose
from memtui.core.storage.redis_store import RedisStore, list_memories
from memtui.core.writing.memory import Memory
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

AGENT = "agent-claude"


def legacy_memory(url: str) -> tuple[Memory, RedisStore]:
    """A memory as an older memtui wrote it: the same code, every key under the bare `prefix:`."""
    store = RedisStore(url)
    store._name_keys(store.prefix)
    init_store(store, author="wes")
    mem = Memory(store)
    assert mem.update("Preferences", "add", "[stated] Prefers dark mode", actor="wes").status == "applied"
    assert mem.update("Facts", "add", "[stated] Lives in Porto", actor=AGENT).status == "queued"
    mem.create("people/ana.md", "# Ana\n")
    store.client.set(store.key("people/bo.md"), b"# Bo\n\nwritten by hand\n")  # an outside change
    return mem, store


def test_an_old_layout_memory_is_moved_on_open_and_nothing_is_lost(redis_url: str) -> None:
    old_mem, old = legacy_memory(redis_url)
    p = old.prefix
    before = {
        "files": {rel: old.read(rel) for rel in old.list_files("**/*")},
        "changes": [(sid, f["message"]) for sid, f in old.changes()],
        "audit": list(old.audit_records()),
        "queue": {pid: old.queue_load(pid) for pid in old.queue_ids()},
        "config": old.config_text(),
        "external": [(c.path, c.after) for c in old.external_changes()],
        "seq": old.client.get(f"{p}:queue:seq"),
    }
    assert old.client.exists(f"{p}:file:MEMORY.md") and not old.client.exists(f"{{{p}}}:file:MEMORY.md")
    assert [m["layout"] for m in list_memories(redis_url) if m["prefix"] == p] == ["legacy"]

    mem = open_memory(url=redis_url)
    new = mem.store
    assert {rel: new.read(rel) for rel in new.list_files("**/*")} == before["files"]
    assert [(sid, f["message"]) for sid, f in new.changes()] == before["changes"]
    assert list(new.audit_records()) == before["audit"]
    assert {pid: new.queue_load(pid) for pid in new.queue_ids()} == before["queue"]
    assert new.config_text() == before["config"] and new.client.get(new.k_seq) == before["seq"]
    assert [(c.path, c.after) for c in new.external_changes()] == before["external"]
    assert new.legacy_keys() == [] and not list(new.client.scan_iter(match=f"{p}:*"))
    assert new.oplog(1)[0]["op"] == "migrate"
    # and it keeps working: history, the queued proposal, the next proposal number
    [pending] = [x for x in mem.proposals() if not x.external]
    assert mem.approve(pending.id, by="wes").status == "applied"
    assert "Lives in Porto" in (mem.read_text("MEMORY.md") or "")
    assert mem.update("Facts", "add", "[stated] Has a cat", actor=AGENT).id == "p-0002"
    assert [m["layout"] for m in list_memories(redis_url) if m["prefix"] == p] == ["hash-tag"]


def test_doctor_moves_keys_an_older_memtui_wrote_after_the_move(redis_url: str, capsys) -> None:
    legacy_memory(redis_url)
    mem = open_memory(url=redis_url)  # moved
    store = mem.store
    stale = RedisStore(redis_url)
    stale._name_keys(stale.prefix)  # an older memtui still running: it writes a file and its config again
    stale.client.set(stale.key("late.md"), b"# late\n")
    stale.client.set(stale.k_config, b"# an older config\n")
    report = diagnose(mem)
    [finding] = [f for f in report.findings if f.kind == "legacy-keys"]
    assert not finding.fixed and "doctor --fix" in finding.message
    assert main(["doctor", "--fix", "--json", "--store", redis_url]) == 0
    out = json.loads(capsys.readouterr().out)
    [fixed] = [f for f in out["findings"] if f["kind"] == "legacy-keys"]
    assert fixed["fixed"] and "1 differed" in fixed["message"]
    assert store.read("late.md") == b"# late\n"  # moved: shows as an outside change to review
    assert "late.md" in [c.path for c in store.external_changes()]
    [kept] = store.client.keys(f"{store.base}:legacy:*:config")  # kept, not overwritten
    assert store.client.get(kept) == b"# an older config\n"
    # an older memtui writing yet again: a second move keeps that too, beside the first
    stale.client.set(stale.k_config, b"# an even older config\n")
    assert diagnose(mem, fix=True).ok
    assert sorted(store.client.get(k) for k in store.client.keys(f"{store.base}:legacy:*:config")) == [
        b"# an even older config\n", b"# an older config\n"]
    assert "[review]" in (store.config_text() or "")
    assert store.legacy_keys() == []


def test_an_empty_prefix_opens_without_moving_anything(redis_url: str) -> None:
    mem = open_memory(url=redis_url)
    assert mem.store.legacy_keys() == [] and mem.store.oplog() == []
