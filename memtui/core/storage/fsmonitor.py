"""The change journal: a watching process records what changed under a memory root, so a cold search need not stat.

Modelled on git's fsmonitor. A process that watches the folder (the app's search, `memtui index --watch`) holds an
exclusive lock on `.memtui/index.sqlite-watcher` for as long as it lives and appends every changed path to
`.memtui/index.sqlite-changes`, whose first line names the journal (a random id, new each time a watcher starts). A
reader's token is (journal id, byte offset): "what changed since T" is the lines after the offset.

Correctness does not rest on timing. The reader first proves the watcher alive (the lock cannot be taken: the
kernel drops a dead process's lock, so there is no stale heartbeat to trust), then drops a cookie file into
`.memtui/index.sqlite-cookies/` and waits for the watcher to journal it: file events reach the watcher in order, so every
change made before the cookie is journaled before it. With no live watcher, no cookie seen in time, a journal
that is not the token's (the watcher restarted; changes may have been missed while it was down), or a change
the watcher cannot name file by file (a folder created, moved or deleted), the answer is "walk everything".
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from pathlib import Path
from typing import Iterable

from memtui.core.basics.jsontext import loads

STATE_DIR = ".memtui"
JOURNAL = "index.sqlite-changes"  # the names match .gitignore's `.memtui/index.sqlite*`
LOCK = "index.sqlite-watcher"
COOKIES = "index.sqlite-cookies"
HEADER = "memtui-journal 1 "
MAX_JOURNAL_BYTES = 1024 * 1024  # then a new journal starts (readers walk once)
COOKIE_WAIT = 1.0  # seconds a reader waits for the watcher to journal its cookie before walking instead

Token = str  # "journal-id:offset"


def _state(root: Path) -> Path:
    from memtui.core.storage.places import state_of

    return state_of(root)


def cookie_folder(root: Path) -> int:
    """A descriptor of the memory's cookie folder, made if missing, reached without following a link: the watcher
    follows none, so a cookie made through a planted `.memtui` or cookie-folder link would never be heard (each
    barrier would wait its whole time) and would be a file written outside the memory."""
    from memtui.core.storage.places import beside

    if beside(root):
        # A cookie is heard only inside the watched folder, and nothing of memtui's is written into a folder it
        # keeps beside: no barrier there, so readers walk (as for a read-only memory).
        raise OSError(f"no cookie folder: {root} keeps memtui's state beside it")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    fd = os.open(root, flags)
    try:
        for part in (STATE_DIR, COOKIES):
            try:
                os.mkdir(part, dir_fd=fd)
            except FileExistsError:
                pass
            inner = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


class Publisher:
    """The watcher's side: takes the lock, starts a new journal, appends changes. One per root at a time."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self._lock = threading.Lock()
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._written = 0
        self.journal_id = ""

    def start(self) -> bool:
        """Take the lock and start a journal; False when another watcher already publishes for this root."""
        from memtui.core.storage.places import beside

        if beside(self.root):
            return False  # no cookies there (`cookie_folder`): a journal no reader could prove fresh is no use
        from memtui.core.storage.folder_state import own_lock_fd
        from memtui.core.storage.store import StoreError

        state = _state(self.root)
        try:
            (state / COOKIES).mkdir(parents=True, exist_ok=True)
            fd = own_lock_fd(state / LOCK, 0o600)  # never a link planted there
        except (OSError, StoreError):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        try:
            self._new_journal()
        except OSError:
            self.stop()
            return False
        return True

    def _new_journal(self) -> None:
        state = _state(self.root)
        self.journal_id = os.urandom(8).hex()
        tmp = state / f"{JOURNAL}.{self.journal_id}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        head = (HEADER + self.journal_id + "\n").encode()
        try:
            os.write(fd, head)
            os.replace(tmp, state / JOURNAL)  # fails where an agent put a folder at the journal's name
        except OSError:
            os.close(fd)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._written = fd, len(head)

    def _append(self, lines: Iterable[str]) -> None:
        data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
        with self._lock:
            if self._fd is None:
                return
            try:
                if self._written + len(data) > MAX_JOURNAL_BYTES:
                    self._new_journal()
                os.write(self._fd, data)  # one write of whole lines, O_APPEND: a reader never sees half a line end
                self._written += len(data)
            except OSError:
                self._stop()  # readers see no watcher and walk (already under the lock, which is not re-entrant)

    def changed(self, paths: Iterable[str]) -> None:
        self._append("p " + json.dumps(p) for p in paths)

    def everything(self) -> None:
        """A change that cannot be named file by file: readers walk."""
        self._append(["*"])

    def cookie(self, name: str) -> None:
        self._append(["c " + json.dumps(name)])

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock: readers walk from now on
            self._lock_fd = None


