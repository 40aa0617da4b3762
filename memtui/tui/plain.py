"""Untrusted text for the screen: shown as data (never markup), with control characters made visible.

Everything a memory file, a proposal, an actor, the config, a search or a model reply holds is hostile: as
Textual markup `[/]` crashes a widget and `[@click=app.quit]` runs an action, and an ESC byte written to the
terminal is an escape sequence. Widgets get `Text`/`Content` built here, never an f-string with the data in it.
Each replacement is one character for one, so offsets found in the original (a tag, a date) still line up.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

# C0 controls show as their Unicode control pictures (ESC as ␛), DEL as ␡; C1 controls (0x80-0x9f, which some
# terminals read as 8-bit escapes) as �; the bidi overrides, embeddings, isolates and marks that reorder what
# a line appears to say (Trojan Source) as ⇄. Tab and newline stay unless the text must be one line: a widget
# that lays out lines (Static, the viewer) expands tabs.
_VISIBLE = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE[0x7F] = 0x2421
_VISIBLE.update({c: 0xFFFD for c in range(0x80, 0xA0)})
_VISIBLE.update({c: 0x21C4 for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


_ONE_LINE = {**_VISIBLE, 0x0A: 0x2424, 0x09: 0x20}


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` with every control character replaced by a visible symbol. Without `newlines` it is one line: a
    newline shows as ␤ and a tab as a space (a one-line widget draws its text as it is, and a raw tab would move
    the terminal's cursor)."""
    return text.translate(_VISIBLE if newlines else _ONE_LINE)


def plain(text: str, style: str | object = "", *, newlines: bool = True) -> Text:
    """A rich `Text` of untrusted `text`: literal, controls visible."""
    return Text(visible(text, newlines=newlines), style=style)  # type: ignore[arg-type]


def content(text: str, *, newlines: bool = True) -> Content:
    """A Textual `Content` of untrusted `text` (for titles, labels and notifications that take Content)."""
    return Content(visible(text, newlines=newlines))



def markup_literal(text: str, *, newlines: bool = True) -> str:
    """Markup that reads as `text`, for the few places that take only a markup string (a Collapsible's title).

    Every `[` is escaped (Textual drops the one backslash before it and keeps other backslashes as they are), not
    only those that look like a tag as `textual.markup.escape` does: cut short, `…[/` is still a closing tag."""
    return visible(text, newlines=newlines).replace("[", "\\[")
