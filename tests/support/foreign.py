"""Folders memtui did not write: what is in them, so a test can say that opening one changed nothing.

`listing(folder)` is every entry under the folder (hidden ones too, without following symlinks) with what it holds:
a file's bytes' hash, a symlink's target, a folder's mark. Compare it before and after anything that opens the
folder; `git_status(repo)` is the person's own `git status --porcelain`, which memtui's bookkeeping must never enter.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path


def listing(folder: str | os.PathLike[str]) -> dict[str, str]:
    """`ls -A`, recursively: relative path -> "dir", "link:<target>" or the sha256 of the file's bytes."""
    top = Path(folder)
    out: dict[str, str] = {}
    for here, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(here) / name
            rel = path.relative_to(top).as_posix()
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        dirs[:] = [d for d in dirs if not (Path(here) / d).is_symlink()]
    return out


def changed(before: dict[str, str], folder: str | os.PathLike[str]) -> dict[str, tuple[str | None, str | None]]:
    """What differs between `before` and the folder now: path -> (before, after); empty when nothing changed."""
    after = listing(folder)
    return {p: (before.get(p), after.get(p)) for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)}


def git_status(repo: str | os.PathLike[str]) -> str:
    """The person's `git status --porcelain --untracked-files=all --ignored` in their repository."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored"], cwd=repo,
                          capture_output=True, text=True, check=True).stdout
