"""`memtui mcp`: a real MCP client (the `mcp` SDK) drives the server in a subprocess over stdio."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from memtui.core.access.tools import TOOL_SCHEMAS
from memtui.core.recall.context import build_context
from memtui.core.writing.memory import Memory
from memtui.integrations.mcp_server import MCP_TOOLS, client_actor
from support.mcp_client import mcp_client, text_of

NOW = "2026-08-20T14:05"


def server_env(**extra: str) -> dict[str, str]:
    # The stdio client passes only a safe few variables (PATH, HOME…); the test's pinned clock and name go too.
    return {"MEMTUI_NOW": NOW, "MEMTUI_USER": "wes", **extra}


def memtui_mcp(root: Path) -> tuple[str, list[str]]:
    return sys.executable, ["-m", "memtui", "mcp", "--root", str(root)]


def test_client_names_become_agent_actors() -> None:
    assert client_actor("Claude Code") == "mcp:claude-code"
    assert client_actor("claude-ai") == "mcp:claude-ai"
    assert client_actor(None) == "mcp:client"
    assert client_actor("../../x y") == "mcp:..-..-x-y"
    from memtui.core.grammar.config import ReviewPolicy

    assert ReviewPolicy().is_agent(client_actor("Cursor"))


async def test_an_mcp_client_reads_searches_and_writes_through_review(root: Path, now) -> None:
    now(NOW)
    mem = Memory(root)
    assert mem.update("Preferences", "add", "[stated] Prefers dark mode in every editor").status == "applied"
    assert mem.update("Projects", "add", "[stated] Lumen renewal is signed by Priya Nair").status == "applied"
    memory_before = mem.read_text("MEMORY.md")
    command, args = memtui_mcp(root)
    async with mcp_client(command, args, server_env()) as s:
        listed = (await s.list_tools()).tools
        assert [t.name for t in listed] == [n for n in (t["name"] for t in TOOL_SCHEMAS) if n in MCP_TOOLS]
        assert set(MCP_TOOLS) == {"memory_read", "memory_search", "memory_update", "memory_log", "memory_scratch",
                                  "memory_context"}
        schemas = {t["name"]: t["input_schema"] for t in TOOL_SCHEMAS}
        for tool in listed:  # the same fields as the embedded agent's tools
            assert tool.input_schema == schemas[tool.name]

        read = await s.call_tool("memory_read", {"path": "MEMORY.md", "section": "Preferences"})
        assert not read.is_error
        assert "## Preferences" in text_of(read) and "Prefers dark mode in every editor" in text_of(read)

        found = await s.call_tool("memory_search", {"query": "priya"})
        assert not found.is_error
        assert "Lumen renewal is signed by Priya Nair" in text_of(found) and "MEMORY.md" in text_of(found)

        queued = await s.call_tool("memory_update", {"section": "Projects", "action": "add",
                                                     "entry": "[observed] Lumen renewal is due in October"})
        assert not queued.is_error
        assert text_of(queued).startswith("Queued as p-0001 for review; not in memory yet")
        assert queued.structured_content["status"] == "queued" and queued.structured_content["id"] == "p-0001"
        assert mem.read_text("MEMORY.md") == memory_before  # waiting for a person, not in the file
        p = mem.get("p-0001")
        assert p.actor == "mcp:claude-code" and p.status == "pending" and "Lumen renewal is due" in p.entry

        logged = await s.call_tool("memory_log", {"text": "Reviewed the Lumen contract with Priya"})
        assert not logged.is_error and text_of(logged).startswith("Applied: the change is in memory")
        assert logged.structured_content["status"] == "applied" and logged.structured_content["commit"]
        assert "- 14:05 [observed] Reviewed the Lumen contract with Priya" in mem.read_text("log/2026-08-20.md")

        dup = await s.call_tool("memory_update", {"section": "Preferences", "action": "add",
                                                  "entry": "[stated] prefers dark mode in every editor"})
        assert dup.is_error and text_of(dup).startswith("Refused; nothing was written")
        assert "Prefers dark mode in every editor" in text_of(dup)  # the existing entry, to revise instead
        assert dup.structured_content["status"] == "refused"

        for hostile in ("../../etc/passwd", "log/%2e%2e/%2e%2e/secret.md", ".git/config", "memory-log.jsonl"):
            out = await s.call_tool("memory_read", {"path": hostile})
            assert out.is_error and "Refused; nothing was written" in text_of(out), hostile
        absolute = await s.call_tool("memory_read", {"path": "/etc/passwd"})  # read as root-relative etc/passwd
        assert absolute.is_error and "root:" not in text_of(absolute)
        escape = await s.call_tool("memory_update", {"section": "X", "action": "add", "entry": "[stated] x",
                                                     "file": "../outside.md"})
        assert escape.is_error and "leaves the memory root" in text_of(escape)
        assert not (root.parent / "outside.md").exists()

        scratch = await s.call_tool("memory_scratch", {"name": "lumen-draft", "body": "reply to Priya",
                                                       "ttl_minutes": 30})
        assert not scratch.is_error and scratch.structured_content["status"] == "applied"
        assert [rel for rel, _ in mem.live_scratch()][0].endswith("-lumen-draft.md")

        context = await s.call_tool("memory_context", {})
        assert not context.is_error and text_of(context) == build_context(mem).text
        assert "Prefers dark mode in every editor" in text_of(context)

        bad = await s.call_tool("memory_update", {"section": "Projects", "action": "rewrite"})
        assert bad.is_error and "action must be one of add, revise, remove" in text_of(bad)
        unknown = await s.call_tool("memory_edit", {"path": "MEMORY.md", "old": "a", "new": "b"})
        assert unknown.is_error and "Unknown tool 'memory_edit'" in text_of(unknown)
    audit = [r for r in mem.store.audit_records() if r["actor"] == "mcp:claude-code"]
    assert {r["status"] for r in audit} >= {"applied", "refused"}


def test_mcp_without_a_memory_root_says_how_to_make_one(tmp_path: Path) -> None:
    import subprocess

    missing = tmp_path / "nowhere"
    done = subprocess.run([sys.executable, "-m", "memtui", "mcp", "--root", str(missing)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=30)
    assert done.returncode == 1 and done.stdout == ""  # stdout is the protocol channel: nothing else goes there
    assert f"memtui init {missing}" in done.stderr


def test_the_installed_memtui_command_is_on_path() -> None:
    # The README's configurations run `memtui` by name, as Claude Code and Claude Desktop will.
    assert shutil.which("memtui"), "memtui is not on PATH: `pip install .` puts it there"
    assert os.access(shutil.which("memtui"), os.X_OK)


async def test_done_when_an_mcp_update_shows_in_a_running_apps_review_panel_and_once_approved_in_git(
    root: Path, now, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import git

    from app_support import SIZE, settled, wait_for
    from memtui.tui.app import MemtuiApp

    now(NOW)
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(root.parent / "config"))
    app = MemtuiApp(root, user="wes")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.watcher is not None, what="the app and its watcher")
        assert app.review.proposals == []
        command, args = memtui_mcp(root)
        async with mcp_client(command, args, server_env(), client="Claude Desktop") as s:
            out = await s.call_tool("memory_update", {"section": "Decisions", "action": "add",
                                                      "entry": "[observed] Renewals are signed in October"})
        assert text_of(out).startswith("Queued as p-0001 for review; not in memory yet")
        await wait_for(pilot, lambda: [p.id for p in app.review.proposals] == ["p-0001"], timeout=10,
                       what="the MCP client's proposal in the review panel")
        proposal = app.review.proposals[0]
        assert proposal.actor == "mcp:claude-desktop" and "Renewals are signed in October" in proposal.entry
        await wait_for(pilot, lambda: app.review.selected is not None and app.review.selected.id == "p-0001",
                       what="p-0001 selected")
        await pilot.press("a")
        await wait_for(pilot, lambda: app.review.proposals == [], what="p-0001 to be decided")
    commit = git.Repo(root).head.commit
    assert "Memtui-Proposal: p-0001" in commit.message
    assert "Memtui-Actor: mcp:claude-desktop" in commit.message and "Memtui-Approved-By: wes" in commit.message
    assert "Renewals are signed in October" in (root / "MEMORY.md").read_text()
    assert "Renewals are signed in October" in commit.tree["MEMORY.md"].data_stream.read().decode()


def test_the_cli_loads_without_the_mcp_sdk_textual_serve_or_anthropic() -> None:
    import subprocess

    probe = ("import sys; from memtui.cli import build_parser; build_parser(); "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'textual_serve', 'anthropic'}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
