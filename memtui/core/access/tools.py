"""The agent's memory tools: their JSON schemas (Anthropic tool format) and `run_tool`, which runs one call.

Shared by every client that lets a model work on a memory root: the embedded agent (memtui/agent), and the MCP
server. Nothing here knows about an SDK, a network or a terminal. Every write goes through `Memory`, the one write
path, under the caller's actor, so the ReviewPolicy decides what waits for a person: an agent's writes to
MEMORY.md and topic files are queued ("Queued as p-0012 for review; not in memory yet"), while daily-log lines
and scratch notes apply at once. Errors are written for the model to act on: what was wrong, what to send instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from memtui.core.basics.visible import reveal
from memtui.core.grammar.document import Document
from memtui.core.grammar.paths import PathRefused
from memtui.core.grammar.update import Refused
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import WriteResult

# A file read is bounded so one call cannot flood the context; the model narrows with `section` or search.
READ_MAX_LINES = 400
SEARCH_MAX_LIMIT = 50
SCRATCH_MAX_TTL = 7 * 24 * 60

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": "memory_context",
        "description": (
            "Load the memory you start a conversation with: the current entries of MEMORY.md, yesterday's and "
            "today's log, live scratch notes, and where the rest is. Call it again if memory may have changed."
        ),
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "memory_read",
        "description": (
            "Read a memory file (e.g. MEMORY.md, log/2026-08-20.md, people/priya.md), or one section of it, with "
            "line numbers. Struck-through lines are superseded history; the un-struck line is current. Read "
            "before you revise or edit, so you send text that matches exactly."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file path relative to the memory root"},
                "section": {"type": "string", "description": "a heading of that file, e.g. Projects"},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_search",
        "description": (
            "Search every memory file (logs, topic files, archive). Literal and case-insensitive unless regex is "
            "true. Results carry path, line, provenance, date, source and whether the line is current; use it "
            "before answering a question about the past."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "words or a phrase to find"},
                "regex": {"type": "boolean", "description": "treat query as a regular expression"},
                "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_LIMIT,
                          "description": "how many sources to return (default 5)"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_update",
        "description": (
            "Add, revise or remove one entry (one bullet line) of a section. A person reviews it before it is "
            "in memory. One fact per entry, starting with its provenance: [stated] only for what the user said, "
            "[observed] for what you saw in a file or tool result, [inferred] for your conclusion, [suggested] "
            "for your idea. If a fact changed, revise the current entry (replaces = its text) instead of adding "
            "a duplicate; the old line is struck through and kept as history."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "section": {"type": "string", "description": "the section heading, e.g. Projects; \"\" for the body "
                            "of a file without headings (a Claude Code topic file)"},
                "action": {"type": "string", "enum": ["add", "revise", "remove"]},
                "entry": {"type": "string",
                          "description": 'the new entry for add/revise, e.g. "[stated] Uses Postgres for memtui"'},
                "replaces": {"type": "string",
                             "description": "for revise/remove: the current entry's text (or a unique part)"},
                "file": {"type": "string", "description": "memory file (default MEMORY.md)"},
            },
            "required": ["section", "action"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_log",
        "description": (
            "Append one line to today's daily log: what happened, what you did, running context. Applied at once "
            "when short (a line over 500 characters, or the memory's [review] log_line_max, waits for review)."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "one line"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_scratch",
        "description": (
            "Write a short-lived note (work in progress) that expires after ttl_minutes. Applied at once when "
            "short (a note over 4 KB, or the memory's [review] scratch_max_bytes, waits for review); never use it "
            "for durable facts."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "a slug: a-z, 0-9, '-' and '_'"},
                "body": {"type": "string"},
                "ttl_minutes": {"type": "number", "minimum": 1, "maximum": SCRATCH_MAX_TTL,
                                "description": "minutes until it expires (default 60)"},
            },
            "required": ["name", "body"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_edit",
        "description": (
            "Exact find-and-replace in a memory file: old must appear exactly once (read the file first and copy "
            "it, with enough surrounding text to be unique). A person reviews edits to MEMORY.md and topic files. "
            "Prefer memory_update for single entries."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file path relative to the memory root"},
                "old": {"type": "string", "description": "the exact text to replace; must occur once"},
                "new": {"type": "string", "description": "the replacement text"},
            },
            "required": ["path", "old", "new"],
            "additionalProperties": False,
        },
    },
]

TOOL_NAMES = tuple(schema["name"] for schema in TOOL_SCHEMAS)
WRITE_TOOLS = ("memory_update", "memory_log", "memory_scratch", "memory_edit")


@dataclass
class ToolOutcome:
    """What a tool call gives back: the text the model reads, whether it failed, and the write's result."""

    text: str
    is_error: bool = False
    result: WriteResult | None = None


