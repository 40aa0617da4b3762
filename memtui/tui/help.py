"""`?`: every key the app knows, by the pane it works in, with its binding id (for `[keys]` in .memtui/config.toml)
and what it does; the keys that work now (in the focused pane, and the app's) lit, the rest dim."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from memtui.tui.diff import DiffView
from memtui.tui.keys import REVIEW_ACTIONS
from memtui.tui.plain import plain
from memtui.tui.tree import MemoryTree
from memtui.tui.viewer import MemoryViewer


def key_names(keys: str) -> str:
    """`right_square_bracket,J` as the keys themselves: `], J`."""
    return ", ".join(format_key(k.strip()) for k in keys.split(",") if k.strip())


Row = tuple[str, str, str, str]  # (where, keys, binding id, what it does)


class KeyTable(Widget):
    """The keys as a table, laid out once per width and kept: laying out a rich Table of every key took most of
    the ~150 ms that opening `?` cost, three times per opening (measured, then painted, then resized)."""

    DEFAULT_CSS = "KeyTable { height: auto; }"
    _laid_out: LRUCache[tuple, list[list[Segment]]] = LRUCache(8)  # (rows, width) → lines, for every opening

    def __init__(self, rows: list[Row], lit: frozenset[int] = frozenset(), focus: str = "") -> None:
        super().__init__()
        self.rows = tuple(rows)
        self.lit = lit  # indexes of the rows whose key works now
        self.focus_name = focus  # the pane focus is in, for the title

    def show(self, rows: list[Row], lit: frozenset[int], focus: str) -> None:
        """The keys as they are at this opening: which work now changes with the focus."""
        self.rows, self.lit, self.focus_name = tuple(rows), lit, focus
        self.refresh(layout=True)

    def _lines(self, width: int) -> list[list[Segment]]:
        key = (self.rows, self.lit, self.focus_name, width)
        lines = self._laid_out.get(key)
        if lines is None:
            from rich.table import Table

            # Text cells, not strings: a rich Table reads a string as markup, and `[stated]` or `[keys]` would
            # vanish.
            # The title names the pane as text: a Table reads a string title as markup.
            where = f" (focus in {self.focus_name})" if self.focus_name else ""
            # How to leave it, on the first line: the help has no footer, and its own hint is at the end of the list.
            title = Text(f"memtui keys · lit: what works now{where} · esc closes")
            table = Table(title=title, expand=True, show_edge=False, box=None, padding=(0, 1))
            table.add_column("where")
            table.add_column("key", style="bold")
            table.add_column(Text("id (rebind in [keys])"))
            table.add_column("what it does")
            for n, (where, keys, bid, what) in enumerate(self.rows):
                table.add_row(Text(where), plain(key_names(keys)), plain(bid), Text(what),
                              style=None if n in self.lit else "dim")
            console = self.app.console
            lines = console.render_lines(table, console.options.update_width(max(1, width)), pad=True)
            self._laid_out[key] = lines
        return lines

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def render_line(self, y: int) -> Strip:
        lines = self._lines(self.size.width)
        if y >= len(lines):
            return Strip.blank(self.size.width, self.rich_style)
        return Strip(lines[y]).apply_style(self.rich_style)


class HelpScreen(ModalScreen[None]):
    """Opaque, and made once then kept (the app installs it): a see-through screen painted the whole app
    dimmed beneath it on every opening and every repaint, and a new screen laid out itself and the app again."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close", tooltip="Close the help")]

    def __init__(self, rows: list[Row], lit: frozenset[int] = frozenset(), focus: str = "") -> None:
        """rows: (where, keys, binding id, what it does); lit: the indexes of those that work now."""
        super().__init__(classes="dialog-screen help-screen")
        self.rows, self.lit, self.focus_name = rows, lit, focus

    def show(self, rows: list[Row], lit: frozenset[int], focus: str) -> None:
        self.rows, self.lit, self.focus_name = rows, lit, focus
        for table in self.query(KeyTable):
            table.show(rows, lit, focus)

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield KeyTable(self.rows, self.lit, self.focus_name)
            yield Static("Rebind a key in .memtui/config.toml:  [keys]  approve = \"space,a\"", classes="dialog-hint",
                         markup=False)

    def on_screen_resume(self) -> None:
        self.query_one(VerticalScroll).scroll_home(animate=False, immediate=True)  # each opening from the top

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)


