"""The recurrence gate, tried as an agent that wants its [inferred] lesson to read as "gate met" would: by sending it
as a file edit instead of an entry action, and by naming its own sessions. The gate sees [inferred] entries
whatever write adds them, and counts only sessions memtui attests (memtui/core/writing/recurrence.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.agent.memory_tool import MemtuiMemoryTool
from memtui.core.access.tools import run_tool
from memtui.core.writing import recurrence
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import Proposal
from support.by_hand import write_committed
from test_hook_pre_tool_use import INDEX, folder, hook, home, payload, project  # noqa: F401

AGENT = "agent:claude"
TODAY = "2026-08-20"
LESSON = "[inferred] Prefers answers in German"


@pytest.fixture(autouse=True)
def _today(now) -> None:
    now(f"{TODAY}T14:05")


def edit_in(mem: Memory, line: str, *, actor: str = AGENT, session: str | None = None):
    return mem.edit("MEMORY.md", "## Preferences\n", f"## Preferences\n{line}\n", actor=actor, session=session)


def flags(r) -> list[str]:
    return [f for f in r.flags if f.startswith("candidate:")]


def confirmed(mem: Memory, pid: str) -> dict | None:
    [line] = [a for a in mem.store.audit_records() if a["status"] == "applied" and a["proposal"] == pid]
    return line.get("confirmed")


# 2. file writes meet the gate ------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [f"- {LESSON} ({TODAY})", "- [INFERRED] Prefers answers in German",
                                  "* [Inferred] Prefers answers in German", "1. [inferred] Prefers answers in German",
                                  f"  - {LESSON}"],
                         ids=["plain", "upper case tag", "star bullet", "numbered", "indented"])
def test_an_inferred_entry_sent_as_an_edit_is_a_candidate_and_its_approval_a_confirmation(
        mem: Memory, root: Path, line: str) -> None:
    r = edit_in(mem, line)
    assert r.status == "queued" and flags(r) == ["candidate: 1 of 3 signals across 1 of 2 sessions"], r.flags
    assert mem.approve(r.id, by=AGENT).status == "refused"
    assert mem.approve(r.id, by="wes").status == "applied"
    assert confirmed(mem, r.id) == {"by": "wes", "signals": "1 of 3 signals across 1 of 2 sessions"}


def test_the_same_lesson_as_an_edit_and_as_an_add_is_one_candidate(mem: Memory, now) -> None:
    first = edit_in(mem, f"- {LESSON}")
    now("2026-08-21T10:00")
    second = mem.update("Preferences", "add", LESSON, actor=AGENT)
    assert second.id == first.id and "2 of 3 signals across 2 of 2 sessions" in second.message
    now("2026-08-22T10:00")
    third = edit_in(mem, f"- {LESSON} ({TODAY})")
    assert third.id == first.id and "(gate met)" in third.message
    assert len(mem.proposals(external=False)) == 1


def test_the_memory_tool_and_the_claude_code_hook_send_lessons_through_the_gate(
        mem: Memory, root: Path, folder: Path, project: Path) -> None:  # noqa: F811
    tool = MemtuiMemoryTool(mem, actor=AGENT)
    tool.run({"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "## Preferences\n",
              "new_str": f"## Preferences\n- {LESSON}\n"})
    assert tool.last_result is not None and flags(tool.last_result), "the memory tool's edit skipped the gate"

    new = INDEX + "- [inferred] Prefers table-driven tests\n"
    reply, _ = hook(payload("edit_index", folder, project, old_string=INDEX, new_string=new))
    assert reply is not None
    [queued] = Memory(folder).proposals(external=False)
    assert queued.action == "edit" and any(f.startswith("candidate:") for f in queued.flags), queued.flags


def test_edits_that_add_no_inferred_lesson_are_not_held(mem: Memory, root: Path) -> None:
    held = edit_in(mem, f"- {LESSON}", actor="wes")
    assert held.status == "applied" and not flags(held)  # a person's own lesson
    # Touching the lines around an existing lesson, or changing only its date, adds none.
    r = mem.edit("MEMORY.md", f"- {LESSON}\n", f"- {LESSON}\n- [stated] Lives in Porto ({TODAY})\n", actor=AGENT)
    assert r.status == "queued" and not flags(r), r.flags
    r = mem.edit("MEMORY.md", f"- {LESSON}\n", f"- {LESSON} (2026-08-21)\n", actor=AGENT)
    assert r.status == "queued" and not flags(r), r.flags
    # Striking a lesson is not standing behaviour either.
    r = mem.edit("MEMORY.md", f"- {LESSON}", f"- ~~{LESSON}~~ superseded {TODAY}", actor=AGENT)
    assert not flags(r), r.flags
    write_committed(root, "projects/ci.md", "# CI\n\n## Lessons\n")
    r = mem.edit("projects/ci.md", "## Lessons\n", f"## Lessons\n- {LESSON}\n", actor=AGENT)
    assert r.status == "queued" and not flags(r)  # a topic file is looked up, not loaded every session


def test_a_lesson_hidden_in_a_fenced_block_of_the_edit_is_still_held(mem: Memory) -> None:
    """The edit is a fragment of the file: it cannot tell a fence it opens from one it closes, so every bullet line
    counts (holding a write that waits anyway costs nothing)."""
    r = mem.edit("MEMORY.md", "## Preferences\n", f"## Preferences\n```\n- {LESSON}\n```\n", actor=AGENT)
    assert flags(r), r.flags


def test_an_edit_that_rewrites_a_lesson_is_held_like_a_revise(mem: Memory, root: Path) -> None:
    assert edit_in(mem, f"- {LESSON}", actor="wes").status == "applied"
    r = mem.edit("MEMORY.md", f"- {LESSON}", "- [inferred] Prefers answers in German and French", actor=AGENT)
    assert flags(r), r.flags


# 3. sessions a caller names --------------------------------------------------------------------------------------
def draft(session: str | None, created: str = f"{TODAY}T14:05:00") -> Proposal:
    return Proposal(id="", created=created, actor=AGENT, file="MEMORY.md", action="add", section="Preferences",
                    entry=LESSON, session=session)


@pytest.mark.parametrize("sessions", [
    ("a", "b", "c", "d"),
    # look-alikes of the ids memtui mints for its own conversations, and of its day buckets
    ("chat-20260820T140500-0123456789ab", "chat-20260820T140501-ba9876543210", "chat-20260820T140502-000000000000"),
    ("day:2026-08-18", "day:2026-08-19", "day:2026-08-20"),
    ("mcp:1", "mcp:2", "hook:5c0e7d2a-41b7-4f1e-9f0a-2d6b8e3c9a11"),
], ids=["letters", "minted look-alikes", "day look-alikes", "surfaces"])
def test_one_caller_naming_sessions_brings_one_session(mem: Memory, sessions: tuple[str, ...]) -> None:
    for s in sessions:
        r = mem.submit(draft(s))
    assert "1 of 3 signals across 1 of 2 sessions" in r.message and "gate met" not in r.message
    p = mem.get(r.id)
    assert {s["session"] for s in p.signals} == {f"day:{TODAY}"}
    assert [s["named"] for s in p.signals] == list(sessions)  # kept for the record, not counted
    assert mem.approve(r.id, by="wes").status == "applied"
    assert confirmed(mem, r.id) == {"by": "wes", "signals": "1 of 3 signals across 1 of 2 sessions"}


def test_dates_a_caller_puts_on_its_proposals_do_not_spread_it_over_days(mem: Memory) -> None:
    for day in ("2026-08-17", "2026-08-18", "2026-08-19"):
        r = mem.submit(draft(None, created=f"{day}T09:00:00"))
    assert "1 of 3 signals across 1 of 2 sessions" in r.message
    assert {s["ts"][:10] for s in mem.get(r.id).signals} == {TODAY}


def test_session_ids_from_tool_calls_and_hook_payloads_are_claims(
        mem: Memory, folder: Path, project: Path) -> None:  # noqa: F811
    for s in ("one", "two", "three"):
        out = run_tool(mem, "memory_update", {"section": "Preferences", "action": "add", "entry": LESSON}, AGENT,
                       session=s)
    assert out.result is not None and "1 of 2 sessions" in out.result.message
    for sid in ("s-1", "s-2", "s-3"):
        line = f"- [inferred] Prefers table-driven tests ({TODAY})\n"
        hook({**payload("edit_index", folder, project, old_string=INDEX, new_string=INDEX + line), "session_id": sid})
    [held] = Memory(folder).proposals(external=False)
    assert recurrence.tally(held).sessions == 1, held.signals


def test_conversations_memtui_started_count_and_several_days_meet_the_gate(mem: Memory, now) -> None:
    """The legitimate paths: the embedded agent's conversations (memtui started each), and any surface over days."""
    from memtui.agent.session import ChatSession

    chats = [ChatSession(mem, api_key="unused") for _ in range(3)]
    assert len({c.id for c in chats}) == 3
    for chat in chats:
        r = mem.update("Preferences", "add", LESSON, actor=AGENT, session=chat.id)
    assert "3 of 3 signals across 3 of 2 sessions (gate met)" in r.message
    assert mem.approve(r.id, by="wes").status == "applied" and confirmed(mem, r.id) is None

    other = "[inferred] Prefers diagrams over prose"
    for day in ("2026-08-21", "2026-08-22", "2026-08-23"):
        now(f"{day}T10:00")
        r = run_tool(mem, "memory_update", {"section": "Preferences", "action": "add", "entry": other}, "mcp:x").result
    assert r is not None and "(gate met)" in r.message