class BadInput(ValueError):
    """A tool call whose input does not fit the schema; the message says what to send instead."""


@dataclass(frozen=True)
class Caller:
    """Who is calling, for the write path's poisoning defences (memtui/core/writing/guard.py): the actor, the user's own
    words in this conversation (an agent's [stated] entry needs their support, else it is filed [suggested]),
    the conversation id (for the recurrence gate) and where the content came from (user, agent, tool, web)."""

    actor: str
    user_words: str | None = None
    session: str | None = None
    origin: str | None = None


def run_tool(
    memory: Memory, name: str, input: dict[str, Any] | None, actor: str, *, user_words: str | None = None,
    session: str | None = None, origin: str | None = None,
) -> ToolOutcome:
    """Run one tool call as `actor`; never raises for anything the model sent.

    An agent loop passes `user_words` (everything the person typed in this conversation) and `session` (its
    conversation id); without them an agent's [stated] entry is filed as [suggested]."""
    handler = _HANDLERS.get(name)
    if handler is None:
        return ToolOutcome(f"Unknown tool {name!r}: use one of {', '.join(TOOL_NAMES)}.", True)
    try:
        args = _checked(name, input)
        return handler(memory, args, Caller(actor, user_words, session, origin))
    except BadInput as exc:
        return ToolOutcome(f"Invalid input for {name}: {exc}", True)
    except (Refused, PathRefused) as exc:
        return ToolOutcome(f"Refused; nothing was written. {exc}", True)
    except OSError as exc:
        return ToolOutcome(f"{name} failed reading or writing the memory folder: {exc}", True)


def _checked(name: str, input: dict[str, Any] | None) -> dict[str, Any]:
    """The input, checked against the tool's schema: required fields, known fields, JSON types."""
    if input is None:
        input = {}
    if not isinstance(input, dict):
        raise BadInput("send a JSON object")
    schema = next(s for s in TOOL_SCHEMAS if s["name"] == name)["input_schema"]
    props: dict[str, Any] = schema["properties"]
    unknown = sorted(set(input) - set(props))
    if unknown:
        allowed = ", ".join(props) or "no fields"
        raise BadInput(f"unknown field(s) {', '.join(unknown)}; {name} takes {allowed}")
    missing = [k for k in schema.get("required", []) if input.get(k) is None]
    if missing:
        raise BadInput(f"missing {', '.join(missing)}; {name} needs {', '.join(schema['required'])}")
    out: dict[str, Any] = {}
    for key, value in input.items():
        if value is None:
            continue
        kind = props[key].get("type")
        ok = {
            "string": isinstance(value, str),
            "boolean": isinstance(value, bool),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        }.get(kind, True)
        if not ok:
            article = "an" if kind == "integer" else "a"
            raise BadInput(f"{key} must be {article} {kind}, not {type(value).__name__} ({value!r})")
        if "enum" in props[key] and value not in props[key]["enum"]:
            raise BadInput(f"{key} must be one of {', '.join(props[key]['enum'])}, not {value!r}")
        out[key] = value
    return out


def _written(result: WriteResult) -> ToolOutcome:
    return ToolOutcome(result.for_agent(), result.status in ("refused", "conflict"), result)


def _context(memory: Memory, args: dict[str, Any], caller: Caller) -> ToolOutcome:
    from memtui.core.recall.context import build_context

    return ToolOutcome(build_context(memory).text)


