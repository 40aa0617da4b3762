"""The records on `memtui context`'s path (memtui/core/basics/record.py) behave as the dataclasses they were: each is
compared with a real `@dataclass` twin made from its own fields and defaults — the same repr, equality, hash,
frozenness, defaults (fresh per instance where a factory was), pickling and copying."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from memtui.core.basics.record import Frozen
from memtui.core.grammar.config import Config, ReviewPolicy, Rule
from memtui.core.grammar.document import FormatSpec, Section
from memtui.core.grammar.entries import Entry, parse_entry
from memtui.core.grammar.layout import Layout
from memtui.core.grammar.update import Outcome
from memtui.core.recall.context import ContextPack, _Part
from memtui.core.storage.folder import _Kept
from memtui.core.storage.store import Commit, ExternalChange
from memtui.core.writing import changes, journal
from memtui.core.writing.planning import Planner
from memtui.core.writing.proposals import Proposal, WriteResult
from memtui.core.writing.recurrence import Candidate, Held, Tally

SAMPLES = {
    Entry: [("- [stated] Likes tea (2026-08-20, wes)",), {"raw": "- x", "text": "x", "struck": True}],
    FormatSpec: [(), ({"Facts": 3}, ("Facts",), 80, 200, 25_000, "keep it short", True)],
    Section: [("Facts", 2, 4, 5, 9), ("Preamble", 0, None, 0, 3, [(1, Entry("- a"))])],
    Rule: [("wait",), ("apply", "claude*", "notes/*", "Facts", "add")],
    ReviewPolicy: [(), ((Rule("wait"),), ("bot*",), 60.0, True)],
    Config: [(), (ReviewPolicy(fail_closed=True), "m", "t", {"a": {"b": 1}}, "bad", "pending")],
    ExternalChange: [("MEMORY.md", None, b"x"), ("a.md", b"1", b"2", "hash"), ("a.md", b"1", b"2\r\n", None, b"2\n")],
    Commit: [("abc", "wes", 1.5, "msg", ("a.md",)), ("abc", "wes", 1.5, "msg", ("a.md",), ("p1", "p2"))],
    ContextPack: [("text", 3, 100), ("text", 3, 100, [{"file": "x"}], True, ["bad"])],
    _Part: [("n", "T", ["a", "bb"], "MEMORY.md"), ("n", "T", ["a"], "log/x.md", True, True, 3, 0, "entries")],
    _Kept: [(Path("/a"), b"x", None, Path("a")), (Path("/b"), None, "../t", Path("b"))],
    Layout: [(), ("claude-code", ("CLAUDE.md",), None, "s", "a")],
    # The write path's records (dataclasses until issue 19's cheaper writes).
    Proposal: [("p-1", "2026-08-20T14:05:00", "wes", "MEMORY.md", "add"),
               {"id": "p-2", "created": "t", "actor": "claude", "file": "a.md", "action": "move", "section": "S",
                "entry": "e", "replaces": "r", "provenance": "stated", "source": "s", "old": "o", "content": "c",
                "to": "b.md", "base_hash": "h", "after_hash": "h2", "diff": "d", "status": "conflict",
                "decided_by": "wes", "decided_at": "t2", "reason": "why", "commit": "abc", "flags": ["f"],
                "warnings": ["w"], "origin": "tool", "session": "s-1", "evidence": "said so",
                "signals": [{"day": "x"}], "merged": {"a": "b"}, "after": "x", "to_section": "T"}],
    WriteResult: [("applied", "done"),
                  ("queued", "m", "p-1", "f.md", "S", "e", "abc", "d", ["w"], ["c"], ["fl"], ["f.md"])],
    Outcome: [("text",), ("t", 3, "- e", "- r", ["w"], {"archive/a.md": (None, "x")})],
    journal.Change: [("add of a.md", {"a.md": b"x"}, "msg", "wes"),
                     ("w", {"a.md": None}, "m", "a", "wes", {"b.md": b"y"}, [{"status": "applied"}],
                      Proposal("p-1", "t", "a", "f", "add"), False)],
    changes.Change: [(), (frozenset({"a.md"}), True, False, True, False, None, "lost", "c-1")],
    Planner: [(len, str, bytes, bytes), (len, str, bytes, bytes, str, tuple, str)],
    Tally: [(1.5, 2, 3)],
    Candidate: [(Proposal("p-1", "t", "a", "f", "add"), Tally(1.0, 1, 1))],
    Held: [(Proposal("p-1", "t", "a", "f", "add"), Tally(1.0, 1, 1), True)],
}


def _twins() -> dict[type, type]:
    """The dataclasses these records were (their definitions at b1d7428, fields and defaults as they were)."""
    from dataclasses import dataclass, field
    from typing import Any

    from memtui.core.grammar.config import (
        DEFAULT_AGENT_MAX_PENDING, DEFAULT_AGENTS, DEFAULT_AGENTS_MAX_PENDING, DEFAULT_LOG_LINE_MAX, DEFAULT_MODEL, DEFAULT_SCRATCH_MAX_BYTES,
        DEFAULT_SCRATCH_MAX_TTL_MIN,
    )
    from memtui.core.grammar.document import DEFAULT_ENTRY_MAX
    from memtui.core.grammar.layout import MEMTUI

    @dataclass(frozen=True, slots=True)
    class Entry:
        raw: str
        indent: str = ""
        bullet: str = "-"
        time: str | None = None
        tag: str | None = None
        text: str = ""
        date: str | None = None
        source: str | None = None
        struck: bool = False
        struck_kind: str | None = None
        struck_date: str | None = None

    @dataclass(frozen=True)
    class FormatSpec:
        caps: dict[str, int] = field(default_factory=dict)
        always: tuple[str, ...] = ()
        entry_max: int = DEFAULT_ENTRY_MAX
        file_lines: int | None = None
        file_bytes: int | None = None
        rules: str = ""
        present: bool = False

    @dataclass
    class Section:
        title: str
        level: int
        heading: int | None
        start: int
        end: int
        entries: list = field(default_factory=list)

    @dataclass(frozen=True)
    class Rule:
        decision: str
        actor: str = "*"
        file: str = "*"
        section: str = "*"
        action: str = "*"

    @dataclass(frozen=True)
    class ReviewPolicy:
        rules: tuple = ()
        agents: tuple[str, ...] = DEFAULT_AGENTS
        scratch_max_ttl_min: float = DEFAULT_SCRATCH_MAX_TTL_MIN
        fail_closed: bool = False
        scratch_max_bytes: int = DEFAULT_SCRATCH_MAX_BYTES
        log_line_max: int = DEFAULT_LOG_LINE_MAX
        agent_max_pending: int = DEFAULT_AGENT_MAX_PENDING
        agents_max_pending: int = DEFAULT_AGENTS_MAX_PENDING

    @dataclass(frozen=True)
    class Config:
        policy: Any = field(default_factory=_policy)
        model: str = DEFAULT_MODEL
        theme: str = "memtui-dark"
        raw: dict[str, Any] = field(default_factory=dict)
        error: str | None = None
        pending: str | None = None

    @dataclass(frozen=True)
    class ExternalChange:
        path: str
        before: bytes | None
        after: bytes | None
        after_hash: str | None = field(default=None, compare=False)
        stored: bytes | None = field(default=None, compare=False)
        note: str | None = None

    @dataclass(frozen=True)
    class Commit:
        sha: str
        author: str
        time: float
        message: str
        files: tuple[str, ...]
        parents: tuple[str, ...] = ()

    @dataclass
    class ContextPack:
        text: str
        tokens: int
        budget: int
        left_out: list = field(default_factory=list)
        over_budget: bool = False
        problems: list = field(default_factory=list)

    @dataclass
    class _Part:
        name: str
        title: str
        lines: list[str]
        where: str
        always: bool = False
        newest_last: bool = False
        priority: int = 0
        keep: int = 0
        unit: str = "lines"

        def __post_init__(self) -> None:
            self.keep = len(self.lines)

    @dataclass(frozen=True)
    class _Kept:
        real: Path
        data: Any
        link: str | None
        name: Path

    @dataclass(frozen=True)
    class Layout:
        kind: str = MEMTUI
        core: tuple[str, ...] = ("MEMORY.md",)
        log_dir: str | None = "log"
        scratch_dir: str = "scratch"
        archive_dir: str = "archive"

    # The write path's, as they were at ab41db8.
    @dataclass
    class Proposal:
        id: str
        created: str
        actor: str
        file: str
        action: str
        section: str | None = None
        entry: str | None = None
        replaces: str | None = None
        provenance: str | None = None
        source: str | None = None
        old: str | None = None
        content: str | None = None
        to: str | None = None
        base_hash: str = ""
        after_hash: str = ""
        diff: str = ""
        status: str = "pending"
        decided_by: str | None = None
        decided_at: str | None = None
        reason: str | None = None
        commit: str | None = None
        flags: list[str] = field(default_factory=list)
        warnings: list[str] = field(default_factory=list)
        origin: str | None = None
        session: str | None = None
        evidence: str | None = None
        signals: list[dict[str, Any]] = field(default_factory=list)
        merged: dict[str, str] = field(default_factory=dict)
        after: str | None = None
        to_section: str | None = None

    @dataclass
    class WriteResult:
        status: str
        message: str
        id: str | None = None
        file: str | None = None
        section: str | None = None
        entry: str | None = None
        commit: str | None = None
        diff: str = ""
        warnings: list[str] = field(default_factory=list)
        candidates: list[str] = field(default_factory=list)
        flags: list[str] = field(default_factory=list)
        files: list[str] = field(default_factory=list)

    @dataclass
    class Outcome:
        text: str
        line: int | None = None
        entry: str | None = None
        replaced: str | None = None
        warnings: list[str] = field(default_factory=list)
        also: dict[str, tuple[str | None, str]] = field(default_factory=dict)

    @dataclass
    class JournalChange:
        what: str
        writes: dict[str, bytes | None]
        message: str
        author: str
        committer: str | None = None
        commits: dict[str, bytes | None] = field(default_factory=dict)
        audit: list[dict[str, Any]] = field(default_factory=list)
        proposal: Any = None
        record: bool = True

    @dataclass(frozen=True)
    class Change:
        paths: frozenset[str] = frozenset()
        queue: bool = False
        audit: bool = False
        own: bool = False
        everything: bool = False
        connected: bool | None = None
        message: str = ""
        cookie: str = ""

    from memtui.core.writing.planning import _archive, _memtui, _memtui_layout, _same

    @dataclass(frozen=True)
    class Planner:
        spec_for: Any
        read: Any
        on_disk: Any
        committed: Any
        real: Any = _same
        archive_dir: Any = _archive
        grammar: Any = _memtui
        layout: Any = _memtui_layout

    @dataclass(frozen=True)
    class Tally:
        weight: float
        sessions: int
        signals: int

    @dataclass(frozen=True)
    class Candidate:
        proposal: Any
        tally: Any

    @dataclass(frozen=True)
    class Held:
        proposal: Any
        tally: Any
        again: bool

    made = {c.__name__: c for c in (Entry, FormatSpec, Section, Rule, ReviewPolicy, Config, ExternalChange, Commit,
                                    ContextPack, _Part, _Kept, Layout, Proposal, WriteResult, Outcome, Change,
                                    Planner, Tally, Candidate, Held)}
    made["JournalChange"] = JournalChange
    return {cls: made["JournalChange" if cls is journal.Change else cls.__name__] for cls in SAMPLES}


def _policy() -> ReviewPolicy:
    return ReviewPolicy()


def _strip(text: str) -> str:
    """A repr without the twins' place of definition (`_twins.<locals>.`)."""
    return text.replace("_twins.<locals>.", "").replace("JournalChange(", "Change(")