def test_a_conversation_id_said_again_in_one_conversation_is_still_one_session(mem: Memory) -> None:
    chat = recurrence.new_session()
    for _ in range(3):
        r = mem.update("Preferences", "add", LESSON, actor=AGENT, session=chat)
    assert "1 of 3 signals across 1 of 2 sessions" in r.message


def test_a_queue_file_stays_what_memtui_recorded(mem: Memory, root: Path) -> None:
    """The signals are saved as memtui counted them: the named session is not what is counted later either."""
    r = mem.submit(draft("a"))
    saved = json.loads((root / ".memtui" / "queue" / f"{r.id}.json").read_text())
    assert saved["signals"][0]["session"] == f"day:{TODAY}" and saved["signals"][0]["named"] == "a"


def test_an_edit_with_more_than_the_lesson_is_never_swallowed_as_a_signal(mem: Memory, root: Path, now) -> None:
    """Joining a candidate drops the write itself: an edit that also carries another entry is held on its own, so
    nothing it writes is lost (and a lone lesson still joins)."""
    first = edit_in(mem, f"- {LESSON}")
    now("2026-08-21T10:00")
    mixed = edit_in(mem, f"- {LESSON}\n- [stated] Lives in Porto ({TODAY})")
    assert mixed.status == "queued" and mixed.id != first.id and flags(mixed)
    assert "Lives in Porto" in mem.get(mixed.id).content
    alone = edit_in(mem, f"- {LESSON}")
    assert alone.id == first.id and "2 of 3 signals across 2 of 2 sessions" in alone.message
