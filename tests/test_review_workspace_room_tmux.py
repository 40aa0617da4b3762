"""The review workspace in a real terminal under tmux, at 120x35 and 80x24, with ten proposals an agent queued:
the queue lists six or more at 120 columns; at 80 the body stacks and the selected entry and its diff read whole;
`z` gives the queue the screen and gives it back; approving one moves on to the next; the layout chosen is the next
start's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.ten_proposals import ten_in_own_home

pytestmark = pytest.mark.tmux


def capture(tmux: list[str]) -> str:
    return subprocess.run([*tmux, "capture-pane", "-p", "-t", "app"], capture_output=True, text=True).stdout


def wait_screen(tmux: list[str], condition, what: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(tmux)
        if condition(screen):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"waiting for {what}; last screen:\n{screen}")


def start(tmux: list[str], tmp_path: Path, root: Path, width: int, height: int) -> None:
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": "2026-08-20T13:00", "MEMTUI_USER": "dana",
           "XDG_STATE_HOME": str(tmp_path / "state"), "MEMTUI_CONFIG_DIR": str(tmp_path / "config"),
           "TERM": "xterm-256color", "PATH": os.environ["PATH"],
           "PYTHONPATH": os.environ.get("PYTHONPATH", str(Path(__file__).resolve().parents[1]))}
    env.update({k: v for k, v in os.environ.items() if k.startswith("GIT_")})
    command = " ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} -m memtui {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", str(width), "-y", str(height),
                    f"env -u COLUMNS -u LINES {command}"], check=True)


def keys(tmux: list[str], *sent: str) -> None:
    subprocess.run([*tmux, "send-keys", "-t", "app", *sent], check=True)


def heads(screen: str) -> int:
    """Proposals whose first line (age, action, file) is on screen."""
    return sum(1 for line in screen.splitlines() if re.search(r"3h (add|revise|remove|create|edit) ", line))


@pytest.mark.parametrize("width,height", [(120, 35), (80, 24)])
def test_the_queue_and_its_diff_in_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int,
                                              height: int) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    root = ten_in_own_home(tmp_path, monkeypatch)
    tmux = ["tmux", "-L", f"memtui-room-{os.getpid()}-{width}", "-f", "/dev/null"]
    start(tmux, tmp_path, root, width, height)
    try:
        screen = wait_screen(tmux, lambda s: "10 pending" in s and heads(s) >= 3, "the queue")
        if width == 120:
            assert heads(screen) >= 6, screen
            assert "▸ memtui:format" not in screen  # this memory has no format comment: nothing folded
        else:
            # Stacked: the first proposal's entry, whole, in its diff beside the list.
            screen = wait_screen(tmux, lambda s: "pagerduty)" in s and "+ - [observed] Kestrel has 2 open" in s,
                                 "the first entry's diff, whole")
            assert "▾ notes" not in screen and "▼ notes" not in screen  # no tree column
        keys(tmux, "Tab")  # from the viewer to the queue
        time.sleep(0.3)
        keys(tmux, "z")
        screen = wait_screen(tmux, lambda s: "# Memory" not in s and heads(s) >= 6, "the queue alone")
        keys(tmux, "z")
        wait_screen(tmux, lambda s: "# Memory" in s, "every pane back")
        keys(tmux, "a")  # approve the first: the next is selected
        wait_screen(tmux, lambda s: "9 pending" in s and "p-0002: revise by agent-claude" in s, "the next one")
        keys(tmux, "z")  # the queue zoomed, kept for the next start
        wait_screen(tmux, lambda s: "# Memory" not in s, "the queue alone")
        keys(tmux, "q")
        # Gone once it has quit (and so has kept its layout): the session ends with the app.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and subprocess.run([*tmux, "has-session", "-t", "app"],
                                                             capture_output=True).returncode == 0:
            time.sleep(0.1)
        assert "review" in (tmp_path / "state/memtui/layout.json").read_text()
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        # The next start in a server of its own: the first one may still be exiting (its last session just
        # ended), and a client that reaches a dying server fails with "server exited unexpectedly".
        tmux = again = [*tmux[:2], f"{tmux[2]}-again", *tmux[3:]]
        start(again, tmp_path, root, width, height)
        wait_screen(again, lambda s: "9 pending" in s and "# Memory" not in s and heads(s) >= 6, "the queue, as left")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
