"""The queue read at any size: the oldest open proposals in full, every other one only counted.

An agent can queue 100,000 proposals in two minutes. Made into proposals, checked and kept, they took `memtui
today` 47 s and 860 MB and the app 27 s and 1.36 GB before it showed anything. No person reads 100,000 rows: a
listing shows the oldest few in full (`Memory.queue_page`) and says how many more wait, and for whom. The rest are
read one at a time for the fields that say whether and for whom a proposal waits (id, actor, status), and let go.
"""

from __future__ import annotations

import json
from typing import Any

from memtui.core.basics.jsontext import loads
from memtui.core.basics.record import Record

# Proposals a listing shows in full unless told otherwise: more than a screen of the app, and a few pages of a
# terminal (`memtui queue list --all` prints every one).
PAGE = 50


class Stopped(Exception):
    """A listing's reader was told to stop (`Memory.queue_page`'s `stop`): the app is quitting."""


class QueueHead(Record):
    """What a listing needs to know of a proposal it does not show: the id its file names, whether it waits, and
    for whom. The other fields are checked (`Proposal.from_json`) when its turn to be shown comes."""

    id: str
    actor: str
    status: str

    def __init__(self, id: str, actor: str, status: str) -> None:
        self.id = id
        self.actor = actor
        self.status = status


class QueuePage(Record):
    """The oldest `limit` open proposals in full, and how many open ones there are in all, by actor and status
    (unless the page was read without counting: `counted` False, and the counts are of the proposals read)."""

    proposals: list[Any]          # Proposal, in the order of `Memory.proposals`
    waiting: int                  # every open proposal, shown or not
    by_actor: dict[str, int]      # open proposals per actor, most first
    by_status: dict[str, int]     # pending / conflict
    problems: list[str]           # queue files that could not be read
    counted: bool

    def __init__(self, proposals: list[Any], waiting: int, by_actor: dict[str, int], by_status: dict[str, int],
                 problems: list[str], counted: bool = True) -> None:
        self.proposals = proposals
        self.waiting = waiting
        self.by_actor = by_actor
        self.by_status = by_status
        self.problems = problems
        self.counted = counted
        # The queue files' stamps the page was read by (not a field): counting the rest reuses them, where listing
        # 100,000 files again held the GIL for a second of a quitting app's.
        self.stamps: dict[str, tuple[int, ...]] | None = None

    @property
    def more(self) -> int:
        """Open proposals not in `proposals` (0 when the page was not counted)."""
        return max(0, self.waiting - len(self.proposals))

    def more_line(self) -> str:
        """"… and 99,950 more (agent-1 60,000, agent-2 39,950)", or "" when all are shown."""
        if not self.more:
            return ""
        return f"… and {self.more:,} more" + (f" ({actors_line(self.by_actor)})" if self.by_actor else "")


def actors_line(by_actor: dict[str, int], most: int = 5) -> str:
    """"agent-1 60,000, agent-2 39,950, and 3 others 50": the actors with most first. Names are data: the caller
    draws them visibly."""
    items = list(by_actor.items())
    text = ", ".join(f"{a} {n:,}" for a, n in items[:most])
    rest = items[most:]
    if rest:
        text += f", and {len(rest)} other{'s' if len(rest) > 1 else ''} {sum(n for _, n in rest):,}"
    return text


def head(data: bytes | None) -> QueueHead | None:
    """The actor and status of a queue file's proposal, or None when it is no proposal (read in full, it would be
    reported). The bytes are parsed (json is fast; making, type-checking and keeping a Proposal was the cost)."""
    if not data:
        return None
    try:
        raw = loads(data)
    except (ValueError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    pid, actor, status = raw.get("id"), raw.get("actor"), raw.get("status")
    if not isinstance(pid, str) or not isinstance(actor, str) or not isinstance(status, str):
        return None
    return QueueHead(pid, actor, status)


def oldest_first(pid: str) -> tuple[int, str]:
    """The sort key of a proposal id: by number (p-10000 after p-9999, where sorting the text put it after
    p-1000)."""
    return len(pid), pid


def ranked(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
