"""A cold `memtui search` asks the memory's watcher (`memtui index --watch`) when one serves, and gets the answer
a search of its own would give; anything else at the socket (no server, a dead one, a file, a server that lies,
stalls or answers another question) and it searches by itself, with the same answer."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtui.core.recall import search_socket
from memtui.core.recall.search import search

WORKTREE = Path(__file__).resolve().parent.parent
QUERIES = [("postgres", False, 5, None), ("narwhal-quartz-2057", False, 5, None), ("rollback", False, 2, "log/*"),
           ("deploy.*fail", True, 5, None), ("(unclosed", True, 5, None), ("zzz-nowhere", False, 5, None),
           ("- [stated]", False, 3, "projects/*")]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(WORKTREE) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def cli(root: Path, query: str, regex: bool = False, limit: int = 5, glob: str | None = None,
        extra: tuple[str, ...] = ()) -> tuple[int, dict]:
    args = [sys.executable, "-m", "memtui", "search", query, "--root", str(root), "--json", "--limit", str(limit)]
    if regex:
        args.append("--regex")
    if glob:
        args += ["--path", glob]
    done = subprocess.run([*args, *extra], capture_output=True, text=True, env=env(), timeout=60)
    return done.returncode, json.loads(done.stdout)


def local(root: Path, query: str, regex: bool, limit: int, glob: str | None) -> dict:
    return search(root, query, regex=regex, limit=limit, path_glob=glob).to_dict()


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    sys.path.insert(0, str(WORKTREE / "benches"))
    from generate import generate

    root = tmp_path_factory.mktemp("served")
    generate(root, files=150, megabytes=1.5, seed=4)
    return root


@pytest.fixture
def root(generated: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "m"
    shutil.copytree(generated, copy, ignore=shutil.ignore_patterns("index.sqlite*"))
    return copy


def _default_signals() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


class Watcher:
    def __init__(self, root: Path) -> None:
        # Ctrl-C and a hang-up reach it as they would from a terminal, even where these tests were started with
        # SIGINT ignored (a `cmd &` of a shell without job control) or under nohup (SIGHUP ignored): a watcher
        # keeps an ignored signal ignored, as nohup means.
        self.proc = subprocess.Popen([sys.executable, "-m", "memtui", "index", "--watch", "--root", str(root)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                                     preexec_fn=_default_signals)
        line = self.proc.stdout.readline()
        assert "answered from here" in line, (line, self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.socket = Path(search_socket.socket_path(root))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)
        self.proc.stdout.close()
        self.proc.stderr.close()


def served(root: Path, query: str, **kw: object) -> dict | None:
    return search_socket.ask(root, query, regex=bool(kw.get("regex", False)), limit=int(kw.get("limit", 5)),
                             path_glob=kw.get("glob"))  # type: ignore[arg-type]


def test_a_served_answer_is_the_answer_a_search_of_its_own_gives(root: Path) -> None:
    w = Watcher(root)
    try:
        assert w.socket.exists() and (w.socket.stat().st_mode & 0o777) == 0o600
        for query, regex, limit, glob in QUERIES:
            reply = served(root, query, regex=regex, limit=limit, glob=glob)
            assert reply is not None, query
            assert reply["bundle"] == local(root, query, regex, limit, glob), query
            code, out = cli(root, query, regex, limit, glob)
            assert out == reply["bundle"], query
            assert code == (2 if query == "(unclosed" else 0), query
        # Fresh: a write that ended before the question is in the answer, with no waiting.
        for k in range(5):
            with open(root / "MEMORY.md", "a", encoding="utf-8") as f:
                f.write(f"- [stated] served freshness probe {k}qz (2026-11-28, test)\n")
            reply = served(root, f"freshness probe {k}qz")
            assert reply is not None and reply["bundle"]["matched_lines"] == 1, k
        # --no-index never asks.
        _, out = cli(root, "postgres", extra=("--no-index",))
        assert out["method"] == "scan"
    finally:
        w.stop()
    assert not w.socket.exists()  # a stopped watcher takes its socket with it
    assert served(root, "postgres") is None
    _, out = cli(root, "postgres")
    assert out == local(root, "postgres", False, 5, None)


def test_a_dead_servers_socket_or_a_file_in_its_place_is_searched_around(root: Path) -> None:
    path = Path(search_socket.socket_path(root))
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()  # bound, never listening: a killed server's socket
    assert served(root, "postgres") is None
    assert cli(root, "postgres")[1] == local(root, "postgres", False, 5, None)
    path.unlink()
    path.write_text('{"bundle": {"query": "postgres"}, "text": "forged"}\n')  # a plain file
    assert served(root, "postgres") is None
    assert cli(root, "postgres")[1] == local(root, "postgres", False, 5, None)
    path.unlink()
    # A new watcher takes the dead socket's place.
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()
    w = Watcher(root)
    try:
        assert served(root, "postgres") is not None
    finally:
        w.stop()


class Fake:
    """A server at the memory's socket that answers with `reply(request)` (bytes), or not at all."""

    def __init__(self, root: Path, reply) -> None:
        self.path = search_socket.socket_path(root)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.reply = reply
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                out = self.reply(json.loads(data))
                if out is not None:
                    try:
                        conn.sendall(out)
                    except OSError:
                        pass

    def close(self) -> None:
        self.sock.close()
        os.unlink(self.path)


