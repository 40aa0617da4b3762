"""A real `memtui serve` process on a free loopback port for tests, and a WebSocket client that drives its app.

    with serving(root) as served:          # served.url is the printed URL, with its ?token=
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            ...

`unsafe=True` lets aiohttp keep cookies for an IP address (127.0.0.1), as a browser does.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

_URL = re.compile(r"memtui serve: open (http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+))")
_ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    url: str
    port: int
    token: str
    proc: subprocess.Popen[bytes]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws(self, query: str = "") -> str:
        return f"ws://127.0.0.1:{self.port}/ws?width=120&height=40{query}"

    def children(self) -> list[int]:
        """The processes `memtui serve` has started (one app per WebSocket); Linux only."""
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(pid) for pid in path.read_text().split()]


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """`memtui serve ARGS --port FREE`, until the printed URL answers; stopped with its apps afterwards."""
    port = free_port()
    env = {**os.environ, "MEMTUI_NOW": "2026-08-20T14:05", "MEMTUI_USER": "wes", **(env or {})}
    # A process group of its own, so the apps textual-serve starts for each WebSocket stop with it.
    proc = subprocess.Popen([sys.executable, "-m", "memtui", "serve", *args, "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        seen = b""
        while (m := _URL.search(seen.decode(errors="replace"))) is None:
            line = proc.stdout.readline()
            if not line or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"memtui serve did not print its URL: {seen.decode()}"
                                     f"{proc.stderr.read().decode() if proc.stderr else ''}")
            seen += line
        assert int(m.group(2)) == port
        # The URL is printed as the server starts; it listens a moment later.
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("memtui serve printed its URL but does not listen") from None
                time.sleep(0.05)
        # The rest of its output (textual-serve's log) is drained, so a full pipe never blocks the server.
        for stream in (proc.stdout, proc.stderr):
            threading.Thread(target=stream.read, daemon=True).start()
        yield Served(url=m.group(1), port=port, token=m.group(3), proc=proc)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def screen_text(data: bytes) -> str:
    """What a terminal stream says, escape sequences removed."""
    return _ANSI.sub("", data.decode("utf-8", errors="replace"))


async def read_until(ws: aiohttp.ClientWebSocketResponse, *needles: str, timeout: float = 30.0,
                     seen: bytearray | None = None) -> str:
    """Read the app's screen stream until every needle has appeared in it."""
    seen = bytearray() if seen is None else seen
    deadline = time.monotonic() + timeout
    while not all(n in screen_text(bytes(seen)) for n in needles):
        left = deadline - time.monotonic()
        if left <= 0:
            shown = screen_text(bytes(seen))[-3000:]
            raise AssertionError(f"the app never streamed {needles!r}; it streamed:\n{shown}")
        try:
            msg = await ws.receive(timeout=left)
        except asyncio.TimeoutError:
            continue
        if msg.type == aiohttp.WSMsgType.BINARY:
            seen += msg.data
        elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
            raise AssertionError(f"the WebSocket closed before {needles!r} appeared")
    return screen_text(bytes(seen))


# What a running app rewrites on its own in a memory it shows: the search index and its change journal, the pending
# count's cache, the lock. A person's own tab is open through the attacks: these change with it, whatever the attacker
# does. Proposals, decisions, the audit log, every memory file and git's own files stay in the hash.
APP_CACHES = (".memtui/index.sqlite", ".memtui/queue/.decided", ".memtui/lock")


def tree_hash(root: Path) -> str:
    """One hash of every file under root (git's own files included) and its path, but the app's own caches."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()
                       and not p.relative_to(root).as_posix().startswith(APP_CACHES)):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
