"""The recurrence gate: an agent's [inferred] lesson becomes standing behaviour only after it recurs.

The rule: a pattern the agent notices needs at least three independent signals across at least two distinct
sessions before it can become standing behaviour; signals older than thirty days count half; a person decides
past it (an approval of a lesson short of its signals is recorded as the person's confirmation). Definitions:

- *Standing behaviour*: an entry tagged ``[inferred]`` that an agent adds or revises into a core file (MEMORY.md
  and the other always-loaded files of the layout, memtui/core/grammar/layout.py), by an entry action (add, revise) or
  by a file write (edit, create, append: the ``[inferred]`` entries its new text has that its old text had not, as
  the core's entry parser reads them; the Claude Code hook and Anthropic's memory tool always send these). Topic
  files, logs and a person's own writes are not gated.
- *Signal*: one session in which an agent proposed the lesson (or a similar ``[inferred]`` entry: same words by
  `similar`), as memtui recorded it on the candidate. Signals are memtui's own records, never text an agent
  writes: daily-log lines do not count (an agent can write any number of them in one conversation), and
  proposing the lesson again in the same session adds nothing. Each is sealed as memtui records it (an HMAC under
  the person's key outside the memory root, `memtui.core.basics.seal`) to the candidate it counts for: one written into
  a queue file by hand, altered, or copied from another candidate does not count.
- *Session*: the conversation a signal came from, as memtui attests it: a conversation memtui itself started (the
  embedded agent's, which a person starts in the app or with `memtui ask`: `new_session`), else the day memtui
  received the signal (``day:YYYY-MM-DD``). A session the caller names (`Proposal.session` from an in-process
  caller, a hook payload's session id) is a claim: one caller could name any number, so it counts as that day.
  The day is memtui's clock, never the proposal's `created`. So several real sessions over days meet the gate,
  and one caller alone, in one day, brings one session however it labels its proposals.
- *Candidate*: the pending proposal that holds the lesson until the gate is met. It lives in the review queue like
  any proposal, with its signals in `Proposal.signals` and a ``candidate:`` flag showing the count. A later
  proposal of the same lesson adds its signal to the candidate instead of queueing again. `Memory.approve`
  records a person's approval short of the gate as their confirmation (`short_of`); only a person approves.

The gate decides from plain data (the proposal, who is an agent, the layout, the pending proposals) and says what
to hold; `Memory.submit` numbers and saves what it holds.
"""

from __future__ import annotations

import os
import re
from datetime import date, timedelta
from typing import TYPE_CHECKING, Callable, Iterable

from memtui.core.basics import clock
from memtui.core.basics.record import Frozen
from memtui.core.grammar.dedupe import near_duplicate, tokens
from memtui.core.grammar.entries import parse_entry
from memtui.core.writing.proposals import PENDING, WriteResult

if TYPE_CHECKING:
    from memtui.core.grammar.layout import Layout
    from memtui.core.writing.proposals import Proposal

MIN_SIGNALS = 3.0
MIN_SESSIONS = 2
HALF_AFTER_DAYS = 30
CANDIDATE_FLAG = "candidate:"
# File writes whose new text can add an entry (a delete, a rename or a move adds none).
FILE_WRITES = ("edit", "create", "append")

# The conversations memtui itself started in this process (`new_session`): the only session ids that count as
# sessions of their own. Kept in memory, never in a file an agent could write.
_ATTESTED: set[str] = set()


class Tally(Frozen):
    weight: float
    sessions: int
    signals: int

    def __init__(self, weight: float, sessions: int, signals: int) -> None:
        put = object.__setattr__
        put(self, "weight", weight)
        put(self, "sessions", sessions)
        put(self, "signals", signals)

    @property
    def met(self) -> bool:
        return self.weight >= MIN_SIGNALS and self.sessions >= MIN_SESSIONS

    def describe(self) -> str:
        w = f"{self.weight:g}"
        return (f"{w} of {MIN_SIGNALS:g} signals across {self.sessions} of {MIN_SESSIONS} sessions"
                + (" (gate met)" if self.met else ""))


def similar(a: str, b: str) -> bool:
    """Two wordings of one lesson: near-duplicates, or 60% of their words shared and the same numbers."""
    if near_duplicate(a, b):
        return True
    ta, tb = set(tokens(a)), set(tokens(b))
    if not ta or not tb:
        return False
    if {w for w in ta ^ tb if any(c.isdigit() for c in w)}:
        return False
    return len(ta & tb) / len(ta | tb) >= 0.6


def new_session(kind: str = "chat") -> str:
    """The id of a conversation memtui itself starts (the embedded agent's): it counts as a session of its own.
    Only memtui's own agent loop calls this, once per conversation; a model cannot start one."""
    sid = f"{kind}-{clock.now():%Y%m%dT%H%M%S}-{os.urandom(6).hex()}"
    _ATTESTED.add(sid)
    return sid


def session_of(p: Proposal) -> str:
    """The session a signal of `p` counts for: the conversation memtui started, else today (see the module)."""
    if p.session and p.session in _ATTESTED:
        return p.session
    return f"day:{clock.now():%Y-%m-%d}"


