"""Shared fixtures: a fresh memory root per test, a pinned clock and a person's name."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# The person's state folder (memtui's state for folders it keeps beside, the seal key, crash reports, the layout):
# one temporary folder for the whole session, so no test reads or writes the real ~/.local/state. Set before
# anything is imported and inherited by every subprocess; a test that needs its own sets XDG_STATE_HOME again.
if not os.environ.get("MEMTUI_TESTS_STATE"):
    import tempfile

    import atexit
    import shutil

    os.environ["MEMTUI_TESTS_STATE"] = tempfile.mkdtemp(prefix="memtui-tests-state-")
    os.environ["XDG_STATE_HOME"] = os.environ["MEMTUI_TESTS_STATE"]
    # removed by the process that made it, when the session ends (a run left one in /tmp each time)
    atexit.register(shutil.rmtree, os.environ["MEMTUI_TESTS_STATE"], True)

from memtui.core.storage.init import init_root  # noqa: E402
from memtui.core.writing.memory import Memory  # noqa: E402


@pytest.fixture(autouse=True)
def _pinned_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_USER", "wes")
    monkeypatch.delenv("MEMTUI_ROOT", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    os.environ.setdefault("GIT_AUTHOR_NAME", "memtui-tests")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "tests@memtui.local")
    os.environ.setdefault("GIT_COMMITTER_NAME", "memtui-tests")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "tests@memtui.local")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A memory root made by `memtui init` (personal template), with git."""
    r = tmp_path / "memory"
    init_root(r)
    return r


@pytest.fixture
def mem(root: Path) -> Memory:
    return Memory(root)


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch):
    """Pin the clock: now("2026-08-20T14:05")."""

    def set_now(iso: str) -> None:
        monkeypatch.setenv("MEMTUI_NOW", iso)

    return set_now
