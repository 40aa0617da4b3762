"""Room for each view: which pane has the whole screen (`z`), and whether the body stacks on a narrow terminal.

The main screen's four panes (the tree, the tabbed main area, the review queue, the activity feed) are shown by CSS
classes on the screen (app.tcss): `-max` with `-max-<pane>` gives one pane the body's full width and height, the
others are hidden until it is given back; `-narrow` (below NARROW columns, or always or never as the person chose)
hides the tree and stacks the main area above the review queue, whose list and diff then sit side by side, so an
entry and its diff read whole at 80x24.

The choice is the person's, not the memory's: it is kept in their state folder (`$XDG_STATE_HOME/memtui/layout.json`),
never in a memory folder, which is a git repository an agent or another tool writes to. The file is read once as
the screen is composed (one small read, before the first layout, so the first frame has the layout chosen) and
written when the choice changes. Whatever the file holds is checked against the known names: a value that is not
one is the default, never a class name or a widget id taken from the file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

PANES = ("tree", "main", "review", "feed")  # the screen's panes, by widget id
STACK_CHOICES = ("auto", "on", "off")  # stack below NARROW columns, always, never
NARROW = 100  # columns below which the body stacks (at 100 the three columns still read)
MAX_BYTES = 4096  # a state file larger than this is not memtui's: the defaults are used


def state_file() -> Path:
    """`$XDG_STATE_HOME/memtui/layout.json` (default `~/.local/state/memtui/layout.json`), beside the crash reports."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "memtui" / "layout.json"


@dataclass(frozen=True)
class Layout:
    maximized: str | None = None  # one of PANES, or None: every pane shown
    stack: str = "auto"  # one of STACK_CHOICES

    def stacked(self, width: int) -> bool:
        return self.stack == "on" or (self.stack == "auto" and width < NARROW)

    def with_maximized(self, pane: str | None) -> Layout:
        return replace(self, maximized=pane if pane in PANES else None)


def load(path: Path | None = None) -> Layout:
    """The layout saved last, or the default where there is none or it cannot be read (never an error: a broken
    state file costs the person their layout, not the app)."""
    path = path or state_file()
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        data = json.loads(raw) if len(raw) <= MAX_BYTES else None
    except (OSError, ValueError):
        return Layout()
    if not isinstance(data, dict):
        return Layout()
    pane, stack = data.get("maximized"), data.get("stack")
    return Layout(maximized=pane if isinstance(pane, str) and pane in PANES else None,
                  stack=stack if isinstance(stack, str) and stack in STACK_CHOICES else "auto")


def save(layout: Layout, path: Path | None = None, then: str = "it applies until memtui quits") -> str | None:
    """Write `layout` (whole, or not at all: a temporary file renamed over the old one). Returns what went wrong,
    for the person, followed by `then` (what still holds), or None."""
    path = path or state_file()
    text = json.dumps({"maximized": layout.maximized, "stack": layout.stack}) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".layout-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        return f"the layout was not saved to {path}: {exc.strerror or exc}; {then}"
    return None
