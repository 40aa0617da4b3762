"""#43 items 4 and 5 in the app: a contradicting add shows the current entry beside it and one key (R) approves it as
a revise of that entry; the Next session tab shows the context the next agent session receives, its budget and
cut, and how the selected proposal would change it. Agents' strings are drawn as data."""

from __future__ import annotations

from pathlib import Path

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from app_support import wait_for
from memtui.core.grammar.document import Document
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.commands import MemtuiCommands

PERSON = "wes"
AGENT = "agent:claude"
OLD = "[stated] Deploys go out on Tuesday mornings"
NEW = "[stated] Deploys go out on Friday mornings"
QUIT = "[@click=app.quit]QUIT[/]"
HOSTILE = f"[observed] The [bold]build[/bold] box runs {QUIT} on Tuesday nights [/]"
SIZE = (150, 42)


def rendered(widget: Widget) -> str:
    """What a widget draws, as one line of words (a long line the widget wrapped reads as it was written)."""
    lines = [strip.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]
    return " ".join(" ".join(lines).split())


def clicks(widget: Widget) -> list[str]:
    return [str(seg.style.meta["@click"]) for strip in widget.render_lines(Region(0, 0, *widget.outer_size))
            for seg in strip if seg.style and seg.style.meta.get("@click")]


def facts(root: Path) -> list[str]:
    return [e.raw.strip() for _, e in Document((root / "MEMORY.md").read_text(), "MEMORY.md").section("Facts").entries]


async def ready(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.synced and app.folder_synced and app.review.loaded and app.review.selected,
                   what="the review to load")


async def test_a_contradicting_add_shows_the_current_entry_and_R_makes_it_a_revise(root: Path) -> None:
    mem = Memory(root)
    assert mem.update("Facts", "add", OLD).status == "applied"
    pid = mem.update("Facts", "add", NEW, actor=AGENT).id
    app = MemtuiApp(root, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: pid in app.review.contradicts, what="the pairing")
        detail = app.review.query_one("#review-detail", Static)
        # All of it drawn: the detail takes its new height a layout after its text changes (asked for when the
        # widget is next idle), and a wait for its third line passed, under load, with the fourth still cut off.
        want = ("contradicts a current entry", "now: - [stated] Deploys go out on Tuesday mornings",
                "R: approve as a revise of it")
        await wait_for(pilot, lambda: all(w in rendered(detail) for w in want),
                       what="the current entry and the R key beside the add")
        app.review.option_list.focus()
        await pilot.press("R")
        await wait_for(pilot, lambda: Memory(root).get(pid).status == "applied", what="the approval")
        assert any(r.text.startswith(f"approving {pid}: revise MEMORY.md § Facts") for r in app.feed.records)
    lines = facts(root)
    assert len(lines) == 2, lines
    assert lines[0].startswith("- ~~[stated] Deploys go out on Tuesday mornings") and "superseded" in lines[0]
    assert "Deploys go out on Friday mornings" in lines[1] and "~~" not in lines[1]


async def test_R_on_an_add_that_contradicts_nothing_writes_nothing_and_says_why(root: Path) -> None:
    mem = Memory(root)
    assert mem.update("Facts", "add", OLD).status == "applied"
    pid = mem.update("Facts", "add", "[stated] The staging database is Postgres 16", actor=AGENT).id
    before = (root / "MEMORY.md").read_bytes()
    app = MemtuiApp(root, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.review.option_list.focus()
        await pilot.press("R")
        await wait_for(pilot, lambda: any("contradicts no current entry" in str(n.message)
                                          for n in app._notifications), what="the notice")
    assert (root / "MEMORY.md").read_bytes() == before and Memory(root).get(pid).status == "pending"


async def test_the_next_session_tab_shows_budget_cut_and_the_selected_proposals_effect(root: Path) -> None:
    mem = Memory(root)
    assert mem.update("Facts", "add", OLD).status == "applied"
    assert mem.update("Facts", "add", HOSTILE).status == "applied"
    pid = mem.update("Facts", "add", NEW, actor=AGENT).id
    other = mem.update("Preferences", "add", "[stated] Prefers answers with code first", actor=AGENT).id
    app = MemtuiApp(root, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.review.option_list.focus()
        await pilot.press("N")
        await wait_for(pilot, lambda: "next_session" in app.panes and app.panes["next_session"].view is not None
                       and app.panes["next_session"].view.pid == pid, what="the context view")
        pane = app.panes["next_session"]
        view = pane.view
        # Drawn at the heights its new text needs (a layout after the update, as for the review's detail).
        await wait_for(pilot, lambda: "nothing cut" in rendered(pane.query_one("#next-summary"))
                       and f"With {pid} applied" in rendered(pane.query_one("#next-effect"))
                       and "Tuesday nights [/]" in rendered(pane.query_one("#next-text")), what="the tab drawn")
        assert app.main.active == "pane-next_session"
        summary = rendered(pane.query_one("#next-summary"))
        assert f"{view.now.tokens:,} of 1,000 tokens used" in summary and "nothing cut" in summary
        effect = rendered(pane.query_one("#next-effect"))
        assert f"With {pid} applied: {view.after.tokens:,} tokens (+" in effect
        diff = pane.query_one("#next-diff")
        assert diff.display and "Friday" in view.diff
        text = rendered(pane.query_one("#next-text")).lstrip("─ ")  # below its rule
        assert text.startswith("PROJECT MEMORY - honor these facts and preferences")
        # The hostile entry is drawn as written, brackets and all, and no click in it runs anything.
        assert "[bold]build[/bold] box runs [@click=app.quit]QUIT[/] on Tuesday nights [/]" in text
        assert clicks(pane.query_one("#next-text")) == [] and clicks(pane.query_one("#next-summary")) == []
        assert "Friday" not in (root / "MEMORY.md").read_text()  # planned in memory: nothing written
        # The review's keys act from this tab: the next proposal's effect, then R on the first, seen here.
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: pane.view.pid == other, what="the next proposal's effect")
        assert "code first" in pane.view.diff and "Friday" not in pane.view.diff
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: pane.view.pid == pid, what="the first proposal's effect again")
        await pilot.press("R")
        await wait_for(pilot, lambda: Memory(root).get(pid).status == "applied", what="the approval")
        # The tab follows memory: Friday is now in the context, Tuesday struck and gone from it.
        await wait_for(pilot, lambda: "Friday" in pane.view.now.text and "Tuesday mornings" not in pane.view.now.text,
                       what="the context after the approval")


async def test_a_hostile_current_entry_and_add_are_drawn_as_data_beside_each_other(root: Path) -> None:
    from support.by_hand import write_committed

    # A current line written past memtui: markup that would colour, link or quit if it were read as markup.
    current = f"- [stated] Deploys go out on [bold]Tuesday[/bold] mornings {QUIT} (2026-12-01)"
    text = (root / "MEMORY.md").read_text().replace("## Facts\n", f"## Facts\n\n{current}\n", 1)
    write_committed(root, "MEMORY.md", text)
    pid = Memory(root).update("Facts", "add", f"[stated] Deploys go out on [bold]Friday[/bold] mornings {QUIT}",
                              actor=f"agent{QUIT}").id
    app = MemtuiApp(root, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: pid in app.review.contradicts, what="the pairing")
        detail = app.review.query_one("#review-detail", Static)
        await wait_for(pilot, lambda: f"now: {current}" in rendered(detail), what="the current entry, whole")
        assert clicks(detail) == []
        commands = [name for name, _, _ in MemtuiCommands(app.screen).commands()]
        assert "Next session: context and budget" in commands
        assert "Approve the selected add as a revise of what it contradicts" in commands
