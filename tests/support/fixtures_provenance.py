"""Foreign memories whose lines come from several writers, written as each tool writes its own files.

For the provenance tests (memtui/core/timeline/provenance.py): the files carry no tags, so who wrote a line can only
come from history. Each builder writes what the tool itself writes, by the tool's documented rules, never memtui's
format:

- `openclaw_workspace_in_git`: OpenClaw's agent workspace (`~/.openclaw/workspace`; docs.openclaw.ai, "Agent
  workspace" and "Memory"): the bootstrap files AGENTS.md, SOUL.md, USER.md loaded every session, MEMORY.md the
  curated long-term memory in plain bullets (no tags, no dates required), and `memory/YYYY-MM-DD.md` daily notes,
  append-only. The person keeps it in a private git repository, as the workspace docs recommend ("git init",
  "git add" the workspace files, "git commit"), under their own git identity.
- `claude_code_memory`: Claude Code's auto memory (`~/.claude/projects/<project>/memory/`): MEMORY.md, an index of
  one link line per memory (`- [Title](file.md) — hook`), loaded up to 200 lines / 25 KB; one topic file per
  memory with YAML front matter (`name`, `description`, `type`: user, feedback, project or reference) and a body;
  a feedback memory states the rule, then `**Why:**` and `**How to apply:**` lines. Not a git repository.

`person_commit` and `agent_writes` add later changes the way they happen outside memtui: the person's own commit in
their repository, and the agent's write straight to disk (OpenClaw's file tools, Claude Code's Write).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PERSON = ("Wes Example", "wes@example.com")
DAY = "2026-08-20"

AGENTS_MD = """# AGENTS.md - Your Workspace

This folder is home. Treat it that way.

## Memory

You wake up fresh each session. These files are your continuity:

- **Daily notes:** `memory/YYYY-MM-DD.md` — raw logs of what happened
- **Long-term:** `MEMORY.md` — your curated memories

Capture what matters. Decisions, context, things to remember.
"""
SOUL_MD = """# SOUL.md - Who You Are

Be genuinely helpful, not performatively helpful. Have opinions. Be resourceful before asking.
"""
USER_MD = """# USER.md - About Your Human

- **Name:** Wes
- **What to call them:** Wes
- **Timezone:** Europe/Berlin
- **Notes:** Prefers short answers; reviews every change to memory.
"""
MEMORY_MD = """# MEMORY.md - Long-Term Memory

## People

- Priya runs the renewal calls with Acme; she wants numbers before the call.
- Wes's manager is Dana.

## Decisions

- The public API uses REST.
- Staging deploys happen on Tuesdays.
"""
DAILY_MD = f"""# {DAY}

- Renewal call with Priya moved to Friday.
- Looked into the flaky deploy: the migration lock times out after 30 s.
"""


def git(repo: Path, *args: str, author: tuple[str, str] = PERSON) -> str:
    """`git` in `repo` as `author` (name, email), the way a person runs it, dated the fixtures' day."""
    name, email = author
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
           "GIT_COMMITTER_EMAIL": email, "GIT_AUTHOR_DATE": f"{DAY}T09:00:00", "GIT_COMMITTER_DATE": f"{DAY}T09:00:00"}
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], check=True,
                          capture_output=True, text=True, env=env).stdout


def openclaw_workspace_in_git(folder: Path) -> Path:
    """An OpenClaw workspace at `folder` the person keeps in git, one commit of their own; returns `folder`."""
    (folder / "memory").mkdir(parents=True)
    (folder / "AGENTS.md").write_text(AGENTS_MD)
    (folder / "SOUL.md").write_text(SOUL_MD)
    (folder / "USER.md").write_text(USER_MD)
    (folder / "MEMORY.md").write_text(MEMORY_MD)
    (folder / "memory" / f"{DAY}.md").write_text(DAILY_MD)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "AGENTS.md", "SOUL.md", "USER.md", "MEMORY.md", "memory")
    git(folder, "commit", "-q", "-m", "Add agent workspace")
    return folder


def keep_in_git(folder: Path) -> None:
    """The person starts keeping `folder` in git, one commit of everything in it."""
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "Keep my memory in git")


def person_commit(repo: Path, message: str, author: tuple[str, str] = PERSON) -> None:
    """Commit every change in the person's repository, with their own message (not through memtui)."""
    git(repo, "add", "-A", ".", ":!.memtui", ":!memory-log.jsonl", author=author)
    git(repo, "commit", "-q", "-m", message, author=author)


def agent_writes(path: Path, line: str) -> None:
    """The agent's own file tool appends a line straight to disk (no memtui in between)."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


CLAUDE_INDEX = """- [User role](user_role.md) — data scientist, new to the frontend
- [No DB mocks in tests](feedback_testing.md) — integration tests hit a real database
- [Merge freeze](project_freeze.md) — non-critical merges frozen from 2026-03-05
"""
CLAUDE_TOPICS = {
    "user_role.md": """---
name: user_role
description: the user's role and what they know
type: user
---

Data scientist, ten years of Go, new to this repository's React frontend: explain frontend ideas by backend analogies.
""",
    "feedback_testing.md": """---
name: feedback_testing
description: integration tests must hit a real database
type: feedback
---

Integration tests must hit a real database, never mocks.
**Why:** last quarter mocked tests passed while the production migration failed.
**How to apply:** every test that touches the database.
""",
    "project_freeze.md": """---
name: project_freeze
description: merge freeze for the mobile release
type: project
---

Non-critical merges are frozen from 2026-03-05: the mobile team is cutting a release branch.
""",
}


def claude_code_memory(home: Path, project: str = "-home-wes-src-app") -> Path:
    """Claude Code's auto memory folder for `project` under `home` (not in git); returns the memory folder."""
    folder = home / ".claude" / "projects" / project / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(CLAUDE_INDEX)
    for name, text in CLAUDE_TOPICS.items():
        (folder / name).write_text(text)
    return folder
