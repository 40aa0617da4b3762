"""Memory layouts: which files of a memory root are core, daily logs, scratch, archive or topic files.

memtui's own layout (``MEMORY.md``, ``log/``, ``scratch/``, ``archive/``, topic files) is one of those it opens.
An OpenClaw workspace keeps ``MEMORY.md`` plus daily notes in ``memory/YYYY-MM-DD.md``; a Claude Code memory
folder (``~/.claude/projects/<project>/memory/``) keeps a ``MEMORY.md`` index, one line per memory, plus one topic
file per memory with YAML front matter (memtui/core/grammar/formats/claude_code.py); Cline's memory bank
(``memory-bank/``) keeps six core documents, read whole at the start of every task
(memtui/core/grammar/formats/cline.py); Hermes keeps `<home>/memories/MEMORY.md` and `USER.md`, entries joined by a line
holding `§` (memtui/core/grammar/formats/hermes.py). Detection only looks; it never writes, so a folder memtui did not
create is never rewritten to fit. """

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from memtui.core.basics.record import Frozen
from memtui.core.grammar.document import FormatSpec
from memtui.core.grammar.formats import claude_code

if TYPE_CHECKING:
    from memtui.core.grammar.config import Config

MEMTUI, OPENCLAW, CLAUDE_CODE, CLINE, HERMES = "memtui", "openclaw", "claude-code", "cline", "hermes"
KINDS = (MEMTUI, OPENCLAW, CLAUDE_CODE, CLINE, HERMES)
LAYERS = ("core", "log", "scratch", "archive", "topic")

DAILY = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
# OpenClaw's bootstrap files load with MEMORY.md at the start of every session, so they are core too.
OPENCLAW_CORE = ("MEMORY.md", "memory.md", "USER.md", "SOUL.md", "IDENTITY.md", "AGENTS.md", "TOOLS.md")
# Claude Code loads only the first 200 lines or 25 KB of its MEMORY.md index at session start.
CLAUDE_CODE_SPEC = FormatSpec(file_lines=claude_code.LOAD_LINES, file_bytes=claude_code.LOAD_BYTES)
_FRONT_MATTER = re.compile(r"\A---\r?\n(?:.*\r?\n)*?(?:name|description|type):", re.M)


class Layout(Frozen):
    """Where each layer lives. `log_dir` None means the layout has no daily logs of its own."""

    kind: str = MEMTUI
    core: tuple[str, ...] = ("MEMORY.md",)
    log_dir: str | None = "log"
    scratch_dir: str = "scratch"
    archive_dir: str = "archive"

    def __init__(self, kind: str = MEMTUI, core: tuple[str, ...] = ("MEMORY.md",), log_dir: str | None = "log",
                 scratch_dir: str = "scratch", archive_dir: str = "archive") -> None:
        put = object.__setattr__
        put(self, "kind", kind)
        put(self, "core", core)
        put(self, "log_dir", log_dir)
        put(self, "scratch_dir", scratch_dir)
        put(self, "archive_dir", archive_dir)

    def layer(self, rel: str) -> str:
        """core, log, scratch, archive or topic.

        Under `memory/` only dated files (`YYYY-MM-DD.md`) are daily logs; anything else there is a topic file
        in every layout, so lint, context, search and review treat it as one."""
        if rel in self.core:
            return "core"
        top, _, rest = rel.partition("/")
        if top == "memory" and rest:
            return "log" if self.log_dir == "memory" and daily_date(rest) else "topic"
        if self.log_dir and top == self.log_dir and rest:
            return "log"
        if top == "log" and rest:
            return "log"
        if top == self.scratch_dir and rest:
            return "scratch"
        if top == self.archive_dir and rest:
            return "archive"
        return "topic"

    def default_spec(self) -> FormatSpec:
        """Caps for a core file that has no memtui format comment of its own."""
        return CLAUDE_CODE_SPEC if self.kind == CLAUDE_CODE else FormatSpec()

    @property
    def strict_tags(self) -> bool:
        """memtui's own files must tag every entry; other layouts' files were not written to that rule."""
        return self.kind == MEMTUI

    @property
    def tags(self) -> bool:
        """Whether a written entry carries memtui's tag and date (``- [stated] text (DATE)``): memtui's own format
        only. OpenClaw's, Claude Code's and Cline's files have no tags (Hermes' entries have a grammar of their own):
        an agent's plain bullet is written as sent, its provenance kept in history
        (memtui/core/timeline/provenance.py)."""
        return self.kind == MEMTUI

    @property
    def strikes(self) -> bool:
        """Whether a revise or remove keeps the old line in the file, struck through (memtui's grammar). OpenClaw
        loads MEMORY.md and its bootstrap files whole into every session, so there a revise changes the line in
        place and a remove deletes it; the older versions are read back from history (memtui/core/timeline/lineage.py).
        So in every format but memtui's own: no struck line is written into a file another tool loads."""
        return self.kind == MEMTUI


