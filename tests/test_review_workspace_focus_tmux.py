"""Issue 43 item 2 in a real terminal (tmux, 120x35): escape leaves the search box and the chat input, `?` then opens
the help naming the focused pane, `q` quits, ctrl+c quits from inside a text box. The screen is read back with
capture-pane."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from app_support import demo_root, demo_template  # noqa: F401 (fixture)
from test_app_tmux import wait_screen

pytestmark = pytest.mark.tmux


def send(tmux: list[str], *keys: str) -> None:
    """Each key alone, a moment apart: an escape followed at once by a letter reads as alt+letter."""
    for key in keys:
        subprocess.run([*tmux, "send-keys", "-t", "app", key], check=True)
        time.sleep(0.15)


PROBE = "xiyx"  # letters no key of the app is bound to: typed outside a box they do nothing


def focus_reaches_the_box(tmux: list[str], timeout: float = 15.0) -> None:
    """Wait until keys go to the box just opened: a probe typed there shows on screen (then is erased); typed while
    the focus is still on its way it does nothing, and is typed again (a search of it is logged in the feed, so
    its absence is not waited for). A fixed pause let a later `q` quit the app
    when the focus came late on a loaded machine."""
    deadline = time.monotonic() + timeout
    while True:
        send(tmux, *PROBE)
        try:
            wait_screen(tmux, "app", lambda s: PROBE in s, timeout=1.0)
            break
        except AssertionError:
            assert time.monotonic() < deadline, "the focus never reached the box"
    send(tmux, *["BSpace"] * len(PROBE))  # keys arrive in order: what is typed next follows the erased probe


def quits(tmux: list[str], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while subprocess.run([*tmux, "has-session", "-t", "app"], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "the app did not quit"
        time.sleep(0.1)


@pytest.mark.parametrize("box, key, typed, leave", [("search", "/", "xyz", "q"), ("chat", "c", "hi", "C-c")])
def test_escape_leaves_the_box_then_keys_act_at_120x35(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        demo_template: Path, box: str, key: str, typed: str,
                                                        leave: str) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    exe = shutil.which("memtui")
    if exe is None:
        pytest.skip("memtui is not installed on PATH (pip install .)")
    root = demo_root(tmp_path, monkeypatch, demo_template)
    socket = f"memtui-focus-{os.getpid()}-{box}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": os.environ["MEMTUI_NOW"], "MEMTUI_USER": "wes",
           "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
           "TERM": "xterm-256color", "PATH": os.environ["PATH"], "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    command = " ".join(f"{k}={v!r}" if " " in v else f"{k}={v}" for k, v in env.items() if v) + f" {exe} {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", "120", "-y", "35",
                    f"env -u COLUMNS -u LINES {command}"], check=True)
    try:
        wait_screen(tmux, "app", lambda s: "p-0001" in s and "pending" in s)
        send(tmux, key)
        wait_screen(tmux, "app", lambda s: ("Search" if box == "search" else "Chat") in s, timeout=10)
        focus_reaches_the_box(tmux)
        send(tmux, *typed, "q", "?")  # letters in a box are text: q and ? too
        wait_screen(tmux, "app", lambda s: f"{typed}q?" in s, timeout=10)
        send(tmux, "BSpace", "BSpace", "Escape")
        time.sleep(0.3)
        send(tmux, "?")  # out of the box: ? is the help, naming the pane the focus is in
        screen = wait_screen(tmux, "app", lambda s: "memtui keys" in s, timeout=10)
        assert f"focus in {box}" in screen, screen
        send(tmux, "Escape")
        wait_screen(tmux, "app", lambda s: "memtui keys" not in s, timeout=10)
        wait_screen(tmux, "app", lambda s: typed in s)
        send(tmux, leave)
        quits(tmux)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
