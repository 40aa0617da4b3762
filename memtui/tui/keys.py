"""Keys more than one widget declares, and the footer that shows the keys that apply now."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

# The app's `?` (same id, so a rebinding in [keys] moves it too), also first among the keys of a widget whose own
# keys make the footer wider than the screen: the footer is cut at its end, where the app's `? Keys` is.
HELP_FIRST = Binding("question_mark", "app.help", "Keys", id="help", tooltip="Show every key")


class KeyFooter(Footer):
    """Textual's footer, rebuilt only when the keys it shows change. Textual's rebuilds every key widget, and so
    lays out the whole screen, whenever the screen's bindings may have changed: on every focus move, every
    selection in the review list, and every return from help or a dialog, though the keys were the same; and it
    rebuilt itself twice more under every dialog, hidden."""

    _shown: tuple[Any, ...] | None = None

    def _keys(self, screen: Screen) -> tuple[Any, ...]:
        return (self.compact, self.show_command_palette, tuple(
            (key, b.key, b.action, b.description, b.tooltip, b.show, b.group, enabled, tooltip,
             self.app.get_key_display(b)) for key, (_node, b, enabled, tooltip) in screen.active_bindings.items()))

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        self._shown = self._keys(self.screen) if keys else None  # nothing shown yet (bindings not ready): not kept
        yield from keys

    def bindings_changed(self, screen: Screen) -> None:
        if self._shown is not None and self.screen is not self.app.screen:
            return  # under help or a dialog, unseen (its keys are asked there): compared again when it is back on top
        if (self._shown is not None and screen is self.screen and self.is_attached and screen.app.app_focus
                and self._keys(screen) == self._shown):
            return
        super().bindings_changed(screen)
