"""The queue's rows keep what identifies a proposal (#43): at 80 columns the stacked list is about 30 wide, and rows
cut from the end alone read "3h agent-claude revise MEMO…". Now the asker gives way first, then the section's end,
then a file's folders: the action and the file stay whole, at 80 and at 120 columns, whatever name an agent gives
itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app_support import wait_for
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from support.ten_proposals import AGENT, ten_in_own_home


@pytest.fixture
def ten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ten_in_own_home(tmp_path, monkeypatch)


def drawn_list(app: MemtuiApp) -> list[str]:
    """The queue list's rows as drawn on screen now."""
    options = app.review.option_list
    return [options.render_line(y).text.rstrip() for y in range(options.size.height)]


async def rows_at(root: Path, size: tuple[int, int], count: int, *, last: bool = False) -> tuple[list[str], int]:
    """The first line of each listed proposal drawn at `size` (with the last one selected, scrolled to it), and the
    list's width."""
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.synced and len(app.review.proposals) == count, what="the queue")
        if last:
            app.review.option_list.highlighted = count - 1
        await pilot.pause(0.2)
        rows = drawn_list(app)
        width = app.review.option_list.size.width
    return [r.strip() for r in rows if re.match(r"\s*(⌛ )?(now|\d+[mhdw]) ", r)], width  # not the entry lines


EXPECTED = [  # (the action and the file, the section) of the ten, in the order listed
    ("add MEMORY.md", "Projects"), ("revise MEMORY.md", "Projects"), ("remove MEMORY.md", "Projects"),
    ("add MEMORY.md", "Preferences"), ("add MEMORY.md", "Projects"), ("revise MEMORY.md", "Preferences"),
    ("revise MEMORY.md", "Preferences"), ("add people/maria.md", "Facts"), ("create projects/kestrel.md", ""),
    ("edit people/maria.md", "")]


async def test_at_80_columns_each_row_keeps_its_action_and_file_whole_and_the_asker_gives_way(ten: Path) -> None:
    rows, width = await rows_at(ten, (80, 24), 10)
    assert width <= 40  # stacked beside the diff: the list is narrow
    assert len(rows) >= 6, rows
    for row, (what, section) in zip(rows, EXPECTED):
        assert row.startswith(f"3h {what}"), (row, what)  # the age, the action and the file: never cut
        if section and len(f"3h {what} § {section}") <= width - 4:
            assert f"§ {section}" in row, row  # the section whole where the list has room for it
    # The asker is the part left out (the detail beside names it whole): the rows that name it, name it last.
    assert any(AGENT not in r for r in rows)
    assert all(r.index(" · ") > r.index("MEMORY.md") for r in rows if " · " in r)


async def test_at_120_columns_each_row_is_whole_asker_included(ten: Path) -> None:
    rows, _ = await rows_at(ten, (120, 35), 10)
    assert len(rows) >= 6, rows
    for row, (what, section) in zip(rows[:5], EXPECTED):
        assert row.startswith(f"3h {what} § {section} · {AGENT}"), row


async def test_an_agents_long_or_hostile_name_never_pushes_the_file_out_of_its_row(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    """The asker's name is anyone's to choose: a long one, markup in it, cannot take the row from the file; a
    deep folder gives way to the file's own name."""
    root = ten_in_own_home(tmp_path, monkeypatch)
    (root / "projects" / "payments" / "settlement").mkdir(parents=True)
    (root / "projects" / "payments" / "settlement" / "banks.md").write_text("# Banks\n\n## Facts\n")
    import subprocess

    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=wes", "-c", "user.email=w@x", "commit", "-qm", "banks"], cwd=root,
                   check=True)
    hostile = "agent-" + "very-long-name-" * 4 + "[b]bold[/b]"
    memory = Memory(root)
    r = memory.update("Facts", "add", "[observed] Settlement retries twice", actor=hostile,
                      file="projects/payments/settlement/banks.md", source="runbook")
    assert r.status == "queued", r.message
    rows, width = await rows_at(root, (80, 24), 11, last=True)
    row = next((r for r in rows if "banks.md" in r), None)
    assert row is not None, rows  # listed last (the newest)
    assert row.startswith("now add ") and "banks.md" in row and "[b]" not in row[:row.index("banks.md")], row
    assert "…/banks.md" in row or "projects/payments/settlement/banks.md" in row, row
    assert "bold" not in row or row.index("bold") > row.index("banks.md"), row


async def test_the_rows_fit_again_when_the_terminal_widens(ten: Path) -> None:
    """The rows are laid out at the width drawn: widening the terminal past 100 columns brings the asker back."""
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.synced and len(app.review.proposals) == 10, what="the queue")
        await pilot.pause(0.2)
        assert not drawn_list(app)[0].strip().endswith(AGENT)
        await pilot.resize_terminal(130, 35)
        await wait_for(pilot, lambda: drawn_list(app)[0].strip().endswith(f"· {AGENT}"), what="the asker drawn")
