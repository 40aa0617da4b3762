"""The first look at a large folder memtui did not make, and the baseline of history written after it.

memtui's history beside a folder (memtui.core.storage.places) starts with a commit of every file as it was before memtui
looked: what that commit holds is trusted as "there before memtui" (memtui.core.timeline.provenance). Reading and
committing 10,000 files takes seconds, and the first open of a large folder waited for all of it. Deferring it naively
is unsafe: an agent's write in those seconds would be read into the baseline and never reviewed.

So the first open records a **glance** (`glance`): the time and every file's name, from the folder's listing
alone (no stat, no read: the open of a 10,000-file folder costs what opening a memtui memory of that size does). The
baseline is then written in the background (a process of its own, so a CLI command that opened the folder can exit:
`FolderStore.ensure_history` writes it from the glance), and trusts as "there before memtui" only a file that was
named at the glance and that nothing has touched since a while before it: its ctime and mtime, by its stat before
and after it is read, older than `glance_window` before the glance. A write, a rename over the file, a chmod or a
link sets the ctime to the clock's time then (file-system clocks tick coarsely, so within that window), and no one
but root sets a ctime back. Anything else (touched since, or just before: a write in the same clock tick cannot be told
from it; not named at the glance) is **left out** of the baseline: it comes up for review as an external change,
its bytes not trusted as "there before memtui". Until the baseline is committed and the glance removed, the folder
counts as having no history (`Places.has_git`; said as "history is being recorded", `Places.recording`), so no
reader sees half a history; the external changes are then the files that differ from the glance
(`changes_since_look`), and everything that needs history (a write, history, blame, approving) waits for it
(`FolderStore.ensure_history` builds it in process if no one is). `take`, a look with each file's stat (and the
bytes' hash of one modified within `RACY_NS`), is the same record in full, compared to the nanosecond.

A folder of fewer than `DEFER_AT` files is committed at once, as before: the wait is short and nothing is deferred.
A file the look saw that is gone before the baseline read it (an agent's delete in those seconds) cannot be in
history: its bytes were never read. Its deletion is not lost from review: while the baseline is pending it is
listed from the look, and the baseline records it (`GONE`, in the state folder) so that it stays listed, as a
deletion memtui cannot undo (`ExternalChange.note`), until a person approves it (`settle_gone`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from memtui.core.storage.folder_state import read_open
from memtui.core.storage.places import AUDIT_FILE, LOOK_FILE, STATE_DIR

MANIFEST = LOOK_FILE  # in the state folder beside: the first look, until the baseline is in place
GONE = "baseline-gone.json"  # in the state folder: {rel: [size, mtime_ns] at the look} deleted before the baseline
RUNNER = "baseline-runner"  # the pid of the background process writing the baseline
DEFER_AT = 1000  # files: below this the baseline is written at once (as fast as the look would be, near enough)
# A file modified this close to the look is hashed in it: a later write in the same tick of the file system's clock
# (1-10 ms on Linux) would keep its mtime and ctime. A second covers coarse and network file systems.
RACY_NS = 1_000_000_000
# A glance vouches for no file touched this close before it (`glance_window`): 5 ticks of a 100 Hz kernel clock on
# a file system that keeps nanoseconds, else FAT's two seconds (a file just copied in bulk is not all left out).
FINE_NS = 50_000_000
COARSE_NS = 2_000_000_000
RACY_READ_MAX = 4 << 20  # bytes: a file modified that recently and bigger than this is not read at the look
SKIPPED = (".git",)  # never looked into: a repository's own files are not memory


class Look:
    """The first look: when it was taken, and per file (rel path) `[size, mtime_ns, ctime_ns, inode, mode, sha256 or
    None]`. ctime as well: a write that keeps the size and sets the mtime back (`touch -d`) still moves it.

    A glance (`glance`, what the first open records) has each file's name only (None): a file is then as it was at
    the look when its ctime and mtime are both older than `glance_window` before it. A write, a rename over it, a chmod or
    a link after the look sets the ctime to the clock's time then, and no one but root sets a ctime back."""

    __slots__ = ("taken_ns", "files")

    def __init__(self, taken_ns: int, files: dict[str, list[Any]]) -> None:
        self.taken_ns, self.files = taken_ns, files

    def to_bytes(self) -> bytes:
        return json.dumps({"taken_ns": self.taken_ns, "files": self.files}, separators=(",", ":")).encode("ascii")

    @classmethod
    def from_bytes(cls, data: bytes) -> Look:
        raw = json.loads(data)
        if "names" in raw:  # a glance
            return cls(int(raw["taken_ns"]), dict.fromkeys(map(str, raw["names"])))
        return cls(int(raw["taken_ns"]), {str(k): list(v) for k, v in raw["files"].items()})

    def same(self, rel: str, st: os.stat_result) -> bool:
        """Is the file's stat the one seen at the look (size, mtime and ctime to the nanosecond, inode, mode)? For a
        glance: was the file there, and has nothing touched it since a while before (see the class)?"""
        if rel not in self.files:
            return False
        seen = self.files[rel]
        if seen is None:
            return max(st.st_mtime_ns, st.st_ctime_ns) < self.taken_ns - glance_window(st)
        return seen[:5] == _stat(st)

    def digest(self, rel: str) -> str | None:
        """The bytes' sha256 the look took (None: it trusted the stat)."""
        seen = self.files.get(rel)
        return None if seen is None else seen[5]

    def unchanged(self, rel: str, before: os.stat_result, data: bytes, after: os.stat_result) -> bool:
        """May these bytes, read between `before` and `after`, go into the baseline as "there before memtui"?"""
        if not (self.same(rel, before) and self.same(rel, after)):
            return False
        digest = self.digest(rel)
        return digest is None or hashlib.sha256(data).hexdigest() == digest


