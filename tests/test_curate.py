"""Curating by hand in the app: the entry cursor, each edit from the keyboard, undo, and the review filters.

Each edit is checked where it lands: the file, the git commit (author = the person at the keyboard, here "ana",
not the demo's "wes") and the audit log.
"""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.entry_bar import EntryBar
from memtui.tui.viewer import MemoryViewer
from support.by_hand import write_committed

PERSON = "ana"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def head(root: Path) -> git.Commit:
    return git.Repo(root).head.commit


def audit(root: Path) -> list[dict]:
    return [json.loads(x) for x in (root / "memory-log.jsonl").read_text().splitlines()]


async def started(pilot) -> MemoryViewer:
    app = pilot.app
    await wait_for(pilot, lambda: settled(app), what="the app to settle")
    return app.query_one(MemoryViewer)


async def cursor_to(pilot, viewer: MemoryViewer, text: str) -> None:
    """Walk the cursor with j (the first press shows it) until it stands on the entry holding `text`."""
    await pilot.press("j")
    for _ in range(40):
        entry = viewer.entry_cursor.entry_at(viewer.cursor)
        if entry is not None and text in entry.raw:
            return
        await pilot.press("j")
    raise AssertionError(f"the cursor never reached {text!r}")


def cursor_raw(viewer: MemoryViewer) -> str:
    entry = viewer.entry_cursor.entry_at(viewer.cursor)
    return "" if entry is None else entry.raw


def bar_text(app) -> str:
    return str(app.query_one(EntryBar).render())


