"""Which of an agent's writes skip review, and how much an agent may write or queue (docs/ "Trust model"): the two
unreviewed writes (a well-formed line for today's log, a new scratch note that expires in time), their size caps,
and the caps on proposals waiting for a person. One job: admitting an agent's write to the fast lane or the queue, or
refusing it; the write path that asks is memtui.core.writing.memory's.
"""

from __future__ import annotations

import re
from typing import Any

from memtui.core.basics import clock
from memtui.core.grammar import update
from memtui.core.grammar.config import ReviewPolicy
from memtui.core.storage.reading import ascii_digits
from memtui.core.storage.store import Store
from memtui.core.writing import planning
from memtui.core.writing.proposals import Proposal


# A log line an agent may append unreviewed: "- HH:MM [tag] text", one line, current (not struck).
LOG_LINE = re.compile(r"^- (?:[01][0-9]|2[0-3]):[0-5][0-9] \[(?:stated|observed|inferred|suggested)\] \S.*$")
PLAIN_LOG_LINE = re.compile(r"^- (?:[01][0-9]|2[0-3]):[0-5][0-9] \S.*$")  # a daily note where lines carry no tag
SCRATCH_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class Admission:
    """The admission of agents' writes to the memory `memory` (memtui.core.writing.memory.Memory, not imported: it
    imports this), judged from the planned change and the config's review policy as the write read it."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory
        # memtui.core.writing.pending.PendingCounter, made at the first agent write that queues
        self._pending: Any = None

    @property
    def store(self) -> Store:
        return self.memory.store

    def fast_lane(self, p: Proposal, before: str | None, outcome: update.Outcome | None,
                   policy: ReviewPolicy) -> bool:
        """Is `p` one of the two writes an agent may make unreviewed (docs/ "Trust model")? Log lines appended to
        today's daily log of the layout in use, each a well-formed "- HH:MM [tag] text" line ("- HH:MM text" in a
        layout without tags) and nothing else changed; or a new scratch note, directly in the scratch folder, that
        expires within `[review] scratch_max_ttl`. Judged from the planned change, never from the file's name alone. `policy` is
        the config's review policy as the write read it."""
        if p.action not in ("append", "create") or not policy.is_agent(p.actor):
            return False
        if self.memory._real(p.file) != p.file:
            return False  # through a symlink: the file really written is not the one named
        layout = self.memory.layout()
        if p.action == "append" and outcome is not None:
            if p.file != f"{layout.log_dir or 'log'}/{clock.now():%Y-%m-%d}.md":
                return False
            start = planning.new_log_header(p.file) if before is None else before
            if not outcome.text.startswith(start) or outcome.also:
                return False
            added = outcome.text[len(start):].lstrip("\n").split("\n")
            if added and added[-1] == "":
                added.pop()
            # One line per unreviewed append (its length is `over_cap`'s): each line's tag is checked on its own.
            return len(added) == 1 and bool((LOG_LINE if layout.tags else PLAIN_LOG_LINE).match(added[0]))
        if p.action == "create" and before is None:
            folder, _, name = p.file.rpartition("/")
            stem, dash, slug = name.removesuffix(".md").partition("-")
            if folder != layout.scratch_dir or not name.endswith(".md") or not dash or not ascii_digits(stem):
                return False
            if not SCRATCH_NAME.match(slug):
                return False
            now_ms = clock.now().timestamp() * 1000
            return now_ms < int(stem) <= now_ms + policy.scratch_max_ttl_min * 60_000
        return False

    def _unreviewed_size(self, p: Proposal, policy: ReviewPolicy) -> tuple[str, int, int, str] | None:
        """(what, size, cap, config key) of an agent's write shaped like one that skips review: a scratch note (its
        bytes) or a line for today's log (its characters). None for any other write, which a person reviews whole."""
        if not policy.is_agent(p.actor) or p.content is None:
            return None
        if p.action == "append" and p.file == f"{self.memory.log_dir()}/{clock.now():%Y-%m-%d}.md":
            return "log line", len(p.content.rstrip("\n")), policy.log_line_max, "log_line_max"
        scratch = self.memory.layout().scratch_dir
        if p.action == "create" and scratch and p.file.startswith(scratch + "/"):
            return "scratch note", len(p.content.encode("utf-8", "surrogatepass")), policy.scratch_max_bytes, \
                "scratch_max_bytes"
        return None

    def over_cap(self, p: Proposal, policy: ReviewPolicy) -> str | None:
        """Why an agent's fast-lane write must wait for a person: longer than `[review]` lets one skip review, or
        a scratch note that would make the notes held at once more than `SCRATCH_HELD_FACTOR` times that (each
        note is bounded; without this their number was not, and each is committed history)."""
        size = self._unreviewed_size(p, policy)
        if size is None:
            return None
        what, n, cap, key = size
        if n <= cap and what == "scratch note":
            from memtui.core.grammar.config import SCRATCH_HELD_FACTOR

            held = self._scratch_held()
            if held + n > cap * SCRATCH_HELD_FACTOR:
                return (f"the scratch notes held now are {held:,} bytes; with this one they would pass the "
                        f"{cap * SCRATCH_HELD_FACTOR:,} that may be held unreviewed ({SCRATCH_HELD_FACTOR} times "
                        f"[review] scratch_max_bytes) until expired notes are swept (`memtui sweep`)")
        if n <= cap:
            return None
        unit = "bytes" if key == "scratch_max_bytes" else "characters"
        return f"the {what} is {n:,} {unit}, over the {cap:,} an agent's {what} may have unreviewed ([review] {key})"

    def _scratch_held(self) -> int:
        """Bytes of the scratch notes in the memory now, expired or not (a note lives until swept)."""
        total = 0
        for rel, _ in self.memory._scratch_notes():
            data = self.store.read(rel)
            total += len(data) if data is not None else 0
        return total

    def far_over_cap(self, p: Proposal, policy: ReviewPolicy) -> str | None:
        """The refusal of a fast-lane write so far over its cap (`UNREVIEWED_REFUSE_FACTOR` times) that no person
        would read it: queueing it would only move the flood from git to the queue."""
        from memtui.core.grammar.config import UNREVIEWED_REFUSE_FACTOR

        size = self._unreviewed_size(p, policy)
        if size is None or size[1] <= size[2] * UNREVIEWED_REFUSE_FACTOR:
            return None
        what, n, cap, key = size
        unit = "bytes" if key == "scratch_max_bytes" else "characters"
        instead = ("split it into notes of at most {cap:,} bytes, or put what lasts in a topic file (a person "
                   "reviews it)" if what == "scratch note" else "log one event per line, at most {cap:,} characters")
        return (f"the {what} is {n:,} {unit}, more than {UNREVIEWED_REFUSE_FACTOR} times the {cap:,} an agent's "
                f"{what} may have unreviewed ([review] {key}): too long to apply unreviewed or to queue for a "
                f"person. Nothing was written; {instead.format(cap=cap)}")

    def too_many_pending(self, p: Proposal, policy: ReviewPolicy) -> str | None:
        """The refusal of an agent's write that would queue one proposal more than `[review] agent_max_pending` (its
        own) or `agents_max_pending` (all agents'); a person's writes are never capped. Counted by
        `memtui.core.writing.pending`, which reads only new queue files and the writer's open ones."""
        if not policy.is_agent(p.actor):
            return None
        if self._pending is None:
            from memtui.core.writing.pending import PendingCounter

            self._pending = PendingCounter(self.store)
        n = self._pending.count(p.actor)
        if n < policy.agent_max_pending:
            together = self._pending.agents_open(policy.is_agent, policy.agents_max_pending)
            if together < policy.agents_max_pending:
                return None
            return (f"agents already have {together:,} or more proposals waiting for a person, the most all agents "
                    f"together may have ([review] agents_max_pending = {policy.agents_max_pending:,}); a person must "
                    "catch up first (`memtui queue list`, then approve or reject). Nothing was written; try again "
                    "once they have")
        return (f"{p.actor} already has {n:,} proposals waiting for a person, the most an agent may have "
                f"([review] agent_max_pending = {policy.agent_max_pending:,}); a person must catch up first "
                "(`memtui queue list`, then approve or reject). Nothing was written; try again once they have")