@pytest.mark.parametrize("reply", [
    lambda req: b"not json\n",
    lambda req: b"[]\n",
    lambda req: b'{"bundle": "x", "text": "y"}\n',
    lambda req: json.dumps({"bundle": {"query": "something else", "error": None}, "text": "lies"}).encode() + b"\n",
    lambda req: json.dumps({"bundle": {"query": req["query"], "error": 7}, "text": "lies"}).encode() + b"\n",
    lambda req: b"[" * 100_000 + b"\n",
    lambda req: b"",  # closes without a word
    lambda req: b'{"bundle": {"query": "postgres"}, "te',  # cut short
])
def test_a_server_that_answers_something_else_is_not_believed(root: Path, reply) -> None:
    fake = Fake(root, reply)
    try:
        assert served(root, "postgres") is None
        assert cli(root, "postgres")[1] == local(root, "postgres", False, 5, None)
    finally:
        fake.close()


def test_a_stalled_server_costs_a_bounded_wait(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_socket, "ASK_TIMEOUT", 0.5)
    fake = Fake(root, lambda req: time.sleep(3))
    try:
        started = time.monotonic()
        assert served(root, "postgres") is None
        assert time.monotonic() - started < 2
    finally:
        fake.close()


def test_the_server_drops_requests_it_does_not_understand(root: Path) -> None:
    calls: list[tuple] = []
    server = search_socket.Server(root, lambda *a: calls.append(a) or {"bundle": {"query": a[0]}, "text": ""})
    Path(server.path).parent.mkdir(parents=True, exist_ok=True)
    assert server.start()
    try:
        for raw in (b"junk\n", b"{}\n", b'{"query": 1, "regex": false, "limit": 5, "path_glob": null}\n',
                    b'{"query": "x", "regex": "yes", "limit": 5, "path_glob": null}\n',
                    b'{"query": "x", "regex": false, "limit": true, "path_glob": null}\n',
                    b'{"query": "x", "regex": false, "limit": 5, "path_glob": 3}\n',
                    b"[" * 70_000 + b"\n", b"x" * 100_000):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                c.settimeout(5)
                c.connect(server.path)
                try:
                    c.sendall(raw)
                    c.shutdown(socket.SHUT_WR)
                    assert c.recv(10) == b""
                except (BrokenPipeError, ConnectionResetError):
                    pass
        assert calls == []
        # A client that connects and says nothing holds it for REQUEST_TIMEOUT at most.
        idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        idle.connect(server.path)
        started = time.monotonic()
        assert served(root, "postgres") == {"bundle": {"query": "postgres"}, "text": "",
                                            "root": search_socket._root_id(str(root))}
        assert time.monotonic() - started < search_socket.REQUEST_TIMEOUT + 2
        idle.close()
    finally:
        server.stop()
    assert not Path(server.path).exists()


def test_a_root_too_deep_for_a_socket_path_is_not_served(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    (deep / ".memtui").mkdir(parents=True)
    server = search_socket.Server(deep, lambda *a: {})
    assert not server.start()
    assert search_socket.ask(deep, "x", regex=False, limit=5, path_glob=None) is None


def test_the_cli_prints_what_the_server_answers(root: Path) -> None:
    # A server of this user is believed (it could as well edit the files): the answer is its, not a search's own.
    fake = Fake(root, lambda req: json.dumps({"bundle": {"query": req["query"], "error": None, "served": True},
                                              "text": "from the watcher",
                                              "root": search_socket._root_id(str(root))}).encode() + b"\n")
    try:
        assert cli(root, "postgres")[1] == {"query": "postgres", "error": None, "served": True}
        done = subprocess.run([sys.executable, "-m", "memtui", "search", "postgres", "--root", str(root)],
                              capture_output=True, text=True, env=env(), timeout=60)
        assert done.stdout.strip() == "from the watcher"
    finally:
        fake.close()
