"""A Redis memory's watcher answers cold searches too: `memtui index --watch --store URL` keeps a warm searcher
fresh by the store's events and serves it on a socket in the memory's local cache, as a folder's watcher does.

The answers are the ones a search of its own gives, fresh for memtui's writes and for raw SETs (heard through
keyspace events, and re-checked by hash once those are turned off), one watcher per memory, and a cold search that
is answered imports no Redis client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.redis_server import RedisServer

from memtui.core.recall import search_socket
from memtui.core.recall.search import search
from memtui.core.storage.redis_store import RedisStore
from memtui.core.storage.store_urls import cache_dir, cache_name
from memtui.core.writing.memory import Memory

WORKTREE = Path(__file__).resolve().parent.parent
QUERIES = [("postgres", False, 5, None), ("narwhal-quartz-2057", False, 5, None), ("rollback", False, 2, "log/*"),
           ("deploy.*fail", True, 5, None), ("(unclosed", True, 5, None), ("zzz-nowhere", False, 5, None)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server of this module's own: these tests turn keyspace events on and off."""
    s = RedisServer(tmp_path_factory.mktemp("redis-served")).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    sys.path.insert(0, str(WORKTREE / "benches"))
    from generate import generate

    root = tmp_path_factory.mktemp("served-store")
    generate(root, files=120, megabytes=1.0, seed=5)
    return root


