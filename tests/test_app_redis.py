"""The app on a Redis memory, against a real redis-server: changes and proposals from another process show live,
and a lost server shows in the header until it is back."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from app_support import SIZE, wait_for
from support.redis_server import RedisServer, redis_server, redis_url  # noqa: F401  (fixtures)

from memtui.core.access.stores import init_store
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader
from memtui.tui.viewer import MemoryViewer


@pytest.fixture(autouse=True)
def pinned(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("MEMTUI_USER", "wes")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("MEMTUI_STORE", raising=False)


def redis_memory(url: str) -> Memory:
    store = RedisStore(url)
    init_store(store, author="wes")
    return Memory(store)


def memtui(*args: str, ok: tuple[int, ...] = (0,)) -> None:
    """Run memtui in another process; `ok` are the exit codes expected (4: queued for review)."""
    done = subprocess.run([sys.executable, "-m", "memtui", *args], timeout=60, capture_output=True, text=True,
                          env={**os.environ, "MEMTUI_USER": "wes"})
    assert done.returncode in ok, done.stdout + done.stderr


def viewer_text(app: MemtuiApp, rel: str = "MEMORY.md") -> str:
    viewer = app.viewer_for(rel)
    assert isinstance(viewer, MemoryViewer) and viewer.state is not None
    return "\n".join(viewer.state.lines)


async def started(app: MemtuiApp, pilot) -> None:
    await wait_for(pilot, lambda: app.synced and app.tree.root.children and app.watcher is not None
                   and app.watcher._sub.connected.is_set(), what="the app on Redis to start")


async def test_app_on_redis_shows_another_process_change_live(redis_url: str) -> None:
    app = MemtuiApp(memory=redis_memory(redis_url), watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert [c.data.name for c in app.tree.root.children][0] == "MEMORY.md"
        assert "redis://127.0.0.1" in str(app.base.query_one(MemtuiHeader).render())
        await wait_for(pilot, lambda: "## " in viewer_text(app), what="MEMORY.md from Redis")
        memtui("update", "Facts", "add", "[stated] Seen live from another process", "--store", redis_url)
        await wait_for(pilot, lambda: "Seen live from another process" in viewer_text(app), what="the change")
        viewer = app.viewer_for("MEMORY.md")
        assert viewer is not None and viewer.state is not None and viewer.state.added  # marked as a live diff
        await wait_for(pilot, lambda: any("Seen live" in t for t in app.feed.texts()), what="the feed line")
        memtui("log", "a daily log appears", "--store", redis_url)
        await wait_for(pilot, lambda: "log" in [c.data.name for c in app.tree.root.children],
                       what="the new folder in the tree")


async def test_proposal_queued_by_another_process_appears_in_review(redis_url: str) -> None:
    app = MemtuiApp(memory=redis_memory(redis_url), watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert not app.review.proposals
        memtui("update", "Facts", "add", "[observed] Queued by an agent elsewhere", "--by", "agent-claude",
               "--store", redis_url, ok=(4,))
        await wait_for(pilot, lambda: app.review.proposals, what="the proposal in the review panel")
        p = app.review.proposals[0]
        assert p.actor == "agent-claude" and "Queued by an agent elsewhere" in (p.entry or "")
        assert app.tree.pending.get("MEMORY.md") == 1
        await pilot.press("a")  # approving from the app writes to Redis
        await wait_for(pilot, lambda: "Queued by an agent elsewhere" in viewer_text(app), what="the approval")
        assert "Queued by an agent elsewhere" in RedisStore(redis_url).read("MEMORY.md").decode()


async def test_lost_redis_shows_disconnected_and_resyncs_on_reconnect(tmp_path) -> None:
    server = RedisServer(tmp_path / "redis", persist=True).start()
    try:
        url = server.url("app-outage")
        app = MemtuiApp(memory=redis_memory(url), watch=True)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            header = app.base.query_one(MemtuiHeader)
            await started(app, pilot)
            assert "disconnected" not in str(header.render())
            server.stop(kill=True)
            await wait_for(pilot, lambda: "disconnected" in str(header.render()), timeout=10,
                           what="the header to say disconnected")
            assert not app.connected
            app.open_file("MEMORY.md")  # still usable: what is on screen stays
            server.start()
            await wait_for(pilot, lambda: app.connected, timeout=15, what="the reconnect")
            assert "disconnected" not in str(header.render())
            memtui("update", "Facts", "add", "[stated] Written after the restart", "--store", url)
            await wait_for(pilot, lambda: "Written after the restart" in viewer_text(app), what="a live change")
    finally:
        server.stop()


async def test_the_palette_switches_to_another_memory_on_the_server(redis_server) -> None:  # noqa: F811
    first, second = redis_server.url("switch-a"), redis_server.url("switch-b")
    redis_memory(second).update("Facts", "add", "[stated] Only in b", actor="wes")
    app = MemtuiApp(memory=redis_memory(first), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.synced, what="the app to start")
        await pilot.press("ctrl+p")
        await pilot.press(*"switch memory: switch-b")
        def offered() -> bool:
            lists = app.screen.query("CommandList")
            return bool(lists) and lists.first().option_count > 0 and \
                "Switch memory: switch-b" in str(lists.first().get_option_at_index(0).prompt)

        await wait_for(pilot, offered, what="the palette to offer the other memory")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.return_value is not None, what="the app to leave for the other memory")
    kind, url = app.return_value
    assert kind == "switch-memory" and "prefix=switch-b" in url
    assert "Only in b" in (Memory(RedisStore(url)).read_text("MEMORY.md") or "")


async def test_a_hostile_memory_name_is_shown_as_text_in_the_palette(redis_server) -> None:  # noqa: F811
    hostile = "evil[/][b]x[link=http://e.x]y"
    redis_memory(redis_server.url(hostile))
    app = MemtuiApp(memory=redis_memory(redis_server.url("plain-one")), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.synced, what="the app to start")
        await pilot.press("ctrl+p")
        await pilot.press(*"switch memory: evil")

        def offered() -> str:
            lists = app.screen.query("CommandList")
            if not lists or not lists.first().option_count:
                return ""
            return str(lists.first().get_option_at_index(0).prompt)

        await wait_for(pilot, lambda: "Switch memory" in offered(), what="the palette to offer the memory")
        assert hostile in offered()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.return_value is not None, what="the app to leave for the other memory")
    assert RedisStore(app.return_value[1]).prefix == hostile
