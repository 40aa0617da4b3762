"""A crash of the app: the exit status is not 0, and the message names a file that holds the traceback. The crashes
are real exceptions (a key whose handler raises inside the app's message loop, in a real terminal under tmux; an
app that cannot be made), run through the `memtui` command's own code (memtui.cli.main)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app_support import demo_root, demo_template  # noqa: F401 (fixture)
from test_app_tmux import wait_screen

# `?` (help) raises here: any unhandled exception in a handler ends the app the same way.
LAUNCHER = """
import sys
from memtui.tui.app import MemtuiApp

def broken_help(self):
    raise RuntimeError("the help key broke on purpose")

MemtuiApp.action_help = broken_help
from memtui.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.tmux
def test_a_crash_exits_non_zero_and_names_the_saved_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             demo_template: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    root = demo_root(tmp_path, monkeypatch, demo_template)
    launcher = tmp_path / "launch.py"
    launcher.write_text(LAUNCHER)
    state = tmp_path / "state"
    socket = f"memtui-crash-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": os.environ["MEMTUI_NOW"], "MEMTUI_USER": "wes",
           "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "XDG_STATE_HOME": str(state), "TERM": "xterm-256color",
           "PATH": os.environ["PATH"], "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    command = (" ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} {launcher} {root}; "
               "echo EXIT=$?; sleep 60")
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", "150", "-y", "42",
                    f"env -u COLUMNS -u LINES {command}"], check=True)
    try:
        wait_screen(tmux, "app", lambda s: "pending" in s and "p-0001" in s)
        time.sleep(0.3)
        subprocess.run([*tmux, "send-keys", "-t", "app", "?"], check=True)
        wait_screen(tmux, "app", lambda s: "EXIT=" in s)
        # -J joins the lines tmux wrapped, so a long path reads as one.
        screen = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-t", "app"], capture_output=True,
                                text=True).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    flat = " ".join(screen.split())
    assert "EXIT=1" in flat, screen
    assert "memtui crashed: RuntimeError: the help key broke on purpose" in flat, screen
    named = re.search(r"saved in (\S+\.txt)", flat)
    assert named, screen
    report = Path(named[1])
    assert report.parent == state / "memtui" / "crashes"
    text = report.read_text()
    assert "Traceback" in text and "broken_help" in text and "the help key broke on purpose" in text
    assert report.stat().st_mode & 0o077 == 0  # it may quote the memory: only the person can read it
    assert "Traceback" not in screen  # one message on the terminal, the traceback in the file


def test_a_crash_before_the_app_runs_is_reported_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               demo_template: Path) -> None:
    root = demo_root(tmp_path, monkeypatch, demo_template)
    launcher = tmp_path / "launch.py"
    launcher.write_text(LAUNCHER.replace("MemtuiApp.action_help = broken_help",
                                         "MemtuiApp.__init__ = lambda self, *a, **k: broken_help(self)"))
    state = tmp_path / "state"
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(state)}
    import pty

    controller, terminal = pty.openpty()  # the app runs only on a terminal; it crashes before drawing on it
    try:
        done = subprocess.run([sys.executable, str(launcher), str(root)], stdin=terminal, stdout=terminal,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=60)
    finally:
        os.close(terminal)
        os.close(controller)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("memtui crashed: RuntimeError: the help key broke on purpose\n"), done.stderr
    named = re.search(r"saved in (\S+\.txt)", done.stderr)
    assert named and Path(named[1]).parent == state / "memtui" / "crashes", done.stderr
    assert "Traceback (most recent call last)" in Path(named[1]).read_text()