@pytest.fixture
def store(server: RedisServer, generated: Path, monkeypatch: pytest.MonkeyPatch):
    from memtui.core.access.redis_transfer import import_memory

    import tempfile

    # A short cache path: a socket's path holds at most ~100 bytes, and pytest's temporary folders are deep.
    short = tempfile.mkdtemp(prefix="mc", dir="/tmp")
    monkeypatch.setenv("XDG_CACHE_HOME", short)
    s = RedisStore(server.url())
    s.client.config_set("notify-keyspace-events", "KA")
    import_memory(generated, s, history=False)
    yield s
    import shutil

    shutil.rmtree(short, ignore_errors=True)


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(WORKTREE) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def _default_signals() -> None:
    """Ctrl-C and a hang-up reach the watcher as from a terminal, even under nohup or a shell's `cmd &`."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


class Watcher:
    def __init__(self, url: str, *, expect: str = "answered from here") -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "memtui", "index", "--watch", "--store", url],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                                     preexec_fn=_default_signals)
        self.line = self.proc.stdout.readline()
        assert expect in self.line, (self.line, self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.folder = cache_dir(cache_name(url), make=False)
        self.socket = Path(search_socket.socket_path(self.folder, cache=True))

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(20)
        self.proc.stdout.close()
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        return err


def served(store: RedisStore, query: str, regex: bool = False, limit: int = 5, glob: str | None = None):
    return search_socket.ask(cache_dir(store.cache_name, make=False), query, regex=regex, limit=limit,
                             path_glob=glob, cache=True)


def cli(url: str, query: str, *extra: str) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, "-m", "memtui", "search", query, "--store", url, "--json", *extra],
                          capture_output=True, text=True, env=env(), timeout=60)
    return done.returncode, json.loads(done.stdout)


def test_the_cache_is_found_from_the_url_alone_as_the_open_store_names_it(server: RedisServer) -> None:
    for url in (server.url("a"), server.url("a") + "&timeout=2", "redis://:secret@127.0.0.1:1/3?prefix=x:y:",
                "redis+cluster://127.0.0.1:7000/?prefix=c&nodes=127.0.0.1:7001"):
        if "secret" in url or "cluster" in url:
            from memtui.core.basics.redact import redact
            from memtui.core.storage.store_urls import parse_store_url

            prefix = parse_store_url(url)[1]
            assert cache_name(url) == f"{redact(url)}\0{{{prefix}}}" and "secret" not in cache_name(url)
            continue
        assert cache_name(url) == RedisStore(url).cache_name


def test_a_served_answer_is_the_answer_a_search_of_its_own_gives(store: RedisStore) -> None:
    assert served(store, "postgres") is None  # nobody watches yet
    w = Watcher(store.url)
    try:
        assert w.socket.exists() and (w.socket.stat().st_mode & 0o777) == 0o600
        for query, regex, limit, glob in QUERIES:
            reply = served(store, query, regex, limit, glob)
            assert reply is not None, query
            assert reply["bundle"] == search(Memory(store), query, regex=regex, limit=limit,
                                             path_glob=glob).to_dict(), query
        code, out = cli(store.url, "postgres")
        assert code == 0 and out == served(store, "postgres")["bundle"]
        # Fresh: memtui's own write, and a raw SET that bypassed it, both in the very next answer.
        mem = Memory(store)
        text = mem.read_text("MEMORY.md") or ""
        assert mem.edit("MEMORY.md", text, text + "- [stated] served store probe qzx1 (2026-11-28, test)\n",
                        actor="wes").status == "applied"
        assert served(store, "probe qzx1")["bundle"]["matched_lines"] == 1
        store.client.set(store.key("notes/raw.md"), b"- [observed] raw probe qzx2 (2026-11-28, redis-cli)\n")
        assert served(store, "probe qzx2")["bundle"]["matched_lines"] == 1
        store.client.delete(store.key("notes/raw.md"))
        assert served(store, "probe qzx2")["bundle"]["matched_lines"] == 0
        # --no-index never asks.
        _, out = cli(store.url, "postgres", "--no-index")
        assert out["method"] == "scan"
    finally:
        w.stop()
    assert not w.socket.exists()  # a stopped watcher takes its socket with it
    assert served(store, "postgres") is None


def test_with_keyspace_events_turned_off_a_raw_set_is_still_found(store: RedisStore) -> None:
    w = Watcher(store.url)
    try:
        assert served(store, "postgres") is not None
        store.client.config_set("notify-keyspace-events", "")
        # Nobody hears this SET: the watcher must stop vouching for what it heard, and re-check every hash.
        store.client.set(store.key("notes/raw.md"), b"- [observed] unheard probe qzx3 (2026-11-28, redis-cli)\n")
        for _ in range(3):
            assert served(store, "probe qzx3")["bundle"]["matched_lines"] == 1
        store.client.set(store.key("notes/raw.md"), b"- [observed] changed again qzx4 (2026-11-28, redis-cli)\n")
        assert served(store, "probe qzx3")["bundle"]["matched_lines"] == 0
        assert served(store, "again qzx4")["bundle"]["matched_lines"] == 1
    finally:
        w.stop()
        store.client.config_set("notify-keyspace-events", "KA")


def test_a_server_without_keyspace_events_is_served_and_says_what_it_costs(store: RedisStore) -> None:
    store.client.config_set("notify-keyspace-events", "")
    try:
        w = Watcher(store.url)
        try:
            store.client.set(store.key("notes/raw.md"), b"- [observed] raw probe qzx5 (2026-11-28, redis-cli)\n")
            assert served(store, "probe qzx5")["bundle"]["matched_lines"] == 1
        finally:
            err = w.stop()
        assert "keyspace events" in err and "CONFIG SET notify-keyspace-events KA" in err
    finally:
        store.client.config_set("notify-keyspace-events", "KA")


def test_one_watcher_per_memory(store: RedisStore) -> None:
    w = Watcher(store.url)
    try:
        second = subprocess.run([sys.executable, "-m", "memtui", "index", "--watch", "--store", store.url],
                                capture_output=True, text=True, env=env(), timeout=60)
        assert second.returncode == 1 and "already watches" in second.stderr
        assert served(store, "postgres") is not None  # the first one still answers
    finally:
        w.stop()


def test_an_answered_cold_search_imports_no_redis_client(store: RedisStore) -> None:
    w = Watcher(store.url)
    try:
        code = ("import sys, io, contextlib\nfrom memtui.cli import main\nout = io.StringIO()\n"
                "with contextlib.redirect_stdout(out):\n"
                f"    rc = main(['search', 'postgres', '--store', {store.url!r}, '--json'])\n"
                "print(rc, 'redis' in sys.modules, 'memtui.core.recall.search' in sys.modules)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60)
        assert done.stdout.split() == ["0", "False", "False"], done.stderr
    finally:
        w.stop()


@pytest.mark.parametrize("url, says", [("redis://h/0?prefix=a{b}", "bad prefix"),
                                       ("redis://[::1/0", "bad Redis URL"),  # was a traceback (ValueError)
                                       ("redis://h:99999999/0", "Port out of range")])
@pytest.mark.parametrize("command", ["search", "index"])
def test_a_url_that_does_not_parse_is_refused_in_words(tmp_path: Path, url: str, says: str, command: str) -> None:
    args = ["search", "x"] if command == "search" else ["index"]
    done = subprocess.run([sys.executable, "-m", "memtui", *args, "--store", url], capture_output=True, text=True,
                          env={**env(), "XDG_CACHE_HOME": str(tmp_path)}, timeout=60)
    assert done.returncode != 0 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
