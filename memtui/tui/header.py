"""The header: the memory (a folder or a store URL), whether it is reachable, and the counts that matter."""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from memtui.tui.plain import visible


def short_root(root: Path) -> str:
    home = os.path.expanduser("~")
    text = str(root)
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


class MemtuiHeader(Static):
    COMPONENT_CLASSES = {"header--name", "header--root", "header--count", "header--alert"}

    def __init__(self, root: Path | str, *, history: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.root = root
        # Where history is kept, for a folder memtui did not make (memtui.core.places): "history beside" or "your
        # git"; None for a memory that keeps it inside (`memtui init`), whose header is as it always was.
        self.history = history
        self.connected = True
        self.counts: dict[str, int | None] = {"files": None, "pending": None, "conflict": 0, "external": 0}

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._draw())
        self._draw()

    def set_connected(self, connected: bool) -> None:
        self.connected = connected
        self._draw()

    def set_counts(self, **counts: int | None) -> None:
        self.counts.update(counts)
        self._draw()

    def _draw(self) -> None:
        style = self.get_component_rich_style
        where = short_root(self.root) if isinstance(self.root, Path) else self.root
        text = Text.assemble((" memtui ", style("header--name")), " ",
                             (visible(where, newlines=False), style("header--root")))
        c = self.counts
        parts = [] if self.connected else [("disconnected, reconnecting", "header--alert")]
        if c["files"] is not None:
            parts.append((f"{c['files']} file{'' if c['files'] == 1 else 's'}", "header--count"))
        if c["pending"] is not None:
            parts.append((f"{c['pending']} pending", "header--alert" if c["pending"] else "header--count"))
        if c["conflict"]:
            parts.append((f"{c['conflict']} conflict", "header--alert"))
        if c["external"]:
            parts.append((f"{c['external']} external", "header--alert"))
        if self.history:  # last: what waits for the person stays in view in an 80-column terminal
            parts.append((self.history, "header--count"))
        for label, cls in parts:
            text.append("  ·  ", style("header--count"))
            text.append(label, style(cls))
        self.update(text)
