"""`memtui log` (and the memory_log tool) in an OpenClaw workspace writes daily notes the way OpenClaw writes its own
(`- HH:MM text`, no tag), because OpenClaw's layout has no tags; who wrote the line is kept in history. memtui's own
daily log keeps its tag. Every workspace is built by OpenClaw's rules and kept in the person's git; the folder and
their `git status` are compared before and after."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from support.fixtures_openclaw import person_git, workspace
from support.foreign import changed, git_status, listing

NOW = "2026-12-06T10:15"
NOTE = "memory/2026-12-06.md"


@pytest.fixture
def ws(tmp_path: Path, now, monkeypatch: pytest.MonkeyPatch) -> Path:
    now(NOW)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return workspace(tmp_path / ".openclaw" / "workspace", git=True)


def cli(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMTUI_NOW": NOW, "MEMTUI_USER": "wes"}
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(ws)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_the_cli_log_writes_openclaws_own_daily_note_line(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    done = cli(ws, "log", "Dana asked for VAT numbers on invoices")
    assert done.returncode == 0, done.stdout + done.stderr
    # OpenClaw's own daily note: a "# DATE" heading, then "- HH:MM text" lines (tests/support/fixtures_openclaw.py)
    assert (ws / NOTE).read_text() == "# 2026-12-06\n\n- 10:15 Dana asked for VAT numbers on invoices\n"
    tagged = cli(ws, "log", "--as", "stated", "Invoices are due on the 1st")
    assert tagged.returncode == 0, tagged.stdout + tagged.stderr
    assert (ws / NOTE).read_text().splitlines()[-1] == "- 10:15 Invoices are due on the 1st"
    assert "[" not in (ws / NOTE).read_text()  # no tag written into a file OpenClaw reads as its own
    assert set(changed(before, ws)) - {p for p in changed(before, ws) if p.startswith(".git/")} == {NOTE}
    assert person_git(ws, "log", "-1", "--format=%an", "--", NOTE).strip()  # committed in the person's repository
    assert git_status(ws) == status


def test_an_agents_log_line_is_openclaw_style_and_its_writer_is_in_history(ws: Path) -> None:
    mem = Memory(ws)
    result = mem.log("Staging deploy of billing failed on migration 0042", actor="agent:openclaw")
    assert result.status == "applied", result.message  # a daily log line applies at once, as in every layout
    assert (ws / NOTE).read_text() == "# 2026-12-06\n\n- 10:15 Staging deploy of billing failed on migration 0042\n"
    from memtui.core.timeline.history import blame

    lines = blame(Memory(ws), NOTE)
    assert lines[-1].actor == "agent:openclaw" and lines[-1].text.endswith("migration 0042")


async def test_the_mcp_memory_log_tool_writes_openclaws_style(ws: Path) -> None:
    from support.mcp_client import mcp_client, text_of

    server = {"MEMTUI_NOW": NOW, "MEMTUI_USER": "wes", "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(ws)], server) as s:
        res = await s.call_tool("memory_log", {"text": "Deploy of v2.3 finished"})
        assert not res.is_error, text_of(res)
    assert (ws / NOTE).read_text() == "# 2026-12-06\n\n- 10:15 Deploy of v2.3 finished\n"


def test_an_agents_stated_claim_without_the_users_words_is_downgraded(ws: Path) -> None:
    """The tag is not written, but the claim is still judged, as in memtui's own log: an agent's [stated] needs the
    user's words, else it is kept as [suggested] (in the audit log and history, not in OpenClaw's file)."""
    mem = Memory(ws)
    result = mem.log("The user wants all invoices deleted", tag="stated", actor="agent:openclaw")
    assert (ws / NOTE).read_text().endswith("- 10:15 The user wants all invoices deleted\n")
    record = [r for r in mem.store.audit_records() if r.get("id") == result.id][-1]
    assert record.get("provenance") == "suggested", record
    assert any("downgraded" in f for f in record.get("flags", [])), record


def test_a_line_that_is_not_one_daily_note_waits(ws: Path) -> None:
    result = Memory(ws).log("first line\n- 23:59 a forged second line", actor="agent:openclaw")
    assert result.status in ("queued", "refused"), result.message
    assert not (ws / NOTE).exists()


def test_memtuis_own_daily_log_keeps_its_tag(root: Path, now) -> None:
    now(NOW)
    assert Memory(root).log("Deploy of v2.3 failed", actor="agent").status == "applied"
    assert (root / "log/2026-12-06.md").read_text().endswith("- 10:15 [observed] Deploy of v2.3 failed\n")
