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
        # Where history is kept, for a folder memtui did not make (memtui.core.storage.places): "history beside" or
        # "your git"; None for a memory that keeps it inside (`memtui init`), whose header is as it always was.
        self.history = history
        self.connected = True
        self.counts: dict[str, int | None] = {"files": None, "pending": None, "conflict": 0, "external": 0}
        # Against the memory's git remote (memtui/tui/sync_view.py), None for a memory without one: nothing shown.
        self.remote: str | None = None
        self.ahead = self.behind = self.incoming = 0
        self.syncing: str | None = None  # the step of a sync under way, as the header shows it

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._draw())
        self._draw()

    def set_connected(self, connected: bool) -> None:
        self.connected = connected
        self._draw()

    def set_counts(self, **counts: int | None) -> None:
        self.counts.update(counts)
        self._draw()

    def set_history(self, history: str | None) -> None:
        """Where history is kept, as it stands now: a large folder's reads "being recorded" until its baseline is
        whole (memtui/core/storage/baseline.py), then where it is kept."""
        if history != self.history:
            self.history = history
            self._draw()

    def set_sync(self, remote: str | None, ahead: int = 0, behind: int = 0, incoming: int = 0, *,
                 syncing: str | None = None) -> None:
        """Where the memory stands against `remote` as last fetched (None: it has no remote, nothing is shown);
        `syncing`: the step of a sync under way (`fetching origin… 12s`), shown instead of ahead/behind."""
        now = (remote, ahead, behind, incoming, syncing)
        if now != (self.remote, self.ahead, self.behind, self.incoming, self.syncing):  # a memory with no remote:
            self.remote, self.ahead, self.behind, self.incoming, self.syncing = now  # never drawn again for it
            self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        """The memory, then what waits. Where the line is wider than the screen the path gives way first (its middle
        drawn as …), then the file count and where history is kept: the counts that ask for a person stay."""
        style = self.get_component_rich_style
        where = visible(short_root(self.root) if isinstance(self.root, Path) else self.root, newlines=False)
        c = self.counts
        # (words, style, the order in which it gives way on a narrow screen: 0 never)
        parts = [] if self.connected else [("disconnected, reconnecting", "header--alert", 0)]
        if c["files"] is not None:
            parts.append((f"{c['files']} file{'' if c['files'] == 1 else 's'}", "header--count", 1))
        if c["pending"] is not None:
            parts.append((f"{c['pending']} pending", "header--alert" if c["pending"] else "header--count", 0))
        if c["conflict"]:
            parts.append((f"{c['conflict']} conflict", "header--alert", 0))
        if c["external"]:
            parts.append((f"{c['external']} external", "header--alert", 0))
        if self.remote is not None:
            # The remote's name is the person's (git's rules), drawn as text like every part. Incoming changes ask
            # for a decision and stay; how far ahead and behind gives way with the file count.
            if self.incoming:
                parts.append((f"{self.incoming} incoming", "header--alert", 0))
            if self.syncing:
                parts.append((visible(self.syncing, newlines=False), "header--count", 0))
            else:
                parts.append((visible(f"{self.remote} ↑{self.ahead} ↓{self.behind}", newlines=False),
                              "header--count", 1))
        if self.history:  # last: what waits for the person comes first
            parts.append((self.history, "header--count", 2))
        width = self.size.width
        if width > 0:
            room = width - len(" memtui  ") - sum(5 + len(label) for label, _, _ in parts)
            while room < min(len(where), 24) and any(order for _, _, order in parts):  # the path keeps 24 first
                gone = min((part[2], i) for i, part in enumerate(parts) if part[2])[1]
                room += 5 + len(parts.pop(gone)[0])
            if len(where) > room:
                keep = max(room - 1, 8)
                head = keep // 3
                where = where[:head] + "…" + where[len(where) - (keep - head):]
        text = Text.assemble((" memtui ", style("header--name")), " ", (where, style("header--root")))
        for label, cls, _ in parts:
            text.append("  ·  ", style("header--count"))
            text.append(label, style(cls))
        self.update(text)
