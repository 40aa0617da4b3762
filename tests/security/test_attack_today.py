"""Attacks on the day's changes: lint's forked workers and its sealed cache, sync's fetch check, incoming changes
not announced as arrivals, and the commit path's index lock. Each test is an attack memtui must hold against."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memtui.core.hygiene.lint import CACHE_FILE, lint
from memtui.core.writing.memory import Memory
from tests.security.test_lint_cache import _memory
from tests.test_lint_parallel import many


# 1. lint's workers and cache ----------------------------------------------------------------------------------
def test_a_link_planted_where_lint_writes_its_cache_is_not_written_through(tmp_path: Path) -> None:
    """The cache is written to `lint-cache.<pid>.tmp` in the state folder, which an agent with file access can
    write: a symlink planted under that name (the pid of the lint is easy to guess) must not have memtui truncate
    and overwrite the file it points at (a dotfile, the person's MEMORY.md)."""
    root = _memory(tmp_path / "m")
    state = Memory(root).store.state_folder
    victim = tmp_path / "dotfile"
    victim.write_text("the person's file\n")
    (state / f"{CACHE_FILE}.{os.getpid()}.tmp").symlink_to(victim)
    cold = [f.render() for f in lint(Memory(root), processes=2)]
    assert victim.read_text() == "the person's file\n"
    assert any("[secret]" in f for f in cold)
    warm = [f.render() for f in lint(Memory(root), processes=2)]
    assert warm == cold
