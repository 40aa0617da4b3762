"""`memtui ask` in a subprocess against FakeAnthropic (ANTHROPIC_BASE_URL), and the SDK kept off start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memtui.core.writing.memory import Memory
from support.anthropic_server import FakeAnthropic, reply, tool_use

REDIS = "[stated] memtui: uses Redis for storage"
SAID = "I switched from Redis to Postgres"


def memtui(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, env=full, timeout=60)


def script() -> list:
    return [
        reply("Let me check.", tool_use("memory_read", {"path": "MEMORY.md", "section": "Projects"})),
        reply(tool_use("memory_update", {"section": "Projects", "action": "revise", "replaces": REDIS,
                                         "entry": "[stated] memtui: switched from Redis to Postgres"})),
        reply("I proposed revising the Projects entry; it waits for your review."),
    ]


def test_ask_ends_with_a_queued_revise_of_the_projects_entry(root: Path) -> None:
    Memory(root).update("Projects", "add", REDIS)
    with FakeAnthropic(*script()) as server:
        done = memtui(root, "ask", SAID, env=server.env)
        assert server.pending == 0
    assert done.returncode == 0, done.stderr
    assert "I proposed revising the Projects entry" in done.stdout
    assert "queued p-0001: revise MEMORY.md § Projects: [stated] memtui: switched from Redis to Postgres" in done.stdout
    assert "+- [stated] memtui: switched from Redis to Postgres" in done.stdout  # the diff
    assert server.requests[0].api_key == "test"
    assert server.requests[0]["messages"][0]["content"][-1]["text"] == SAID
    listed = memtui(root, "queue", "list")
    assert listed.returncode == 0
    [line] = listed.stdout.splitlines()
    assert line.split()[:4] == ["p-0001", "pending", "agent:claude", "revise"]
    assert "MEMORY.md § Projects: [stated] memtui: switched from Redis to Postgres" in line
    assert "Postgres" not in (root / "MEMORY.md").read_text()
    assert "Chat with the agent (1 turn)" in "".join(p.read_text() for p in (root / "log").glob("*.md"))


def test_ask_json_reports_reply_tool_calls_and_proposals(root: Path) -> None:
    Memory(root).update("Projects", "add", REDIS)
    with FakeAnthropic(*script()) as server:
        done = memtui(root, "ask", SAID, "--json", "--model", "claude-cli-model", env=server.env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["reply"].startswith("Let me check.") and data["error"] is None
    assert data["model"] == server.requests[0]["model"] == "claude-cli-model"
    assert [c["name"] for c in data["tool_calls"]] == ["memory_read", "memory_update"]
    assert data["tool_calls"][1]["status"] == "queued"
    [proposal] = data["proposals"]
    assert (proposal["id"], proposal["status"], proposal["action"]) == ("p-0001", "pending", "revise")
    assert proposal["diff"].startswith("--- a/MEMORY.md")


def test_ask_without_a_key_says_so_and_exits_1(root: Path) -> None:
    done = memtui(root, "ask", "hello", env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert done.returncode == 1
    assert "ANTHROPIC_API_KEY" in done.stderr and done.stdout == ""


def test_the_cli_does_not_import_the_sdk_at_start_up() -> None:
    code = "import sys, memtui.cli; memtui.cli.build_parser(); print(sorted(m for m in sys.modules " \
           "if m.split('.')[0] in ('anthropic', 'textual', 'httpx') or m.startswith('memtui.agent.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ask_keeps_the_text_blocks_of_a_turn_apart(root: Path) -> None:
    """Text before a tool call and text after it are two paragraphs, streamed and in --json alike."""
    Memory(root).update("Projects", "add", REDIS)
    steps = [reply("I will remember that.", tool_use("memory_read", {"path": "MEMORY.md"})), reply("Done.")]
    with FakeAnthropic(*steps) as server:
        done = memtui(root, "ask", SAID, env=server.env)
    assert done.returncode == 0, done.stderr
    assert "that.Done." not in done.stdout
    assert "I will remember that.\n\nDone." in done.stdout
    with FakeAnthropic(*steps) as server:
        data = json.loads(memtui(root, "ask", SAID, "--json", env=server.env).stdout)
    assert data["reply"] == "I will remember that.\n\nDone."
