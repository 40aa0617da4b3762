"""The Anthropic memory tool (memory_20250818) on a memory root: every command and error, in the reference
implementation's wording (tests/test_memory_tool_differential.py compares it with the SDK's own class)."""

from __future__ import annotations

import os
from pathlib import Path

import anthropic
import pytest

from memtui.agent.memory_tool import MemtuiMemoryTool, _as_edit, _human
from memtui.core.writing.memory import Memory
from support.anthropic_server import FakeAnthropic, reply, tool_use
from support.by_hand import write_committed

AGENT = "agent:claude"


@pytest.fixture
def tool(mem: Memory, now) -> MemtuiMemoryTool:
    now("2026-08-20T14:05")
    return MemtuiMemoryTool(mem, actor=AGENT)


@pytest.fixture
def person(mem: Memory, now) -> MemtuiMemoryTool:
    """The same tool writing as a person, whose writes apply at once (so results show the applied wording)."""
    now("2026-08-20T14:05")
    return MemtuiMemoryTool(mem, actor="wes")


def ok(tool: MemtuiMemoryTool, **command) -> str:
    out = tool.run(command)
    assert not out.is_error, out.text
    return out.text


def err(tool: MemtuiMemoryTool, **command) -> str:
    out = tool.run(command)
    assert out.is_error, out.text
    return out.text


# view ---------------------------------------------------------------------------------------------------------
def test_view_lists_two_levels_with_sizes_and_no_hidden_items(person: MemtuiMemoryTool, mem: Memory,
                                                            root: Path) -> None:
    memory_md = len((root / "MEMORY.md").read_bytes())
    ok(person, command="create", path="/memories/people/priya.md", file_text="p" * 1536)
    ok(person, command="create", path="/memories/projects/2026/q4.md", file_text="q" * 100)
    ok(person, command="create", path="/memories/projects/2026/deep/plan.md", file_text="w" * 10)
    (root / "people" / ".draft.md").write_text("hidden")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.md").write_text("left out")
    (root / "linked.md").symlink_to("people/priya.md")  # a linked file inside the root is listed
    # As the reference: each item's own size (a folder's is the file system's, 4K here), names sorted per folder.
    assert ok(person, command="view", path="/memories") == "\n".join([
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:",
        "4K\t/memories",
        f"{_human(memory_md)}\t/memories/MEMORY.md",
        "1.5K\t/memories/linked.md",
        "4K\t/memories/log/",
        "4K\t/memories/node_modules/",
        "8B\t/memories/node_modules/x.md",
        "4K\t/memories/people/",
        "1.5K\t/memories/people/priya.md",
        "4K\t/memories/projects/",
        "4K\t/memories/projects/2026/",
        "4K\t/memories/scratch/",
    ])
    assert ok(person, command="view", path="/memories/projects/") == "\n".join([
        "Here're the files and directories up to 2 levels deep in /memories/projects/, excluding hidden items:",
        "4K\t/memories/projects/",
        "4K\t/memories/projects//2026/",
        "4K\t/memories/projects//2026/deep/",
        "100B\t/memories/projects//2026/q4.md",
    ])
    assert "memory-log.jsonl" not in ok(person, command="view", path="/memories")  # bookkeeping, not memory


def test_view_a_file_with_line_numbers_and_a_range(person: MemtuiMemoryTool) -> None:
    ok(person, command="create", path="/memories/n.md", file_text="one\ntwo\nthree\nfour\n")
    head = "Here's the content of /memories/n.md with line numbers:"
    assert ok(person, command="view", path="/memories/n.md") == (
        f"{head}\n     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\t")  # the final newline's line
    assert ok(person, command="view", path="/memories/n.md", view_range=[2, 3]) == (
        f"{head}\n     2\ttwo\n     3\tthree")
    assert ok(person, command="view", path="/memories/n.md", view_range=[3, -1]) == (
        f"{head}\n     3\tthree\n     4\tfour\n     5\t")
    ok(person, command="create", path="/memories/crlf.md", file_text="a\r\nb\r\n")
    assert ok(person, command="view", path="/memories/crlf.md") == (
        "Here's the content of /memories/crlf.md with line numbers:\n     1\ta\r\n     2\tb\r\n     3\t")
    assert err(person, command="view", path="/memories/n.md", view_range=["a", 2]) == (
        "Error: Invalid `view_range`. It should be a list of two integers.")


def test_view_of_a_missing_path(tool: MemtuiMemoryTool) -> None:
    assert err(tool, command="view", path="/memories/nope.md") == (
        "The path /memories/nope.md does not exist. Please provide a valid path.")
    assert err(tool, command="view", path="/memories/nope") == (
        "The path /memories/nope does not exist. Please provide a valid path.")


