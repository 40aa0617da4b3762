"""git as the judge of what memtui wrote: run it, fsck the repository, read its status, make a person's repo."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def sh(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`git -C root ARGS`' output; a failure fails the test with git's own words."""
    done = subprocess.run(["git", "-C", str(root), *args], check=False, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def fsck(root: Path) -> str:
    """`git fsck --full --strict` as "<exit status>:<what it said>" ("0:" when the repository is sound)."""
    done = subprocess.run(["git", "-C", str(root), "fsck", "--full", "--strict", "--no-dangling"],
                          check=False, capture_output=True, text=True)
    return f"{done.returncode}:{done.stdout}{done.stderr}".strip()


def status(root: Path) -> str:
    """`git status --porcelain`, memtui's own state folder (untracked by design) left out."""
    return "".join(line + "\n" for line in sh(root, "status", "--porcelain").splitlines() if line != "?? .memtui/")


def person_repo(path: Path) -> Path:
    """A repository a person made by hand: base.md and mem.md in one commit on main."""
    path.mkdir(parents=True)
    sh(path, "init", "-q", "-b", "main")
    sh(path, "config", "user.name", "person")
    sh(path, "config", "user.email", "person@example.com")
    (path / "base.md").write_text("base\n")
    (path / "mem.md").write_text("mem\n")
    sh(path, "add", ".")
    sh(path, "commit", "-qm", "base")
    return path
