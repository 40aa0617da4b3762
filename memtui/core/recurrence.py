"""The recurrence gate: an agent's [inferred] lesson becomes standing behaviour only after it recurs.

003_501b2c7170deec4d.txt section 3: a pattern the agent notices needs at least three independent signals across
at least two distinct sessions before it can become standing behaviour; signals older than thirty days count
half; a person's explicit corrections skip the gate. Definitions used here:

- *Standing behaviour*: an entry tagged ``[inferred]`` that an agent adds or revises into a core file (MEMORY.md
  and the other always-loaded files of the layout, memtui/core/layout.py). Topic files, logs and a person's own
  writes are not gated.
- *Signal*: one occurrence of the lesson: each time an agent proposes it (or a similar ``[inferred]`` entry:
  same words by `similar`), and each ``[inferred]`` daily-log line that says it.
- *Session*: the conversation a signal came from: `Proposal.session` as the agent loop passes it (its
  conversation id), else ``day:YYYY-MM-DD`` of the proposal; a log line's session is ``day:`` its file's date.
- *Candidate*: the pending proposal that holds the lesson until the gate is met. It lives in the review queue like
  any proposal, with its signals in `Proposal.signals` and a ``candidate:`` flag showing the count. A later
  proposal of the same lesson adds its signal to the candidate instead of queueing again. `Memory.approve`
  refuses a plain approval while the gate is not met; a person who chooses the provenance on approval
  (``approve(tag=...)``, ``memtui queue revise ID --as TAG``) makes an explicit correction and skips it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from memtui.core import clock
from memtui.core.dedupe import near_duplicate, tokens
from memtui.core.entries import parse_entry, split_inline
from memtui.core.layout import daily_date, detect
from memtui.core.proposals import PENDING, WriteResult

if TYPE_CHECKING:
    from memtui.core.memory import Memory
    from memtui.core.proposals import Proposal

MIN_SIGNALS = 3.0
MIN_SESSIONS = 2
HALF_AFTER_DAYS = 30
CANDIDATE_FLAG = "candidate:"
MAX_LOG_FILES = 400  # the newest daily logs scanned for signals; older ones count half anyway


@dataclass(frozen=True)
class Tally:
    weight: float
    sessions: int
    signals: int

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


def session_of(p: Proposal) -> str:
    return p.session or f"day:{(p.created or clock.now().isoformat())[:10]}"


def gated(memory: Memory, p: Proposal, tag: str | None) -> bool:
    """Does the gate apply: an agent's [inferred] add or revise to a core file."""
    return (
        p.action in ("add", "revise")
        and tag == "inferred"
        and memory.config.policy.is_agent(p.actor)
        and detect(memory).layer(p.file) == "core"
    )


def tally(memory: Memory, p: Proposal) -> Tally:
    signals = list(p.signals) + log_signals(memory, p.entry or "")
    today = clock.now().date()
    weight = 0.0
    sessions = set()
    for s in signals:
        weight += _weight(s.get("ts", ""), today)
        sessions.add(s.get("session") or "?")
    return Tally(round(weight, 2), len(sessions), len(signals))


def log_signals(memory: Memory, entry: str) -> list[dict[str, Any]]:
    """[inferred] daily-log lines that say the lesson, one signal each, session = the log's day."""
    _, text, _, _ = split_inline(entry) if entry else (None, "", None, None)
    if not text:
        return []
    log_dir = detect(memory).log_dir or "log"
    files = [f for f in memory.store.list_files(f"{log_dir}/**/*.md") if f.startswith(log_dir + "/")]
    files = [f for f in files if daily_date(f)][-MAX_LOG_FILES:]
    out = []
    for rel in files:
        day = daily_date(rel)
        raw = memory.store.read(rel) or b""
        for line in raw.decode("utf-8", errors="replace").splitlines():
            e = parse_entry(line)
            if e is not None and e.current and e.tag == "inferred" and similar(e.text, text):
                out.append({"ts": f"{day}T{e.time or '00:00'}", "session": f"day:{day}", "source": rel})
    return out


def hold(memory: Memory, p: Proposal, tag: str | None) -> WriteResult | None:
    """Called by `Memory.submit` once `p` is planned: None lets it through; otherwise it is held as a candidate
    (a new one, or a new signal on the pending candidate of the same lesson) and the result says so."""
    if not gated(memory, p, tag):
        return None
    signal = {"ts": p.created, "session": session_of(p), "actor": p.actor}
    existing = _open_candidate(memory, p)
    if existing is not None:
        existing.signals.append(signal)
        t = tally(memory, existing)
        _set_flag(existing, t)
        memory.store.queue_save(existing.id, existing.to_json())
        return _held(existing, t, again=True)
    p.signals = [signal]
    t = tally(memory, p)
    if t.met:
        return None
    _set_flag(p, t)
    p.id = f"p-{memory.store.next_proposal_number():04d}"
    memory.store.queue_save(p.id, p.to_json())
    return _held(p, t, again=False)


def refusal(memory: Memory, p: Proposal, tag: str | None) -> str | None:
    """Why `p` cannot be approved yet, or None. A person re-tagging it away from [inferred] skips the gate."""
    if not gated(memory, p, tag):
        return None
    t = tally(memory, p)
    if t.met:
        return None
    return (f"{p.id} is an [inferred] lesson held by the recurrence gate: {t.describe()} so far. It can become "
            f"standing behaviour after {MIN_SIGNALS:g} signals across {MIN_SESSIONS} sessions (older than "
            f"{HALF_AFTER_DAYS} days count half). To decide now, approve it with the provenance you choose "
            "(`memtui queue revise ID --as stated|inferred|suggested`), or reject it")


@dataclass(frozen=True)
class Candidate:
    proposal: Proposal
    tally: Tally


def candidates(memory: Memory) -> list[Candidate]:
    """Pending proposals held by the gate, with their counts."""
    out = []
    for p in memory.proposals(external=False):
        if p.status == PENDING and p.signals:
            out.append(Candidate(p, tally(memory, p)))
    return out


def _open_candidate(memory: Memory, p: Proposal) -> Proposal | None:
    for q in memory.proposals(external=False):
        if q.status == PENDING and q.signals and q.file == p.file and similar(q.entry or "", p.entry or ""):
            return q
    return None


def _set_flag(p: Proposal, t: Tally) -> None:
    p.flags = [f for f in p.flags if not f.startswith(CANDIDATE_FLAG)]
    p.flags.append(f"{CANDIDATE_FLAG} {t.describe()}")


def _held(p: Proposal, t: Tally, *, again: bool) -> WriteResult:
    what = "another signal for candidate" if again else "held as candidate"
    msg = (f"{what} {p.id}: {t.describe()}. An [inferred] lesson becomes standing behaviour only after "
           f"{MIN_SIGNALS:g} signals across {MIN_SESSIONS} sessions; until then it waits as a candidate. "
           "Keep it as data (a log line) meanwhile.")
    return WriteResult("queued", msg, p.id, p.file, p.section, p.entry, None, p.diff, list(p.warnings),
                       flags=list(p.flags))


def _weight(ts: str, today: date) -> float:
    try:
        d = date.fromisoformat(ts[:10])
    except ValueError:
        return 1.0
    return 0.5 if today - d > timedelta(days=HALF_AFTER_DAYS) else 1.0