def glance_window(st: os.stat_result) -> int:
    """How long before a glance a file's last touch must be for the glance to vouch for it (`Look.same`). A ctime
    with digits below the millisecond comes from a file system that keeps nanoseconds, stamped from the kernel's
    coarse clock, a tick (at most 10 ms) behind the clock the glance read: `FINE_NS` covers it. Any other (a file
    system that keeps seconds, FAT's two, a network server's clock) gets `COARSE_NS`. No writer chooses a ctime's
    digits: the kernel stamps them."""
    return FINE_NS if st.st_ctime_ns % 1_000_000 else COARSE_NS


def _stat(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]


def _entries(root: Path) -> Any:
    """(rel, DirEntry) of every file and symlink under `root`, by the listing's own file types (no stat), never
    following a link, never into a `.git`."""
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            with os.scandir(os.path.join(root, prefix) if prefix else root) as it:
                items = list(it)
        except OSError:
            continue  # unreadable: what git's status then says comes up for review
        for item in items:
            try:
                if item.is_dir(follow_symlinks=False):
                    if item.name not in SKIPPED:
                        stack.append(prefix + item.name + "/")
                elif item.is_file(follow_symlinks=False) or item.is_symlink():
                    yield prefix + item.name, item
            except OSError:
                continue


def _walk(root: Path) -> Any:
    """(rel, lstat) of every file and symlink under `root` (`_entries`)."""
    for rel, item in _entries(root):
        try:
            yield rel, item.stat(follow_symlinks=False)
        except OSError:
            continue


def _content(root: Path, rel: str, st: os.stat_result) -> bytes | None:
    """The bytes the baseline would hold for `rel` (a symlink: its target), or None when it cannot be read."""
    full = os.path.join(root, rel)
    try:
        if stat.S_ISLNK(st.st_mode):
            return os.fsencode(os.readlink(full))
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    return read_open(fd)


