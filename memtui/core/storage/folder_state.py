"""memtui's own state of a folder memory: the audit log, the review queue, intents, undo points, rejected bytes, the
config and the memory lock. One job: keeping memtui's bookkeeping, wherever `memtui.core.storage.places` puts it (inside
the folder for a memory `memtui init` made, beside it for any other), never the memory's files or its history.
`FolderStore` composes it (`store.kept`) with the files and the git history.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from memtui.core.grammar.paths import PathRefused, clean_rel
from memtui.core.storage.gitobjects import removed_on_failure
from memtui.core.storage.places import PlaceRefused, Places
from memtui.core.storage.store import LockTimeout, StoreError

# The change being applied right now (see Memory._apply): finished or undone after a crash.
INTENT_FILE = "intent.json"
# Hard links to the files a write replaces, kept until its commit is made (see FolderStore.undo_point).
UNDO_DIR = "undo"
QUEUE_ID = re.compile(r"^p-[0-9]{1,12}$")


class FolderState:
    """memtui's state for the folder memory at `root`, kept where `places` says."""

    def __init__(self, places: Places, root: Path) -> None:
        self.places = places
        self.root = root

    @property
    def state(self) -> Path:
        return self.places.state

    def ready(self) -> Path:
        """The state folder, made if missing (beside: mode 0700 and its folder's path recorded; one that is not this
        user's own is refused, see `places.check_state`)."""
        try:
            self.places.ready()
        except PlaceRefused as exc:
            raise StoreError(str(exc)) from None
        self.state.mkdir(parents=True, exist_ok=True)
        return self.state

    # lock -------------------------------------------------------------------------------------------------
    @contextmanager
    def process_lock(self, timeout: float) -> Iterator[None]:
        """flock on .memtui/lock; the holder's pid is written in it as a hint for `memtui doctor`."""
        fd = own_lock_fd(self.ready() / "lock", 0o644)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() > deadline:
                        raise LockTimeout(
                            f"the memory at {self.root} is locked by another process for over {timeout:.0f}s"
                        ) from None
                    time.sleep(0.005)
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError:
                pass  # the pid is only a hint for `memtui doctor`; a full disk must not stop the lock
            try:
                yield
            finally:
                # An empty lock file means "free"; a pid left in it names a holder that died (see doctor).
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # audit ------------------------------------------------------------------------------------------------
    def audit_append(self, record: dict[str, Any]) -> None:
        import json  # here, not at the top: readers such as `memtui context` write no audit

        line = (json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n").encode()
        if self.places.beside:
            self.ready()
        fd = _audit_for_append(self.places.audit)
        try:
            # A writer killed mid-append leaves a line with no newline; start on a fresh line so this record is
            # not glued to the torn one (and lost with it). `memtui doctor --fix` sets the torn bytes aside.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def audit_records(self) -> Iterator[dict[str, Any]]:
        import json
        from memtui.core.basics.jsontext import loads

        fd = audit_for_reading(self.places.audit)
        if fd is None:
            return
        with open(fd, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line from a crash; `memtui doctor` reports it

    def audit_since(self, cursor: Any, backlog: int | None = None) -> tuple[list[dict[str, Any]], Any]:
        """Tails memory-log.jsonl by byte offset (the cursor): only the bytes added since are read, and with a
        `backlog` only the last 64 KB; a line still being written waits for the next call."""
        import json
        from memtui.core.basics.jsontext import loads

        offset = cursor if isinstance(cursor, int) else 0
        fd = audit_for_reading(self.places.audit)
        if fd is None:
            return [], 0
        try:
            with open(fd, "rb") as f:
                size = f.seek(0, 2)
                if backlog is not None:
                    start = max(0, size - 64 * 1024)
                elif size < offset:
                    start = 0  # the log was replaced or truncated: read it again from the top
                else:
                    start = offset
                f.seek(start)
                data = f.read(size - start)
        except FileNotFoundError:
            return [], 0
        end = data.rfind(b"\n") + 1
        lines = data[:end].splitlines()
        if backlog is not None and start > 0 and lines:
            lines = lines[1:]  # the first line read from the middle of the log is a piece of one
        records = []
        for line in lines:
            try:
                record = loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(record, dict):
                records.append(record)
        return (records[-backlog:] if backlog is not None else records), start + end

    # queue ------------------------------------------------------------------------------------------------
    @property
    def queue_dir(self) -> Path:
        return self.state / "queue"

    def queue_folder(self) -> Path:
        """The queue folder, made if missing; refused (StoreError) when it or `.memtui` is no folder of the memory's
        own: a symlink an agent planted there (to a folder outside the root) would have every number and proposal
        written through it."""
        if self.places.beside:
            self.ready()
        _own_folders((self.state, self.queue_dir), "refused to queue through {}: it is no folder of this memory's "
                     "own (a symlink?); run `memtui doctor`")
        return self.queue_dir

    def own_folder(self, name: str) -> Path:
        """The folder `name` under the state folder, made if missing; refused (StoreError) when it or the state folder
        is no folder of the memory's own. In a memory memtui made they are in the folder an agent writes: a symlink
        planted as `.memtui/rejected` (to ~/.config/autostart) would have a rejected file kept there, under its own
        name and with its own bytes, where the desktop runs it."""
        self.ready()
        parts = name.split("/")
        _own_folders([self.state] + [self.state.joinpath(*parts[:k]) for k in range(1, len(parts) + 1)],
                     "refused to keep anything in {}: it is no folder of this memory's own (a symlink?); remove it "
                     "and try again, or run `memtui doctor`")
        return self.state.joinpath(*parts)

    def queue_save(self, pid: str, data: bytes) -> None:
        if not QUEUE_ID.match(pid):  # the id names the file: only memtui's own numbering may
            raise StoreError(f"not a proposal id: {pid!r}; nothing was queued")
        self.queue_folder()
        atomic_write(self.queue_dir / f"{pid}.json", data)

    def queue_load(self, pid: str) -> bytes | None:
        """A queue file's bytes; None when there is none, or it is no regular file that can be read (a FIFO would
        block the review list, a symlink loop or an unreadable file would end it): the list reports it."""
        try:
            return _regular_bytes(self.queue_dir / f"{clean_rel(pid)}.json")
        except (OSError, PathRefused):
            return None

    def queue_read(self, pids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """`queue_load` for many: the folder opened once and each file by its name in it (a path built and checked
        for each of 100,000 proposals was half the time of reading them). The same files as `queue_load` reads:
        regular files only, opened without blocking, through a link."""
        try:
            folder = os.open(self.queue_dir, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            yield from ((pid, None) for pid in pids)
            return
        try:
            for pid in pids:
                yield pid, _queue_bytes(folder, pid) if _QUEUE_NAME.match(pid) else self.queue_load(pid)
        finally:
            os.close(folder)

    def queue_ids(self) -> list[str]:
        # Names only (a glob made a Path of each: 0.5 s for 100,000 queue files, listing them 0.05 s); dot files
        # (`.seq`, a temp file) are not proposals, as the glob had it.
        try:
            names = os.listdir(self.queue_dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(n[:-5] for n in names if n.endswith(".json") and not n.startswith("."))

    def queue_stamps(self) -> dict[str, tuple[int, ...]]:
        """Each queue file's (inode, size, mtime, ctime), as `queue_load` would read it (through a link). Queue
        files are replaced whole by a rename (a new inode), and an edit in place moves the ctime, which no one
        can set back; a file that cannot be stat'ed gets a stamp of its own, so it is read (and reported)."""
        try:
            it = os.scandir(self.queue_dir)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        out: dict[str, tuple[int, ...]] = {}
        with it:
            for d in it:
                if d.name.endswith(".json") and len(d.name) > 5:
                    try:
                        st = d.stat()
                        out[d.name[:-5]] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                    except OSError:
                        out[d.name[:-5]] = ()
        return out

    def intent_save(self, data: bytes | None) -> None:
        path = self.state / INTENT_FILE
        if data is None:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
        else:
            self.ready()
            atomic_write(path, data)

    def intent_load(self) -> bytes | None:
        """The intent file's bytes, read only from a regular file with one name: a symlink or hard link planted as
        `intent.json` (to ~/.ssh/id_ed25519) was read as the person and set aside, copied, into `rejected/` in the
        folder; a FIFO hung every write. Such a name is removed, never read."""
        path = self.state / INTENT_FILE
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            fd = None
        if fd is not None and os.fstat(fd).st_nlink == 1:
            return read_open(fd)  # None for anything but a regular file
        if fd is not None:
            os.close(fd)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return None

    def keep_rejected(self, rel: str, data: bytes, stamp: str) -> str | None:
        name = f"{stamp}-{rel.replace('/', '__')}"
        if len(name.encode()) > 180:  # a deep path, or a name made visible (3 bytes a symbol), passes NAME_MAX
            from memtui.core.basics.digests import sha256

            digest = sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
            name = f"{name.encode()[:160].decode('utf-8', 'ignore')}-{digest}"
        dest = self.own_folder("rejected") / name
        atomic_write(dest, data)
        return str(dest.relative_to(self.root)) if self.places.inside else str(dest)

    def config_text(self) -> str | None:
        try:
            return (self.state / "config.toml").read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def set_config(self, text: str) -> None:
        atomic_write(self.ready() / "config.toml", text.encode("utf-8"))


def atomic_write(path: Path, data: bytes, *, sync_dir: bool = True, sync_file: bool = True) -> None:
    """Write via a temp file in the same folder, fsync, rename, fsync the folder: old or new, never torn.

    `sync_dir=False` leaves the folder's fsync to a write that follows in the same folder; `sync_file=False` is for
    a file whose loss in a crash costs nothing (the caller says why)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with removed_on_failure(tmp):
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if sync_file:
                os.fsync(f.fileno())
        try:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    if not sync_dir:
        return
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


# Bytes of git index past which a store's first commit leaves the edit to git rather than walking the index once in
# Python (~1 µs an entry, where git's process costs ~3 ms and then ~0.5 µs an entry): about 5,000 entries.


def _put_floor(seq: Path, n: int) -> None:
    """`.seq` made to hold `n`: rewritten in place when it is a regular file with no other name (never through a
    symlink: O_NOFOLLOW; a FIFO with no reader fails to open without blocking), else replaced by a new file, so
    bytes meant for the floor never land in a file it is linked to. The new number is never shorter than one
    `_seq_floor` read; a crash between the write and the truncation leaves a number `_seq_floor` reads as no
    floor, which costs only a longer probe."""
    data = b"%d\n" % n
    try:
        fd = os.open(seq, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        fd = None
    if fd is not None:
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                os.pwrite(fd, data, 0)
                os.ftruncate(fd, len(data))
                return
        finally:
            os.close(fd)
    atomic_write(seq, data, sync_dir=False, sync_file=False)


def _seq_floor(seq: Path) -> int:
    """The number `.seq` holds, 0 when it is missing, not a regular file (a FIFO would block the read), or not
    plain ASCII digits below the ids' 12-digit bound (a negative, huge or non-ASCII number would make an id
    `queue_save` refuses, for every proposal after it): the probe above the floor finds a free number anyway."""
    try:
        fd = os.open(seq, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return 0
    try:
        st = os.fstat(fd)
        text = os.read(fd, 64).strip() if stat.S_ISREG(st.st_mode) else b""
    except OSError:
        text = b""
    finally:
        os.close(fd)
    return int(text) if text.isdigit() and len(text) < 12 else 0


_QUEUE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def _queue_bytes(folder: int, pid: str) -> bytes | None:
    """`_regular_bytes` of `pid`'s queue file in the open `folder`; None where it is no regular file to read."""
    try:
        fd = os.open(f"{pid}.json", os.O_RDONLY | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    return read_open(fd)


def read_open(fd: int) -> bytes | None:
    """All of the open file `fd` when it is a regular file, else (a FIFO, a device, a read that failed) None;
    `fd` is closed either way."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _regular_bytes(path: Path) -> bytes | None:
    """A regular file's bytes; None for anything else. Opened without blocking: an agent may put a FIFO under a
    tracked name (git lists it as modified), and a plain open of one waits for a writer for ever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return f.read()


def served_bytes(path: Path, rel: str, undo: Path, committed: Callable[[], bytes | None]) -> bytes | None:
    """The bytes of the file at `path` (memory path `rel`) to hand out (`show`, an agent's read, lint, blame), or
    None when it is missing or not a regular file. A regular file with another name is refused: a hard link
    planted in the folder may be a file outside it (~/.ssh/id_rsa, another project's .env), whose bytes would
    leave through memtui to whoever may write the folder but not read that file. Not another name: memtui's own
    undo link of a write under way (in `undo`, the file's only other name), and not a refusal: bytes that are the
    file's `committed` version (a `cp -al` snapshot of the folder tells nothing that is not memory already)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        data = f.read()
    if st.st_nlink > 1 and not _undo_name(undo, st) and not _is_committed(committed, data):
        raise PathRefused(
            f"{rel!r} is a hard link ({st.st_nlink} names for one file): it may be a file outside the memory, so "
            "memtui does not read it out. If it is yours, make it a file of its own: "
            f"cp --remove-destination \"$(realpath {rel})\" {rel}")
    return data


def _undo_name(undo: Path, st: os.stat_result) -> bool:
    """Is the file's one other name memtui's undo link (`undo_point`, a write under way)? Exactly two names: the
    state folder may be inside the memory, where a third name (the file outside) can be linked in too."""
    if st.st_nlink != 2:
        return False
    try:
        with os.scandir(undo) as it:
            for item in it:
                other = item.stat(follow_symlinks=False)
                if (other.st_ino, other.st_dev) == (st.st_ino, st.st_dev):
                    return True
    except OSError:
        pass
    return False


def _is_committed(committed: Callable[[], bytes | None], data: bytes) -> bool:
    try:
        return committed() == data
    except (OSError, StoreError, ValueError):
        return False


# The audit log is opened with no symlink followed and written only when it is a regular file with one name. In a
# memory memtui made it sits in the folder an agent writes: a symlink or hard link planted under its name (to
# ~/.bashrc, say) would have every record appended there, a refused write's text with it (`$(…)` in a JSON string
# is a command to a shell reading the line).
_AUDIT_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _audit_for_append(path: Path) -> int:
    """A descriptor to append to the audit log at `path`. Anything but a regular file of its own under that name (a
    symlink, a hard link, a FIFO) is set aside, renamed to `memory-log.jsonl.set-aside-<ns>` (a link moved is the
    link, never what it names), and a new log started in its place."""
    try:
        fd = os.open(path, _AUDIT_FLAGS, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EMLINK):
            raise
        fd = None
    if fd is not None:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            return fd
        os.close(fd)
    os.rename(path, path.with_name(f"{path.name}.set-aside-{time.time_ns()}"))
    return os.open(path, _AUDIT_FLAGS | os.O_EXCL, 0o644)


def audit_for_reading(path: Path) -> int | None:
    """A descriptor to read the audit log at `path`, or None: missing, or not a regular file of its own (a link an
    agent planted there is no record of memtui's, and a FIFO would never answer)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
        return fd
    os.close(fd)
    return None


def own_lock_fd(path: Path, mode: int) -> int:
    """A descriptor of the lock file at `path`, made if missing, and only ever a regular file with one name. The
    lock is truncated and written (its holder's pid): a symlink or hard link planted under its name (in `.memtui/`,
    which an agent may write) would have any file of the person's cut to nothing. Such a name is removed (the link
    goes, never what it names) and a lock of memtui's own made in its place."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    for _ in range(8):
        try:
            fd: int | None = os.open(path, flags, mode)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO):
                raise
            fd = None
        if fd is not None:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                return fd
            os.close(fd)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    raise StoreError(f"could not make a lock file of memtui's own at {path}: something keeps putting another there")


def _own_folders(folders: Any, refused: str) -> None:
    """Each of `folders` in turn made if missing, then refused (StoreError, `refused` naming it) unless it is a real
    folder, not a symlink or anything else planted under its name."""
    for folder in folders:
        try:
            os.mkdir(folder)
        except FileExistsError:
            pass
        except OSError as exc:
            raise StoreError(f"could not make {folder}: {exc}") from None
        try:
            st = os.lstat(folder)
        except OSError as exc:
            raise StoreError(f"could not reach {folder}: {exc}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise StoreError(refused.format(folder))
