"""The file watches running in this process, as threads."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator


def watches() -> list[threading.Thread]:
    """One thread per folder watch: memtui's own inotify watch's (`memtui.core.storage.inotify_watch`), or a watchdog
    emitter's (where watchdog's Observer watches). watchdog is not imported for it when no code here did."""
    import sys

    api = sys.modules.get("watchdog.observers.api")
    emitter = getattr(api, "EventEmitter", None)
    return [t for t in threading.enumerate() if t.is_alive() and (
        t.name == "memtui-folder-watch" or (emitter is not None and isinstance(t, emitter)))]


class Heard:
    """A raw subscriber of a watch (`Changes.subscribe(raw=True)`): every path it told, and how many times it said
    "everything"."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.everything = 0

    def __call__(self, change: Any) -> None:
        self.paths.extend(change.paths)
        self.everything += change.everything


@contextmanager
def hearing(hub: Any) -> Iterator[Heard]:
    """What `hub`'s watch tells, heard while the block runs."""
    heard = Heard()
    off = hub.subscribe(heard, raw=True)
    try:
        yield heard
    finally:
        off()
