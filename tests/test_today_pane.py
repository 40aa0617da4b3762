"""The Today pane in a tiny host app: the report as a tree, diffs on expand, enter opens the file, u undoes."""

from __future__ import annotations

from pathlib import Path

import git
from textual.app import App, ComposeResult

from memtui import tui
from memtui.core.storage.init import init_root
from memtui.core.timeline.today import Change
from memtui.core.writing.memory import Memory
from memtui.tui.messages import MemoryChanged, OpenFile
from memtui.tui.today import TodayPane


class Host(App[None]):
    CSS_PATH = Path(tui.__file__).parent / "today.tcss"  # the pane's styles, as the app loads them

    def __init__(self, memory: Memory) -> None:
        super().__init__()
        self.memory = memory
        self.opened: list[tuple[str, int | None]] = []

    def compose(self) -> ComposeResult:
        yield TodayPane(self.memory)

    def on_open_file(self, message: OpenFile) -> None:
        self.opened.append((message.rel, message.line))


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def labels(pane: TodayPane) -> list[str]:
    return [str(c.label) for f in pane.tree.root.children for c in f.children]


async def test_pane_lists_changes_expands_diffs_opens_files_and_undoes(tmp_path: Path, now):
    now("2026-08-19T18:00")
    init_root(tmp_path / "m")
    mem = Memory(tmp_path / "m")
    now("2026-08-20T09:00")
    queued = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor="agent")
    mem.approve(queued.id or "", by="wes")
    now("2026-08-20T09:30")
    mem.update("Facts", "add", "[stated] Has a cat called Miso", actor="wes")
    before_undo = (tmp_path / "m" / "MEMORY.md").read_bytes()
    now("2026-08-20T10:00")
    mem.update("Facts", "revise", "[stated] Has a cat called Mochi", replaces="Miso", actor="wes")
    mem.update("Facts", "add", "[suggested] Likes jazz", actor="agent")  # pending
    now("2026-08-20T11:00")

    app = Host(mem)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pane = app.query_one(TodayPane)
        rows = labels(pane)
        assert len(rows) == 4
        assert "approved" in rows[0] and "agent→wes" in rows[0] and queued.id in rows[0]
        assert "revise" in rows[2] and "Mochi" in rows[2]
        assert "pending" in rows[3] and "Likes jazz" in rows[3]
        assert "What changed today: 1 approved, 2 applied, 1 pending" in str(
            pane.query_one("#today-summary").render())

        # move to the revise, expand its diff, then enter jumps to the file at the changed line
        tree = pane.tree
        memory_node = tree.root.children[0]
        revise_node = memory_node.children[2]
        tree.move_cursor(revise_node)
        await pilot.press("space")
        await pilot.pause()
        diff_lines = [str(n.label) for n in revise_node.children]
        assert any(line.startswith("+- [stated] Has a cat called Mochi") for line in diff_lines)
        assert any(line.startswith("-- [stated] Has a cat called Miso") for line in diff_lines)
        tree.move_cursor(revise_node)
        await pilot.press("enter")
        await pilot.pause()
        change = revise_node.data
        assert isinstance(change, Change)
        lines = (tmp_path / "m" / "MEMORY.md").read_text().splitlines()
        assert app.opened == [("MEMORY.md", change.line)]
        assert "Miso" in lines[change.line - 1]  # the struck line the revise produced

        # u: undo the last applied change with a new commit, then the tree shows the revert
        count = len(list(git.Repo(tmp_path / "m").iter_commits()))
        await pilot.press("u")
        await settle(pilot)
        await settle(pilot)
        assert (tmp_path / "m" / "MEMORY.md").read_bytes() == before_undo
        assert len(list(git.Repo(tmp_path / "m").iter_commits())) == count + 1
        assert any("revert" in row and "reverts" in row for row in labels(pane))

        # a forwarded MemoryChanged reloads: a change made meanwhile appears
        mem.log("Noted the cat's name", actor="agent")
        pane.post_message(MemoryChanged(frozenset({"log/2026-08-20.md"})))
        await settle(pilot)
        await settle(pilot)
        assert "log/2026-08-20.md" in [f.data for f in pane.tree.root.children]

        # s: the last seven days
        await pilot.press("s")
        await settle(pilot)
        assert "since 2026-08-13" in str(pane.query_one("#today-summary").render())
