"""Curating by hand: which entries a review filter shows, and the line a provenance change writes.

Pure functions over `Entry` (no UI): the app's viewer walks the entries these select, and every edit it makes
goes through `Memory.update` / `Memory.move` like any other writer's.
"""

from __future__ import annotations

import re
from datetime import date

from memtui.core.grammar.config import Config
from memtui.core.grammar.entries import TAGS, Entry

DEFAULT_STALE_DAYS = 90
# The review filters, in the order `f` cycles through them (None shows every entry).
FILTERS: tuple[str | None, ...] = (None, "agent", "untagged", "stale")
FILTER_LABELS = {
    None: "all entries",
    "agent": "[inferred] and [suggested] only",
    "untagged": "untagged only",
    "stale": "stale only",
}


def stale_days(config: Config) -> int:
    """`[curate] stale_days` in .memtui/config.toml: an entry dated longer ago than this is stale."""
    value = config.section("curate").get("stale_days", DEFAULT_STALE_DAYS)
    try:
        days = int(value)
    except (TypeError, ValueError):
        return DEFAULT_STALE_DAYS
    return days if days > 0 else DEFAULT_STALE_DAYS


def age_days(entry: Entry, today: str) -> int | None:
    """Days since the entry's date; None when it has no (valid) date."""
    if not entry.date:
        return None
    try:
        return (date.fromisoformat(today) - date.fromisoformat(entry.date)).days
    except ValueError:
        return None


def shows(entry: Entry, kind: str | None, *, today: str, stale_after: int = DEFAULT_STALE_DAYS) -> bool:
    """Does filter `kind` show this current entry?

    "agent": what an agent inferred or suggested (a person has not confirmed it); "untagged": no provenance;
    "stale": dated more than `stale_after` days before `today` (an undated entry is not stale: its age is
    unknown, and the untagged filter is where such lines get attention)."""
    if kind is None:
        return True
    if kind == "agent":
        return entry.tag in ("inferred", "suggested")
    if kind == "untagged":
        return entry.tag is None
    if kind == "stale":
        age = age_days(entry, today)
        return age is not None and age > stale_after
    raise ValueError(f"unknown filter {kind!r}: use one of {', '.join(str(f) for f in FILTERS if f)}")


def next_filter(kind: str | None) -> str | None:
    return FILTERS[(FILTERS.index(kind) + 1) % len(FILTERS)]


def retagged(entry: Entry, tag: str) -> str:
    """The entry as a revise writes it with provenance `tag`: same text and source, dated by the write.

    The date becomes the day of the change (the core fills it in): a person confirming a fact today makes it
    fresh, and the struck line keeps the old tag and date as history."""
    if tag not in TAGS:
        raise ValueError(f"unknown provenance {tag!r}: use one of {', '.join(TAGS)}")
    return f"[{tag}] {entry.text}"


_TAG_INSIDE = re.compile(r"\s*\[(" + "|".join(TAGS) + r")\]\s*")


def editable_text(entry: Entry) -> str:
    """What the revise editor starts with: the tag and the text (the core dates the new line).

    A line written by hand with its one tag elsewhere ("Name is Wes [stated]") starts with the tag moved to the
    front, so that enter writes a valid entry instead of a refusal; a line with no tag, or several, is left as it
    is for the person to tag."""
    if entry.tag:
        return f"[{entry.tag}] {entry.text}"
    found = _TAG_INSIDE.findall(entry.text)
    if len(found) != 1:
        return entry.text
    rest = _TAG_INSIDE.sub(" ", entry.text).strip()
    return f"[{found[0]}] {rest}" if rest else entry.text
