"""A real terminal under tmux, read as a person reads it: the screen captured, and a wait for what should show."""

from __future__ import annotations

import subprocess
import time
from typing import Callable


def capture(tmux: list[str], target: str = "app", *, escapes: bool = False) -> str:
    """The pane's screen as text (with its colour escapes when `escapes`)."""
    flags = ["-p", "-e"] if escapes else ["-p"]
    return subprocess.run([*tmux, "capture-pane", *flags, "-t", target], capture_output=True, text=True).stdout


def wait_screen(tmux: list[str], condition: Callable[[str], bool], what: str = "what was expected",
                timeout: float = 30.0, *, target: str = "app") -> str:
    """The screen once `condition` holds for it; an AssertionError with the last screen after `timeout` s."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(tmux, target)
        if condition(screen):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"the screen never showed {what}; last screen:\n{screen}")


def start_app(name: str, tmp_path, root, size: tuple[int, int], now: str) -> list[str]:
    """`memtui ROOT` in a tmux server of its own (socket `name`), at `size`, as the person `wes` in a home of
    `tmp_path`'s, at the pinned clock `now`: the tmux command to drive it with (`kill-server` when done)."""
    import os
    import sys
    from pathlib import Path

    tmux = ["tmux", "-L", f"{name}-{os.getpid()}-{size[0]}", "-f", "/dev/null"]
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": now, "MEMTUI_USER": "wes",
           "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
           "TERM": "xterm-256color", "PATH": os.environ["PATH"],
           "PYTHONPATH": os.environ.get("PYTHONPATH", str(Path(__file__).resolve().parents[2]))}
    command = " ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} -m memtui {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", str(size[0]), "-y", str(size[1]),
                    f"env -u COLUMNS -u LINES {command}"], check=True)
    return tmux
