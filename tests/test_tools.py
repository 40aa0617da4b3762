"""The agent's memory tools (memtui.core.access.tools): schemas, the one write path, and errors an agent can act on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memtui.core.access.tools import TOOL_NAMES, TOOL_SCHEMAS, run_tool
from memtui.core.writing.memory import Memory

AGENT = "agent:claude"


def fields(name: str) -> tuple[set[str], set[str]]:
    schema = next(s for s in TOOL_SCHEMAS if s["name"] == name)["input_schema"]
    return set(schema["properties"]), set(schema.get("required", []))


def test_schemas_have_the_names_and_fields_of_the_stable_interface() -> None:
    assert set(TOOL_NAMES) == {"memory_context", "memory_read", "memory_search", "memory_update", "memory_log",
                               "memory_scratch", "memory_edit"}
    assert fields("memory_read") == ({"path", "section"}, {"path"})
    assert fields("memory_search") == ({"query", "regex", "limit"}, {"query"})
    assert fields("memory_update") == ({"section", "action", "entry", "replaces", "file"}, {"section", "action"})
    assert fields("memory_log") == ({"text"}, {"text"})
    assert fields("memory_scratch") == ({"name", "body", "ttl_minutes"}, {"name", "body"})
    assert fields("memory_edit") == ({"path", "old", "new"}, {"path", "old", "new"})
    for schema in TOOL_SCHEMAS:
        assert schema["description"] and schema["input_schema"]["type"] == "object"
        json.dumps(schema)  # sent as-is to the API and over MCP


def test_an_agent_update_is_queued_not_written(mem: Memory) -> None:
    before = mem.read_text("MEMORY.md")
    out = run_tool(mem, "memory_update", {"section": "Projects", "action": "add",
                                          "entry": "[stated] memtui uses Postgres"}, AGENT,
                   user_words="memtui uses Postgres now", session="chat-1")
    assert not out.is_error
    assert out.text.startswith("Queued as p-0001 for review; not in memory yet")
    assert "+- [stated] memtui uses Postgres" in out.text  # the diff, so the agent sees what it proposed
    assert out.result is not None and out.result.status == "queued"
    assert mem.read_text("MEMORY.md") == before
    assert mem.get("p-0001").actor == AGENT and mem.get("p-0001").session == "chat-1"


def test_an_agent_stated_entry_without_the_users_words_is_filed_as_suggested(mem: Memory) -> None:
    out = run_tool(mem, "memory_update", {"section": "Projects", "action": "add",
                                          "entry": "[stated] memtui uses Postgres"}, AGENT, user_words="hello")
    assert out.result is not None and out.result.status == "queued"
    assert mem.get("p-0001").entry.startswith("[suggested] memtui uses Postgres")
    assert "downgraded" in out.text


def test_a_duplicate_add_is_refused_and_says_to_revise(mem: Memory) -> None:
    mem.update("Projects", "add", "[stated] memtui stores its index in Redis")
    out = run_tool(mem, "memory_update", {"section": "Projects", "action": "add",
                                          "entry": "[stated] memtui stores its index in redis"}, AGENT)
    assert out.is_error and out.result is not None and out.result.status == "refused"
    assert "revise" in out.text and "memtui stores its index in Redis" in out.text
    assert mem.proposals() == []


def test_log_and_scratch_apply_at_once_as_the_agent(mem: Memory, now) -> None:
    now("2026-08-20T14:05")
    out = run_tool(mem, "memory_log", {"text": "Talked about the Postgres move"}, AGENT)
    assert not out.is_error and out.text.startswith("Applied")
    assert "- 14:05 [observed] Talked about the Postgres move" in mem.read_text("log/2026-08-20.md")
    out = run_tool(mem, "memory_scratch", {"name": "pr-review", "body": "3 of 7 files", "ttl_minutes": 30}, AGENT)
    assert not out.is_error
    [(path, _)] = mem.live_scratch()
    assert mem.read_text(path) == "3 of 7 files\n"
    actors = {r["actor"] for r in mem.store.audit_records() if r["status"] == "applied"}
    assert actors == {AGENT}


def test_scratch_ttl_out_of_range_is_refused(mem: Memory) -> None:
    out = run_tool(mem, "memory_scratch", {"name": "x", "body": "b", "ttl_minutes": 0}, AGENT)
    assert out.is_error and "ttl_minutes" in out.text
    assert mem.live_scratch() == []


def test_edit_refuses_missing_and_ambiguous_text_and_says_how_to_fix(mem: Memory) -> None:
    mem.create("people/priya.md", "# Priya\n\n- [stated] Likes tea\n- [stated] Likes tea\n")
    out = run_tool(mem, "memory_edit", {"path": "people/priya.md", "old": "Likes coffee", "new": "x"}, AGENT)
    assert out.is_error and "not found" in out.text and "memory_read" in out.text
    out = run_tool(mem, "memory_edit", {"path": "people/priya.md", "old": "Likes tea", "new": "x"}, AGENT)
    assert out.is_error and "appears 2 times" in out.text and "surrounding text" in out.text
    out = run_tool(mem, "memory_edit", {"path": "people/priya.md", "old": "# Priya\n", "new": "# Priya R.\n"},
                   AGENT)
    assert not out.is_error and out.text.startswith("Queued as p-0001")
    assert mem.read_text("people/priya.md").startswith("# Priya\n")


def test_read_numbers_lines_and_reads_one_section(mem: Memory) -> None:
    mem.update("Projects", "add", "[stated] memtui uses Postgres")
    out = run_tool(mem, "memory_read", {"path": "MEMORY.md", "section": "Projects"}, AGENT)
    assert not out.is_error
    lines = out.text.splitlines()
    assert lines[0].startswith("MEMORY.md § Projects (lines ")
    number, _, rest = lines[1].strip().partition("  ")
    assert rest == "## Projects"
    assert mem.document().lines[int(number) - 1].startswith("## Projects")
    assert any("[stated] memtui uses Postgres" in line for line in lines)
    assert "## Facts" not in out.text
    whole = run_tool(mem, "memory_read", {"path": "MEMORY.md"}, AGENT).text
    assert "## User" in whole and "## Facts" in whole


def test_read_errors_name_what_exists(mem: Memory) -> None:
    out = run_tool(mem, "memory_read", {"path": "people/nobody.md"}, AGENT)
    assert out.is_error and "MEMORY.md" in out.text
    out = run_tool(mem, "memory_read", {"path": "MEMORY.md", "section": "Hobbies"}, AGENT)
    assert out.is_error and "Projects" in out.text
    out = run_tool(mem, "memory_read", {"path": "../../etc/passwd"}, AGENT)
    assert out.is_error and "leaves the memory root" in out.text


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("memory_forget", {}, "Unknown tool 'memory_forget': use one of"),
        ("memory_update", {"section": "Projects"}, "missing action"),
        ("memory_update", {"section": "Projects", "action": "replace"}, "action must be one of add, revise"),
        ("memory_update", {"section": "Projects", "action": "add", "entry": 3}, "entry must be a string"),
        ("memory_log", {"text": "x", "tag": "stated"}, "unknown field(s) tag; memory_log takes text"),
        ("memory_search", {"query": "x", "limit": "5"}, "limit must be an integer"),
        ("memory_read", "MEMORY.md", "send a JSON object"),
    ],
)
def test_bad_input_is_an_error_the_agent_can_act_on(mem: Memory, name: str, args, expected: str) -> None:
    out = run_tool(mem, name, args, AGENT)
    assert out.is_error and expected in out.text
    assert mem.proposals() == []


def test_the_tools_module_imports_no_sdk_and_no_ui() -> None:
    code = ("import sys, memtui.core.access.tools; "
            "print([m for m in ('anthropic', 'textual', 'rich', 'mcp') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_search_returns_the_bounded_bundle_with_provenance(mem: Memory, now) -> None:
    from memtui.core.recall.search import search

    now("2026-08-20T14:05")
    mem.update("Projects", "add", "[stated] memtui stores its index in Redis")
    mem.log("Booked flight BLR to SFO for the offsite")
    out = run_tool(mem, "memory_search", {"query": "flight|redis", "regex": True, "limit": 1}, AGENT)
    assert not out.is_error
    assert out.text == search(mem, "flight|redis", regex=True, limit=1).render()
    assert "showing 1 of 2" in out.text and "stated" in out.text
    out = run_tool(mem, "memory_search", {"query": "REDIS"}, AGENT)
    assert "MEMORY.md:" in out.text and "current" in out.text


def test_search_errors_are_tool_errors(mem: Memory) -> None:
    out = run_tool(mem, "memory_search", {"query": "(", "regex": True}, AGENT)
    assert out.is_error and "bad regex" in out.text
    out = run_tool(mem, "memory_search", {"query": "x", "limit": 500}, AGENT)
    assert out.is_error and "limit must be between 1 and 50" in out.text


def test_context_is_the_session_start_pack(mem: Memory) -> None:
    from memtui.core.recall.context import build_context

    mem.update("Preferences", "add", "[stated] Prefers lowercase messages")
    out = run_tool(mem, "memory_context", {}, AGENT)
    assert not out.is_error and out.text == build_context(mem).text
    assert "Prefers lowercase messages" in out.text