@pytest.mark.parametrize("cls", list(SAMPLES), ids=lambda c: c.__qualname__)
def test_each_record_is_its_dataclass(cls: type) -> None:
    model = _twins()[cls]
    assert cls._fields == tuple(f.name for f in dataclasses.fields(model))
    for args in SAMPLES[cls]:
        mine = cls(**args) if isinstance(args, dict) else cls(*args)
        theirs = model(**args) if isinstance(args, dict) else model(*args)
        assert repr(mine) == _strip(repr(theirs))
        assert all(getattr(mine, f) == getattr(theirs, f) for f in cls._fields)
        again = cls(**args) if isinstance(args, dict) else cls(*args)
        assert mine == again and not (mine != again) and mine != theirs and (mine == object()) is False
        if issubclass(cls, Frozen):
            try:
                want = hash(theirs)
            except TypeError:  # a dict among its fields: unhashable, as the dataclass is
                with pytest.raises(TypeError):
                    hash(mine)
            else:
                assert hash(mine) == want == hash(again)
            with pytest.raises(AttributeError):
                mine.__setattr__(cls._fields[0], "changed")
            with pytest.raises(AttributeError):
                delattr(mine, cls._fields[-1])
            with pytest.raises(AttributeError):
                mine.not_a_field = 1
            assert mine.replace() == mine and pickle.loads(pickle.dumps(mine)) == mine
        else:
            with pytest.raises(TypeError):
                hash(mine)
        assert copy.deepcopy(mine) == mine and copy.copy(mine) == mine