def key_scopes(app: Any) -> list[tuple[str, list[Binding]]]:
    """Every pane's keys in `app` (memtui's), in the screen's order, from the bindings themselves (help cannot drift
    from them): the review keys are the app's, listed under the review panel where they act. The pane modules are
    imported here, as help first opens, not at start."""
    from textual.widgets import Tree

    from memtui.tui.chat import ChatPane, ProposalCardView
    from memtui.tui.dialogs import ConfirmScreen, RejectScreen, ReviseScreen
    from memtui.tui.search import SearchPane
    from memtui.tui.today import TodayPane

    def own(*classes: type) -> list[Binding]:
        return [b for cls in classes for b in cls.BINDINGS if isinstance(b, Binding)]

    keys = own(type(app))
    return [("tree", own(MemoryTree) or own(Tree)), ("viewer", own(MemoryViewer)),
            ("review", [b for b in keys if b.action in REVIEW_ACTIONS] + own(DiffView)),
            ("Today", own(TodayPane)), ("search", own(SearchPane)), ("chat", own(ChatPane, ProposalCardView)),
            ("app", [b for b in keys if b.action not in REVIEW_ACTIONS]), ("revise", own(ReviseScreen)),
            ("reject", own(RejectScreen)), ("confirm", own(ConfirmScreen))]


def key_rows(app: Any, lit: set[int] | None = None) -> list[tuple[str, str, str, str]]:
    """(pane, keys, binding id, what it does) for every key; `lit`, if given, gets the indexes of the rows
    whose key works now on the main screen (Textual's active bindings: the focused widget's, its ancestors',
    the app's, each enabled by `check_action`, a key shadowed by a nearer widget's not)."""
    now = {(b.binding.id or b.binding.action) for b in app.base.active_bindings.values() if b.enabled}
    everywhere = [("app", "ctrl+p", "command_palette", "Command palette: open files, decide, switch theme"),
                  ("app", "tab", "-", "Move focus: tree, main area (its tab bar, then the tab), review list, "
                                      "diff, activity feed; shift+tab back")]
    rows: list[tuple[str, str, str, str]] = []
    listed: set[str] = set()
    for scope, bindings in key_scopes(app):
        if scope == "app":
            if lit is not None:
                lit.update(range(len(rows), len(rows) + len(everywhere)))
            rows += everywhere
        for b in bindings:
            if not (b.id or b.description):
                continue  # a key Textual's widget keeps to itself, undescribed
            if b.id in listed or b.action.startswith("app."):
                continue  # the same binding again, or the app's (a pane's `?`, first in its footer): the app's
            listed.add(b.id or "")
            keys = app.keymap_config.get(b.id or "", b.key)
            if lit is not None and (b.id or b.action) in now:
                lit.add(len(rows))
            rows.append((scope, keys, b.id or "-", b.tooltip or b.description))
    return rows


def focus_name(app: Any) -> str:
    """The pane the focus is in, by the names help uses."""
    focused = app.base.focused
    if focused is None:
        return ""
    ancestors = focused.ancestors_with_self
    plugin = next((kind for kind, w in app.panes.items() if w in ancestors), None)
    if plugin is not None:
        return {"today": "Today"}.get(plugin, plugin)
    for widget, name in ((app.tree, "tree"), (app.review, "review"), (app.feed, "activity feed")):
        if widget in ancestors:
            return name
    return "viewer" if isinstance(focused, MemoryViewer) else "main area"
