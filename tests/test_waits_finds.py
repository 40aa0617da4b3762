"""#43 "what waits finds the person": Today lists memory changes, not bookkeeping; `memtui status` for a prompt;
the SessionStart context names the writes that wait; a proposal arriving while the app runs announces itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core.memory import Memory
from memtui.core.today import today


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


# Today: bookkeeping is not a change ---------------------------------------------------------------------------------

def test_today_after_init_lists_memory_md_only_not_gitignore_or_gitkeep(root: Path, capsys) -> None:
    files = [f.file for f in today(Memory(root)).files]
    assert files == ["MEMORY.md"], files
    assert main(["today", "--json", "--root", str(root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["file"] for f in data["files"]] == ["MEMORY.md"]
    assert data["counts"] == {"applied": 1}


def test_a_hand_made_commit_lists_its_markdown_and_drops_its_bookkeeping(root: Path) -> None:
    (root / ".gitignore").write_text((root / ".gitignore").read_text() + "*.swp\n")
    (root / "notes.txt").write_text("not memory\n")
    (root / "people").mkdir()
    (root / "people" / "ana.md").write_text("# Ana\n\n- [stated] Ana runs the API team\n")
    (root / "log" / ".gitkeep").write_text("")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "people: Ana, and ignore swap files")
    only_bookkeeping = root / "scratch" / ".gitkeep"
    only_bookkeeping.write_text("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "touch a keep file")
    rep = today(Memory(root))
    listed = {(c.file, c.after) for c in rep.changes}
    assert ("people/ana.md", "people: Ana, and ignore swap files") in listed
    assert not any(f.endswith((".gitignore", ".gitkeep", ".txt")) for f, _ in listed), listed
    assert not any(after == "touch a keep file" for _, after in listed)
    # one commit counted once, the bookkeeping-only one not at all: init + the people commit
    assert rep.counts == {"applied": 2}