def detect(location: str, config: Config) -> Layout:
    """The layout of the memory root at `location`: `[layout] kind` in its `config` if set, else what the files
    show (`Memory.layout()` asks this for its root)."""
    root = Path(location)
    forced = config.section("layout").get("kind")
    if forced in KINDS:
        return _layout(forced, root)
    if not root.is_dir():
        return Layout()
    has_log = (root / "log").is_dir()
    daily = root / "memory"
    if not has_log and daily.is_dir() and any(DAILY.match(p.name) for p in daily.iterdir() if p.is_file()):
        return _layout(OPENCLAW, root)
    if not has_log and daily.is_dir() and (root / "MEMORY.md").is_file():
        return _layout(OPENCLAW, root)
    if _looks_like_hermes(root):
        return _layout(HERMES, root)
    if _looks_like_claude_code(root):
        return _layout(CLAUDE_CODE, root)
    from memtui.core.grammar.formats import cline

    if not has_log and cline.looks_like(root):
        return _layout(CLINE, root)
    return Layout()


def _layout(kind: str, root: Path) -> Layout:
    if kind == OPENCLAW:
        core = tuple(n for n in OPENCLAW_CORE if (root / n).is_file()) or ("MEMORY.md",)
        return Layout(OPENCLAW, core, "memory")
    if kind == CLAUDE_CODE:
        return Layout(CLAUDE_CODE, ("MEMORY.md",), None)
    if kind == CLINE:
        from memtui.core.grammar.formats import cline

        return Layout(CLINE, cline.CORE, None)
    if kind == HERMES:  # Hermes loads both files whole into every session (memtui/core/grammar/formats/hermes.py)
        return Layout(HERMES, ("MEMORY.md", "USER.md"), None)
    return Layout()


def _looks_like_hermes(root: Path) -> bool:
    """Hermes' `<home>/memories` (MEMORY.md or USER.md and no other markdown), or those files holding entries
    joined by Hermes' `§` line and nothing else markdown beside them. Only regular files are read."""
    if (root / "log").is_dir() or not ((root / "MEMORY.md").is_file() or (root / "USER.md").is_file()):
        return False  # before the listing: a memtui root of 10,000 files is not listed on every layout() call
    names = set()
    try:
        with os.scandir(root) as found:
            for entry in found:  # stops at the first other markdown file: a big folder is not listed whole
                if entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    if entry.name not in ("MEMORY.md", "USER.md"):
                        return False
                    names.add(entry.name)
    except OSError:
        return False
    if root.name == "memories":
        return True
    for name in names:
        try:
            with open(root / name, encoding="utf-8", errors="replace", newline="") as f:
                head = f.read(8192)
        except OSError:
            continue
        if "\n§\n" in head.replace("\r\n", "\n"):
            return True
    return False


def _looks_like_claude_code(root: Path) -> bool:
    """A `.claude/projects/<p>/memory` path, or topic files beside MEMORY.md with Claude Code's front matter."""
    parts = root.parts
    if len(parts) >= 4 and parts[-1] == "memory" and parts[-3] == "projects" and parts[-4] == ".claude":
        return True
    if not (root / "MEMORY.md").is_file():
        return False
    for p in sorted(root.glob("*.md"))[:50]:
        # Only regular files are read: a FIFO or a link to a device named *.md would block or never end.
        if p.name == "MEMORY.md" or p.is_symlink() or not p.is_file():
            continue
        try:
            head = p.read_text(encoding="utf-8", errors="replace")[:400]
        except OSError:
            continue
        if _FRONT_MATTER.match(head):
            return True
    return False


def daily_date(rel: str) -> str | None:
    """The date of a daily-log file from its name, or None."""
    name = rel.rsplit("/", 1)[-1]
    return name[:-3] if DAILY.match(name) else None
