"""An agent that can write beside the repository's config turns memtui's own `git status` into code execution.

GitPython's Repo keeps memtui's overrides (each filter driver the repository's config defines, switched off) until
the config file itself changes; a driver defined in a file the config includes changes no byte of the config. When
external changes were listed through GitPython's status (once GitPython was open), that driver's `clean` command
ran on the next listing. The one reader now reads the overrides afresh for each status.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from memtui.core.storage.folder import FolderStore
from support.git_judge import person_repo, sh


def _including(where: Path) -> Path:
    """A person's repository whose .md files name a filter `evil`, and whose config includes `.git/agent.cfg`, empty
    for now: the file an agent that can write beside the config fills in later."""
    root = person_repo(where)
    (root / ".gitattributes").write_text("*.md filter=evil\n")
    sh(root, "add", ".gitattributes")
    sh(root, "commit", "-qm", "attributes")
    with open(root / ".git" / "config", "a") as f:
        f.write("[include]\n\tpath = agent.cfg\n")
    (root / ".git" / "agent.cfg").write_text("")
    return root


def test_a_filter_driver_added_in_an_included_config_file_never_runs(tmp_path: Path) -> None:
    root = _including(tmp_path / "m")
    store = FolderStore(root)
    with store.git() as repo:
        assert repo is not None  # GitPython open, as after a blame or a patch in the app
    assert store.external_changes() == []

    marker = tmp_path / "PWNED"
    (root / ".git" / "agent.cfg").write_text(f'[filter "evil"]\n\tclean = touch {marker}; cat\n')
    (root / "mem.md").write_text("changed by the agent\n")
    later = time.time() + 5
    os.utime(root / "mem.md", (later, later))  # stat-dirty: git must read it, through the filter if one is on
    assert [(c.path, c.after) for c in store.external_changes()] == [("mem.md", b"changed by the agent\n")]
    assert not marker.exists(), "memtui's git status ran a filter driver the agent defined"


def test_a_filter_driver_added_in_an_included_config_file_never_runs_on_blame(tmp_path: Path) -> None:
    """GitPython's own reads (blame, patches) kept the overrides made when the config file last changed: a driver an
    included file defines after that ran on the next blame of a changed file. The overrides are made again when any
    file git's config includes changes."""
    root = _including(tmp_path / "m")
    store = FolderStore(root)
    assert store.blame_chunks("mem.md") is not None  # GitPython open, its overrides made

    marker = tmp_path / "PWNED"
    (root / ".git" / "agent.cfg").write_text(f'[filter "evil"]\n\tclean = touch {marker}; cat\n')
    (root / "mem.md").write_text("changed by the agent\n")
    later = time.time() + 5
    os.utime(root / "mem.md", (later, later))  # stat-dirty: blame reads the work tree's file, through its filter
    store.blame_chunks("mem.md")
    assert not marker.exists(), "memtui's git blame ran a filter driver the agent defined"
