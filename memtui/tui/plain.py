"""Untrusted text for the screen: shown as data (never markup), with control characters made visible.

Everything a memory file, a proposal, an actor, the config, a search or a model reply holds is hostile: as
Textual markup `[/]` crashes a widget and `[@click=app.quit]` runs an action, and an ESC byte written to the
terminal is an escape sequence. Widgets get `Text`/`Content` built here, never an f-string with the data in it.
Controls are made visible by `memtui.core.basics.visible`, which the CLI shares: `plain` one character for one (a
viewer's offsets still line up), `revealed` naming each hidden character (`⟨U+E0041⟩`) where a person decides.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

from memtui.core.basics.visible import reveal, shown_name, visible

__all__ = ["content", "file_name", "markup_literal", "plain", "revealed", "visible"]


def plain(text: str, style: str | object = "", *, newlines: bool = True) -> Text:
    """A rich `Text` of untrusted `text`: literal, controls visible."""
    return Text(visible(text, newlines=newlines), style=style)  # type: ignore[arg-type]


def revealed(text: str, style: str | object = "", *, newlines: bool = True) -> Text:
    """A rich `Text` of untrusted `text` for review: literal, controls visible, every hidden character named."""
    return Text(reveal(text, newlines=newlines), style=style)  # type: ignore[arg-type]


def file_name(rel: str, style: str | object = "") -> Text:
    """A file name as a person must see it to tell it from another (`MEMORY.md⟨U+0020⟩`, see `shown_name`)."""
    return Text(shown_name(rel), style=style)  # type: ignore[arg-type]


def content(text: str, *, newlines: bool = True) -> Content:
    """A Textual `Content` of untrusted `text` (for titles, labels and notifications that take Content)."""
    return Content(visible(text, newlines=newlines))


def markup_literal(text: str, *, newlines: bool = True) -> str:
    """Markup that reads as `text`, for the few places that take only a markup string (a Collapsible's title).

    Every `[` is escaped (Textual drops the one backslash before it and keeps other backslashes as they are), not
    only those that look like a tag as `textual.markup.escape` does: cut short, `…[/` is still a closing tag."""
    return visible(text, newlines=newlines).replace("[", "\\[")