def take(root: Path, at_least: int = 0) -> Look | None:
    """The first look at the folder (see the module's docstring); recently modified files hashed as well. None when
    it holds fewer than `at_least` files (nothing hashed)."""
    taken = time.time_ns()
    seen = list(_walk(root))
    if len(seen) < at_least:
        return None
    files: dict[str, list[Any]] = {}
    for rel, st in seen:
        digest = None
        if max(st.st_mtime_ns, st.st_ctime_ns) >= taken - RACY_NS:
            # A big file just written is not read at the look (it would make the open as slow as before): its
            # digest matches nothing, so it is left out of the baseline and comes up for review.
            data = _content(root, rel, st) if st.st_size <= RACY_READ_MAX else None
            digest = hashlib.sha256(data).hexdigest() if data is not None else "not read at the look"
        files[rel] = [*_stat(st), digest]
    return Look(taken, files)


def glance(root: Path, at_least: int = 0) -> Look | None:
    """What the first open records (`begin`): the time and every file's name, from the folder's listing alone (no
    stat, no read: a tenth of `take`'s cost at 10,000 files). What the baseline may trust of it is in `Look`'s
    docstring; a file touched within `glance_window` before the glance is left out of the baseline, for review. None when
    the folder holds fewer than `at_least` files."""
    taken = time.time_ns()
    names = [rel for rel, _ in _entries(root)]
    return Look(taken, dict.fromkeys(names)) if len(names) >= at_least else None


def _glance_bytes(look: Look) -> bytes:
    return json.dumps({"taken_ns": look.taken_ns, "names": list(look.files)}, separators=(",", ":")).encode("ascii")


