"""The decorator that makes a write surface of `Memory` tell the memory's change event (memtui/core/writing/changes.py).

Kept apart from that module so the write path does not load it: a process in which nothing ever subscribed (a
person's `memtui update`, `memtui queue approve`) has imported no `memtui.core.writing.changes`, so it has no change
event with anyone to tell, and its writes skip the bracket (~1 ms of a one-shot write's start).
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable


def emits_change(write: Callable[..., Any]) -> Callable[..., Any]:
    """A write surface of `Memory` (or a function taking the memory first): one own change event when it returns,
    after its commit, with the files its result names."""

    @functools.wraps(write)
    def wrapper(memory: Any, *args: Any, **kwargs: Any) -> Any:
        changes = sys.modules.get("memtui.core.writing.changes")
        if changes is None:
            # Subscribing is done through that module: not loaded, so no one in this process listens.
            return write(memory, *args, **kwargs)
        with memory.changes.writing() as files:
            result = write(memory, *args, **kwargs)
            files.update(changes._inside(memory.store, changes.touched(result)))
        return result

    return wrapper
