"""`?`: every key the app knows, with its binding id (for `[keys]` in .memtui/config.toml) and what it does."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.keys import format_key
from textual.widgets import Static

from memtui.tui.plain import plain


def key_names(keys: str) -> str:
    """`right_square_bracket,J` as the keys themselves: `], J`."""
    return ", ".join(format_key(k.strip()) for k in keys.split(",") if k.strip())


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close", tooltip="Close the help")]

    def __init__(self, rows: list[tuple[str, str, str, str]]) -> None:
        """rows: (where, keys, binding id, what it does)."""
        super().__init__(classes="dialog-screen")
        self.rows = rows

    def compose(self) -> ComposeResult:
        # Text cells, not strings: a rich Table reads a string as markup, and `[stated]` or `[keys]` would vanish.
        table = Table(title="memtui keys", expand=True, show_edge=False, box=None, padding=(0, 1))
        table.add_column("where", style="dim")
        table.add_column("key", style="bold")
        table.add_column(Text("id (rebind in [keys])"), style="dim")
        table.add_column("what it does")
        for where, keys, bid, what in self.rows:
            table.add_row(Text(where), plain(key_names(keys)), plain(bid), Text(what))
        with VerticalScroll(classes="dialog help"):
            yield Static(table)
            yield Static("Rebind a key in .memtui/config.toml:  [keys]  approve = \"space,a\"", classes="dialog-hint",
                         markup=False)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