# create -------------------------------------------------------------------------------------------------------
def test_an_agents_new_topic_file_waits_for_review(tool: MemtuiMemoryTool, mem: Memory, root: Path) -> None:
    text = ok(tool, command="create", path="/memories/people/priya.md", file_text="# Priya\n- [stated] Signs\n")
    assert text.startswith("Queued as p-0001 for review; not in memory yet: /memories/people/priya.md is created")
    assert "+# Priya" in text  # the diff, so the model sees what it proposed
    assert not (root / "people" / "priya.md").exists()
    p = mem.get("p-0001")
    assert (p.action, p.file, p.actor, p.content) == ("create", "people/priya.md", AGENT, "# Priya\n- [stated] Signs\n")
    assert mem.approve("p-0001", by="wes").status == "applied"
    assert (root / "people" / "priya.md").read_text() == "# Priya\n- [stated] Signs\n"
    assert err(tool, command="create", path="/memories/people/priya.md", file_text="x") == (
        "File /memories/people/priya.md already exists")
    assert err(tool, command="create", path="/memories/people", file_text="x") == (
        "File /memories/people already exists")


def soon(minutes: float = 30) -> int:
    """A scratch expiry (ms) within [review] scratch_max_ttl: such a note applies at once."""
    from memtui.core.basics import clock

    return int((clock.now().timestamp() + minutes * 60) * 1000)


def test_a_short_lived_scratch_note_is_created_at_once(tool: MemtuiMemoryTool, root: Path) -> None:
    name = f"{soon()}-wip.md"
    assert ok(tool, command="create", path=f"/memories/scratch/{name}", file_text="draft\n") == (
        f"File created successfully at: /memories/scratch/{name}")
    assert (root / "scratch" / name).read_text() == "draft\n"


def test_a_scratch_note_that_outlives_the_ttl_waits(tool: MemtuiMemoryTool, root: Path) -> None:
    out = ok(tool, command="create", path="/memories/scratch/9999999999999-wip.md", file_text="draft\n")
    assert out.startswith("Queued as p-") and not (root / "scratch" / "9999999999999-wip.md").exists()


# str_replace --------------------------------------------------------------------------------------------------
PREFS = "# Prefs\nPrefers email.\nTimezone: IST\nPrefers email follow-ups on Fridays.\n"


def test_str_replace_applied_shows_the_snippet(person: MemtuiMemoryTool, root: Path) -> None:
    ok(person, command="create", path="/memories/prefs.md", file_text=PREFS)
    assert ok(person, command="str_replace", path="/memories/prefs.md", old_str="Timezone: IST",
              new_str="Timezone: GMT") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\t# Prefs\n     2\tPrefers email.\n     3\tTimezone: GMT\n     4\tPrefers email follow-ups on Fridays."
        "\n     5\t")
    assert (root / "prefs.md").read_text() == PREFS.replace("IST", "GMT")


def test_str_replace_errors_in_the_docs_wording(person: MemtuiMemoryTool) -> None:
    ok(person, command="create", path="/memories/prefs.md", file_text=PREFS)
    assert err(person, command="str_replace", path="/memories/gone.md", old_str="a", new_str="b") == (
        "The path /memories/gone.md does not exist. Please provide a valid path.")
    assert err(person, command="str_replace", path="/memories/prefs.md", old_str="Timezone: PST", new_str="b") == (
        "No replacement was performed, old_str `Timezone: PST` did not appear verbatim in /memories/prefs.md.")
    assert err(person, command="str_replace", path="/memories/prefs.md", old_str="Prefers email", new_str="b") == (
        "No replacement was performed. Multiple occurrences of old_str `Prefers email` in lines: 2, 4. "
        "Please ensure it is unique")
    ok(person, command="create", path="/memories/d/x.md", file_text="x\n")
    assert err(person, command="str_replace", path="/memories/d", old_str="x", new_str="y") == (
        "The path /memories/d is not a file.")


def test_an_agents_str_replace_on_memory_md_is_an_edit_proposal(tool: MemtuiMemoryTool, mem: Memory) -> None:
    before = mem.read_text("MEMORY.md")
    text = ok(tool, command="str_replace", path="/memories/MEMORY.md", old_str="## Projects\n",
              new_str="## Projects\n\n- [stated] memtui ships in September\n")
    assert text.startswith("Queued as p-0001 for review; not in memory yet: the edit to /memories/MEMORY.md")
    assert mem.read_text("MEMORY.md") == before
    p = mem.get("p-0001")
    assert (p.action, p.file, p.old) == ("edit", "MEMORY.md", "## Projects\n")
    mem.approve("p-0001", by="wes")
    assert "- [stated] memtui ships in September" in mem.read_text("MEMORY.md")


