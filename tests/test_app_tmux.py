"""The installed `memtui` in a real terminal under tmux: the screen is read back with capture-pane."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from app_support import demo_root, demo_template  # noqa: F401 (fixture)

pytestmark = pytest.mark.tmux


def wait_screen(tmux: list[str], target: str, condition, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", target], capture_output=True, text=True).stdout
        if condition(screen):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"the screen never showed what was expected; last screen:\n{screen}")


def test_installed_memtui_in_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    exe = shutil.which("memtui")
    if exe is None:
        pytest.skip("memtui is not installed on PATH (pip install .)")
    root = demo_root(tmp_path, monkeypatch, demo_template)
    socket = f"memtui-test-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": os.environ["MEMTUI_NOW"], "MEMTUI_USER": "wes",
           "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm-256color", "PATH": os.environ["PATH"]}
    command = " ".join(f"{k}={v!r}" if " " in v else f"{k}={v}" for k, v in env.items()) + f" {exe} {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", "150", "-y", "42", f"env -u COLUMNS -u LINES {command}"],
                   check=True)
    try:
        # "1 external" once the whole folder is read (after the first screen): an append before that read is
        # one of the changes found waiting for review, not news.
        screen = wait_screen(tmux, "app", lambda s: "pending" in s and "◆" in s and "p-0001" in s and "1 external" in s)
        assert "~/memory" in screen and "User  2/30" in screen and "Preferences  3/30" in screen
        subprocess.run([*tmux, "send-keys", "-t", "app", "J", "J", "J", "J"], check=True)  # down to Facts
        wait_screen(tmux, "app", lambda s: "Facts  4/3" in s and "over cap" in s, timeout=10)

        with open(root / "MEMORY.md", "a") as f:  # another terminal appends a line
            f.write("- [observed] Written from another terminal (2026-08-20, tmux)\n")
        wait_screen(tmux, "app", lambda s: "MEMORY.md changed on disk" in s, timeout=10)

        subprocess.run([*tmux, "send-keys", "-t", "app", "a"], check=True)
        queue = root / ".memtui/queue/p-0001.json"
        deadline = time.monotonic() + 10
        while json.loads(queue.read_text())["status"] != "applied":
            assert time.monotonic() < deadline, "pressing a did not approve p-0001"
            time.sleep(0.1)
        wait_screen(tmux, "app", lambda s: "approved p-0001" in s, timeout=10)

        subprocess.run([*tmux, "send-keys", "-t", "app", "q"], check=True)
        deadline = time.monotonic() + 10
        while subprocess.run([*tmux, "has-session", "-t", "app"], capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, "q did not quit"
            time.sleep(0.1)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