def lessons(p: Proposal, tag: str | None) -> list[str]:
    """The [inferred] entries `p` would make standing: an add's or revise's entry (`tag` is its provenance), or the
    current [inferred] entries a file write's new text has that its old text has not (each ``[inferred] text``)."""
    if p.action in ("add", "revise"):
        if tag != "inferred":
            return []
        e = parse_entry(f"- {p.entry or ''}")
        return [f"[inferred] {e.text}" if e is not None and e.text else (p.entry or "")]
    if p.action not in FILE_WRITES:
        return []
    # Every line counts, fenced or not: a fragment of a file cannot tell, and over-counting only holds a write that
    # waits for a person anyway.
    old = {text.casefold() for text in _file_lessons(p.old if p.action == "edit" else None)}
    return list(dict.fromkeys(f"[inferred] {text}" for text in _file_lessons(p.content) if text.casefold() not in old))


# An [inferred] tag as a reader (the next session's model) takes it, wherever it sits in a line: in bold, spaced, in
# a quote or a heading, after a struck part. The entry grammar reads none of these as an [inferred] entry, yet each
# line is a lesson to whoever loads the file.
_INFERRED_TAG = re.compile(r"\[\s*[*_`~]*\s*inferred\s*[*_`~]*\s*\]", re.I)


def _file_lessons(text: str | None) -> list[str]:
    """The texts of the [inferred] lessons in a file write's `text`: its current [inferred] entries, and every other
    line that carries an [inferred] tag (the words after the tag). A struck [inferred] entry is history, not one."""
    out: list[str] = []
    for line in (text or "").splitlines():
        if "inferred" not in line.casefold():
            continue
        e = parse_entry(line)
        if e is not None and e.tag == "inferred":
            if e.current and e.text:
                out.append(e.text)
            continue
        found = _INFERRED_TAG.search(line)
        rest = found and " ".join(line[found.end():].strip(" \t*_~`").split())
        if rest:
            out.append(rest)
    return out


def gated(p: Proposal, tag: str | None, *, is_agent: Callable[[str], bool], layout: Callable[[], Layout]) -> bool:
    """Does the gate apply: an agent's [inferred] lesson written into a core file (the cheap checks first, the
    layout next, a file write's entries read last)."""
    maybe = (p.action in ("add", "revise") and tag == "inferred") or (
        p.action in FILE_WRITES and "inferred" in (p.content or "").casefold())
    return maybe and is_agent(p.actor) and layout().layer(p.file) == "core" and bool(lessons(p, tag))


def tally(p: Proposal) -> Tally:
    """The candidate's signals: one per distinct session (its earliest), weighed by age. Only signals memtui sealed
    for this candidate count (`counted`)."""
    today = clock.now().date()
    first: dict[str, str] = {}
    for s in counted(p):
        session = str(s.get("session") or "?")
        ts = str(s.get("ts", ""))
        if session not in first or ts < first[session]:
            first[session] = ts
    weight = sum(_weight(ts, today) for ts in first.values())
    return Tally(round(weight, 2), len(first), len(first))


def _signal_payload(p: Proposal, signal: dict, lesson_texts: list[str] | None = None) -> bytes:
    """What a signal's seal vouches for: the signal, and the candidate it was counted for (its file, when it was
    made, its lessons), so a signal neither changes nor moves to another candidate. `lesson_texts` is the
    candidate's (`_lesson_texts`), when already read."""
    import json

    if lesson_texts is None:
        lesson_texts = _lesson_texts(p)
    return json.dumps(["memtui-signal", p.file, p.created, lesson_texts, signal.get("ts"), signal.get("session"),
                       signal.get("actor"), signal.get("named")], ensure_ascii=False).encode()


def _sealed(p: Proposal, signal: dict) -> dict:
    """`signal`, counted for candidate `p`, with memtui's seal (`memtui.core.basics.seal.mac`; none when no key can be
    read or made, and then it does not count)."""
    from memtui.core.basics.seal import mac

    seal = mac(_signal_payload(p, signal))
    return {**signal, "seal": seal} if seal is not None else signal


def counted(p: Proposal) -> list[dict]:
    """The signals of `p` that memtui recorded for it: a queue file (or a Redis queue entry) is anyone's to write
    who can write the memory's files, so a signal written there by hand, changed, copied from another candidate,
    or recorded before signals were sealed does not count."""
    from memtui.core.basics.seal import verifier

    # The candidate's lessons and the key are read once: a queue file of many thousand signals (anyone can write
    # one) costs one HMAC each, not a parse of the candidate and a read of the key each.
    check = verifier() if p.signals else None
    if check is None:
        return []
    texts = _lesson_texts(p)
    return [s for s in p.signals if isinstance(s, dict) and check(_signal_payload(p, s, texts), s.get("seal"))]


def _lesson_texts(p: Proposal) -> list[str]:
    return sorted(text.casefold() for text in lessons(p, "inferred"))


