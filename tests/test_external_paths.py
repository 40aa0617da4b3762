"""External changes read for named files only: what a sync after an append reads (git status of those paths), the
others kept from the last whole read, and the whole folder read again once changes stop coming."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory


def test_a_listing_of_named_files_is_the_whole_listing_s_part_for_them(mem: Memory, root: Path) -> None:
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "- [stated] typed by hand (2026-01-01, x)\n")
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "new [1].md").write_text("made outside memtui\n")  # a name that is a glob as a pathspec
    (root / "notes" / "new 1.md").write_text("another\n")
    whole = {(c.path, c.before, c.after) for c in mem.store.external_changes()}
    assert {p for p, _, _ in whole} == {"MEMORY.md", "notes/new [1].md", "notes/new 1.md"}
    part = mem.store.external_changes(["notes/new [1].md", "people/nobody.md"])
    assert [(c.path, c.before, c.after) for c in part] == [x for x in whole if x[0] == "notes/new [1].md"]
    assert mem.store.external_changes([]) == []


def test_proposals_for_named_files_keep_the_others_as_they_were_listed(mem: Memory, root: Path) -> None:
    memory_md = root / "MEMORY.md"
    memory_md.write_text(memory_md.read_text() + "- [stated] one (2026-01-01, x)\n")
    (root / "scratch.md").write_text("scratch\n")
    before = mem.external_proposals()
    assert sorted(p.file for p in before) == ["MEMORY.md", "scratch.md"]
    memory_md.write_text(memory_md.read_text() + "- [stated] two (2026-01-01, x)\n")
    (root / "scratch.md").unlink()  # not named below: still listed as it was until the whole folder is read
    (root / "late.md").write_text("late\n")
    after = mem.external_proposals(["MEMORY.md", "late.md"], before)
    assert [p.file for p in after] == ["MEMORY.md", "scratch.md", "late.md"]
    assert "two" in after[0].diff and after[1] is before[1]
    assert {p.id for p in after} == {p.id for p in mem.external_proposals()} | {before[1].id}
    git_back = mem.external_proposals(["scratch.md"], after)  # named again, and gone: no longer listed
    assert [p.file for p in git_back] == ["MEMORY.md", "late.md"]


async def test_a_sync_after_an_append_reads_that_file_and_the_whole_folder_after_a_quiet_moment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    from memtui.tui.app import MemtuiApp

    root = demo_root(tmp_path, monkeypatch, demo_template)
    monkeypatch.setattr("memtui.tui.syncing.FOLDER_READ_QUIET", 0.5)
    app = MemtuiApp(root, watch=True)
    asked: list[object] = []
    changes = app.memory.store.external_changes
    monkeypatch.setattr(app.memory.store, "external_changes",
                        lambda paths=None: (asked.append(None if paths is None else sorted(paths)), changes(paths))[1])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.changes is not None, what="the first screen")
        await wait_for(pilot, lambda: asked and app.state_sync.waiting is None, what="the watcher's first sync")
        await pilot.pause(0.6)
        asked.clear()
        memory_md = root / "MEMORY.md"
        memory_md.write_text(memory_md.read_text() + "- [stated] typed by hand (2026-01-01, x)\n")
        await wait_for(pilot, lambda: ["MEMORY.md"] in asked, what="the append's sync")
        assert asked[0] == ["MEMORY.md"]  # that file only, not the whole folder
        await wait_for(pilot, lambda: any(p.external and p.file == "MEMORY.md" for p in app.review.proposals),
                       what="the append listed for review")
        assert any(p.external and p.file == "people/alex.md" for p in app.review.proposals)  # kept as it was
        await wait_for(pilot, lambda: None in asked, what="the whole folder read again")


async def test_a_sync_that_lands_while_the_app_shuts_down_touches_no_widget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> None:
    """Textual stops the app running, then takes the screen down a widget at a time: a sync's result that arrives in
    between finds the tree gone and the feed still there (CI saw NoMatches for MemoryTree)."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.messages import StateSynced

    root = demo_root(tmp_path, monkeypatch, demo_template)
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.changes is not None, what="the first screen")
        late = StateSynced(app.state_sync.shown_seq + 1, proposals=[], external=[], activity=[],
                           changed=frozenset(), file_count=None, problems=[])
        app._running = False  # what App._shutdown does first
        try:
            await app.tree.remove()
            assert not app.alive()
            app.state_sync.show(late)  # raised NoMatches before `alive` asked whether the app still runs
            assert app.state_sync.shown_seq == late.seq - 1
        finally:
            app._running = True
