"""The comparison every test of a folder memtui did not write ends with: the folder as it was, except for what a
person approved.

memtui's bookkeeping (`.memtui/`, `memory-log.jsonl`, a `.git` it made) is checked apart from the memory's own
files: `untouched` first says what else differs (a change of the memory nobody approved), then that the bookkeeping
is not in the folder either (memtui's state kept beside the folder, under the user's state directory).
"""

from __future__ import annotations

import os
from pathlib import Path

from support.foreign import changed, git_status

BOOKKEEPING = (".memtui", "memory-log.jsonl", ".git")


def untouched(before: dict[str, str], folder: str | os.PathLike[str], approved: dict[str, str | None] | None = None,
              *, repo: str | os.PathLike[str] | None = None, status: str | None = None) -> None:
    """Assert that `folder` holds what `before` listed, but for `approved` (path -> sha256 now, or None: gone),
    and, with `repo`, that the person's `git status` is still `status`."""
    from support.foreign import listing

    approved = approved or {}
    diff = changed(before, folder)
    if repo is not None and Path(repo).resolve() == Path(folder).resolve():
        # The person's own repository: an approved change is a commit there, so its .git moves; `git status`
        # says what matters of it.
        diff = {p: v for p, v in diff.items() if p != ".git" and not p.startswith(".git/")}
    own = {p: v for p, v in diff.items() if p.split("/", 1)[0] not in BOOKKEEPING and p not in approved}
    assert not own, f"files changed that nobody approved: {own}"
    now = listing(folder)
    for p, sha in approved.items():
        assert now.get(p) == sha, f"{p} is not what was approved: {now.get(p)} != {sha}"
    if repo is not None and status is not None:
        mine = [ln for ln in git_status(repo).splitlines() if not any(b in ln for b in BOOKKEEPING)]
        assert mine == [ln for ln in status.splitlines()], f"the person's git status changed: {git_status(repo)}"
    kept = {p: v for p, v in diff.items() if p.split("/", 1)[0] in BOOKKEEPING}
    assert not kept, f"memtui's bookkeeping was left in the folder (state beside the folder not merged yet): {kept}"
    if repo is not None and status is not None:
        assert git_status(repo) == status, f"memtui's bookkeeping shows in the person's git status: {git_status(repo)}"
