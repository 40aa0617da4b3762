"""Proposals: writes waiting for a person, and the results every writer (person or agent) is told."""

from __future__ import annotations

import json
from typing import Any

from memtui.core.basics.jsontext import loads
from memtui.core.basics.record import Record, plain
from memtui.core.basics.visible import shown_name

PENDING, APPLIED, REJECTED, CONFLICT = "pending", "applied", "rejected", "conflict"
EXTERNAL_PREFIX = "x-"
# What a person is shown of a proposal and what decides what approving it writes: its digest (`Proposal.digest`)
# is over these, so a decision bound to it is bound to what they saw. Not `created`, `decided_*`, `commit` (no
# bearing on the write; an external change's `created` is the listing's time), nor `signals` and `session`, which
# show only as the candidate flag they make (in `flags`), nor `status` and `reason`: an open proposal is approved
# the same whether pending or in conflict, and the app shows a pending one whose file moved on as the conflict
# approving it would be (a copy with those two changed) while its queue file stays as it is.
SEEN_FIELDS = ("id", "actor", "file", "action", "section", "entry", "replaces", "provenance", "source", "old",
               "content", "to", "base_hash", "after_hash", "diff", "flags", "warnings", "origin", "evidence",
               "merged", "after", "to_section")
# The key of a queue file's seal (memtui/core/basics/seal.py's HMAC under the person's key), last in the file.
QUEUE_SEAL = "memtui-seal"
CHANGED_SINCE_SEEN = "changed since you saw it — look again"


class Proposal(Record):
    """A write: who proposed what, where, the diff it would make and the hash of the file it was computed against.

    Entry-level actions (add, revise, remove) are re-resolved against the file when approved; file-level ones
    (edit, create, delete, rename, append) carry what they need in `old`, `content` and `to`.

    A record, not a dataclass (memtui/core/basics/record.py): every write makes and copies these, and a person's
    `memtui update` would otherwise import dataclasses for them. Fields are in the order of the queue file."""

    id: str
    created: str
    actor: str
    file: str
    action: str
    section: str | None
    entry: str | None
    replaces: str | None
    provenance: str | None
    source: str | None
    old: str | None
    content: str | None
    to: str | None
    base_hash: str
    # An external change's bytes on disk as listed: approving it commits these bytes or nothing.
    after_hash: str
    diff: str
    status: str
    decided_by: str | None
    decided_at: str | None
    reason: str | None
    commit: str | None
    flags: list[str]
    warnings: list[str]
    # Hygiene (memtui/core/writing/guard.py, recurrence.py, consolidate.py): where the content came from (user, agent,
    # tool, web), the conversation it came from, the user's words that support a [stated] entry, the signals
    # that count toward the recurrence gate, and a consolidation's map of merged entries to their successors.
    origin: str | None
    session: str | None
    evidence: str | None
    signals: list[dict[str, Any]]
    merged: dict[str, str]
    # A person's edits in the app: add just below this current entry; move to this section (of `to`, or the
    # same file when `to` is None).
    after: str | None
    to_section: str | None
    # Why its queue file is not memtui's (`unsealed_reason`), as `Memory.get` read it; None when it is. Not a
    # field (no annotation): never saved, compared or copied.
    foreign = None

    def __init__(
        self, id: str, created: str, actor: str, file: str, action: str, section: str | None = None,
        entry: str | None = None, replaces: str | None = None, provenance: str | None = None,
        source: str | None = None, old: str | None = None, content: str | None = None, to: str | None = None,
        base_hash: str = "", after_hash: str = "", diff: str = "", status: str = PENDING,
        decided_by: str | None = None, decided_at: str | None = None, reason: str | None = None,
        commit: str | None = None, flags: list[str] | None = None, warnings: list[str] | None = None,
        origin: str | None = None, session: str | None = None, evidence: str | None = None,
        signals: list[dict[str, Any]] | None = None, merged: dict[str, str] | None = None,
        after: str | None = None, to_section: str | None = None,
    ) -> None:
        self.id = id
        self.created = created
        self.actor = actor
        self.file = file
        self.action = action
        self.section = section
        self.entry = entry
        self.replaces = replaces
        self.provenance = provenance
        self.source = source
        self.old = old
        self.content = content
        self.to = to
        self.base_hash = base_hash
        self.after_hash = after_hash
        self.diff = diff
        self.status = status
        self.decided_by = decided_by
        self.decided_at = decided_at
        self.reason = reason
        self.commit = commit
        self.flags = [] if flags is None else flags
        self.warnings = [] if warnings is None else warnings
        self.origin = origin
        self.session = session
        self.evidence = evidence
        self.signals = [] if signals is None else signals
        self.merged = {} if merged is None else merged
        self.after = after
        self.to_section = to_section

    @property
    def external(self) -> bool:
        return self.id.startswith(EXTERNAL_PREFIX)

    @property
    def open(self) -> bool:
        return self.status in (PENDING, CONFLICT)

    def to_json(self) -> bytes:
        # The fields as they are, not a deep copy of every value (json only reads them, and most of a queue
        # file's cost was the copy); a record or dataclass nested in a value is turned into its dict by
        # `default`, as `asdict` would have done, so the bytes are the same.
        fields_ = {name: getattr(self, name) for name in self._fields}
        return (json.dumps(fields_, ensure_ascii=False, indent=1, default=_nested) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes) -> Proposal:
        raw = loads(data)
        if not isinstance(raw, dict) or "id" not in raw:
            raise ValueError("not a proposal")
        values = {name: raw[name] for name in cls._fields if name in raw}
        for name, value in values.items():
            kind = _KINDS[name]
            if not _FITS[kind](value):
                # A queue file is anyone's to write: a list where a string goes would crash whoever shows it.
                raise ValueError(f"{name} is {type(value).__name__}, not {kind}")
        return cls(**values)

    def digest(self) -> str:
        """A short digest of the proposal as a person is shown it (`SEEN_FIELDS`): `memtui queue show` prints it
        and the app keeps it with what it drew, and a decision given it is refused when the proposal differs.
        16 hex digits (64 bits): a second proposal with the same digest is out of an agent's reach."""
        from memtui.core.basics.digests import sha256

        seen = [getattr(self, name) for name in SEEN_FIELDS]
        return sha256(json.dumps(seen, ensure_ascii=False, default=_nested).encode()).hexdigest()[:16]

    def sealed_json(self) -> bytes:
        """The queue file's bytes: `to_json`, with memtui's seal over them (an HMAC under the person's key, kept
        outside the memory root) as its last key. A queue file written or altered by anyone else (an agent with
        file access) does not verify (`unsealed_reason`). Without a key (none can be read or made) the file goes
        unsealed, and so is never approvable: fail closed."""
        from memtui.core.basics.seal import mac

        body = self.to_json()
        seal = mac(_QUEUE_DOMAIN + body)
        if seal is None:
            return body
        return body[:-3] + f',\n "{QUEUE_SEAL}": "{seal}"\n}}\n'.encode()

    def summary(self) -> str:
        what = self.entry or self.replaces or self.to or ""
        # The name drawn so that `MEMORY.md ` (a trailing space) is not read as MEMORY.md.
        where = shown_name(self.file) + (f" § {self.section}" if self.section else "")
        return f"{self.action} {where}: {what}".rstrip(": ")


