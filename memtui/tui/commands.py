"""memtui's commands for the command palette (ctrl+p): open a file, decide proposals, switch theme, …

Each command is an action of the app, run with `run_action` like a key's: one way in for keys and the palette.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable, cast

from textual.actions import ActionParseResult
from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content
from textual.screen import Screen
from textual.style import Style

from memtui.tui.plain import markup_literal, visible

if TYPE_CHECKING:
    from memtui.tui.host import Host

MAX_FILES = 2000  # files offered by name; a huge memory is better searched with /


def _due(app: Host) -> list[str]:
    from memtui.core.storage.store import StoreError

    try:
        return app.memory.consolidation_due()
    except (StoreError, OSError):  # the palette still opens when MEMORY.md cannot be read (a store that is down)
        return []


def _memories(app: Host) -> list[tuple[str, str]]:
    """(prefix, url) of the other memories on this Redis server or cluster; none for a folder."""
    from memtui.core.storage.store import StoreError

    try:
        return app.memory.store.other_memories()
    except (StoreError, OSError):
        return []


Command = tuple[str, Callable[[], Awaitable[bool]], str]


class MemtuiCommands(Provider):
    """Actions, themes and files, matched fuzzily with the palette's own matcher."""

    def __init__(self, screen: Screen[Any], match_style: Style | None = None) -> None:
        super().__init__(screen, match_style)
        # Read in `startup` (in threads); empty until then, and when the memory cannot say.
        self.files: list[str] = []
        self.due: list[str] = []
        self.memories: list[tuple[str, str]] = []

    @property
    def memtui(self) -> Host:
        return cast("Host", self.app)

    async def startup(self) -> None:
        app = self.memtui
        self.files = await asyncio.to_thread(lambda: app.memory.files()[:MAX_FILES])
        self.due = await asyncio.to_thread(_due, app)
        self.memories = await asyncio.to_thread(_memories, app)

    def action(self, name: str, *params: object) -> Callable[[], Awaitable[bool]]:
        """The app's action `name`, given `params` as values: a file or theme name is never parsed as an action
        string."""
        parsed: ActionParseResult = ("", name, params)
        return partial(self.memtui.run_chosen_action, parsed)

    def commands(self) -> list[Command]:
        act = self.action
        out: list[Command] = [
            ("Approve the selected proposal", act("approve"), "apply it and commit to git"),
            ("Revise the selected proposal", act("revise"), "edit the entry, then approve"),
            ("Reject the selected proposal", act("reject"), "asks for a reason"),
            ("Approve all pending proposals", act("approve_all"), "asks to confirm"),
            ("Toggle raw view", act("toggle_raw"), "the file's source, with line numbers"),
            ("Diff against last commit", act("diff_commit"), "what changed since git last saw the file"),
            ("Today", act("open_pane", "today"), "today's log and changes"),
            ("Search memory", act("open_pane", "search"), "grep the memory"),
            ("Chat with the agent", act("open_pane", "chat"), "the embedded agent"),
            ("Next session: context and budget", act("open_pane", "next_session"),
             "what the next agent session loads, what was cut, and how the selected proposal changes it"),
            ("Approve the selected add as a revise of what it contradicts", act("revise_of_current"),
             "the current entry is struck as superseded, the new one added below it"),
            ("Show keys", act("help"), "every key and its id"),
            ("Sync with the git remote", act("sync_remote"),
             "fetch, queue incoming changes for review, push what was approved"),
            ("Consolidate section…", act("consolidate"),
             "one reviewed rewrite of each MEMORY.md section over its cap"),
        ]
        for section in self.due:
            out.append((f"Consolidate section: {section}", act("consolidate", section),
                        "over its cap: archive struck history, merge near-duplicates (reviewed)"))
        for name in sorted(self.memtui.available_themes):
            out.append((f"Switch theme: {name}", act("switch_theme", name), "theme"))
        for prefix, url in self.memories:
            # A prefix is any key name someone wrote to the server: shown as text, like every prompt here.
            out.append((f"Switch memory: {prefix}", act("switch_memory", url),
                        "open another memory on this Redis server or cluster"))
        for rel in self.files:
            out.append((f"Open file: {rel}", act("open_file", rel), "open in a viewer tab"))
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
