"""External changes under names memtui refuses: a person can reject them, and no such name becomes memory.

A file dropped in the folder under a name no memory file may have (a control or invisible character such as
'evil\\x1b[8m.md', git's own `.gitattributes`, a link to a protected place) is listed for review like any change
made past memtui, so the person sees it. Approving it is refused, saying why and what to do: memtui never commits
a name it refuses. Rejecting it does what rejecting any external change does: the folder goes back to the last
commit (a new file is removed, an edited one gets its committed bytes back), and the rejected bytes are kept in
`.memtui/rejected/` and the audit line. The name was refused, so nothing under it is trusted: the file is reached
one folder at a time through directory descriptors that never follow a link.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from typing import TYPE_CHECKING

from memtui.core.basics import clock
from memtui.core.basics.visible import visible
from memtui.core.grammar.paths import PathRefused, protected_name
from memtui.core.storage.store import StoreError
from memtui.core.writing import audit, journal
from memtui.core.writing.proposals import REJECTED, WriteResult

if TYPE_CHECKING:
    from memtui.core.storage.store import Store
    from memtui.core.writing.proposals import Proposal

# Names that are memtui's or git's own state, never touched even to put a folder back.
_STATE = frozenset({".git", ".memtui", "memory-log.jsonl", "git~1"})


def why_refused(store: Store, rel: str) -> str | None:
    """Why `rel` can be no memory file's name (the store's own check), or None when it can be."""
    if "\\" in rel:
        # A name as found on disk: the check reads a backslash as a folder separator (an agent's `notes\\a.md`),
        # so `a\\b.md` would be taken for `a/b.md`, and deciding it would put back or commit another file.
        return (f"its name holds a backslash, which memtui reads as a folder separator ({rel} would be read as "
                f"{rel.replace(chr(92), '/')})")
    try:
        store.check_path(rel)
    except PathRefused as exc:
        return str(exc)
    return None


def approval_refused(p: Proposal, why: str) -> WriteResult:
    """What a person is told on approving an external change under a refused name: why, and what to do."""
    return WriteResult(
        "refused", f"{p.file} cannot become memory: {why}. Nothing was committed. Reject {p.id} to put the folder "
        "back as last committed (the file's bytes are kept in .memtui/rejected/), or rename the file by hand to a "
        "plain name and approve the new name", p.id, p.file)


def reject(store: Store, p: Proposal, by: str, reason: str) -> WriteResult:
    """Reject external change `p` under a refused name: keep its bytes, record the rejection, then put the name
    back as last committed (removed when it never was). Nothing is committed: the folder returns to its commit."""
    try:
        journal.recover(store)
    except (OSError, StoreError) as exc:
        return WriteResult("refused", f"an earlier interrupted write could not be finished ({exc}); nothing was "
                           "changed", p.id, p.file)
    root = store.local_root
    if root is None:
        return WriteResult("refused", f"{p.file} is not in a folder memtui can put back; remove it with the store's "
                           "own client (it is not memory)", p.id, p.file)
    try:
        folder, name = _open_parent(str(root), p.file)
    except (PathRefused, OSError) as exc:
        return WriteResult("refused", f"{p.file} cannot be put back by memtui ({exc}); remove it by hand (it is not "
                           "memory)", p.id, p.file)
    try:
        data = _read(folder, name)
        committed = store.committed(p.file)
        stamp = clock.now().strftime("%Y%m%dT%H%M%S")
        extra: dict[str, object] = {}
        if data is not None:
            extra["content_b64"] = base64.b64encode(data).decode()
            # Kept under a name with its control characters made visible: the copy must not carry them on.
            extra["kept_at"] = store.keep_rejected(visible(p.file, newlines=False), data, stamp)
        p.status, p.decided_by, p.decided_at, p.reason = REJECTED, by, clock.now().isoformat(timespec="seconds"), reason
        # The audit line first: should the folder not be put back, the rejection is on record and can be repeated.
        store.audit_append(audit.of_proposal(p, "rejected", reason=reason, snapshot=json.loads(p.to_json()), **extra))
        if committed is None:
            _remove(folder, name)
        else:
            _write(folder, name, committed)
    except (OSError, StoreError) as exc:
        return WriteResult("refused", f"could not put {p.file} back: {exc}; remove it by hand (it is not memory)",
                           p.id, p.file)
    finally:
        os.close(folder)
    done = "removed" if committed is None else "put back as last committed"
    return WriteResult("rejected", f"{p.id} rejected: {reason} ({p.file} {done}; it is not memory)", p.id, p.file,
                       files=[p.file])


def _open_parent(root: str, rel: str) -> tuple[int, str]:
    """A descriptor of the folder holding `rel`'s last name, and that name: every folder on the way opened with
    O_NOFOLLOW (a link is refused, not followed), none of them git's or memtui's own."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise PathRefused(f"{rel!r} is not a plain relative path")
    if any(protected_name(part) for part in parts[:-1]) or parts[-1].casefold().rstrip(". ") in _STATE:
        raise PathRefused(f"{rel!r} is git's or memtui's own bookkeeping")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(os.path.realpath(root), flags)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
            if _exists(fd, ".git"):
                raise PathRefused(f"{rel!r} is inside a nested git repository")
        st = _lstat(fd, parts[-1])
        if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise PathRefused(f"{rel!r} is not a file")
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _lstat(folder: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _exists(folder: int, name: str) -> bool:
    return _lstat(folder, name) is not None


def _read(folder: int, name: str) -> bytes | None:
    """The name's bytes as git records them: a link is its target's name, never what it points at."""
    st = _lstat(folder, name)
    if st is None:
        return None
    if stat.S_ISLNK(st.st_mode):
        return os.readlink(name, dir_fd=folder).encode("utf-8", errors="surrogateescape")
    # Not blocking: the name may have become a FIFO since the check, and an open of one waits for a writer.
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{name!r} is no longer a file")
        return f.read()


def _remove(folder: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=folder)  # a link is removed itself, never what it points at
    except FileNotFoundError:
        pass


def _write(folder: int, name: str, data: bytes) -> None:
    """Replace the name with a regular file of `data` (a temp file renamed over it: old or new, never torn)."""
    tmp = f".memtui-restore-{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except FileNotFoundError:
            pass
        raise
