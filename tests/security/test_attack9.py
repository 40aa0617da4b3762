"""Attacks on the watcher's search socket (memtui/core/recall/search_socket.py, `memtui index --watch`): a served answer
must be the answer the client's own search gives, and neither side may hang on the other or touch what is not its
own."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from memtui.core.recall import search_socket
from memtui.core.recall.search import search
from test_search_socket import Watcher, cli, env

FACT = "- [stated] the kestrel-basalt-4471 deploy uses blue green (2026-11-20, test)\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    m = tmp_path / "m"
    (m / "log").mkdir(parents=True)
    (m / ".memtui").mkdir()  # a memtui memory: its watcher's journal and socket are in its .memtui/
    (m / "MEMORY.md").write_text("# Memory\n\n" + FACT, encoding="utf-8")
    (m / "log" / "2026-11-25.md").write_text("- 10:00 kestrel-basalt-4471 rolled out\n", encoding="utf-8")
    return m


def own(root: Path, query: str, **kw: object) -> dict:
    return search(root, query, use_index=False, **kw).to_dict()  # type: ignore[arg-type]


def without_method(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in ("method", "searched_files", "skipped")}


def test_a_served_answer_is_dated_by_the_clients_clock(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # MEMTUI_NOW (and TZ) pin the client's day; a served answer counted ages from the watcher's day instead.
    w = Watcher(root)
    try:
        e = env()
        e["MEMTUI_NOW"] = "2031-01-01T10:00"
        import subprocess
        import sys
        import json

        done = subprocess.run([sys.executable, "-m", "memtui", "search", "kestrel-basalt-4471", "--root", str(root),
                               "--json"], capture_output=True, text=True, env=e, timeout=60)
        monkeypatch.setenv("MEMTUI_NOW", "2031-01-01T10:00")
        want = own(root, "kestrel-basalt-4471")
        got = json.loads(done.stdout)
        assert [(r["age_days"], r["freshness"]) for r in got["results"]] == \
            [(r["age_days"], r["freshness"]) for r in want["results"]]
    finally:
        w.stop()


def test_a_socket_hard_linked_into_another_memory_is_not_believed(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".memtui").mkdir(parents=True)
    (other / "MEMORY.md").write_text("- [stated] only the other memory says kestrel-basalt-4471 (2026-11-01, t)\n")
    w = Watcher(root)
    try:
        os.link(w.socket, other / ".memtui" / search_socket.SOCKET)
        reply = search_socket.ask(other, "kestrel-basalt-4471", regex=False, limit=5, path_glob=None)
        assert reply is None or without_method(reply["bundle"]) == without_method(own(other, "kestrel-basalt-4471"))
        code, out = cli(other, "kestrel-basalt-4471")
        assert without_method(out) == without_method(own(other, "kestrel-basalt-4471"))
    finally:
        w.stop()


def test_a_symlinked_state_folder_does_not_serve_another_memory(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "MEMORY.md").write_text("- [stated] only the other memory says kestrel-basalt-4471 (2026-11-01, t)\n")
    w = Watcher(root)
    try:
        os.symlink(root / ".memtui", other / ".memtui")
        code, out = cli(other, "kestrel-basalt-4471", extra=())
        assert without_method(out) == without_method(own(other, "kestrel-basalt-4471"))
    finally:
        w.stop()


def test_a_moved_memory_is_not_answered_from_the_folder_now_at_the_old_path(root: Path, tmp_path: Path) -> None:
    w = Watcher(root)
    moved = tmp_path / "moved"
    try:
        root.rename(moved)
        root.mkdir()
        (root / "MEMORY.md").write_text("- [stated] a new memory, nothing about kestrels (2026-11-01, t)\n")
        code, out = cli(moved, "kestrel-basalt-4471")
        assert without_method(out) == without_method(own(moved, "kestrel-basalt-4471"))
    finally:
        w.stop()


def test_a_trickling_server_costs_a_bounded_wait(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One byte every 0.3 s never trips a 0.5 s timeout per recv: the wait must be bounded in total.
    monkeypatch.setattr(search_socket, "ASK_TIMEOUT", 0.5)
    path = search_socket.socket_path(root)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = srv.accept()
        with conn:
            _dribble(conn, stop)

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    try:
        got: list = []
        asker = threading.Thread(target=lambda: got.append(
            search_socket.ask(root, "kestrel", regex=False, limit=5, path_glob=None)), daemon=True)
        asker.start()
        asker.join(3)
        assert got == [None]  # given up, within the bound
    finally:
        stop.set()
        srv.close()
        os.unlink(path)


def test_a_trickling_client_does_not_hold_the_server(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_socket, "REQUEST_TIMEOUT", 0.5)
    (root / ".memtui").mkdir(exist_ok=True)
    server = search_socket.Server(root, lambda q, *a: {"bundle": {"query": q, "error": None}, "text": "ok"})
    assert server.start()
    stop = threading.Event()

    def trickle() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.connect(server.path)
            _dribble(c, stop)

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    try:
        time.sleep(0.2)
        monkeypatch.setattr(search_socket, "ASK_TIMEOUT", 4.0)
        started = time.monotonic()
        reply = search_socket.ask(root, "kestrel", regex=False, limit=5, path_glob=None)
        assert reply is not None and time.monotonic() - started < 3
    finally:
        stop.set()
        server.stop()


def test_clients_that_connect_and_say_nothing_do_not_hold_the_others_answers(root: Path) -> None:
    # Each silent connection held the one-at-a-time server for REQUEST_TIMEOUT (2 s): six of them (a suspended
    # client, a stuck script) pushed every other client past its 10 s wait to a search of its own.
    (root / ".memtui").mkdir(exist_ok=True)
    server = search_socket.Server(root, lambda q, *a: {"bundle": {"query": q, "error": None}, "text": "ok"})
    assert server.start()
    silent = []
    try:
        for _ in range(6):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(server.path)
            silent.append(c)
        time.sleep(0.2)  # the server has taken them
        reply = search_socket.ask(root, "kestrel", regex=False, limit=5, path_glob=None)
        assert reply is not None and reply["bundle"]["query"] == "kestrel"
    finally:
        for c in silent:
            c.close()
        server.stop()


def test_a_watcher_leaves_the_socket_of_the_watcher_after_it(root: Path) -> None:
    # The journal's lock file removed (an agent with a shell may), a second watcher takes a new lock and makes its
    # socket; when the first stops it must not remove the second's.
    (root / ".memtui").mkdir(exist_ok=True)
    first = search_socket.Server(root, lambda q, *a: {"bundle": {"query": q, "error": None}, "text": "1"})
    assert first.start()
    second = search_socket.Server(root, lambda q, *a: {"bundle": {"query": q, "error": None}, "text": "2"})
    try:
        assert second.start()  # it found a socket where none should be, and replaced it
        first.stop()
        assert Path(second.path).exists()
    finally:
        first.stop()
        second.stop()


def test_two_watchers_when_the_lock_file_is_removed_serve_one_socket(root: Path) -> None:
    a = Watcher(root)
    try:
        os.unlink(root / ".memtui" / "index.sqlite-watcher")
        import subprocess
        import sys

        b = subprocess.Popen([sys.executable, "-m", "memtui", "index", "--watch", "--root", str(root)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        try:
            line = b.stdout.readline()
            a.stop()
            if "answered from here" in line:
                # b serves: its socket must still be there after a stopped.
                assert a.socket.exists()
                assert search_socket.ask(root, "kestrel-basalt-4471", regex=False, limit=5, path_glob=None)
        finally:
            b.terminate()
            b.wait(20)
            b.stdout.close()
            b.stderr.close()
    finally:
        if a.proc.poll() is None:
            a.stop()


def test_distinct_path_globs_do_not_grow_the_watcher_without_bound(root: Path) -> None:
    w = Watcher(root)
    try:
        def rss() -> int:
            for line in Path(f"/proc/{w.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
            raise AssertionError

        assert search_socket.ask(root, "kestrel", regex=False, limit=5, path_glob="log/*") is not None
        before = rss()
        for k in range(200):
            glob = "*" + os.urandom(12000).hex()[:24000] + "*"
            search_socket.ask(root, "kestrel", regex=False, limit=5, path_glob=glob)  # served or left to the client
        grown = rss() - before
        assert grown < 40 * 1024 * 1024, grown
    finally:
        w.stop()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_watcher_ended_by_a_signal_takes_its_socket_with_it(root: Path, sig: str) -> None:
    # Ctrl-C, `kill`, and the terminal it runs in closed (SIGHUP): the socket goes with the watcher.
    import signal

    w = Watcher(root)
    try:
        w.proc.send_signal(getattr(signal, sig))
        w.proc.wait(20)
        assert not w.socket.exists()
    finally:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait(20)
        w.proc.stdout.close()
        w.proc.stderr.close()


def _dribble(conn: socket.socket, stop: threading.Event) -> None:
    """A byte every 0.3 s until told to stop: a peer slow enough that no single read times out."""
    while not stop.is_set():
        try:
            conn.sendall(b" ")
        except OSError:
            return
        time.sleep(0.3)
