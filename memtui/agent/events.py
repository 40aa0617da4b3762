"""The typed events one chat turn yields, consumed alike by `memtui ask` and the Chat tab."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union


@dataclass
class TextDelta:
    """A piece of the reply as it streams."""

    text: str


@dataclass
class ToolCall:
    """The model asked for a tool; `input` is complete."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResult:
    """What the tool gave back to the model."""

    id: str
    name: str
    text: str
    is_error: bool = False
    status: str | None = None  # the write's status (applied, queued, refused, conflict), when it wrote
    file: str | None = None  # the file it wrote or proposed to write


@dataclass
class ProposalCard:
    """A write the agent proposed that waits for a person: approve, revise or reject it."""

    id: str
    action: str
    file: str
    section: str | None
    entry: str | None
    replaces: str | None
    diff: str
    status: str = "pending"
    warnings: list[str] = field(default_factory=list)
    # The proposal's digest as this card draws it (`Proposal.digest`): the card's decisions are bound to it.
    digest: str | None = None


@dataclass
class Decision:
    """How a person decided one of this conversation's proposals, as the agent was told at this turn."""

    id: str
    status: str  # approved | revised | rejected | conflict
    text: str


@dataclass
class Error:
    """A failure shown to the person; the conversation stays usable. `kind`: no_key, auth, rate_limit,
    overloaded, server, network, request, tool_loop or internal."""

    kind: str
    message: str


@dataclass
class Compacted:
    """Older turns were summarised and dropped after the pre-compaction flush."""

    dropped_messages: int
    summary: str


@dataclass
class TurnEnd:
    """The turn is over: the reply's full text and why it stopped (end_turn, max_tokens, error, …)."""

    stop_reason: str
    text: str
    proposals: list[str] = field(default_factory=list)


Event = Union[TextDelta, ToolCall, ToolResult, ProposalCard, Decision, Error, Compacted, TurnEnd]
