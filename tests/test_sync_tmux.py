"""An incoming change from a git remote in a real terminal: fetched with the app's sync key, listed in the app's
review under its remote and author, with the remote and its commit named, approved with the app's own key (which
fast-forwards to the remote's commit), then synced by the key again; at 120x35 and at 80 columns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
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
    tmux = start_app("sync", tmp_path, server, size, "2026-12-06T11:00")
    try:
        wait_screen(tmux, lambda s: "origin ↑" in s, "the remote in the header")
        subprocess.run([*tmux, "send-keys", "-t", "app", "P"], check=True)  # the app's sync key
        screen = wait_screen(tmux, lambda s: "incoming from origin" in s and "Backups run nightly" in s
                             and "1 incoming" in s and "⇣ from origin" in s,
                             "the incoming change under its heading, with its diff, counted in the header")
        assert "1 pending" in screen and "↓1" in screen
        assert "Backups run nightly" not in (server / "MEMORY.md").read_text()
        subprocess.run([*tmux, "send-keys", "-t", "app", "a"], check=True)
        # The last decision fast-forwards to the laptop's commit at once: even with the remote, nothing to push.
        wait_screen(tmux, lambda s: "0 pending" in s and "origin ↑0 ↓0" in s, "the approval, fast-forwarded")
        assert FACT in (server / "MEMORY.md").read_text()
        subprocess.run([*tmux, "send-keys", "-t", "app", "P"], check=True)
        wait_screen(tmux, lambda s: "nothing to push" in s, "the sync with nothing left to push")
    finally:
        last = capture(tmux)
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert "Traceback" not in last
    out = run_cli(server, "sync")
    assert out.returncode == 0 and "nothing to push" in out.stdout, out.stdout
