"""The documentation's integration recipes, run as written: each block is read from README.md or a page in docs/ and its
command executed with HOME pointing at a test folder, so `~/agent-memory` is a fresh memory root."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from memtui.core.recall.context import build_context
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory
from support.mcp_client import mcp_client, text_of

REPO = Path(__file__).resolve().parent.parent
NOW = "2026-08-20T14:05"
RECIPE = re.compile(r"<!-- recipe:([\w-]+) -->\n```\w*\n(.*?)```", re.S)


def pages() -> list[Path]:
    """Where recipes are shown: the README and every page of docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def recipes() -> dict[str, str]:
    """Every `<!-- recipe:NAME -->` block by name; a name shown twice would leave one copy untested: an error."""
    found: dict[str, str] = {}
    for page in pages():
        for name, body in RECIPE.findall(page.read_text(encoding="utf-8")):
            assert name not in found, f"recipe {name!r} is shown twice; show it once and link to it"
            found[name] = body
    return found


def recipe(name: str) -> str:
    """The fenced block that follows `<!-- recipe:NAME -->` in README.md or docs/."""
    found = recipes()
    assert name in found, f"no recipe {name!r} in README.md or docs/*.md"
    return found[name]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    init_root(tmp_path / "agent-memory")
    Memory(tmp_path / "agent-memory").update("Preferences", "add", "[stated] Prefers email follow-ups on Fridays")
    return tmp_path


