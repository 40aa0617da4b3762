"""The Chat tab (memtui/tui/chat.py) in Pilot, against FakeAnthropic through the real SDK."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Collapsible, Input, Markdown, Static

from memtui import tui
from memtui.agent.session import ChatSession
from memtui.core.writing.memory import Memory
from memtui.tui.chat import ChatPane, ProposalCardView
from support.anthropic_server import FakeAnthropic, error, reply, tool_use

REDIS = "[stated] memtui stores its index in Redis"
SAYS = "We moved: memtui stores its index in Postgres now."
ANSWER = "I proposed a revise of the Projects entry for your review."


class Host(App[None]):
    CSS_PATH = Path(tui.__file__).parent / "chat.tcss"  # the pane's styles, as the app loads them

    def __init__(self, memory: Memory) -> None:
        super().__init__()
        self.memory = memory
        self.decided: list[str] = []

    def compose(self) -> ComposeResult:
        yield ChatPane(self.memory)

    def on_mount(self) -> None:
        self.query_one(ChatPane).focus()

    def on_decided(self, message: Any) -> None:
        self.decided.append(message.pid)


async def until(pilot: Any, condition: Callable[[], Any], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the chat")
        await pilot.pause(0.02)


async def say(pilot: Any, text: str) -> None:
    pane = pilot.app.query_one(ChatPane)
    pane.query_one(Input).value = text
    await pilot.press("enter")


def revise() -> dict[str, Any]:
    return tool_use("memory_update", {"section": "Projects", "action": "revise", "replaces": REDIS,
                                      "entry": "[stated] memtui stores its index in Postgres"})


def notes(pane: ChatPane, cls: str) -> list[str]:
    return [str(s.render()) for s in pane.query(f".{cls}").results(Static)]


@pytest.fixture
def projects(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> Memory:
    mem.update("Projects", "add", REDIS)
    return mem


def use(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in server.env.items():
        monkeypatch.setenv(key, value)


async def test_a_turn_streams_shows_the_card_and_a_approves(projects: Memory,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    mem = projects
    streamed: list[str] = []
    with FakeAnthropic(reply("Let me update that.", revise()), reply(ANSWER, delay=0.05),
                       reply("Thanks for approving.")) as server:
        use(server, monkeypatch)
        app = Host(mem)
        async with app.run_test(size=(100, 50)) as pilot:
            pane = app.query_one(ChatPane)
            await say(pilot, SAYS)
            await until(pilot, lambda: len(pane.query(".chat-reply")) == 2)
            last = list(pane.query(".chat-reply").results(Markdown))[-1]
            while pane.running:  # the second reply streams one word per 50 ms
                streamed.append(last.source)
                await pilot.pause(0.02)
            assert any(0 < len(s) < len(ANSWER) for s in streamed), streamed  # seen part-way
            assert last.source == ANSWER
            assert str(pane.query_one(".chat-user", Static).render()) == SAYS
            tool = pane.query_one(".chat-tool", Collapsible)
            assert tool.collapsed and "memory_update" in tool.title and "Queued as p-0001" in tool.title
            [card] = pane.cards
            assert card.card.id == "p-0001" and "pending" in str(card.query_one(".chat-card-status").render())
            assert "Postgres" in card.card.diff

            card.focus()
            await pilot.press("a")
            await until(pilot, lambda: card.status == "applied")
            assert "approved by wes" in str(card.query_one(".chat-card-status").render())
            assert app.decided == ["p-0001"]  # the decision reaches the app too
            assert "- [stated] memtui stores its index in Postgres" in mem.read_text("MEMORY.md")
            assert app.focused is pane.query_one(Input)

            await say(pilot, "Great")
            await until(pilot, lambda: not pane.running and len(server.requests) == 3)
            await until(pilot, lambda: any("told the agent" in n for n in notes(pane, "chat-note")))
    told = server.requests[2]["messages"][-1]["content"][0]["text"]
    assert "p-0001" in told and "approved by wes" in told


async def test_a_second_a_on_a_card_while_its_approval_is_under_way_does_not_act_again(
        projects: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`a a` on a card: the second came while the first approval was still running and acted on it again (refused
    as already applied, said as "not applied"). While the card's decision is under way it says so instead."""
    import fcntl
    import os

    class Noting(Host):
        notices: list[str] = []

        def notify(self, message: str, **kwargs: Any) -> None:
            self.notices.append(str(message))
            super().notify(message, **kwargs)

    with FakeAnthropic(reply("Let me update that.", revise()), reply(ANSWER)) as server:
        use(server, monkeypatch)
        app = Noting(projects)
        async with app.run_test(size=(100, 50)) as pilot:
            pane = app.query_one(ChatPane)
            await say(pilot, SAYS)
            await until(pilot, lambda: len(pane.cards) == 1 and not pane.running)
            [card] = pane.cards
            card.focus()
            fd = os.open(projects.store.root / ".memtui" / "lock", os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX)  # another process holds the memory: the approval waits for it
            try:
                await pilot.press("a")
                await until(pilot, lambda: card.under_way)
                await pilot.press("a", "r")
                await pilot.pause(0.2)
                assert app.notices.count("p-0001 is being decided") == 2, app.notices
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            await until(pilot, lambda: card.status == "applied")
            assert app.decided == ["p-0001"] and not card.under_way
            assert not [n for n in app.notices if "not applied" in n]


