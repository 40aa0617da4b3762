"""The viewer draws each line of a format without tags by its history: the person's ◆, an agent's ▲ with its
approver, an outside writer's ⚑ until a person approves it (then ●), and says so in words on the first line of each
run; memtui's own format keeps drawing its tags."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.entry_bar import EntryBar
from support.fixtures_provenance import DAY, agent_writes, openclaw_workspace_in_git
from support.foreign import changed, git_status, listing

NOW = f"{DAY}T14:05"


def agent_commit(workspace: Path) -> str:
    from support.fixtures_provenance import git

    return git(workspace, "log", "-1", "--format=%H", "-S", "Wednesdays").strip()


def row(viewer, needle: str) -> str:
    st = viewer.state
    i = next(n for n, line in enumerate(st.lines) if needle in line)
    return viewer.row_text(viewer._row_of(i))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    ws = openclaw_workspace_in_git(tmp_path / "workspace")
    mem = Memory(ws)
    queued = mem.edit("MEMORY.md", "- Staging deploys happen on Tuesdays.", "- Staging deploys happen on Wednesdays.\n"
                      "- Production deploys need two reviewers.", actor="mcp:openclaw")
    assert mem.approve(queued.id or "", by="wes").status == "applied"
    assert mem.edit("MEMORY.md", "- Wes's manager is Dana.", "- Wes's manager is Dana Lee.",
                    actor="wes").status == "applied"
    agent_writes(ws / "MEMORY.md", "- Acme's renewal is worth 40k a year.")
    return ws


async def test_the_viewer_marks_each_line_by_who_wrote_it_and_an_approval_changes_the_mark(workspace: Path) -> None:
    before, status = listing(workspace), git_status(workspace)
    app = MemtuiApp(workspace, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        viewer = app.viewer_for("MEMORY.md")
        await wait_for(pilot, lambda: "provenance" in viewer.state.extra, what="the provenance marks")
        agent = row(viewer, "on Wednesdays")
        assert agent.lstrip().startswith("▲") and "· agent mcp:openclaw via MCP, approved by wes" in agent
        mine = row(viewer, "Dana Lee")
        assert mine.lstrip().startswith("◆") and mine.rstrip().endswith("· wes (person)")
        loose = row(viewer, "worth 40k")
        assert loose.lstrip().startswith("⚑") and "outside writer, not reviewed" in loose
        assert "untagged" not in loose  # a format without tags is not flagged for lacking them
        theirs = row(viewer, "Priya runs the renewal")
        assert theirs.lstrip().startswith("·") and "there before memtui (committed by Wes Example)" in theirs
        # The next line of the same change carries the mark, not the words again; a new run says who again.
        assert row(viewer, "two reviewers").lstrip().startswith("▲") and "approved" not in row(viewer, "two reviewers")
        assert "there before memtui" in row(viewer, "The public API uses REST")
        # Colour as well as shape: the agent's line in the [inferred] colour, the person's in [stated]'s.
        assert viewer.get_component_rich_style("viewer--inferred").color is not None

        # The entry bar names the line's provenance where a tag would be: who, through what, approved by whom.
        viewer.focus()
        await pilot.press("j")
        while viewer.cursor is not None and "on Wednesdays" not in viewer.state.lines[viewer.cursor]:
            await pilot.press("j")
        bar = str(app.query_one(EntryBar).render())
        assert bar.startswith("▲ agent · § Decisions │ agent mcp:openclaw via MCP, approved by wes 2026-08-20")
        assert "untagged" not in bar and f"commit {agent_commit(workspace)[:8]}" in bar
        await pilot.press("escape")

        (ext,) = [p for p in app.memory.external_proposals()]
        assert app.review.select(ext.id)
        await pilot.pause()
        app.action_approve()
        await wait_for(pilot, lambda: row(viewer, "worth 40k").lstrip().startswith("●"), what="the approved mark")
        assert row(viewer, "worth 40k").rstrip().endswith("· outside writer, approved by wes")
    # The approval committed the bytes on disk: no file of the workspace changed, the person's status lost the edit.
    after = {p: v for p, v in changed(before, workspace).items() if p != ".git" and not p.startswith(".git/")}
    assert {p for p in after if p.split("/")[0] not in (".memtui", "memory-log.jsonl")} == set()
    assert " M MEMORY.md\n" in status and git_status(workspace) == status.replace(" M MEMORY.md\n", "")
    assert after == {}  # memtui's bookkeeping is beside the folder, not in it


async def test_memtuis_own_format_still_draws_its_tags(tmp_path: Path, monkeypatch, demo_template: Path) -> None:
    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        viewer = app.viewer_for("MEMORY.md")
        assert "provenance" not in viewer.state.extra
        tagged = next(i for i, line in enumerate(viewer.state.lines) if line.startswith("- [stated]"))
        assert viewer.row_text(viewer._row_of(tagged)).lstrip().startswith("◆")
        assert "approved by" not in viewer.row_text(viewer._row_of(tagged))


def test_snapshot_of_a_workspace_drawn_by_provenance(snap_compare, workspace: Path) -> None:
    """The marks' colours in the theme: ◆ stated's, ▲ inferred's, ⚑ the untagged warning's, and the words."""

    async def marked(pilot) -> None:
        await wait_for(pilot, lambda: settled(pilot.app), what="the app to settle")
        viewer = pilot.app.viewer_for("MEMORY.md")
        await wait_for(pilot, lambda: "provenance" in viewer.state.extra, what="the provenance marks")
        await pilot.pause(0.1)

    assert snap_compare(MemtuiApp(workspace, watch=False), terminal_size=SIZE, run_before=marked)
