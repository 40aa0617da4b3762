"""An OpenClaw workspace in its own terms: plain bullets, revises in place, history shown and not written.

The workspaces are built by OpenClaw's documented rules (tests/support/fixtures_openclaw.py), most kept in the
person's own git repository as OpenClaw's docs recommend. Every test that opens one compares the folder's listing
and the person's `git status` before and after: what differs must be only what a person approved.

Until memtui's state moves beside the folder (#42 part 1, built on another branch), opening a workspace still leaves
`.memtui/`, `memory-log.jsonl` (and `.git` where there was none) in it: each test first checks that nothing else
differs, then makes the whole comparison under `WAITS_FOR_PART_1`, an xfail that turns into a failure (strict) once
part 1 makes it pass, so the mark is removed then.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.layout import OPENCLAW
from memtui.core.lineage import from_history, lineages, superseded_lines
from memtui.core.memory import Memory
from support.fixtures_openclaw import MEMORY, USER, openclaw_writes, person_git, workspace
from support.foreign import changed, git_status, listing

NOW = "2026-12-06T10:15"
AGENT = "agent:openclaw"
# memtui's own bookkeeping, which part 1 moves out of the folder: the only difference allowed until it merges.
BOOKKEEPING = (".memtui", "memory-log.jsonl", ".git")
WAITS_FOR_PART_1 = pytest.mark.xfail(strict=True, reason="memtui still keeps .memtui/ and memory-log.jsonl in the "
                                     "folder it opens (#42 part 1 moves them beside it); remove this mark then")


def ours(path: str) -> bool:
    return path.split("/", 1)[0] in BOOKKEEPING


def only_approved(before: dict[str, str], ws: Path, approved: set[str]) -> dict[str, tuple[str | None, str | None]]:
    """What changed in `ws` since `before`, asserting that apart from memtui's bookkeeping only `approved` files
    did; returns the rest of the difference (the bookkeeping) for the strict comparison. In a workspace the person
    keeps in git, their repository receives the approved commits: its `.git/` is judged by `git status` and log."""
    diff = changed(before, ws)
    assert {p for p in diff if not ours(p)} == approved, diff
    theirs = before.get(".git") == "dir"
    return {p: d for p, d in diff.items() if p not in approved and not (theirs and p.startswith(".git/"))}


def person_status_without_ours(status: str) -> str:
    return "".join(line + "\n" for line in status.splitlines() if not ours(line[3:].strip('"')))


@pytest.fixture
def ws(tmp_path: Path, now) -> Path:
    now(NOW)
    return workspace(tmp_path / ".openclaw" / "workspace", git=True)


def cli(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMTUI_NOW": NOW, "MEMTUI_USER": "wes"}
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(ws)], capture_output=True,
                          text=True, env=env, timeout=120)


# the grammar: plain bullets, in place -------------------------------------------------------------------------
@WAITS_FOR_PART_1
def test_an_agents_plain_bullet_revise_and_remove_through_the_cli_change_lines_in_place(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    added = cli(ws, "update", "Projects", "add", "Invoices go out on the 1st of each month", "--by", AGENT)
    assert added.returncode == 4, added.stdout + added.stderr  # queued: a plain bullet is not refused for its tag
    assert "+- Invoices go out on the 1st of each month\n" in added.stdout
    assert (ws / "MEMORY.md").read_text() == MEMORY  # waiting is not writing
    assert cli(ws, "queue", "approve", "p-0001").returncode == 0
    revised = cli(ws, "update", "Projects", "revise", "Invoices go out on the 2nd of each month", "--replaces",
                  "Invoices go out on the 1st", "--by", AGENT)
    assert revised.returncode == 4, revised.stdout + revised.stderr
    assert cli(ws, "queue", "approve", "p-0002").returncode == 0
    removed = cli(ws, "update", "Decisions", "remove", "--replaces", "Deploys freeze on Fridays", "--by", AGENT)
    assert removed.returncode == 4, removed.stdout + removed.stderr
    assert cli(ws, "queue", "approve", "p-0003").returncode == 0

    expected = MEMORY.replace("every second Thursday.\n", "every second Thursday.\n- Invoices go out on the 2nd "
                              "of each month\n").replace("- Deploys freeze on Fridays after 15:00.\n", "")
    assert (ws / "MEMORY.md").read_text() == expected  # no ~~struck~~ line, no [tag], no (date) in OpenClaw's file
    # The approved changes are commits in the person's own repository, and its status shows nothing memtui did.
    log = person_git(ws, "log", "--format=%s", "--", "MEMORY.md").splitlines()
    assert log[:3] == ["remove MEMORY.md § Decisions", "revise MEMORY.md § Projects: Invoices go out on the 2nd of "
                       "each month", "add MEMORY.md § Projects: Invoices go out on the 1st of each month"]
    assert person_status_without_ours(git_status(ws)) == status
    rest = only_approved(before, ws, {"MEMORY.md"})
    assert git_status(ws) == status
    assert rest == {}


@WAITS_FOR_PART_1
def test_a_revise_in_user_md_keeps_openclaws_observed_line_and_changes_the_directive_in_place(ws: Path) -> None:
    before = listing(ws)
    mem = Memory(ws)
    assert mem.layout().kind == OPENCLAW and not mem.layout().strikes and not mem.layout().tags
    queued = mem.update("Directives", "revise", "Always write dates as DD.MM.YYYY.", replaces="Always write dates",
                        file="USER.md", actor=AGENT)
    assert queued.status == "queued", queued.message
    assert mem.approve(queued.id, by="wes").status == "applied"
    assert (ws / "USER.md").read_text() == USER.replace("- Always write dates as YYYY-MM-DD.",
                                                        "- Always write dates as DD.MM.YYYY.")
    assert "<!-- observed: 2026-11-20 | status: active -->" in (ws / "USER.md").read_text()
    assert only_approved(before, ws, {"USER.md"}) == {}


def test_a_tag_sent_inline_stays_in_the_proposal_not_in_the_file(ws: Path) -> None:
    mem = Memory(ws)
    queued = mem.update("People", "add", "[observed] Dana is out 2026-12-08 to 2026-12-12", actor=AGENT)
    assert queued.status == "queued", queued.message
    assert "+- Dana is out 2026-12-08 to 2026-12-12\n" in queued.diff
    assert mem.approve(queued.id, by="wes").status == "applied"
    assert "- Dana is out 2026-12-08 to 2026-12-12\n" in (ws / "MEMORY.md").read_text()
    assert "[observed]" not in (ws / "MEMORY.md").read_text()
    assert any(r.get("provenance") == "observed" or "[observed]" in str(r.get("entry", ""))
               for r in mem.store.audit_records()) or "[observed]" in (ws / "memory-log.jsonl").read_text()


def test_memtuis_own_format_still_strikes_and_tags(root: Path, now) -> None:
    now(NOW)
    mem = Memory(root)
    assert mem.update("Preferences", "add", "[stated] Prefers dark mode").status == "applied"
    assert mem.update("Preferences", "revise", "[stated] Prefers light mode", replaces="dark mode").status == "applied"
    text = (root / "MEMORY.md").read_text()
    assert "- ~~[stated] Prefers dark mode (2026-12-06)~~ superseded 2026-12-06\n" \
           "- [stated] Prefers light mode (2026-12-06)\n" in text
    assert mem.update("Preferences", "add", "Prefers tabs", actor=AGENT).status == "refused"


# older versions, from history ---------------------------------------------------------------------------------
def test_older_versions_come_from_history_struck_and_are_never_written(ws: Path, now) -> None:
    mem = Memory(ws)
    for day, new, old in (("2026-12-06T10:15", "Billing service moved to Postgres 17 in December.", "Postgres 16"),
                          ("2026-12-07T09:00", "Billing service runs Postgres 17.2.", "Postgres 17 in")):
        now(day)
        p = mem.update("Projects", "revise", new, replaces=old, actor=AGENT)
        assert mem.approve(p.id, by="wes").status == "applied"
    now("2026-12-08T09:00")
    pending = mem.update("Projects", "revise", "Billing service runs Postgres 18.", replaces="Postgres 17.2",
                         actor=AGENT)
    assert pending.status == "queued"
    earlier = ["- ~~Billing service moved to Postgres 16 in November.~~ superseded 2026-12-06",
               "- ~~Billing service moved to Postgres 17 in December.~~ superseded 2026-12-07"]
    # The review of the pending revise shows what the entry was, as the viewer does for the entry itself.
    assert lineages(mem, mem.proposals()) == {pending.id: earlier}
    assert from_history(mem.store, "MEMORY.md", "Projects", "Postgres 17.2") == earlier
    assert superseded_lines(mem.store, "MEMORY.md") == {"- Billing service runs Postgres 17.2.": earlier}
    text = (ws / "MEMORY.md").read_text()
    assert "~~" not in text and "superseded" not in text
    assert "- Billing service runs Postgres 17.2.\n" in text


# OpenClaw's own writes, straight to disk ----------------------------------------------------------------------
@WAITS_FOR_PART_1
def test_openclaws_own_edit_is_an_external_change_approve_records_it_in_the_persons_repository(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    mem = Memory(ws)
    edited = MEMORY.replace("- Use pnpm for every JavaScript repository.", "- Use bun for every JavaScript "
                            "repository.")
    openclaw_writes(ws, "MEMORY.md", edited)
    openclaw_writes(ws, "memory/2026-12-06.md", "# 2026-12-06\n\n- 10:02 Dana confirmed the VAT export.\n")
    external = {p.file: p for p in mem.proposals() if p.external}
    assert set(external) == {"MEMORY.md", "memory/2026-12-06.md"}
    assert "-- Use pnpm for every JavaScript repository.\n+- Use bun for every JavaScript repository.\n" in \
        external["MEMORY.md"].diff
    for p in external.values():
        assert mem.approve(p.id, by="wes").status == "applied"
    assert (ws / "MEMORY.md").read_text() == edited  # approving records; it rewrites nothing
    assert person_git(ws, "show", "HEAD:MEMORY.md") == edited
    assert not [p for p in mem.proposals() if p.external]
    assert person_status_without_ours(git_status(ws)) == status
    rest = only_approved(before, ws, {"MEMORY.md", "memory/2026-12-06.md"})
    assert git_status(ws) == status
    assert rest == {}


@WAITS_FOR_PART_1
def test_rejecting_openclaws_own_edit_restores_the_approved_bytes_exactly_and_keeps_the_rejected_ones(
        ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    mem = Memory(ws)
    approved = (ws / "SOUL.md").read_bytes()
    rewritten = approved.replace(b"- Private things stay private. Period.\n", b"- Share what you learn freely.\n")
    openclaw_writes(ws, "SOUL.md", rewritten.decode())
    (p,) = [p for p in mem.proposals() if p.external]
    assert mem.reject(p.id, reason="not my soul", by="wes").status == "rejected"
    assert (ws / "SOUL.md").read_bytes() == approved
    kept = [r for r in mem.store.audit_records() if r.get("status") == "rejected" and r.get("file") == "SOUL.md"]
    import base64

    assert kept and base64.b64decode(kept[-1]["content_b64"]) == rewritten  # nothing is lost
    assert person_status_without_ours(git_status(ws)) == status
    rest = only_approved(before, ws, set())
    assert git_status(ws) == status
    assert rest == {}
