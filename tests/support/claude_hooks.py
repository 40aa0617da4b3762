"""Driving memtui's Claude Code hooks in process, as their tests do: a memory to write to, a Write through the
PreToolUse hook, the decisions hook's news, and a count of the queue files a hook reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.storage.folder import FolderStore
from memtui.integrations import claude_code

SESSION = "5c0e7d2a-41b7-4f1e-9f0a-2d6b8e3c9a11"
OTHER = "another-session"


def hook_root(tmp_path: Path) -> Path:
    from memtui.core.storage.init import init_root

    r = tmp_path / "memory"
    init_root(r)
    (r / "topics").mkdir(exist_ok=True)
    return r


def write(root: Path, name: str, session: str = SESSION) -> str:
    """Claude Code's Write of a new topic file, through the PreToolUse hook: the id it was queued as."""
    reply = claude_code.pre_tool_use({"session_id": session, "hook_event_name": "PreToolUse", "tool_name": "Write",
                                      "cwd": str(root), "tool_input": {"file_path": str(root / "topics" / name),
                                                                       "content": f"# {name}\n\nnotes\n"}}, [root])
    reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Queued as p-"), reason
    return reason.split()[2]


def post_tool_use(session: str = SESSION) -> dict:
    return {"session_id": session, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}}


def told(root: Path, session: str = SESSION) -> str:
    """What the decisions hook tells `session` now ("" when nothing)."""
    reply = claude_code.decisions(post_tool_use(session), [root])
    return "" if reply is None else reply["hookSpecificOutput"]["additionalContext"]


def count_queue_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every queue file read from here on, by id."""
    seen: list[str] = []
    real = FolderStore.queue_load

    def counting(self, pid: str):
        seen.append(pid)
        return real(self, pid)

    monkeypatch.setattr(FolderStore, "queue_load", counting)
    return seen


@pytest.fixture(name="root")
def root_fixture(tmp_path: Path) -> Path:
    return hook_root(tmp_path)


@pytest.fixture(name="loads")
def loads_fixture(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return count_queue_loads(monkeypatch)
