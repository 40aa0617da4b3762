"""The Chat tab: talk to the embedded agent; its replies stream in, its memory writes wait as cards to decide.

A plugin pane (registered in memtui/tui/panes.py; messages in memtui/tui/messages.py): the app opens it on `c`
and forwards `ProposalsChanged`, on which cards decided elsewhere (the review panel, `memtui queue`) show their
outcome. The turn runs as an async worker consuming `ChatSession.turn` events (memtui/agent/events.py); decisions run in
thread workers and post `Decided` to the app itself (the chat hears `CardDecided`), so a closed tab loses none. Escape
cancels a running turn.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Collapsible, Input, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from memtui.core.writing.memory import Memory, NotFound, default_actor
from memtui.core.writing.proposals import APPLIED, CHANGED_SINCE_SEEN, CONFLICT, PENDING, REJECTED, Proposal
from memtui.tui.diff import DiffView
from memtui.tui.messages import Decided, LogActivity, ProposalsChanged, SessionEnded, approving
from memtui.tui.plain import content, markup_literal, visible

HINT = ("Chat with the agent whose memory is this folder. Its writes to MEMORY.md and topic files wait for you "
        "as cards: a approve · e revise · r reject. enter sends · escape cancels a turn · ↑ from an empty input "
        "focuses the last card.")


@dataclass
class ProposalStatus(Message):
    """A card's proposal as it is now, read in a worker after it left the pending list."""

    proposal: Proposal


@dataclass
class CardDecided(Message):
    """A card's decision came back (the app hears of it by a `Decided` of its own: see `ProposalCardView.decide`)."""

    pid: str


