"""Decision feedback: how a person decided the proposals a conversation made, worded for the agent's next turn."""

from __future__ import annotations

from dataclasses import dataclass

from memtui.agent.events import Decision
from memtui.core.writing.memory import Memory, NotFound
from memtui.core.writing.proposals import APPLIED, CONFLICT, PENDING, REJECTED, Proposal

REVISED_MARK = "revised by a person before approval"


@dataclass
class ProposedWrite:
    """A queued write as the agent sent it, kept to tell a revision from a plain approval."""

    id: str
    summary: str
    section: str | None
    entry: str | None


def decide_feedback(memory: Memory, proposed: ProposedWrite) -> Decision | None:
    """The Decision on one proposal, or None while it still waits for a person."""
    p = _current(memory, proposed.id)
    if p is None or p.status == PENDING:
        return None
    what = f"{proposed.id} ({proposed.summary})"
    by = p.decided_by or "a person"
    if p.status == APPLIED:
        revised = p.reason == REVISED_MARK or p.entry != proposed.entry or p.section != proposed.section
        if revised:
            where = f" in {p.section}" if p.section and p.section != proposed.section else ""
            return Decision(proposed.id, "revised",
                            f"{what}: revised to {p.entry!r}{where} by {by}, then approved; memory now says that. "
                            "Use their wording from now on.")
        return Decision(proposed.id, "approved", f"{what}: approved by {by}; it is in memory now.")
    if p.status == REJECTED:
        return Decision(proposed.id, "rejected",
                        f"{what}: rejected by {by} because {p.reason or 'no reason given'}. It is not in memory; "
                        "do not propose it again unless the user asks.")
    if p.status == CONFLICT:
        return Decision(proposed.id, "conflict",
                        f"{what}: could not be applied because the file moved on ({p.reason}). Read the file "
                        "again and propose it afresh if it still matters.")
    return None


def feedback_text(decisions: list[Decision]) -> str:
    """The note put before the user's next message."""
    lines = "\n".join(f"- {d.text}" for d in decisions)
    return f"[memtui] Since your last turn, the person decided your proposals:\n{lines}"


def _current(memory: Memory, pid: str) -> Proposal | None:
    """The proposal from the queue, else its last decision in the audit log (a pruned queue loses nothing)."""
    try:
        return memory.get(pid)
    except NotFound:
        pass
    last = None
    for record in memory.store.audit_records():
        if record.get("proposal") == pid and record.get("status") in (APPLIED, REJECTED, CONFLICT):
            last = record
    if last is None:
        return None
    return Proposal(id=pid, created=last.get("ts", ""), actor=last.get("actor", ""), file=last.get("file", ""),
                    action=last.get("action", ""), section=last.get("section"), entry=last.get("entry"),
                    status=last["status"], decided_by=last.get("decided_by"), reason=last.get("reason"))