def shown(p: Proposal) -> Proposal:
    """`p` with its ``candidate:`` flag as memtui counts it now: a queue file is anyone's to write, and a flag
    written there ("… (gate met)") must not tell the person more signals than the seals vouch for. A proposal
    without signals has no candidate flag."""
    flags = [f for f in p.flags if not f.startswith(CANDIDATE_FLAG)]
    if p.signals:
        flags.append(f"{CANDIDATE_FLAG} {tally(p).describe()}")
    if flags != p.flags:
        p.flags = flags
    return p


class Held(Frozen):
    """A proposal the gate holds: `proposal` is the candidate to save (a new one has no id yet), `again` says it
    was already pending and got one more signal."""

    proposal: Proposal
    tally: Tally
    again: bool

    def __init__(self, proposal: Proposal, tally: Tally, again: bool) -> None:
        put = object.__setattr__
        put(self, "proposal", proposal)
        put(self, "tally", tally)
        put(self, "again", again)

    def result(self) -> WriteResult:
        p, t = self.proposal, self.tally
        what = "another signal for candidate" if self.again else "held as candidate"
        msg = (f"{what} {p.id}: {t.describe()}. An [inferred] lesson becomes standing behaviour only after "
               f"{MIN_SIGNALS:g} signals across {MIN_SESSIONS} sessions; until then it waits as a candidate. "
               "Keep it as data (a log line) meanwhile.")
        return WriteResult("queued", msg, p.id, p.file, p.section, p.entry, None, p.diff, list(p.warnings),
                           flags=list(p.flags))


def hold(
    p: Proposal, tag: str | None, pending: Callable[[], Iterable[Proposal]], *, is_agent: Callable[[str], bool],
    layout: Callable[[], Layout],
) -> Held | None:
    """Once `p` is planned: None lets it through; otherwise what to hold as a candidate, a new one or the
    pending candidate of the same lesson (among `pending`, the open proposals) with `p`'s signal added."""
    if not gated(p, tag, is_agent=is_agent, layout=layout):
        return None
    signal = {"ts": clock.now().isoformat(timespec="seconds"), "session": session_of(p), "actor": p.actor}
    if p.session and p.session not in _ATTESTED:
        signal["named"] = p.session  # what the caller called it, kept for the record; it does not count
    # A file write that carries more than the lesson is held on its own: as a signal for another candidate, the
    # rest of what it writes would be lost.
    existing = _open_candidate(pending(), p, tag) if _only_lessons(p, tag) else None
    if existing is not None:
        existing.signals.append(_sealed(existing, signal))
        t = tally(existing)
        _set_flag(existing, t)
        return Held(existing, t, again=True)
    p.signals = [_sealed(p, signal)]
    t = tally(p)
    if t.met:
        return None
    _set_flag(p, t)
    return Held(p, t, again=False)


def short_of(p: Proposal, tag: str | None, *, is_agent: Callable[[str], bool], layout: Callable[[], Layout]) -> str | None:
    """The signal count of a gated lesson that has not met the gate ("1 of 3 signals across 1 of 2 sessions"),
    or None: what a person's approval confirms on the lesson's behalf."""
    if not gated(p, tag, is_agent=is_agent, layout=layout):
        return None
    t = tally(p)
    return None if t.met else t.describe()


class Candidate(Frozen):
    proposal: Proposal
    tally: Tally

    def __init__(self, proposal: Proposal, tally: Tally) -> None:
        put = object.__setattr__
        put(self, "proposal", proposal)
        put(self, "tally", tally)


def candidates(proposals: Iterable[Proposal]) -> list[Candidate]:
    """The pending proposals among `proposals` that the gate holds, with their counts."""
    out = []
    for p in proposals:
        if p.status == PENDING and p.signals:
            out.append(Candidate(p, tally(p)))
    return out


def _open_candidate(pending: Iterable[Proposal], p: Proposal, tag: str | None) -> Proposal | None:
    """The pending candidate of the same lesson(s) in the same file: each lesson of `p` has a similar one in it."""
    mine = lessons(p, tag)
    for q in pending:
        if q.status == PENDING and q.signals and q.file == p.file:
            theirs = lessons(q, "inferred")
            if len(theirs) == len(mine) and all(any(similar(a, b) for b in theirs) for a in mine):
                return q
    return None


def _only_lessons(p: Proposal, tag: str | None) -> bool:
    """Does `p` write nothing but its lessons: an entry action, or a file write whose every added line is one?"""
    if p.action not in FILE_WRITES:
        return True
    before = set((p.old or "").splitlines()) if p.action == "edit" else set()
    mine = {text.casefold() for text in lessons(p, tag)}
    for line in (p.content or "").splitlines():
        if not line.strip() or line in before:
            continue
        e = parse_entry(line)
        if e is None or e.tag != "inferred" or f"[inferred] {e.text}".casefold() not in mine:
            return False
    return True


def _set_flag(p: Proposal, t: Tally) -> None:
    p.flags = [f for f in p.flags if not f.startswith(CANDIDATE_FLAG)]
    p.flags.append(f"{CANDIDATE_FLAG} {t.describe()}")


def _weight(ts: str, today: date) -> float:
    try:
        d = date.fromisoformat(ts[:10])
    except ValueError:
        return 1.0
    return 0.5 if today - d > timedelta(days=HALF_AFTER_DAYS) else 1.0
