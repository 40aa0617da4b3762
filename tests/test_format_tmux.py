"""A Claude Code memory and a Cline memory bank opened as a newcomer opens them, in a real terminal under tmux at
120x35 and 80x24: each shows in its own terms (a topic file's type badge and index line; a bank's documents and
sections), enter follows an index line, and Cline's own write is reviewed and approved as the person's decision.
The folder is compared before and after (tests/support/untouched.py)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from support.fixtures_claude_code import memory_folder, topic_text, write_memory
from support.fixtures_cline import replace_in_file, write_bank
from support.foreign import git_status, listing
from support.tmux import start_app, wait_screen
from support.untouched import untouched

pytestmark = pytest.mark.tmux
NOW = "2026-08-20T14:05"
SIZES = [(120, 35), (80, 24)]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path


def keys(tmux: list[str], *names: str) -> None:
    subprocess.run([*tmux, "send-keys", "-t", "app", *names], check=True)


def zoomed(tmux: list[str], size: tuple[int, int]) -> None:
    """At 80x24 the panes stack and the file gets a row or two: z gives it the screen, as a person would."""
    if size[0] < 100:
        keys(tmux, "z")


@pytest.mark.parametrize("size", SIZES)
def test_a_claude_code_memory_in_tmux(home: Path, size: tuple[int, int]) -> None:
    folder = write_memory(memory_folder(home))
    (folder / "project_orphan.md").write_text(topic_text("orphan", "nobody links me", "project", "Lost fact.\n"))
    before = listing(folder)
    tmux = start_app("memtui-cc", home, folder, size, NOW)
    try:
        wait_screen(tmux, lambda s: "memtui" in s and "MEMORY.md" in s, "the app")
        zoomed(tmux, size)
        wait_screen(tmux, lambda s: "[User role](user_role.md)" in s, "MEMORY.md's index")
        keys(tmux, "j")
        keys(tmux, "Enter")  # the index line under the cursor: its topic file
        screen = wait_screen(tmux, lambda s: "MEMORY.md:1 User role" in s, "user_role.md with its index line")
        assert "---   user   MEMORY.md:1" in screen and "name: user_role" in screen, screen
        assert "§" not in screen.split("user_role.md", 1)[-1].split("Review", 1)[0]
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    untouched(before, folder)


@pytest.mark.parametrize("size", SIZES)
def test_a_cline_bank_and_clines_own_write_in_tmux(home: Path, size: tuple[int, int]) -> None:
    bank = write_bank(home / "inventory")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=Wes", "-c", "user.email=w@example.com", "commit",
                                                 "-qm", "memory bank"]):
        subprocess.run(["git", *args], cwd=bank, check=True, capture_output=True)
    status = git_status(bank)
    tmux = start_app("memtui-cline", home, bank, size, os.environ["MEMTUI_NOW"])
    try:
        wait_screen(tmux, lambda s: "# Project Brief" in s, "the app")
        zoomed(tmux, size)
        screen = wait_screen(tmux, lambda s: "# Project Brief" in s and "Core Requirements" in s, "projectbrief.md")
        assert "does not exist" not in screen and "untagged" not in screen
        replace_in_file(bank, "progress.md", "- Reports\n", "- Reports (started)\n")  # Cline, straight to disk
        wait_screen(tmux, lambda s: "1 external" in s, "Cline's write as an external change")
        zoomed(tmux, size)  # the review back under the file
        wait_screen(tmux, lambda s: "external edit progress.md" in s or "external change (approve commits" in s,
                    "Cline's write in the review")
        before = listing(bank)
        keys(tmux, "a")
        deadline = time.monotonic() + 30
        while "progress.md" not in _last_commit(bank) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert "external edit progress.md" in _last_commit(bank)
    written = (bank / "progress.md").read_bytes()
    assert b"- Reports (started)\n" in written
    untouched(before, bank, {"progress.md": hashlib.sha256(written).hexdigest()}, repo=bank, status=status)


def _last_commit(repo: Path) -> str:
    return subprocess.run(["git", "log", "--format=%s", "-1"], cwd=repo, capture_output=True, text=True).stdout
