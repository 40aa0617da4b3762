"""The app as the widgets and the palette it wires use it, named without importing the app (which imports them).

`MemtuiApp` (memtui/tui/app.py) is the one `Host`; a widget that needs more of it adds the member here, so what the
parts ask of the app stays one short list instead of an import that runs back up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ContextManager, Protocol

if TYPE_CHECKING:
    from textual.actions import ActionParseResult

    from memtui.core.writing.memory import Memory


class Host(Protocol):
    """What a widget or command provider may ask of the app it runs in."""

    memory: Memory

    @property
    def available_themes(self) -> dict[str, Any]: ...

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any: ...

    def suspend(self) -> ContextManager[None]: ...

    def select_when_listed(self, pid: str, notice: str = "", after_hash: str | None = None) -> None: ...

    async def run_chosen_action(self, action: ActionParseResult) -> bool: ...
