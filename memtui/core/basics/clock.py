"""The one clock memtui reads, so a scripted day (and a screenshot) can pin it with MEMTUI_NOW."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime


def now() -> datetime:
    """Local time now, or the ISO time in $MEMTUI_NOW (e.g. 2026-08-20T14:05)."""
    from datetime import datetime

    fixed = os.environ.get("MEMTUI_NOW")
    if fixed:
        return datetime.fromisoformat(fixed)
    return datetime.now()


def today() -> str:
    """Today's date, YYYY-MM-DD. Without MEMTUI_NOW it is read without importing datetime (a cold `memtui search`
    answered by a watcher needs only this): the same local day `datetime.now()` gives."""
    if not os.environ.get("MEMTUI_NOW"):
        import time

        return time.strftime("%Y-%m-%d")
    return now().strftime("%Y-%m-%d")
