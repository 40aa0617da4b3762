"""An agent's path cannot move a write out of its memory's hash tag: whatever braces, colons or glob characters a
path holds, its key starts with `{prefix}:file:`, hashes to the memory's slot, and is listed as that file."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from memtui.core.access.stores import init_store
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

AGENT = "agent-claude"
HOSTILE = ["notes/}{other}.md", "{other}:file:MEMORY.md", "notes/{x}.md", "a*b?.md", "people/[ana].md",
           "notes/}.md", "notes/{.md", "x}:config.md"]


@pytest.mark.parametrize("rel", HOSTILE)
def test_a_hostile_path_stays_in_the_memorys_slot(rel: str, redis_url: str) -> None:
    store = RedisStore(redis_url)
    other = RedisStore(redis_url.replace("prefix=", "prefix=other-"))
    init_store(store, author="wes")
    init_store(other, author="wes")
    mem = Memory(store)
    try:
        norm = store.check_path(rel)
    except Exception as exc:  # refused outright is fine too, with a message
        assert str(exc)
        return
    key = store.key(norm)
    assert key.startswith(f"{{{store.prefix}}}:file:")
    assert key_slot(key.encode()) == key_slot(store.k_changes.encode())
    r = mem.create(norm, "# hostile\n", actor=AGENT)
    assert r.status == "queued"
    assert mem.approve(r.id, by="wes").status == "applied"
    assert norm in store.list_files("**/*")
    assert other.read(norm) is None
    assert other.list_files("**/*") == ["MEMORY.md"]
    assert store.external_changes() == []
