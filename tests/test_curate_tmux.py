"""Curating by hand in a real terminal (tmux): the done-when of issue 13, and the $EDITOR round trip.

$EDITOR needs `App.suspend`, which Textual's headless test driver cannot do (it raises SuspendNotSupported), so
that round trip runs here, with a scripted editor that edits the line it was pointed at with `+LINE`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import git
import pytest

from app_support import demo_root, demo_template  # noqa: F401 (fixture)
from test_app_tmux import wait_screen

pytestmark = pytest.mark.tmux

EDITOR = """\
import sys
line = int(sys.argv[1].lstrip("+"))
path = sys.argv[2]
lines = open(path, encoding="utf-8").read().split("\\n")
lines[line - 1] = f"- [stated] Edited in the editor at line {line} (2026-08-20, vim)"
open(path, "w", encoding="utf-8").write("\\n".join(lines))
"""


@pytest.fixture
def tmux_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    exe = shutil.which("memtui")
    if exe is None:
        pytest.skip("memtui is not installed on PATH (pip install .)")
    root = demo_root(tmp_path, monkeypatch, demo_template)
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR)
    # A name of its own per test: the last test's server, just told to kill itself, can still hold the name,
    # and a new session made on it then dies with it ("server exited unexpectedly").
    socket = f"memtui-curate-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": os.environ["MEMTUI_NOW"], "MEMTUI_USER": "ana",
           "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm-256color", "PATH": os.environ["PATH"],
           "EDITOR": f"{sys.executable} {editor}"}
    command = " ".join(f"{k}='{v}'" for k, v in env.items()) + f" {exe} {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", "150", "-y", "42",
                    f"env -u COLUMNS -u LINES -u VISUAL {command}"], check=True)

    def keys(*k: str) -> None:
        for key in k:
            subprocess.run([*tmux, "send-keys", "-t", "app", key], check=True)
            time.sleep(0.15)

    try:
        wait_screen(tmux, "app", lambda s: "pending" in s and "◆" in s and "p-0001" in s)
        yield root, tmux, keys
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def wait_until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_one_key_and_a_few_words_revise_a_wrong_entry(tmux_app) -> None:
    root, tmux, keys = tmux_app
    keys("j", "J", "j", "j")  # to the agent's [inferred] guess in Preferences
    wait_screen(tmux, "app", lambda s: "inferred · 2026-07-01 · session-14 · § Preferences" in s)
    keys("e")
    wait_screen(tmux, "app", lambda s: "Revise (MEMORY.md § Preferences)" in s)
    keys("C-u")
    subprocess.run([*tmux, "send-keys", "-t", "app", "-l", "[stated] Reads diffs in the browser"], check=True)
    keys("Enter")
    wait_until(lambda: "[stated] Reads diffs in the browser (2026-08-20, session-14)" in (root / "MEMORY.md").read_text(),
               "the revise")
    screen = wait_screen(tmux, "app", lambda s: "[stated] Reads diffs in the browser (2026-08-20, session-14)" in s)
    lines = screen.splitlines()
    # The old line stays, struck, just above (its text wraps over a row or two at this width); the review panel's
    # diff beside the viewer may show the old line too, on another row.
    olds = [i for i, ln in enumerate(lines) if "[inferred] Reads diffs in the terminal" in ln]
    assert any(any("[stated] Reads diffs in the browser" in ln for ln in lines[old + 1:old + 4]) for old in olds)
    assert "~~[inferred] Reads diffs in the terminal rather than the browser (2026-07-01, session-14)~~ superseded" \
           " 2026-08-20" in (root / "MEMORY.md").read_text()
    log = subprocess.run(["git", "log", "-1", "--format=%an|%s"], cwd=root, capture_output=True, text=True).stdout
    assert log.strip() == "ana|revise MEMORY.md § Preferences: [stated] Reads diffs in the browser (2026-08-20, session-14)"


def test_editor_round_trip_waits_in_review_as_an_external_change(tmux_app) -> None:
    root, tmux, keys = tmux_app
    keys("j", "j")  # the cursor on the second current entry of User (file line 15)
    wait_screen(tmux, "app", lambda s: "stated · 2026-08-20 · chat · § User" in s)
    head = git.Repo(root).head.commit.hexsha
    keys("E")
    wait_until(lambda: "Edited in the editor at line 15" in (root / "MEMORY.md").read_text(), "the editor")
    lines = (root / "MEMORY.md").read_text().splitlines()
    assert lines[14] == "- [stated] Edited in the editor at line 15 (2026-08-20, vim)"
    pid = "x-" + hashlib.sha1(b"MEMORY.md").hexdigest()[:6]
    screen = wait_screen(tmux, "app", lambda s: f"waits in review as {pid}" in s)
    assert git.Repo(root).head.commit.hexsha == head  # not committed: it waits for the person
    keys("a")  # the review panel has focus on it: approve commits it
    wait_until(lambda: git.Repo(root).head.commit.hexsha != head, "the approval")
    commit = git.Repo(root).head.commit
    assert commit.message.startswith("external edit MEMORY.md") and commit.author.name == "ana"
    assert "external" in screen
