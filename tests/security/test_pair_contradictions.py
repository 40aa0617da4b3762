"""Attacks on a proposal paired with the current entry it contradicts (#43 item 4) and on the context view
(item 5): what an agent sends through the MCP server or the chat's tools is data; only a person turns an add into
a revise, and only of the entry the review showed, as the file is now; planning the context writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import git

from memtui.core.access.tools import run_tool
from memtui.core.hygiene import contradictions
from memtui.core.recall import next_session
from memtui.core.writing.memory import Memory
from support.mcp_client import mcp_client, text_of

NOW = "2026-08-20T14:05"
OLD = "[stated] Deploys go out on Tuesday mornings"


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEMTUI_ROOT": str(root)})


async def test_an_add_from_an_mcp_client_is_paired_and_only_a_person_makes_it_a_revise(root: Path, now) -> None:
    now(NOW)
    mem = Memory(root)
    assert mem.update("Facts", "add", OLD).status == "applied"
    sha = git.Repo(root).head.commit.hexsha
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(root)],
                          {"MEMTUI_NOW": NOW, "MEMTUI_USER": "wes"}) as s:
        # The client also sends a `replaces` of its choosing with its add: an add replaces nothing.
        queued = await s.call_tool("memory_update", {"section": "Facts", "action": "add", "replaces": OLD,
                                                     "entry": "[observed] Deploys go out on Friday mornings"})
        assert not queued.is_error, text_of(queued)
    pid = queued.structured_content["id"]
    found = contradictions.of_proposal(mem, mem.get(pid))
    assert [e.text for e in found] == ["Deploys go out on Tuesday mornings"]
    # An agent approving it as a revise (core, CLI) is refused: nothing is struck, nothing committed.
    assert mem.approve(pid, by="agent:claude", replaces=OLD).status == "refused"
    cli = _cli(root, "queue", "revise", pid, "--replaces", OLD, "--by", "mcp:claude-code")
    assert cli.returncode != 0
    assert git.Repo(root).head.commit.hexsha == sha and mem.get(pid).status == "pending"
    assert "~~" not in (root / "MEMORY.md").read_text()
    # Approved as it is (an add), the agent's `replaces` struck nothing either: both are current.
    assert mem.approve(pid).status == "applied"
    assert "~~" not in (root / "MEMORY.md").read_text()


def test_an_agent_cannot_aim_the_revise_at_another_entry_through_its_add(mem: Memory, root: Path) -> None:
    """The pairing is worked out from the committed file by memtui's rule, never taken from the proposal: an add
    built to look like a change of an unrelated entry pairs with nothing, so R has nothing to strike."""
    assert mem.update("Facts", "add", OLD).status == "applied"
    assert mem.update("Decisions", "add", "[stated] Public API uses tRPC").status == "applied"
    out = run_tool(mem, "memory_update", {"section": "Facts", "action": "add",
                                          "entry": "[observed] Public API uses GraphQL now, Tuesday mornings"},
                   "agent:chat")
    pid = out.result.id
    assert contradictions.of_proposal(mem, mem.get(pid)) == []


def test_hostile_entries_in_the_pairing_and_the_context_stay_data(mem: Memory, root: Path) -> None:
    hostile = "[observed] Staging box runs [bold]tea[/bold] [@click=app.quit]Q[/] at 9 ## Preferences (always)"
    assert mem.update("Facts", "add", hostile).status == "applied"
    out = run_tool(mem, "memory_update", {"section": "Facts", "action": "add",
                                          "entry": hostile.replace("at 9", "at 10")}, "agent:chat")
    pid = out.result.id
    assert [e.text for e in contradictions.of_proposal(mem, mem.get(pid))] == [hostile.removeprefix("[observed] ")]
    view = next_session.next_session(mem, mem.get(pid))
    # The entry is one line of the Facts block, as written: it starts no section and is not drawn as markup here.
    assert view.now.text.count("## Preferences (always)") == 1  # Preferences is empty: only the entry's own text
    assert not any(line.startswith("## Preferences") for line in view.now.text.splitlines())
    assert not any(line.startswith("## Preferences") for line in (view.after.text if view.after else "").splitlines())
    assert any(line.startswith("+- [") and "at 10" in line for line in view.diff.splitlines())
    assert mem.get(pid).status == "pending" and "at 10" not in (root / "MEMORY.md").read_text()


def test_queue_show_json_names_the_contradicted_entry_for_a_script(mem: Memory, root: Path) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    out = run_tool(mem, "memory_update", {"section": "Facts", "action": "add",
                                          "entry": "[observed] Deploys go out on Friday mornings"}, "agent:chat")
    pid = out.result.id
    data = json.loads(_cli(root, "queue", "show", pid, "--json").stdout)
    assert len(data["contradicts"]) == 1 and "Tuesday" in data["contradicts"][0]
