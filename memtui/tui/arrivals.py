"""Proposals arriving while the app is open: a feed line each and a toast, so a write that waits is seen.

The app learns of the queue through its syncs (a CLI, the MCP server, a hook: another process writes the queue
file, the watcher hears it, the sync lists it). The ids the first sync lists were there before the app opened and
are not news; each later sync's new ids are. Everything said is an agent's data (actor, file, section, entry):
drawn visibly (`reveal`, `shown_name`), never as markup. A flood is one toast, not one per proposal, and a bounded
number of feed lines: 10,000 queued at once must not bury the feed or the screen.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Iterable

from memtui.core.basics import clock
from memtui.core.basics.visible import reveal, shown_name
from memtui.tui.messages import Activity

# One toast per proposal up to this many arriving together; more make one toast that counts them.
TOASTS_EACH = 3
# Feed lines per sync for the new proposals; past it one line counts the rest.
FEED_EACH = 20
ENTRY_START = 48  # characters of the entry a feed line or toast quotes


def entry_start(text: str | None, width: int = ENTRY_START) -> str:
    one = " ".join(reveal(text or "", newlines=False).split())
    return one if len(one) <= width else one[:width - 1] + "…"


def where(p: Any) -> str:
    return shown_name(p.file) + (f" § {reveal(p.section, newlines=False)}" if p.section else "")


def what(p: Any) -> str:
    """"add to MEMORY.md § Projects: “[suggested] ships Friday”" — the action, where, and the entry's start."""
    target = p.to and f" → {shown_name(p.to)}" or ""
    quoted = entry_start(p.entry or p.replaces)
    return f"{reveal(p.action, newlines=False)} {where(p)}{target}" + (f": “{quoted}”" if quoted else "")


class Arrivals:
    """Which listed proposals are new since the app's first sync; `seen` is None until that sync is shown.

    The app lists only the oldest page of a long queue: deciding one brings the next into the list, and that one is
    no arrival. So a proposal is news only if it was also made after the app opened (less `SKEW`, for another
    machine's clock on a shared Redis memory)."""

    SKEW = timedelta(minutes=5)

    def __init__(self) -> None:
        self.seen: set[str] | None = None
        self.since = ""

    def new(self, proposals: Iterable[Any]) -> list[Any]:
        """The open queued proposals (not external changes) not listed before; the first call learns them.

        An incoming change from a git remote is no arrival: the sync that brought it says what came in (the app's
        own in its toast, the command line's in its output), and a trusted remote's is taken a moment after it is
        queued, so a toast would ask for a review nobody owes. Told apart by memtui's flag, which no agent can
        send (`sync.came_in`): an agent calling itself "bob via origin" is announced like any other."""
        from memtui.core.writing.sync import came_in

        listed = [p for p in proposals if not p.id.startswith("x-") and p.status in ("pending", "conflict")
                  and came_in(p) is None]
        if self.seen is None:
            self.seen = {p.id for p in listed}
            self.since = (clock.now() - self.SKEW).isoformat(timespec="seconds")
            return []
        fresh = [p for p in listed if p.id not in self.seen]
        self.seen.update(p.id for p in fresh)
        return [p for p in fresh if isinstance(p.created, str) and p.created >= self.since]


def feed_lines(fresh: list[Any], time: str) -> list[Activity]:
    lines = [Activity(time, reveal(p.actor, newlines=False), "queued", f"{p.id} {what(p)} — waiting for review",
                      p.file) for p in fresh[:FEED_EACH]]
    if len(fresh) > FEED_EACH:
        lines.append(Activity(time, "memtui", "queued", f"… and {len(fresh) - FEED_EACH} more proposals arrived "
                              f"({by_actor(fresh[FEED_EACH:])})"))
    return lines


def by_actor(fresh: list[Any], most: int = 3) -> str:
    counts: dict[str, int] = {}
    for p in fresh:
        name = reveal(p.actor, newlines=False)
        counts[name] = counts.get(name, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{a} {n}" for a, n in ranked[:most])
    if len(ranked) > most:
        text += f", {len(ranked) - most} others {sum(n for _, n in ranked[most:])}"
    return text


def toasts(fresh: list[Any], waiting: int) -> list[tuple[str, str]]:
    """(title, message) of each toast to show: one per proposal for a few, else one for them all."""
    if not fresh:
        return []
    if len(fresh) <= TOASTS_EACH:
        return [(f"{reveal(p.actor, newlines=False)} proposes", f"{what(p)}\nWaiting for your review ({p.id}).")
                for p in fresh]
    return [(f"{len(fresh)} proposals arrived",
             f"From {by_actor(fresh)}. {waiting} wait for your review in all: the review list has them, oldest "
             "first.")]
