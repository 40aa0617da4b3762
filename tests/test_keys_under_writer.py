"""A writer touching other files leaves the review panel alone: the selected diff is not parsed, restyled or
scrolled back again, the list is not rebuilt, and an external change is not decoded and diffed again while its
bytes are the same (issue 17: keys within 100 ms with a 20 MB uncommitted file selected, under a writer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.diff import DiffView
from memtui.tui.messages import FilesChanged

BIG = "log/2026-08-21.md"
LINE = "- 14:05 [observed] Deploy step {k} finished; the build log said ok after a retry (2026-08-21, ci)\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    root = demo_root(tmp_path, monkeypatch, demo_template)
    (root / BIG).write_text("# 2026-08-21\n\n" + "".join(LINE.format(k=k) for k in range(30_000)))
    return root


def test_an_unchanged_external_change_is_not_diffed_again(root: Path) -> None:
    memory = Memory(root)
    first = {p.file: p for p in memory.external_proposals()}
    again = {p.file: p for p in memory.external_proposals()}
    assert again[BIG].diff is first[BIG].diff  # the same string: not decoded and diffed a second time
    with (root / BIG).open("a") as f:
        f.write(LINE.format(k="new"))
    changed = {p.file: p for p in memory.external_proposals()}
    assert changed[BIG].after_hash != first[BIG].after_hash
    assert changed[BIG].diff.split("\n")[2] == "@@ -0,0 +1,30003 @@"  # diffed again: one line more


async def test_a_sync_for_another_file_leaves_the_selected_diff_where_the_person_scrolled(root: Path) -> None:
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=(120, 42)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        big = next(p.id for p in app.review.proposals if p.file == BIG)
        app.review.select(big)
        diff = app.review.query_one(DiffView)
        # Drawn and laid out (its scrollbar shown): until the layout after the draw, Textual drops a scroll.
        await wait_for(pilot, lambda: diff.drawn and diff.rel == BIG and diff.allow_vertical_scroll,
                       what="the big log's diff, laid out")
        app.review.option_list.focus()
        diff.scroll_to(y=40, animate=False)
        await pilot.pause(0.05)
        assert diff.scroll_offset.y == 40
        drawn, options = diff._drawn_key, app.review.option_list.option_count
        parsed = diff._seq
        synced = app.synced
        other = root / "log" / "2026-08-22.md"
        for k in range(3):  # a writer appending to another log, each write seen by the app
            other.write_text("# 2026-08-22\n\n" + "".join(f"- 14:06 [observed] line {j}\n" for j in range(k + 1)))
            app.post_message(FilesChanged(frozenset({"log/2026-08-22.md"})))
            await wait_for(pilot, lambda: app.synced > synced, what="the sync")
            synced = app.synced
        # The new log is a new external change: the list grows once, the selected diff stays as it was.
        assert app.review.selected.id == big
        assert diff._seq == parsed and diff._drawn_key == drawn, "the same diff was parsed and drawn again"
        assert diff.scroll_offset.y == 40, "a sync for another file scrolled the diff back to its top"
        assert app.review.option_list.option_count == options + 1
