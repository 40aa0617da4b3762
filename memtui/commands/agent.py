"""`memtui ask`: one headless turn with the embedded agent; prints its reply and the writes it proposed."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, common, emit, say


def register(sub: Any) -> None:
    p = sub.add_parser("ask", help="one turn with the embedded agent: its reply and what it proposed (queued)")
    p.add_argument("message", help='what you say to the agent, e.g. "I switched from Redis to Postgres"')
    p.add_argument("--model", help="Claude model (default: [agent] model in .memtui/config.toml)")
    common(p)
    p.set_defaults(func=cmd_ask)


def cmd_ask(args: argparse.Namespace) -> int:
    import asyncio

    from memtui.commands.shared import memory_of

    return asyncio.run(_ask(args, memory_of(args)))


async def _ask(args: argparse.Namespace, memory: Any) -> int:
    from memtui.agent.events import Decision, Error, ProposalCard, TextDelta, ToolCall, ToolResult, TurnEnd
    from memtui.agent.session import ChatSession
    from memtui.core.basics.visible import reveal, shown_name, visible

    chat = ChatSession(memory, model=args.model)
    streaming = not args.json
    reply: list[str] = []
    cards: list[ProposalCard] = []
    calls: dict[str, dict[str, Any]] = {}
    decisions: list[Decision] = []
    failure: Error | None = None
    stop = "error"
    try:
        after_tool = False
        async for event in chat.turn(args.message):
            if isinstance(event, TextDelta):
                text = event.text
                # The text after a tool call is a new paragraph (the Chat tab gives it a bubble of its own):
                # joined as it comes it would read "that.Done.".
                if after_tool and text and reply and not reply[-1][-1:].isspace() and not text[0].isspace():
                    text = "\n\n" + text
                after_tool = after_tool and not text
                reply.append(text)
                if streaming:
                    sys.stdout.write(visible(text))  # a model's reply is not the terminal's to obey
                    sys.stdout.flush()
            elif isinstance(event, ToolCall):
                after_tool = True
                calls[event.id] = {"name": event.name, "input": event.input}
            elif isinstance(event, ToolResult):
                calls[event.id].update(result=event.text, is_error=event.is_error, status=event.status)
                if streaming:
                    say(f"\n· {event.name} → {visible(_status_line(event), newlines=False)}")
            elif isinstance(event, ProposalCard):
                cards.append(event)
            elif isinstance(event, Decision):
                decisions.append(event)
            elif isinstance(event, Error):
                failure = event
            elif isinstance(event, TurnEnd):
                stop = event.stop_reason
    finally:
        chat.close()
        await chat.aclose()
    due = _consolidation_due(memory)
    data = {
        "reply": "".join(reply), "model": chat.model, "stop_reason": stop,
        "proposals": [asdict(c) for c in cards], "tool_calls": list(calls.values()),
        "decisions": [asdict(d) for d in decisions],
        "error": asdict(failure) if failure else None,
        "consolidation_due": due,
    }
    if args.json:
        emit(args, data, "")
    else:
        if reply and not "".join(reply).endswith("\n"):
            print()
        for card in cards:
            where = shown_name(card.file) + (f" § {card.section}" if card.section else "")
            head = f"queued {card.id}: {card.action} {where}: {card.entry or card.replaces or ''}".rstrip(": ")
            print("\n" + reveal(head, newlines=False))  # a card is reviewed: hidden characters named
            print(reveal(card.diff.rstrip("\n")))
        if cards:
            print("\nNot in memory yet: `memtui queue` approves, revises or rejects them.")
        if due:
            print(visible(f"\nMEMORY.md is over its cap in {', '.join(due)}: `memtui consolidate` proposes one "
                          "reviewed rewrite of each."))
        if failure:
            say(f"memtui: {failure.message}")
    return EXIT_ERROR if failure else EXIT_OK


def _consolidation_due(memory: Any) -> list[str]:
    """The sections the session left over their caps (offered when a session ends; never applied unasked)."""
    from memtui.core.storage.store import StoreError

    try:
        return memory.consolidation_due()
    except (StoreError, OSError):
        return []


def _status_line(event: Any) -> str:
    first = event.text.splitlines()[0] if event.text else ""
    return first if len(first) <= 120 else first[:119] + "…"
