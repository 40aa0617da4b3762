"""`memtui status` on a folder memtui has never opened describes it (its kind, where its history would be kept)
instead of saying "no memory root", and writes nothing: not into the folder, not beside it, not into the person's
`git status`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.storage.places import places_for
from support.fixtures_cline import write_bank
from support.fixtures_hermes import hermes_home
from support.fixtures_openclaw import workspace
from support.foreign import git_status, listing


def status(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", "status", "--root", str(root), *extra],
                          capture_output=True, text=True, timeout=60, env=os.environ.copy())


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.mark.parametrize("kind", ["cline", "hermes", "openclaw-in-git", "notes"])
def test_status_describes_a_never_opened_folder_and_writes_nothing(tmp_path: Path, state: Path, kind: str) -> None:
    repo = None
    if kind == "cline":
        root, words = write_bank(tmp_path / "inventory"), "a Cline memory bank"
    elif kind == "hermes":
        root, words = hermes_home(tmp_path / "hermes"), "a Hermes memories folder"
    elif kind == "openclaw-in-git":
        root = repo = workspace(tmp_path / "workspace", git=True)
        words = "an OpenClaw workspace"
    else:
        root, words = tmp_path / "notes", "a folder of markdown notes"
        root.mkdir()
        (root / "ideas.md").write_text("- a thought\n")
    before, person = listing(root), git_status(repo) if repo else None
    done = status(root)
    assert done.returncode == 0, done.stderr
    assert f"not opened yet: {words}" in done.stdout and "no memory root" not in done.stdout + done.stderr
    places = places_for(root)
    where = "your git repository" if repo else "memtui's own, beside the folder"
    assert f"{where} at {places.git_dir}" in done.stdout, done.stdout
    assert "memtui open " in done.stdout
    data = json.loads(status(root, "--json").stdout)
    assert data["opened"] is False and data["pending"] == 0 and data["history"] == str(places.git_dir)
    assert listing(root) == before and not state.exists()  # nothing in the folder, nothing beside it
    if repo:
        assert git_status(repo) == person


def test_a_hostile_folder_name_is_drawn_on_one_line(tmp_path: Path, state: Path) -> None:
    root = tmp_path / "evil\nmemtui: 9 pending\x1b[2J"
    root.mkdir()
    (root / "note.md").write_text("- x\n")
    done = status(root)
    assert done.returncode == 0 and done.stdout.count("\n") == 1 and "\x1b" not in done.stdout, done.stdout


def test_status_of_a_missing_folder_is_still_an_error(tmp_path: Path, state: Path) -> None:
    done = status(tmp_path / "gone")
    assert done.returncode == 1 and "no memory root" in done.stderr
