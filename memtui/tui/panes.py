"""The registry of plugin panes a tab can hold (Today, Search, Chat, Next session): kind → title and how to make one.

A pane's module is imported when the pane first opens, not at start-up (Chat brings the agent, Search the index).
The app sends every open pane `MemoryChanged` and `ProposalsChanged` (memtui/tui/messages.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from textual.widget import Widget

    from memtui.core.writing.memory import Memory


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


def _next_session(memory: Memory) -> Widget:
    from memtui.tui.next_session import NextSessionPane

    return NextSessionPane(memory)


PANES: dict[str, PaneKind] = {
    "today": PaneKind("Today", _today, "today.tcss"),
    "search": PaneKind("Search", _search, "search.tcss"),
    "chat": PaneKind("Chat", _chat, "chat.tcss"),
    "next_session": PaneKind("Next session", _next_session, "next_session.tcss"),
}
