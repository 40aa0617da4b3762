"""Proposals: writes waiting for a person, and the results every writer (person or agent) is told."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

from memtui.core.jsontext import loads

PENDING, APPLIED, REJECTED, CONFLICT = "pending", "applied", "rejected", "conflict"
EXTERNAL_PREFIX = "x-"


@dataclass
class Proposal:
    """A write: who proposed what, where, the diff it would make and the hash of the file it was computed against.

    Entry-level actions (add, revise, remove) are re-resolved against the file when approved; file-level ones
    (edit, create, delete, rename, append) carry what they need in `old`, `content` and `to`."""

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
    # An external change's bytes on disk as listed: approving it commits these bytes or nothing.
    after_hash: str = ""
    diff: str = ""
    status: str = PENDING
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    commit: str | None = None
    flags: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Hygiene (memtui/core/guard.py, recurrence.py, consolidate.py): where the content came from (user, agent,
    # tool, web), the conversation it came from, the user's words that support a [stated] entry, the signals
    # that count toward the recurrence gate, and a consolidation's map of merged entries to their successors.
    origin: str | None = None
    session: str | None = None
    evidence: str | None = None
    signals: list[dict[str, Any]] = field(default_factory=list)
    merged: dict[str, str] = field(default_factory=dict)
    # A person's edits in the app: add just below this current entry; move to this section (of `to`, or the
    # same file when `to` is None).
    after: str | None = None
    to_section: str | None = None

    @property
    def external(self) -> bool:
        return self.id.startswith(EXTERNAL_PREFIX)

    @property
    def open(self) -> bool:
        return self.status in (PENDING, CONFLICT)

    def to_json(self) -> bytes:
        # The fields as they are, not `asdict`'s deep copy of every value (json only reads them, and most of a
        # queue file's cost was the copy); a dataclass nested in a value is turned into its dict by `default`, as
        # `asdict` would have done, so the bytes are the same.
        fields_ = {name: getattr(self, name) for name in _PROPOSAL_FIELDS}
        return (json.dumps(fields_, ensure_ascii=False, indent=1, default=_nested) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes) -> Proposal:
        raw = loads(data)
        if not isinstance(raw, dict) or "id" not in raw:
            raise ValueError("not a proposal")
        values = {f.name: raw[f.name] for f in fields(cls) if f.name in raw}
        for f in fields(cls):
            if f.name in values and not _FITS[str(f.type)](values[f.name]):
                # A queue file is anyone's to write: a list where a string goes would crash whoever shows it.
                raise ValueError(f"{f.name} is {type(values[f.name]).__name__}, not {f.type}")
        return cls(**values)

    def summary(self) -> str:
        what = self.entry or self.replaces or self.to or ""
        where = f"{self.file}" + (f" § {self.section}" if self.section else "")
        return f"{self.action} {where}: {what}".rstrip(": ")


_PROPOSAL_FIELDS = tuple(f.name for f in fields(Proposal))


def _nested(value: Any) -> Any:
    """`json.dumps`' fallback for a value it cannot write: a dataclass becomes its dict, as `asdict` makes it."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_FITS = {
    "str": lambda v: isinstance(v, str),
    "str | None": lambda v: v is None or isinstance(v, str),
    "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "list[dict[str, Any]]": lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
    "dict[str, str]": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values())),
}


@dataclass
class WriteResult:
    """What a writer is told: is it in memory, waiting for a person, or refused (and what to send instead)."""

    status: str  # applied | queued | refused | rejected | conflict
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
    # The memory files the write changed (applied) or would change (queued), as its diff names them.
    files: list[str] = field(default_factory=list)

    EXIT = {"applied": 0, "rejected": 0, "queued": 4, "refused": 3, "conflict": 5}

    @property
    def exit_code(self) -> int:
        return self.EXIT.get(self.status, 1)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return d

    def for_agent(self) -> str:
        """The tool-result wording an agent reads."""
        head = {
            "applied": "Applied: the change is in memory",
            "queued": f"Queued as {self.id} for review; not in memory yet",
            "refused": "Refused; nothing was written",
            "rejected": "Rejected",
            "conflict": f"Conflict on {self.id}; nothing was written",
        }.get(self.status, self.status)
        parts = [f"{head}. {self.message}".strip()]
        if self.candidates:
            parts.append("Candidates:\n" + "\n".join(f"  {c}" for c in self.candidates))
        if self.warnings:
            parts.append("Warnings: " + "; ".join(self.warnings))
        if self.flags:
            parts.append("Flags for review: " + "; ".join(self.flags))
        if self.diff and self.status in ("queued", "applied"):
            parts.append(self.diff)
        return "\n".join(parts)