def test_factory_defaults_are_fresh_per_instance_and_plain_defaults_stay_on_the_class() -> None:
    assert FormatSpec().caps is not FormatSpec().caps and Config().raw is not Config().raw
    assert ContextPack("", 0, 0).left_out is not ContextPack("", 0, 0).left_out
    assert Section("a", 1, None, 0, 0).entries is not Section("a", 1, None, 0, 0).entries
    assert Config().policy == ReviewPolicy() and Layout.log_dir == "log" and FormatSpec.present is False


def test_entry_keeps_its_slots_and_compares_as_before() -> None:
    e = parse_entry("- 09:30 [stated] Likes tea (2026-08-20, wes)")
    assert e is not None and not hasattr(e, "__dict__")
    assert e == parse_entry(e.raw) and {e: 1}[parse_entry(e.raw)] == 1
    with pytest.raises(AttributeError, match="cannot assign to field 'text'"):
        e.text = "x"  # type: ignore[misc]
    assert e.replace(text="Likes coffee").text == "Likes coffee" and e.text == "Likes tea"
    with pytest.raises(TypeError):
        e.replace(nope=1)


def test_external_change_ignores_its_hash_when_compared() -> None:
    assert ExternalChange("a", None, b"x", "h1") == ExternalChange("a", None, b"x", "h2")
    assert hash(ExternalChange("a", None, b"x", "h1")) == hash(ExternalChange("a", None, b"x"))
