"""OpenClaw workspaces as OpenClaw itself lays them out and writes them, for tests that open one.

Built from OpenClaw's own documentation (the npm package `openclaw` 2026.9.6, docs/concepts/agent-workspace.md,
docs/concepts/memory.md, docs/reference/templates/*.md, docs/automation/hooks/bundled-hooks.md), never from memtui's
format: the workspace is `~/.openclaw/workspace` (else `OPENCLAW_WORKSPACE_DIR`, `OPENCLAW_STATE_DIR/workspace`,
`~/.openclaw-<profile>/workspace`, or `agents.defaults.workspace` in `openclaw.json`); it holds the bootstrap files
AGENTS.md, SOUL.md, USER.md, IDENTITY.md (loaded every session), MEMORY.md (curated durable facts, plain bullets
under headings, no tags), daily notes `memory/YYYY-MM-DD.md`, and the session-memory hook's excerpts
`memory/YYYY-MM-DD-HHMM.md`. USER.md holds one directive per entry, each after an
`<!-- observed: YYYY-MM-DD | status: active -->` line. The docs' "Git backup" recipe is `git init`, then
`git add AGENTS.md SOUL.md IDENTITY.md USER.md memory/` and `git commit -m "Add agent workspace"`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

AGENTS = """\
# AGENTS.md - Your Workspace

This folder is home. Treat it that way.

## Session Startup

Use runtime-provided startup context first. It may already include `AGENTS.md`, `SOUL.md`, `USER.md`, recent daily
memory (`memory/YYYY-MM-DD.md`), and `MEMORY.md` (main session only).

## Memory

- **Daily notes:** `memory/YYYY-MM-DD.md` holds raw logs; create `memory/` if needed.
- **Long-term:** `MEMORY.md` holds durable non-profile facts and decisions.

## Red Lines

- Don't exfiltrate private data. Ever.
- Don't run destructive commands without asking.
- When in doubt, ask.

## Tools

- Local notes: the staging box is `stage-2`; ssh as `deploy`.
"""

SOUL = """\
# SOUL.md - Who You Are

_You're not a chatbot. You're becoming someone._

## Core Truths

**Be genuinely helpful, not performatively helpful.** Skip the "Great question!" — just help.

**Have opinions.** Disagree, prefer things, find stuff amusing or boring.

## Boundaries

- Private things stay private. Period.
- When in doubt, ask before acting externally.
- Never send half-baked replies to messaging surfaces.
"""

IDENTITY = """\
# IDENTITY.md - Who Am I?

- **Name:** Pixel
- **Creature:** a familiar that lives in the terminal
- **Vibe:** calm, dry
- **Emoji:** 🦊
"""

USER = """\
# USER.md - User Model

## Directives

<!-- observed: 2026-11-02 | status: active -->

- Prefer concise progress updates during implementation work.

<!-- observed: 2026-11-20 | status: active -->

- Always write dates as YYYY-MM-DD.
"""

MEMORY = """\
# MEMORY.md

## Projects

- Billing service moved to Postgres 16 in November.
- The mobile app ships every second Thursday.

## Decisions

- Use pnpm for every JavaScript repository.
- Deploys freeze on Fridays after 15:00.

## People

- Dana owns the billing service; ask her before schema changes.
"""

DAILY = """\
# 2026-12-05

- 09:12 Dana asked for the invoice export to include VAT numbers.
- 14:40 Staging deploy of billing failed on migration 0042; rolled back.
"""

SESSION = """\
# Session: 2026-12-05 17:03:00 UTC

- **Session Key**: agent:main:main
- **Session ID**: 3f1c2a9e-5b1d-4f7a-9c2e-0d8b6a4e1f21
- **Source**: /new

## Conversation Summary

user: can you remember that Dana is out next week?
assistant: Noted: Dana is out 2026-12-08 to 2026-12-12.
"""

GITIGNORE = """\
.DS_Store
.env
**/*.key
**/*.pem
**/secrets*
"""

FILES = {
    "AGENTS.md": AGENTS, "SOUL.md": SOUL, "IDENTITY.md": IDENTITY, "USER.md": USER, "MEMORY.md": MEMORY,
    "memory/2026-12-05.md": DAILY, "memory/2026-12-05-1703.md": SESSION,
}


def workspace(folder: Path, *, git: bool = False, files: dict[str, str] | None = None) -> Path:
    """An OpenClaw workspace at `folder` as onboarding seeds it and the agent has since written it (`files`
    replace or add to those); with `git`, kept in the person's own repository by the docs' recipe (their commit,
    their .gitignore, everything tracked)."""
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in {**FILES, **(files or {})}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")  # OpenClaw writes UTF-8 with \n line ends
    if git:
        (folder / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
        person_git(folder, "init", "-q", "-b", "main")
        person_git(folder, "add", "AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "memory/")
        person_git(folder, "add", "-A")  # MEMORY.md, the .gitignore, and whatever else the person keeps there
        person_git(folder, "commit", "-q", "-m", "Add agent workspace")
    return folder


def openclaw_writes(folder: Path, rel: str, text: str) -> None:
    """OpenClaw's own write of a workspace file, straight to disk as its file tools do (no memtui in between)."""
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def person_git(folder: Path, *args: str) -> str:
    """`git` run by the person in their workspace, as themselves (not as memtui)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "Wes", "GIT_AUTHOR_EMAIL": "wes@example.org",
           "GIT_COMMITTER_NAME": "Wes", "GIT_COMMITTER_EMAIL": "wes@example.org"}
    return subprocess.run(["git", *args], cwd=folder, env=env, capture_output=True, text=True, check=True).stdout


def config(home: Path, workspace_dir: str, *, state_dir: Path | None = None) -> Path:
    """`openclaw.json` (JSON5: comments and trailing commas allowed) naming the workspace, as the docs show it."""
    path = (state_dir or home / ".openclaw") / "openclaw.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("// written by openclaw configure\n{\n  agents: {\n    defaults: {\n      workspace: "
                    + json.dumps(workspace_dir) + ",\n    },\n  },\n}\n", encoding="utf-8")
    return path
