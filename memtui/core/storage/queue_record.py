"""Which queue file memtui last wrote for each proposal of a folder memory, kept outside the memory.

The seal on a queue file (memtui/core/writing/proposals.py) says this person's memtui wrote those bytes; it cannot say
they are the latest it wrote, nor that they were written for this memory. So a queue file's earlier sealed version, put
back after a person rejected it, was listed as pending again, and the same person's sealed proposal from another
memory, copied into this queue, was approvable here. This record names, per proposal id, the hash of the bytes memtui
last wrote for it in this memory. It is kept in the person's state folder beside the memory
(`$XDG_STATE_HOME/memtui/memories/<name>-<hash>/queue.log`, memtui.core.storage.places), where an agent that can write
the memory folder does not write, and it only grows: one line per queue write.

A memory opened the first time with this record (made before it, or moved) records the queue files it holds then:
trust on first use, as the seal itself began.
"""

from __future__ import annotations

import os
from pathlib import Path

RECORD_FILE = "queue.log"


def _digest(data: bytes) -> str:
    from memtui.core.basics.digests import sha256

    return sha256(data).hexdigest()[:32]


class QueueRecord:
    """The record of one folder memory's queue writes: `wrote` after each, `vouches` before trusting one."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / RECORD_FILE
        self._known: dict[str, str] = {}
        self._read = 0  # bytes of the record read into `_known`
        self._ino = -1

    def exists(self) -> bool:
        return self.path.is_file()

    def wrote(self, pids_and_bytes: list[tuple[str, bytes]]) -> None:
        """Record that memtui wrote these queue files' bytes (appended whole lines: O_APPEND, one write)."""
        from memtui.core.storage.places import _make_private

        _make_private(self.path.parent)
        lines = "".join(f"{pid} {_digest(data)}\n" for pid, data in pids_and_bytes).encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, lines)
        finally:
            os.close(fd)

    def last(self) -> dict[str, str]:
        """Proposal id -> the hash of the bytes memtui last wrote for it. The record only grows: what was added since
        the last read is read (a flood of 100,000 queue writes is not parsed again on every listing)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        known, read = self._known, self._read
        if st.st_ino != self._ino or st.st_size < read:  # replaced or cut: read whole again
            known, read = {}, 0
        if st.st_size > read:
            with open(self.path, "rb") as f:
                f.seek(read)
                chunk = f.read(st.st_size - read)
            whole = chunk[:chunk.rfind(b"\n") + 1]  # a line being appended is read next time, whole
            for raw in whole.splitlines():
                pid, _, digest = raw.decode("ascii", "replace").strip().partition(" ")
                if pid and digest:
                    known[pid] = digest
            read += len(whole)
        self._known, self._read, self._ino = known, read, st.st_ino
        return known

    def vouches(self, pid: str, data: bytes) -> str | None:
        """Why the queue file `data` of `pid` is not the one memtui last wrote here; None when it is."""
        last = self.last().get(pid)
        if last is None:
            return ("its queue file was never written by memtui in this memory (copied from another memory, or "
                    "put there by hand)")
        if last != _digest(data):
            return ("its queue file is not the version memtui last wrote (an earlier one put back, after a decision "
                    "or an edit)")
        return None
