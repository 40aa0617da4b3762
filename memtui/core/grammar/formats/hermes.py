"""Hermes' memory format: MEMORY.md and USER.md as lists of entries, read, counted and written as Hermes does.

Hermes' own memory tool (hermes-agent, tools/memory_tool.py) splits a file's text at ``"\\n§\\n"`` exactly (a `§`
inside an entry's text, or a line ``" § "`` with spaces, is no separator), strips each piece, drops the empty ones
and counts a file's usage as the length of its distinct entries joined by that delimiter, against 2,200 characters
for MEMORY.md and 1,375 for USER.md. It reads with Python's universal newlines (CR LF reads as LF) and writes the
entries joined, with no trailing newline. memtui's writes change one entry in place and leave every other byte as
it was; none of memtui's own format (tags, dates, strike-through, a format comment) is written into a file Hermes
loads whole into every session: provenance and older versions live in memtui's history.

Hostile text is refused, not written: a line that Hermes would read as a separator (or that a person would take
for one: `§` padded with spaces, or with characters no one sees) splits one approved entry into two, and an entry
longer than the file's whole limit is what Hermes' drift guard reads as someone else's writing, refusing every
later replace and remove.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from typing import NamedTuple

from memtui.core.basics.visible import code_points, hidden, strip_hidden, visible
from memtui.core.grammar.update import Outcome, Refused

DELIMITER = "\n§\n"  # Hermes' ENTRY_DELIMITER
LIMITS = {"MEMORY.md": 2200, "USER.md": 1375}  # MemoryStore(memory_char_limit=2200, user_char_limit=1375)
FILES = tuple(LIMITS)
SIGN = "§"
# An agent used to memtui's own format may send its provenance tag; in this format it is kept in history only.
_TAG = re.compile(r"^\[(?:stated|observed|inferred|suggested)\]\s*", re.I)


# Hermes' own files beside its memories: the empty lock file each write flocks (`MEMORY.md.lock`), and the temporary
# file a write is renamed from (`.mem_XXXX.tmp`, there only for the moment of a write).
_TOOL_STATE = re.compile(r"^(?:(?:MEMORY|USER)\.md\.lock|\.mem_[^/]*\.tmp)$")


def tool_state(rel: str, data: bytes | None) -> bool:
    """`rel` is one of Hermes' own bookkeeping files (empty, or gone), not memory."""
    return bool(_TOOL_STATE.match(rel)) and not data


class Span(NamedTuple):
    """One entry as Hermes reads it: its stripped text, where that text is in the file's (LF) text, its lines."""

    text: str
    start: int
    end: int
    first_line: int  # 0-based, inclusive
    last_line: int


def lf(text: str) -> str:
    """`text` as Hermes reads it (Path.read_text: universal newlines)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def spans(text: str) -> list[Span]:
    """Every entry of a Hermes file's `text`, in order, with duplicates (Hermes drops them when it next loads)."""
    text = lf(text)
    out: list[Span] = []
    at = 0
    for cut in [*(m.start() for m in re.finditer(re.escape(DELIMITER), text)), len(text)]:
        piece = text[at:cut]
        body = piece.strip()
        if body:
            start = at + len(piece) - len(piece.lstrip())
            end = start + len(body)
            out.append(Span(body, start, end, text.count("\n", 0, start), text.count("\n", 0, end)))
        at = cut + len(DELIMITER)
    return out


def entries(text: str) -> list[str]:
    """The entries Hermes loads from `text`: split, stripped, empty ones dropped, the first of duplicates kept."""
    return list(dict.fromkeys(s.text for s in spans(text)))


def usage(text: str) -> int:
    """Characters of `text` counted as Hermes counts them against its limit."""
    found = entries(text)
    return len(DELIMITER.join(found)) if found else 0


def limit(rel: str) -> int | None:
    """The character limit Hermes holds `rel` to, None for a file Hermes does not load."""
    return LIMITS.get(rel)


def usage_line(rel: str, text: str) -> str:
    """``1,474 / 2,200 characters`` (with how far over, when it is)."""
    cap, used = limit(rel), usage(text)
    if cap is None:
        return f"{used:,} characters"
    over = f", {used - cap:,} over Hermes' limit" if used > cap else ""
    return f"{used:,} / {cap:,} characters{over}"


def looks_like_separator(line: str) -> bool:
    """A line a person would read as the line between two entries: `§` alone once the spaces (any width) and the
    characters no one sees around it are gone, and compatibility forms folded."""
    plain, _ = strip_hidden(line, keep="")
    return unicodedata.normalize("NFKC", plain).strip() == SIGN


def lookalikes(text: str) -> list[int]:
    """0-based lines inside entries that look like a separator but are not one (Hermes reads them as entry text)."""
    text = lf(text)
    lines = text.split("\n")
    return [i for s in spans(text) for i in range(s.first_line, s.last_line + 1) if looks_like_separator(lines[i])]


