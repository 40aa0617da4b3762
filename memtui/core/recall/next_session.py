"""What the next agent session will see: the session-start context (`memtui context`, the SessionStart hook) with
its budget and what was cut, and how a pending proposal would change it.

`context_after` plans a proposal against the reviewed files in memory, exactly as an approval plans it, and
builds the context from that plan: nothing is written, no lock is taken. A Claude Code memory's MEMORY.md is
also loaded by Claude Code itself, which stops at 200 lines or 25 KB (memtui/core/grammar/layout.py): past that, its own
lines are cut before any session sees them, so the view says where.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memtui.core.basics.record import Record
from memtui.core.grammar.formats.claude_code import FileCut, loaded_start  # noqa: F401 (named here for callers)
from memtui.core.recall.context import DEFAULT_BUDGET, ContextPack, build_context

if TYPE_CHECKING:
    from memtui.core.storage.reading import MemoryReader
    from memtui.core.writing.memory import Memory
    from memtui.core.writing.proposals import Proposal


def claude_code_cut(memory: MemoryReader, writes: dict[str, bytes | None] | None = None) -> FileCut | None:
    """The cut Claude Code makes of this memory's MEMORY.md (with `writes` in place), None for another layout."""
    from memtui.core.grammar.layout import CLAUDE_CODE, CLAUDE_CODE_SPEC
    from memtui.core.storage.reading import MEMORY_FILE

    if memory.layout().kind != CLAUDE_CODE:
        return None
    if writes and MEMORY_FILE in writes:
        data = writes[MEMORY_FILE] or b""
    else:
        data = memory.base_bytes([MEMORY_FILE]).get(MEMORY_FILE) or b""
    return loaded_start(MEMORY_FILE, data, CLAUDE_CODE_SPEC.file_lines or 200, CLAUDE_CODE_SPEC.file_bytes or 25_000)


class _Planned:
    """A memory reader whose reviewed bytes of some files are the ones a plan would write: the context builder
    reads through it exactly as it reads a memory, and nothing is written."""

    def __init__(self, memory: MemoryReader, writes: dict[str, bytes | None]) -> None:
        self._memory = memory
        self._writes = writes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._memory, name)

    def read_text(self, rel: str) -> str | None:
        if rel in self._writes:
            data = self._writes[rel]
            return None if data is None else data.decode("utf-8")
        return self._memory.read_text(rel)

    def base_bytes(self, rels: list[str]) -> dict[str, bytes | None]:
        out = self._memory.base_bytes([r for r in rels if r not in self._writes])
        out.update({r: self._writes[r] for r in rels if r in self._writes})
        return out


def planned_writes(memory: Memory, p: Proposal) -> dict[str, bytes | None]:
    """The files pending `p` would write, planned against the reviewed text of its file now (as an approval plans
    it, the proposal's own copy left alone). Raises `Refused` when `p` cannot be applied as it is."""
    from memtui.core.writing import planning

    before = memory.base_text(p.file)
    return planning.writes(p, before, memory._planner().plan(p.replace(), before))


def context_after(memory: Memory, p: Proposal, budget: int | None = None) -> ContextPack:
    """The session-start context as it would be with pending `p` applied, the files it writes put in place of
    theirs in memory only. Raises `Refused` when `p` cannot be applied as it is."""
    return build_context(_Planned(memory, planned_writes(memory, p)), DEFAULT_BUDGET if budget is None else budget)


class NextSession(Record):
    """The context now, and (for a selected proposal) after it: what the view shows, computed off the app thread."""

    now: ContextPack
    cut: FileCut | None
    pid: str | None
    after: ContextPack | None
    cut_after: FileCut | None
    diff: str
    why_not: str | None  # the proposal cannot be applied as it is: why

    def __init__(self, now: ContextPack, cut: FileCut | None = None, pid: str | None = None,
                 after: ContextPack | None = None, cut_after: FileCut | None = None, diff: str = "",
                 why_not: str | None = None) -> None:
        self.now, self.cut, self.pid, self.after = now, cut, pid, after
        self.cut_after, self.diff, self.why_not = cut_after, diff, why_not

    def budget_line(self) -> str:
        n = self.now
        line = f"{n.tokens:,} of {n.budget:,} tokens used (characters / 4)"
        return line + (" - OVER BUDGET: the always sections alone are larger" if n.over_budget else "")

    def cut_lines(self) -> list[str]:
        out = [f"cut: {x['part']}: {x['left_out']} {x['unit']} left out ({x['where']})" for x in self.now.left_out]
        out += [f"unreadable: {x}" for x in self.now.problems]
        if not out:
            out.append("nothing cut: everything fits the budget")
        if self.cut is not None:
            out.append(self.cut.describe())
        return out

    def effect_lines(self) -> list[str]:
        if self.pid is None:
            return ["Select a pending proposal to see how it would change this context."]
        if self.why_not is not None:
            return [f"{self.pid} cannot be applied as it is: {self.why_not}"]
        assert self.after is not None
        delta = self.after.tokens - self.now.tokens
        if not self.diff:
            head = f"With {self.pid} applied: the next session's context does not change"
        else:
            head = f"With {self.pid} applied: {self.after.tokens:,} tokens ({delta:+,})"
        out = [head]
        was = {x["part"]: x["left_out"] for x in self.now.left_out}
        now = {x["part"]: x["left_out"] for x in self.after.left_out}
        for part in sorted(set(was) | set(now)):
            if was.get(part, 0) != now.get(part, 0):
                out.append(f"  cut of {part}: {was.get(part, 0)} → {now.get(part, 0)} left out")
        if self.cut_after is not None and self.cut is not None and self.cut_after.kept_lines != self.cut.kept_lines:
            out.append(f"  {self.cut_after.describe()}")
        return out


def next_session(memory: Memory, p: Proposal | None = None, budget: int = DEFAULT_BUDGET) -> NextSession:
    """The context the next session receives now, and with pending `p` applied (an external change or one that
    cannot be applied says so instead)."""
    from memtui.core.basics.patches import unified_diff
    from memtui.core.grammar.update import Refused

    now = build_context(memory, budget)
    cut = claude_code_cut(memory)
    if p is None:
        return NextSession(now, cut)
    if p.external:  # approving it commits the file's bytes on disk as they are (a deleted file: gone)
        writes: dict[str, bytes | None] = {p.file: memory.store.read(memory.store.check_path(p.file))}
    else:
        try:
            writes = planned_writes(memory, p)
        except Refused as exc:
            return NextSession(now, cut, p.id, why_not=str(exc))
        except (ValueError, OSError) as exc:
            return NextSession(now, cut, p.id, why_not=f"it could not be planned ({exc})")
    after = build_context(_Planned(memory, writes), budget)
    diff = unified_diff("next session", now.text, after.text, context=2) if after.text != now.text else ""
    return NextSession(now, cut, p.id, after, claude_code_cut(memory, writes), diff)
