"""ChatSession: one conversation with the agent, run as an async generator of typed events per turn.

The loop streams a reply from Anthropic's Messages API (the real SDK, imported only when the first request is
made), runs the memory tools the model asks for through `memtui.core.access.tools.run_tool` (so every write goes through
the one write path, as this session's agent actor), and feeds the results back until the model stops. Failures
(no key, network, 429, 5xx, 529) become an `Error` event; the history stays valid for the next turn.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from memtui.agent.events import (
    Compacted, Decision, Error, Event, ProposalCard, TextDelta, ToolCall, ToolResult, TurnEnd,
)
from memtui.agent.feedback import ProposedWrite, decide_feedback, feedback_text
from memtui.agent.prompt import FLUSH_PROMPT, system_blocks
from memtui.agent.toolset import toolset_for
from memtui.core.writing import recurrence
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import WriteResult

DEFAULT_ACTOR = "agent:claude"
DEFAULT_MAX_TOKENS = 4096
# Rough tokens of history (JSON size / 4) past which the pre-compaction flush runs before the next turn.
DEFAULT_COMPACT_AT = 60_000
MAX_TOOL_ROUNDS = 12


class NoKey(RuntimeError):
    pass


class ChatSession:
    """A conversation: history, the proposals it made, and what the agent was already told about them."""

    def __init__(
        self, memory: Memory, *, model: str | None = None, actor: str = DEFAULT_ACTOR, client: Any = None,
        api_key: str | None = None, base_url: str | None = None, max_retries: int = 2,
        max_tokens: int | None = None, compact_at: int | None = None, keep_turns: int = 2,
        max_tool_rounds: int = MAX_TOOL_ROUNDS, context_budget: int = 1000,
    ) -> None:
        settings = memory.config.section("agent")
        self.memory = memory
        self.actor = actor
        self.model = model or memory.config.model
        self.max_tokens = max_tokens or int(settings.get("max_tokens", DEFAULT_MAX_TOKENS))
        self.compact_at = compact_at or int(settings.get("compact_at", DEFAULT_COMPACT_AT))
        self.keep_turns = keep_turns
        self.max_tool_rounds = max_tool_rounds
        self.context_budget = context_budget
        self.toolset = toolset_for(memory)  # [agent] tools: memtui's own, or Anthropic's memory tool
        self.messages: list[dict[str, Any]] = []
        self.proposed: dict[str, ProposedWrite] = {}
        self.reported: set[str] = set()
        self.turns = 0
        self.first_message: str | None = None
        self.user_words: list[str] = []  # the person's own text, the only support for an agent's [stated] entry
        # memtui started this conversation (at a person's request): its id counts as a session of its own for the
        # recurrence gate, which a session id an agent names does not.
        self.id = recurrence.new_session("chat")
        self._client = client
        self._owns_client = client is None
        self._api_key = api_key
        self._base_url = base_url
        self._max_retries = max_retries
        self._system: list[dict[str, Any]] | None = None
        self._closed = False

    # the client ---------------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"

    def client(self) -> Any:
        """The AsyncAnthropic client, made on first use; raises NoKey before any HTTP call when there is no key."""
        if self._client is None:
            key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
            token = os.environ.get("ANTHROPIC_AUTH_TOKEN")
            if not key and not token:
                raise NoKey(
                    "No API key: set ANTHROPIC_API_KEY (for a local Anthropic-compatible server, also set "
                    "ANTHROPIC_BASE_URL). Nothing was sent."
                )
            import anthropic

            self._client = anthropic.AsyncAnthropic(
                api_key=key or None, auth_token=None if key else token,
                base_url=self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                max_retries=self._max_retries,
            )
        return self._client

    def system(self) -> list[dict[str, Any]]:
        """The system prompt, built once per conversation so its prefix stays cacheable."""
        if self._system is None:
            self._system = system_blocks(self._context_text())
        return self._system

    def _context_text(self) -> str:
        try:
            from memtui.core.recall.context import build_context

            return build_context(self.memory, budget=self.context_budget).text
        except Exception as exc:  # a broken memory file must not stop the conversation
            return f"(The memory context could not be loaded: {exc}. Use memory_read on MEMORY.md instead.)"

    # a turn -------------------------------------------------------------------------------------------------
    async def turn(self, text: str) -> AsyncIterator[Event]:
        """Send the person's message and yield the turn's events; always ends with TurnEnd unless cancelled."""
        try:
            self.client()
        except NoKey as exc:
            yield Error("no_key", str(exc))
            yield TurnEnd("error", "")
            return
        await asyncio.to_thread(self.system)
        if self._history_tokens() > self.compact_at:
            async for event in self._compact():
                yield event
        decisions = self._new_decisions()
        for decision in decisions:
            yield decision
        content: list[dict[str, Any]] = []
        if decisions:
            content.append({"type": "text", "text": feedback_text(decisions)})
        content.append({"type": "text", "text": text})
        mark = len(self.messages)
        self._add_user(content)
        self.user_words.append(text)
        proposals: list[str] = []
        reply: list[str] = []
        stop = "error"
        try:
            async with aclosing(self._exchange(proposals)) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        reply.append(event.text)
                    if isinstance(event, TurnEnd):
                        stop = event.stop_reason
                        continue
                    yield event
        except BaseException:  # cancelled (CancelledError) or closed mid-turn by the consumer (GeneratorExit)
            if self._rollback(mark, content):
                self.user_words.pop()
            raise
        if stop == "error":
            if self._rollback(mark, content):
                self.user_words.pop()
            else:
                self.reported.update(d.id for d in decisions)  # the feedback stayed, in a partial turn
        else:
            self.reported.update(d.id for d in decisions)
            self.turns += 1
            if self.first_message is None:
                self.first_message = text
        yield TurnEnd(stop, "".join(reply), proposals)

    async def _exchange(self, proposals: list[str], *, silent: bool = False) -> AsyncIterator[Event]:
        """Request, stream, run tools, repeat until the model stops; yields a final TurnEnd."""
        for _ in range(self.max_tool_rounds):
            try:
                message = None
                async with self.client().messages.stream(
                    model=self.model, max_tokens=self.max_tokens, system=self.system(),
                    tools=self.toolset.schemas, messages=self.messages,
                ) as stream:
                    async for event in stream:
                        if event.type == "text" and not silent:
                            yield TextDelta(event.text)
                    message = await stream.get_final_message()
            except Exception as exc:
                yield describe_error(exc, self.base_url)
                yield TurnEnd("error", "")
                return
            content = [_block_dict(b) for b in message.content]
            uses = [b for b in content if b["type"] == "tool_use"]
            if message.stop_reason != "tool_use" or not uses:
                if content:
                    self.messages.append({"role": "assistant", "content": content})
                yield TurnEnd(message.stop_reason or "end_turn", "")
                return
            results = []
            for use in uses:
                yield ToolCall(use["id"], use["name"], use["input"])
                outcome = await asyncio.to_thread(
                    self.toolset.run, self.memory, use["name"], use["input"], self.actor,
                    user_words="\n".join(self.user_words), session=self.id,
                )
                written = outcome.result
                yield ToolResult(use["id"], use["name"], outcome.text, outcome.is_error,
                                 written.status if written else None, written.file if written else None)
                if written is not None and written.status == "queued" and written.id:
                    proposals.append(written.id)
                    yield self._card(use["input"], written)
                results.append({"type": "tool_result", "tool_use_id": use["id"], "content": outcome.text,
                                **({"is_error": True} if outcome.is_error else {})})
            # Appended together so a cancelled turn never leaves a tool_use without its tool_result.
            self.messages.append({"role": "assistant", "content": content})
            self.messages.append({"role": "user", "content": results})
        yield Error("tool_loop", f"The agent called tools {self.max_tool_rounds} times without answering; "
                                 "stopped this turn. Ask again, or more narrowly.")
        yield TurnEnd("tool_loop", "")

    def _card(self, tool_input: dict[str, Any], written: WriteResult) -> ProposalCard:
        p = self.memory.get(written.id or "")
        self.proposed[p.id] = ProposedWrite(p.id, p.summary(), p.section, p.entry)
        return ProposalCard(p.id, p.action, p.file, p.section, p.entry, p.replaces, p.diff, p.status,
                            list(written.warnings), p.digest())

    def _add_user(self, content: list[dict[str, Any]]) -> None:
        # A turn cut short after tool results leaves a user message last; the API wants roles to alternate.
        if self.messages and self.messages[-1]["role"] == "user":
            previous = self.messages[-1]["content"]
            if isinstance(previous, str):
                previous = [{"type": "text", "text": previous}]
            self.messages[-1] = {"role": "user", "content": [*previous, *content]}
        else:
            self.messages.append({"role": "user", "content": content})

    def _rollback(self, mark: int, content: list[dict[str, Any]]) -> bool:
        """Forget a message the model never answered, so the person can send it again; False if it was."""
        if len(self.messages) == mark + 1 and self.messages[mark]["role"] == "user":
            del self.messages[mark]
            return True
        if len(self.messages) == mark and self.messages and self.messages[-1]["role"] == "user":
            kept = self.messages[-1]["content"][: -len(content)]
            self.messages[-1] = {"role": "user", "content": kept}
            return True
        return False

    def _new_decisions(self) -> list[Decision]:
        out = []
        for pid, proposed in self.proposed.items():
            if pid in self.reported:
                continue
            try:
                decision = decide_feedback(self.memory, proposed)
            except Exception:  # an unreadable queue file must not block the conversation; asked again next turn
                continue
            if decision is not None:
                out.append(decision)
        return out

    # pre-compaction flush -----------------------------------------------------------------------------------
    def _history_tokens(self) -> int:
        return len(json.dumps(self.messages, ensure_ascii=False)) // 4

    async def _compact(self) -> AsyncIterator[Event]:
        """A silent turn asks the agent to save what matters; then older turns give way to its summary."""
        mark = len(self.messages)
        flush = [{"type": "text", "text": FLUSH_PROMPT}]
        self._add_user(flush)
        merged = len(self.messages) == mark
        stop = "error"
        proposals: list[str] = []
        try:
            async with aclosing(self._exchange(proposals, silent=True)) as events:
                async for event in events:
                    if isinstance(event, TurnEnd):
                        stop = event.stop_reason
                    elif isinstance(event, (ToolCall, ToolResult, ProposalCard, Error)):
                        yield event
        except BaseException:
            self._rollback(mark, flush)
            raise
        last = self.messages[-1] if self.messages else None
        if stop == "error" or last is None or last["role"] != "assistant":
            self._rollback(mark, flush)
            return
        summary = [b["text"] for b in last["content"] if b.get("type") == "text"]
        starts = [i for i, m in enumerate(self.messages[:mark]) if m["role"] == "user" and _is_turn_start(m)]
        if len(starts) <= self.keep_turns:
            cut = None
        else:
            cut = starts[len(starts) - self.keep_turns] if self.keep_turns else mark
        text = "\n".join(summary).strip() or "(no summary given)"
        if cut is None or merged:
            del self.messages[mark:]
            yield Compacted(0, text)
            return
        kept = self.messages[cut:mark]
        self.messages = [
            {"role": "user", "content": [{"type": "text", "text": "[memtui] Summary of the earlier conversation "
                                          "(older turns were dropped after you saved what matters):\n" + text}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Noted; I will continue from this."}]},
            *kept,
        ]
        yield Compacted(cut, text)

    # the end ------------------------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the HTTP client this session made (one given to it belongs to the caller)."""
        if self._client is not None and self._owns_client:
            await self._client.close()
            self._client = None

    def close(self) -> WriteResult | None:
        """Leave one short line about this conversation in today's log (once; only if a turn was answered)."""
        if self._closed or not self.turns:
            return None
        self._closed = True
        began = (self.first_message or "").strip().replace("\n", " ")
        if len(began) > 80:
            began = began[:79] + "…"
        line = f"Chat with the agent ({self.turns} turn{'s' if self.turns != 1 else ''}): began \u201c{began}\u201d"
        if self.proposed:
            line += "; proposed " + ", ".join(self.proposed)
        return self.memory.log(line, actor=self.actor)


