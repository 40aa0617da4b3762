"""An incoming change from a git remote in a real terminal: listed in the app's review like any proposal, with the
remote and its commit named, and approved with the app's own key; at 120x35 and at 80 columns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.memory import Memory
from support.git_remote import bare, clone, first_machine
from support.tmux import capture, start_app, wait_screen

FACT = "[stated] Backups run nightly at 02:00 (2026-12-06, laptop)"


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
def test_an_incoming_change_is_reviewed_in_the_app(tmp_path: Path, size: tuple[int, int]) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    assert Memory(laptop).update("Facts", "add", FACT, actor="wes").status == "applied"
    assert run_cli(laptop, "sync").returncode == 0
    assert run_cli(server, "sync").returncode == 4
    tmux = start_app("sync", tmp_path, server, size, "2026-12-06T11:00")
    try:
        screen = wait_screen(tmux, lambda s: "via origin" in s and "Backups run nightly" in s,
                             "the incoming change with its diff")
        assert "1 pending" in screen and "incoming from origin" in screen
        assert "Backups run nightly" not in (server / "MEMORY.md").read_text()
        subprocess.run([*tmux, "send-keys", "-t", "app", "a"], check=True)
        wait_screen(tmux, lambda s: "0 pending" in s, "the queue emptied by the approval")
        assert FACT in (server / "MEMORY.md").read_text()
    finally:
        last = capture(tmux)
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert "Traceback" not in last
    out = run_cli(server, "sync")
    assert out.returncode == 0 and "merged origin" in out.stdout and "pushed" in out.stdout