def over_limit(rel: str, text: str) -> str | None:
    """A warning when `text` is over Hermes' limit for `rel`, written for the person deciding."""
    cap, used = limit(rel), usage(text)
    if cap is None or used <= cap:
        return None
    return (f"{rel} would hold {used:,} / {cap:,} characters, {used - cap:,} over Hermes' limit: Hermes refuses "
            "every add to it until entries are removed or shortened; approve only if you mean to trim it next")


def review_flags(rel: str, text: str | None) -> list[str]:
    """What a person deciding on `rel`'s new `text` (written outside memtui) must know before the diff: over
    Hermes' limit, an entry longer than the whole limit, a line that looks like a separator but is entry text."""
    if text is None:
        return []
    out = [w for w in [over_limit(rel, text)] if w]
    cap = limit(rel)
    long = [i + 1 for i, s in enumerate(spans(text)) if cap is not None and len(s.text) > cap]
    if long:
        out.append(f"entry {', '.join(map(str, long))} is longer than all of {rel} may be ({cap:,} characters): "
                   "Hermes takes that for a file edited by hand and refuses its own replace and remove")
    fake = lookalikes(text)
    if fake:
        out.append(f"line {', '.join(str(i + 1) for i in fake[:8])} looks like the line between two entries but "
                   f"is not one (spaces or hidden characters around {SIGN}): Hermes reads it as text of the entry "
                   "around it; reject unless you know why it is there")
    return out


def clean(raw: str | None, rel: str) -> str:
    """An agent's entry as it is written: stripped, a memtui provenance tag dropped; refused when it is not one
    entry Hermes would read back the same."""
    text = (raw or "").replace("\r\n", "\n").strip()
    text = _TAG.sub("", text, count=1).strip()
    if not text:
        raise Refused(f"the entry is empty: send the fact as plain text, e.g. 'User prefers dark mode' ({rel} is "
                      "Hermes' memory: no tags or bullets are needed)")
    if "\r" in text:
        raise Refused("the entry holds a carriage return (CR): Hermes reads it as a line break; send lines ended by "
                      "a newline only")
    for n, line in enumerate(text.split("\n"), 1):
        if looks_like_separator(line):
            raise Refused(f"line {n} of the entry is {visible(line, newlines=False)!r}, which reads as the line "
                          f"between two entries of {rel}: one entry would become two. Send one entry without a "
                          f"line that holds only {SIGN} (a {SIGN} inside a sentence is fine)")
    unseen = hidden(text)
    if unseen:
        raise Refused(f"the entry contains {len(unseen)} invisible or control character(s) ({code_points(unseen)}): "
                      "a person reviewing it would not see them; send it as plain visible text without them")
    cap = limit(rel)
    if cap is not None and len(text) > cap:
        raise Refused(f"the entry is {len(text):,} characters, longer than all of {rel} may be ({cap:,}, Hermes' "
                      "limit): Hermes would take the file for one edited by hand and refuse its own replace and "
                      "remove. Send a shorter entry")
    return text


def checked_write(rel: str, before: str | None, after: str) -> list[str]:
    """A whole-file write to `rel` (an edit, the memory tool's str_replace or insert) held to what an entry write
    may do: refused when it adds a line that only looks like a separator or an entry longer than the file's whole
    limit; the warning when it leaves the file over Hermes' limit."""
    if "\r" in after and "\r" not in (before or ""):
        raise Refused(f"the write puts a carriage return (CR) into {rel}, which Hermes reads as a line break and "
                      "its own tool never writes: send lines ended by a newline only")
    if len(lookalikes(after)) > len(lookalikes(before or "")):
        raise Refused(f"the write adds a line to {rel} that looks like the line between two entries ({SIGN} with "
                      f"spaces or hidden characters around it) but is not one: Hermes reads it as entry text. Put "
                      f"{SIGN} alone on its line between entries, or inside a sentence")
    cap = limit(rel)
    was = {s.text for s in spans(before or "")}
    long = [s for s in spans(after) if cap is not None and len(s.text) > cap and s.text not in was]
    if long:
        raise Refused(f"the write leaves an entry of {len(long[0].text):,} characters in {rel}, longer than all of "
                      f"it may be ({cap:,}): Hermes would take the file for one edited by hand and refuse its own "
                      f"replace and remove. Keep each entry short and separate entries by a line holding {SIGN}")
    warning = over_limit(rel, after)
    return [warning] if warning else []


def find(found: list[Span], replaces: str | None, rel: str) -> Span:
    """The entry `replaces` names, by Hermes' rule: its exact text, else the one entry holding it."""
    key = (replaces or "").strip()
    key = _TAG.sub("", key, count=1).strip() if _TAG.match(key) and not any(s.text == key for s in found) else key
    if not key:
        raise Refused("replaces is empty: send the current entry's text (or a part of it found in that entry only)")
    exact = [s for s in found if s.text == key]
    if exact:
        return exact[0]
    hits = [s for s in found if key in s.text]
    if not hits:
        shown = "; ".join(repr(s.text[:60]) for s in found[:8]) or "(it has no entries)"
        raise Refused(f"no entry of {rel} holds {key[:80]!r}; its entries begin: {shown}. Send text from the "
                      "entry as it stands")
    if len({s.text for s in hits}) > 1:
        raise Refused(f"{len(hits)} entries of {rel} hold {key[:80]!r}: send more of the one you mean",
                      [s.text for s in hits])
    return hits[0]


