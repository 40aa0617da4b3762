"""A Claude Code auto-memory folder written by Claude Code's own rules, not memtui's.

Claude Code keeps a project's auto memory in ``~/.claude/projects/<project>/memory/`` (the project's absolute path
with ``/`` and ``.`` as ``-``). ``MEMORY.md`` is an index with no front matter: one line per memory,
``- [Title](file.md) — one-line hook``, kept under about 150 characters, of which Claude Code loads the first 200
lines or 25 KB at session start. Each memory is a topic file named for its type (``user_role.md``,
``feedback_testing.md``, ``project_freeze.md``, ``reference_linear.md``) whose YAML front matter holds ``name``,
``description`` and ``type`` (user, feedback, project or reference); the body follows, a feedback or project memory
leading with the rule and then a ``**Why:**`` and a ``**How to apply:**`` line. Topic files are read on demand.
"""

from __future__ import annotations

from pathlib import Path

TOPICS: dict[str, tuple[str, str, str, str]] = {
    # file: (name, description, type, body)
    "user_role.md": ("user_role", "User is a data scientist focused on observability", "user",
                     "Data scientist on the observability team; new to the frontend of this repo.\n"
                     "Explain React patterns by analogy to pandas pipelines.\n"),
    "feedback_testing.md": ("feedback_testing", "Integration tests use a real database, never mocks", "feedback",
                            "Integration tests must hit a real database, not mocks.\n\n"
                            "**Why:** mocked tests passed while the prod migration failed last quarter.\n\n"
                            "**How to apply:** start the test Postgres with `make db-up` before `pytest`.\n"),
    "project_freeze.md": ("project_freeze", "Merge freeze for the mobile release starts 2026-03-05", "project",
                          "Merge freeze begins 2026-03-05 for the mobile release cut.\n\n"
                          "**Why:** release branch is cut that morning.\n\n"
                          "**How to apply:** flag any non-critical PR scheduled after that date.\n"),
    "reference_linear.md": ("reference_linear", "Pipeline bugs are tracked in Linear project INGEST", "reference",
                            "Pipeline bugs live in Linear project \"INGEST\"; check it before filing a new one.\n"),
}
INDEX_TITLES = {"user_role.md": "User role", "feedback_testing.md": "Testing preferences",
                "project_freeze.md": "Merge freeze", "reference_linear.md": "Bug tracker"}


def topic_text(name: str, description: str, kind: str, body: str, newline: str = "\n") -> str:
    """A topic file as Claude Code writes one: front matter, a blank line, the body."""
    text = f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}"
    return text.replace("\n", newline)


def index_line(title: str, file: str, hook: str) -> str:
    return f"- [{title}]({file}) — {hook}"


def memory_folder(home: Path, project: str = "/home/wes/src/billing") -> Path:
    """`home`/.claude/projects/<slug>/memory, as Claude Code names it for the project at `project`."""
    import re

    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9-]", "-", project) / "memory"


def write_memory(folder: Path, topics: dict[str, tuple[str, str, str, str]] | None = None, *,
                 index_lines: list[str] | None = None, newline: str = "\n", bom: bool = False) -> Path:
    """A Claude Code memory folder at `folder`: the topic files and their MEMORY.md index (one line each, in order);
    `index_lines` replaces the index's lines. Bytes as Claude Code's Write tool leaves them: UTF-8, `newline`."""
    topics = TOPICS if topics is None else topics
    folder.mkdir(parents=True, exist_ok=True)
    for file, (name, description, kind, body) in topics.items():
        (folder / file).write_bytes(((("\ufeff" if bom else "") + topic_text(name, description, kind, body, newline))
                                     .encode()))
    if index_lines is None:
        index_lines = [index_line(INDEX_TITLES.get(f, t[0]), f, t[1]) for f, t in topics.items()]
    (folder / "MEMORY.md").write_bytes(("".join(line + newline for line in index_lines)).encode())
    return folder


def many_topics(n: int) -> dict[str, tuple[str, str, str, str]]:
    """`n` topic files of every type, as a long-used memory has them."""
    kinds = ("user", "feedback", "project", "reference")
    out = {}
    for k in range(n):
        kind = kinds[k % 4]
        out[f"{kind}_topic_{k:04d}.md"] = (f"{kind}_topic_{k:04d}", f"Fact number {k} about the {kind}", kind,
                                           f"Fact number {k} about the {kind}, kept for later sessions.\n")
    return out
