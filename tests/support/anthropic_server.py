"""A real loopback HTTP server that speaks enough of Anthropic's Messages API for tests.

Point the real ``anthropic`` SDK at it with ``base_url=server.url`` (or the
``ANTHROPIC_BASE_URL`` variable, see ``FakeAnthropic.env``) and script the model's
turns; nothing inside the SDK is mocked::

    with FakeAnthropic(reply(text("Hi")), error(529)) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
        client.messages.create(model="m", max_tokens=64, system="S", messages=[...])
        assert server.requests[0]["system"] == "S"

Each ``POST /v1/messages`` pops the next script item and answers with a JSON message or,
when the request has ``"stream": true``, with the SSE events the SDK parses
(``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta``,
``message_stop``). A script item is a ``Reply`` (see ``reply``, ``text``, ``tool_use``),
an ``ErrorReply`` (see ``error``), a plain string (a one-text-block reply) or a callable
that takes the ``RecordedRequest`` and returns one of those. With the script empty the
server answers 500 "fake server: no scripted reply left".

Retries: the SDK retries 408/409/429/5xx answers (twice by default) and every attempt
consumes a script item, so build clients with ``max_retries=0`` or script one error per
attempt. Error answers carry ``retry-after-ms`` (1 ms by default) so retries do not
slow tests down, and ``error(..., should_retry=False)`` sends ``x-should-retry: false``,
which the SDK obeys.

``POST /v1/messages/count_tokens`` answers a rough count without touching the script.
Like the real API, a request whose ``tool_result`` blocks do not pair up with the
previous assistant turn's ``tool_use`` blocks gets a 400, unless built with
``strict=False``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Union

__all__ = [
    "Block", "ErrorReply", "FakeAnthropic", "RecordedRequest", "Reply", "ScriptItem",
    "error", "reply", "text", "tool_use",
]  # fmt: skip

Block = dict[str, Any]

_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
    413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}  # fmt: skip

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):06d}"


@dataclass
class ErrorReply:
    """A scripted failure, answered with Anthropic's JSON error shape."""

    status: int
    type: str
    message: str
    should_retry: bool | None = None
    retry_after: float = 0.001

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.type, "message": self.message}}


@dataclass
class Reply:
    """A scripted assistant turn.

    ``delay`` is the pause in seconds between SSE events (streaming only), so a test can
    cancel a turn mid-stream. ``stream_error`` ends a stream after the content blocks with
    an SSE ``error`` event instead of ``message_delta``; a non-streaming request gets it
    as a plain error answer.
    """

    content: list[Block]
    stop_reason: str
    delay: float = 0.0
    stream_error: ErrorReply | None = None