def plan(action: str, rel: str, before: str | None, entry: str | None, replaces: str | None) -> Outcome:
    """The next text of Hermes file `rel` for an add, revise or remove against `before` (None: no file yet)."""
    if before is not None and "\r" in before:
        raise Refused(f"{rel} has CR LF line ends, which Hermes' own tool never writes: memtui changes only files "
                      "it can rewrite byte for byte; let Hermes write it once (or convert it to LF), then retry")
    text = before or ""
    found = spans(text)
    if action == "add":
        new = clean(entry, rel)
        for s in found:
            if s.text == new:
                raise Refused(f"{rel} already holds this entry: {s.text[:80]!r}; nothing needs writing", [s.text])
        if not text.strip():
            after = new
        elif text.endswith("\n"):
            after = text + SIGN + "\n" + new + "\n"
        else:
            after = text + DELIMITER + new
        return _outcome(rel, after, new, None)
    if action == "revise":
        old = find(found, replaces, rel)
        new = clean(entry, rel)
        if new == old.text:
            raise Refused(f"the revised entry is the same as the current one ({old.text[:80]!r}); nothing to change")
        if any(s.text == new for s in found):
            raise Refused(f"another entry of {rel} already says exactly this; remove one of them instead", [new])
        return _outcome(rel, text[:old.start] + new + text[old.end:], new, old.text)
    if action == "remove":
        old = find(found, replaces or entry, rel)
        i = found.index(old)
        if len(found) == 1:
            after = text[:old.start] + text[old.end:] if text.strip() != old.text else ""
        elif i == 0:
            after = text[:old.start] + text[found[1].start:]
        else:
            after = text[:found[i - 1].end] + text[old.end:]
        return _outcome(rel, after, old.text, old.text)
    raise Refused(f"unknown action {action!r}: use add, revise or remove")


def _outcome(rel: str, after: str, entry: str, replaced: str | None) -> Outcome:
    line = next((s.first_line for s in spans(after) if s.text == entry), None)
    warning = over_limit(rel, after)
    return Outcome(after, line, entry, replaced, [warning] if warning else [])


def entry_diff(rel: str, before: str | None, after: str | None) -> str:
    """A unified diff of `rel` by entry: one hunk per entry added, replaced or removed (its header says which, and
    the file's usage against Hermes' limit), never a raw line diff that cuts an entry in half."""
    old, new = spans(before or ""), spans(after or "")
    a, b = [s.text for s in old], [s.text for s in new]
    if a == b:
        return ""
    name = visible(rel, newlines=False)
    out = [f"--- {'a/' + name if before is not None else '/dev/null'}\n",
           f"+++ {'b/' + name if after is not None else '/dev/null'}\n"]
    tail = f" · {usage_line(rel, after or '')}"
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        for i, j, at_old, at_new in _pairs(a, b, i1, i2, j1, j2):
            o, n = (old[i] if i is not None else None), (new[j] if j is not None else None)
            what = "replaced" if o and n else "removed" if o else "added"
            number = (j if j is not None else at_new) + 1 if n else (i if i is not None else at_old) + 1
            out += _hunk(o, n, old, new, at_old, at_new, f"{what} entry {number}{tail}")
            tail = ""
    return "".join(out)


def _pairs(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> list[tuple[int | None, int | None,
                                                                                          int, int]]:
    """The entries of one changed stretch as (old, new, old place, new place), paired where one reads as an edit
    of the other (Hermes' replace), else each removed or added on its own: an add and a remove are not shown as
    one replace. A place is the index the entry has, or would have, in its file."""
    out: list[tuple[int | None, int | None, int, int]] = []
    j = j1
    for i in range(i1, i2):
        if j < j2 and SequenceMatcher(None, a[i], b[j], autojunk=False).ratio() >= 0.5:
            out.append((i, j, i, j))
            j += 1
        else:
            out.append((i, None, i, j))
    return out + [(None, k, i2, k) for k in range(j, j2)]


def _hunk(o: Span | None, n: Span | None, old: list[Span], new: list[Span], i: int, j: int, says: str) -> list[str]:
    minus = o.text.split("\n") if o else []
    plus = n.text.split("\n") if n else []
    # Where the hunk sits in the file that lacks it: after the entry before it (git's rule for an empty range).
    o_at = o.first_line + 1 if o else (old[i - 1].last_line + 1 if 0 < i <= len(old) else 0)
    n_at = n.first_line + 1 if n else (new[j - 1].last_line + 1 if 0 < j <= len(new) else 0)
    rows = [f"@@ -{o_at},{len(minus)} +{n_at},{len(plus)} @@ {says}\n"]
    rows += [f"-{line}\n" for line in minus] + [f"+{line}\n" for line in plus]
    return rows
