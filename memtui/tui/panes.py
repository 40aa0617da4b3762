"""The registry of plugin panes a tab can hold (Today, Search, Chat): kind → title and how to make one.

A pane's module is imported when the pane first opens, not at start-up (Chat brings the agent, Search the index).
The app sends every open pane `MemoryChanged` and `ProposalsChanged` (memtui/tui/messages.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from textual.widget import Widget

    from memtui.core.memory import Memory


@dataclass(frozen=True)
class PaneKind:
    title: str
    make: Callable[[Memory], Widget]
    css: str  # its stylesheet in memtui/tui/, read as the first pane of its kind opens (not at start)


def _today(memory: Memory) -> Widget:
    from memtui.tui.today import TodayPane

    return TodayPane(memory)


def _search(memory: Memory) -> Widget:
    from memtui.tui.search import SearchPane

    return SearchPane(memory)


def _chat(memory: Memory) -> Widget:
    from memtui.tui.chat import ChatPane

    return ChatPane(memory)


PANES: dict[str, PaneKind] = {
    "today": PaneKind("Today", _today, "today.tcss"),
    "search": PaneKind("Search", _search, "search.tcss"),
    "chat": PaneKind("Chat", _chat, "chat.tcss"),
}