def shell(command: str, home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    # Claude Code runs hook commands in a shell; the recipes are shell lines too.
    return subprocess.run(["bash", "-c", command], input=stdin, capture_output=True, text=True, timeout=60,
                          env={"HOME": str(home), "PATH": __import__("os").environ["PATH"], "MEMTUI_NOW": NOW,
                               "MEMTUI_USER": "wes"})


async def drive(command: str, args: list[str], home: Path, client: str) -> None:
    """What an MCP client does with the server a configuration starts: list the tools, write through review."""
    mem = Memory(home / "agent-memory")
    async with mcp_client(command, args, {"HOME": str(home), "MEMTUI_NOW": NOW}, client=client) as s:
        assert len((await s.list_tools()).tools) == 6
        found = await s.call_tool("memory_search", {"query": "fridays"})
        assert "Prefers email follow-ups on Fridays" in text_of(found)
        queued = await s.call_tool("memory_update", {"section": "Projects", "action": "add",
                                                     "entry": "[observed] Lumen renewal is due in October"})
        assert text_of(queued).startswith("Queued as p-0001 for review; not in memory yet")
        logged = await s.call_tool("memory_log", {"text": "Talked about the Lumen renewal"})
        assert text_of(logged).startswith("Applied: the change is in memory")
    assert mem.get("p-0001").actor.startswith("mcp:") and mem.get("p-0001").status == "pending"
    assert "Talked about the Lumen renewal" in mem.read_text("log/2026-08-20.md")


async def test_the_mcp_configurations_start_a_working_server(home: Path) -> None:
    line = recipe("claude-mcp-add").strip()
    assert line.startswith("claude mcp add memtui -- ")
    launches = {"claude mcp add": shlex.split(line.split(" -- ", 1)[1])}
    for name in ("mcp-json", "claude-desktop"):
        server = json.loads(recipe(name))["mcpServers"]["memtui"]
        assert set(server) <= {"command", "args", "env"}
        launches[name] = [server["command"], *server["args"]]
    # One launch line for all three clients; each distinct one is started and driven (today there is one).
    for argv in {tuple(a) for a in launches.values()}:
        await drive(argv[0], list(argv[1:]), home, client="claude-code")


def test_the_session_start_hook_prints_the_context_as_additional_context(home: Path) -> None:
    config = json.loads(recipe("session-start-hook"))
    [entry] = config["hooks"]["SessionStart"]
    assert set(entry["matcher"].split("|")) == {"startup", "resume", "clear", "compact"}
    [hook] = entry["hooks"]
    assert hook["type"] == "command"
    # Claude Code sends the hook its input as JSON on stdin; the hook does not need it, and must not choke on it.
    stdin = json.dumps({"session_id": "abc", "hook_event_name": "SessionStart", "source": "startup",
                        "cwd": str(home), "transcript_path": str(home / "t.jsonl")})
    done = shell(hook["command"], home, stdin)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context == build_context(Memory(home / "agent-memory")).text
    assert "Prefers email follow-ups on Fridays" in context
    plain = shell(hook["command"] + " --text", home, stdin)
    assert plain.returncode == 0 and plain.stdout == context + "\n"


def test_the_session_start_hook_without_a_memory_root_fails_without_a_traceback(home: Path) -> None:
    done = shell("memtui hook session-start --root ~/nowhere", home)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert "memtui init" in done.stderr


def openclaw_workspace(home: Path) -> Path:
    ws = home / ".openclaw" / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# MEMORY.md\n\n## Preferences\n- Likes short answers\n")
    (ws / "memory" / "2026-08-19.md").write_text("# 2026-08-19\n\n- Set up the workspace\n")
    return ws


def test_openclaw_memtui_log_writes_to_the_workspaces_daily_note(home: Path) -> None:
    ws = openclaw_workspace(home)
    memory_md = (ws / "MEMORY.md").read_bytes()
    log_line, open_line = [line.split("#")[0].strip() for line in recipe("openclaw").strip().splitlines()]
    done = shell(log_line, home)
    assert done.returncode == 0, done.stderr
    # As OpenClaw writes its own daily notes: no tag (who wrote the line is in history).
    assert (ws / "memory" / "2026-08-20.md").read_text() == (
        "# 2026-08-20\n\n- 14:05 Renewal call with Priya moved to Friday\n")
    assert not (ws / "log").exists()
    assert (ws / "MEMORY.md").read_bytes() == memory_md
    assert (ws / "memory" / "2026-08-19.md").read_text() == "# 2026-08-19\n\n- Set up the workspace\n"
    assert shlex.split(open_line) == ["memtui", "~/.openclaw/workspace"]


async def test_openclaw_workspace_opens_in_the_app_untouched(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app_support import SIZE, settled, wait_for
    from memtui.tui.app import MemtuiApp

    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(home / "config"))
    ws = openclaw_workspace(home)
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    app = MemtuiApp(ws, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        names = {str(node.label) for node in app.tree.root.children}
        assert any("memory" in n for n in names) and any("MEMORY.md" in n for n in names)
    assert {p: p.read_bytes() for p in before} == before  # nothing memtui was not asked to change
    assert not (ws / ".git").exists()


def test_claude_code_hooks_recipe_puts_claude_codes_own_edit_in_the_review_queue(home: Path) -> None:
    import os
    import sys

    folder = home / ".claude" / "projects" / "-home-wes-app" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- [User role](user_role.md) — senior Go developer\n")
    env = {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "MEMTUI_NOW": NOW,
           "MEMTUI_USER": "wes", "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
           "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}  # where this process's Memory finds the queue
    for line in recipe("claude-code-hooks").splitlines():
        command = line.split("   #", 1)[0].strip()
        if command.startswith("memtui open"):
            continue  # the app itself: tests/test_hook_pre_tool_use.py checks how it finds the folder
        r = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode == 0, (command, r.stderr)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    [group] = settings["hooks"]["PreToolUse"]
    assert group["matcher"] == "Write|Edit|MultiEdit"
    payload = {"session_id": "s-1", "cwd": str(home), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(folder / "MEMORY.md"), "old_string": "senior Go developer",
                              "new_string": "senior Go developer, new to React", "replace_all": False}}
    r = subprocess.run(["bash", "-c", group["hooks"][0]["command"]], input=json.dumps(payload), capture_output=True,
                       text=True, timeout=60, env=env)
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and out["permissionDecisionReason"].startswith("Queued as p-0001")
    assert "new to React" not in (folder / "MEMORY.md").read_text()
    assert Memory(folder).approve("p-0001", by="wes").status == "applied"
    assert "new to React" in (folder / "MEMORY.md").read_text()
    # Claude Code's folder holds its own files only: memtui's history and state are kept beside it.
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md"]
