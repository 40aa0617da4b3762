"""The one clock memtui reads, so a scripted day (and a screenshot) can pin it with MEMTUI_NOW."""

from __future__ import annotations

import os
from datetime import datetime


def now() -> datetime:
    """Local time now, or the ISO time in $MEMTUI_NOW (e.g. 2026-08-20T14:05)."""
    fixed = os.environ.get("MEMTUI_NOW")
    if fixed:
        return datetime.fromisoformat(fixed)
    return datetime.now()


def today() -> str:
    return now().strftime("%Y-%m-%d")
