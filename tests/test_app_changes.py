"""The app renders the memory's change event: an own write (the entry cursor, the agent's tool in Chat, the
approve key) and an external write each arrive as exactly one FilesChanged and one reload of the open file, with
the watcher on; the sync after a change walks the folder for the header's count only when a file came or went;
and the Search pane searches warm without a watcher of its own."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import git
import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader
from memtui.tui.messages import FilesChanged
from memtui.tui.viewer import MemoryViewer
from test_curate import cursor_to
from tests.support.watches import watches

PERSON = "ana"
QUIET_AFTER = 0.8  # seconds with no further message that count as "that was all of it"


class Counting(MemtuiApp):
    """The app, keeping every FilesChanged it handles."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.changes_seen: list[FilesChanged] = []

    def on_files_changed(self, message: FilesChanged) -> None:
        self.changes_seen.append(message)
        super().on_files_changed(message)


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)




async def quiet(pilot, app: Counting) -> None:
    """Wait until no FilesChanged has come for QUIET_AFTER seconds (the watcher's start, a sync, all done)."""
    count = -1
    while count != len(app.changes_seen):
        count = len(app.changes_seen)
        await pilot.pause(QUIET_AFTER)


async def ready(pilot, app: Counting) -> MemoryViewer:
    await wait_for(pilot, lambda: settled(app) and app.watcher is not None, timeout=20, what="the app and its watcher")
    await quiet(pilot, app)
    return app.query_one(MemoryViewer)


async def one_change(pilot, app: Counting, viewer: MemoryViewer, n: int, loads: int, *, own: bool) -> FilesChanged:
    await wait_for(pilot, lambda: len(app.changes_seen) > n, timeout=10, what="the change event")
    await quiet(pilot, app)
    got = app.changes_seen[n:]
    assert len(got) == 1, [(m.paths, m.own, m.queue, m.audit) for m in got]
    assert got[0].own is own
    return got[0]


