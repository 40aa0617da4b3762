"""Keys more than one widget declares, and the footer that shows the keys that apply now."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# The app's `?` (same id, so a rebinding in [keys] moves it too), also first among the keys of a widget whose own
# keys make the footer wider than the screen: the footer is cut at its end, where the app's `? Keys` is.
HELP_FIRST = Binding("question_mark", "app.help", "Keys", id="help", tooltip="Show every key")


class KeyFooter(Footer):
    """Textual's footer, rebuilt only when the keys it shows change. Textual's rebuilds every key widget, and so
    lays out the whole screen, whenever the screen's bindings may have changed: on every focus move, every
    selection in the review list, and every return from help or a dialog, though the keys were the same; and it
    rebuilt itself twice more under every dialog, hidden."""

    _shown: tuple[Any, ...] | None = None
    _rebuild_due = False  # a rebuild is asked for: the keys are compared again when it runs, and it runs once

    def _keys(self, screen: Screen) -> tuple[Any, ...]:
        """What the footer draws: the keys it shows (a hidden one, such as the viewer's j and k that come with
        its entries, changes nothing drawn) and the palette's."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return (self.compact, self.show_command_palette, tuple(
            (key, b.key, b.action, b.description, b.tooltip, b.show, b.group, enabled, tooltip,
             self.app.get_key_display(b)) for key, (_node, b, enabled, tooltip) in screen.active_bindings.items()
            if b.show or key == palette))

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        self._shown = self._keys(self.screen) if keys else None  # nothing shown yet (bindings not ready): not kept
        for key in keys:
            if isinstance(key, FooterKey):  # (memtui's bindings have no groups: every key is the footer's child)
                # Born in the style it ends up in: a FooterKey starts compact, its watcher adds the class when it
                # mounts, and the binding to the footer's `compact` (every key's but the palette's) then removes it,
                # each a restyle of the key: three in all, where one will do.
                compact = key.compact if key.has_class("-command-palette") else self.compact
                key.set_reactive(FooterKey.compact, compact)
                key.set_class(compact, "-compact", update=False)
        yield from keys

    def bindings_changed(self, screen: Screen) -> None:
        if self._shown is not None and self.screen is not self.app.screen:
            return  # under help or a dialog, unseen (its keys are asked there): compared again when it is back on top
        if (self._shown is not None and screen is self.screen and self.is_attached and screen.app.app_focus
                and self._keys(screen) == self._shown):
            return
        self._bindings_ready = True
        if not screen.app.app_focus or not (self.is_attached and screen is self.screen):
            return
        # Textual's footer recomposes after the next refresh once for each change: two changes before the first
        # frame built every key twice, after the first frame, and laid out and painted the screen again. One
        # rebuild, if the keys still differ when it runs, and at once: the keys are styled and laid out with the
        # first frame.
        if not self._rebuild_due:
            self._rebuild_due = True
            self.call_later(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_due = False
        if self._shown is not None and self._keys(self.screen) == self._shown:
            return
        await self.recompose()
