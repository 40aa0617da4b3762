"""The main area's tabs: panes shown one at a time under a strip of their titles, drawn by one widget.

Textual's TabbedContent is eight widgets for one tab (the tabs, a scroll container, a list, the tab, its underline,
a content switcher, the pane), each styled, laid out and painted at start and on every change of tabs, and its
module brings Tabs, Underline and ContentSwitcher with their stylesheets. Here the strip is one widget that draws
every title on its first line and the underline bar on its second, as Textual's tabs draw them (the same styles, the
same bar), and the panes are the container's own children, one shown at a time.

What a person does with it is what Textual's tabs do: click a title (or the bar under it) to bring its pane up,
`left`/`right` on the focused strip to move between tabs, focus moving into a pane brings it up. Titles are
untrusted (a file's name): drawn as text, controls made visible, never read as markup.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.renderables.bar import Bar
from textual.strip import Strip
from textual.widget import AwaitMount, Widget

from memtui.core.basics.visible import visible


class TabPane(Widget):
    """One pane of a `Tabbed`: its title is drawn in the strip; focus moving into it brings it up."""

    DEFAULT_CSS = """
    TabPane {
        height: 1fr;
    }
    """

    class Focused(Message):
        """A widget inside the pane got the focus (from code, a click, the palette)."""

        def __init__(self, pane: TabPane) -> None:
            super().__init__()
            self.pane = pane

    def __init__(self, title: str | Content, *children: Widget, id: str | None = None) -> None:
        super().__init__(*children, id=id)
        # A title is data, never markup (a file may be named `[@click=app.quit]Q.md`); one line.
        self.title = visible(title.plain if isinstance(title, Content) else title, newlines=False)

    def _on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.post_message(self.Focused(self))


class Tab(NamedTuple):
    """A title as drawn: its pane's id, the title, and its cells in the strip's full line (x, end excluded; the
    title itself is drawn from x + 1 to end - 1, a cell of padding either side)."""

    pane_id: str
    title: str
    x: int
    end: int


class TabStrip(Widget, can_focus=True):
    """Every title on one line and the underline bar below it (Textual's `Tabs`, `Tab` and `Underline` in one)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"tab-strip--tab", "tab-strip--active", "tab-strip--hover", "tab-strip--cursor",
                         "tab-strip--bar"}
    # Textual's Tab, Tabs and Underline styles, in the strip's component classes.
    DEFAULT_CSS = """
    TabStrip {
        dock: top;
        width: 100%;
        height: 2;
        & > .tab-strip--tab {
            color: $foreground 50%;
        }
        & > .tab-strip--active {
            color: $foreground;
        }
        & > .tab-strip--hover {
            color: $foreground;
        }
        & > .tab-strip--bar {
            color: $block-cursor-background;
            background: $foreground 10%;
        }
        &:focus {
            & > .tab-strip--bar {
                background: $foreground 30%;
            }
            & > .tab-strip--cursor {
                text-style: $block-cursor-text-style;
                color: $block-cursor-foreground;
                background: $block-cursor-background;
            }
        }
        &:ansi {
            & > .tab-strip--tab {
                text-style: dim;
            }
            & > .tab-strip--active {
                text-style: not dim bold;
            }
            & > .tab-strip--bar {
                background: $border-blurred;
            }
            & > .tab-strip--hover {
                text-style: dim;
            }
        }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Previous tab", show=False),
        Binding("right", "move(1)", "Next tab", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.tabs: list[Tab] = []  # as last drawn, in the full line (before the scroll)
        self.scroll = 0  # cells of the full line left of the view: the active title is kept in view
        self._hover: str | None = None
        self._pointer: int | None = None  # the pointer's column on the titles' row, while it is there
        self.drawn = 0  # times the strip was drawn

    @property
    def tabbed(self) -> Tabbed:
        parent = self.parent
        assert isinstance(parent, Tabbed)
        return parent

    def _layout(self) -> tuple[list[Tab], int]:
        """Each title's cells, and the scroll that centres the active one where the titles are wider than the
        strip (as Textual's tabs scroll it)."""
        tabs, x = [], 0
        for pane_id, title in self.tabbed.titles():
            width = Text(title).cell_len + 2
            tabs.append(Tab(pane_id, title, x, x + width))
            x += width
        width = self.size.width
        active = next((t for t in tabs if t.pane_id == self.tabbed.active), None)
        scroll = 0
        if active is not None and x > width:
            scroll = min(max(0, (active.x + active.end) // 2 - width // 2), x - width)
        return tabs, scroll

    def render_lines(self, crop: Region) -> list[Strip]:
        # Laid out once per paint, whichever of the two rows it asks for.
        self.tabs, self.scroll = self._layout()
        self.drawn += 1
        if self._pointer is not None:
            # The titles moved under a pointer that did not (a scroll to the active one, a tab closed): the one
            # lit is the one under it now.
            self._point_at(self._pointer)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        full = max(width, self.tabs[-1].end if self.tabs else 0)
        active = self.tabbed.active
        if y == 0:
            tab = self.get_component_rich_style("tab-strip--tab")
            on = self.get_component_rich_style("tab-strip--active")
            hover = self.get_component_rich_style("tab-strip--hover")
            cursor = self.get_component_rich_style("tab-strip--cursor")  # its colour blended over its background
            base = self.rich_style
            line = Text(no_wrap=True, end="")
            for t in self.tabs:
                style = on if t.pane_id == active else hover if t.pane_id == self._hover else tab
                if t.pane_id == active and self.has_focus:
                    style = cursor
                # The padding has the tab's background, not its colour (as a widget's padding is drawn).
                pad = Style(bgcolor=style.bgcolor or base.bgcolor)
                line.append_text(Text.assemble((" ", pad), (t.title, base + style), (" ", pad)))
            line.append(" " * (full - line.cell_len), Style(bgcolor=base.bgcolor))
            segments = list(line.render(self.app.console))
        elif y == 1:
            bar = self.get_component_rich_style("tab-strip--bar")
            found = next((t for t in self.tabs if t.pane_id == active), None)
            span = (found.x + 1, found.end - 1) if found is not None else (0, 0)
            segments = list(Bar(span, Style.from_color(bar.color), Style.from_color(bar.bgcolor), width=full)
                            .__rich_console__(self.app.console, self.app.console.options))
            segments = list(Segment.apply_style([s for text in segments for s in text.render(self.app.console)],
                                                self.rich_style))
        else:
            return Strip.blank(width, self.rich_style)
        return Strip(segments).crop(self.scroll, self.scroll + width).extend_cell_length(width, self.rich_style) \
            .simplify()

    def tab_at(self, x: int) -> Tab | None:
        """The title at column `x` of the strip as shown."""
        x += self.scroll
        return next((t for t in self.tabs if t.x <= x < t.end), None)

    def offset_of(self, pane_id: str) -> tuple[int, int] | None:
        """Where a title is shown (its first cell of text, row 0), for a click; None when it is out of view."""
        found = next((t for t in self.tabs if t.pane_id == pane_id), None)
        if found is None or not 0 <= found.x + 1 - self.scroll < self.size.width:
            return None
        return (found.x + 1 - self.scroll, 0)

    def on_click(self, event: events.Click) -> None:
        # A click on a title, or on the bar under it, brings its pane up; the strip takes the focus, as Textual's.
        event.stop()
        found = self.tab_at(event.x)
        self.focus()
        if found is not None and found.pane_id in self.tabbed.pane_ids:  # drawn, but maybe closed since
            self.tabbed.active = found.pane_id

    def _point_at(self, x: int | None) -> bool:
        """The title under the pointer (column `x` of the titles' row, None: not on it) is the one lit, and the
        pointer is a hand over a title, as over Textual's; whether the one lit changed."""
        found = self.tab_at(x) if x is not None else None
        pointer = "pointer" if found is not None else "default"
        if self.styles.pointer != pointer:
            self.styles.pointer = pointer
        pane_id = found.pane_id if found is not None else None
        changed, self._hover = pane_id != self._hover, pane_id
        return changed

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._pointer = event.x if event.y == 0 else None
        if self._point_at(self._pointer):
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        self._pointer = None
        self.styles.pointer = "default"
        if self._hover is not None:
            self._hover = None
            self.refresh()

    def action_move(self, step: int) -> None:
        ids = self.tabbed.pane_ids
        if not ids:
            return
        here = ids.index(self.tabbed.active) if self.tabbed.active in ids else (-1 if step > 0 else 0)
        self.tabbed.active = ids[(here + step) % len(ids)]

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


class Tabbed(Widget):
    """Panes (`TabPane`) shown one at a time under a `TabStrip`; `active` is the id of the pane on show."""

    DEFAULT_CSS = """
    Tabbed {
        height: 1fr;
    }
    """

    class TabActivated(Message):
        """A pane came up (from code, a click, a key, focus moving into it)."""

        def __init__(self, tabbed: Tabbed, pane: TabPane) -> None:
            super().__init__()
            self.tabbed = tabbed
            self.pane = pane

        @property
        def control(self) -> Tabbed:
            return self.tabbed

    def __init__(self, *panes: TabPane, id: str | None = None) -> None:
        super().__init__(id=id)
        self._panes: list[TabPane] = list(panes)  # in the order of their titles
        self._active = ""
        self.strip = TabStrip()

    def compose_add_child(self, widget: Widget) -> None:
        # `with Tabbed(): with TabPane(...)` in a compose: the panes come after the strip (focus goes strip, pane).
        assert isinstance(widget, TabPane), "a Tabbed holds TabPanes"
        self._panes.append(widget)

    def compose(self):  # type: ignore[no-untyped-def]
        yield self.strip
        for k, pane in enumerate(self._panes):
            pane.display = k == 0
        if self._panes:
            self._active = self._panes[0].id or ""
        yield from self._panes

    def on_mount(self) -> None:
        if self.active_pane is not None:
            self.post_message(self.TabActivated(self, self.active_pane))

    # The main area's focus mark (app.tcss) is on the strip, a sibling of the focused widget's line of ancestors,
    # which is all Textual restyles as focus moves: told here, by a class.
    def on_descendant_focus(self) -> None:
        self.strip.set_class(True, "-focus-within")

    def on_descendant_blur(self) -> None:
        self.strip.set_class(False, "-focus-within")

    @property
    def pane_ids(self) -> list[str]:
        return [p.id or "" for p in self._panes]

    def titles(self) -> list[tuple[str, str]]:
        return [(p.id or "", p.title) for p in self._panes]

    @property
    def tab_count(self) -> int:
        return len(self._panes)

    @property
    def active(self) -> str:
        return self._active

    @active.setter
    def active(self, pane_id: str) -> None:
        if pane_id == self._active:
            return
        new = self.get_pane(pane_id) if pane_id else None
        old = self.active_pane
        with self.app.batch_update():
            if old is not None:
                old.display = False
            if new is not None:
                new.display = True
        self._active = pane_id
        self.strip.refresh()
        if new is not None:
            self.post_message(self.TabActivated(self, new))

    @property
    def active_pane(self) -> TabPane | None:
        return next((p for p in self._panes if p.id == self._active), None) if self._active else None

    def get_pane(self, pane_id: str) -> TabPane:
        found = next((p for p in self._panes if p.id == pane_id), None)
        if found is None:
            raise ValueError(f"no tab {pane_id!r}")
        return found

    def add_pane(self, pane: TabPane) -> AwaitMount:
        """A pane at the end (not shown until it is made active, unless it is the only one)."""
        if not pane.id or pane.id in self.pane_ids:
            raise ValueError(f"a pane needs an id of its own (got {pane.id!r})")
        pane.display = False
        self._panes.append(pane)
        mounted = self.mount(pane)
        self.strip.refresh()
        if len(self._panes) == 1:
            self.active = pane.id
        return mounted

    def remove_pane(self, pane_id: str) -> None:
        """Remove a pane; where it was on show, the one after it comes up (else the one before)."""
        pane = next((p for p in self._panes if p.id == pane_id), None)
        if pane is None:
            return
        at = self._panes.index(pane)
        self._panes.remove(pane)
        if pane_id == self._active:
            self._active = ""  # gone: the next one is made active below, from nothing
            if self._panes:
                self.active = self._panes[min(at, len(self._panes) - 1)].id or ""
        pane.remove()
        self.strip.refresh()

    def on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        event.stop()
        if event.pane in self._panes and event.pane.id:
            self.active = event.pane.id