async def test_cursor_walks_entries_jumps_sections_and_the_bar_says_who_wrote_it(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        assert viewer.cursor is None and not app.query_one(EntryBar).display  # a reader first: no cursor yet
        await pilot.press("j")
        assert "Wes leads the platform team" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        await pilot.press("down")  # the arrows move between entries too, past the struck line
        assert "Works from Lisbon and Porto" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        await pilot.press("J")
        assert viewer.entry_cursor.section_at(viewer.cursor) == "Preferences"
        assert "Prefers short answers" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        await pilot.press("right_curly_bracket", "K")
        assert viewer.entry_cursor.section_at(viewer.cursor) == "Preferences"
        await pilot.press("k")
        assert viewer.entry_cursor.section_at(viewer.cursor) == "User"
        await wait_for(pilot, lambda: "commit " in bar_text(app), what="blame in the bar")
        bar = bar_text(app)
        sha = head(demo).hexsha[:8]  # the demo's last commit wrote this line
        assert "stated · 2026-08-20 · chat · § User" in bar and f"commit {sha} by wes" in bar
        row = viewer._row_of(viewer.cursor)
        assert viewer.row_text(row).startswith("▌")

        # A line written by approving an agent's proposal: the bar joins blame with the audit log.
        await pilot.press("escape")  # leave the cursor: the app's review keys act again
        assert viewer.cursor is None
        await pilot.press("a")
        await wait_for(pilot, lambda: "Asks for tables" in (demo / "MEMORY.md").read_text(), what="p-0001")
        await wait_for(pilot, lambda: any("Asks for tables" in (e.raw) for e in
                                          viewer.state.extra["current"].values()), what="the reload")
        await cursor_to(pilot, viewer, "Asks for tables")
        await wait_for(pilot, lambda: "p-0001" in bar_text(app), what="the proposal in the bar")
        assert "by agent-claude" in bar_text(app) and f"approved by {PERSON}" in bar_text(app)


async def test_revise_from_the_keyboard_strikes_the_old_line_and_commits_as_the_person(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await cursor_to(pilot, viewer, "Reads diffs in the terminal")
        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#entry-text")
        assert field.value == "[inferred] Reads diffs in the terminal rather than the browser"
        await pilot.press("ctrl+u")  # an empty entry is refused, inline, and nothing is written
        await pilot.press("enter")
        await wait_for(pilot, lambda: "empty" in str(app.screen.query_one("#entry-error").render()),
                       what="the inline validation message")
        assert "'[stated] Prefers dark mode'" in str(app.screen.query_one("#entry-error").render())
        before = head(demo).hexsha
        await pilot.press(*"[stated] Reads diffs in the browser, side by side")
        await pilot.press("enter")
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the commit")
        text = (demo / "MEMORY.md").read_text()
        assert ("- ~~[inferred] Reads diffs in the terminal rather than the browser (2026-07-01, session-14)~~ "
                "superseded 2026-08-20\n- [stated] Reads diffs in the browser, side by side (2026-08-20, session-14)\n") in text
        commit = head(demo)
        assert commit.author.name == PERSON and commit.message.startswith("revise MEMORY.md § Preferences")
        record = audit(demo)[-1]
        assert (record["actor"], record["action"], record["status"], record["commit"]) == \
            (PERSON, "revise", "applied", commit.hexsha)
        # The cursor lands on the new line, and the person's own edit draws no live-diff marks.
        await wait_for(pilot, lambda: viewer.entry_cursor.entry_at(viewer.cursor) is not None and
                       "side by side" in viewer.entry_cursor.entry_at(viewer.cursor).raw, what="the cursor on the new line")
        assert not viewer.has_marks
        await wait_for(pilot, lambda: any("revise MEMORY.md" in t for t in app.feed.texts()), what="the feed")


async def test_remove_asks_first_then_strikes_removed(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await cursor_to(pilot, viewer, "On-call rotation")
        before = head(demo).hexsha
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("n")  # no: nothing changes
        await pilot.pause(0.2)
        assert head(demo).hexsha == before
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the commit")
        assert ("- ~~[stated] On-call rotation changes on Mondays (2026-05-05, chat)~~ removed 2026-08-20\n"
                in (demo / "MEMORY.md").read_text())
        assert head(demo).author.name == PERSON
        record = audit(demo)[-1]
        assert (record["actor"], record["action"], record["status"]) == (PERSON, "remove", "applied")
        # lazygit-like: the cursor moves on to the next entry that is still current.
        await wait_for(pilot, lambda: "Deploys go through Argo CD" in cursor_raw(viewer),
                       what="the cursor on the next entry")


async def test_promote_an_agents_suggestion_to_stated_walking_the_filter(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await pilot.press("f")  # [inferred] and [suggested] only
        assert viewer.entry_filter == "agent"
        assert [viewer.entry_cursor.entry_at(i).tag for i in viewer.entry_cursor.shown_lines()] == ["inferred", "suggested"]
        assert "Reads diffs" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        await pilot.press("j")
        assert "Cache the billing rates" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        before = head(demo).hexsha
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("enter")  # the picker starts on [stated]: enter is the person confirming it
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the commit")
        text = (demo / "MEMORY.md").read_text()
        assert ("- ~~[suggested] Cache the billing rates table for 5 minutes (2026-07-12, session-16)~~ superseded "
                "2026-08-20\n- [stated] Cache the billing rates table for 5 minutes (2026-08-20, session-16)\n") in text
        assert head(demo).author.name == PERSON
        record = audit(demo)[-1]
        assert (record["action"], record["provenance"], record["actor"]) == ("revise", "stated", PERSON)
        # Promoted, it leaves the filter: the cursor is back on the one agent entry left.
        await wait_for(pilot, lambda: len(viewer.entry_cursor.shown_lines()) == 1, what="the filter to update")
        assert "Reads diffs" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        # Demote it with a quick key in the picker.
        before = head(demo).hexsha
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("g")
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the commit")
        assert "- [suggested] Reads diffs in the terminal rather than the browser (2026-08-20, session-14)\n" in \
            (demo / "MEMORY.md").read_text()


async def test_move_to_another_file_is_one_commit_struck_where_it_was(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await cursor_to(pilot, viewer, "Cache the billing rates")
        before = head(demo).hexsha
        await pilot.press("m")
        await pilot.pause()
        await pilot.press(*"atlas facts")
        await wait_for(pilot, lambda: app.screen.shown == [("projects/atlas.md", "Facts")], what="the targets")
        await pilot.press("enter")
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the commit")
        assert ("- ~~[suggested] Cache the billing rates table for 5 minutes (2026-07-12, session-16)~~ superseded "
                "2026-08-20 (moved to projects/atlas.md § Facts)\n") in (demo / "MEMORY.md").read_text()
        atlas = (demo / "projects/atlas.md").read_text()
        assert ("- [observed] Invoices are generated by a nightly job at 02:00 UTC (2026-07-03, cron)\n"
                "- [suggested] Cache the billing rates table for 5 minutes (2026-07-12, session-16)\n") in atlas
        commit = head(demo)
        assert commit.author.name == PERSON and commit.parents[0].hexsha == before
        assert set(commit.stats.files) == {"MEMORY.md", "projects/atlas.md"}
        assert "→ projects/atlas.md § Facts" in commit.message.splitlines()[0]
        record = audit(demo)[-1]
        assert (record["action"], record["file"], record["section"], record["to"], record["to_section"]) == \
            ("move", "MEMORY.md", "Facts", "projects/atlas.md", "Facts")


async def test_move_within_the_file_and_a_refused_move_shows_why(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await cursor_to(pilot, viewer, "Atlas CI runs")
        before = head(demo).hexsha
        await pilot.press("m")
        await pilot.pause()
        await pilot.press(*"memory.md facts")
        await wait_for(pilot, lambda: app.screen.shown == [("MEMORY.md", "Facts")], what="the targets")
        await pilot.press("enter")
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the commit")
        text = (demo / "MEMORY.md").read_text()
        assert "~~[observed] Atlas CI runs on GitHub Actions, 14 min average (2026-07-30, ci-log)~~ superseded " \
               "2026-08-20 (moved to MEMORY.md § Facts)" in text
        facts = text.split("## Facts", 1)[1].split("## Decisions")[0]
        assert "- [observed] Atlas CI runs on GitHub Actions, 14 min average (2026-07-30, ci-log)\n" in facts


async def test_add_below_the_cursor_in_its_section(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await cursor_to(pilot, viewer, "Uses uv, never pip")
        before = head(demo).hexsha
        await pilot.press("o")
        await pilot.pause()
        assert app.screen.query_one("#entry-text").value == "[stated] "
        await pilot.press(*"Likes tables when comparing options")
        await pilot.press("enter")
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the commit")
        assert ("- [stated] Uses uv, never pip, for Python projects (2026-04-18, chat)\n"
                "- [stated] Likes tables when comparing options (2026-08-20)\n"
                "- [inferred] Reads diffs") in (demo / "MEMORY.md").read_text()
        assert head(demo).author.name == PERSON
        record = audit(demo)[-1]
        assert (record["actor"], record["action"], record["section"]) == (PERSON, "add", "Preferences")


async def test_undo_reverts_the_persons_own_last_edit_not_an_agents_later_write(demo: Path) -> None:
    from memtui.core.writing.memory import Memory

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        original = (demo / "MEMORY.md").read_text()
        await cursor_to(pilot, viewer, "On-call rotation")
        before = head(demo).hexsha
        await pilot.press("x", "y")
        await wait_for(pilot, lambda: head(demo).hexsha != before, what="the remove")
        removed = head(demo).hexsha
        Memory(demo).log("agent wrote to the log after the person's edit", actor="agent-claude")
        log_commit = head(demo).hexsha
        await pilot.press("u")
        await wait_for(pilot, lambda: head(demo).hexsha != log_commit, what="the undo commit")
        assert (demo / "MEMORY.md").read_text() == original
        undo = head(demo)
        assert undo.author.name == PERSON and f"Memtui-Reverts: {removed}" in undo.message
        assert "agent wrote to the log" in (demo / "log/2026-08-20.md").read_text()  # the agent's write stays
        record = audit(demo)[-1]
        assert (record["action"], record["actor"], record["reverts"]) == ("revert", PERSON, removed)
        await pilot.press("u")  # nothing else of ana's to undo: said, nothing written
        await pilot.pause(0.3)
        assert head(demo).hexsha == undo.hexsha


async def test_filters_untagged_and_stale_with_configured_age(demo: Path) -> None:
    config = demo / ".memtui/config.toml"
    write_committed(demo, ".memtui/config.toml", config.read_text() + "\n[curate]\nstale_days = 100\n")
    app = MemtuiApp(demo, watch=False, user=PERSON)
    app.diff_wrap = False  # one row per line: this test reads the unwrapped rows (W wraps them; on by default)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await pilot.press("f", "f")  # untagged
        assert viewer.entry_filter == "untagged"
        assert [viewer.entry_cursor.entry_at(i).text for i in viewer.entry_cursor.shown_lines()] == ["Orion dashboard is paused until Q4"]
        rows = [viewer.row_text(r) for r in range(viewer.virtual_size.height)]
        assert len(rows) == 2 and "## Projects" in rows[0] and "Orion" in rows[1]
        assert "filter: untagged only" in bar_text(app)
        await pilot.press("f")  # stale: dated more than 100 days before 2026-08-20
        assert viewer.entry_filter == "stale"
        shown = [viewer.entry_cursor.entry_at(i).text for i in viewer.entry_cursor.shown_lines()]
        assert shown == ["Wes leads the platform team at Northwind", "Uses uv, never pip, for Python projects",
                         "Staging database is Postgres 16", "On-call rotation changes on Mondays"]
        await pilot.press("j", "j", "j", "j")  # walks only the shown entries, and stops at the last
        assert viewer.entry_cursor.entry_at(viewer.cursor).text == "On-call rotation changes on Mondays"
        await pilot.press("k")
        assert viewer.entry_cursor.entry_at(viewer.cursor).text == "Staging database is Postgres 16"
        await pilot.press("f")  # back to every entry, the cursor where it was
        assert viewer.entry_filter is None and "filter:" not in bar_text(app)
        assert viewer.entry_cursor.entry_at(viewer.cursor).text == "Staging database is Postgres 16"
        await pilot.press("escape")
        assert viewer.cursor is None and not app.query_one(EntryBar).display


async def test_escape_gives_the_review_keys_back(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        await pilot.press("j", "escape")
        await pilot.press("d")  # no cursor: the app's d (diff against the last commit)
        await wait_for(pilot, lambda: app.main.active.startswith("diff-"), what="the diff tab")
        assert viewer.cursor is None


def test_snapshot_of_the_cursor_under_a_filter(snap_compare, demo: Path) -> None:
    async def walk(pilot) -> None:
        viewer = await started(pilot)
        await pilot.press("f", "j")
        await wait_for(pilot, lambda: "commit " in bar_text(pilot.app), what="blame in the bar")
        assert "Cache the billing" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        await pilot.pause(0.1)

    assert snap_compare(MemtuiApp(demo, watch=False, user=PERSON), terminal_size=SIZE, run_before=walk)
