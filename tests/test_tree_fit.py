"""The memory tree fits its labels to its width (#43): the 100-column snapshots were order-dependent because Textual
measured the labels when it rebuilt the tree's lines, with the badges known then: a name plus its count one cell too
wide for the 18% column brought a sideways scrollbar (`▏` on the bottom row) in some runs and not in others, and
the count itself was cut to `●`. Now a name gives way to its badges, with …, and the tree never scrolls sideways."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def drawn(tree) -> list[str]:
    return [tree.render_line(y).text.rstrip() for y in range(tree.size.height)]


def memory_row(tree) -> str:
    return next(r for r in drawn(tree) if "MEMORY" in r)


async def rebuilt(pilot, tree) -> None:
    """Textual rebuilds the tree's lines (and measures each label) when a folder opens or closes: as it does at
    start, at a moment the badges may or may not have arrived by."""
    tree.root.collapse()
    await pilot.pause()
    tree.root.expand()
    await pilot.pause(0.1)


@pytest.mark.parametrize("order", ["badges, then rebuilt", "rebuilt, then badges"])
async def test_a_badge_that_does_not_fit_takes_room_from_the_name_never_a_scrollbar(demo: Path, order: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=(100, 42)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        tree = app.tree
        width = tree.scrollable_content_region.width
        assert width <= 18  # the tree's column at 100 columns: "├──   MEMORY.md ●12" is 19
        steps = [lambda: tree.set_badges(pending={"MEMORY.md": 12}), None]
        for step in (steps if order.startswith("badges") else steps[::-1]):
            if step is None:
                await rebuilt(pilot, tree)
            else:
                step()
                await pilot.pause(0.1)
        row = memory_row(tree)
        assert row.endswith("●12") and "MEMORY…" in row and len(row) <= width, row  # the count whole, the name cut
        assert not tree.show_horizontal_scrollbar and tree.virtual_size.width <= width
        assert tree.scroll_x == 0
        # The count gone, the name is whole again.
        tree.set_badges(pending={})
        await pilot.pause(0.1)
        assert memory_row(tree).endswith("MEMORY.md"), memory_row(tree)
        assert not tree.show_horizontal_scrollbar


async def test_wider_the_name_and_its_count_are_both_whole(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=(140, 42)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        tree = app.tree
        tree.set_badges(pending={"MEMORY.md": 12})
        await rebuilt(pilot, tree)
        assert memory_row(tree).endswith("MEMORY.md ●12"), memory_row(tree)