def load(state: Path) -> Look | None:
    """The look recorded in a state folder whose baseline is not written yet (None: none, or unreadable)."""
    try:
        return Look.from_bytes((state / MANIFEST).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return Look(0, {})  # unreadable: nothing is trusted as there before memtui; every file comes up for review


def pending(store: Any) -> bool:
    """Is the first look taken and the baseline not in place yet?"""
    return bool(store.places.recording())


def written(places: Any) -> None:
    """The baseline is committed: the look is done with (history counts as there from now: `Places.has_git`)."""
    try:
        os.unlink(places.state / MANIFEST)
    except FileNotFoundError:
        pass


def begin(store: Any) -> str | None:
    """Take the first look at a large folder without history and start writing its baseline in the background.
    While the baseline is pending: "taken" (the look was taken by this call: nothing differs from it yet) or
    "pending" (taken before); None when there is history, the folder is small (`ensure_history` commits it at
    once), or memtui keeps no history of its own for it."""
    places = store.places
    if not places.own_history or store.has_git or not store.root.is_dir():
        return None
    record = places.state / MANIFEST
    state = "pending"
    if not os.path.lexists(record):
        with store.lock():
            if store.has_git:
                return None
            if not os.path.lexists(record):
                look = glance(store.root, DEFER_AT)
                if look is None:
                    return None
                from memtui.core.storage.folder_state import atomic_write

                store.state_ready()
                atomic_write(record, _glance_bytes(look))
                state = "taken"
    _run_in_background(store)
    return state


def _run_in_background(store: Any) -> None:
    """Start a process that writes the baseline (`FolderStore.ensure_history`) unless one is running for this
    folder (its pid recorded)."""
    runner = store.places.state / RUNNER
    try:
        pid = int(runner.read_text(encoding="ascii").strip())
        os.kill(pid, 0)
        return  # running (or a process of that pid is: then `ensure_history` writes it when it is needed)
    except (OSError, ValueError):
        pass
    import subprocess
    import sys

    try:
        proc = subprocess.Popen([sys.executable, "-c",
                                 "import sys; from memtui.core.storage.folder import FolderStore; "
                                 "FolderStore(sys.argv[1]).ensure_history()", str(store.root)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True)
    except OSError:
        return  # written in process when history is first needed
    try:
        runner.write_text(f"{proc.pid}\n", encoding="ascii")
    except OSError:
        pass


def _private(rel: str) -> bool:
    """memtui's own names and a writer's temporary files, which git's status leaves out too (folder._status_paths)."""
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith((STATE_DIR + "/", ".git/")) or rel == AUDIT_FILE or (name.startswith(".")
                                                                                and name.endswith(".tmp"))


def changes_since_look(store: Any, paths: Any = None) -> list[Any]:
    """While the baseline is pending: the files that differ from the first look or were not there (as new files:
    nothing of theirs is trusted as there before memtui), each with its bytes now, and the files the look saw that
    are gone (`gone_change`). `paths`: only those."""
    from memtui.core.storage.store import ExternalChange

    look = load(store.places.state) or Look(0, {})
    wanted = None if paths is None else set(paths)
    out = []
    present = set()
    for rel, st in _walk(store.root):
        present.add(rel)
        if (wanted is not None and rel not in wanted) or _private(rel):
            continue
        if look.same(rel, st) and look.digest(rel) is None:
            continue
        data = _content(store.root, rel, st)
        if data is None or (look.same(rel, st) and hashlib.sha256(data).hexdigest() == look.digest(rel)):
            continue
        out.append(ExternalChange(rel, None, data))
    for rel in look.files.keys() - present:
        if (wanted is None or rel in wanted) and not _private(rel) and not os.path.lexists(store.root / rel):
            out.append(gone_change(rel, look.files[rel] or [None]))
    return sorted(out, key=lambda c: c.path)


def gone_change(rel: str, seen: list[Any]) -> Any:
    """The deletion of `rel`, which the first look saw (`seen`: its size first) and no one read before it was
    deleted: `before` stands empty, and the note says why nothing can put it back."""
    from memtui.core.storage.store import ExternalChange

    return ExternalChange(rel, b"", None, note=(
        f"deleted before memtui recorded it: memtui saw {rel}{'' if seen[0] is None else f' ({seen[0]} bytes)'} at "
        "its first look at the folder, but "
        "it was deleted before its bytes were read into history, so memtui cannot put it back (reject is refused). "
        "Approve to agree it is gone; to keep it, restore it from a copy of your own"))


def record_gone(places: Any, look: Look, root: Path) -> None:
    """At the baseline, before the look is removed: the files the look saw that are gone now (never read: not in
    history), kept in the state folder so their deletion stays listed for review (`gone_changes`)."""
    from memtui.core.storage.folder_state import atomic_write

    gone = {rel: (look.files[rel] or [None])[:2] for rel in look.files
            if not _private(rel) and not os.path.lexists(os.path.join(root, rel))}
    if gone:
        atomic_write(places.state / GONE, json.dumps({**_gone(places), **gone}).encode())


def _gone(places: Any) -> dict[str, list[Any]]:
    try:
        raw = json.loads((places.state / GONE).read_bytes())
        return {str(k): list(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, TypeError):
        return {}


def gone_changes(store: Any, paths: Any = None) -> list[Any]:
    """The deletions recorded at the baseline (`record_gone`) still to review: the file still absent and not in
    history since (a file made again, or approved, is git's to list)."""
    places = store.places
    if places is None or not places.own_history:
        return []
    gone = _gone(places)
    wanted = None if paths is None else set(paths)
    return [gone_change(rel, seen) for rel, seen in sorted(gone.items())
            if (wanted is None or rel in wanted) and not os.path.lexists(store.root / rel)
            and store.committed(rel) is None]


def unread_gone(store: Any, rel: str) -> bool:
    """Is `rel` a deletion recorded at the baseline, of bytes memtui never read (`gone_changes`)? A baseline still
    pending is written first (a decision needs history): it is what records them."""
    store.ensure_history()
    return any(c.path == rel for c in gone_changes(store, (rel,)))


def settle_gone(store: Any, rel: str) -> None:
    """A person approved the deletion of `rel`: no longer listed."""
    from memtui.core.storage.folder_state import atomic_write

    gone = _gone(store.places)
    if gone.pop(rel, None) is not None:
        atomic_write(store.places.state / GONE, json.dumps(gone).encode())
