"""`memtui serve`: the app in a browser through textual-serve, loaded in headless Chromium."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memtui.cli import build_parser
from memtui.commands.integrations import _loopback
from memtui.core.memory import Memory
from support.browser import Chromium, chromium_path


def test_serve_listens_on_loopback_unless_told_otherwise() -> None:
    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1"
    assert _loopback("127.0.0.1") and _loopback("::1") and _loopback("localhost")
    assert not _loopback("0.0.0.0") and not _loopback("192.168.1.4") and not _loopback("example.com")


def test_serve_warns_before_listening_beyond_loopback(root: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "memtui", "serve", "--root", str(root), "--host", "0.0.0.0",
                           "--port", "0"], capture_output=True, text=True, timeout=30)
    assert "anyone who can reach it can read this memory and approve writes" in done.stderr
    assert done.returncode == 1 and "--port must be between 1 and 65535" in done.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(root: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "MEMTUI_NOW": "2026-08-20T14:05", "MEMTUI_USER": "wes"}
    # A process group of its own, so the apps textual-serve starts for each tab stop with it.
    proc = subprocess.Popen([sys.executable, "-m", "memtui", "serve", "--root", str(root), "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as page:
                    assert b"textual-terminal" in page.read()
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"memtui serve did not start: {proc.stderr.read().decode()}") from None
                time.sleep(0.1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium; "
                    ".ci/run installs it)")
async def test_two_browser_tabs_show_the_memory_tree_and_a_proposal_as_it_arrives(root: Path, now) -> None:
    now("2026-08-20T14:05")
    mem = Memory(root)
    mem.create("people/priya.md", "# Priya\n\n- [stated] Signs the Lumen renewal\n", actor="wes")
    with serving(root) as url:
        async with Chromium() as browser:
            first = await browser.open(url)
            second = await browser.open(url)
            for tab in (first, second):  # each tab is its own app process on the same memory root
                shown = await tab.wait_for_text("MEMORY.md", "people", "log", "scratch", "Review")
                assert "▾ memory" in shown  # the memory tree, opened at the root
            result = mem.update("Projects", "add", "[observed] Lumen renewal is due in October",
                                actor="mcp:claude-code")
            assert result.status == "queued" and result.id == "p-0001"
            for tab in (first, second):
                await tab.wait_for_text("p-0001")
