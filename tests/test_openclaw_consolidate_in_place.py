"""Consolidation in an OpenClaw workspace (a layout without strikes or tags): the merged-away lines leave MEMORY.md
and stay in history (the person's git); no archive/ file, no struck line, no tag is written into the workspace.
memtui's own format still archives its struck history (tests/test_consolidate*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from support.fixtures_openclaw import MEMORY, person_git, workspace
from support.foreign import changed, git_status, listing

NOW = "2026-12-06T10:15"
OLD = "- Billing service moved to Postgres 16.\n"
NEW = "- Billing service moved to Postgres 16 in November.\n"


@pytest.fixture
def ws(tmp_path: Path, now, monkeypatch: pytest.MonkeyPatch) -> Path:
    now(NOW)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert NEW in MEMORY
    # OpenClaw's agent wrote the fact twice, the shorter wording first (its own plain bullets, no tags).
    return workspace(tmp_path / ".openclaw" / "workspace", git=True,
                     files={"MEMORY.md": MEMORY.replace(NEW, OLD + NEW)})


def cli(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMTUI_NOW": NOW, "MEMTUI_USER": "wes"}
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(ws)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_a_consolidation_takes_the_merged_line_out_and_history_keeps_it(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    proposed = cli(ws, "consolidate", "Projects", "--no-model")
    assert proposed.returncode == 4, proposed.stdout + proposed.stderr  # waits for a person
    assert "archive/" not in proposed.stdout and "~~" not in proposed.stdout, proposed.stdout
    assert (ws / "MEMORY.md").read_text() == MEMORY.replace(NEW, OLD + NEW)  # waiting is not writing
    approved = cli(ws, "queue", "approve", "p-0001")
    assert approved.returncode == 0, approved.stdout + approved.stderr
    text = (ws / "MEMORY.md").read_text()
    assert text == MEMORY and "~~" not in text and "[" not in text
    assert not (ws / "archive").exists()
    assert set(p for p in changed(before, ws) if not p.startswith(".git/")) == {"MEMORY.md"}
    assert git_status(ws) == status  # committed in the person's repository, nothing of memtui's in it
    assert OLD in person_git(ws, "show", "HEAD~1:MEMORY.md") and OLD not in person_git(ws, "show", "HEAD:MEMORY.md")


def test_an_untagged_section_is_not_refused_for_its_tags(ws: Path) -> None:
    mem = Memory(ws)
    results = mem.consolidate("Projects", use_model=False)
    assert [r.status for r in results] == ["queued"], [r.message for r in results]
    assert "archive/" not in (results[0].diff or "")
