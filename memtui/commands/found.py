"""`memtui found`: the agent memories on this machine, each with its kind and what waits for a person in it.

A newcomer's first question is where their agent's memory is: this answers it without a manual, by each tool's own
rules (Claude Code's projects folder, `HERMES_HOME` or `~/.hermes`, OpenClaw's workspaces, a Cline memory bank in
the current project, memtui's own root). It only reads: a folder memtui has not opened yet is listed as such, and
nothing is created in it (`memtui list` is a different command: the memories on a Redis server).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from memtui.commands.shared import EXIT_OK, common, default_root, emit

HELP = """\
lists the memories found on this machine, one a line: kind, what waits for review, where it is.
  claude-code  ~/.claude/projects/<project>/memory/ (Claude Code's auto memory)
  hermes       $HERMES_HOME/memories, else ~/.hermes/memories
  openclaw     OpenClaw's workspaces: OPENCLAW_WORKSPACE_DIR, openclaw.json, else ~/.openclaw/workspace
  cline        ./memory-bank in the current folder (Cline's memory bank)
  memtui       $MEMTUI_ROOT, else memtui's own per-user root
"waits" counts proposals waiting for a person and files changed outside memtui; "not opened yet" means memtui
keeps no history of that folder yet. Open one with `memtui open PATH` (or --claude-code, --openclaw).

--json: [{"kind", "path", "history", "pending", "outside"}]
"""


def register(sub: Any) -> None:
    p = sub.add_parser("found", help="list the agent memories on this machine (Claude Code, Hermes, OpenClaw, Cline, "
                       "memtui) with what waits in each", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common(p)
    p.set_defaults(func=cmd_found)


def memories(env: dict[str, str] | None = None, cwd: Path | None = None) -> list[tuple[str, Path]]:
    """(kind, folder) of every memory found, each folder once, in the order of the help above."""
    from memtui.integrations.claude_code import memory_folders
    from memtui.integrations.openclaw import workspaces

    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home())
    found: list[tuple[str, Path]] = [("claude-code", p) for p in memory_folders()]
    hermes = Path(env["HERMES_HOME"]).expanduser() if env.get("HERMES_HOME") else home / ".hermes"
    if (hermes / "memories").is_dir():
        found.append(("hermes", hermes / "memories"))
    found += [("openclaw", p) for p in workspaces(env)]
    bank = (cwd or Path.cwd()) / "memory-bank"
    if bank.is_dir():
        found.append(("cline", bank))
    own = default_root()
    if own.is_dir():
        found.append(("memtui", own))
    out: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for kind, path in found:
        real = path.resolve()
        if real not in seen:
            seen.add(real)
            out.append((kind, path))
    return out


def waiting(folder: Path) -> dict[str, Any]:
    """What waits in `folder`: its open proposals and its files changed outside memtui, read without recovering or
    writing anything; `history` False where memtui keeps none for it yet (nothing can be pending there)."""
    from memtui.core.writing.memory import Memory

    try:
        memory = Memory(folder, recover=False)
        if not memory.store.keeps_history:
            return {"history": False, "pending": 0, "outside": 0}
        found = memory.proposals()
    except Exception as exc:  # one unreadable folder does not hide the others: its line says why
        return {"history": None, "pending": 0, "outside": 0, "error": str(exc)}
    outside = sum(1 for p in found if p.external)
    return {"history": True, "pending": len(found) - outside, "outside": outside}


def cmd_found(args: argparse.Namespace) -> int:
    rows = [{"kind": kind, "path": str(path), **waiting(path)} for kind, path in memories()]
    lines = []
    home = str(Path.home())
    for r in rows:
        where = "~" + r["path"][len(home):] if r["path"].startswith(home + os.sep) else r["path"]
        if r["history"] is None:
            what = f"cannot be read: {r['error']}"
        elif not r["history"]:
            what = "not opened yet"
        else:
            what = f"{r['pending']} pending, {r['outside']} changed outside memtui"
        lines.append(f"{r['kind']:<12} {what:<40} {where}")
    if not rows:
        lines.append("no agent memory found on this machine: `memtui init` makes one, and `memtui found --help` "
                     "says where each tool's memory is looked for")
    emit(args, rows, "\n".join(lines))
    return EXIT_OK
