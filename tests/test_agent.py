"""The embedded agent's tool loop: the real anthropic SDK against FakeAnthropic over loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from memtui.agent.events import (
    Compacted, Decision, Error, ProposalCard, TextDelta, ToolCall, ToolResult, TurnEnd,
)
from memtui.agent.prompt import FLUSH_PROMPT, MEMORY_RULES
from memtui.agent.session import ChatSession
from memtui.core.writing.memory import Memory
from support.anthropic_server import FakeAnthropic, RecordedRequest, error, reply, text, tool_use
from support.by_hand import write_committed

REDIS = "[stated] memtui stores its index in Redis"
POSTGRES = "[stated] memtui stores its index in Postgres"
SAYS = "We moved: memtui stores its index in Postgres now."  # the user's words that support POSTGRES


_open: list[ChatSession] = []


@pytest.fixture(autouse=True)
async def _close_sessions():
    yield
    while _open:
        await _open.pop().aclose()


def session(mem: Memory, server: FakeAnthropic, **kw: Any) -> ChatSession:
    kw.setdefault("max_retries", 0)
    chat = ChatSession(mem, api_key="test", base_url=server.url, **kw)
    _open.append(chat)
    return chat


async def run(chat: ChatSession, message: str) -> list[Any]:
    return [event async for event in chat.turn(message)]


def revise_call() -> dict[str, Any]:
    return tool_use("memory_update", {"section": "Projects", "action": "revise", "replaces": REDIS,
                                      "entry": POSTGRES})


def texts(request: RecordedRequest, index: int = -1) -> str:
    """All text and tool_result text of one message of a recorded request."""
    content = request["messages"][index]["content"]
    if isinstance(content, str):
        return content
    out = []
    for block in content:
        out.append(block.get("text") or json.dumps(block.get("content", "")))
    return "\n".join(out)


@pytest.fixture
def projects(mem: Memory) -> Memory:
    mem.update("Projects", "add", REDIS)
    return mem


async def test_a_revise_is_queued_approved_and_reported_back(projects: Memory) -> None:
    mem = projects
    with FakeAnthropic(reply("Updating memory.", revise_call()), reply("Queued for your review."),
                       reply("Good.")) as server:
        chat = session(mem, server)
        events = await run(chat, SAYS)
        deltas = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert deltas == "Updating memory.Queued for your review."
        [card] = [e for e in events if isinstance(e, ProposalCard)]
        assert (card.id, card.action, card.section, card.status) == ("p-0001", "revise", "Projects", "pending")
        assert "+- [stated] memtui stores its index in Postgres" in card.diff
        [result] = [e for e in events if isinstance(e, ToolResult)]
        assert result.text.startswith("Queued as p-0001 for review; not in memory yet") and result.status == "queued"
        assert events[-1] == TurnEnd("end_turn", deltas, ["p-0001"])
        assert "Postgres" not in mem.read_text("MEMORY.md")
        # the tool_result the model got is the queued wording
        assert "Queued as p-0001 for review; not in memory yet" in texts(server.requests[1])

        assert mem.approve("p-0001", by="wes").status == "applied"
        events = await run(chat, "Thanks")
    [decision] = [e for e in events if isinstance(e, Decision)]
    assert decision.id == "p-0001" and decision.status == "approved"
    told = texts(server.requests[2])
    assert "p-0001" in told and "approved by wes" in told and told.endswith("Thanks")
    assert "- [stated] memtui stores its index in Postgres" in mem.read_text("MEMORY.md")


async def test_a_person_revision_is_reported_as_revised_to(projects: Memory) -> None:
    mem = projects
    with FakeAnthropic(reply(revise_call()), reply("Queued."), reply("Noted."), reply("Still fine.")) as server:
        chat = session(mem, server)
        await run(chat, SAYS)
        mem.approve("p-0001", by="wes", entry="[stated] memtui stores its index in Postgres 16")
        await run(chat, "ok")
        await run(chat, "and now?")
    told = texts(server.requests[2])
    assert "revised to '[stated] memtui stores its index in Postgres 16" in told
    assert "Since your last turn" not in texts(server.requests[3])  # told once, not every turn


async def test_a_rejected_proposal_is_reported_with_its_reason(projects: Memory) -> None:
    mem = projects
    with FakeAnthropic(reply(revise_call()), reply("Queued."), reply("Understood.")) as server:
        chat = session(mem, server)
        await run(chat, SAYS)
        mem.reject("p-0001", reason="only the staging index moved", by="wes")
        events = await run(chat, "hm")
    [decision] = [e for e in events if isinstance(e, Decision)]
    assert decision.status == "rejected"
    assert "rejected by wes because only the staging index moved" in texts(server.requests[2])
    assert "Postgres" not in mem.read_text("MEMORY.md")


async def test_a_duplicate_add_is_refused_and_retried_as_a_revise(projects: Memory) -> None:
    mem = projects

    def after_refusal(request: RecordedRequest):
        [result] = request["messages"][-1]["content"]
        assert result["type"] == "tool_result" and result.get("is_error") is True
        assert "revise" in result["content"] and REDIS in result["content"]
        return reply(revise_call())

    add = tool_use("memory_update", {"section": "Projects", "action": "add",
                                     "entry": "[stated] memtui stores its index in redis"})
    with FakeAnthropic(reply(add), after_refusal, reply("Queued a revise.")) as server:
        chat = session(mem, server)
        events = await run(chat, SAYS)
        assert server.pending == 0 and len(server.requests) == 3
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.is_error, r.status) for r in results] == [(True, "refused"), (False, "queued")]
    [pending] = mem.proposals()
    assert (pending.action, pending.replaces) == ("revise", REDIS + " (" + pending.replaces.split("(")[1])
    assert events[-1].stop_reason == "end_turn"


async def test_no_key_gives_a_clear_message_and_sends_nothing(mem: Memory) -> None:
    with FakeAnthropic(reply("never")) as server:
        chat = ChatSession(mem, base_url=server.url)
        events = await run(chat, "hello")
        assert server.requests == []
    assert isinstance(events[0], Error) and events[0].kind == "no_key"
    assert "ANTHROPIC_API_KEY" in events[0].message
    assert events[-1].stop_reason == "error" and chat.messages == []


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [(500, "server", "internal error (500)"), (529, "overloaded", "overloaded (529)"),
     (429, "rate_limit", "Rate limited by the API (429)")],
)
async def test_api_errors_are_messages_and_the_next_turn_works(mem: Memory, status: int, kind: str,
                                                               words: str) -> None:
    with FakeAnthropic(error(status), reply("Back again.")) as server:
        chat = session(mem, server)
        events = await run(chat, "first try")
        [err] = [e for e in events if isinstance(e, Error)]
        assert err.kind == kind and words in err.message
        assert events[-1].stop_reason == "error"
        events = await run(chat, "second try")
    assert events[-1] == TurnEnd("end_turn", "Back again.", [])
    # the unanswered message was taken back, so roles still alternate
    assert server.requests[1]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "second try"}]}]


async def test_a_529_is_retried_by_the_sdk_when_retries_are_on(mem: Memory) -> None:
    with FakeAnthropic(error(529), reply("Made it.")) as server:
        chat = session(mem, server, max_retries=1)
        events = await run(chat, "hi")
    assert events[-1].text == "Made it." and len(server.requests) == 2


async def test_an_error_inside_the_stream_is_a_message(mem: Memory) -> None:
    with FakeAnthropic(reply("Partial", stream_error=error(529))) as server:
        events = await run(session(mem, server), "hi")
    [err] = [e for e in events if isinstance(e, Error)]
    assert err.kind == "overloaded"


async def test_an_unreachable_server_is_a_network_message(mem: Memory) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    chat = ChatSession(mem, api_key="test", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    _open.append(chat)
    events = await run(chat, "hi")
    [err] = [e for e in events if isinstance(e, Error)]
    assert err.kind == "network" and f"127.0.0.1:{port}" in err.message


async def test_a_cancelled_turn_leaves_a_usable_conversation(mem: Memory) -> None:
    with FakeAnthropic(reply("one two three four five six seven eight nine ten", delay=0.2),
                       reply("Fresh answer.")) as server:
        chat = session(mem, server)
        seen: list[Any] = []

        async def consume() -> None:
            async for event in chat.turn("tell me a long story"):
                seen.append(event)

        task = asyncio.create_task(consume())
        for _ in range(200):
            if any(isinstance(e, TextDelta) for e in seen):
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not any(isinstance(e, TurnEnd) for e in seen)
        assert chat.messages == []
        events = await run(chat, "short one instead")
    assert events[-1].text == "Fresh answer."
    assert server.requests[1]["messages"][0]["content"][-1]["text"] == "short one instead"


async def test_a_tool_loop_is_stopped_and_the_history_stays_valid(mem: Memory) -> None:
    read = tool_use("memory_read", {"path": "MEMORY.md"})
    with FakeAnthropic(reply(read), reply(dict(read, id="toolu_again")), reply("Done now.")) as server:
        chat = session(mem, server, max_tool_rounds=2)
        events = await run(chat, "loop")
        assert [e.kind for e in events if isinstance(e, Error)] == ["tool_loop"]
        events = await run(chat, "answer please")  # strict server: 400 if tool_results did not pair up
    assert events[-1].text == "Done now."
    last = server.requests[2]["messages"][-1]
    assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
    assert last["content"][-1] == {"type": "text", "text": "answer please"}


async def test_model_comes_from_config_or_override(mem: Memory) -> None:
    config = Path(mem.location) / ".memtui/config.toml"
    body = config.read_text(encoding="utf-8")
    write_committed(Path(mem.location), ".memtui/config.toml",
                    body.replace('model = "', 'model = "claude-from-config" #'))
    with FakeAnthropic("a", "b") as server:
        await run(session(mem, server), "hi")
        await run(session(mem, server, model="claude-override"), "hi")
    assert [r["model"] for r in server.requests] == ["claude-from-config", "claude-override"]


async def test_the_system_prompt_puts_the_cached_rules_first(mem: Memory) -> None:
    with FakeAnthropic("hello") as server:
        await run(session(mem, server), "hi")
    system = server.requests[0]["system"]
    assert system[0] == {"type": "text", "text": MEMORY_RULES, "cache_control": {"type": "ephemeral"}}
    assert "[stated] only for what the user said" in MEMORY_RULES
    assert "Revise rather than duplicate" in MEMORY_RULES and "Read before you answer" in MEMORY_RULES
    assert {t["name"] for t in server.requests[0]["tools"]} >= {"memory_update", "memory_read", "memory_edit"}


async def test_the_system_prompt_carries_the_memory_context(projects: Memory) -> None:
    from memtui.core.recall import context

    with FakeAnthropic("hello") as server:
        await run(session(projects, server), "hi")
    system = server.requests[0]["system"]
    assert len(system) == 2 and "cache_control" not in system[1]
    assert system[1]["text"] == context.build_context(projects).text
    assert REDIS in system[1]["text"]


async def test_the_pre_compaction_flush_saves_then_drops_older_turns(mem: Memory, now) -> None:
    now("2026-08-20T14:05")

    def flush(request: RecordedRequest):
        assert FLUSH_PROMPT in texts(request)
        return reply(tool_use("memory_log", {"text": "Wes is comparing Postgres and Redis"}))

    filler = "word " * 400
    with FakeAnthropic(reply(filler), flush, reply("Summary: Wes compares Postgres and Redis."),
                       reply("Carrying on.")) as server:
        chat = session(mem, server, compact_at=300, keep_turns=0)
        await run(chat, "first: " + "long question " * 50)
        events = await run(chat, "second")
    assert len(server.requests) == 4
    [compacted] = [e for e in events if isinstance(e, Compacted)]
    assert compacted.summary == "Summary: Wes compares Postgres and Redis."
    # the silent turn is not shown: only the real answer streams
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Carrying on."
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["memory_log"]
    assert "[observed] Wes is comparing Postgres and Redis" in mem.read_text("log/2026-08-20.md")
    sent = server.requests[3]["messages"]
    assert "Summary: Wes compares Postgres and Redis." in texts(server.requests[3], 0)
    assert all("long question" not in json.dumps(m) for m in sent)
    assert FLUSH_PROMPT not in json.dumps(sent)
    assert sent[-1]["content"][-1]["text"] == "second"


async def test_a_conversation_leaves_one_line_in_todays_log(mem: Memory, now) -> None:
    now("2026-08-20T14:05")
    with FakeAnthropic("Hi Wes.", "Bye.") as server:
        chat = session(mem, server)
        await run(chat, "Hello there")
        await run(chat, "Bye")
    result = chat.close()
    assert result is not None and result.status == "applied"
    assert chat.close() is None
    log = mem.read_text("log/2026-08-20.md")
    assert log.count("Chat with the agent") == 1
    assert "- 14:05 [observed] Chat with the agent (2 turns): began \u201cHello there\u201d" in log
    assert [r["actor"] for r in mem.store.audit_records() if r["file"] == "log/2026-08-20.md"] == ["agent:claude"]


async def test_stated_needs_the_users_own_words_in_this_conversation(projects: Memory) -> None:
    mem = projects
    with FakeAnthropic(reply(revise_call()), reply("Queued."), reply(tool_use(
            "memory_update", {"section": "Facts", "action": "add", "entry": "[stated] Wes keeps bees"})),
            reply("Queued too.")) as server:
        chat = session(mem, server)
        await run(chat, SAYS)
        await run(chat, "What do you know about me?")
    supported, unsupported = mem.proposals()
    assert supported.entry.startswith("[stated] memtui stores its index in Postgres")
    assert unsupported.entry.startswith("[suggested] Wes keeps bees")
    assert supported.session == unsupported.session == chat.id


async def test_the_agent_searches_before_answering_about_the_past(projects: Memory) -> None:
    find = tool_use("memory_search", {"query": "index", "limit": 3})
    with FakeAnthropic(reply(find), reply("Your index is in Redis.")) as server:
        events = await run(session(projects, server), "Where did we keep the index?")
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert not result.is_error and "MEMORY.md:" in result.text and "Redis" in result.text
    [sent] = server.requests[1]["messages"][-1]["content"]
    assert sent["type"] == "tool_result" and sent["content"] == result.text
