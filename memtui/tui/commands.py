"""memtui's commands for the command palette (ctrl+p): open a file, decide proposals, switch theme, …"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Callable

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from memtui.tui.plain import markup_literal, visible

if TYPE_CHECKING:
    from memtui.tui.app import MemtuiApp

MAX_FILES = 2000  # files offered by name; a huge memory is better searched with /


def _due(app: MemtuiApp) -> list[str]:
    from memtui.core.consolidate import consolidation_due
    from memtui.core.store import StoreError

    try:
        return consolidation_due(app.memory)
    except (StoreError, OSError):  # the palette still opens when MEMORY.md cannot be read (a store that is down)
        return []


def _memories(app: MemtuiApp) -> list[tuple[str, str]]:
    """(prefix, url) of the other memories on this Redis server or cluster; none for a folder."""
    from memtui.core.store import StoreError

    try:
        return app.memory.store.other_memories()
    except (StoreError, OSError):
        return []


class MemtuiCommands(Provider):
    """Actions, themes and files, matched fuzzily with the palette's own matcher."""

    async def startup(self) -> None:
        app: MemtuiApp = self.app  # type: ignore[assignment]
        self.files = await asyncio.to_thread(lambda: app.memory.files()[:MAX_FILES])
        self.due = await asyncio.to_thread(_due, app)
        self.memories = await asyncio.to_thread(_memories, app)

    def commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app: MemtuiApp = self.app  # type: ignore[assignment]
        out: list[tuple[str, Callable[[], object], str]] = [
            ("Approve the selected proposal", app.action_approve, "apply it and commit to git"),
            ("Revise the selected proposal", app.action_revise, "edit the entry, then approve"),
            ("Reject the selected proposal", app.action_reject, "asks for a reason"),
            ("Approve all pending proposals", app.action_approve_all, "asks to confirm"),
            ("Toggle raw view", app.action_toggle_raw, "the file's source, with line numbers"),
            ("Diff against last commit", app.action_diff_commit, "what changed since git last saw the file"),
            ("Today", partial(app.action_open_pane, "today"), "today's log and changes"),
            ("Search memory", partial(app.action_open_pane, "search"), "grep the memory"),
            ("Chat with the agent", partial(app.action_open_pane, "chat"), "the embedded agent"),
            ("Show keys", app.action_help, "every key and its id"),
            ("Consolidate section…", app.action_consolidate,
             "one reviewed rewrite of each MEMORY.md section over its cap"),
        ]
        for section in getattr(self, "due", []):
            out.append((f"Consolidate section: {section}", partial(app.action_consolidate, section),
                        "over its cap: archive struck history, merge near-duplicates (reviewed)"))
        for name in sorted(app.available_themes):
            out.append((f"Switch theme: {name}", partial(app.switch_theme, name), "theme"))
        for prefix, url in getattr(self, "memories", []):
            # A prefix is any key name someone wrote to the server: shown as text, like every prompt here.
            out.append((f"Switch memory: {prefix}", partial(app.switch_memory, url),
                        "open another memory on this Redis server or cluster"))
        for rel in getattr(self, "files", []):
            out.append((f"Open file: {rel}", partial(app.open_file, rel), "open in a viewer tab"))
        return out

    # A command's name holds file and section names (data): it is shown as Content, never read as markup (the
    # palette reads a plain string prompt, and always the help, as markup).
    async def discover(self) -> Hits:
        for name, run, help_text in self.commands():
            if not name.startswith("Open file:"):
                yield DiscoveryHit(Content(visible(name, newlines=False)), run, text=name,
                                   help=markup_literal(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, run, help_text in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, highlight(matcher, name), run, text=name, help=markup_literal(help_text))


def highlight(matcher: Matcher, name: str) -> Content:
    """`name` as literal Content with the query's fuzzy match marked (Matcher.highlight would parse markup)."""
    out = Content(visible(name, newlines=False))
    _, offsets = matcher.fuzzy_search.match(matcher.query, name)
    for at in offsets:
        if not name[at].isspace():
            out = out.stylize(matcher.match_style, at, at + 1)
    return out
