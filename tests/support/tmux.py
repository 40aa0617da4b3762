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
