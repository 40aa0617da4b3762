"""#43 in a real terminal (tmux, 120x35 and 80x24): the old proposal is marked in the review list, and a proposal
queued by another process while the app runs shows as a toast and a feed line."""

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
from memtui.core.writing.memory import Memory
from support.tmux import start_app, wait_screen

pytestmark = pytest.mark.tmux
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
def test_old_proposal_marked_and_arrival_toasted_in_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         demo_template: Path, size: tuple[int, int]) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    root = demo_root(tmp_path, monkeypatch, demo_template)
    # The demo's own proposals are decided, so the old one is first in the list at any size.
    mem = Memory(root)
    for p in mem.proposals(external=False):
        mem.reject(p.id, reason="clearing the demo", by="wes")
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-17T09:00")
    Memory(root).update("Facts", "add", "[stated] Old news", actor="agent-x")
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    tmux = start_app("memtui-finds", tmp_path, root, size, "2026-08-20T14:05")
    try:
        screen = wait_screen(tmux, lambda s: "p-0" in s and "⌛ 3d" in s)
        time.sleep(1.0)  # the watcher is started after the first screen
        queued = subprocess.run([sys.executable, "-m", "memtui", "update", "Projects", "add",
                                 "[stated] Arrived live", "--by", "agent-y", "--root", str(root)],
                                capture_output=True, text=True,
                                env={**os.environ, "HOME": str(tmp_path), "MEMTUI_CONFIG_DIR": str(tmp_path / "config")})
        assert queued.returncode == 4, queued.stdout + queued.stderr
        screen = wait_screen(tmux, lambda s: "agent-y proposes" in s)
        assert "Arrived live" in screen or "add MEMORY.md" in screen, screen
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
