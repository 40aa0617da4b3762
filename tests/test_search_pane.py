"""The Search pane in a tiny host app: results as you type, current entry above its history, enter opens."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult

from memtui import tui
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory
from memtui.tui.messages import LogActivity, MemoryChanged, OpenFile
from memtui.tui.search import SearchPane


class Host(App[None]):
    CSS_PATH = Path(tui.__file__).parent / "search.tcss"  # the pane's styles, as the app loads them

    def __init__(self, memory: Memory) -> None:
        super().__init__()
        self.memory = memory
        self.opened: list[tuple[str, int | None]] = []
        self.activity: list[str] = []

    def compose(self) -> ComposeResult:
        yield SearchPane(self.memory)

    def on_open_file(self, message: OpenFile) -> None:
        self.opened.append((message.rel, message.line))

    def on_log_activity(self, message: LogActivity) -> None:
        self.activity.append(message.text)


async def settle(pilot, pane: SearchPane, want: int | None = None) -> None:
    for _ in range(100):
        await pilot.pause(0.05)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if want is None or len(pane.results) == want:
            return


async def test_pane_searches_as_you_type_and_enter_opens_the_line(tmp_path: Path, now):
    init_root(tmp_path / "m")
    mem = Memory(tmp_path / "m")
    now("2026-01-12T10:00")
    mem.update("Decisions", "add", "[stated] Public API uses REST", source="meeting/kickoff")
    now("2026-08-20T10:00")
    mem.update("Decisions", "revise", "[stated] Public API uses tRPC", "Public API uses REST", source="meeting/api")
    app = Host(mem)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.query_one(SearchPane)
        pane.focus()
        await pilot.press(*"public api")
        await settle(pilot, pane, want=2)
        assert [(r.current, r.path) for r in pane.results] == [(True, "MEMORY.md"), (False, "MEMORY.md")]
        assert pane.option_list.option_count == 2
        assert any("'public api': 1 sources" in a for a in app.activity)
        text = (tmp_path / "m" / "MEMORY.md").read_text().splitlines()
        await pilot.press("enter")
        await pilot.pause()
        assert app.opened and text[app.opened[-1][1] - 1].endswith("tRPC (2026-08-20, meeting/api)")
        await pilot.press("down")  # into the list
        assert pane.option_list.has_focus
        await pilot.press("down", "enter")
        await pilot.pause()
        assert "REST" in text[app.opened[-1][1] - 1]


async def test_pane_regex_toggle_error_and_live_update(tmp_path: Path, now):
    root = tmp_path / "m"
    init_root(root)
    mem = Memory(root)
    app = Host(mem)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.query_one(SearchPane)
        pane.focus()
        await pilot.press(*"pri(")
        await settle(pilot, pane)
        assert pane.results == []
        await pilot.press("ctrl+r")  # now a regex: an unbalanced parenthesis is an error, shown, not raised
        await settle(pilot, pane)
        summary = str(pane.query_one("#search-summary").render())
        assert "bad regex" in summary
        await pilot.press("backspace")
        (root / "people").mkdir()
        (root / "people" / "priya.md").write_text("- [stated] Priya leads billing\n")
        pane.post_message(MemoryChanged(frozenset({"people/priya.md"})))
        await settle(pilot, pane, want=1)
        assert [r.path for r in pane.results] == ["people/priya.md"]
