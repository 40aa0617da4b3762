"""Key bindings more than one widget declares."""

from __future__ import annotations

from textual.binding import Binding

# The app's `?` (same id, so a rebinding in [keys] moves it too), also first among the keys of a widget whose own
# keys make the footer wider than the screen: the footer is cut at its end, where the app's `? Keys` is.
HELP_FIRST = Binding("question_mark", "app.help", "Keys", id="help", tooltip="Show every key")
