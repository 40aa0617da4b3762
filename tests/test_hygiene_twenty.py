"""002_f37b3409a58fe8b3.txt step 4 end to end: 20+ memory updates across five sessions (an agent's conversations
with a person reviewing), with near-duplicates, a superseded decision, a revised preference, a held [inferred]
lesson, an unsupported [stated] claim and a cap-triggered consolidation that is approved. At the end the file is
within caps, readable, deduplicated, lint-clean, and a fresh context still carries the early facts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memtui.core.grammar.dedupe import near_duplicate
from memtui.core.grammar.document import Document
from memtui.core.writing.memory import Memory

AGENT = "agent:claude"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=60)


class Session:
    """One conversation: the agent proposes with the user's words and its id; a person then decides."""

    def __init__(self, mem: Memory, sid: str, user_words: str) -> None:
        self.mem, self.sid, self.words, self.results = mem, sid, user_words, []

    def update(self, section: str, action: str, entry: str | None = None, replaces: str | None = None):
        r = self.mem.update(section, action, entry, replaces, actor=AGENT, user_words=self.words, session=self.sid)
        self.results.append(r)
        return r

    def review(self) -> None:
        """The person approves what is pending and not held by the recurrence gate."""
        for p in self.mem.proposals(external=False):
            if p.status == "pending" and not p.signals and p.action != "consolidate":
                assert self.mem.approve(p.id, by="wes").status == "applied", p.summary()


