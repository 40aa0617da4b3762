"""The MCP server: the embedded agent's memory tools, over stdio, for Claude Code, Claude Desktop, Cursor and others.

The tools, their fields and their result texts are the embedded agent's own (memtui/core/access/tools.py); this module
only speaks MCP. Every call runs as the actor ``mcp:<client name>`` (the name the client gave in its initialize
request), which the ReviewPolicy counts as an agent: writes to MEMORY.md and topic files wait in the review queue a
running app shows, daily-log lines and scratch notes apply at once, and the result text says which happened.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from memtui import __version__
from memtui.core.access.tools import TOOL_SCHEMAS, run_tool
from memtui.core.writing.memory import Memory

# What other agents get: reading, searching, the guarded entry write, the log, scratch notes and the start-up
# context. Free-form edits (memory_edit) stay with the embedded agent, whose person watches it.
MCP_TOOLS = ("memory_context", "memory_read", "memory_search", "memory_update", "memory_log", "memory_scratch")
READ_ONLY = {"memory_context", "memory_read", "memory_search"}

INSTRUCTIONS = (
    "This server is the user's reviewed, long-term memory: markdown files in a git repository. Call "
    "memory_context at the start of a conversation. Use memory_search before answering questions about the past. "
    "Record durable facts with memory_update (one entry per fact, with its provenance tag); a person reviews them "
    "before they are in memory, and the result says whether a write is applied or queued. Log what happened "
    "today with memory_log."
)


def client_actor(name: str | None) -> str:
    """The actor a client's writes are recorded under: ``mcp:<name>``, a slug, so the policy counts it an agent."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", (name or "").strip().lower()).strip("-")[:40]
    return f"mcp:{slug or 'client'}"


def tool_list() -> list[types.Tool]:
    out = []
    for schema in TOOL_SCHEMAS:
        if schema["name"] not in MCP_TOOLS:
            continue
        read_only = schema["name"] in READ_ONLY
        out.append(types.Tool(
            name=schema["name"], description=schema["description"], input_schema=schema["input_schema"],
            annotations=types.ToolAnnotations(read_only_hint=read_only, destructive_hint=False,
                                              idempotent_hint=read_only, open_world_hint=False),
        ))
    return out


def build_server(root: str | Path | Memory) -> Server[Any]:
    """An MCP server over a memory: a root made by `memtui init`, or an opened Memory (e.g. on a Redis store)."""
    memory = root if isinstance(root, Memory) else Memory(root)
    tools = tool_list()

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None,
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams,
                        ) -> types.CallToolResult:
        if params.name not in MCP_TOOLS:
            return types.CallToolResult(
                content=[types.TextContent(text=f"Unknown tool {params.name!r}: use one of {', '.join(MCP_TOOLS)}.")],
                is_error=True,
            )
        client = ctx.session.client_params.client_info.name if ctx.session.client_params else None
        actor = client_actor(client)
        # The core writes files, takes the cross-process lock and commits: off the event loop.
        outcome = await anyio.to_thread.run_sync(run_tool, memory, params.name, params.arguments or {}, actor)
        structured = None
        if outcome.result is not None:
            r = outcome.result
            structured = {"status": r.status, "id": r.id, "file": r.file, "section": r.section, "entry": r.entry,
                          "commit": r.commit, "warnings": list(r.warnings), "candidates": list(r.candidates)}
        return types.CallToolResult(content=[types.TextContent(text=outcome.text)], is_error=outcome.is_error,
                                    structured_content=structured)

    return Server("memtui", version=__version__, title="memtui memory", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(root: str | Path | Memory) -> None:
    server = build_server(root)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(root: str | Path | Memory) -> None:
    memory = root if isinstance(root, Memory) else Memory(root)
    watcher = None
    if memory.store.local_root is not None:
        from memtui.core.recall.index_watch import IndexWatcher

        # While the server runs it journals the folder's changes, so its own and others' searches need no walk.
        watcher = IndexWatcher(memory.location, publish=True)
    try:
        anyio.run(serve_stdio, memory)
    finally:
        if watcher is not None:
            watcher.stop()