class ProposalCardView(Vertical, can_focus=True):
    """One proposal of this conversation: what, where, the diff, and its status; a/e/r decide it."""

    BINDINGS = [
        Binding("a", "approve", "Approve", id="chat.card.approve", tooltip="Apply this proposal to memory"),
        Binding("e", "revise", "Revise", id="chat.card.revise", tooltip="Edit the entry, then approve it"),
        Binding("r", "reject", "Reject", id="chat.card.reject", tooltip="Reject it, with a reason for the agent"),
    ]

    def __init__(self, memory: Memory, card: Any) -> None:
        super().__init__(classes="chat-card")
        self.memory = memory
        self.card = card
        self.status = PENDING
        self.outcome = ""
        self.under_way = False  # a decision from this card has not come back yet
        # The app as a decision began: its thread finds the app through the card's parents, and a card whose tab
        # was closed meanwhile has none.
        self.host: Any = None

    def compose(self) -> ComposeResult:
        c = self.card
        where = c.file + (f" § {c.section}" if c.section else "")
        yield Static(Text.assemble((visible(c.id), "bold"), visible(f" · {c.action} {where}")),
                     classes="chat-card-title")
        if c.entry or c.replaces:
            yield Static(content(c.entry or c.replaces), classes="chat-card-entry")
        yield DiffView(c.diff, classes="chat-card-diff")  # as tall as its diff, up to 14 rows (chat.tcss)
        yield Static(content(self._status_text()), classes="chat-card-status")

    def _status_text(self) -> str:
        if self.status == PENDING:
            return "pending — a approve · e revise · r reject"
        return self.outcome

    @property
    def open(self) -> bool:
        return self.status in (PENDING, CONFLICT)

    def show_decision(self, proposal: Proposal | None, result_status: str | None = None,
                      message: str = "") -> None:
        """Show what became of the proposal (from the queue, or from a decision's result)."""
        if proposal is not None:
            self.status = proposal.status
            by = proposal.decided_by or "a person"
            self.outcome = {
                APPLIED: f"approved by {by}" + (" (revised)" if proposal.reason and "revised" in proposal.reason
                                                else ""),
                REJECTED: f"rejected by {by}: {proposal.reason}",
                CONFLICT: f"conflict: {proposal.reason}",
            }.get(proposal.status, proposal.status)
        elif result_status is not None:
            self.outcome = f"{result_status}: {message}"
        self.set_class(self.status != PENDING, "-decided")
        self.set_class(self.status == REJECTED, "-rejected")
        self.query_one(".chat-card-status", Static).update(content(self._status_text()))

    def _by(self) -> str:
        return getattr(self.host or self.app, "by", None) or default_actor()

    def _proposal(self) -> Proposal | None:
        try:
            return self.memory.get(self.card.id)
        except NotFound as exc:
            self.notify(str(exc), severity="error")
            return None

    def _claim(self) -> bool:
        """Start a decision on this card's proposal, unless one is under way: from this card (a second `a` before
        the first came back would act on it again, and be refused as already applied) or, in memtui's app, from
        the review panel."""
        if not self._idle():
            return False
        self.host = self.app
        claim = getattr(self.host, "claim_decision", None)  # the app's; a host without it has the card's alone
        if claim is not None and not claim(self.card.id):
            return False
        self.under_way = True
        return True

    def _idle(self) -> bool:
        """No decision from this card is under way; else says so (before a dialog opens for nothing)."""
        if self.under_way:
            self.notify(f"{self.card.id} is being decided", markup=False)
        return not self.under_way

    def _release(self) -> None:
        self.under_way = False
        release = getattr(self.host or self.app, "release_decision", None)
        if release is not None:
            release(self.card.id)

    def action_approve(self) -> None:
        if self.open and self._claim():
            self.post_message(LogActivity("approve", approving(self.card), self._by(), self.card.file))
            self.decide("approve")

    def redraw(self, p: Proposal) -> None:
        """Draw the card as proposal `p` is now (it changed since it was drawn): its decisions bind to this."""
        from memtui.agent.events import ProposalCard

        self.card = ProposalCard(p.id, p.action, p.file, p.section, p.entry, p.replaces, p.diff, p.status,
                                 list(p.warnings), p.digest())
        self.refresh(recompose=True)

    def _as_drawn(self, p: Proposal) -> bool:
        """Is `p` the proposal this card drew? Else the card is drawn again as it is now, and the person told."""
        if self.card.digest is None or p.digest() == self.card.digest:
            return True
        self.redraw(p)
        self.notify(f"{p.id} {CHANGED_SINCE_SEEN}: the card now shows it as it is", severity="warning", markup=False)
        return False

    def action_revise(self) -> None:
        from memtui.tui.dialogs import ReviseScreen

        p = self._proposal() if self.open and self._idle() else None
        if p is None or not self._as_drawn(p):
            return

        def done(result: Any) -> None:
            if result is not None:
                self.post_message(Decided("revise", p.id, result))

        self.app.push_screen(ReviseScreen(self.memory, p, self._by()), done)

    def action_reject(self) -> None:
        from memtui.tui.dialogs import RejectScreen

        p = self._proposal() if self.open and self._idle() else None
        if p is None or not self._as_drawn(p):
            return

        def done(reason: str | None) -> None:
            if reason and self._claim():
                self.decide("reject", reason)

        self.app.push_screen(RejectScreen(p), done)

    @work(thread=True, group="chat-decide", exit_on_error=False)
    def decide(self, verb: str, reason: str | None = None) -> None:
        try:
            # Bound to the proposal as this card drew it: one changed since is refused, and the card redrawn.
            if verb == "reject":
                result = self.memory.reject(self.card.id, reason=reason or "", by=self._by(), seen=self.card.digest)
            else:
                result = self.memory.approve(self.card.id, by=self._by(), seen=self.card.digest)
        except BaseException:
            self._release()  # no decision comes back (the failure is shown): the keys act on it again
            raise
        # To the app itself, not up through the chat: a Chat tab closed while the decision ran drops what its
        # widgets are sent, and the app held the proposal as "being decided" (its keys refused) until it quit.
        (self.host or self.app).post_message(Decided(verb, self.card.id, result))
        self.post_message(CardDecided(self.card.id))