def test_twenty_writes_across_sessions_end_to_end(mem: Memory, root: Path, now) -> None:
    caps = mem.edit("MEMORY.md", "Decisions=30", "Decisions=5")  # a small cap, so consolidation is due
    assert caps.status == "applied"
    statuses: list[str] = []

    now("2026-01-12T09:00")
    s1 = Session(mem, "chat-1", "Hi, my name is Priya. I work on the billing service. I prefer dark mode in the "
                 "editor. We decided the public API uses REST.")
    s1.update("User", "add", "[stated] Name is Priya")
    s1.update("Projects", "add", "[stated] Works on the billing service")
    s1.update("Preferences", "add", "[stated] Prefers dark mode in the editor")
    s1.update("Decisions", "add", "[stated] Public API uses REST")
    s1.update("Facts", "add", "[observed] CI runs on GitHub Actions")
    s1.review()

    now("2026-04-10T09:00")
    s2 = Session(mem, "chat-2", "We're switching: the public API uses GraphQL now. The database is MySQL. "
                 "Oh and I prefer tabs over spaces.")
    s2.update("User", "add", "[stated] name is priya.")  # near-duplicate: refused, the existing entry shown
    s2.update("Decisions", "revise", "[stated] Public API uses GraphQL", replaces="Public API uses REST")
    s2.update("Decisions", "add", "[stated] Database is MySQL")
    s2.update("Preferences", "add", "[stated] Prefers tabs over spaces")
    s2.update("Facts", "add", "[inferred] Deploys on Fridays tend to fail")  # held: one signal
    s2.review()

    now("2026-08-20T09:00")
    s3 = Session(mem, "chat-3", "Final answer on the API: the public API uses tRPC. The database is Postgres 16. "
                 "Also I prefer light mode in the editor these days.")
    s3.update("Decisions", "revise", "[stated] Public API uses tRPC", replaces="Public API uses GraphQL")
    s3.update("Decisions", "revise", "[stated] Database is Postgres 16", replaces="Database is MySQL")
    s3.update("Preferences", "revise", "[stated] Prefers light mode in the editor", replaces="dark mode")
    s3.update("Facts", "add", "[inferred] Friday deploys tend to fail")  # a second signal, second session
    unsupported = s3.update("Preferences", "add", "[stated] Wants weekly summaries by email")
    shown = cli(root, "queue", "show", unsupported.id)
    assert "[suggested] Wants weekly summaries by email" in shown.stdout
    assert "flag: downgraded [stated] → [suggested]" in shown.stdout
    assert mem.reject(unsupported.id, reason="never said", by="wes").status == "rejected"
    s3.review()

    now("2026-08-21T09:00")
    s4 = Session(mem, "chat-4", "Hosting is on Fly.io. Auth uses passkeys. Actually auth uses passkeys for "
                 "every user.")
    s4.update("Decisions", "add", "[stated] Hosting is on Fly.io")
    s4.update("Decisions", "add", "[stated] Auth uses passkeys")
    s4.update("Decisions", "add", "[stated] Public API uses tRPC!")  # near-duplicate of the current decision
    lesson = s4.update("Facts", "add", "[inferred] Deploys on Fridays tend to fail")  # April's signal counts half
    s4.review()
    assert "2.5 of 3 signals across 3 of 2 sessions" in lesson.message
    assert mem.approve(lesson.id, by="agent:claude").status == "refused"  # only a person decides, gate or not
    over = s4.update("Decisions", "add", "[stated] Auth uses passkeys for every user")
    assert any("Decisions is over its cap" in w for w in over.warnings)
    s4.review()

    # the session ends over cap: consolidation is offered, proposed as one change, and approved
    due = mem.consolidation_due()
    assert due == ["Decisions"]
    [proposal] = mem.consolidate(due[0])
    assert proposal.status == "queued" and "archive/MEMORY-decisions-" in proposal.diff
    assert mem.approve(proposal.id, by="wes").status == "applied"

    now("2026-08-22T09:00")
    s5 = Session(mem, "chat-5", "My timezone is Europe/Lisbon.")
    s5.update("User", "add", "[stated] Timezone is Europe/Lisbon")
    s5.update("Projects", "add", "[observed] Billing service is written in Go")
    again = s5.update("Facts", "add", "[inferred] Deploys on Fridays tend to fail")
    assert again.id == lesson.id and "(gate met)" in again.message
    s5.review()
    assert mem.approve(lesson.id, by="wes").status == "applied"

    for s in (s1, s2, s3, s4, s5):
        statuses += [r.status for r in s.results]
    assert len(statuses) >= 20
    assert statuses.count("refused") == 2  # the two near-duplicates

    doc = Document((root / "MEMORY.md").read_text())
    spec = doc.spec
    # within caps
    for sec in doc.sections[1:]:
        assert len(sec.entries) <= spec.cap_for(sec.title), sec.title
    assert doc.text.count("\n") <= spec.file_lines and len(doc.text.encode()) <= spec.file_bytes
    # deduplicated and readable: every current entry tagged, dated, one per line, no near-duplicates
    for sec in doc.sections[1:]:
        cur = [e for _, e in sec.current]
        assert all(e.tag and e.date for e in cur)
        for i, a in enumerate(cur):
            assert not any(near_duplicate(a.body, b.body) for b in cur[i + 1:])
    # the superseded decision shows only its latest form; its history is archived, not lost
    decisions = [e.text for _, e in doc.section("Decisions").entries]
    assert decisions == ["Public API uses tRPC", "Database is Postgres 16", "Hosting is on Fly.io",
                         "Auth uses passkeys for every user"]
    [archive_file] = (root / "archive").glob("MEMORY-decisions-*.md")
    archive = archive_file.read_text()
    for old in ("~~[stated] Public API uses REST (2026-01-12)~~ superseded 2026-04-10",
                "~~[stated] Public API uses GraphQL (2026-04-10)~~ superseded 2026-08-20",
                "~~[stated] Database is MySQL (2026-04-10)~~ superseded 2026-08-20",
                "~~[stated] Auth uses passkeys (2026-08-21)~~ superseded 2026-08-21"):
        assert old in archive
    # the revised preference: the new one current, the old one struck in place
    prefs = doc.section("Preferences")
    assert [e.text for _, e in prefs.current] == ["Prefers light mode in the editor", "Prefers tabs over spaces"]
    assert [e.text for _, e in prefs.struck] == ["Prefers dark mode in the editor"]
    assert "- [inferred] Deploys on Fridays tend to fail" in doc.text

    # a fresh session's context still carries the early facts
    from memtui.core.recall.context import build_context

    context = build_context(Memory(root)).text
    for early in ("Name is Priya", "Works on the billing service", "CI runs on GitHub Actions",
                  "Public API uses tRPC"):
        assert early in context
    assert "Public API uses REST" not in context

    # lint is clean on the result, and fails on a planted untagged line
    clean = cli(root, "lint", "--json")
    assert clean.returncode == 0, clean.stdout
    p = root / "MEMORY.md"
    p.write_text(p.read_text().replace("## Facts\n", "## Facts\n\n- remember to water the plants\n", 1))
    dirty = cli(root, "lint", "--json")
    assert dirty.returncode == 1
    assert [f["check"] for f in json.loads(dirty.stdout)["findings"]] == ["untagged"]
