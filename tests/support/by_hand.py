"""A person's own git: files written by hand and committed with git, as someone sets up a topic file in an editor.

memtui plans every write against the committed version, so a file made by hand is memory once it is committed
(here, or by approving it as an external change)."""

from __future__ import annotations

from pathlib import Path

import git


def write_committed(root: Path, rel: str, text: str, message: str = "by hand") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    repo = git.Repo(root)
    repo.git.add("--", rel)
    repo.git.commit("-q", "-m", message, "--", rel)
    repo.close()
    return path