async def test_r_rejects_with_a_reason_through_the_dialog(projects: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(reply(revise()), reply("Queued.")) as server:
        use(server, monkeypatch)
        app = Host(projects)
        async with app.run_test(size=(100, 50)) as pilot:
            pane = app.query_one(ChatPane)
            await say(pilot, SAYS)
            await until(pilot, lambda: pane.cards and not pane.running)
            await pilot.press("up")  # from the empty input to the last card
            assert app.focused is pane.cards[0]
            await pilot.press("r")
            await until(pilot, lambda: app.screen is not app.screen_stack[0])
            await pilot.press(*"wrong index")
            await pilot.press("enter")
            await until(pilot, lambda: pane.cards[0].status == "rejected")
    assert projects.get("p-0001").reason == "wrong index"


async def test_errors_show_in_the_chat_and_the_next_message_works(mem: Memory,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(error(529), reply("Here now.")) as server:
        use(server, monkeypatch)
        app = Host(mem)
        async with app.run_test(size=(100, 40)) as pilot:
            pane = app.query_one(ChatPane)
            pane.session = ChatSession(mem, max_retries=0)
            await say(pilot, "hello?")
            await until(pilot, lambda: notes(pane, "chat-error"))
            assert "overloaded (529)" in notes(pane, "chat-error")[0]
            await say(pilot, "hello again")
            await until(pilot, lambda: pane.query(".chat-reply") and not pane.running)
            assert pane.query_one(".chat-reply", Markdown).source == "Here now."


async def test_no_key_is_a_message_in_the_chat(mem: Memory) -> None:
    app = Host(mem)
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(ChatPane)
        await say(pilot, "hello?")
        await until(pilot, lambda: notes(pane, "chat-error"))
        assert "ANTHROPIC_API_KEY" in notes(pane, "chat-error")[0]


async def test_escape_cancels_a_turn(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(reply("one two three four five six seven eight nine ten eleven", delay=0.2),
                       reply("Short answer.")) as server:
        use(server, monkeypatch)
        app = Host(mem)
        async with app.run_test(size=(100, 40)) as pilot:
            pane = app.query_one(ChatPane)
            await say(pilot, "tell me a long story")
            await until(pilot, lambda: pane.query(".chat-reply") and pane.query_one(".chat-reply", Markdown).source)
            await pilot.press("escape")
            await until(pilot, lambda: not pane.running)
            assert any("cancelled" in n for n in notes(pane, "chat-note"))
            assert pane.session.messages == []
            await say(pilot, "short please")
            await until(pilot, lambda: len(pane.query(".chat-reply")) == 2 and not pane.running)
            assert list(pane.query(".chat-reply").results(Markdown))[-1].source == "Short answer."


async def test_leaving_the_chat_writes_one_log_line(mem: Memory, monkeypatch: pytest.MonkeyPatch, now) -> None:
    now("2026-08-20T14:05")
    with FakeAnthropic("Hello Wes.") as server:
        use(server, monkeypatch)
        app = Host(mem)
        async with app.run_test(size=(100, 30)) as pilot:
            pane = app.query_one(ChatPane)
            await say(pilot, "hi")
            await until(pilot, lambda: pane.query(".chat-reply") and not pane.running)
    assert "Chat with the agent (1 turn): began \u201chi\u201d" in mem.read_text("log/2026-08-20.md")


async def test_the_chat_tab_inside_the_app(projects: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.tui.app import MemtuiApp

    with FakeAnthropic(reply(revise()), reply(ANSWER)) as server:
        use(server, monkeypatch)
        app = MemtuiApp(Path(projects.location), watch=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await pilot.press("c")
            await until(pilot, lambda: app.query(ChatPane))
            pane = app.query_one(ChatPane)
            await until(pilot, lambda: app.focused is pane.query_one(Input))
            await say(pilot, SAYS)
            await until(pilot, lambda: pane.cards and not pane.running)
            await until(pilot, lambda: [p.id for p in app.review.proposals] == ["p-0001"])
            card = pane.cards[0]
            card.focus()
            await pilot.press("a")
            await until(pilot, lambda: card.status == "applied")
            await until(pilot, lambda: app.review.proposals == [])
            # The key's approval is named in the feed: id, file, section, entry.
            named = [a.text for a in app.feed.records if a.text.startswith("approving p-0001")]
            c = card.card
            assert named == [f"approving p-0001: {c.action} {c.file} § {c.section}: {c.entry}"]
    assert projects.get("p-0001").decided_by == app.by


def test_snapshot_of_a_turn_with_a_card(mem: Memory, monkeypatch: pytest.MonkeyPatch, now, snap_compare) -> None:
    now("2026-08-20T14:05")
    mem.update("Projects", "add", REDIS)
    answer = "I proposed a revise of the **Projects** entry:\n\n- old: Redis\n- new: Postgres\n\nIt waits for you."
    with FakeAnthropic(reply("Let me update that.", tool_use("memory_update", {
            "section": "Projects", "action": "revise", "replaces": REDIS,
            "entry": "[stated] memtui stores its index in Postgres"}, id="toolu_snap")), reply(answer)) as server:
        use(server, monkeypatch)

        async def run_before(pilot: Any) -> None:
            pane = pilot.app.query_one(ChatPane)
            pane.query_one(Input).cursor_blink = False
            await say(pilot, SAYS)
            await until(pilot, lambda: pane.cards and not pane.running)
            pane.cards[0].focus()
            await pilot.pause()

        assert snap_compare(Host(mem), terminal_size=(90, 44), run_before=run_before)