class ChatPane(Vertical):
    """The conversation above, the input below."""


    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel turn", id="chat.cancel",
                tooltip="Stop the agent's current turn (what it already wrote stays proposed)"),
    ]

    def __init__(self, memory: Memory) -> None:
        super().__init__()
        self.memory = memory
        self.session: Any = None  # a ChatSession, made on the first message (the SDK loads then, not before)
        self.turn_worker: Any = None
        self._stream: MarkdownStream | None = None
        self._reply: Markdown | None = None
        self._tools: dict[str, Collapsible] = {}

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="chat-log"):
            yield Static(HINT, classes="chat-hint")
        yield Input(placeholder="Message the agent… (enter sends)", id="chat-input")

    def on_mount(self) -> None:
        self.log_view.anchor()

    def focus(self, scroll_visible: bool = True) -> ChatPane:
        """Focus the input; the app may ask before the pane has composed, so then ask again after a refresh."""
        inputs = self.query("#chat-input")
        if inputs:
            inputs.first(Input).focus(scroll_visible)
        else:
            self.call_after_refresh(self.focus, scroll_visible)
        return self

    @property
    def log_view(self) -> VerticalScroll:
        return self.query_one("#chat-log", VerticalScroll)

    @property
    def cards(self) -> list[ProposalCardView]:
        return list(self.query(ProposalCardView))

    @property
    def running(self) -> bool:
        return self.turn_worker is not None and self.turn_worker.is_running

    # sending ------------------------------------------------------------------------------------------------
    @on(Input.Submitted, "#chat-input")
    async def send(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.running:
            self.notify("The agent is still answering: wait, or press escape to cancel", severity="warning")
            return
        event.input.value = ""
        await self.log_view.mount(Static(content(text), classes="chat-user"))
        self.turn_worker = self.run_turn(text)

    def on_key(self, event: Any) -> None:
        focused = self.app.focused
        if event.key == "up" and isinstance(focused, Input) and not focused.value:
            pending = [c for c in self.cards if c.open] or self.cards
            if pending:
                pending[-1].focus()
                event.stop()

    @work(exclusive=True, group="chat-turn", exit_on_error=False)
    async def run_turn(self, text: str) -> None:
        if self.session is None:
            from memtui.agent.session import ChatSession

            self.session = ChatSession(self.memory)
        try:
            async with aclosing(self.session.turn(text)) as events:
                async for event in events:
                    await self.show(event)
        except asyncio.CancelledError:
            await self._end_reply()
            await self.log_view.mount(Static("Turn cancelled; send your message again to retry.",
                                             classes="chat-note"))
            raise
        except Exception as exc:  # the chat must never take the app down
            await self._end_reply()
            await self.log_view.mount(Static(content(f"The chat failed: {exc}"), classes="chat-error"))

    def action_cancel_turn(self) -> None:
        """Escape cancels a running turn; with none, it is the app's (it leaves the input: `q` and `?` are keys
        again), not a way back into the input it came from."""
        if not self.running:
            from textual.actions import SkipAction

            raise SkipAction()
        self.turn_worker.cancel()

    # showing events -----------------------------------------------------------------------------------------
    async def show(self, event: Any) -> None:
        from memtui.agent import events as ev

        log = self.log_view
        if isinstance(event, ev.TextDelta):
            if self._stream is None:
                self._reply = Markdown(classes="chat-reply")
                await log.mount(self._reply)
                self._stream = Markdown.get_stream(self._reply)
            await self._stream.write(visible(event.text))  # Markdown, but never an ESC byte to the terminal
        elif isinstance(event, ev.ToolCall):
            await self._end_reply()
            details = Static(content(json.dumps(event.input, ensure_ascii=False, indent=1)))
            # A title is read as markup: the model chose the name and the arguments, so they are escaped.
            title = markup_literal(f"⚙ {event.name} {_brief(event.input)}", newlines=False)
            tool = Collapsible(details, title=title, collapsed=True, classes="chat-tool")
            self._tools[event.id] = tool
            await log.mount(tool)
        elif isinstance(event, ev.ToolResult):
            tool = self._tools.get(event.id)
            if tool is not None:
                first = event.text.splitlines()[0] if event.text else ""
                if len(first) > 80 or len(event.text.splitlines()) > 1:  # the whole result is in the line's details
                    first = first[:79] + "…"
                tool.title = f"{tool.title} → {markup_literal(first, newlines=False)}"
                tool.set_class(event.is_error, "-error")
                await tool.query_one("Contents").mount(Static(content(event.text), classes="chat-note"))
        elif isinstance(event, ev.ProposalCard):
            await log.mount(ProposalCardView(self.memory, event))
        elif isinstance(event, ev.Decision):
            await log.mount(Static(content(f"↳ told the agent: {event.text}"), classes="chat-note"))
        elif isinstance(event, ev.Compacted):
            await log.mount(Static("Older turns were summarised, after the agent saved what matters.",
                                   classes="chat-note"))
        elif isinstance(event, ev.Error):
            await self._end_reply()
            await log.mount(Static(content(f"⚠ {event.message}"), classes="chat-error"))
        elif isinstance(event, ev.TurnEnd):
            await self._end_reply()

    async def _end_reply(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()
        self._reply = None

    # decisions ----------------------------------------------------------------------------------------------
    @on(CardDecided)
    def _card_decided(self, message: CardDecided) -> None:
        message.stop()  # the app had a `Decided` of its own
        self._decided(message)

    @on(Decided)
    def _decided(self, message: Decided | CardDecided) -> None:
        """Update the card; a revise's `Decided` goes on to the app, which notifies and syncs the review panel."""
        for card in self.cards:
            if card.card.id == message.pid:
                card.under_way = False
                self._refresh(card)
                if card is self.app.focused:
                    self._focus_after(card)

    def _focus_after(self, card: ProposalCardView) -> None:
        """After a decision on the focused card the keys go to the next open card the person can see (after it,
        else before it), without scrolling: the chat keeps its place (the first open card was focused, and the
        chat jumped up to it). With none on screen, to the input, below the log (a/e/r are then letters): a card
        off screen must not take a key meant for what is seen."""
        cards = self.cards
        at = cards.index(card)
        seen = self.log_view.region
        for other in [c for c in cards[at + 1:] if c.open] + [c for c in reversed(cards[:at]) if c.open]:
            title = other.region
            if title and seen.contains(title.x, title.y):
                other.focus(scroll_visible=False)
                return
        self.focus()

    def on_proposals_changed(self, message: ProposalsChanged) -> None:
        pending = {p.id for p in message.proposals}
        for card in self.cards:
            if card.status == PENDING and card.card.id not in pending:
                self._refresh(card)

    @work(thread=True, group="chat-status", exit_on_error=False)
    def _refresh(self, card: ProposalCardView) -> None:
        try:
            self.post_message(ProposalStatus(self.memory.get(card.card.id)))
        except NotFound:
            pass

    def on_proposal_status(self, message: ProposalStatus) -> None:
        p = message.proposal
        for card in self.cards:
            if card.card.id == p.id:
                if p.open and card.card.digest is not None and p.digest() != card.card.digest:
                    card.redraw(p)  # changed since drawn (a decision on it was refused): drawn as it is now
                card.show_decision(p)

    async def on_unmount(self) -> None:
        if self.session is not None:
            session, self.session = self.session, None
            await asyncio.to_thread(session.close)
            await session.aclose()
            # The session is over: the app offers a consolidation if it left MEMORY.md over its caps.
            self.app.post_message(SessionEnded())


def _brief(args: dict[str, Any]) -> str:
    """The tool call's arguments in a few words, for the collapsed title."""
    parts = [str(v) for k, v in args.items() if k in ("path", "section", "action", "query", "name", "text")]
    text = " ".join(parts)
    return text if len(text) <= 60 else text[:59] + "…"