def watcher_alive(root: Path) -> bool:
    """Does a live process hold the watcher lock of `root`?"""
    try:
        fd = os.open(_state(root) / LOCK, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock if it was taken
    return False


def changes_since(root: str | os.PathLike[str], token: Token | None) -> tuple[Token | None, set[str] | None]:
    """(new token, paths changed since `token`), or (new token, None) when every file must be re-checked; the new
    token is None when no watcher vouches (then walk, and keep no token)."""
    root = Path(root).expanduser().absolute()
    if not watcher_alive(root):
        return None, None
    name = os.urandom(8).hex()
    try:
        # Not through a planted link: the watcher would never hear it, and it would be a file written elsewhere.
        folder = cookie_folder(root)
    except OSError:
        return None, None
    try:
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=folder))
        except OSError:
            return None, None
        hint = token.rsplit(":", 1) if token and ":" in token else None
        try:
            found = _wait_for_cookie(root, name, hint)
        finally:
            try:
                os.unlink(name, dir_fd=folder)
            except OSError:
                pass
    finally:
        os.close(folder)
    if found is None:
        return None, None
    journal_id, lines, end = found
    new_token = f"{journal_id}:{end}"
    if not token or token.rsplit(":", 1)[0] != journal_id:
        return new_token, None
    try:
        start = int(token.rsplit(":", 1)[1])
    except ValueError:
        return new_token, None
    paths: set[str] = set()
    for offset, line in lines:
        if offset < start or line.startswith("c "):
            continue
        if line == "*" or not line.startswith("p "):
            return new_token, None
        try:
            paths.add(loads(line[2:]))
        except ValueError:
            return new_token, None
    return new_token, paths


def _wait_for_cookie(root: Path, name: str, hint: list[str] | None) -> tuple[str, list[tuple[int, str]], int] | None:
    """(journal id, [(offset, line)] up to the cookie, offset after it) once the watcher journals the cookie.
    `hint` is the reader's token: in that same journal only the lines after its offset are read."""
    wanted = "c " + json.dumps(name)
    deadline = time.monotonic() + COOKIE_WAIT
    pause = 0.0005
    while True:
        try:
            with open(_state(root) / JOURNAL, "rb") as fh:
                head = fh.readline()
                text = head.decode("utf-8", "replace").rstrip("\n")
                if not text.startswith(HEADER) or not head.endswith(b"\n"):
                    return None
                journal_id = text[len(HEADER):]
                base = len(head)
                if hint is not None and hint[0] == journal_id and hint[1].isdigit() and int(hint[1]) > base:
                    base = int(hint[1])
                fh.seek(base)
                data = fh.read()
        except OSError:
            return None
        lines: list[tuple[int, str]] = []
        offset = 0
        while offset < len(data):
            nl = data.find(b"\n", offset)
            if nl < 0:
                break
            line = data[offset:nl].decode("utf-8", "surrogateescape")
            lines.append((base + offset, line))
            offset = nl + 1
            if line == wanted:
                return journal_id, lines, base + offset
        if time.monotonic() > deadline or not watcher_alive(root):
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
