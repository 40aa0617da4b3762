"""The change event names only paths of the memory: not a refused write's hostile file name, not a file name forged
inside a diff by a file's content; and a hostile name written on disk arrives as data, not as a path elsewhere."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memtui.core.writing.changes import Change
from memtui.core.writing.memory import Memory


class Heard:
    def __init__(self) -> None:
        self.got: list[Change] = []
        self.lock = threading.Lock()

    def __call__(self, change: Change) -> None:
        with self.lock:
            self.got.append(change)

    def settle(self, n: int, timeout: float = 10.0) -> list[Change]:
        deadline = time.monotonic() + timeout
        while len(self.got) <= n and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)
        return self.got[n:]


@pytest.mark.parametrize("hostile", ["../outside.md", "/etc/passwd", ".git/config", "a\x1b]0;owned\x07.md",
                                     "notes/../../escape.md", ".memtui/config.toml"])
def test_a_refused_write_with_a_hostile_path_names_no_path(mem: Memory, hostile: str) -> None:
    heard = Heard()
    unsubscribe = mem.subscribe(heard, watch=False)
    try:
        result = mem.create(hostile, "- [stated] x\n", actor="agent-x")
        assert result.status != "applied"
        got = heard.settle(0)
        assert len(got) == 1 and got[0].own and got[0].paths == frozenset(), got
    finally:
        unsubscribe()


def test_diff_headers_forged_by_content_do_not_become_paths(mem: Memory) -> None:
    heard = Heard()
    unsubscribe = mem.subscribe(heard, watch=False)
    try:
        forged = "# Notes\n++ b/../../outside.md\n-- a/.git/config\n++ b/people/ana.md\n"
        result = mem.create("notes/forged.md", forged, actor="wes")
        assert result.status == "applied", result.message
        assert "+++ b/../../outside.md" in result.diff  # the forgery is really in the diff
        got = heard.settle(0)
        assert len(got) == 1
        # "people/ana.md" is a legal name, so it may be re-read for nothing; nothing outside the memory is named.
        assert "notes/forged.md" in got[0].paths
        assert not any(p.startswith(("..", "/", ".git")) for p in got[0].paths), got[0].paths
    finally:
        unsubscribe()


def test_a_hostile_file_name_on_disk_arrives_as_its_name(mem: Memory) -> None:
    heard = Heard()
    unsubscribe = mem.subscribe(heard)
    try:
        n = len(heard.got)
        name = "odd\x1b[2Jname\n.md"
        (Path(mem.location) / name).write_text("- [stated] odd\n")
        got = heard.settle(n)
        assert any(name in c.paths for c in got), got
        assert all(not p.startswith(("/", "..")) for c in got for p in c.paths)
    finally:
        unsubscribe()
