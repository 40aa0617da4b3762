"""A folder memtui did not make gets its history beside it at the first open through any surface that reads or
writes history, not only when the app starts it: a change an outside writer makes after that first open is then an
external change to review, whichever surface comes next (here `memtui queue list` alone). Nothing is written into
the folder, and a project repository the folder sits in is left alone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core.storage.places import places_for
from support.fixtures_cline import replace_in_file, write_bank
from support.foreign import changed, listing
from support.mcp_client import mcp_client


@pytest.fixture
def bank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    return write_bank(tmp_path / "inventory")


def queue_list(bank: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    main(["queue", "list", "--root", str(bank)])
    out = capsys.readouterr()
    return out.out + out.err


def outside_write_then_queue(bank: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Cline writes past memtui; what `memtui queue list` says of it (the folder unchanged by memtui)."""
    replace_in_file(bank, "progress.md", "- Reports\n", "- Reports (started)\n")
    before = listing(bank)
    out = queue_list(bank, capsys)
    assert changed(before, bank) == {}
    return out


@pytest.mark.parametrize("first", [["queue", "list"], ["history", "progress.md"], ["blame", "progress.md"],
                                   ["today"]])
def test_the_first_cli_open_starts_history_beside_and_an_outside_write_after_it_is_reviewed(
        bank: Path, capsys: pytest.CaptureFixture[str], first: list[str]) -> None:
    before = listing(bank)
    assert not places_for(bank).has_git()
    assert main([*first, "--root", str(bank)]) == 0, capsys.readouterr()
    assert places_for(bank).has_git() and places_for(bank).own_history
    assert changed(before, bank) == {}  # no .git, no .memtui/, no audit log in the folder
    out = outside_write_then_queue(bank, capsys)
    assert "progress.md" in out and "external" in out, out


async def test_an_mcp_write_is_a_first_open_too(bank: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {k: os.environ[k] for k in ("MEMTUI_NOW", "XDG_STATE_HOME", "MEMTUI_CONFIG_DIR")}
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(bank)], env) as s:
        res = await s.call_tool("memory_update", {"file": "activeContext.md", "section": "Next Steps",
                                                  "action": "add", "entry": "Scanner batching is next"})
        assert res.structured_content and res.structured_content.get("status") == "queued", res
    assert places_for(bank).has_git()
    out = outside_write_then_queue(bank, capsys)
    assert "progress.md" in out and "external" in out, out
    assert "activeContext.md" in out  # the agent's proposal waits beside the outside change
