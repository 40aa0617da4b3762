"""Changes made to a folder memory past memtui, listed for review: the files git's status names that could be memory,
each with its committed bytes, its bytes now (as git would record them) and, where git would store other bytes, those.
One job: telling a person what changed outside memtui, read through the store's git owner (the git CLI's status and
the store's one object reader); approving or rejecting them is memtui.core.writing.memory's.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Collection

from memtui.core.storage.folder_state import _regular_bytes
from memtui.core.storage.places import AUDIT_FILE, STATE_DIR
from memtui.core.storage.store import ExternalChange, StoreError, StorePart

# Paths that are memtui's own bookkeeping, never memory content and never an external change.
PRIVATE = (STATE_DIR + "/", AUDIT_FILE, ".git/")
SKIP_DIRS = {".git", STATE_DIR, "node_modules", "__pycache__"}


# A file changed past memtui from this size up keeps its hash while its bytes stand (ExternalReview._bytes_now).
SEEN_MIN_BYTES = 1 << 20


class ExternalReview(StorePart):
    """The external changes of the folder memory `store` (memtui.core.storage.folder.FolderStore, not imported: it
    imports this), listed through the repository the store has now."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        # Big files changed past memtui, as last listed for review: path -> (bytes, hash). See _bytes_now.
        self._seen: dict[str, tuple[bytes, str]] = {}

    def changes(self, paths: Collection[str] | None = None) -> list[ExternalChange]:
        # With `paths`, git's status is asked of those paths only (literal pathspecs): at 100,000 files a whole
        # status is a quarter of a second of lstat, for the one file an append changed.
        spec = () if paths is None else ("--", *(":(literal)" + p for p in sorted(paths)))
        if paths is not None and not spec[1:]:
            return []
        from memtui.core.storage import baseline

        look = baseline.begin(self.store)  # a large folder's first look: its baseline written in the background
        if look is not None:  # nothing differs from a look just taken
            return [] if look == "taken" else baseline.changes_since_look(self.store, paths)
        self.store.ensure_history()
        # Files the first look saw and the baseline never read, deleted in between: listed till a person decides.
        return self._status_changes(spec) + baseline.gone_changes(self.store, paths)

    def _status_changes(self, spec: tuple[str, ...] = ()) -> list[ExternalChange]:
        """The files git's status names (`spec`: only those paths) whose bytes differ from history's: the status by
        the git CLI (the owner's `status_porcelain`, memtui's overrides and the repository's filter drivers switched
        off), the committed versions by the store's one object reader, whether or not GitPython is open (measured
        against GitPython's `repo.git.status` in benches/bench_git_reads.py; the CLI is as fast and imports no git
        library on the app's first sync)."""
        if not self.has_git:
            return []
        from memtui.core.storage.gitcall import config_env, git_timeout, status_porcelain

        git_dir = self.store.git_dir
        env = {**os.environ, **config_env(git_dir, self.root), "GIT_DIR": str(git_dir)}
        with self.store._git.serial():
            done = status_porcelain(env, self.root, spec)
        if done is None:
            self.store._git.vet()  # a config include git waits on: said, with what to do
            raise StoreError(f"git status did not answer within {git_timeout():g}s in {self.root}; memtui stopped "
                             "it and nothing was changed. Check for a stuck git process, then run `memtui doctor`")
        if done[0] != 0:
            err = "; ".join(line.strip() for line in done[2].decode("utf-8", "replace").splitlines() if line.strip())
            raise StoreError(f"git cannot read the repository at {self.root} ({err[-200:]}); "
                             "run `memtui doctor`")
        rels = _status_paths(done[1].decode("utf-8", "surrogateescape"))
        if not rels:
            return []
        # One batch for all; where it cannot say (no commit yet, a path with a line break), file by file.
        committed = self.store._plumbing_batch(rels) or {rel: self.store.committed(rel) for rel in rels}
        found = []
        seen: dict[str, tuple[bytes, str]] = {}
        for rel in rels:
            after, known = self._bytes_now(rel, seen)
            if committed[rel] != after:
                found.append((rel, committed[rel], after, known))
        changes = self._with_stored(found)
        # Only the files listed now stay kept (of those asked about, with paths: the others' stay as they were).
        asked = {p.removeprefix(":(literal)") for p in spec[1:]}
        self._seen = seen if not spec else {**{k: v for k, v in self._seen.items() if k not in asked}, **seen}
        return changes

    def _with_stored(self, found: list[tuple[str, bytes | None, bytes | None, str | None]]) -> list[ExternalChange]:
        """The external changes (path, committed bytes, bytes now, their hash), each with what git would store."""
        stored = self.store.commits._stored_all([(rel, after) for rel, _, after, _ in found])
        return [ExternalChange(rel, before, after, known, stored.get(rel), _linked_note(self.root / rel))
                for rel, before, after, known in found]

    def _bytes_now(self, rel: str, seen: dict[str, tuple[bytes, str]]) -> tuple[bytes | None, str | None]:
        """A changed file's bytes as git sees them, and their content_hash when known: a big file whose bytes are
        those of the last listing is not hashed again (an agent's 20 MB log was hashed at every sync). The bytes
        are read and compared every time; no stat stands in for them (a write through a shared mmap can change a
        file and none of its times)."""
        data = _as_git_sees(self.root / rel)
        if data is None or len(data) < SEEN_MIN_BYTES:
            return data, None
        hit = self._seen.get(rel)
        if hit is None or hit[0] != data:
            from memtui.core.storage.store import content_hash

            hit = (data, content_hash(data))
        seen[rel] = hit
        return data, hit[1]


def _linked_note(path: Path) -> str | None:
    """The flag for a changed file with more than one name: a hard link planted in the folder may be a file
    outside it, whose bytes the review shows and an approval would commit."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
        return None
    return (f"this file has {st.st_nlink} names (a hard link): it may be a file outside the memory (a key, another "
            "project's settings) linked in; reject it unless you made the link yourself")


def _as_git_sees(path: Path) -> bytes | None:
    """A file's bytes as git would record them: a symlink is its target's name, never what it points at (a link to
    `.git/config` must not put the config on the reviewer's screen)."""
    try:
        if os.path.islink(path):
            return os.readlink(path).encode("utf-8", errors="surrogateescape")
        return _regular_bytes(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


# A queue file's name as listed in its folder (no separator, no dot-name): read by name in the open folder.
def _status_paths(raw: str) -> list[str]:
    """The paths `git status --porcelain=v1 -z` names that could be memory: memtui's own files and ignored folders
    memtui does not read either (list_files skips them) left out."""
    out = []
    for item in raw.split("\0"):
        if len(item) < 4:
            continue
        rel = item[3:]
        if _ignored_private(rel):
            continue
        if item.startswith("!!") and (rel.endswith("/") or any(
                part in SKIP_DIRS or part.startswith(".") for part in rel.split("/")[:-1])):
            continue
        out.append(rel)
    return out


def _ignored_private(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith(PRIVATE) or rel == AUDIT_FILE or (name.startswith(".") and name.endswith(".tmp"))
