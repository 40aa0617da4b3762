"""Attacks on the app's sync view through the names a remote or a config sends: a commit author holding terminal
escapes, markup and hidden characters is shown in the queue's group heading as text, its controls gone; a remote name
in `[sync] remote` that is markup is refused by name, never drawn as markup or run as an action; an agent that calls
itself "… via origin" is not grouped with a remote's changes nor counted as incoming."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app_support import wait_for
from memtui.core.writing import sync
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import Proposal
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader
from memtui.tui.sync_view import SyncView
from support.git_remote import bare, clone, first_machine, git

# ESC sequences (colour, a window title), markup with an action, a right-to-left override and a tag character.
AUTHOR = "\x1b[31mEve\x1b]0;pwned\x07 [@click=app.quit]x[/] \u202eevil\U000e0041"


def test_a_hostile_author_is_shown_as_its_characters_in_the_group_heading(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    eve = clone(url, tmp_path / "eve", "eve")
    (eve / "notes").mkdir()
    (eve / "notes" / "x.md").write_text("# X\n\n- [observed] one\n")
    git(eve, "add", "notes/x.md")
    git(eve, "commit", "-q", "-m", "x", env={"GIT_AUTHOR_NAME": AUTHOR})
    git(eve, "push", "-q", "origin", "HEAD:main")
    assert len(sync.sync(Memory(server)).queued) == 1

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            await wait_for(pilot, lambda: len(app.review.proposals) == 1, what="the incoming change")
            prompt = app.review.option_list.get_option_at_index(0).prompt
            heading = str(prompt).split("\n", 1)[0]
            assert heading.startswith("⇣ from origin · ")
            # Below it, the commits as memtui's flag names them (git's author, as sent): controls shown, not sent.
            assert not any(c in str(prompt) for c in "\x1b\x07\u202e\U000e0041")
            assert "[@click=app.quit]x[/]" in str(prompt).split("\n")[2]
            assert "\x1b" not in heading and "\x07" not in heading and "\u202e" not in heading
            assert "[@click=app.quit]x[/]" in heading  # literal, not an action
            # The actor memtui recorded lost its controls and hidden characters; the rest is shown as it is.
            assert "\U000e0041" not in heading and "Eve" in heading and "evil" in heading
            await pilot.click(app.review.option_list)
            await pilot.pause(0.2)
            assert app.is_running

    asyncio.run(run())


def test_a_markup_remote_name_in_the_config_is_refused_by_name(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    server = first_machine(tmp_path, url, "server")
    config = server / ".memtui" / "config.toml"
    config.write_text((config.read_text() if config.exists() else "") + '\n[sync]\nremote = "[@click=app.quit]o[/]"\n')
    git(server, "add", ".memtui/config.toml")
    git(server, "commit", "-q", "-m", "a remote name that is markup")

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(80, 24)) as pilot:
            view = app.query_one(SyncView)
            await wait_for(pilot, lambda: view.has_remote is False, what="the status read")
            assert "[@click" not in app.query_one(MemtuiHeader).render().plain  # type: ignore[union-attr]
            await pilot.press("P")
            await wait_for(pilot, lambda: not view.running and "is not a remote name" in
                           "\n".join(app.feed.texts()), what="the refusal")
            assert app.is_running

    asyncio.run(run())


def test_an_agent_named_like_an_incoming_change_is_not_counted_or_grouped_as_one(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    server = first_machine(tmp_path, url, "server")
    forged = Memory(server).submit(Proposal(id="", created="2026-12-06T10:00:00", actor="Ana via origin",
                                            source="origin 0123456789ab", action="create", file="notes/f.md",
                                            content="# F\n\n- [observed] forged\n"), review=True)
    assert forged.status == "queued"

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            await wait_for(pilot, lambda: app.query_one(SyncView).has_remote is True, what="the status read")
            await wait_for(pilot, lambda: len(app.review.proposals) == 1, what="the agent's proposal")
            assert "incoming" not in app.query_one(MemtuiHeader).render().plain  # type: ignore[union-attr]
            assert "⇣" not in str(app.review.option_list.get_option_at_index(0).prompt)

    asyncio.run(run())
