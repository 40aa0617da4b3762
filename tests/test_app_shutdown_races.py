"""What a worker, a timer or a bubbling message brings after its widgets began to go: the app quitting (Textual
stops the app running, then takes the screen down a widget at a time, siblings in any order), or a tab or dialog
closed while its work ran. Each test sets the order up deterministically, as a loaded machine finds it by chance:
the widgets removed first, then the late arrival delivered. Without the guards each raised NoMatches in the app (the
test fails with it), or a decision's answer was dropped with the closed Chat tab or revise dialog."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from textual.widgets import Input

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory
from test_sync_app_snapshots import server  # noqa: F401 (fixture: a clone with three incoming changes)


async def test_a_status_read_or_a_sync_step_that_lands_while_the_app_shuts_down_touches_no_widget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """The header's first git status is read half a second after mount, about when a short test ends: its answer
    reached the sync view after Textual had taken the header (or the feed) down."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.header import MemtuiHeader
    from memtui.tui.sync_view import SyncView

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        view = app.query_one(SyncView)
        header = app.query_one(MemtuiHeader)
        await wait_for(pilot, lambda: view.has_remote is not None, what="the first status read")
        feed = app.feed
        records = len(feed.records)
        app._running = False  # what App._shutdown does first
        await header.remove()
        await feed.remove()
        assert not app.alive()
        view._status(SyncView.Status(None))  # each raised NoMatches (MemtuiHeader, ActivityFeed) before
        view.running, view.step = True, "fetching origin"
        view._step(SyncView.Step("pushing to origin"))
        view._fetching(SyncView.Fetching("fetching origin 40%"))
        view._done(SyncView.Done(refused="origin refused the push"))
        assert not view.running and view._ticker is None  # the sync's end is still taken in
        assert records == len(feed.records)  # nothing was added to a feed that is gone


async def test_who_wrote_an_incoming_change_read_after_the_review_panel_went_touches_no_widget(
        server: Path) -> None:  # noqa: F811 (fixture)
    """The lines' authors of an incoming change are read in a thread (git blame). They came back by a call from that
    thread, which ran whatever state the panel was in: with its widgets gone it raised NoMatches (DiffView); after
    the app's loop ended it could not run at all. Now they come back as a message the panel drops once it goes."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.review import ReviewPanel

    app = MemtuiApp(server, watch=False, user="wes")
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: settled(app) and len(app.review.proposals) == 4, what="the queue")
        panel = app.review
        incoming = panel.proposals[1]
        panel.select(incoming.id)
        # The ordinary way first: read in the thread, drawn in the panel's detail.
        await wait_for(pilot, lambda: any(panel.line_origins.values()), what="who wrote each incoming line")
        key = (incoming.id, incoming.source or "")
        assert panel.line_origins[key] and "wrote: " in str(panel.query_one("#review-detail").render())
        del panel.line_origins[key]
        app._running = False
        await panel.remove()
        # The worker's body, as its thread runs it once the panel is gone.
        read = ReviewPanel._read_line_origins.__wrapped__  # type: ignore[attr-defined]
        await asyncio.to_thread(read, panel, incoming, key)
        await pilot.pause()
        assert key not in panel.line_origins  # dropped with the panel, not drawn into widgets that are gone


async def test_a_tab_that_comes_up_while_the_app_shuts_down_touches_no_widget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """A tab's activation bubbles up to the app through the screen: one in flight as the app quits reached it after
    the main area was taken down."""
    from memtui.tui.app import MemtuiApp

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        trail = list(app._tab_trail)
        app._running = False
        await app.main.remove()
        app.tab_changed()  # NoMatches for #main before
        assert app._tab_trail == trail


async def test_a_card_decided_while_its_chat_tab_is_closed_is_still_decided_in_the_app(
        mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`a` on a chat card, then `w` closes the Chat tab before the approval came back: its `Decided` went to the
    card, and with the tab gone it was dropped. The app kept the proposal "being decided": the review panel still
    listed it as pending, and its keys said so until the app quit."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.chat import ChatPane
    from support.anthropic_server import FakeAnthropic, reply, tool_use
    from test_agent_chat import ANSWER, REDIS, SAYS, say, use

    mem.update("Projects", "add", REDIS)
    revise = tool_use("memory_update", {"section": "Projects", "action": "revise", "replaces": REDIS,
                                        "entry": "[stated] memtui stores its index in Postgres"})
    with FakeAnthropic(reply(revise), reply(ANSWER)) as anthropic:
        use(anthropic, monkeypatch)
        app = MemtuiApp(Path(mem.location), watch=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_for(pilot, lambda: settled(app), what="the first screen")
            await pilot.press("c")
            await wait_for(pilot, lambda: app.query(ChatPane), what="the chat tab")
            pane = app.query_one(ChatPane)
            await wait_for(pilot, lambda: app.focused is pane.query_one("#chat-input"), what="the chat's input")
            await say(pilot, SAYS)
            await wait_for(pilot, lambda: pane.cards and not pane.running, what="the agent's card")
            await wait_for(pilot, lambda: [p.id for p in app.review.proposals] == ["p-0001"], what="the queue")
            card = pane.cards[0]
            card.focus()
            # The approval held until the tab is gone (a pass-through that waits: the memory's lock would also
            # hold the chat's own last log line, written as its tab closes).
            gate, approve = threading.Event(), app.memory.approve
            monkeypatch.setattr(app.memory, "approve", lambda *a, **k: (gate.wait(20), approve(*a, **k))[1])
            try:
                await pilot.press("a")
                await wait_for(pilot, lambda: card.under_way, what="the card's approval under way")
                assert "p-0001" in app.deciding.under_way
                await pilot.press("w")
                await wait_for(pilot, lambda: not card.is_attached and "chat" not in app.panes, what="the tab closed")
            finally:
                gate.set()
            await wait_for(pilot, lambda: "p-0001" not in app.deciding.under_way, what="the app to hear the decision")
            await wait_for(pilot, lambda: app.review.proposals == [], what="the approved proposal off the list")
    assert Memory(Path(mem.location)).get("p-0001").status == "applied"


async def test_escape_while_a_revise_is_written_waits_for_it_and_the_revise_is_announced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """enter in the revise dialog, then escape before the write came back: the dialog closed, its write's answer
    was dropped with it, and the revise was approved unannounced (no notice, no feed line, the list not told)
    after the person had pressed escape to cancel it. A write under way cannot be taken back: escape says so."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.dialogs import ReviseScreen

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.review.selected is not None, what="the first screen")
        pid = app.review.selected.id
        app.review.option_list.focus()
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviseScreen), what="the revise dialog")
        dialog = app.screen
        dialog.query_one("#entry", Input).value = "[observed] Asks for side-by-side tables when comparing options"
        gate, approve = threading.Event(), app.memory.approve  # the write held until the escape was pressed
        monkeypatch.setattr(app.memory, "approve", lambda *a, **k: (gate.wait(20), approve(*a, **k))[1])
        try:
            await pilot.press("enter")
            await wait_for(pilot, lambda: dialog.writing, what="the revise under way")
            await pilot.press("escape")
            assert app.screen is dialog
            assert "cannot be stopped now" in str(dialog.query_one("#revise-error").render())
        finally:
            gate.set()
        await wait_for(pilot, lambda: app.screen is not dialog, what="the dialog closed by the revise's result")
        await wait_for(pilot, lambda: pid not in [p.id for p in app.review.proposals], what="the revise off the list")
        assert any(pid in str(n.message) for n in app._notifications), [n.message for n in app._notifications]
    assert Memory(root).get(pid).status == "applied"
