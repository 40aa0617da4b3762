"""Keys more than one widget declares, and the footer that shows the keys that apply now."""

from __future__ import annotations

from typing import Any, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

from memtui.core.basics.visible import visible

# The app's `?` (same id, so a rebinding in [keys] moves it too), also first among the keys of a widget whose own
# keys make the footer wider than the screen: the footer is cut at its end, where the app's `? Keys` is.
HELP_FIRST = Binding("question_mark", "app.help", "Keys", id="help", tooltip="Show every key")

# The app's own keys (memtui/tui/app.py's MemtuiApp.BINDINGS): an `id` each, which `[keys]` in config.toml rebinds.
APP_BINDINGS = [
    Binding("a", "approve", "Approve", id="approve", tooltip="Apply the selected proposal and commit it"),
    Binding("e", "revise", "Revise", id="revise", tooltip="Edit the selected proposal's entry, then approve"),
    Binding("r", "reject", "Reject", id="reject", tooltip="Reject the selected proposal (asks for a reason)"),
    Binding("A", "approve_all", "Approve all", id="approve_all", tooltip="Approve every pending proposal"),
    Binding("R", "revise_of_current", "As revise", id="revise_of_current", show=False,
            tooltip="Approve the selected add as a revise of the current entry it contradicts (struck as "
            "superseded)"),
    Binding("N", "open_pane('next_session')", "Next session", id="next_session", show=False,
            tooltip="The context the next agent session receives, and how the selected proposal changes it"),
    Binding("right_square_bracket", "next_proposal", "Next", id="next_proposal", show=False,
            tooltip="Select the next proposal in the review panel"),
    Binding("left_square_bracket", "prev_proposal", "Previous", id="prev_proposal", show=False,
            tooltip="Select the previous proposal in the review panel"),
    Binding("slash", "open_pane('search')", "Search", id="search", tooltip="Search the memory"),
    Binding("t", "open_pane('today')", "Today", id="today", tooltip="Today's log and changes"),
    Binding("c", "open_pane('chat')", "Chat", id="chat", tooltip="Chat with the embedded agent"),
    Binding("v", "toggle_raw", "Raw", id="toggle_raw", tooltip="Toggle between rendered and raw source"),
    Binding("d", "diff_commit", "Diff", id="diff_commit", tooltip="Diff the open file against its last commit"),
    # Not in the footer (nor W): at 120 columns it cut "? Keys" off the end; both are in the ? help.
    Binding("S", "toggle_split", "Side by side", id="toggle_split", show=False,
            tooltip="Show diffs side by side (old left, new right), or unified again"),
    Binding("W", "toggle_wrap", "Wrap", id="toggle_wrap", show=False,
            tooltip="Wrap long lines in files and diffs (symbols, line numbers and signs stay in their column), "
            "or cut them at the edge again"),
    Binding("w", "close_tab", "Close tab", id="close_tab", show=False, tooltip="Close the current tab"),
    # Priority: an input's scrolling ancestors bind these keys to sideways paging, which no tab here needs.
    Binding("ctrl+pagedown", "switch_tab(1)", "Next tab", id="next_tab", show=False, priority=True,
            tooltip="Show the next tab (also from inside a text box)"),
    Binding("ctrl+pageup", "switch_tab(-1)", "Previous tab", id="previous_tab", show=False, priority=True,
            tooltip="Show the previous tab (also from inside a text box)"),
    Binding("C", "consolidate", "Consolidate", id="consolidate", show=False,
            tooltip="Propose one reviewed rewrite of each MEMORY.md section over its cap"),
    Binding("P", "sync_remote", "Sync", id="sync_remote", show=False,
            tooltip="Sync with the memory's git remote: fetch, queue what came in for review, push what was "
            "approved (memtui/tui/sync_view.py)"),
    Binding("z", "toggle_maximize", "Zoom", id="maximize",
            tooltip="Give the focused pane the whole screen, or give it back"),
    Binding("Z", "toggle_stack", "Stack", id="toggle_stack", show=False,
            tooltip="Stack the panes (main area above the review queue) below 100 columns, always or never"),
    Binding("question_mark", "help", "Keys", id="help", tooltip="Show every key"),
    Binding("q", "quit", "Quit", id="quit", tooltip="Quit memtui"),
    # Not a priority: a dialog's escape (cancel) and the viewer's (clear diff marks) come first, and a running
    # chat turn's (cancel it). Elsewhere it leaves a text box, then goes back one level (`action_back`).
    Binding("escape", "back", "Back", id="back", show=False,
            tooltip="Leave the text box; again: back to the tab before (or the tree)"),
    # Textual's ctrl+c copies in a text box and only says "press ctrl+q" elsewhere: here it quits from anywhere
    # (ctrl+q too, Textual's), unless text is selected, which it copies as before.
    Binding("ctrl+c", "quit_or_copy", "Quit", id="quit_ctrl_c", show=False, priority=True,
            tooltip="Quit memtui (copies instead while text is selected)"),
]

