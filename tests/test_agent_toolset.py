"""`[agent] tools`: the embedded agent on memtui's own tools (default) or on Anthropic's memory tool."""

from __future__ import annotations

from pathlib import Path

from memtui.agent.events import ProposalCard, ToolResult
from memtui.agent.session import ChatSession
from memtui.agent.toolset import toolset_for
from memtui.core.access.tools import TOOL_SCHEMAS
from memtui.core.writing.memory import Memory
from support.anthropic_server import FakeAnthropic, reply, tool_use
from support.by_hand import write_committed


def use_tools(root: Path, value: str) -> None:
    config = root / ".memtui" / "config.toml"
    write_committed(root, ".memtui/config.toml",
                    config.read_text().replace("[agent]\n", f'[agent]\ntools = "{value}"\n', 1))


def test_the_default_is_memtuis_own_tools(mem: Memory) -> None:
    chosen = toolset_for(mem)
    assert chosen.name == "memtui" and chosen.schemas == TOOL_SCHEMAS and chosen.problem is None


def test_an_unknown_tool_set_falls_back_and_says_why(mem: Memory, root: Path) -> None:
    use_tools(root, "bash")
    chosen = toolset_for(mem)
    assert chosen.name == "memtui" and "'bash'" in chosen.problem and "anthropic-memory" in chosen.problem


async def test_the_agent_on_anthropics_memory_tool_proposes_through_review(mem: Memory, root: Path, now) -> None:
    now("2026-08-20T14:05")
    use_tools(root, "anthropic-memory")
    create = {"command": "create", "path": "/memories/people/priya.md", "file_text": "# Priya\n- [stated] Signs\n"}
    with FakeAnthropic(reply(tool_use("memory", {"command": "view", "path": "/memories"}),
                             tool_use("memory", create), tool_use("memory_update", {"section": "X"})),
                       reply("I proposed a file about Priya.")) as server:
        chat = ChatSession(mem, api_key="test", base_url=server.url, max_retries=0)
        try:
            events = [e async for e in chat.turn("Remember Priya signs renewals")]
        finally:
            await chat.aclose()
    assert server.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    view, created, wrong = [e for e in events if isinstance(e, ToolResult)]
    assert not view.is_error and "up to 2 levels deep in /memories" in view.text
    assert created.text.startswith("Queued as p-0001 for review; not in memory yet") and created.status == "queued"
    assert wrong.is_error and "the only tool is memory" in wrong.text
    [card] = [e for e in events if isinstance(e, ProposalCard)]
    assert (card.id, card.action, card.file) == ("p-0001", "create", "people/priya.md")
    assert not (root / "people" / "priya.md").exists()
    assert mem.get("p-0001").actor == "agent:claude"
    results = server.requests[1]["messages"][-1]["content"]
    assert [bool(r.get("is_error")) for r in results] == [False, False, True]
