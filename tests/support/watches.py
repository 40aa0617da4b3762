"""The file watches running in this process, as threads."""

from __future__ import annotations

import threading


def watches() -> list[threading.Thread]:
    """One watchdog emitter thread per watch (handing its events on itself, or to an Observer's thread)."""
    from watchdog.observers.api import EventEmitter

    return [t for t in threading.enumerate() if isinstance(t, EventEmitter) and t.is_alive()]