# The keys that decide what the review panel has selected: they act only while the panel is what the person looks
# at, never while a text box has focus (there the letters are text) nor from inside a Chat or Search tab.
REVIEW_ACTIONS = frozenset({"approve", "revise", "reject", "approve_all", "next_proposal", "prev_proposal",
                            "revise_of_current"})


# Shown in a footer too narrow for every key, wherever they come in it: the help (every key) and quit.
_ALWAYS_SHOWN = frozenset({"help", "app.help", "quit", "app.quit"})


class Key(NamedTuple):
    """One key the footer shows, and the cells it takes (x from its left edge, end excluded)."""

    key: str
    action: str
    display: str
    description: str
    disabled: bool
    tooltip: str
    x: int
    end: int


class KeyFooter(Widget, can_focus=False):
    """The keys that apply now, drawn as one line by one widget, as Textual's footer draws them (the palette's key
    on the right). Textual's footer is a widget per key (13 here): styled, laid out and painted one by one at start
    (~20 ms of the first screen), and rebuilt, with a layout of the whole screen, whenever the keys change. Here a
    change of keys is a repaint of one line; on every focus move, every selection in the review list and every
    return from help or a dialog the keys are compared and, the same, nothing is drawn again.

    A key is clicked (the key is pressed), hovered (highlighted, its tooltip shown) and shown dimmed where it does
    nothing now, as Textual's."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description", "footer-key--item", "footer-key--hover",
                         "footer-key--palette"}
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        width: 1fr;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        text-overflow: clip;
        & > .footer-key--item {
            background: $footer-item-background;
        }
        & > .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .footer-key--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        & > .footer-key--palette {
            color: $foreground 20%;
        }
    }
    """

    show_command_palette = True

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[Any, ...] | None = None
        self.keys: list[Key] = []  # as drawn (the palette's last, at the right edge)
        self._hover: int | None = None
        self.drawn = 0  # times the line was drawn
        self._check_due = False

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _keys(self, screen: Screen) -> tuple[tuple[str, str, str, str, bool, str, bool], ...]:
        """What the footer draws, as (key, action, display, description, disabled, tooltip, the palette's): one key
        per action among those shown, the first binding's (a hidden one, such as the viewer's j and k that come
        with its entries, changes nothing drawn), then the palette's."""
        palette = self.app.COMMAND_PALETTE_BINDING
        seen: set[str] = set()
        keys, last = [], []
        for key, (_node, b, enabled, tooltip) in screen.active_bindings.items():
            # A key's name and description (the name may come from [keys] in config.toml): one line each, their
            # cells counted as drawn.
            entry = (b.key, b.action, visible(self.app.get_key_display(b), newlines=False),
                     visible(b.description, newlines=False), not enabled, tooltip)
            if key == palette:
                if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
                    last = [(*entry[:5], tooltip or b.description, True)]
            elif b.show and b.action not in seen:
                seen.add(b.action)
                keys.append((*entry, False))
        return tuple(keys + last)

    def bindings_changed(self, screen: Screen) -> None:
        if screen is not self.screen or not screen.app.app_focus or not self.is_attached:
            return  # under help or a dialog, unseen: compared again when it is back on top
        # Compared once what caused it has settled (a key is enabled by what the tab shown holds, which a focus
        # move to a new tab changes after the bindings are told), and once for several changes.
        if not self._check_due:
            self._check_due = True
            self.call_later(self._check)

    def _check(self) -> None:
        self._check_due = False
        if self.is_attached and self._keys(self.screen) != self._shown:
            # The pointer's key is found again when it next moves: highlight and tooltip were the old key's.
            self._hover = None
            self.tooltip = None
            self.refresh()

    def render(self) -> Text:
        item = self.get_component_rich_style("footer-key--item", partial=True)
        key_style = self.get_component_rich_style("footer-key--key", partial=True)
        description_style = self.get_component_rich_style("footer-key--description", partial=True)
        hover = self.get_component_rich_style("footer-key--hover", partial=True)
        rule = self.get_component_rich_style("footer-key--palette")  # blended over the footer, as a border is
        width = self.size.width
        line, tail = Text(no_wrap=True, end=""), Text(no_wrap=True, end="")
        parts: list[tuple[Key, Text]] = []
        right: list[Key] = []
        self._shown = self._keys(self.screen)
        for k, (key, action, display, description, disabled, tooltip, is_palette) in enumerate(self._shown):
            base = item + hover if k == self._hover else item
            if is_palette:  # compact: no padding round the key, one cell before its description
                part = Text.assemble((display, key_style), (f" {description}" if description else "",
                                                            description_style))
            else:
                part = Text.assemble((f" {display} ", key_style), (f"{description} " if description else "",
                                                                   description_style))
            part.stylize_before(base + Style(dim=True) if disabled else base)
            if is_palette:
                # At the right edge, after a thin rule, with a cell of padding (Textual's palette key).
                tail = Text.assemble(("▏", rule), part, (" ", base))
                x = max(0, width - tail.cell_len)
                right = [Key(key, action, display, description, disabled, tooltip, x + 1, x + tail.cell_len)]
            else:
                parts.append((Key(key, action, display, description, disabled, tooltip, 0, 0), part))
        room = max(0, width - tail.cell_len)
        # The keys that do not fit whole before the palette's are left out: one cut in its name ("q Q" for q Quit,
        # "t T" for Today) named something no key does. The keys' order puts the most used first, but the way to
        # every key and the way out are kept whenever they fit: a newcomer at 120 columns found no "q Quit".
        kept = {n for n, (k, _) in enumerate(parts) if k.action in _ALWAYS_SHOWN}
        reserved = sum(parts[n][1].cell_len for n in kept)
        if reserved > room or sum(p.cell_len for _, p in parts) <= room:
            kept, reserved = set(), 0
        drawn: list[Key] = []
        full = False  # past the first key left out, only the kept ones are still drawn
        for n, (k, part) in enumerate(parts):
            x = line.cell_len
            if n in kept:
                line.append_text(part)
                reserved -= part.cell_len
            elif not full and x + part.cell_len + reserved <= room:
                line.append_text(part)
            else:
                full = True
            drawn.append(k._replace(x=x, end=line.cell_len))  # left out: listed, with no cell of its own
        line.pad_right(room - line.cell_len)
        line.append_text(tail)
        self.keys = drawn + right
        self.drawn += 1
        return line

    def key_at(self, x: int) -> Key | None:
        return next((k for k in self.keys if k.x <= x < k.end), None)

    def visible(self) -> list[Key]:
        """The keys with cells on screen (the rest were cut at the right)."""
        return [k for k in self.keys if k.end > k.x]

    def on_mouse_move(self, event: events.MouseMove) -> None:
        found = self.key_at(event.x)
        index = self.keys.index(found) if found is not None else None
        if index != self._hover:
            self._hover = index
            # As text: a tooltip string would be read as markup.
            self.tooltip = Text(found.tooltip) if found is not None and found.tooltip else None
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        found = self.key_at(event.x)
        if found is None:
            return
        if found.disabled:
            self.app.bell()
        else:
            self.app.simulate_key(found.key)