# insert -------------------------------------------------------------------------------------------------------
def test_insert_as_an_edit_proposal_then_approved(tool: MemtuiMemoryTool, person: MemtuiMemoryTool,
                                                  mem: Memory) -> None:
    ok(person, command="create", path="/memories/people/priya.md", file_text="# Priya\n- a\n- a\n- b\n")
    text = ok(tool, command="insert", path="/memories/people/priya.md", insert_line=2, insert_text="- new\n")
    assert text.startswith("Queued as p-0001 for review; not in memory yet: the insertion into "
                           "/memories/people/priya.md is applied")
    p = mem.get("p-0001")
    assert p.action == "edit" and mem.read_text("people/priya.md").count(p.old) == 1  # an anchor that is unique
    mem.approve("p-0001", by="wes")
    assert mem.read_text("people/priya.md") == "# Priya\n- a\n- new\n- a\n- b\n"


def test_insert_applied_at_every_position(person: MemtuiMemoryTool, root: Path) -> None:
    ok(person, command="create", path="/memories/n.md", file_text="one\ntwo\n")
    assert ok(person, command="insert", path="/memories/n.md", insert_line=0, insert_text="zero") == (
        "The file /memories/n.md has been edited.")
    ok(person, command="insert", path="/memories/n.md", insert_line=3, insert_text="three")
    ok(person, command="insert", path="/memories/n.md", insert_line=2, insert_text="one and a half")
    assert (root / "n.md").read_text() == "zero\none\none and a half\ntwo\nthree\n"
    ok(person, command="create", path="/memories/empty.md", file_text="")
    assert ok(person, command="insert", path="/memories/empty.md", insert_line=0, insert_text="first") == (
        "The file /memories/empty.md has been edited.")
    assert (root / "empty.md").read_text() == "first\n"


def test_insert_errors_in_the_docs_wording(person: MemtuiMemoryTool) -> None:
    ok(person, command="create", path="/memories/n.md", file_text="one\ntwo\n")
    assert err(person, command="insert", path="/memories/n.md", insert_line=3, insert_text="x") == (
        "Invalid `insert_line` parameter: 3. It should be within the range [0, 2].")
    assert err(person, command="insert", path="/memories/n.md", insert_line=-1, insert_text="x") == (
        "Invalid `insert_line` parameter: -1. It should be within the range [0, 2].")
    assert err(person, command="insert", path="/memories/gone.md", insert_line=0, insert_text="x") == (
        "The path /memories/gone.md does not exist. Please provide a valid path.")


# delete and rename --------------------------------------------------------------------------------------------
def test_delete_waits_for_review_and_a_directory_is_every_file_in_it(tool: MemtuiMemoryTool,
                                                                    person: MemtuiMemoryTool, mem: Memory,
                                                                    root: Path) -> None:
    ok(person, command="create", path="/memories/people/priya.md", file_text="p\n")
    ok(person, command="create", path="/memories/people/sam.md", file_text="s\n")
    ok(person, command="create", path="/memories/old.md", file_text="o\n")
    text = ok(tool, command="delete", path="/memories/old.md")
    assert text.startswith("Queued as p-0001 for review; not in memory yet: /memories/old.md is deleted")
    assert (root / "old.md").exists()
    text = ok(tool, command="delete", path="/memories/people")
    assert text.startswith("Queued as p-0002, p-0003 for review")
    assert {mem.get(i).file for i in ("p-0002", "p-0003")} == {"people/priya.md", "people/sam.md"}
    mem.approve("p-0001", by="wes")
    assert not (root / "old.md").exists()
    assert err(tool, command="delete", path="/memories/old.md") == "The path /memories/old.md does not exist"
    assert err(tool, command="delete", path="/memories") == "Cannot delete the /memories directory itself"


def test_rename_waits_for_review_and_its_errors(tool: MemtuiMemoryTool, person: MemtuiMemoryTool, mem: Memory,
                                                root: Path) -> None:
    ok(person, command="create", path="/memories/a.md", file_text="a\n")
    ok(person, command="create", path="/memories/b.md", file_text="b\n")
    assert err(tool, command="rename", old_path="/memories/a.md", new_path="/memories/b.md") == (
        "The destination /memories/b.md already exists")
    assert err(tool, command="rename", old_path="/memories/z.md", new_path="/memories/y.md") == (
        "The path /memories/z.md does not exist")
    text = ok(tool, command="rename", old_path="/memories/a.md", new_path="/memories/topics/a.md")
    assert text.startswith("Queued as p-0001 for review; not in memory yet: /memories/a.md is renamed to "
                           "/memories/topics/a.md")
    mem.approve("p-0001", by="wes")
    assert not (root / "a.md").exists() and (root / "topics" / "a.md").read_text() == "a\n"


