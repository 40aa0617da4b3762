"""What a write leaves on disk is pinned byte for byte: the queue file of a proposal, the audit lines, the sealed
intent's payload and the commits (their shas, so their trees and messages too), for a person's applied update and
an agent's proposal approved by a person, on a pinned clock. Readers of these files outside memtui (history,
Today, doctor, other memtui versions, a person's git) depend on them staying the same when the write path is
made cheaper; the expected values are what the write path wrote at ab41db8 (tests/support/write_formats.json),
with the commits' shas written again when `memtui init`'s config template named more agents (its first commit's tree
changed, so every sha after it; nothing else did)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memtui.core.storage.folder import FolderStore
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory
from memtui.core.basics.seal import unseal

EXPECTED = Path(__file__).parent / "support" / "write_formats.json"


def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True).stdout


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _queue_file(data: bytes) -> str:
    """A queue file's text with its seal (an HMAC under this run's own key) checked, then written as `<seal>`."""
    from memtui.core.writing.proposals import unsealed_reason

    assert unsealed_reason(data) is None
    return re.sub(r'"memtui-seal": "[0-9a-f]{64}"', '"memtui-seal": "<seal>"', data.decode())


def write_formats(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Every byte the two writes leave (or, for the big ones, their sha256): queue files, audit lines, intents,
    commits, the files, and what each writer is told."""
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp / "state"))
    intents: list[str | None] = []
    real_save = FolderStore.intent_save

    def keep(self: FolderStore, data: bytes | None) -> None:
        intents.append(None if data is None else (unseal(data) or b"unsealed").decode())
        real_save(self, data)

    monkeypatch.setattr(FolderStore, "intent_save", keep)
    root = tmp / "memory"
    init_root(root)
    log = root / "memory-log.jsonl"
    audit_at = len(log.read_bytes()) if log.exists() else 0
    mem = Memory(root)
    out: dict[str, Any] = {}
    person = mem.update("Preferences", "add", "[stated] Likes green tea — sencha", source="chat/kickoff",
                        actor="wes")
    queued = mem.update("Preferences", "add", "[observed] Reads \"docs\" first, then\tcode", actor="claude-bot",
                        origin="tool", session="s-1")
    queue_file = (root / ".memtui" / "queue" / f"{queued.id}.json").read_bytes()
    approved = mem.approve(queued.id, by="wes")
    revised = mem.update("Preferences", "revise", "[stated] Likes green tea, gyokuro", "Likes green tea",
                         actor="wes")
    created = mem.create("notes/plan.md", "# Plan\n\n- [inferred] Ship \u00e9t\u00e9 \"fast\"\n", actor="claude-bot")
    rejected = mem.reject(created.id, reason="not now", by="wes")
    out["results"] = [r.to_dict() for r in (person, queued, approved, revised, created, rejected)]
    out["queue_file_queued"] = _queue_file(queue_file)
    out["queue_file_applied"] = _queue_file((root / ".memtui" / "queue" / f"{queued.id}.json").read_bytes())
    out["queue_file_rejected"] = _queue_file((root / ".memtui" / "queue" / f"{created.id}.json").read_bytes())
    out["audit"] = log.read_bytes()[audit_at:].decode().splitlines()
    out["intents"] = intents
    out["head"] = _git(root, "rev-parse", "HEAD").decode().strip()
    out["commits"] = [_git(root, "cat-file", "commit", sha).decode()
                      for sha in _git(root, "rev-list", "HEAD").decode().split()]
    out["memory_md"] = _digest((root / "MEMORY.md").read_bytes())
    return out


def test_a_write_leaves_the_bytes_it_left_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = json.loads(json.dumps(write_formats(tmp_path, monkeypatch)))
    want = json.loads(EXPECTED.read_text(encoding="utf-8"))
    for key in want:
        assert got[key] == want[key], key
    assert set(got) == set(want)
