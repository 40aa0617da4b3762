"""`memtui serve`: the app in a browser through textual-serve, loaded in headless Chromium, on a folder or Redis.

The guard in front of it (token, Origin, Host) is attacked in tests/security/test_serve_guard.py."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from support.browser import Chromium, chromium_path
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)
from support.serve import read_until, serving

from memtui.cli import build_parser
from memtui.commands.integrations import _loopback
from memtui.core.access.stores import init_store
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory


def test_serve_listens_on_loopback_unless_told_otherwise() -> None:
    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1"
    assert _loopback("127.0.0.1") and _loopback("::1") and _loopback("localhost")
    assert not _loopback("0.0.0.0") and not _loopback("192.168.1.4") and not _loopback("example.com")


def test_serve_warns_before_listening_beyond_loopback(root: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "memtui", "serve", "--root", str(root), "--host", "0.0.0.0",
                           "--port", "0"], capture_output=True, text=True, timeout=30)
    assert "anyone who has the printed URL and can reach the address can read this memory and approve writes" \
        in done.stderr and "unencrypted" in done.stderr
    assert done.returncode == 1 and "--port must be between 1 and 65535" in done.stderr


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium; "
                    ".ci/run installs it)")
async def test_two_browser_tabs_show_the_memory_tree_and_a_proposal_as_it_arrives(root: Path, now) -> None:
    now("2026-08-20T14:05")
    mem = Memory(root)
    mem.create("people/priya.md", "# Priya\n\n- [stated] Signs the Lumen renewal\n", actor="wes")
    with serving("--root", str(root)) as served:
        async with Chromium() as browser:
            first = await browser.open(served.url)  # the printed URL, with this launch's token
            second = await browser.open(served.url)
            for tab in (first, second):  # each tab is its own app process on the same memory root
                shown = await tab.wait_for_text("MEMORY.md", "people", "log", "scratch", "Review")
                assert "▾ memory" in shown  # the memory tree, opened at the root
            result = mem.update("Projects", "add", "[observed] Lumen renewal is due in October",
                                actor="mcp:claude-code")
            assert result.status == "queued" and result.id == "p-0001"
            for tab in (first, second):
                await tab.wait_for_text("p-0001")


async def test_serve_store_runs_the_app_on_a_redis_memory(tmp_path: Path, redis_url: str) -> None:
    """`--store URL` with no folder at all: each tab's app is on the Redis memory, and its keys decide there."""
    store = RedisStore(redis_url)
    init_store(store, author="wes")
    mem = Memory(store)
    result = mem.update("Projects", "add", "[observed] Kept in Redis, not a folder", actor="mcp:claude-code")
    assert result.status == "queued"
    missing = tmp_path / "no-such-folder"
    with serving("--root", str(missing), "--store", redis_url) as served:
        assert served.children() == []
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(served.url) as r:
                assert r.status == 200 and "redis://127.0.0.1" in await r.text()  # the page's title
            async with http.ws_connect(served.ws(), origin=served.origin) as ws:
                await read_until(ws, "MEMORY.md", result.id or "")
                (app,) = served.children()
                # The app finds the store in its environment: a URL (and any password in it) is not on a command
                # line, which every user of the machine can read.
                assert b"redis://" not in Path(f"/proc/{app}/cmdline").read_bytes()
                await ws.send_json(["stdin", "A"])
                await read_until(ws, "Approve all 1 pending proposals")
                await ws.send_json(["stdin", "y"])
                for _ in range(200):
                    if Memory(RedisStore(redis_url)).get(result.id or "").status != "pending":
                        break
                    await asyncio.sleep(0.1)
    assert Memory(RedisStore(redis_url)).get(result.id or "").status == "applied"
    assert "Kept in Redis, not a folder" in (Memory(RedisStore(redis_url)).read_text("MEMORY.md") or "")
    assert not missing.exists()


def test_serve_store_that_cannot_be_reached_says_so_before_serving(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "memtui", "serve", "--root", str(tmp_path / "none"), "--store",
                           "redis://:hunter2@127.0.0.1:1/0?prefix=x&timeout=1", "--port", "8123"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "cannot be reached" in done.stderr and "no memory root" not in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
    assert "memtui serve: open" not in done.stdout
