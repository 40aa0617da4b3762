"""The embedded agent's memory tools, chosen by `[agent] tools` in .memtui/config.toml.

- `"memtui"` (the default): memtui's own tools (memory_update, memory_search, …, memtui/core/access/tools.py), which
  know sections, entries and provenance.
- `"anthropic-memory"`: Anthropic's memory tool (`memory_20250818`: view, create, str_replace, insert, delete,
  rename on /memories), for models and prompts built around it; its writes are proposals all the same.

Importing this module does not import the SDK; the memory tool's module loads when that tool set is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from memtui.core.access.tools import TOOL_SCHEMAS, ToolOutcome, run_tool
from memtui.core.writing.memory import Memory

TOOLSETS = ("memtui", "anthropic-memory")
DEFAULT_TOOLSET = "memtui"


@dataclass
class Toolset:
    """What the loop sends as `tools=` and how it runs one tool_use block."""

    name: str
    schemas: list[dict[str, Any]]
    runner: Callable[..., ToolOutcome]
    problem: str | None = None  # a bad `[agent] tools` value, said once so a person can fix it
    tool_names: tuple[str, ...] = field(default=())

    def run(self, memory: Memory, name: str, input: Any, actor: str, **context: Any) -> ToolOutcome:
        return self.runner(memory, name, input, actor, **context)


def toolset_for(memory: Memory) -> Toolset:
    choice = memory.config.section("agent").get("tools", DEFAULT_TOOLSET)
    if choice == "anthropic-memory":
        return Toolset("anthropic-memory", [{"type": "memory_20250818", "name": "memory"}], _run_memory_tool,
                       tool_names=("memory",))
    problem = None
    if choice != DEFAULT_TOOLSET:
        problem = (f"[agent] tools = {choice!r} in .memtui/config.toml is not a tool set; using \"memtui\". "
                   f"Choose one of: {', '.join(TOOLSETS)}")
    return Toolset(DEFAULT_TOOLSET, TOOL_SCHEMAS, run_tool, problem, tuple(s["name"] for s in TOOL_SCHEMAS))


def _run_memory_tool(memory: Memory, name: str, input: Any, actor: str, **context: Any) -> ToolOutcome:
    if name != "memory":
        return ToolOutcome(f"Unknown tool {name!r}: the only tool is memory (view, create, str_replace, insert, "
                           "delete, rename on /memories).", True)
    from memtui.agent.memory_tool import MemtuiMemoryTool

    return MemtuiMemoryTool(memory, actor=actor, session=context.get("session")).run(input)
