"""Reviewing a revise end to end in a real terminal under tmux: the changed words marked, side by side, approved."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app_support import demo_root, demo_template  # noqa: F401 (fixture)

pytestmark = pytest.mark.tmux
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def capture(tmux: list[str], *, escapes: bool = False) -> str:
    flags = ["-e"] if escapes else []
    return subprocess.run([*tmux, "capture-pane", "-p", *flags, "-t", "app"], capture_output=True, text=True).stdout


def wait_screen(tmux: list[str], condition, timeout: float = 20.0, *, escapes: bool = False) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(tmux, escapes=escapes)
        if condition(screen):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"the screen never showed what was expected; last screen:\n{ANSI.sub('', screen)}")


def style_before(line: str, word: str) -> str:
    """The last SGR escape in `line` before `word` (what the terminal draws the word in)."""
    at = line.index(word)
    codes = ANSI.findall(line[:at])
    return codes[-1] if codes else ""


def test_review_a_revise_in_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    root = demo_root(tmp_path, monkeypatch, demo_template)
    socket = f"memtui-review-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": os.environ["MEMTUI_NOW"], "MEMTUI_USER": "wes",
           "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm-256color", "PATH": os.environ["PATH"],
           "PYTHONPATH": os.environ.get("PYTHONPATH", str(Path(__file__).resolve().parents[1]))}
    command = " ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} -m memtui {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", "120", "-y", "42",
                    f"env -u COLUMNS -u LINES {command}"], check=True)
    try:
        wait_screen(tmux, lambda s: "p-0001" in s and "pending" in s)
        subprocess.run([*tmux, "send-keys", "-t", "app", "]"], check=True)
        screen = wait_screen(tmux, lambda s: "p-0002: revise by agent-claude" in ANSI.sub("", s)
                             and "~~[stated]" in ANSI.sub("", s), escapes=True)
        # The old line: "stated" (changed) is drawn differently from "Atlas" (the same on both sides).
        old = next(line for line in screen.splitlines() if "- - [" in ANSI.sub("", line) and "Atlas" in line)
        assert style_before(old, "stated") != style_before(old, "Atlas")
        new = next(line for line in screen.splitlines() if "suggested" in line and "+ - [" in ANSI.sub("", line))
        assert style_before(new, "suggested") != style_before(new, "Atlas")

        subprocess.run([*tmux, "send-keys", "-t", "app", "S"], check=True)
        wait_screen(tmux, lambda s: "Diffs side by side" in s and "│" in s)
        subprocess.run([*tmux, "send-keys", "-t", "app", "a"], check=True)
        queue = root / ".memtui/queue/p-0002.json"
        deadline = time.monotonic() + 10
        while json.loads(queue.read_text())["status"] != "applied":
            assert time.monotonic() < deadline, "pressing a did not approve p-0002"
            time.sleep(0.1)
        text = (root / "MEMORY.md").read_text()
        assert "- [suggested] Atlas: billing rewrite, due November after the slip (2026-08-20, standup)" in text
        assert "~~[stated] Atlas: the billing service rewrite, due October (2026-05-20, planning)~~ superseded" in text
        wait_screen(tmux, lambda s: "approved p-0002" in s, timeout=10)
        subprocess.run([*tmux, "send-keys", "-t", "app", "q"], check=True)
        deadline = time.monotonic() + 10
        while subprocess.run([*tmux, "has-session", "-t", "app"], capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, "q did not quit"
            time.sleep(0.1)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