async def test_an_entry_cursor_edit_is_one_event_and_one_reload(demo: Path) -> None:
    app = Counting(demo, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await ready(pilot, app)
        await cursor_to(pilot, viewer, "Reads diffs in the terminal")
        n, loads, before = len(app.changes_seen), viewer.loads, git.Repo(demo).head.commit.hexsha
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("ctrl+u", *"[stated] Reads diffs in the browser", "enter")
        await wait_for(pilot, lambda: git.Repo(demo).head.commit.hexsha != before, what="the commit")
        message = await one_change(pilot, app, viewer, n, loads, own=True)
        assert "MEMORY.md" in message.paths
        assert viewer.loads == loads + 1
        # The one reload still puts the cursor on the new line and draws no live-diff marks for one's own edit.
        await wait_for(pilot, lambda: "in the browser" in (viewer.entry_cursor.entry_at(viewer.cursor).raw
                                                           if viewer.entry_cursor.entry_at(viewer.cursor) else ""),
                       what="the cursor on the new line")
        assert not viewer.has_marks


async def test_the_approve_key_is_one_event_and_one_reload(demo: Path) -> None:
    app = Counting(demo, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await ready(pilot, app)
        n, loads = len(app.changes_seen), viewer.loads
        await pilot.press("a")
        await wait_for(pilot, lambda: "Asks for tables" in (demo / "MEMORY.md").read_text(), what="p-0001 applied")
        message = await one_change(pilot, app, viewer, n, loads, own=True)
        assert "MEMORY.md" in message.paths and message.queue and message.audit
        assert viewer.loads == loads + 1
        # No sync by hand: the event's sync lists the proposal as decided.
        await wait_for(pilot, lambda: "p-0001" not in [p.id for p in app.review.proposals], what="the panel")


async def test_an_external_append_is_one_event_and_one_reload(demo: Path) -> None:
    app = Counting(demo, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await ready(pilot, app)
        n, loads, lines = len(app.changes_seen), viewer.loads, len(viewer.state.lines)
        line = "- [observed] Appended by another process (2026-08-20, test)"
        subprocess.run([sys.executable, "-c", f"open({str(demo / 'MEMORY.md')!r}, 'a').write({line + chr(10)!r})"],
                       check=True)
        message = await one_change(pilot, app, viewer, n, loads, own=False)
        assert message.paths == frozenset({"MEMORY.md"})
        assert viewer.loads == loads + 1 and viewer.state.added == {lines}


async def test_the_agents_tool_write_in_chat_is_one_event(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.tui.chat import ChatPane
    from support.anthropic_server import FakeAnthropic, reply, tool_use

    write = tool_use("memory_update", {"section": "Projects", "action": "add",
                                       "entry": "[inferred] memtui could index in Postgres"})
    with FakeAnthropic(reply(write), reply("I proposed it for your review.")) as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        app = Counting(demo, user=PERSON)
        async with app.run_test(size=SIZE) as pilot:
            viewer = await ready(pilot, app)
            await pilot.press("c")
            await wait_for(pilot, lambda: app.query(ChatPane), what="the chat")
            pane = app.query_one(ChatPane)
            await quiet(pilot, app)
            n, loads = len(app.changes_seen), viewer.loads
            pane.query_one("Input").value = "Remember that memtui could index in Postgres"
            await pilot.press("enter")
            await wait_for(pilot, lambda: pane.cards and not pane.running, timeout=15, what="the agent's turn")
            message = await one_change(pilot, app, viewer, n, loads, own=True)
            assert message.queue and "MEMORY.md" not in message.paths  # queued: the file did not change
            assert viewer.loads == loads
            await wait_for(pilot, lambda: any("Postgres" in (p.entry or "") for p in app.review.proposals),
                           what="the proposal in the review panel")


async def test_the_search_pane_starts_no_watcher_of_its_own(demo: Path) -> None:
    before = len(watches())
    app = Counting(demo, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        assert len(watches()) == before + 1
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"Lisbon")
        await wait_for(pilot, lambda: "matching lines" in str(app.query_one("#search-summary").render()),
                       timeout=10, what="the search results")
        assert len(watches()) == before + 1  # the pane's warm index listens to the app's watcher
        # And it hears what that watcher hears: an edit shows in the next results without a walk.
        (demo / "people.md").write_text("- [stated] Lisbon again, from outside (2026-08-20)\n")
        await wait_for(pilot, lambda: any(r.path == "people.md" for r in app.panes["search"].results),
                       timeout=10, what="the outside edit in the results")
    assert len(watches()) == before


class Walks(Memory):
    """A folder memory counting the walks of all its files (the header's count)."""

    walks = 0

    def files(self) -> list[str]:
        self.walks += 1
        return super().files()


async def test_the_file_count_follows_new_and_deleted_files_but_an_append_walks_nothing(demo: Path) -> None:
    memory = Walks(demo)
    app = MemtuiApp(memory=memory, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        header = app.query_one(MemtuiHeader)
        files = header.counts["files"]
        assert memory.walks == 1 and files == len(memory.store.list_files())

        async def changed(rel: str) -> None:
            synced = app.folder_synced
            app.post_message(FilesChanged(frozenset({rel})))
            await wait_for(pilot, lambda: app.folder_synced > synced, what=f"the sync after {rel}")

        with (demo / "MEMORY.md").open("a") as fh:
            fh.write("- [observed] Appended by another process (2026-08-20, test)\n")
        await changed("MEMORY.md")
        assert memory.walks == 1 and header.counts["files"] == files  # the append: no walk, the same count
        (demo / "notes").mkdir(exist_ok=True)
        (demo / "notes/new.md").write_text("- [stated] A new file (2026-08-20, test)\n")
        await changed("notes/new.md")
        assert header.counts["files"] == files + 1
        (demo / "people/alex.md").unlink()
        await changed("people/alex.md")
        assert header.counts["files"] == files and header.counts["files"] == len(memory.store.list_files())