def _read(memory: Memory, args: dict[str, Any], caller: Caller) -> ToolOutcome:
    path = memory.store.check_path(args["path"].strip().lstrip("/"))
    text = memory.shown_text(path)
    if text is None:
        files = [f for f in memory.files() if f.endswith(".md")]
        shown = ", ".join(files[:30]) + (f" … and {len(files) - 30} more" if len(files) > 30 else "")
        return ToolOutcome(f"No file {path}. Memory files: {shown or '(none)'}. Or use memory_search.", True)
    doc = Document(text, path)
    start, end = 0, len(doc.lines)
    section = args.get("section")
    if section:
        sec = doc.section(section)
        if sec is None:
            names = ", ".join(doc.section_names) or "(this file has no sections)"
            return ToolOutcome(f"No section {section!r} in {path}; sections are: {names}", True)
        start, end = (sec.heading if sec.heading is not None else sec.start), sec.end
    shown_end = min(end, start + READ_MAX_LINES)
    width = len(str(shown_end))
    # Drawn as context draws it: a hidden character reaches the agent named (⟨U+E0049⟩), never raw.
    lines = [f"{i + 1:>{width}}  {reveal(doc.lines[i].rstrip())}".rstrip() for i in range(start, shown_end)]
    head = f"{path}" + (f" § {section}" if section else "") + f" (lines {start + 1}-{shown_end} of {len(doc.lines)})"
    if shown_end < end:
        lines.append(f"… {end - shown_end} more lines; read one section, or use memory_search")
    return ToolOutcome("\n".join([head, *lines]))


def _search(memory: Memory, args: dict[str, Any], caller: Caller) -> ToolOutcome:
    from memtui.core.recall.search import SearchError, search

    limit = args.get("limit", 5)
    if not 1 <= limit <= SEARCH_MAX_LIMIT:
        raise BadInput(f"limit must be between 1 and {SEARCH_MAX_LIMIT}, not {limit}")
    if not args["query"].strip():
        raise BadInput("query is empty: send the words to look for")
    try:
        bundle = search(memory, args["query"], regex=bool(args.get("regex", False)), limit=limit)
    except SearchError as exc:
        return ToolOutcome(f"{exc}. Use memory_read on MEMORY.md and the files it points to.", True)
    return ToolOutcome(bundle.render(), bundle.error is not None)


def _update(memory: Memory, args: dict[str, Any], caller: Caller) -> ToolOutcome:
    return _written(memory.update(
        args["section"], args["action"], args.get("entry"), args.get("replaces"),
        file=args.get("file") or "MEMORY.md", actor=caller.actor, user_words=caller.user_words,
        session=caller.session, origin=caller.origin,
    ))


def _log(memory: Memory, args: dict[str, Any], caller: Caller) -> ToolOutcome:
    return _written(memory.log(args["text"], actor=caller.actor, user_words=caller.user_words,
                               session=caller.session, origin=caller.origin))


def _scratch(memory: Memory, args: dict[str, Any], caller: Caller) -> ToolOutcome:
    ttl = args.get("ttl_minutes", 60)
    if not 0 < ttl <= SCRATCH_MAX_TTL:
        raise BadInput(f"ttl_minutes must be more than 0 and at most {SCRATCH_MAX_TTL} (a week), not {ttl}")
    return _written(memory.scratch(args["name"], args["body"], ttl_minutes=ttl, actor=caller.actor))


def _edit(memory: Memory, args: dict[str, Any], caller: Caller) -> ToolOutcome:
    outcome = _written(memory.edit(args["path"].strip().lstrip("/"), args["old"], args["new"], actor=caller.actor))
    if outcome.is_error and "old text" in outcome.text:
        outcome.text += f"\nCall memory_read with path {args['path']!r} and copy the text exactly."
    return outcome


_HANDLERS: dict[str, Callable[[Memory, dict[str, Any], Caller], ToolOutcome]] = {
    "memory_context": _context,
    "memory_read": _read,
    "memory_search": _search,
    "memory_update": _update,
    "memory_log": _log,
    "memory_scratch": _scratch,
    "memory_edit": _edit,
}