class RecordedRequest(dict[str, Any]):
    """A request's parsed JSON body, plus its ``path`` and lower-cased ``headers``."""

    def __init__(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        super().__init__(body)
        self.path = path
        self.headers = headers

    @property
    def api_key(self) -> str | None:
        """The credential sent as ``x-api-key`` or ``authorization: Bearer`` (SDK 2.x)."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        return token if scheme.lower() == "bearer" else None


ScriptItem = Union[Reply, ErrorReply, str, Callable[[RecordedRequest], Union[Reply, ErrorReply, str]]]


def text(content: str) -> Block:
    """A ``text`` content block; streamed as one ``text_delta`` per word."""
    return {"type": "text", "text": content}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> Block:
    """A ``tool_use`` content block; streamed as ``input_json_delta`` pieces."""
    return {"type": "tool_use", "id": id or _new_id("toolu"), "name": name, "input": input}


def reply(
    *blocks: Block | str,
    stop_reason: str | None = None,
    delay: float = 0.0,
    stream_error: ErrorReply | None = None,
) -> Reply:
    """An assistant turn; strings become text blocks and ``stop_reason`` defaults to
    ``"tool_use"`` when any block is a tool_use, else ``"end_turn"``."""
    content = [text(block) if isinstance(block, str) else block for block in blocks]
    if stop_reason is None:
        uses_tool = any(block["type"] == "tool_use" for block in content)
        stop_reason = "tool_use" if uses_tool else "end_turn"
    return Reply(content, stop_reason, delay, stream_error)


def error(
    status: int = 500,
    type: str | None = None,
    message: str = "fake server: scripted error",
    *,
    should_retry: bool | None = None,
    retry_after: float = 0.001,
) -> ErrorReply:
    """An error answer; ``type`` defaults to the API's type for ``status``."""
    return ErrorReply(status, type or _ERROR_TYPES.get(status, "api_error"), message, should_retry, retry_after)


def _estimate_tokens(payload: Any) -> int:
    return max(1, len(json.dumps(payload)) // 4)


def _input_tokens(request: dict[str, Any]) -> int:
    return _estimate_tokens([request.get(key) for key in ("system", "messages", "tools")])


def _block_ids(message: Any, block_type: str, key: str) -> set[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return set()
    return {b.get(key) for b in content if isinstance(b, dict) and b.get("type") == block_type}


def _check_request(body: dict[str, Any]) -> str | None:
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    messages = body["messages"]
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    for i, message in enumerate(messages):
        offered = _block_ids(messages[i - 1], "tool_use", "id") if i else set()
        unexpected = _block_ids(message, "tool_result", "tool_use_id") - offered
        if unexpected:
            return (
                f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{sorted(unexpected)}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
        if i + 1 < len(messages):
            missing = _block_ids(message, "tool_use", "id") - _block_ids(messages[i + 1], "tool_result", "tool_use_id")
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {sorted(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )
    return None


def _message(answer: Reply, request: dict[str, Any], *, streaming: bool = False) -> dict[str, Any]:
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "fake-model"),
        "content": [] if streaming else answer.content,
        "stop_reason": None if streaming else answer.stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": _input_tokens(request),
            "output_tokens": 1 if streaming else _estimate_tokens(answer.content),
        },
    }


def _sse_events(answer: Reply, request: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "message_start", {"type": "message_start", "message": _message(answer, request, streaming=True)}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(answer.content):
        deltas: list[dict[str, Any]] = []
        start = block
        if block["type"] == "text":
            start = {**block, "text": ""}
            deltas = [{"type": "text_delta", "text": w} for w in re.findall(r"\S+\s*|\s+", block["text"])]
        elif block["type"] == "tool_use":
            start = {**block, "input": {}}
            raw = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": raw[n : n + 16]} for n in range(0, len(raw), 16)]
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    if answer.stream_error is not None:
        yield "error", answer.stream_error.body()
        return
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": answer.stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": _estimate_tokens(answer.content)},
    }
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeAnthropic

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        with self.fake._cond:
            self.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.fake._cond:
            self.fake._connections.discard(self.connection)
        super().finish()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_error(error(400, message="fake server: request body is not valid JSON"))
            return
        request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.fake._record(request)
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": _input_tokens(body)})
        elif path != "/v1/messages":
            self._send_error(error(404, message=f"fake server: no route for POST {path}"))
        elif self.fake.strict and (problem := _check_request(body)):
            self._send_error(error(400, message=problem))
        else:
            answer = self.fake._next_answer(request)
            if isinstance(answer, ErrorReply):
                self._send_error(answer)
            elif body.get("stream"):
                self._stream(answer, body)
            elif answer.stream_error is not None:
                self._send_error(answer.stream_error)
            else:
                self._send_json(200, _message(answer, body))

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", _new_id("req"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, answer: ErrorReply) -> None:
        headers = {"retry-after-ms": f"{answer.retry_after * 1000:g}"}
        if answer.should_retry is not None:
            headers["x-should-retry"] = "true" if answer.should_retry else "false"
        self._send_json(answer.status, answer.body(), headers)

    def _stream(self, answer: Reply, request: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", _new_id("req"))
        self.end_headers()
        try:
            for n, (event, data) in enumerate(_sse_events(answer, request)):
                if n and answer.delay and self.fake._stopping.wait(answer.delay):
                    self.close_connection = True
                    return
                chunk = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(b"%X\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except ConnectionError:
            self.close_connection = True


class FakeAnthropic:
    """A Messages API server on 127.0.0.1 fed by a script; a context manager."""

    def __init__(self, *script: ScriptItem, strict: bool = True) -> None:
        self.requests: list[RecordedRequest] = []
        self.strict = strict
        self._script: deque[ScriptItem] = deque(script)
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()

    def add(self, *items: ScriptItem) -> None:
        """Append items to the script."""
        with self._cond:
            self._script.extend(items)

    @property
    def pending(self) -> int:
        """How many script items are still unused."""
        with self._cond:
            return len(self._script)

    @property
    def url(self) -> str:
        """The base URL to pass to the SDK, e.g. ``http://127.0.0.1:54321``."""
        if self._httpd is None:
            raise RuntimeError("FakeAnthropic is not running; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def env(self) -> dict[str, str]:
        """Environment variables that point an SDK client (or a subprocess) here."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "test"}

    def wait_for_requests(self, count: int = 1, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least ``count`` requests arrived; returns them all."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(f"fake server got {len(self.requests)} request(s), expected {count}")
            return list(self.requests)

    def start(self) -> FakeAnthropic:
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._cond:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(request)
            self._cond.notify_all()

    def _next_answer(self, request: RecordedRequest) -> Reply | ErrorReply:
        with self._cond:
            item = self._script.popleft() if self._script else None
        if item is None:
            return error(500, message="fake server: no scripted reply left")
        if callable(item):
            try:
                item = item(request)
            except Exception as exc:
                return error(500, message=f"fake server: scripted callable raised {exc!r}")
        return reply(item) if isinstance(item, str) else item
