"""The room each pane has on the main screen as the person chose it: applied as the screen's classes, changed by
`z` (zoom) and `Z` (stack) or by focus moving into a hidden pane, and kept in their state folder for the next start.

The choice itself, its file and its rules are memtui/tui/layout.py's; this is the part that acts on the screen, one
helper the app holds (`MemtuiApp.room`), as the viewer holds its entry cursor.
"""

from __future__ import annotations

import threading
from functools import partial
from typing import TYPE_CHECKING, Any

from memtui.tui import layout as layouts

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget


class Room:
    """The layout in force on `app`'s main screen (`layout`) and the one its state folder holds (`saved`)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        # The person's layout (a pane given the screen, stacked or not), from their state folder: one small read,
        # so the first frame has it.
        self.layout = layouts.load()
        self.saved = self.layout  # the layout the state folder holds (the last one written)
        self._lock = threading.Lock()
        self.live = False  # from the first frame on, focus moving into a hidden pane gives it the screen

    @property
    def unsaved(self) -> bool:
        return self.saved != self.layout

    def apply(self, width: int | None = None, screen: Screen | None = None) -> None:
        """Set the main screen's classes for `self.layout` at `width` (app.tcss): which pane has the screen, and
        whether the body stacks. Classes already set are no change (no layout)."""
        screen = screen or self.app.base
        width = self.app.size.width if width is None else width
        pane = self.layout.maximized
        screen.set_class(self.layout.stacked(width), "-narrow")
        screen.set_class(pane is not None, "-max")
        for name in layouts.PANES:
            screen.set_class(pane == name, f"-max-{name}")

    def pane_of(self, widget: Widget | None) -> str | None:
        """The screen pane (layouts.PANES, by id) `widget` is in."""
        while widget is not None:
            if widget.id in layouts.PANES and widget.parent is not None and widget.screen is self.app.base:
                return widget.id
            widget = widget.parent  # type: ignore[assignment]
        return None

    def focus_shown_pane(self) -> None:
        name = self.layout.maximized
        base = self.app.base
        if name is None or self.pane_of(base.focused) == name:
            return
        pane = base.query_one(f"#{name}")
        # Asked by can_focus: before the first layout `focusable` is not yet known for the pane's widgets.
        target = pane if pane.can_focus else next((w for w in pane.query("*") if w.can_focus), None)
        if target is not None:
            target.focus()

    def set(self, new: layouts.Layout) -> None:
        if new == self.layout:
            return
        self.layout = new
        self.apply()
        self.app.run_worker(partial(self.save, new), name="save_layout", group="layout", thread=True,
                            exit_on_error=False)

    def save(self, chosen: layouts.Layout) -> None:
        """The layout chosen is the next start's too: saved to the person's state folder, never the memory's (in a
        thread)."""
        problem = self.write()
        if problem:
            self.app.call_from_thread(self.app.notify, problem, severity="warning", markup=False)

    def write(self, *, quitting: bool = False) -> str | None:
        """Write the layout in force now (not the one a thread was started for: `z` pressed twice starts two
        threads, which may finish in either order, and the later choice must be the one kept). `quitting`: the
        problem says what the next start has instead."""
        with self._lock:
            current = self.layout
            if current == self.saved:
                return None
            problem = layouts.save(current, then="the next start has the layout saved before") if quitting else \
                layouts.save(current)
            if problem is None:
                self.saved = current
            return problem

    def toggle_maximize(self) -> None:
        """`z`: the focused pane (Today, Search, Chat or a file in the main area, the review queue, the tree, the
        feed) takes the body's whole width and height; again, every pane is shown (JupyterLab's single-document
        mode, tmux's zoom)."""
        if self.layout.maximized is not None:
            self.set(self.layout.with_maximized(None))
            return
        pane = self.pane_of(self.app.base.focused) or "main"
        self.set(self.layout.with_maximized(pane))

    def toggle_stack(self) -> None:
        """`Z`: stack the body below layouts.NARROW columns (the default), always, or never; said in a toast."""
        order = layouts.STACK_CHOICES
        new = order[(order.index(self.layout.stack) + 1) % len(order)]
        self.set(layouts.Layout(self.layout.maximized, new))
        said = {"auto": f"stacked below {layouts.NARROW} columns", "on": "stacked at every width",
                "off": "side by side at every width"}[new]
        self.app.notify(f"Layout: {said} (Z changes it)", timeout=3, markup=False)

    def focus_moved(self, widget: Widget) -> None:
        """Focus moved (Tab, a key that opens a pane, a click) into a pane hidden by another's zoom: that pane is
        given the screen instead, so the focused widget is always in view."""
        pane = self.layout.maximized
        if pane is None or not self.live:
            return
        where = self.pane_of(widget)
        if where is not None and where != pane:
            self.set(self.layout.with_maximized(where))
