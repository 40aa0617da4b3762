"""The file watches running in this process, as threads."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator


def watches() -> list[threading.Thread]:
    """One watchdog emitter thread per watch (handing its events on itself, or to an Observer's thread)."""
    from watchdog.observers.api import EventEmitter

    return [t for t in threading.enumerate() if isinstance(t, EventEmitter) and t.is_alive()]


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
