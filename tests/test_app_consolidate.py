"""Consolidation from the app (the palette, and the offer when a Chat session ends over cap) and from `memtui ask`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from app_support import SIZE, demo_root, demo_template, palette_choose, settled, wait_for  # noqa: F401 (fixture)
from support.anthropic_server import FakeAnthropic

from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the deterministic draft, no model
    monkeypatch.setenv("MEMTUI_USER", "wes")
    root = demo_root(tmp_path, monkeypatch, demo_template)
    # The demo's Facts holds 4 distinct facts and one struck line: over a cap of 4, archiving the struck line fits.
    assert Memory(root).edit("MEMORY.md", "Facts=3", "Facts=4", actor="wes").status == "applied"
    return root


def toasts(app: MemtuiApp) -> list[str]:
    return [str(t.render()) for t in app.screen.query("Toast")]


async def test_palette_consolidates_the_over_cap_section_into_a_selected_proposal(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        assert not any(p.action == "consolidate" for p in app.review.proposals)
        await pilot.press("ctrl+p")
        await palette_choose(pilot, "Consolidate section: Facts")
        await wait_for(pilot, lambda: app.review.selected is not None and app.review.selected.action == "consolidate",
                       what="the consolidation selected in the review panel")
        p = app.review.selected
        assert p.section == "Facts" and p.actor == "wes" and p.status == "pending"
        assert any("consolidate MEMORY.md § Facts" in t for t in app.feed.texts())
    assert "Jenkins" in (demo / "MEMORY.md").read_text()  # proposed, not applied: a person approves it


async def test_chat_session_ending_over_cap_offers_consolidation_on_a_key(demo: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic("Hello Wes.") as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        app = MemtuiApp(demo, watch=False)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await wait_for(pilot, lambda: settled(app), what="the app to settle")
            from textual.widgets import Input

            from memtui.tui.chat import ChatPane

            await pilot.press("c")
            await wait_for(pilot, lambda: app.query(ChatPane), what="the chat pane")
            pane = app.query_one(ChatPane)
            await wait_for(pilot, lambda: app.focused is pane.query_one(Input), what="the chat input")
            pane.query_one(Input).value = "hi"
            await pilot.press("enter")
            await wait_for(pilot, lambda: pane.query(".chat-reply") and not pane.running, timeout=10,
                           what="the reply")
            assert not app.consolidating.offer  # nothing offered while the session goes on
            app.action_close_tab()
            await wait_for(pilot, lambda: app.consolidating.offer, what="the offer after the session")
            assert app.consolidating.offer == ["Facts"]
            # The toast is mounted on a later frame than the offer is set: wait for it (it raced under load).
            await wait_for(pilot, lambda: any("over its cap in Facts: press C" in t for t in toasts(app)),
                           what="the offer's toast")
            app.tree.focus()
            await pilot.press("C")
            await wait_for(pilot, lambda: app.review.selected is not None
                           and app.review.selected.action == "consolidate", what="the proposal from C")
            assert app.review.selected.section == "Facts"


def test_ask_suggests_consolidate_when_the_session_ends_over_cap(demo: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    init_root(fresh)
    env = {**os.environ, "MEMTUI_USER": "wes"}
    with FakeAnthropic("Noted.", "Noted again.") as server:
        for where, over in ((demo, True), (fresh, False)):  # the demo's Facts is over its cap; a new memory is not
            done = subprocess.run([sys.executable, "-m", "memtui", "ask", "hello", "--root", str(where)],
                                  capture_output=True, text=True, timeout=60, env={**env, **server.env})
            assert done.returncode == 0, done.stderr
            assert ("over its cap in Facts: `memtui consolidate`" in done.stdout) is over, done.stdout
