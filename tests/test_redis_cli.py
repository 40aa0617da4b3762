"""`memtui search` and `memtui context` on a Redis memory: both read the store, never the folder next to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

from memtui.core.access.stores import init_store
from memtui.core.storage.init import init_root
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory


def memtui(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "MEMTUI_STORE"}
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=60,
                          env={**base, "MEMTUI_USER": "wes", **(env or {})})


def two_memories(tmp_path: Path, url: str) -> Path:
    """A folder and a Redis memory that hold different facts, so answering from the wrong one shows."""
    root = tmp_path / "memory"
    init_root(root)
    Memory(root).update("Facts", "add", "[stated] Only in the folder", actor="wes")
    store = RedisStore(url)
    init_store(store, author="wes")
    Memory(store).update("Facts", "add", "[stated] Only in Redis", actor="wes")
    return root


def test_context_reads_the_redis_memory(tmp_path: Path, redis_url: str) -> None:
    root = two_memories(tmp_path, redis_url)
    for how in (["--store", redis_url], []):
        done = memtui("context", "--root", str(root), *how, env={} if how else {"MEMTUI_STORE": redis_url})
        assert done.returncode == 0, done.stderr
        assert "Only in Redis" in done.stdout and "Only in the folder" not in done.stdout


def test_search_reads_the_redis_memory_not_the_folder(tmp_path: Path, redis_url: str) -> None:
    root = two_memories(tmp_path, redis_url)
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = memtui("search", "Only in", "--root", str(root), "--store", redis_url, env=cache)
    assert done.returncode == 0, done.stderr
    assert "Only in Redis" in done.stdout and "Only in the folder" not in done.stdout
    done = memtui("search", "Only in", "--root", str(root), "--json", env={"MEMTUI_STORE": redis_url, **cache})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["method"] == "index" and [r["text"][:24] for r in data["results"]] == ["- [stated] Only in Redis"]
    # The Redis memory's index is in the local cache, not in the folder's .memtui.
    assert list((tmp_path / "cache" / "memtui" / "index").glob("*/index.sqlite"))
    done = memtui("search", "Only in", "--root", str(root))  # the folder itself still searches
    assert done.returncode == 0 and "Only in the folder" in done.stdout and "Only in Redis" not in done.stdout


def test_the_agent_search_tool_searches_a_redis_memory(tmp_path: Path, redis_url: str, monkeypatch) -> None:
    from memtui.core.access.tools import run_tool

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    two_memories(tmp_path, redis_url)
    out = run_tool(Memory(RedisStore(redis_url)), "memory_search", {"query": "only in"}, "agent:claude")
    assert not out.is_error, out.text
    assert "Only in Redis" in out.text and "Only in the folder" not in out.text
