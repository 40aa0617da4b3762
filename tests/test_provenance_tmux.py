"""An OpenClaw workspace kept in git, opened in a real terminal under tmux at 120x35 and 80x24: each line of
MEMORY.md shows who wrote it (the marks and the words), and approving the outside writer's line with `a` turns its
⚑ into ●. The person's `git status` holds only what they approved, and no file of the workspace changed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from support.fixtures_provenance import DAY, agent_writes, openclaw_workspace_in_git
from support.foreign import changed, git_status, listing
from support.tmux import capture, start_app, wait_screen

pytestmark = pytest.mark.tmux
NOW = f"{DAY}T14:05"


def flat(screen: str) -> str:
    """The main area's words on one line (a wrapped line reads whole; scroll bars left out): between the tree's
    edge and the review's, or the whole screen when the file is given it (z, stacked)."""
    rows = screen.splitlines()
    if any("▎" in row for row in rows):
        rows = [row.split("▎", 1)[1].split("▊", 1)[0] for row in rows if "▎" in row]
    return " ".join(re.sub(r"[▁▂▃▄▅▆▇█]", " ", " ".join(rows)).split())


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
def test_who_wrote_each_line_in_a_real_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                size: tuple[int, int]) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    ws = openclaw_workspace_in_git(tmp_path / "workspace")
    mem = Memory(ws)
    q = mem.edit("MEMORY.md", "- Staging deploys happen on Tuesdays.", "- Staging deploys happen on Wednesdays.",
                 actor="mcp:openclaw")
    assert mem.approve(q.id or "", by="wes").status == "applied"
    agent_writes(ws / "MEMORY.md", "- Acme's renewal is worth 40k a year.")
    before, status = listing(ws), git_status(ws)

    tmux = start_app("memtui-provenance", tmp_path, ws, size, NOW)
    try:
        wait_screen(tmux, lambda s: "1 external" in s and "MEMORY.md" in s, "the workspace open")
        if size[0] < 100:
            tmux_keys(tmux, "z")  # stacked: the file given the screen
        screen = wait_screen(tmux, lambda s: "agent mcp:openclaw via MCP" in flat(s), "the provenance words")
        words = flat(screen)
        assert "▲ - Staging deploys happen on Wednesdays. · agent mcp:openclaw via MCP, approved by wes" in words
        assert "⚑ - Acme's renewal is worth 40k a year. · outside writer, not reviewed (not committed)" in words
        assert "· - Priya runs the renewal calls with Acme; she wants numbers before the call. · there before " \
            "memtui (committed by Wes Example)" in words
        assert "· - The public API uses REST. ▲ - Staging" in words  # same change as the line above: the mark only
        # Colour as well as shape: the agent's mark and the outside writer's are drawn in different colours.
        coloured = capture(tmux, escapes=True)
        assert None is not foreground_of(coloured, "▲") != foreground_of(coloured, "⚑") is not None

        tmux_keys(tmux, "a")  # the one waiting change: the outside writer's line
        screen = wait_screen(tmux, lambda s: "outside writer, approved by wes" in flat(s), "the approved mark")
        assert "● - Acme's renewal is worth 40k a year. · outside writer, approved by wes" in flat(screen)
        tmux_keys(tmux, "q")
    finally:
        import subprocess

        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert git_status(ws) == status.replace(" M MEMORY.md\n", "")
    diff = {p: v for p, v in changed(before, ws).items() if p != ".git" and not p.startswith(".git/")}
    assert {p for p in diff if p.split("/")[0] not in (".memtui", "memory-log.jsonl")} == set()
    assert diff == {}  # memtui's bookkeeping is beside the folder, not in it


def foreground_of(coloured: str, symbol: str) -> str | None:
    """The foreground colour the terminal draws the first `symbol` in (tmux's escapes, followed in order)."""
    fg = None
    for m in re.finditer(r"\x1b\[([0-9;]*)m|(.)", coloured, re.S):
        if m.group(2) is not None:
            if m.group(2) == symbol:
                return fg
            continue
        params = m.group(1).split(";") if m.group(1) else ["0"]
        i = 0
        while i < len(params):
            p = params[i]
            if p in ("0", "39"):
                fg = None
            elif p == "38" and i + 1 < len(params):
                n = 3 if params[i + 1] == "5" else 5
                fg = ";".join(params[i:i + n])
                i += n - 1
            elif p == "48" and i + 1 < len(params):
                i += 2 if params[i + 1] == "5" else 4
            elif p.isdigit() and (30 <= int(p) <= 37 or 90 <= int(p) <= 97):
                fg = p
            i += 1
    return None


def tmux_keys(tmux: list[str], *keys: str) -> None:
    import subprocess

    subprocess.run([*tmux, "send-keys", "-t", "app", *keys], check=True)
