"""A memory memtui did not write (a person's hand-written MEMORY.md, a daily log and a topic file, kept in their
own git) and ten mixed proposals an agent queues on it: adds, a revise, a remove, a held [inferred] lesson, two
revises of one entry (the second becomes a conflict), a long entry, an entry in a topic file, and two
whole-file changes (a new topic file, an edit). Run as a script it builds one, for trying the review by hand:

    python tests/support/ten_proposals.py DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

AGENT = "agent-claude"
MEMORY_MD = """\
# Memory

## About me
- [stated] I'm Dana, a backend engineer at Fernwood (2026-02-01, onboarding)
- [stated] I work from Porto, UTC+0/+1 (2026-02-01, onboarding)

## Preferences
- [stated] Prefers terse answers, code first (2026-02-03, chat)
- [stated] Uses pnpm for JavaScript projects (2026-03-10, chat)
- [observed] Reviews PRs in the morning (2026-03-12, github)

## Projects
- [stated] Kestrel: the payments API, launching in September (2026-04-01, planning)
- [observed] Kestrel CI takes about 9 minutes (2026-05-02, ci-log)
- [stated] Heron: internal dashboard, paused (2026-04-20, standup)
"""
LOG = """\
# 2026-08-19

- 09:30 [observed] Kestrel staging deploy green
- 14:10 [stated] Dana: keep the rollout behind a flag
"""
MARIA = """\
# Maria Costa

## Facts
- [stated] Maria owns the fraud rules engine (2026-05-11, standup)
- [observed] Maria prefers async reviews over calls (2026-06-02, slack)
"""
LONG = ("[observed] Kestrel's settlement batch runs at 02:30 UTC and retries twice on a bank timeout before "
        "paging the on-call engineer through PagerDuty")
KESTREL = "# Kestrel\n\n## Facts\n- [observed] Kestrel settles card payments in EUR and GBP (2026-08-20, code)\n"

# (what the agent sends, what the person decides): in the order the review panel lists them.
PLAN = [
    ("add", "a"), ("revise", "a"), ("remove", "a"), ("inferred", "a"), ("long", "a"),
    ("pnpm", "a"), ("bun", "r"), ("maria", "r"), ("create", "a"), ("edit", "a"),
]


def hand_written(root: Path) -> Path:
    """The person's own memory folder, committed with plain git (no memtui config, no format comment)."""
    for rel, text in (("MEMORY.md", MEMORY_MD), ("log/2026-08-19.md", LOG), ("people/maria.md", MARIA)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "my notes"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


def queue_ten(root: Path) -> list[str]:
    """The agent's ten proposals, through the one write path as the agent (`--by agent-claude`); their ids."""
    from memtui.core.writing.memory import Memory

    memory = Memory(root)
    results = [
        memory.update("Projects", "add", "[observed] Kestrel has 2 open incidents", source="pagerduty", actor=AGENT),
        memory.update("Projects", "revise", "[stated] Kestrel: the payments API, launching in October after the audit",
                      replaces="Kestrel: the payments API", source="chat", actor=AGENT,
                      user_words="we moved the Kestrel launch to October, after the audit"),
        memory.update("Projects", "remove", replaces="Heron: internal dashboard", actor=AGENT),
        memory.update("Preferences", "add", "[inferred] Prefers examples in TypeScript", source="session-3",
                      actor=AGENT, session="s-3"),
        memory.update("Projects", "add", LONG, source="runbook", actor=AGENT),
        memory.update("Preferences", "revise", "[stated] Uses pnpm for every JavaScript project, never npm",
                      replaces="Uses pnpm for JavaScript projects", source="chat", actor=AGENT,
                      user_words="pnpm for every JS project, never npm"),
        memory.update("Preferences", "revise", "[stated] Uses bun for JavaScript projects",
                      replaces="Uses pnpm for JavaScript projects", source="chat", actor=AGENT,
                      user_words="I might try bun"),
        memory.update("Facts", "add", "[observed] Maria is on leave until September", file="people/maria.md",
                      source="calendar", actor=AGENT),
        memory.create("projects/kestrel.md", KESTREL, actor=AGENT),
        memory.edit("people/maria.md", "owns the fraud rules engine",
                    "owns the fraud rules engine and the chargeback service", actor=AGENT),
    ]
    ids = []
    for r in results:
        if r.status != "queued" or not r.id:
            raise AssertionError(f"an agent's proposal was not queued: {r}")
        ids.append(r.id)
    return ids


if __name__ == "__main__":
    folder = Path(sys.argv[1]).expanduser().absolute()
    folder.mkdir(parents=True, exist_ok=True)
    print("\n".join(queue_ten(hand_written(folder))))


def ten_in_own_home(tmp_path: Path, monkeypatch) -> Path:
    """The hand-written memory with the ten proposals queued three hours ago (MEMTUI_NOW), in a home, state and
    config folder of its own (so no layout or key of the person running the tests is read): its root."""
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T10:00")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "notes"
    root.mkdir()
    queue_ten(hand_written(root))
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T13:00")  # three hours later
    return root