_QUEUE_DOMAIN = b"memtui queue file\0"  # a queue file's seal vouches for nothing else (an intent, a signal)


def unsealed_reason(data: bytes, check: object = None) -> str | None:
    """Why the queue file `data` is not memtui's (this person's memtui did not seal these bytes), else None.
    `check` is `memtui.core.basics.seal.verifier()` read once for a listing (None: read the key now).

    The seal covers the file's bytes before it, exactly as memtui wrote them: any change (a status set back to
    pending, another entry, a rewrite by a JSON library) breaks it."""
    marker = f',\n "{QUEUE_SEAL}": "'.encode()
    at = data.rfind(marker)
    if at < 0:
        return "its queue file has no seal of memtui's: written outside memtui, or queued before memtui sealed them"
    given, end = data[at + len(marker):].partition(b'"')[::2]
    if end != b"\n}\n":
        return "its queue file was changed after memtui sealed it"
    if check is None:
        from memtui.core.basics.seal import verifier

        check = verifier()
    if check is None:
        return "memtui's key (to check a queue file's seal) cannot be read"
    body = data[:at] + b"\n}\n"
    if not check(_QUEUE_DOMAIN + body, given.decode("ascii", errors="replace")):  # type: ignore[operator]
        return "its queue file's seal does not match: written or changed outside memtui (or by another account)"
    return None


# Each field's type as written above (the annotations are strings): what a queue file's value must fit.
_KINDS: dict[str, str] = dict(Proposal.__annotations__)


def _nested(value: Any) -> Any:
    """`json.dumps`' fallback for a value it cannot write: a record or dataclass becomes its dict, as `asdict`
    makes it."""
    out = plain(value)
    if out is value:  # neither a record nor a dataclass
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return out


_FITS = {
    "str": lambda v: isinstance(v, str),
    "str | None": lambda v: v is None or isinstance(v, str),
    "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "list[dict[str, Any]]": lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
    "dict[str, str]": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values())),
}


class WriteResult(Record):
    """What a writer is told: is it in memory, waiting for a person, or refused (and what to send instead)."""

    status: str  # applied | queued | refused | rejected | conflict
    message: str
    id: str | None
    file: str | None
    section: str | None
    entry: str | None
    commit: str | None
    diff: str
    warnings: list[str]
    candidates: list[str]
    flags: list[str]
    # The memory files the write changed (applied) or would change (queued), as its diff names them.
    files: list[str]

    EXIT = {"applied": 0, "rejected": 0, "queued": 4, "refused": 3, "conflict": 5}

    def __init__(
        self, status: str, message: str, id: str | None = None, file: str | None = None,
        section: str | None = None, entry: str | None = None, commit: str | None = None, diff: str = "",
        warnings: list[str] | None = None, candidates: list[str] | None = None, flags: list[str] | None = None,
        files: list[str] | None = None,
    ) -> None:
        self.status = status
        self.message = message
        self.id = id
        self.file = file
        self.section = section
        self.entry = entry
        self.commit = commit
        self.diff = diff
        self.warnings = [] if warnings is None else warnings
        self.candidates = [] if candidates is None else candidates
        self.flags = [] if flags is None else flags
        self.files = [] if files is None else files

    @property
    def exit_code(self) -> int:
        return self.EXIT.get(self.status, 1)

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
