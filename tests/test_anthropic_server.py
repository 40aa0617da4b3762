"""The fake Messages API server, driven by the real anthropic SDK over loopback."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anthropic
import pytest

from support.anthropic_server import FakeAnthropic, RecordedRequest, error, reply, text, tool_use

MODEL = "claude-test"


def sync_client(server: FakeAnthropic, max_retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=max_retries)


def async_client(server: FakeAnthropic) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def test_plain_text_reply() -> None:
    with FakeAnthropic(reply(text("Hello there"))) as server:
        message = sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == "Hello there"
    assert message.stop_reason == "end_turn"
    assert message.model == MODEL
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert server.pending == 0


def test_string_script_item_is_a_text_reply() -> None:
    with FakeAnthropic("Short answer") as server:
        message = sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])
    assert message.content[0].text == "Short answer"


def test_streamed_text_arrives_in_order() -> None:
    with FakeAnthropic(reply(text("The quick brown fox"))) as server:
        with sync_client(server).messages.stream(model=MODEL, max_tokens=64, messages=[user("Go")]) as stream:
            deltas = list(stream.text_stream)
            final = stream.get_final_message()
    assert deltas == ["The ", "quick ", "brown ", "fox"]
    assert final.content[0].text == "The quick brown fox"
    assert final.stop_reason == "end_turn"
    assert server.requests[0]["stream"] is True


def test_streamed_events_have_the_api_shapes() -> None:
    with FakeAnthropic(reply(text("a b"))) as server:
        with sync_client(server).messages.stream(model=MODEL, max_tokens=64, messages=[user("Go")]) as stream:
            kinds = [event.type for event in stream]
    assert kinds == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "text",
        "content_block_delta",
        "text",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_streamed_tool_use_input_parses_into_the_given_dict() -> None:
    args = {"section": "Projects", "text": "memtui: TUI for agent memory — ünïcode", "tags": ["a", "b"], "n": 3}
    with FakeAnthropic(reply(text("Updating."), tool_use("memory_update", args, id="toolu_1"))) as server:
        with sync_client(server).messages.stream(model=MODEL, max_tokens=64, messages=[user("Go")]) as stream:
            json_deltas = [event.partial_json for event in stream if event.type == "input_json"]
            final = stream.get_final_message()
    assert len(json_deltas) > 1
    assert final.stop_reason == "tool_use"
    assert [block.type for block in final.content] == ["text", "tool_use"]
    block = final.content[1]
    assert (block.id, block.name, block.input) == ("toolu_1", "memory_update", args)


def test_non_streamed_tool_use_and_generated_ids() -> None:
    with FakeAnthropic(reply(tool_use("a", {}), tool_use("b", {"x": 1}))) as server:
        message = sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("Go")])
    first, second = message.content
    assert first.input == {} and second.input == {"x": 1}
    assert first.id.startswith("toolu_") and first.id != second.id
    assert message.stop_reason == "tool_use"


def test_500_raises_internal_server_error() -> None:
    with FakeAnthropic(error(500, message="boom")) as server:
        with pytest.raises(anthropic.InternalServerError) as info:
            sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])
    assert info.value.status_code == 500
    assert info.value.type == "api_error"
    assert info.value.api_message == "boom"


def test_529_raises_overloaded_error() -> None:
    with FakeAnthropic(error(529)) as server:
        with pytest.raises(anthropic.APIStatusError) as info:
            sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])
    assert isinstance(info.value, anthropic.OverloadedError)
    assert info.value.status_code == 529
    assert info.value.body == {"type": "error", "error": {"type": "overloaded_error", "message": info.value.api_message}}


@pytest.mark.parametrize(
    ("status", "cls"), [(401, anthropic.AuthenticationError), (429, anthropic.RateLimitError)]
)
def test_client_errors_map_to_sdk_classes(status: int, cls: type[anthropic.APIStatusError]) -> None:
    with FakeAnthropic(error(status)) as server:
        with pytest.raises(cls):
            sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])


def test_empty_script_answers_500_with_a_clear_message() -> None:
    with FakeAnthropic() as server:
        with pytest.raises(anthropic.InternalServerError, match="no scripted reply left"):
            sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])


def test_sdk_retries_consume_scripted_errors() -> None:
    with FakeAnthropic(error(529), error(500), reply("finally")) as server:
        message = sync_client(server, max_retries=2).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])
    assert message.content[0].text == "finally"
    assert len(server.requests) == 3


def test_should_retry_false_stops_sdk_retries() -> None:
    with FakeAnthropic(error(529, should_retry=False), reply("unused")) as server:
        with pytest.raises(anthropic.OverloadedError):
            sync_client(server, max_retries=2).messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])
    assert server.pending == 1


def test_requests_record_system_tools_tool_results_and_headers() -> None:
    system = [{"type": "text", "text": "You curate memory.", "cache_control": {"type": "ephemeral"}}]
    tools = [{"name": "memory_update", "description": "Edit memory", "input_schema": {"type": "object"}}]
    history = [
        user("Remember I use Python"),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9", "name": "memory_update", "input": {}}]},
        user([{"type": "tool_result", "tool_use_id": "toolu_9", "content": "saved"}]),
    ]
    with FakeAnthropic("Done") as server:
        sync_client(server).messages.create(model=MODEL, max_tokens=64, system=system, tools=tools, messages=history)
    recorded = server.requests[0]
    assert recorded.path == "/v1/messages"
    assert recorded.api_key == "test"
    assert recorded.headers["anthropic-version"]
    assert recorded["system"] == system
    assert recorded["tools"] == tools
    assert recorded["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "saved"}]


def test_callable_reply_sees_the_request() -> None:
    def echo(request: RecordedRequest) -> str:
        return f"you said {request['messages'][-1]['content']!r}"

    with FakeAnthropic(echo) as server:
        message = sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=[user("ping")])
    assert message.content[0].text == "you said 'ping'"


def test_unpaired_tool_result_is_rejected_like_the_api() -> None:
    history = [user([{"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}])]
    with FakeAnthropic("unused") as server:
        with pytest.raises(anthropic.BadRequestError, match="toolu_x"):
            sync_client(server).messages.create(model=MODEL, max_tokens=64, messages=history)
    assert server.pending == 1


def test_stream_error_event_mid_stream() -> None:
    with FakeAnthropic(reply(text("partial"), stream_error=error(529))) as server:
        with sync_client(server).messages.stream(model=MODEL, max_tokens=64, messages=[user("Go")]) as stream:
            with pytest.raises(anthropic.APIStatusError) as info:
                stream.until_done()
    assert info.value.type == "overloaded_error"


def test_count_tokens_does_not_consume_the_script() -> None:
    with FakeAnthropic("kept") as server:
        count = sync_client(server).messages.count_tokens(model=MODEL, messages=[user("How many tokens?")])
    assert count.input_tokens > 0
    assert server.pending == 1
    assert server.requests[0].path == "/v1/messages/count_tokens"


def test_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic("from env") as server:
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        message = anthropic.Anthropic(max_retries=0).messages.create(model=MODEL, max_tokens=8, messages=[user("x")])
    assert message.content[0].text == "from env"


async def test_async_create_and_stream() -> None:
    with FakeAnthropic("async hello", reply(text("one two"), tool_use("t", {"k": "v"}))) as server:
        client = async_client(server)
        message = await client.messages.create(model=MODEL, max_tokens=64, messages=[user("Hi")])
        async with client.messages.stream(model=MODEL, max_tokens=64, messages=[user("Go")]) as stream:
            deltas = [delta async for delta in stream.text_stream]
            final = await stream.get_final_message()
    assert message.content[0].text == "async hello"
    assert deltas == ["one ", "two"]
    assert final.content[1].input == {"k": "v"}
    assert final.stop_reason == "tool_use"


async def test_async_stream_can_be_cancelled_mid_turn() -> None:
    received: list[str] = []

    async def consume(client: anthropic.AsyncAnthropic) -> None:
        async with client.messages.stream(model=MODEL, max_tokens=64, messages=[user("Go")]) as stream:
            async for delta in stream.text_stream:
                received.append(delta)

    with FakeAnthropic(reply(text("w " * 50), delay=0.05)) as server:
        task = asyncio.create_task(consume(async_client(server)))
        while not received:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert time.monotonic() - started < 1.0
    assert 0 < len(received) < 50


def test_wait_for_requests_times_out_clearly() -> None:
    with FakeAnthropic() as server:
        with pytest.raises(TimeoutError, match="got 0 request"):
            server.wait_for_requests(1, timeout=0.05)
