"""Provenance where the format has no tags: each line's writer, surface and approver come from memtui's history.

Foreign memories (tests/support/fixtures_provenance.py) written as OpenClaw and Claude Code write them, then changed
through each surface: the person's own edit, an MCP client, the Anthropic memory tool, the Claude Code hook, the
daily-log fast lane, an outside write to disk approved in memtui, one left unreviewed, and the person's own commit
outside memtui. Every test compares the folder's listing (and the person's `git status`) before and after.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core.grammar.layout import CLAUDE_CODE, OPENCLAW
from memtui.core.timeline import provenance
from memtui.core.writing.memory import Memory
from memtui.integrations import claude_code
from support.fixtures_provenance import (
    DAY, agent_writes, claude_code_memory, openclaw_workspace_in_git,
)
from support.foreign import changed, git_status, listing
from support.mcp_client import mcp_client

NOW = f"{DAY}T14:05"
# memtui's own bookkeeping, kept beside the folder: checked apart first, so a failure names it.
BOOKKEEPING = (".memtui", "memory-log.jsonl", ".git")


def only(diff: dict[str, tuple[str | None, str | None]], *wanted: str) -> dict[str, tuple[str | None, str | None]]:
    """`diff` less the files a person approved (`wanted`) and the person's `.git`, where memtui's commits of them go
    (their `git status` is compared instead)."""
    return {p: v for p, v in diff.items() if p not in wanted and p != ".git" and not p.startswith(".git/")}


def not_bookkeeping(diff: dict[str, tuple[str | None, str | None]]) -> dict[str, tuple[str | None, str | None]]:
    return {p: v for p, v in diff.items() if p.split("/", 1)[0] not in BOOKKEEPING}


def marks(mem: Memory, rel: str) -> dict[str, provenance.LineProvenance]:
    text = (Path(mem.location) / rel).read_text().splitlines()
    lines = provenance.of_file(mem, rel)
    assert lines is not None and len(lines) == len(text)
    return dict(zip(text, lines))


@pytest.fixture
def workspace(tmp_path: Path, now) -> Path:
    now(NOW)
    return openclaw_workspace_in_git(tmp_path / "workspace")


def test_each_line_of_an_openclaw_workspace_names_its_writer_surface_and_approver(workspace: Path) -> None:
    before, status = listing(workspace), git_status(workspace)
    mem = Memory(workspace)
    assert mem.layout().kind == OPENCLAW and provenance.shows(mem)

    own = mem.edit("MEMORY.md", "- Wes's manager is Dana.", "- Wes's manager is Dana Lee.", actor="wes")
    assert own.status == "applied", own.message
    queued = mem.edit("MEMORY.md", "- Staging deploys happen on Tuesdays.", "- Staging deploys happen on Wednesdays.",
                      actor="agent:claude")
    assert queued.status == "queued"
    assert mem.approve(queued.id or "", by="wes").status == "applied"
    agent_writes(workspace / "MEMORY.md", "- Acme's renewal is worth 40k a year.")
    (outside,) = mem.external_proposals()
    assert mem.approve(outside.id, by="wes").status == "applied"
    agent_writes(workspace / "MEMORY.md", "- Priya prefers calls after 10:00.")

    lines = marks(mem, "MEMORY.md")
    first = lines["- Priya runs the renewal calls with Acme; she wants numbers before the call."]
    # The person's own commit from before memtui first kept the workspace: the starting point, not a warning.
    assert (first.writer, first.who, first.approved_by, first.tag) == ("before", "Wes Example", None, "before")
    assert "there before memtui began keeping this memory" in first.label()
    mine = lines["- Wes's manager is Dana Lee."]
    assert (mine.writer, mine.who, mine.tag, mine.reviewed) == ("person", "wes", "stated", True)
    agent = lines["- Staging deploys happen on Wednesdays."]
    assert (agent.writer, agent.who, agent.via, agent.approved_by) == \
        ("agent", "agent:claude", "the memory tool", "wes")
    assert agent.tag == "inferred" and agent.proposal == queued.id and agent.time == f"{DAY}T14:05:00"
    assert agent.label() == f"agent agent:claude via the memory tool, approved by wes {DAY}"
    approved = lines["- Acme's renewal is worth 40k a year."]
    # memtui records an approved outside change under the approver's name: it is still not the person's line.
    assert (approved.writer, approved.approved_by, approved.tag, approved.proposal) == \
        ("outside", "wes", "observed", outside.id)
    loose = lines["- Priya prefers calls after 10:00."]
    assert (loose.writer, loose.commit, loose.reviewed, loose.tag) == ("outside", None, False, None)
    assert not any(p.writer == "person" for t, p in lines.items() if t != "- Wes's manager is Dana Lee.")
    # Plain blame and history (the entry bar in memtui's format, `memtui history`) say so too.
    from memtui.core.timeline.history import blame, history

    assert next(b for b in blame(mem, "MEMORY.md") if "40k" in b.text).actor == "external"
    assert history(mem, "MEMORY.md")[0].actor == "external"

    # Only the approved file changed, and nothing of memtui's bookkeeping is in the folder.
    diff = changed(before, workspace)
    assert not_bookkeeping(only(diff, "MEMORY.md")) == {}
    assert only(diff, "MEMORY.md") == {}
    assert git_status(workspace) == status + " M MEMORY.md\n"


def test_an_agent_applied_at_once_and_each_surface_is_named(workspace: Path) -> None:
    mem = Memory(workspace)
    assert mem.log("Deploy lock raised to 60 s", actor="agent").status == "applied"
    hook = claude_code.pre_tool_use(
        {"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": "Edit", "cwd": str(workspace),
         "tool_input": {"file_path": str(workspace / "USER.md"), "old_string": "- **Timezone:** Europe/Berlin",
                        "new_string": "- **Timezone:** Europe/Lisbon"}}, [workspace])
    reason = hook["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Queued as p-"), reason
    assert mem.approve(reason.split()[2], by="wes").status == "applied"

    daily = marks(mem, f"memory/{DAY}.md")
    fast = next(p for t, p in daily.items() if "Deploy lock raised" in t)
    assert (fast.writer, fast.who, fast.via, fast.approved_by, fast.reviewed, fast.tag) == \
        ("agent", "agent", "the CLI", None, False, "suggested")
    assert "not reviewed (applied at once)" in fast.label()
    user = marks(mem, "USER.md")["- **Timezone:** Europe/Lisbon"]
    assert (user.writer, user.who, user.via, user.approved_by) == \
        ("agent", "claude-code", "the Claude Code hook", "wes")


async def test_an_mcp_clients_line_is_the_agents_even_when_it_calls_itself_the_person(workspace: Path) -> None:
    before = listing(workspace)
    env = {"MEMTUI_NOW": NOW, "MEMTUI_USER": "wes"}
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(workspace)], env, client="wes") as s:
        res = await s.call_tool("memory_update", {"section": "People", "action": "add",
                                                  "entry": "[stated] Priya's deputy is Omar"})
        assert not res.is_error and res.structured_content["status"] == "queued"
        pid = res.structured_content["id"]
    mem = Memory(workspace)
    assert mem.approve(pid, by="wes").status == "applied"
    line = next(p for t, p in marks(mem, "MEMORY.md").items() if "Omar" in t)
    assert (line.writer, line.who, line.via, line.approved_by, line.tag) == \
        ("agent", "mcp:wes", "MCP", "wes", "inferred")
    assert not_bookkeeping(only(changed(before, workspace), "MEMORY.md")) == {}


def test_an_undo_brings_back_an_agents_line_without_making_it_the_persons(workspace: Path) -> None:
    mem = Memory(workspace)
    q = mem.edit("MEMORY.md", "- The public API uses REST.", "- The public API uses tRPC.", actor="agent:claude")
    assert mem.approve(q.id or "", by="wes").status == "applied"
    from memtui.core.timeline.history import restore, revert

    first = mem.store.head()
    assert first is not None
    assert mem.edit("MEMORY.md", "- The public API uses tRPC.", "- The public API uses gRPC.",
                    actor="wes").status == "applied"
    assert revert(mem, mem.store.head().sha, "wes").status == "applied"  # type: ignore[union-attr]
    back = marks(mem, "MEMORY.md")["- The public API uses tRPC."]
    assert (back.writer, back.who, back.via, back.approved_by, back.tag) == \
        ("restored", "wes", "undo", "wes", "observed")
    assert restore(mem, "MEMORY.md", first.sha, "wes").status == "applied"


def test_provenance_is_cached_by_head_and_the_bytes_on_disk(workspace: Path) -> None:
    mem = Memory(workspace)
    first = provenance.of_file(mem, "MEMORY.md")
    assert provenance.of_file(Memory(workspace), "MEMORY.md") is first  # same HEAD, same bytes: not blamed again
    agent_writes(workspace / "MEMORY.md", "- new on disk")
    assert provenance.of_file(mem, "MEMORY.md", cached_only=True) is None
    again = provenance.of_file(mem, "MEMORY.md")
    assert again is not first and again[-1].commit is None and again[:-1] == first


def test_memtuis_own_format_keeps_its_tags_and_the_rest_use_history(tmp_path: Path, mem: Memory) -> None:
    assert not provenance.shows(mem)  # memtui's format: the tag in the line is the provenance
    folder = claude_code_memory(tmp_path / "home")
    before = listing(folder)
    cc = Memory(folder)
    assert cc.layout().kind == CLAUDE_CODE and provenance.shows(cc)
    assert not_bookkeeping(changed(before, folder)) == {}
    assert changed(before, folder) == {}  # no `git init`, no bookkeeping in the folder


def test_cli_blame_prints_each_lines_provenance(workspace: Path, capsys) -> None:
    mem = Memory(workspace)
    q = mem.edit("MEMORY.md", "- Staging deploys happen on Tuesdays.", "- Staging deploys happen on Fridays.",
                 actor="mcp:openclaw")
    assert mem.approve(q.id or "", by="wes").status == "applied"
    agent_writes(workspace / "MEMORY.md", "- Written straight to disk.")
    before, status = listing(workspace), git_status(workspace)

    assert main(["blame", "MEMORY.md", "--root", str(workspace)]) == 0
    out = capsys.readouterr().out.splitlines()
    fri = next(row for row in out if "happen on Fridays" in row)
    assert " ▲ mcp:openclaw ✓wes " in fri and q.id in fri
    assert " ⚑ outside, unreviewed " in next(row for row in out if "Written straight to disk" in row)
    assert " · before memtui " in next(row for row in out if "Priya runs the renewal" in row)
    assert out[-1].startswith("◆ person   ▲ agent, approved")

    assert main(["blame", "MEMORY.md", "--root", str(workspace), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["lines"]
    fri_json = next(r for r in rows if "Fridays" in r["text"])["provenance"]
    assert fri_json["writer"] == "agent" and fri_json["approved_by"] == "wes" and fri_json["via"] == "MCP"
    assert fri_json["tag"] == "inferred" and fri_json["reviewed"] is True
    assert rows[-1]["provenance"]["commit"] is None and rows[-1]["provenance"]["reviewed"] is False
    # Reading changes nothing, bookkeeping included.
    assert changed(before, workspace) == {} and git_status(workspace) == status


def test_cli_blame_of_a_missing_file_says_so_and_changes_nothing(workspace: Path, capsys) -> None:
    Memory(workspace)
    before = listing(workspace)
    assert main(["blame", "nope.md", "--root", str(workspace), "--json"]) == 1
    assert "nope.md does not exist" in json.loads(capsys.readouterr().out)["message"]
    assert changed(before, workspace) == {}


def test_a_layout_forced_in_the_config_draws_provenance_from_history(root: Path, now) -> None:
    from support.by_hand import write_committed

    now(NOW)
    mem = Memory(root)
    assert not provenance.shows(mem)
    cfg = root / ".memtui" / "config.toml"
    write_committed(root, ".memtui/config.toml", cfg.read_text() + '\n[layout]\nkind = "openclaw"\n')
    forced = Memory(root)
    assert forced.layout().kind == OPENCLAW and provenance.shows(forced)
    res = forced.update("Facts", "add", "[observed] The office moves in May", actor="mcp:claude")
    assert forced.approve(res.id or "", by="wes").status == "applied"
    line = next(p for t, p in marks(forced, "MEMORY.md").items() if "office moves" in t)
    assert (line.writer, line.who, line.via, line.approved_by, line.tag) == \
        ("agent", "mcp:claude", "MCP", "wes", "inferred")


# the starting point ------------------------------------------------------------------------------------------------
# Every line of a memory memtui did not make was drawn `⚑ written outside memtui, not reviewed here`, the warning an
# outside writer's unreviewed line gets: on first opening an existing Claude Code or OpenClaw memory, all of it read
# as suspect. What was there when memtui first kept the folder is the starting point (`·`, drawn plain); a commit
# made outside memtui after that is still an outside writer's, whatever date it carries.
def test_what_was_there_when_memtui_first_kept_the_folder_is_the_starting_point(workspace: Path, now) -> None:
    from memtui.cli import start_history

    assert start_history(workspace) is None  # the person's own repository: nothing started, the starting point kept
    mem = Memory(workspace)
    text = "- Priya runs the renewal calls with Acme; she wants numbers before the call."
    start = marks(mem, "MEMORY.md")[text]
    assert (start.writer, start.tag, start.reviewed) == ("before", "before", False)
    assert start.brief() == "there before memtui (committed by Wes Example)" and start.short() == "before memtui"
    # An outside commit after that, back-dated to look older than memtui, is still an outside writer's.
    with (workspace / "MEMORY.md").open("a") as f:
        f.write("- Priya approved the 40k discount.\n")
    import os
    import subprocess

    subprocess.run(["git", "-C", str(workspace), "commit", "-qam", "notes"], check=True,
                   env={**os.environ, "GIT_AUTHOR_DATE": "2020-01-01T00:00:00", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00"})
    late = marks(mem, "MEMORY.md")["- Priya approved the 40k discount."]
    assert (late.writer, late.tag) == ("outside", None) and "no review record" in late.label()
    assert marks(mem, "MEMORY.md")[text].writer == "before"


def test_a_folder_without_git_starts_as_memtuis_copy_of_it_and_no_line_is_a_warning(tmp_path: Path, now) -> None:
    from memtui.cli import start_history

    now(NOW)
    home = claude_code_memory(tmp_path / "home")
    assert start_history(home) is not None
    mem = Memory(home)
    lines = marks(mem, "MEMORY.md")
    assert lines and {p.writer for p in lines.values() if p.commit} == {"before"}
    assert {p.brief() for p in lines.values() if p.commit} == {"there before memtui"}
    assert not any(p.tag is None for p in lines.values())  # no warning on any line of the starting point
