"""A memory opened to read it: its files, their reviewed versions, its config, layout and live scratch notes.

`Memory` (the write path) is one of these; `memtui context` and the SessionStart hook use one directly, so a
session's start loads none of the write path's modules (planning, proposals, dedupe) and no git library.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memtui.core.basics import clock
from memtui.core.grammar.config import Config, reviewed
from memtui.core.grammar.document import Document
from memtui.core.storage.store import Store

if TYPE_CHECKING:
    from memtui.core.grammar.layout import Layout

MEMORY_FILE = "MEMORY.md"


class MemoryReader:
    def __init__(self, root: str | os.PathLike[str] | Store) -> None:
        if isinstance(root, Store):
            self.store = root
        else:
            from memtui.core.storage.folder import FolderStore

            self.store = FolderStore(root)
        self._config: tuple[tuple[str | None, str | None], Config] | None = None

    @property
    def location(self) -> str:
        return self.store.location

    @property
    def config(self) -> Config:
        """The root's settings as last committed (an edit written past memtui is not in effect until a person
        commits it: `Config.pending` says so), parsed once per change."""
        text, pending = self.store.reviewed_config()
        cached = self._config
        if cached is None or cached[0] != (text, pending):
            cached = self._config = ((text, pending), reviewed(text, pending, self.location))
        return cached[1]

    def read_text(self, rel: str) -> str | None:
        return decoded(rel, self.store.read(self.store.check_path(rel)))

    def base_text(self, rel: str) -> str | None:
        """The text a write to `rel` is planned and reviewed against: the committed version where the store keeps
        history (a pending external change on disk is not part of it), else the file as it is."""
        return decoded(rel, self.store.review_base(self.store.check_path(rel)))

    def shown_text(self, rel: str) -> str | None:
        """The text `show` and an agent's read serve: the reviewed version where the store's bytes past it are
        nobody's reviewed work (`Store.shows_recorded`: a raw SET on Redis, a crashed writer's unrecorded write),
        else the file as it is (a folder's working copy is the person's own)."""
        if self.store.shows_recorded:
            return self.base_text(rel)
        return decoded(rel, self.store.served(self.store.check_path(rel)))

    def base_bytes(self, rels: list[str]) -> dict[str, bytes | None]:
        """The reviewed bytes of each of `rels` (checked paths), fetched together: a reader that loads several
        files asks the store once (a folder starts one git for them all)."""
        return self.store.review_bases([self.store.check_path(rel) for rel in rels])

    def document(self, rel: str = MEMORY_FILE) -> Document:
        return Document(self.read_text(rel) or "", self.store.check_path(rel))

    def files(self) -> list[str]:
        return self.store.list_files()

    def layout(self) -> Layout:
        """Which files of this root are core, logs, scratch, archive or topic files (memtui/core/grammar/layout.py)."""
        from memtui.core.grammar.layout import detect

        return detect(self.location, self.config)

    def log_dir(self) -> str:
        """`log/`, or `memory/` in an OpenClaw workspace that has no `log/` (memtui/core/grammar/layout.py)."""
        return self.layout().log_dir or "log"

    def live_scratch(self) -> list[tuple[str, int]]:
        """(path, expiry ms) of scratch notes that have not expired, soonest first."""
        now_ms = int(clock.now().timestamp() * 1000)
        return sorted((t for t in self._scratch_notes() if t[1] > now_ms), key=lambda t: (t[1], t[0]))

    def _scratch_notes(self) -> list[tuple[str, int]]:
        out = []
        for rel in self.store.list_files("scratch/**/*.md"):
            if not rel.startswith("scratch/"):
                continue
            stem = rel.rsplit("/", 1)[-1].split("-", 1)[0]
            if ascii_digits(stem):
                out.append((rel, int(stem)))
        return out


def ascii_digits(text: str) -> bool:
    """ASCII digits only: "²".isdigit() is true, but int("²") fails."""
    return text.isascii() and text.isdigit()


def decoded(rel: str, data: bytes | None) -> str | None:
    """`data` as UTF-8 text; a file that is not is refused with what to do about it."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        from memtui.core.grammar.update import Refused
        from memtui.core.storage.readable import not_utf8

        raise Refused(not_utf8(rel, data) or f"{rel} is not UTF-8 text") from None
