"""The Next session tab: the context the next agent session receives (`memtui context`, the SessionStart hook), as
it receives it, with the budget used, what was cut, and how the proposal selected in the review would change it.

A plugin pane (memtui/tui/panes.py). The context is built in a thread (it reads MEMORY.md, two daily logs and the
live scratch notes, and plans the selected proposal against the reviewed files in memory, writing nothing:
memtui/core/recall/next_session.py); it is built again as memory or the queue changes, and as the selection moves. Every
line of it is an agent's or a person's text: drawn as data, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from memtui.core.recall.next_session import NextSession, next_session
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import Proposal
from memtui.tui.diff import DiffView
from memtui.tui.messages import MemoryChanged, ProposalsChanged
from memtui.tui.plain import revealed

TITLE = "Next session · the context as `memtui context` and the SessionStart hook give it"


class NextSessionPane(VerticalScroll, can_focus=True):
    """The context as the next session receives it, its budget and cuts, and the selected proposal's effect: one
    scroll, so at 80x24 the context reads below the effect instead of getting no rows at all."""

    @dataclass
    class Built(Message):
        view: NextSession | None
        error: str | None = None

    def __init__(self, memory: Memory, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.memory = memory
        self.view: NextSession | None = None
        self.proposal: Proposal | None = None

    def compose(self) -> ComposeResult:
        yield Static(TITLE, id="next-title")
        yield Static("Building the context…", id="next-summary")
        yield Static("", id="next-effect")
        yield DiffView(empty="", id="next-diff")
        yield Static("", id="next-text")

    def on_mount(self) -> None:
        review = getattr(self.app, "review", None)
        self.proposal = getattr(review, "selected", None)
        self.build()

    def show_for(self, p: Proposal | None) -> None:
        """The review's selection moved to `p`: its effect is worked out (again) when it is another proposal."""
        if (p and (p.id, p.digest())) != (self.proposal and (self.proposal.id, self.proposal.digest())):
            self.proposal = p
            self.build()

    def on_memory_changed(self, _: MemoryChanged) -> None:
        self.build()

    def on_proposals_changed(self, _: ProposalsChanged) -> None:
        self.build()

    @work(thread=True, exclusive=True, group="next-session", exit_on_error=False)
    def build(self) -> None:
        from memtui.core.storage.store import StoreError

        p = self.proposal
        try:
            view = next_session(self.memory, p)
        except (StoreError, OSError, ValueError) as exc:
            self.post_message(self.Built(None, f"the context could not be built: {exc}"))
            return
        self.post_message(self.Built(view))

    def on_next_session_pane_built(self, message: Built) -> None:
        summary = self.query_one("#next-summary", Static)
        if message.view is None:
            summary.update(revealed(message.error or ""))
            return
        view = self.view = message.view
        summary.update(revealed("\n".join([view.budget_line(), *view.cut_lines()])))
        effect = view.effect_lines()
        self.query_one("#next-effect", Static).update(revealed("\n".join(effect)))
        diff = self.query_one("#next-diff", DiffView)
        diff.display = bool(view.diff)
        diff.show(view.diff, empty="")
        self.query_one("#next-text", Static).update(revealed(view.now.text))