def _is_turn_start(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, str) or not any(b.get("type") == "tool_result" for b in content)


def _block_dict(block: Any) -> dict[str, Any]:
    """A response content block as request JSON (the SDK's models carry extra None fields the API rejects)."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(exclude_none=True)


def describe_error(exc: BaseException, base_url: str) -> Error:
    """A failure as a message a person can act on (a password in the base URL shown as ***)."""
    import anthropic

    from memtui.core.basics.redact import redact

    base_url = redact(base_url)

    body = getattr(exc, "body", None)
    kind_in_body = body.get("error", {}).get("type") if isinstance(body, dict) else None
    detail = body.get("error", {}).get("message") if isinstance(body, dict) else None
    detail = f" ({detail})" if detail else ""
    if isinstance(exc, anthropic.OverloadedError) or kind_in_body == "overloaded_error":
        return Error("overloaded", f"The model is overloaded (529){detail}. Wait a little and send again.")
    if isinstance(exc, anthropic.RateLimitError) or kind_in_body == "rate_limit_error":
        return Error("rate_limit", f"Rate limited by the API (429){detail}. Wait a moment and send again.")
    if isinstance(exc, anthropic.AuthenticationError):
        return Error("auth", f"The API refused the key (401){detail}. Check ANTHROPIC_API_KEY.")
    if isinstance(exc, anthropic.PermissionDeniedError):
        return Error("auth", f"The key may not use this model or API (403){detail}.")
    if isinstance(exc, anthropic.NotFoundError):
        return Error("request", f"Not found (404){detail}: check the model name ([agent] model or --model) "
                                f"and ANTHROPIC_BASE_URL ({base_url}).")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        if status >= 500 or kind_in_body == "api_error":
            return Error("server", f"The API failed with an internal error ({status}){detail}. Send again in "
                                   "a moment.")
        return Error("request", f"The API refused the request ({status}){detail}.")
    if isinstance(exc, anthropic.APITimeoutError):
        return Error("network", f"The request to {base_url} timed out. Check the network and send again.")
    if isinstance(exc, anthropic.APIConnectionError):
        return Error("network", f"Could not reach the API at {base_url}. Check the network (or "
                                "ANTHROPIC_BASE_URL) and send again.")
    return Error("internal", f"The chat failed: {type(exc).__name__}: {redact(str(exc))}")