def test_a_rename_allowed_at_once_by_the_policy_says_successfully(mem: Memory, root: Path, now) -> None:
    now("2026-08-20T14:05")
    write_committed(root, ".memtui/config.toml",
                    '[[review.rule]]\nactor = "agent*"\nfile = "scratch/**"\ndecision = "apply"\n')
    tool = MemtuiMemoryTool(mem, actor=AGENT)
    ok(tool, command="create", path="/memories/scratch/9999999999999-a.md", file_text="a\n")
    assert ok(tool, command="rename", old_path="/memories/scratch/9999999999999-a.md",
              new_path="/memories/scratch/9999999999999-b.md") == (
        "Successfully renamed /memories/scratch/9999999999999-a.md to /memories/scratch/9999999999999-b.md")
    assert ok(tool, command="delete", path="/memories/scratch/9999999999999-b.md") == (
        "Successfully deleted /memories/scratch/9999999999999-b.md")


# paths and input ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", [
    "/memories/../etc/passwd", "/etc/passwd", "/memories/%2e%2e/%2e%2e/etc/passwd", "/memories/.git/config",
    "/memories/.memtui/config.toml", "/memories/memory-log.jsonl", "/memories/a\x00b.md", "memories/x.md",
    "/memories/notes/../../../etc/passwd", "~/x.md",
])
def test_hostile_paths_are_refused_for_every_command(tool: MemtuiMemoryTool, root: Path, path: str) -> None:
    for command in (
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": "x"},
        {"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"},
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/ok.md"},
        {"command": "rename", "old_path": "/memories/MEMORY.md", "new_path": path},
    ):
        out = tool.run(command)
        # The reference's words where it refuses too (leaving the root, not under /memories); memtui's own
        # "Error: …" for what only memtui refuses (its bookkeeping, control characters, percent-encoded `..`).
        assert out.is_error and (out.text == f"Path {path} would escape /memories directory"
                                 or out.text == f"Path must start with /memories, got: {path}"
                                 or out.text.startswith("Error: ")), (command, out.text)
    assert tool.memory.proposals(external=False) == []


def test_a_symlink_out_of_the_root_is_refused(tool: MemtuiMemoryTool, root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("the key\n")
    os.symlink(secret, root / "link.md")
    out = tool.run({"command": "view", "path": "/memories/link.md"})
    assert out.is_error and "the key" not in out.text


def test_bad_input_says_what_to_send(tool: MemtuiMemoryTool) -> None:
    assert err(tool, command="shred", path="/memories/a.md").startswith("Error: Unknown command 'shred'")
    assert err(tool, command="create", path="/memories/a.md") == "Error: create needs file_text (a string)"
    assert err(tool, command="insert", path="/memories/a.md", insert_line="2", insert_text="x") == (
        "Error: insert needs insert_line (an integer)")
    assert tool.run("view /memories").is_error
    assert err(tool, command="create", path="/memories", file_text="x") == "File /memories already exists"


def test_as_edit_anchors_are_unique_whole_lines() -> None:
    for before, after in [
        ("a\na\na\n", "a\nX\na\na\n"), ("a\nb\n", "a\nb\nc\n"), ("a\nb\n", "z\na\nb\n"), ("x\n", "x\nx\n"),
        ("same\nsame\n", "same\nsame\nsame\n"), ("a\r\nb\r\n", "a\r\nnew\nb\r\n"),
    ]:
        old, new = _as_edit(before, after)
        assert old and before.count(old) == 1 and before.replace(old, new, 1) == after, (before, after)


# through the SDK ----------------------------------------------------------------------------------------------
def test_the_sdks_tool_runner_drives_it_against_a_real_http_api(mem: Memory, root: Path, now) -> None:
    now("2026-08-20T14:05")
    with FakeAnthropic(
        reply(tool_use("memory", {"command": "view", "path": "/memories"})),
        reply(tool_use("memory", {"command": "create", "path": f"/memories/scratch/{soon()}-notes.md",
                                  "file_text": "hi\n"}),
              tool_use("memory", {"command": "view", "path": "/memories/../../etc/passwd"})),
        reply("Noted."),
    ) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=256, tools=[MemtuiMemoryTool(mem, actor=AGENT)], thread=False,
            messages=[{"role": "user", "content": "Remember that I said hi"}])
        final = runner.until_done()
    assert final.content[0].text == "Noted."
    assert server.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    listing = server.requests[1]["messages"][-1]["content"][0]
    assert listing["type"] == "tool_result" and "excluding hidden items:" in str(listing["content"])
    created, refused = server.requests[2]["messages"][-1]["content"]
    assert "File created successfully at: /memories/scratch/" in str(created["content"])
    assert not created.get("is_error")
    assert refused["is_error"] is True and (
        "Path /memories/../../etc/passwd would escape /memories directory" in str(refused["content"]))
    [note] = (root / "scratch").glob("*-notes.md")
    assert note.read_text() == "hi\n"
