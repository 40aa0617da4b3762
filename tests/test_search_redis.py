"""Search on a Redis memory gives what search on a folder gives for the same files: the same bundle, ranking,
counts and fields, indexed or scanned, literal or regex; and raw writes to the store (SET, DEL, an edit that
keeps the length) are seen at the next query, as a folder's edits are."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

from memtui.core.recall.index import walk
from memtui.core.recall.search import Searcher, search
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory

BENCHES = Path(__file__).resolve().parent.parent / "benches"
QUERIES = ["postgres", "rollback", "public api", "superseded", "- [stated]", "the", "(2026-", "## ", "zz-none", "ab"]


def comparable(bundle) -> dict:
    d = bundle.to_dict()
    d.pop("method")
    return d


@pytest.fixture
def twins(tmp_path: Path, redis_url: str, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sys.path.insert(0, str(BENCHES))
    from generate import generate

    root = tmp_path / "folder"
    generate(root, files=160, megabytes=1.0, seed=4)
    store = RedisStore(redis_url)
    for rel in sorted(walk(root)):
        store.write(rel, (root / rel).read_bytes())
    return root, Memory(store), store


def same(root: Path, memory: Memory, query: str, **kw) -> dict:
    folder = search(root, query, limit=kw.pop("limit", 8), **kw)
    redis = search(memory, query, limit=folder.limit, **kw)
    assert comparable(redis) == comparable(folder), query
    assert redis.method == folder.method
    return comparable(redis)


def test_redis_search_equals_folder_search(twins) -> None:
    root, memory, _ = twins
    for query in QUERIES:
        assert same(root, memory, query)["searched_files"] == len(walk(root))
        same(root, memory, query, limit=1)
        same(root, memory, query, use_index=False)
    same(root, memory, r"post(gres|ure)", regex=True)
    same(root, memory, "rollback", path_glob="log/*")


def test_warm_redis_search_equals_folder_search(twins) -> None:
    root, memory, _ = twins
    with Searcher(memory, watch=True) as warm_redis, Searcher(root) as warm_folder:
        for query in QUERIES:
            got = warm_redis.search(query, limit=6)
            assert got.method == ("index" if len(query) >= 3 else "scan")
            assert comparable(got) == comparable(warm_folder.search(query, limit=6))


def test_raw_writes_to_the_store_are_seen(twins) -> None:
    root, memory, store = twins
    with Searcher(memory) as warm:
        assert warm.search("zqraw").sources == 0
        # A raw SET that bypassed memtui, an edit that keeps the length, a delete: each seen at the next query.
        store.client.set(store.key("notes/raw.md"), b"- [stated] zqraw set by hand (2026-05-01)\n")
        assert [r.path for r in warm.search("zqraw").results] == ["notes/raw.md"]
        store.client.set(store.key("notes/raw.md"), b"- [stated] zqrow set by hand (2026-05-01)\n")
        assert warm.search("zqraw").sources == 0 and warm.search("zqrow").sources == 1
        store.client.delete(store.key("notes/raw.md"))
        assert warm.search("zqrow").sources == 0
    # Hidden and private keys are not memory content, as a folder's are not.
    store.client.set(store.key(".memtui/secret.md"), b"zqhidden\n")
    assert search(memory, "zqhidden").sources == 0


def test_the_index_is_private_and_per_store(twins, tmp_path: Path) -> None:
    _, memory, _ = twins
    search(memory, "postgres")
    folders = list((tmp_path / "cache" / "memtui" / "index").iterdir())
    assert len(folders) == 1 and (folders[0] / "index.sqlite").exists()
    assert folders[0].stat().st_mode & 0o777 == 0o700


def test_a_warm_redis_search_hears_what_changed(twins) -> None:
    root, memory, store = twins
    store.client.config_set("notify-keyspace-events", "KA")
    try:
        other = RedisStore(store.url)  # another client: its raw writes reach this searcher only as events
        with Searcher(memory, watch=True) as warm:
            assert warm.search("zqheard").sources == 0
            for n in range(5):
                other.client.set(other.key(f"notes/heard-{n}.md"), f"- [stated] zqheard {n} (2026-05-01)\n".encode())
                got = warm.search("zqheard")  # at once: the mark proves the event was heard first
                assert got.sources == n + 1, got.render()
                assert warm.index.last_refresh.full is False
            other.client.set(other.key("notes/heard-0.md"), b"- [stated] zqhearx 0 (2026-05-01)\n")
            other.client.delete(other.key("notes/heard-1.md"))
            other.write("notes/heard-5.md", b"- [stated] zqheard through memtui's write (2026-05-02)\n")
            got = warm.search("zqheard")
            assert warm.index.last_refresh.full is False
            assert comparable(got) == comparable(search(memory, "zqheard", use_index=False))
            assert got.sources == 4, got.render()
    finally:
        store.client.config_set("notify-keyspace-events", "")


def test_without_keyspace_events_a_warm_redis_search_rechecks_every_key(twins) -> None:
    _, memory, store = twins
    store.client.config_set("notify-keyspace-events", "")
    with Searcher(memory, watch=True) as warm:
        warm.search("zqraw")
        store.client.set(store.key("notes/raw.md"), b"zqraw\n")
        assert warm.search("zqraw").sources == 1
        assert warm.index.last_refresh.full is True
