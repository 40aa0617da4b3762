"""The session-start context: header, current MEMORY.md entries, two days of log, scratch, a closing line, a budget."""

from __future__ import annotations

import json
from pathlib import Path

from memtui.cli import main
from memtui.core.recall.context import HEADER, build_context, count_tokens
from memtui.core.writing.memory import Memory


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def populate(mem: Memory, now) -> None:
    now("2026-08-19T09:00")
    mem.update("Preferences", "add", "[stated] Prefers lowercase messages")
    mem.update("Decisions", "add", "[stated] Public API uses REST", source="meeting/kickoff")
    mem.log("Reviewed PR 41 with Priya")
    now("2026-08-20T09:30")
    mem.update("Decisions", "revise", "[stated] Public API uses tRPC", "Public API uses REST", source="meeting/api")
    mem.log("Deploy of v2.3 failed on migration 0042")
    mem.scratch("pr-review", "3 of 7 files reviewed\n", ttl_minutes=60)
    mem.scratch("gone", "expired already\n", ttl_minutes=-5)
    now("2026-08-20T10:00")


def test_context_has_every_layer_in_a_stable_order(root, mem, now):
    populate(mem, now)
    pack = build_context(mem)
    text = pack.text
    assert text.startswith(HEADER + "\n")
    order = [text.index(s) for s in ("## Preferences (always)", "Prefers lowercase", "## Decisions",
                                     "Public API uses tRPC", "## Log 2026-08-19 (yesterday)", "Reviewed PR 41",
                                     "## Log 2026-08-20 (today)", "Deploy of v2.3", "## Scratch notes",
                                     "3 of 7 files reviewed", "The rest of memory")]
    assert order == sorted(order)
    assert "REST" not in text and "~~" not in text  # struck history is left out
    assert "expired already" not in text
    assert "memtui search" in text.splitlines()[-1] and str(root) in text.splitlines()[-1]
    assert pack.tokens == count_tokens(text) <= 1000 and pack.left_out == [] and not pack.over_budget
    assert build_context(mem).text == text  # deterministic: a prompt cache keeps it


def test_missing_files_are_silently_empty(tmp_path):
    root = tmp_path / "bare"
    root.mkdir()
    pack = build_context(Memory(root))
    assert pack.text.splitlines()[0] == HEADER and "## Log" not in pack.text and "The rest of memory" in pack.text


def test_over_budget_keeps_always_sections_whole_and_says_what_was_left_out(root, mem, now):
    now("2026-08-20T09:00")
    for k in range(25):
        assert mem.update("Preferences", "add", f"[stated] Preference number {k} about tone and format").status \
            == "applied"
        assert mem.update("Projects", "add", f"[observed] Project {k} is tracked in projects/p{k}.md").status \
            == "applied"
    for k in range(60):
        mem.log(f"Worked on task {k} of the migration")
    budget = 700
    pack = build_context(mem, budget=budget)
    text = pack.text
    assert pack.tokens <= budget and len(text) <= budget * 4 and not pack.over_budget
    assert all(f"Preference number {k} about" in text for k in range(25))
    assert "Project 24 is tracked" not in text
    parts = {d["part"]: d for d in pack.left_out}
    assert parts["MEMORY.md § Projects"]["left_out"] > 0
    assert "more entries left out: memtui show MEMORY.md --section Projects --current" in text
    # the log keeps its newest lines and says where the earlier ones are
    assert parts["log/2026-08-20.md (today)"]["left_out"] > 0
    assert "earlier lines left out: read log/2026-08-20.md" in text
    assert "task 59 of" in text and "task 0 of" not in text
    assert text.index("earlier lines left out") < text.index("task 59 of")


def test_always_sections_alone_over_budget_are_still_whole(root, mem, now):
    now("2026-08-20T09:00")
    for k in range(10):
        mem.update("Preferences", "add", f"[stated] Long preference {k} " + "x" * 100)
    mem.update("Facts", "add", "[stated] A fact that has to go")
    pack = build_context(mem, budget=50)
    assert all(f"Long preference {k}" in pack.text for k in range(10))
    assert pack.over_budget and pack.tokens > 50
    assert "A fact that has to go" not in pack.text
    assert "Left out to fit the budget: MEMORY.md § Facts" in pack.text


def test_context_cli_json(root, mem, now, capsys):
    populate(mem, now)
    assert main(["context", "--budget", "300", "--json", "--root", str(root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["budget"] == 300 and data["tokens"] <= 300 and data["text"].startswith(HEADER)
    assert data["token_count"] == "characters / 4, rounded up"
