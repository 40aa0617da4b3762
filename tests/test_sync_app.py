"""Sync in the app, against a real bare git remote over file://: the header's ahead/behind and incoming count, the
sync key in a thread with its steps in the activity feed and a toast, a refusal shown whole, the `[sync] interval`,
and incoming changes grouped by remote and author in the review queue, every name a remote sends drawn as text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app_support import wait_for
from memtui.core.grammar.config import load_config
from memtui.core.writing import sync
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader
from memtui.tui.sync_view import SyncView, settings
from support.git_remote import bare, clone, first_machine, git

FACT = "[stated] The build uses uv (2026-12-06, laptop)"
HOSTILE = "[@click=app.quit]ana[/] [bold red]x"


def header_text(app: MemtuiApp) -> str:
    return app.query_one(MemtuiHeader).render().plain  # type: ignore[union-attr]


def feed_text(app: MemtuiApp) -> str:
    return "\n".join(app.feed.texts())


def two_machines(tmp_path: Path) -> tuple[Path, Path, str]:
    """The laptop (a memtui memory pushed to a bare remote) and a server that cloned it."""
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    return laptop, server, url


async def synced_once(pilot, app: MemtuiApp) -> None:
    view = app.query_one(SyncView)
    await wait_for(pilot, lambda: not view.running and view.has_remote is not None, what="the sync to end")


def test_the_sync_key_brings_in_a_change_for_review_then_merges_and_pushes_it(tmp_path: Path) -> None:
    laptop, server, _ = two_machines(tmp_path)
    assert Memory(laptop).update("Facts", "add", FACT, actor="wes").status == "applied"
    assert sync.sync(Memory(laptop)).pushed

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            view = app.query_one(SyncView)
            await wait_for(pilot, lambda: view.has_remote is True, what="the remote's status")
            # Not fetched yet: even with the remote as cloned (not "ahead" by the clone's own history).
            assert "origin ↑0 ↓0" in header_text(app) and "incoming" not in header_text(app)
            await pilot.press("P")
            await synced_once(pilot, app)
            await wait_for(pilot, lambda: "1 incoming" in header_text(app), what="the header's incoming count")
            assert "↓1" in header_text(app)
            feed = feed_text(app)
            assert "fetching origin…" in feed and "1 incoming change(s) wait for review" in feed
            assert any("Synced with origin" in n.title for n in app._notifications)
            await wait_for(pilot, lambda: any("via origin" in p.actor for p in app.review.proposals),
                           what="the incoming change listed")
            assert "uv" not in (server / "MEMORY.md").read_text()
            app.review.option_list.focus()
            await pilot.press("a")
            await wait_for(pilot, lambda: FACT in (server / "MEMORY.md").read_text(), what="the approval")
            await wait_for(pilot, lambda: "incoming" not in header_text(app), what="nothing incoming")
            # The last decision fast-forwarded to the laptop's commit: nothing is left to push.
            await wait_for(pilot, lambda: "wes approve fast-forwarded to origin at" in feed_text(app),
                           what="the fast-forward's audit line")
            await wait_for(pilot, lambda: "origin ↑0 ↓0" in header_text(app), what="even with the remote")
            await pilot.press("P")
            await synced_once(pilot, app)
            await wait_for(pilot, lambda: "nothing to push" in feed_text(app), what="the second sync")
            told = [n.message for n in app._notifications if n.title == "Synced with origin"]
            # The first sync's toast names the app's key, not the command line's `memtui sync`.
            assert "then P pushes" in told[0] and "memtui sync" not in told[0]

    import asyncio

    asyncio.run(run())
    assert git(tmp_path / "remote.git", "rev-parse", "main") == git(server, "rev-parse", "HEAD") == \
        git(laptop, "rev-parse", "HEAD")


def test_a_memory_without_a_remote_shows_nothing_and_the_key_says_what_to_do(tmp_path: Path, root: Path) -> None:
    async def run() -> None:
        app = MemtuiApp(root, watch=False, user="wes")
        async with app.run_test(size=(80, 24)) as pilot:
            view = app.query_one(SyncView)
            await wait_for(pilot, lambda: view.has_remote is False, what="the status read")
            assert "↑" not in header_text(app) and "incoming" not in header_text(app)
            # The key is in the help (from its binding) and the palette, though not in the footer.
            assert ("app", "P", "sync_remote") in [row[:3] for row in app.key_rows()]
            from memtui.tui.commands import MemtuiCommands

            names = [name for name, _, _ in MemtuiCommands(app.screen).commands()]
            assert "Sync with the git remote" in names
            await pilot.press("P")
            await synced_once(pilot, app)
            await wait_for(pilot, lambda: any("refused" in n.title for n in app._notifications), what="the refusal")
            told = next(n for n in app._notifications if "refused" in n.title).message
            # Whole: what was wrong and the exact command that adds a remote.
            assert "no remote named origin" in told and "remote add origin URL" in told
            assert "no remote named origin" in feed_text(app)

    import asyncio

    asyncio.run(run())


def test_the_interval_is_off_by_default_and_a_bad_value_is_refused_with_what_to_write() -> None:
    assert settings(load_config("")) == ("origin", None)
    assert settings(load_config('[sync]\ninterval = "15m"\nremote = "team"\n')) == ("team", 15.0)
    bad = load_config('[sync]\ninterval = "every hour"\n')
    assert bad.error and '[sync] interval must be a duration such as "15m"' in bad.error
    assert "'every hour'" in bad.error
    assert settings(bad) == ("origin", None)  # and the interval stays off


def test_an_interval_syncs_without_a_key(tmp_path: Path) -> None:
    laptop, server, _ = two_machines(tmp_path)
    config = server / ".memtui" / "config.toml"
    text = config.read_text() if config.exists() else ""
    config.write_text(text + '\n[sync]\ninterval = "0.02m"\n')
    git(server, "add", ".memtui/config.toml")
    git(server, "commit", "-q", "-m", "sync every 1.2 s")
    assert Memory(laptop).update("Facts", "add", FACT, actor="wes").status == "applied"
    assert sync.sync(Memory(laptop)).pushed

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            await wait_for(pilot, lambda: "1 incoming" in header_text(app), what="the interval's sync")
            assert "fetching origin…" in feed_text(app)

    import asyncio

    asyncio.run(run())


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
def test_a_hostile_author_is_drawn_as_text_and_changes_are_grouped_by_remote_and_author(
        tmp_path: Path, size: tuple[int, int]) -> None:
    laptop, server, url = two_machines(tmp_path)
    teammate = clone(url, tmp_path / "teammate", "ana")
    for name, line in (("a", "one"), ("b", "two")):
        (teammate / "notes").mkdir(exist_ok=True)
        (teammate / "notes" / f"{name}.md").write_text(f"# {name}\n\n- [observed] {line}\n")
        git(teammate, "add", f"notes/{name}.md")
        git(teammate, "commit", "-q", "-m", name, env={"GIT_AUTHOR_NAME": HOSTILE})
    git(teammate, "push", "-q", "origin", "HEAD:main")
    # An agent on the server naming itself like an incoming change: not grouped with them (no memtui flag).
    local = Memory(server)
    from memtui.core.writing.proposals import Proposal

    forged = local.submit(Proposal(id="", created="2026-12-06T10:00:00", actor=f"{HOSTILE} via origin",
                                   source="origin 0123456789ab", action="create", file="notes/c.md",
                                   content="# C\n\n- [observed] three\n"), review=True)
    assert forged.status == "queued"

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=size) as pilot:
            await pilot.press("P")
            await synced_once(pilot, app)
            await wait_for(pilot, lambda: len(app.review.proposals) == 3, what="the two incoming changes listed")
            assert app.is_running  # the [@click=app.quit] in the name was not run
            order = [p.id for p in app.review.proposals]
            incoming = [p.id for p in app.review.proposals if sync.came_in(p)]
            assert len(incoming) == 2 and forged.id not in incoming
            # Together, after the agent's (the oldest), under one heading naming the remote and the author.
            assert order == [forged.id, *incoming]
            shown = [str(app.review.option_list.get_option_at_index(k).prompt) for k in range(3)]
            assert shown[1].startswith(f"⇣ from origin · {HOSTILE} · 2 changes")
            assert "⇣" not in shown[0] and "⇣" not in shown[2]

    import asyncio

    asyncio.run(run())


def test_an_unreachable_remote_on_the_interval_is_told_once_and_each_try_is_in_the_feed(tmp_path: Path) -> None:
    laptop, server, _ = two_machines(tmp_path)
    (tmp_path / "remote.git").rename(tmp_path / "gone.git")  # the remote's host is down
    config = server / ".memtui" / "config.toml"
    config.write_text((config.read_text() if config.exists() else "") + '\n[sync]\ninterval = "0.01m"\n')
    git(server, "add", ".memtui/config.toml")
    git(server, "commit", "-q", "-m", "sync every 0.6 s")

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            await wait_for(pilot, lambda: feed_text(app).count("could not fetch from origin") >= 3,
                           what="three tries on the interval")
            refusals = [n for n in app._notifications if n.title == "Sync with origin refused"]
            assert len(refusals) == 1 and "Nothing here changed" in refusals[0].message
            assert app.query_one(SyncView).has_remote  # the header still shows where it stood

    import asyncio

    asyncio.run(run())


def test_a_slow_fetch_shows_its_step_and_seconds_in_the_header_and_the_keys_still_work(tmp_path: Path) -> None:
    laptop, server, _ = two_machines(tmp_path)
    # A remote on a slow link: git's own upload-pack, started eight seconds late (the header counts to 2 s, then
    # Today opens while the fetch still waits: room for a loaded machine's slow tab between the two).
    git(server, "config", "remote.origin.uploadpack", "sleep 8; git-upload-pack")

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            view = app.query_one(SyncView)
            await wait_for(pilot, lambda: view.has_remote is True, what="the remote's status")
            await pilot.press("P")
            await wait_for(pilot, lambda: "fetching origin… 2s" in header_text(app), what="the seconds counted")
            assert "origin ↑" not in header_text(app)  # the step instead of a count that is being changed
            await pilot.press("t")  # the UI is not blocked: Today opens while git fetches
            await wait_for(pilot, lambda: "today" in app.panes, what="Today")
            assert view.running
            await synced_once(pilot, app)
            await wait_for(pilot, lambda: "origin ↑" in header_text(app), what="the count back")

    asyncio.run(run())
